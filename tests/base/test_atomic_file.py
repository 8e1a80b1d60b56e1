"""One atomic file write for every command, and write errors as one line naming the file, never a traceback.

Covers ``generator.base.atomic_file.write_atomic`` itself, then the commands that wrote a file by hand before
it: ``score --json``, ``log-report --json``, and the last-resort OSError message of ``corpus``'s main().
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from score_fixtures import HONEST_01, ScoreWorld, make_score_world, submission

from generator.base.atomic_file import FileWriteError, write_atomic
from generator.base.errors import GeneratorError
from generator.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "manifest" / "conformite" / "manifest.json"


@pytest.fixture
def umask_077() -> Iterator[None]:
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


# ------------------------------------------------------------------------------------------ write_atomic

def test_mode_does_not_depend_on_the_umask(tmp_path: Path, umask_077: None) -> None:
    write_atomic(tmp_path / "public.json", "é\n")
    write_atomic(tmp_path / "private.conf", b"x", mode=0o600)
    assert stat.S_IMODE((tmp_path / "public.json").stat().st_mode) == 0o644
    assert stat.S_IMODE((tmp_path / "private.conf").stat().st_mode) == 0o600
    assert (tmp_path / "public.json").read_bytes() == "é\n".encode()


def test_replaces_whole_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    target.write_text("old")
    write_atomic(target, "new", fsync=True)
    assert target.read_text() == "new" and _leftovers(tmp_path) == []


def test_each_write_has_its_own_temporary(tmp_path: Path) -> None:
    """The old routines used one fixed ``.NAME.tmp``: a stale one (or a concurrent run's) was clobbered
    or made the write fail. A file already at that name is now left alone."""
    target = tmp_path / "report.json"
    stale = tmp_path / ".report.json.tmp"
    stale.write_text("another run's half-written report")
    write_atomic(target, "mine")
    assert target.read_text() == "mine" and stale.read_text() == "another run's half-written report"


@pytest.mark.parametrize("case", ["missing folder", "a folder", "under a file"])
def test_an_error_is_one_project_error_naming_the_file(tmp_path: Path, case: str) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x")
    target, reason = {"missing folder": (tmp_path / "nodir" / "x.json", "cannot write: No such file or directory"),
                      "a folder": (tmp_path / "folder", "exists and is not a regular file"),
                      "under a file": (tmp_path / "file" / "x.json", "cannot write: Not a directory")}[case]
    with pytest.raises(FileWriteError) as caught:
        write_atomic(target, "data")
    assert isinstance(caught.value, GeneratorError) and isinstance(caught.value, OSError)
    assert str(caught.value) == f"{target}: {reason}"
    assert _leftovers(tmp_path) == [] and (tmp_path / "file").read_text() == "x"
    assert (tmp_path / "folder").is_dir()


# ------------------------------------------------------------------------------------- score --json

@pytest.fixture
def world(tmp_path: Path) -> ScoreWorld:
    return make_score_world(tmp_path / "root")


@pytest.mark.parametrize("case", ["missing folder", "a folder"])
def test_score_json_that_cannot_be_written(world: ScoreWorld, tmp_path: Path, case: str,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    sub = tmp_path / "s.json"
    sub.write_text(json.dumps(submission(world, "conf-01", "conforme", HONEST_01)), "utf-8")
    out = tmp_path / "nodir" / "x.json" if case == "missing folder" else tmp_path / "a-folder"
    if case == "a folder":
        out.mkdir()
    before = sorted(os.listdir(tmp_path))
    code = main(["score", str(sub), "--root", str(world.root), "--json", str(out)])
    err = capsys.readouterr().err
    reason = "cannot write: No such file or directory" if case == "missing folder" else \
        "exists and is not a regular file"
    assert code == 1 and err == f"corpus score: {out}: {reason}\n"
    assert sorted(os.listdir(tmp_path)) == before and (tmp_path / "root").is_dir()


# -------------------------------------------------------------------------------- log-report --json

def _one_log(tmp_path: Path) -> Path:
    record = {"time": "2026-11-30T05:10:00+00:00", "request_id": "1-1-1", "method": "GET", "uri": "/catalogue",
              "status": 200, "bytes": 10, "secret_ok": True, "user_agent": "python-httpx/0.27.0",
              "request_time": 0.001}
    path = tmp_path / "access.log"
    path.write_text(json.dumps(record) + "\n", "utf-8")
    return path


def test_log_report_json_that_cannot_be_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "nodir" / "x"
    code = main(["log-report", str(_one_log(tmp_path)), "--manifest", str(MANIFEST), "--json", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and err == f"corpus log-report: {out}: cannot write: No such file or directory\n"
    assert not (tmp_path / "nodir").exists() and _leftovers(tmp_path) == []


def test_log_report_refuses_a_fifo_without_waiting_for_a_writer(tmp_path: Path) -> None:
    fifo = tmp_path / "access.log"
    os.mkfifo(fifo)
    result = subprocess.run([sys.executable, "-m", "generator.cli", "log-report", str(fifo), "--manifest",
                             str(MANIFEST)], capture_output=True, text=True, timeout=60, check=False, cwd=ROOT)
    assert result.returncode == 1 and result.stderr == (f"corpus log-report: {fifo}: not a regular file (a FIFO); "
                                                        "name only access logs (or their folders), readable by "
                                                        "the account that runs log-report\n")


def test_a_log_replaced_by_a_fifo_after_the_listing_stops_the_report_not_a_hang(tmp_path: Path) -> None:
    """Reading itself refuses a FIFO (opened without blocking, checked on the descriptor): the report stops
    with one line, as for a FIFO named on the command line. Run in a child process with a timeout: a
    blocking open would wait for a writer forever."""
    fifo = tmp_path / "access.log"
    os.mkfifo(fifo)
    code = ("import sys; from pathlib import Path; from generator.observe.log_report.files import read_lines; "
            "p = []; \n"
            "try: list(read_lines(Path(sys.argv[1]), lambda n, why: p.append((n, why))))\n"
            "except Exception as exc: print(type(exc).__name__, exc, p)")
    result = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=60,
                            check=False, cwd=ROOT)
    expected = f"LogReportError {fifo}: not a regular file (a FIFO); name only access logs"
    assert result.stdout.startswith(expected), result.stderr
    assert result.stdout.endswith(" []\n"), result.stdout


# ------------------------------------------------------------------------------- main(): the last resort

def test_a_stray_oserror_is_one_line_with_its_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``verify-build`` on a PREFIX/conf/settings.json that links to itself (ELOOP, no errno a reader words
    itself): still ``corpus CMD: FILE: reason`` and exit 1, no traceback."""
    settings = tmp_path / "prefix" / "conf" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.symlink_to(settings.name)  # a link to itself: ELOOP
    code = main(["verify-build", "--prefix", str(tmp_path / "prefix")])
    assert code == 1
    assert capsys.readouterr().err == (f"corpus verify-build: {settings}: cannot read: a symbolic link loop "
                                       "(links that lead back to themselves); render the prefix again (corpus "
                                       "render-nginx)\n")


def test_a_rename_error_names_both_files() -> None:
    from generator.base.errors import os_error_text

    assert os_error_text(OSError(2, "No such file or directory", "a", None, "b")) == \
        "a -> b: No such file or directory"
    assert os_error_text(OSError(5, "Input/output error")) == "Input/output error"
