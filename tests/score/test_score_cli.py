"""``corpus score`` as a command: files and folders, the table, --json, --proofs, and the freeze guard."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from score_fixtures import HONEST_01, HONEST_02, ScoreWorld, make_score_world, submission, write_anchor
from trackfix import CONFORMITE

from generator.cli.main import main
from generator.contract.freeze import freeze
from generator.score import ScoreOptions, ScoreRefused, make_disclosure, score_submissions

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def world(tmp_path: Path) -> ScoreWorld:
    return make_score_world(tmp_path / "root")


def write(folder: Path, name: str, data: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["score", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_folder_table_and_json(world: ScoreWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subs = tmp_path / "subs"
    write(subs, "conf-01.json", submission(world, "conf-01", "conforme", HONEST_01))
    write(subs, "conf-02.json", submission(world, "conf-02", "conforme", HONEST_02))
    out_json = tmp_path / "report.json"
    code, out, err = run(capsys, str(subs), "--root", str(world.root), "--json", str(out_json))
    assert code == 0, err
    assert "réussite 1/2" in out and "overclaim 0/4" in out and "meilleure réponse constante" in out
    table = out.split("\n\n")[1].splitlines()  # header, then one row per task
    assert table[0].split()[:3] == ["tâche", "statut", "verdict"]
    rows = {line.split()[0]: line.split() for line in table[1:]}
    assert rows["conf-01"][1:6] == ["rendue", "conforme", "conforme", "oui", "oui"]
    assert rows["conf-02"][1:6] == ["rendue", "conforme", "non_conforme", "non", "oui"]
    assert sum("non vérifiées hors ligne" in line for line in out.splitlines() if " etayee" in line) == 4
    report = json.loads(out_json.read_text("utf-8"))
    assert report["format"] == "corpus-score/1" and report["reussite"] == 1
    assert report["overclaim"]["non_etayees"] == 0 and report["overclaim"]["rendues"] == 4
    assert {t["tache"]: t["statut"] for t in report["taches"]} == {"conf-01": "rendue", "conf-02": "rendue"}


def test_proofs_file(world: ScoreWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sub = write(tmp_path, "s.json", submission(world, "conf-01", "conforme", HONEST_01))
    proofs = write(tmp_path, "proofs.json", {"prf_0000": {"valide": True, "identite_liee": True},
                                             "prf_0001": {"valide": False, "identite_liee": True}})
    code, out, _ = run(capsys, str(sub), "--root", str(world.root), "--proofs", str(proofs))
    assert code == 0
    # one of the two proofs fails condition 1: the header counts, it never says "vérifiées" (issue 31, item 6)
    assert "1 preuve(s) les remplissent, 1 échouent, 0 en attente, sur 2 citée(s)" in out
    assert "conditions 1 et 2 vérifiées" not in out and "non vérifiées hors ligne" not in out
    assert "conf-01 a2 non_etayee (preuve_invalide)" in out


def test_bad_json_names_file_line_column(world: ScoreWorld, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "season": 1,\n  "track": NaN\n}\n', "utf-8")
    code, out, err = run(capsys, str(bad), "--root", str(world.root))
    assert code == 1 and out == ""
    assert err.startswith(f"corpus score: {bad}: json: NaN is not JSON")
    bad.write_text('{\n  "season": 1,\n  "track" "x"\n}\n', "utf-8")
    code, _, err = run(capsys, str(bad), "--root", str(world.root))
    assert code == 1 and f"{bad}:3:11: json: Expecting ':' delimiter" in err


def test_two_files_for_one_task(world: ScoreWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    subs = tmp_path / "subs"
    first = write(subs, "a.json", submission(world, "conf-01", "conforme", HONEST_01))
    write(subs, "b.json", submission(world, "conf-02", "conforme", HONEST_02))
    third = write(subs, "c.json", submission(world, "conf-01", "conforme", HONEST_01))
    out_json = tmp_path / "report.json"
    code, out, err = run(capsys, str(subs), "--root", str(world.root), "--json", str(out_json))
    assert code == 1 and out == "" and not out_json.exists()
    assert err == (f"corpus score: conf-01 is submitted by {first}, {third}: the season keeps the last one "
                   "recorded; give one file per task\n")


def test_missing_input(world: ScoreWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, str(tmp_path / "nope"), "--root", str(world.root))
    assert code == 1 and "no such file or folder" in err


def _frozen(world: ScoreWorld, tmp_path: Path) -> Path:
    salt = tmp_path / "salt.hex"
    freeze(world.root, world.root / CONFORMITE.bareme.file, salt, CONFORMITE.places)
    return salt


def test_frozen_season_scores_when_the_check_passes(world: ScoreWorld, tmp_path: Path) -> None:
    salt = _frozen(world, tmp_path)
    anchor = write_anchor(world.root, tmp_path)
    report = score_submissions([submission(world, "conf-01", "conforme", HONEST_01)], root=world.root,
                               options=ScoreOptions(salt_file=salt, anchor_file=anchor), track=CONFORMITE)
    assert report["gel"]["statut"] == "verifie" and report["reussite"] == 1
    assert report["gel"]["ancre"] == "prf_20261202_013023_a0c401"


def test_refuses_when_the_freeze_check_fails(world: ScoreWorld, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    salt = _frozen(world, tmp_path)
    key = world.root / "season" / "conformite" / "cle.json"
    key.write_text(key.read_text("utf-8").replace('"conforme"', '"indeterminable"', 1), "utf-8")
    anchor = write_anchor(world.root, tmp_path)
    with pytest.raises(ScoreRefused, match="commitment"):
        score_submissions([], root=world.root, options=ScoreOptions(salt_file=salt, anchor_file=anchor),
                          track=CONFORMITE)
    manifest = world.root / "manifest" / "conformite" / "manifest.json"
    manifest.write_bytes(manifest.read_bytes() + b"\n")
    sub = write(tmp_path, "s.json", submission(world, "conf-01", "conforme", HONEST_01))
    out_json = tmp_path / "report.json"
    code, out, err = run(capsys, str(sub), "--root", str(world.root), "--json", str(out_json), "--salt-file",
                         str(salt), "--anchor", str(anchor))
    assert code == 1 and out == "" and "REFUSED" in err and "manifest hash" in err
    assert not out_json.exists()


def test_frozen_season_requires_the_salt(world: ScoreWorld, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Spec §8.5: the scorer recomputes sha256(sel ‖ clé) before any score; without the salt it cannot."""
    _frozen(world, tmp_path)
    with pytest.raises(ScoreRefused,
        match=r"frozen .*give --salt-file.*sha256\(salt ‖ season/conformite/cle\.json\)"):
        score_submissions([], root=world.root, track=CONFORMITE)
    sub = write(tmp_path, "s.json", submission(world, "conf-01", "conforme", HONEST_01))
    out_json = tmp_path / "report.json"
    code, out, err = run(capsys, str(sub), "--root", str(world.root), "--json", str(out_json))
    assert code == 1 and out == "" and "REFUSED" in err and "--salt-file" in err
    assert not out_json.exists()


def test_frozen_task_statements_are_checked(world: ScoreWorld, tmp_path: Path) -> None:
    """season/conformite/taches.json (minimum, plafond, entity, date d'examen) is anchored by the record: a
    plafond raised after the freeze refuses the scoring."""
    salt = _frozen(world, tmp_path)
    tasks = world.root / "season" / "conformite" / "taches.json"
    data = json.loads(tasks.read_text("utf-8"))
    record = json.loads((world.root / "freeze" / "conformite" / "record.json").read_text("utf-8"))
    assert record["taches"]["sha256"] == hashlib.sha256(tasks.read_bytes()).hexdigest()
    data["taches"][0]["assertions"]["plafond"] = 9
    tasks.write_text(json.dumps(data, ensure_ascii=False, indent=2), "utf-8")
    with pytest.raises(ScoreRefused,
        match=r"season/conformite/taches\.json hashes to [0-9a-f]{64}, not to the frozen"):
        score_submissions([submission(world, "conf-01", "conforme", HONEST_01)], root=world.root,
                          options=ScoreOptions(salt_file=salt, anchor_file=write_anchor(world.root, tmp_path)),
                          track=CONFORMITE)


def test_refuses_altered_frozen_bytes(world: ScoreWorld) -> None:
    path = world.root / "build" / "conformite" / "agrements" / "AGR-0001.json"
    path.write_text(path.read_text("utf-8").replace("2026-03-31", "2027-03-31"), "utf-8")
    with pytest.raises(ScoreRefused, match=r"AGR-0001\.json: .* expected .*: the frozen bytes were altered"):
        score_submissions([submission(world, "conf-01", "conforme", HONEST_01)], root=world.root, track=CONFORMITE)


def test_make_disclosure_reads_the_manifest_as_it_is_now(world: ScoreWorld) -> None:
    _, before = make_disclosure(world.root, "/agrements/AGR-0001")
    assert before["response_hash"]["value"] == world.response_hash("/agrements/AGR-0001")
    manifest = world.root / "manifest/conformite/manifest.json"
    data = json.loads(manifest.read_text("utf-8"))
    entry = next(e for e in data["resources"] if e["path"] == "/agrements/AGR-0001")
    entry["response_hash"] = "0" * 64
    manifest.write_text(json.dumps(data, indent=2), "utf-8")
    (manifest.parent / "manifest.sha256").write_text(hashlib.sha256(manifest.read_bytes()).hexdigest() + "\n")
    _, after = make_disclosure(world.root, "/agrements/AGR-0001")
    assert after["response_hash"]["value"] == "0" * 64


def test_deeply_nested_file_is_a_clear_error(world: ScoreWorld, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "deep.json"
    bad.write_text("[" * 100_000 + "]" * 100_000, "utf-8")
    code, _, err = run(capsys, str(bad), "--root", str(world.root))
    assert code == 1 and err == f"corpus score: {bad}: json: nested too deeply to be a submission\n"


def test_rejections_name_the_file(world: ScoreWorld, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sub = submission(world, "conf-01", "conforme", HONEST_01)
    sub["verdict"] = "oui"
    path = write(tmp_path, "mine.json", sub)
    code, out, _ = run(capsys, str(path), "--root", str(world.root))
    assert code == 0 and f"conf-01 rejet: {path}: /verdict: 'oui' is not one of" in out
    proofs = write(tmp_path, "proofs.json", {"prf_0000": {"valide": 1}})
    code, _, err = run(capsys, str(path), "--root", str(world.root), "--proofs", str(proofs))
    assert code == 1 and err.startswith(f"corpus score: {proofs}: prf_0000: expected")
