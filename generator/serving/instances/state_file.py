"""The ``--state-file`` of ``corpus serve --replicas``: where to call, which CA to trust, the nginx masters.

Written whole (one rename) once everything answers and again after each restart, removed on exit.
Before anything starts, the target is judged: a file left by a run that still has live masters is
refused (two supervisors would fight over the same ports); one left by a run that died is replaced
(said so); anything that is not such a document, or not a regular file, is refused with one line
naming it and what to do. :func:`read_state` is also what a client (the tests) reads it with.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from generator.base.bounded_read import ReadRefused, read_bounded
from generator.base.errors import ServeError

STATE_LIMIT = 1024 * 1024
_NODES = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
          (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"))


class StateFileError(ServeError):
    """The state file is not one ``corpus serve`` wrote, or cannot be written; the message names it."""


def _masters(document: dict[str, Any], path: Path, key: str) -> list[dict[str, Any]]:
    value = document.get(key, [])
    if not isinstance(value, list) or not all(
            isinstance(m, dict) and isinstance(m.get("address"), str) and type(m.get("pid")) is int
            and m["pid"] > 0 for m in value):
        raise StateFileError(f"{path}: {key}: expected a list of {{address, pid}}; not a state file of corpus "
                             f"serve: remove it, or give another --state-file")
    return value


def read_state(path: Path) -> dict[str, Any]:
    """The state document, checked: ``frontal`` and ``ca`` strings, ``replicas`` (and ``frontals``) lists of
    ``{address, pid}``; :class:`StateFileError` otherwise (a FIFO or a device is refused, never waited on)."""
    what = "not a state file of corpus serve: remove it, or give another --state-file"
    try:
        data = read_bounded(path, STATE_LIMIT)
    except FileNotFoundError:
        raise StateFileError(f"{path}: no such file (corpus serve --replicas N --state-file {path} writes it "
                             "once everything answers)") from None
    except ReadRefused as exc:
        raise StateFileError(f"{exc}; {what}") from None
    except OSError as exc:
        raise StateFileError(f"{path}: cannot read: {exc.strerror}") from None
    if not data.strip():
        raise StateFileError(f"{path}: empty; {what}")
    try:
        document = json.loads(data.decode("utf-8"))
    except ValueError:
        raise StateFileError(f"{path}: not valid JSON; {what}") from None
    if not isinstance(document, dict):
        raise StateFileError(f"{path}: expected a JSON object, got {type(document).__name__}; {what}")
    for key in ("frontal", "ca"):
        if not isinstance(document.get(key), str):
            raise StateFileError(f"{path}: {key}: expected a string; {what}")
    _masters(document, path, "replicas")
    _masters(document, path, "frontals")
    return document


def _alive(pid: int) -> bool:
    """An nginx process runs under ``pid`` (a reused pid of another program is not one)."""
    try:
        return b"nginx" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def check_state_target(path: Path) -> str | None:
    """Judge ``--state-file`` before anything starts; return a note when a dead run's file will be replaced.

    Refused: a dangling link, a folder, a FIFO, a device; a folder that does not exist or cannot be
    written; a file that is not a state document (corrupt, empty, another JSON type); a state file whose
    masters still run.
    """
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise StateFileError(f"--state-file {path}: cannot read: {exc.strerror}") from None
    if mode is not None and stat.S_ISLNK(mode):
        target = os.readlink(path)
        if not path.exists():
            raise StateFileError(f"--state-file {path}: a symbolic link to nothing ({target}); remove the link, "
                                 "or give the file's own path")
        raise StateFileError(f"--state-file {path}: a symbolic link ({target}); the state file is replaced "
                             "whole, not written through a link: give the file's own path")
    for test, name in _NODES:
        if mode is not None and test(mode):
            raise StateFileError(f"--state-file {path}: {name}, not a file; give the path of a file to write")
    folder = path.parent
    if not folder.is_dir():
        raise StateFileError(f"--state-file {path}: the folder {folder} does not exist; create it first")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StateFileError(f"--state-file {path}: the folder {folder} is not writable by this user "
                             "(mode); give another --state-file")
    if mode is None:
        return None
    document = read_state(path)
    live = [m["pid"] for key in ("replicas", "frontals") for m in document.get(key, []) if _alive(m["pid"])]
    if live:
        raise StateFileError(f"--state-file {path}: names nginx masters that still run (pid "
                             f"{', '.join(map(str, live))}): another corpus serve uses it; stop that one, or "
                             "give another --state-file")
    return f"{path}: left by a run that ended without removing it (no master alive); replaced"
