"""The access log files of a report, found and read as a stream: plain or gzip, each line bounded.

A FIFO, a device or a dangling link is refused by name (reading one would wait forever or report its
hours as quiet); a line longer than nginx writes, a truncated gzip and a decompression bomb are problems
of the file, reported with their line, never a crash or a memory blow-up.
"""

from __future__ import annotations

import gzip
import os
import stat
import zlib
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from generator.base.bounded_read import kind_of, open_regular
from generator.base.errors import GeneratorError, unreadable_text

MAX_LINE_BYTES = 256 * 1024  # nginx's header buffers are 8k: a URI and a user agent, escaped, fit easily
GZIP_MAGIC = b"\x1f\x8b"
# Access logs compress 10 to 30 times; deflate's ceiling is about 1000. Past its first 64 MiB, a gzip
# file that has expanded more than 200 times its compressed size is reported as a bomb and skipped.
MAX_GZIP_RATIO = 200
GZIP_RATIO_FREE = 64 * 1024 * 1024


_FIX = "name only access logs (or their folders), readable by the account that runs log-report"


class LogReportError(GeneratorError):
    """An input that cannot be read at all (missing path, unreadable manifest, bad option)."""


def log_files(paths: Iterable[Path]) -> list[Path]:
    """The files to read: files as given; in a folder, every ``*access*.log*`` file below it, sorted.

    Error logs and other files in a log folder are not JSON access logs: naming the files picks them.
    A path given that is neither (a FIFO, a device, a socket) is refused by name: reading a FIFO would
    wait for a writer forever. In a folder, an entry named like an access log that is no regular file (a
    FIFO, a dangling link) is refused too: skipping it would report its hours as quiet.
    """
    found: list[Path] = []
    for path in paths:
        try:
            mode = path.stat().st_mode
        except FileNotFoundError as exc:
            if path.is_symlink():
                raise LogReportError(unreadable_text(path, exc, _FIX)) from None
            raise LogReportError(f"{path}: no such file or folder") from None
        except OSError as exc:
            raise LogReportError(unreadable_text(path, exc, _FIX)) from None
        if stat.S_ISDIR(mode):
            named = sorted(p for p in path.rglob("*access*.log*") if not p.is_dir())
            unreadable = [p for p in named if not p.is_file()]  # a FIFO, a socket, a dangling link
            if unreadable:
                raise LogReportError(f"{', '.join(map(str, unreadable))}: named like an access log but not a "
                                     "regular file (a FIFO, a socket, a device or a dangling link): cannot read "
                                     f"{'it' if len(unreadable) == 1 else 'them'}")
            found.extend(named)
        elif stat.S_ISREG(mode):
            found.append(path)
        else:
            raise LogReportError(f"{path}: not a regular file ({kind_of(mode)}); {_FIX}")
    return found


@contextmanager
def _open(path: Path) -> Iterator[BinaryIO]:
    """The file's bytes, gunzipped when it starts with the gzip magic (whatever its name).

    Opened without blocking and checked on the open descriptor: a file replaced by a FIFO after
    :func:`log_files` looked at it is refused, not waited on; one that cannot be opened stops the report.
    """
    try:
        fd = open_regular(path)
    except OSError as exc:  # the file cannot be read at all: the report would show its hours as quiet
        raise LogReportError(unreadable_text(path, exc, _FIX)) from None
    with os.fdopen(fd, "rb") as raw:
        if raw.read(2) == GZIP_MAGIC:
            raw.seek(0)
            with gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
                yield unzipped  # type: ignore[misc]
        else:
            raw.seek(0)
            yield raw


def read_lines(path: Path, problem: Callable[[int, str], None],
               blank: Callable[[int, int], None] | None = None) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of one file, streamed, each line at most ``MAX_LINE_BYTES``.

    A longer line (not something nginx writes: its header buffers are 8k) is skipped and reported, so
    that a file without newlines cannot fill the memory; a truncated or corrupt gzip ends the file
    with a problem. Runs of blank lines are counted a buffer at a time and given to ``blank`` (first
    line, count), never yielded: a small gzip that expands to gigabytes of newlines takes seconds, not
    hours. A gzip file that expands more than ``MAX_GZIP_RATIO`` times beyond its first
    ``GZIP_RATIO_FREE`` bytes is a bomb, not a log: it is reported and the rest of it skipped.
    """
    number = 0
    report_blank = blank or (lambda first, count: problem(first, blank_reason(count)))
    run = 0  # blank lines counted but not yet reported: a run spans many buffers

    def flush() -> None:
        nonlocal run
        if run:
            report_blank(number - run + 1, run)
            run = 0

    try:
        with _open(path) as handle:
            readline, peek, read = handle.readline, handle.peek, handle.read  # type: ignore[attr-defined]
            bomb = _bomb_check(handle)
            while head := peek(MAX_LINE_BYTES):
                if head[0] in _BLANK:
                    spaces = len(head) - len(head.lstrip(_BLANK_CHARS))
                    cut = head.rfind(b"\n", 0, spaces) + 1
                    if cut:
                        count = head.count(b"\n", 0, cut)
                        number += count
                        run += count
                        read(cut)
                        if bomb():
                            flush()
                            problem(number + 1, _BOMB_REASON)
                            return
                        continue
                flush()
                line = readline(MAX_LINE_BYTES)
                number += 1
                if len(line) == MAX_LINE_BYTES and not line.endswith(b"\n"):
                    while (rest := readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                        pass
                    problem(number, f"line longer than {MAX_LINE_BYTES} bytes, skipped")
                    continue
                if not number & 0xFFFF and bomb():
                    problem(number + 1, _BOMB_REASON)
                    return
                yield number, line
            flush()
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        flush()
        problem(number + 1, f"gzip stream ends or breaks here ({exc})")
    except OSError as exc:
        flush()
        problem(number + 1, f"read error: {exc.strerror or exc}")


_BLANK_CHARS = b" \t\r\n"
_BLANK = frozenset(_BLANK_CHARS)
_BOMB_REASON = (f"gzip expands more than {MAX_GZIP_RATIO} times its size: a decompression bomb, not a log; "
                "rest of the file skipped")


def blank_reason(count: int) -> str:
    return "empty line" if count == 1 else f"{count} empty lines from here"


def _bomb_check(handle: BinaryIO | gzip.GzipFile) -> Callable[[], bool]:
    """Whether a gzip stream has expanded beyond ``MAX_GZIP_RATIO`` (always False for a plain file)."""
    raw = getattr(handle, "fileobj", None) if isinstance(handle, gzip.GzipFile) else None
    if raw is None:
        return lambda: False

    def bomb() -> bool:
        out = handle.tell()
        return out > GZIP_RATIO_FREE and out > MAX_GZIP_RATIO * max(raw.tell(), 1)
    return bomb
