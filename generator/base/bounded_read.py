"""One reader for every file a user or an author hands us: a regular file, read up to a limit.

Opened without blocking (a FIFO would otherwise hang the command until a writer comes), checked on the open
descriptor to be a regular file (a device such as /dev/zero is refused before a byte is read), and read up
to a size limit chosen by the caller (a salt is tiny, a manifest large), so that no input can fill the
memory. Corpus sources also refuse symbolic links (``follow_symlinks=False``).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from pathlib import Path

MIB = 1024 * 1024
NOT_REGULAR = "not a regular file"

# Limits per use: far above any honest file, far below what would exhaust the memory.
SALT_LIMIT = 1024  # a 32-byte salt written in hex
SUBMISSION_LIMIT = 16 * MIB  # a participant's submission or proof verification file
PUBLISHED_LIMIT = 256 * MIB  # the manifest, the freeze record, the season files, a frozen document


class ReadRefused(OSError):
    """The file is no regular file, or is larger than the limit: ``strerror`` says which, in one line."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def size_text(limit: int) -> str:
    """``16 MiB``, ``1 KiB`` or ``N bytes``: the limit as a message words it."""
    for unit, name in ((MIB, "MiB"), (1024, "KiB")):
        if limit % unit == 0:
            return f"{limit // unit} {name}"
    return f"{limit} bytes"


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, for a message: ``a folder``, ``a FIFO``, ``a device``..."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a device"),
                       (stat.S_ISBLK, "a device"), (stat.S_ISSOCK, "a socket"), (stat.S_ISLNK, "a symbolic link")):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: str | Path, *, follow_symlinks: bool = True) -> int:
    """A descriptor of the regular file ``path``, opened without blocking and checked on the descriptor.

    The one way every reader opens what it is handed (a bounded read, a log stream, a release artifact): a
    FIFO is opened without waiting for a writer, then refused with a device or a folder as
    :class:`ReadRefused` (``FILE: not a regular file (a FIFO)``). The descriptor is left blocking.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    name = os.fspath(path)
    fd = os.open(name, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ReadRefused(errno.EINVAL, f"{NOT_REGULAR} ({kind_of(mode)})", name)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bounded(path: str | Path, limit: int, *, follow_symlinks: bool = True,
                 refuse_larger: bool = True, check: Callable[[os.stat_result], None] | None = None) -> bytes:
    """The bytes of the regular file ``path``, refused (:class:`ReadRefused`) above ``limit`` bytes.

    ``refuse_larger=False`` returns at most ``limit + 1`` bytes instead, for a caller that words the size
    problem itself. ``check`` sees the open file's status before a byte is read (a secrets file's mode), and
    raises to refuse it. Other failures (absent, permission) are the OSError of ``open``.
    """
    name = os.fspath(path)
    fd = open_regular(name, follow_symlinks=follow_symlinks)
    try:
        status = os.fstat(fd)
        if check is not None:
            check(status)
        chunks, size = [], 0
        while size <= limit:
            # as much as the file holds, and one byte more to see its end; never a buffer of 4 MiB for a file
            # of 4 KiB (a season's close reads hundreds of thousands: the buffer cost more than the read)
            chunk = os.read(fd, min(limit + 1 - size, max(status.st_size + 1 - size, 64 * 1024), 4 * MIB))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    finally:
        os.close(fd)
    if size > limit and refuse_larger:
        raise ReadRefused(errno.EFBIG, f"larger than {size_text(limit)}", name)
    return b"".join(chunks)
