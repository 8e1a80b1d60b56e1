"""Every file the operations commands read, made hostile one class at a time: corrupt, empty, of the wrong
JSON type, missing, a dangling link, a folder, a FIFO, a device, of a wrong mode. Each is one line naming the
file and what to do, a non-zero exit, never a traceback or a hang, and nothing half-written: the prefix's
files, the releases and their links are as they were.

The files: ``PREFIX/conf/settings.json`` (``verify-build``, ``reload``), the secrets file (``reload``
re-reads it), ``releases/current`` and ``previous`` and the release folders (``release``), an artifact and
its ``.sha256`` (``release install``), access logs (``log-report``), and output targets (``log-report
--json``, ``release pack --out``). Given a FIFO or a device, the command runs as a child process with a
timeout and a memory limit, as an operator runs it, so that a hang or a runaway read fails the test; a wrong
mode is made real for root too, by dropping the capabilities that let root read any file
(``CAP_DAC_OVERRIDE``, ``CAP_DAC_READ_SEARCH``) in the child. The other files (corrupt, empty, missing, a
link, a folder) are refused by the same entry point run in this process (tests/cli_run.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_run import Ran, child_limits, run_corpus
from nginx_server import free_port, private_folder, snapshot_build

from generator.base.secret_values import new_secret, write_private
from generator.serving.releases.artifact import pack
from generator.serving.releases.release import install, switch

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class World:
    """A checkout's build, a replica prefix's settings, a secret, releases with current, an artifact, a log."""

    folder: Path
    root: Path
    prefix: Path
    settings: Path
    secret: Path
    releases: Path
    artifact: Path
    log: Path

    @property
    def digest(self) -> Path:
        return self.artifact.with_suffix(".sha256")

    @property
    def release(self) -> Path:
        return self.releases / self.artifact.stem


@pytest.fixture(scope="module")
def pristine() -> Iterator[tuple[Path, Path]]:
    """One snapshot of the checkout's build and its artifact, packed once (the same bytes each time, by
    construction): both copied for each test."""
    with private_folder("corpus-hostile-ops-") as folder:
        snapshot_build(folder / "root")
        yield folder / "root", pack(folder / "root", folder / "artifacts").path


@pytest.fixture
def world(pristine: tuple[Path, Path]) -> Iterator[World]:
    with private_folder("corpus-hostile-op-") as folder:
        root = folder / "root"
        snapshot_build(root, pristine[0])
        secret, prefix = folder / "secret", folder / "prefix"
        write_private(secret, new_secret() + "\n")
        settings = prefix / "conf" / "settings.json"
        settings.parent.mkdir(parents=True)
        settings.write_text(json.dumps({"root": str(root), "prefix": str(prefix), "secret_file": str(secret),
                                        "port": free_port()}), "utf-8")
        releases = folder / "releases"
        switch(releases, install(root, releases))
        artifact = shutil.copytree(pristine[1].parent, folder / "artifacts") / pristine[1].name
        log = folder / "logs" / "access.log"
        log.parent.mkdir()
        log.write_text(json.dumps({"time": "2026-11-30T05:10:00+00:00", "request_id": "1-1-1", "method": "GET",
                                   "uri": "/catalogue", "status": 200, "bytes": 10, "secret_ok": True,
                                   "user_agent": "python-httpx/0.27", "request_time": 0.001}) + "\n", "utf-8")
        os.chmod(folder, 0o755)
        yield World(folder, root, prefix, settings, secret, releases, artifact, log)




def corpus(*argv: str, unprivileged: bool = False, child: bool = False) -> Ran | subprocess.CompletedProcess[str]:
    """With ``child`` (or ``unprivileged``), the command in a child process: at most 20 s and 2 GiB, so a hang
    or a runaway read fails the test; otherwise in this process."""
    if not (child or unprivileged):
        return run_corpus(*argv, cwd=ROOT)
    return subprocess.run([sys.executable, "-m", "generator.cli", *argv], capture_output=True, text=True,
                          timeout=20, check=False, cwd=ROOT, preexec_fn=child_limits(unprivileged))


def state(w: World) -> dict[str, object]:
    """What must not change when a command refuses: the prefix's files, the releases and their links."""
    def tree(folder: Path) -> dict[str, object]:
        out: dict[str, object] = {}
        for path in sorted(folder.rglob("*")) if folder.is_dir() else []:
            rel = path.relative_to(folder).as_posix()
            kind = os.readlink(path) if path.is_symlink() else "dir" if path.is_dir() else path.lstat().st_size
            out[rel] = kind
        return out
    return {"prefix": tree(w.prefix), "releases": tree(w.releases)}


def refused(w: World, argv: list[str], names: Path | str, says: str, *, unprivileged: bool = False,
            child: bool = False, code: int = 1) -> None:
    """The command exits ``code`` with one line ``corpus CMD: FILE...`` saying ``says``; nothing changed."""
    before = state(w)
    result = corpus(*argv, unprivileged=unprivileged, child=child)
    err = result.stderr
    assert result.returncode == code, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"corpus {argv[0]}: ") and str(names) in err and says in err, err
    assert state(w) == before


def verify_build(w: World) -> list[str]:
    return ["verify-build", "--prefix", str(w.prefix)]


def reload(w: World) -> list[str]:
    return ["reload", "--prefix", str(w.prefix)]


def release(w: World) -> list[str]:
    return ["release", "--root", str(w.root), "--releases", str(w.releases)]


def rollback(w: World) -> list[str]:
    return ["release", "--rollback", "--releases", str(w.releases)]


def install_(w: World) -> list[str]:
    return ["release", "install", str(w.artifact), "--releases", str(w.releases)]


def log_report(w: World, *paths: Path) -> list[str]:
    return ["log-report", *(map(str, paths or (w.log,))), "--manifest", str(
        w.root / "manifest/conformite/manifest.json")]


AGAIN = "render the prefix again (corpus render-nginx)"
SECRET_FIX = "write the accepted secrets there, one per line"
COPY = "copy it again from where it was packed"
LOGS = "name only access logs"


def _replace(path: Path, make: Callable[[Path], object]) -> None:
    """Put something else where ``path`` was (its file removed first)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()
    make(path)


# ----------------------------------------------------------------------------------------- corrupt

@pytest.mark.parametrize("case", ["settings.json", "secrets file", "release folder", "artifact", "sha256 file",
                                  "access log"])
def test_a_corrupt_file(world: World, case: str) -> None:
    w = world
    if case == "settings.json":
        w.settings.write_text('{"root": "/srv",', "utf-8")
        refused(w, verify_build(w), w.settings, f":1:17: not JSON: Expecting property name enclosed in double "
                                                f"quotes; {AGAIN}")
    elif case == "secrets file":
        w.secret.write_bytes(b"\xff" * 20 + b"\n")
        refused(w, reload(w), w.secret, "not UTF-8 text")
    elif case == "release folder":  # an installed release altered in place: never used again
        body = next((w.release / "build/conformite/entites").iterdir())
        body.write_bytes(body.read_bytes().replace(b"e", b"E", 1))
        refused(w, release(w), body, "bytes differ from the manifest entry")
    elif case == "artifact":
        w.artifact.write_bytes(w.artifact.read_bytes()[:-1] + b"!")
        refused(w, install_(w), w.artifact, f"the artifact is truncated, altered or another one; {COPY}")
    elif case == "sha256 file":
        w.digest.write_text("f" * 63 + "  " + w.artifact.name + "\n")
        refused(w, install_(w), w.digest, f"expected one line '<sha256>  {w.artifact.name}'")
    else:  # a log line that is no JSON: a finding of the report, named file:line, not a refusal
        w.log.write_text("{not json\n", "utf-8")
        result = corpus(*log_report(w))
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
        assert f"{w.log}:1" in result.stdout and "not a JSON object" in result.stdout, result.stdout


# ------------------------------------------------------------------------------------------- empty

@pytest.mark.parametrize("case", ["settings.json", "secrets file", "artifact", "sha256 file", "access log"])
def test_an_empty_file(world: World, case: str) -> None:
    w = world
    target = {"settings.json": w.settings, "secrets file": w.secret, "artifact": w.artifact,
              "sha256 file": w.digest, "access log": w.log}[case]
    target.write_bytes(b"")
    if case == "settings.json":
        refused(w, verify_build(w), w.settings, f"empty; {AGAIN}")
    elif case == "secrets file":
        refused(w, reload(w), w.secret, "no secret found (one per line, '#' starts a comment)")
    elif case == "artifact":
        refused(w, install_(w), w.artifact, "differs from")
    elif case == "sha256 file":
        refused(w, install_(w), w.digest, "expected one line")
    else:  # an empty log is a quiet one (just rotated): read, counted, no refusal
        out = w.folder / "report.json"
        result = corpus(*log_report(w), "--json", str(out))
        assert result.returncode == 0, result.stderr
        assert json.loads(out.read_text())["files"] == [{"path": str(w.log), "lines": 0, "malformed": 0}]


# -------------------------------------------------------------------------------- wrong JSON type

@pytest.mark.parametrize("case", ["settings.json a list", "settings.json a string field",
                                  "release manifest a list", "access log line a list"])
def test_a_file_of_the_wrong_json_type(world: World, case: str) -> None:
    w = world
    if case == "settings.json a list":
        w.settings.write_text("[]", "utf-8")
        for argv in (verify_build(w), reload(w)):
            refused(w, argv, w.settings, f"expected a JSON object of settings, got a list; {AGAIN}")
    elif case == "settings.json a string field":
        w.settings.write_text(json.dumps({"root": str(w.root), "prefix": str(w.prefix), "port": "80"}), "utf-8")
        refused(w, reload(w), w.settings, f"port: expected an integer, got a string; {AGAIN}")
    elif case == "release manifest a list":
        manifest = w.release / "manifest/conformite/manifest.json"
        manifest.write_text("[]", "utf-8")
        refused(w, release(w), manifest, "expected a JSON object")
    else:
        w.log.write_text("[1, 2]\n", "utf-8")
        result = corpus(*log_report(w))
        assert result.returncode == 0 and f"{w.log}:1" in result.stdout and "not a JSON object" in result.stdout


# ----------------------------------------------------------------------------------------- missing

@pytest.mark.parametrize("case", ["settings.json", "secrets file", "artifact", "sha256 file", "access log",
                                  "previous release"])
def test_a_missing_file(world: World, case: str) -> None:
    w = world
    if case == "settings.json":
        w.settings.unlink()
        refused(w, verify_build(w), w.settings, "not found: render the prefix first (corpus render-nginx)")
    elif case == "secrets file":
        w.secret.unlink()
        refused(w, reload(w), w.secret, f"secret file not found; {SECRET_FIX}")
    elif case == "artifact":
        w.artifact.unlink()
        refused(w, install_(w), w.artifact, f"no such file; {COPY}")
    elif case == "sha256 file":
        w.digest.unlink()
        refused(w, install_(w), w.digest, f"not found: the SHA-256 of {w.artifact.name} travels beside it")
    elif case == "access log":
        w.log.unlink()
        refused(w, log_report(w), w.log, "no such file or folder", code=1)
    else:
        refused(w, rollback(w), w.releases, "nothing to roll back to (no 'previous' release)")


# ------------------------------------------------------------------------------------ dangling link

@pytest.mark.parametrize("case", ["settings.json", "secrets file", "artifact", "access log", "previous link",
                                  "report output"])
def test_a_dangling_link(world: World, case: str) -> None:
    w = world
    nowhere = w.folder / "nowhere"
    dangling = f"a symbolic link to {nowhere}, which does not exist (a dangling link)"
    if case == "previous link":
        (w.releases / "previous").symlink_to("0" * 64)
        refused(w, rollback(w), w.releases / "previous",
                f"points at {'0' * 64}, which is not a release folder here")
        return
    if case == "report output":
        out = w.folder / "report.json"
        out.symlink_to(nowhere)
        refused(w, [*log_report(w), "--json", str(out)], out, "exists and is not a regular file")
        assert not nowhere.exists()
        return
    target = {"settings.json": w.settings, "secrets file": w.secret, "artifact": w.artifact,
              "access log": w.log}[case]
    _replace(target, lambda p: p.symlink_to(nowhere))
    argv, fix = {"settings.json": (verify_build(w), AGAIN), "secrets file": (reload(w), SECRET_FIX),
                 "artifact": (install_(w), COPY), "access log": (log_report(w), LOGS)}[case]
    refused(w, argv, target, f"{dangling}; {fix}")


def test_a_dangling_current_is_no_previous_release(world: World) -> None:
    """``current`` left dangling (its folder removed by hand): a release still goes ahead, and the dangling
    target never becomes ``previous``."""
    w = world
    (w.releases / "current").unlink()
    (w.releases / "current").symlink_to("f" * 64)
    result = corpus(*release(w))
    assert result.returncode == 0, result.stderr
    assert os.readlink(w.releases / "current") == w.release.name and not (w.releases / "previous").exists()


# ------------------------------------------------------------------------------------------ folder

@pytest.mark.parametrize("case", ["settings.json", "secrets file", "artifact", "sha256 file", "current",
                                  "release folder a file", "report output", "pack output a file"])
def test_a_folder_where_a_file_belongs(world: World, case: str) -> None:
    w = world
    if case == "release folder a file":  # the inverse: a file where the release folder belongs
        _replace(w.release, lambda p: p.write_text("x"))
        (w.releases / "current").unlink()
        refused(w, release(w), w.release,
                "not a release folder: corpus release writes only folders there; move it away")
        return
    if case == "report output":
        out = w.folder / "report.json"
        out.mkdir()
        refused(w, [*log_report(w), "--json", str(out)], out, "exists and is not a regular file")
        return
    if case == "pack output a file":
        out = w.folder / "out"
        out.write_text("x")
        refused(w, ["release", "pack", "--root", str(w.root), "--out", str(out)], out,
                "not a folder: --out names the folder")
        return
    target = {"settings.json": w.settings, "secrets file": w.secret, "artifact": w.artifact,
              "sha256 file": w.digest, "current": w.releases / "current"}[case]
    _replace(target, Path.mkdir)
    argv, says = {"settings.json": (verify_build(w), f"not a regular file (a folder); {AGAIN}"),
                  "secrets file": (reload(w), f"not a regular file (a folder); {SECRET_FIX}"),
                  "artifact": (install_(w), f"not a regular file (a folder); {COPY}"),
                  "sha256 file": (install_(w), f"not a regular file (a folder); {COPY}"),
                  "current": (release(w), "a folder, not a symbolic link: corpus release keeps current as a "
                                          "link to a release folder; move it away")}[case]
    refused(w, argv, target, says)


# -------------------------------------------------------------------------------------------- FIFO

@pytest.mark.parametrize("case", ["settings.json", "secrets file", "artifact", "sha256 file", "access log",
                                  "current", "report output", "pack output"])
def test_a_fifo_is_refused_without_waiting(world: World, case: str) -> None:
    w = world
    outputs = {"report output": w.folder / "report.json", "pack output": w.folder / "out"}
    target = {"settings.json": w.settings, "secrets file": w.secret, "artifact": w.artifact,
              "sha256 file": w.digest, "access log": w.log, "current": w.releases / "current", **outputs}[case]
    if case in outputs:
        os.mkfifo(target)
    else:
        _replace(target, os.mkfifo)
    argv, says = {
        "settings.json": (verify_build(w), f"not a regular file (a FIFO); {AGAIN}"),
        "secrets file": (reload(w), f"not a regular file (a FIFO); {SECRET_FIX}"),
        "artifact": (install_(w), f"not a regular file (a FIFO); {COPY}"),
        "sha256 file": (install_(w), f"not a regular file (a FIFO); {COPY}"),
        "access log": (log_report(w), f"not a regular file (a FIFO); {LOGS}"),
        "current": (release(w), "a FIFO, not a symbolic link"),
        "report output": ([*log_report(w), "--json", str(target)], "exists and is not a regular file"),
        "pack output": (["release", "pack", "--root", str(w.root), "--out", str(target)], "a FIFO, not a folder"),
    }[case]
    refused(w, argv, target, says, child=True)


# ------------------------------------------------------------------------------------------ device

@pytest.mark.parametrize("case", ["settings.json", "secrets file", "artifact", "access log", "report output",
                                  "pack output"])
def test_a_device_is_refused(world: World, case: str) -> None:
    w = world
    if case in ("report output", "pack output"):
        argv = [*log_report(w), "--json", "/dev/null"] if case == "report output" else \
            ["release", "pack", "--root", str(w.root), "--out", "/dev/null"]
        refused(w, argv, "/dev/null", "exists and is not a regular file" if case == "report output"
                else "a device, not a folder", child=True)
        return
    if case == "access log":
        refused(w, log_report(w, Path("/dev/zero")), "/dev/zero", f"not a regular file (a device); {LOGS}",
                child=True)
        return
    target = {"settings.json": w.settings, "secrets file": w.secret, "artifact": w.artifact}[case]
    _replace(target, lambda p: p.symlink_to("/dev/zero"))  # through a link: the name the command is given
    argv, fix = {"settings.json": (verify_build(w), AGAIN), "secrets file": (reload(w), SECRET_FIX),
                 "artifact": (install_(w), COPY)}[case]
    refused(w, argv, target, f"not a regular file (a device); {fix}", child=True)


# -------------------------------------------------------------------------------------- wrong mode

@pytest.mark.parametrize("case", ["settings.json", "secrets file readable by others", "secrets file unreadable",
                                  "artifact", "access log"])
def test_a_file_of_a_wrong_mode(world: World, case: str) -> None:
    w = world
    if case == "secrets file readable by others":
        os.chmod(w.secret, 0o644)
        refused(w, reload(w), w.secret, f"mode 0644 lets others read the secret; run: chmod 600 {w.secret}")
        return
    target = {"settings.json": w.settings, "secrets file unreadable": w.secret, "artifact": w.artifact,
              "access log": w.log}[case]
    os.chmod(target, 0o000)
    argv, fix = {"settings.json": (verify_build(w), AGAIN), "secrets file unreadable": (reload(w), SECRET_FIX),
                 "artifact": (install_(w), COPY), "access log": (log_report(w), LOGS)}[case]
    refused(w, argv, target, f"cannot read: permission denied (mode 0000, owner uid {os.getuid()}",
            unprivileged=True)
    refused(w, argv, target, fix, unprivileged=True)
