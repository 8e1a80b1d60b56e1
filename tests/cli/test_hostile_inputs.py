"""Hostile inputs to the commands that read a participant's or an operator's files (score, freeze,
log-report, check-season --write-panel): each is one line naming its place, never a hang, a traceback,
unbounded memory, a silently resolved ambiguity or a file written where it must not be.

Commands that could hang (a FIFO) or fill the memory (/dev/zero) run in a child process with a timeout and
an address-space limit, so that a regression fails the test instead of stalling the suite.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from score_fixtures import HONEST_01, HONEST_02, ScoreWorld, make_score_world, submission
from trackfix import CONFORMITE

from generator.base.atomic_file import FileWriteError, write_atomic
from generator.base.bounded_read import ReadRefused, read_bounded
from generator.cli.main import main
from generator.contract.freeze import freeze
from generator.panel.submissions import PANEL_MARKER, PanelRefused, write_submissions

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "manifest/conformite/manifest.json"
BAREME = CONFORMITE.bareme.file  # copied with the track (copy_tracks)


@pytest.fixture
def world(tmp_path: Path) -> ScoreWorld:
    return make_score_world(tmp_path / "root")


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


def corpus(*argv: str) -> subprocess.CompletedProcess[str]:
    """The command in a child process: at most 20 s and 2 GiB, so a hang or a runaway read fails the test."""
    return subprocess.run([sys.executable, "-m", "generator.cli", *argv], capture_output=True, text=True,
                          timeout=20, check=False, cwd=ROOT, preexec_fn=_limit_memory)


def one_line(result: subprocess.CompletedProcess[str], code: int, text: str) -> None:
    assert result.returncode == code, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    assert text in result.stderr, result.stderr


def write(folder: Path, name: str, data: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(data if isinstance(data, str) else json.dumps(data, ensure_ascii=False), "utf-8")
    return path


def frozen(world: ScoreWorld, tmp_path: Path) -> Path:
    salt = tmp_path / "salt.hex"
    freeze(world.root, world.root / BAREME, salt, CONFORMITE.places)
    return salt


def score_json(world: ScoreWorld, tmp_path: Path, *files: Path) -> dict[str, Any]:
    out = tmp_path / "out" / "report.json"
    out.parent.mkdir(exist_ok=True)
    assert main(["score", *map(str, files), "--root", str(world.root), "--json", str(out)]) == 0
    return json.loads(out.read_text("utf-8"))


def task(report: dict[str, Any], task_id: str) -> dict[str, Any]:
    return next(t for t in report["taches"] if t["tache"] == task_id)


# ------------------------------------------------------------------------- 1. one bounded reader

def test_the_reader_refuses_a_device_a_fifo_and_a_large_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    big = tmp_path / "big"
    with big.open("wb") as handle:
        handle.truncate(2 * 1024 * 1024 + 1)
    for path, reason in ((Path("/dev/zero"), "not a regular file (a device)"),
                         (fifo, "not a regular file (a FIFO)"), (tmp_path, "not a regular file (a folder)"),
                         (big, "larger than 2 MiB")):
        with pytest.raises(ReadRefused) as caught:
            read_bounded(path, 2 * 1024 * 1024)
        assert str(caught.value) == f"{path}: {reason}"
    assert len(read_bounded(big, 3 * 1024 * 1024)) == 2 * 1024 * 1024 + 1


def test_score_with_dev_zero_as_salt_is_one_line(world: ScoreWorld, tmp_path: Path) -> None:
    frozen(world, tmp_path)
    sub = write(tmp_path / "subs", "s.json", submission(world, "conf-01", "conforme", HONEST_01))
    one_line(corpus("score", str(sub), "--root", str(world.root), "--salt-file", "/dev/zero"), 1,
             "corpus score: /dev/zero: not a regular file")


@pytest.mark.parametrize("role", ["score --salt-file", "score --proofs", "freeze --salt-file",
                                  "log-report --manifest"])
def test_a_fifo_given_as_an_input_is_refused_without_waiting(world: ScoreWorld, tmp_path: Path,
                                                             role: str) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sub = write(tmp_path / "subs", "s.json", submission(world, "conf-01", "conforme", HONEST_01))
    if role == "score --salt-file":
        frozen(world, tmp_path)
        argv = ["score", str(sub), "--root", str(world.root), "--salt-file", str(fifo)]
    elif role == "score --proofs":
        argv = ["score", str(sub), "--root", str(world.root), "--proofs", str(fifo)]
    elif role == "freeze --salt-file":
        argv = ["freeze", "--root", str(world.root), "--bareme", str(world.root / BAREME), "--salt-file",
                str(fifo)]
    else:
        log = write(tmp_path, "access.log", "")
        argv = ["log-report", str(log), "--manifest", str(fifo)]
    command = role.split()[0]
    one_line(corpus(*argv), 1, f"corpus {command}: {fifo}: not a regular file")  # one code for all: an input


def test_a_submission_above_16_mib_is_refused_unread(world: ScoreWorld, tmp_path: Path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.truncate(16 * 1024 * 1024 + 1)
    one_line(corpus("score", str(big), "--root", str(world.root)), 1,
             f"corpus score: {big}: larger than 16 MiB")


# ------------------------------------------------------------- 2-4. JSON that json.loads resolves silently

def _raw_submission(world: ScoreWorld, task_id: str, verdict: str, claims: Any) -> str:
    return json.dumps(submission(world, task_id, verdict, claims), ensure_ascii=False)


def test_a_key_twice_in_a_submission_is_rejected_at_entry(world: ScoreWorld, tmp_path: Path) -> None:
    text = _raw_submission(world, "conf-01", "non_conforme", HONEST_01)
    text = text.replace('"verdict": "non_conforme"', '"verdict": "conforme", "verdict": "non_conforme"')
    assert text.count('"verdict"') == 2
    report = score_json(world, tmp_path, write(tmp_path / "subs", "s.json", text))
    entry = task(report, "conf-01")
    assert entry["statut"] == "rejetee_entree" and entry["verdict"] is None
    assert entry["rejets"] == ['/: the key "verdict" appears more than once in this object: write each key once']


def test_a_task_id_twice_is_rejected_at_entry_on_no_task(world: ScoreWorld, tmp_path: Path) -> None:
    text = _raw_submission(world, "conf-01", "conforme", HONEST_01)
    text = text.replace('"task_id": "conf-01"', '"task_id": "conf-02", "task_id": "conf-01"')
    report = score_json(world, tmp_path, write(tmp_path / "subs", "s.json", text))
    assert {t["statut"] for t in report["taches"]} == {"non_rendue"}
    assert report["hors_saison"][0]["rejets"] == [
        '/: the key "task_id" appears more than once in this object: write each key once: rejected at entry']


def test_a_key_twice_in_a_nested_object_names_its_pointer(world: ScoreWorld, tmp_path: Path) -> None:
    data = submission(world, "conf-01", "conforme", HONEST_01)
    proof = next(iter(data["disclosures"]))
    text = json.dumps(data).replace(f'"{proof}": {{', f'"{proof}": {{"request_hash": null, ', 1)
    report = score_json(world, tmp_path, write(tmp_path / "subs", "s.json", text))
    assert task(report, "conf-01")["rejets"] == [
        f'/disclosures/{proof}: the key "request_hash" appears more than once in this object: write each key once']


def test_a_key_twice_in_the_proofs_file_is_a_file_error(world: ScoreWorld, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    sub = write(tmp_path / "subs", "s.json", submission(world, "conf-01", "conforme", HONEST_01))
    proofs = write(tmp_path, "proofs.json",
                   '{"prf_0000": {"valide": false, "valide": true, "identite_liee": true}}')
    assert main(["score", str(sub), "--root", str(world.root), "--proofs", str(proofs)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == (f'corpus score: {proofs}: /prf_0000: the key "valide" appears more than once in '
                                 "this object: write each key once\n")


def test_a_number_beyond_range_is_rejected_at_entry(world: ScoreWorld, tmp_path: Path) -> None:
    data = submission(world, "conf-01", "conforme", HONEST_01)
    data["assertions"][0]["claim"]["value"] = 12345.5
    text = json.dumps(data).replace("12345.5", "1e400")
    report = score_json(world, tmp_path, write(tmp_path / "subs", "s.json", text))
    assert task(report, "conf-01")["rejets"] == [
        "/assertions/0/claim/value: 1e400 is beyond the range of a JSON number (a float overflows to infinity): "
        "write a finite number"]
    assert "Infinity" not in json.dumps(report)


def test_a_lone_surrogate_is_rejected_at_entry(world: ScoreWorld, tmp_path: Path) -> None:
    data = submission(world, "conf-01", "conforme", HONEST_01)
    data["assertions"][0]["claim"]["value"] = "LONE"
    text = json.dumps(data).replace('"LONE"', '"\\ud800"')
    sub = write(tmp_path / "subs", "s.json", text)
    result = corpus("score", str(sub), "--root", str(world.root))
    assert result.returncode == 0 and result.stderr == ""
    assert ("conf-01 rejet: " + str(sub) + ": /assertions/0/claim/value: a string holds a lone surrogate"
            in result.stdout)


def test_the_table_prints_a_file_name_that_is_not_utf8(world: ScoreWorld, tmp_path: Path) -> None:
    folder = tmp_path / "subs"
    folder.mkdir()
    name = os.fsencode(folder) + b"/\xff.json"
    with open(name, "w", encoding="utf-8") as handle:
        handle.write(_raw_submission(world, "conf-01", "conforme", HONEST_01)[:-1] + ', "extra": 1}')
    out = tmp_path / "report.json"
    result = corpus("score", str(folder), "--root", str(world.root), "--json", str(out))
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert "\\udcff.json" in result.stdout
    assert "\\udcff.json" in out.read_text("utf-8")


# ---------------------------------------------------------------- 5. write_atomic and non-regular targets

@pytest.mark.parametrize("kind", ["fifo", "symlink", "dangling symlink", "folder"])
def test_write_atomic_never_replaces_what_is_not_a_regular_file(tmp_path: Path, kind: str) -> None:
    target, other = tmp_path / "target", tmp_path / "other"
    other.write_text("theirs")
    {"fifo": lambda: os.mkfifo(target), "symlink": lambda: target.symlink_to(other),
     "dangling symlink": lambda: target.symlink_to(tmp_path / "nowhere"), "folder": target.mkdir}[kind]()
    before = os.lstat(target)
    with pytest.raises(FileWriteError) as caught:
        write_atomic(target, "data")
    assert str(caught.value) == f"{target}: exists and is not a regular file"
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino) and other.read_text() == "theirs"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other", "target"]


def test_score_json_through_a_symlink_is_refused(world: ScoreWorld, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    sub = write(tmp_path / "subs", "s.json", submission(world, "conf-01", "conforme", HONEST_01))
    link, real = tmp_path / "link.json", tmp_path / "real.json"
    real.write_text("keep")
    link.symlink_to(real)
    assert main(["score", str(sub), "--root", str(world.root), "--json", str(link)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and err == f"corpus score: {link}: exists and is not a regular file\n"  # refused first
    assert link.is_symlink() and real.read_text() == "keep"


# ----------------------------------------------------------------------- 6. where the reports may go

@pytest.mark.parametrize("where", ["manifest/conformite/manifest.json", "build/conformite/report.json",
    "report.json", "run"])
def test_score_json_stays_out_of_the_repository(world: ScoreWorld, tmp_path: Path, where: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    sub = write(tmp_path / "subs", "s.json", submission(world, "conf-01", "conforme", HONEST_01))
    target = world.root / where
    before = target.read_bytes() if target.exists() else None
    assert main(["score", str(sub), "--root", str(world.root), "--json", str(target)]) == 2  # a refused place
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "reveal the key" in err
    assert (target.read_bytes() if target.exists() else None) == before


def test_score_json_under_run_is_written(world: ScoreWorld, tmp_path: Path) -> None:
    sub = write(tmp_path / "subs", "s.json", submission(world, "conf-01", "conforme", HONEST_01))
    out = world.root / "run" / "r.json"
    out.parent.mkdir()
    assert main(["score", str(sub), "--root", str(world.root), "--json", str(out)]) == 0
    assert json.loads(out.read_text("utf-8"))["reussite"] == 1


@pytest.mark.parametrize("which", ["a submission", "the proofs"])
def test_score_json_is_none_of_its_inputs(world: ScoreWorld, tmp_path: Path, which: str,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    subs = tmp_path / "subs"
    write(subs, "a.json", submission(world, "conf-01", "conforme", HONEST_01))
    second = write(subs, "b.json", submission(world, "conf-02", "non_conforme", HONEST_02))
    proofs = write(tmp_path, "proofs.json", {})
    target = second if which == "a submission" else proofs
    before = target.read_bytes()
    assert main(["score", str(subs), "--root", str(world.root), "--proofs", str(proofs), "--json",
                 str(target)]) == 2
    assert capsys.readouterr().err == (f"corpus score: --json {target}: is {target}, an input of this command: "
                                       "write the report elsewhere\n")
    assert target.read_bytes() == before


def _log(folder: Path) -> Path:
    record = {"time": "2026-11-30T05:10:00+00:00", "request_id": "1-1-1", "method": "GET", "uri": "/catalogue",
              "status": 200, "bytes": 10, "secret_ok": True, "user_agent": "python-httpx/0.27.0",
              "request_time": 0.001}
    return write(folder, "access.log", json.dumps(record) + "\n")


@pytest.mark.parametrize("target", ["the manifest", "the log", "build/ of the repository"])
def test_log_report_json_replaces_no_input_and_no_served_file(tmp_path: Path, target: str,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    manifest = tmp_path / "manifest.json"
    manifest.write_bytes(MANIFEST.read_bytes())
    log = _log(tmp_path / "logs")
    out = {"the manifest": manifest, "the log": log,
        "build/ of the repository": ROOT / "build/conformite/r.json"}[target]
    before = out.read_bytes() if out.exists() else None
    assert main(["log-report", str(tmp_path / "logs"), "--manifest", str(manifest), "--root", str(ROOT), "--json",
                 str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"corpus log-report: --json {out}: ") and err.count("\n") == 1
    assert (out.read_bytes() if out.exists() else None) == before


# --------------------------------------------------------------------------- 7. the panel, whole or not

def _rows(*names: str) -> list[SimpleNamespace]:
    return [SimpleNamespace(name=name, submissions=[{"task_id": "conf-01", "agent": name},
                                                    {"task_id": "conf-02", "agent": name}]) for name in names]


def _tree(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


def test_a_new_panel_replaces_an_earlier_one_whole(tmp_path: Path) -> None:
    out = tmp_path / "panel"
    assert write_submissions(_rows("a", "b"), out) == 4  # type: ignore[arg-type]
    (out / "a" / "conf-03.json").write_text("{}")  # a stale file of an earlier run
    assert write_submissions(_rows("a"), out) == 2  # type: ignore[arg-type]
    assert _tree(out) == [PANEL_MARKER, "a", "a/conf-01.json", "a/conf-02.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["panel"]


def test_a_panel_that_cannot_be_written_leaves_the_folder_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "panel"
    write_submissions(_rows("a", "b"), out)  # type: ignore[arg-type]
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    rows = _rows("x", "y")
    rows[1].submissions[1]["task_id"] = "no-such-folder/conf-02"  # this file cannot be created
    with pytest.raises(FileWriteError, match="No such file or directory"):
        write_submissions(rows, out)  # type: ignore[arg-type]
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["panel"]


def test_a_folder_not_written_by_the_panel_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "mine"
    write(out, "notes.txt", "keep")
    with pytest.raises(PanelRefused, match="not a panel written by"):
        write_submissions(_rows("a"), out)  # type: ignore[arg-type]
    assert _tree(out) == ["notes.txt"]


# ------------------------------------------------------------------- 8. entries a folder must not hide

def test_score_names_every_entry_that_is_not_a_regular_json_file(world: ScoreWorld, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    subs = tmp_path / "subs"
    write(subs, "conf-01.json", submission(world, "conf-01", "conforme", HONEST_01))
    write(subs, "conf-03.JSON", submission(world, "conf-02", "conforme", HONEST_02))
    os.mkfifo(subs / "conf-02.json")
    (subs / "conf-04.json").symlink_to(tmp_path / "nowhere")
    assert main(["score", str(subs), "--root", str(world.root)]) == 1
    out, err = capsys.readouterr()
    names = ", ".join(str(subs / n) for n in ("conf-02.json", "conf-03.JSON", "conf-04.json"))
    assert out == "" and err == (f"corpus score: {names}: not a regular *.json file: a submission folder holds "
                                 "*.json submissions only: remove or rename them\n")


@pytest.mark.parametrize("kind", ["fifo", "dangling symlink"])
def test_log_report_names_a_log_it_cannot_read_in_a_folder(tmp_path: Path, kind: str) -> None:
    logs = tmp_path / "logs"
    _log(logs)
    odd = logs / "access.log.1"
    if kind == "fifo":
        os.mkfifo(odd)
    else:
        odd.symlink_to(tmp_path / "nowhere")
    one_line(corpus("log-report", str(logs), "--manifest", str(MANIFEST)), 1,
             f"corpus log-report: {odd}: named like an access log but not a regular file")
