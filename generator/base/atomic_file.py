"""One way to replace a file: write a private temporary beside it, then ``rename`` it over the target.

Every command that writes a single file (a report, a rendered config, a unit, a state file, a secret,
the build journal) goes through :func:`write_atomic`, so that a reader finds the old file or the new one,
whole, and never a half-written one; two runs writing the same target at once cannot share a temporary
(each gets its own name, created with ``O_EXCL``); the mode is the one asked for whatever the umask; and
a failure (no such folder, a folder given as the file, a full disk) is one line naming the file, never a
traceback, with the temporary removed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from generator.base.errors import GeneratorError

_CREATE = os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)


class FileWriteError(GeneratorError, OSError):
    """A file could not be written; the message is ``FILE: cannot write: reason`` and the target is untouched.

    Also an OSError (same ``errno``, ``strerror``, ``filename``), so that callers that handle write errors
    (the build transaction) keep handling it.
    """

    def __str__(self) -> str:
        return f"{self.filename}: cannot write: {self.strerror}"


class NotRegularTarget(FileWriteError):
    """The target is a device, FIFO, folder or symbolic link: a rename would replace it, not write to it."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def check_target(path: str | Path) -> None:
    """Raise :class:`NotRegularTarget` when ``path`` exists and is no regular file (absent is fine).

    A rename would replace the device, FIFO, folder or link itself, never write through it. Called by
    :func:`write_atomic`, and by a command that wants to refuse its output before a long run.
    """
    try:
        mode_now = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise FileWriteError(exc.errno, exc.strerror or str(exc), os.fspath(path)) from None
    if not stat.S_ISREG(mode_now):
        raise NotRegularTarget(errno.EEXIST, "exists and is not a regular file", os.fspath(path))


def write_fd(fd: int, data: bytes) -> None:
    """Write all of ``data`` to ``fd`` (``os.write`` may write less than asked: the rest is retried)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def write_new(path: str | Path, data: bytes, mode: int, *, exclusive: bool = True, fix_mode: bool = True) -> None:
    """Create ``path`` (``exclusive``: it must not exist) with ``mode`` from the first byte, and fill it.

    ``fix_mode``: ``fchmod`` after creation, since ``open`` applies the umask (a caller that knows the
    umask cannot cut ``mode`` may skip the system call). An OSError names ``path``.
    """
    fd = os.open(path, _CREATE | (os.O_EXCL if exclusive else os.O_TRUNC), mode)
    try:
        if fix_mode:
            os.fchmod(fd, mode)
        write_fd(fd, data)
    except OSError as exc:  # os.write's error names no file: name it, the message needs it
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
    finally:
        os.close(fd)


def write_atomic(path: str | Path, data: bytes | str, *, mode: int = 0o644, fsync: bool = False) -> None:
    """Replace ``path`` with ``data`` (text is written as UTF-8) in one rename; raise :class:`FileWriteError`.

    The temporary is ``.NAME.RANDOM.tmp`` in the same folder (a rename never crosses file systems), created
    with ``O_EXCL`` and given ``mode`` by ``fchmod``. ``fsync``: flush the bytes before the rename, for a
    file that must survive a crash of the machine (costs a disk sync).
    """
    target = Path(path)
    check_target(target)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
    try:
        fd = os.open(temporary, _CREATE | os.O_EXCL, mode & 0o600)
        try:
            os.fchmod(fd, mode)
            write_fd(fd, raw)
            if fsync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(exc, OSError):
            raise FileWriteError(exc.errno, exc.strerror or str(exc), os.fspath(target)) from None
        raise
