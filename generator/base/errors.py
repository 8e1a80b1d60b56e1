"""Typed problems, so every error names file, line, column and field, and all are reported at once."""

from __future__ import annotations

import dataclasses
import errno
import os
import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from generator.base.bounded_read import ReadRefused, read_bounded


class Severity(Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Location:
    """Where a value was written: a path relative to the source root, 1-based line and column."""

    file: str
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.line:
            return f"{self.file}:{self.line}:{self.column}"
        return self.file


@dataclass(frozen=True, order=True)
class Problem:
    """One finding of the loader or the validator."""

    location: Location
    field: str
    message: str
    severity: Severity = dataclasses.field(default=Severity.ERROR, compare=False)  # `field` is a field here

    def __str__(self) -> str:
        prefix = "" if self.severity is Severity.ERROR else "warning: "
        where = f" {self.field}:" if self.field else ""
        return f"{prefix}{self.location}:{where} {self.message}"


class GeneratorError(Exception):
    """Base of every error the project raises on purpose: the CLI prints its message and exits 1.

    Anything else reaching the CLI is a bug, and keeps its traceback.
    """


class CorpusError(GeneratorError):
    """Raised when the sources cannot be compiled; carries every problem found, sorted by place unless
    ``keep_order`` says the caller's order already reads best (a file's own syntax error before its
    consequences in other files)."""

    def __init__(self, problems: list[Problem], *, keep_order: bool = False) -> None:
        self.problems = list(problems) if keep_order else sorted(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class FrozenMismatch(GeneratorError):
    """Raised when a build would change a byte of a frozen season."""


class FreezeRecordError(GeneratorError):
    """``freeze/record.json`` or the salt file cannot be used (not JSON, a key missing, a wrong type)."""


class ManifestError(GeneratorError):
    """``manifest/`` is missing, unreadable, malformed, or disagrees with ``build/``."""


class TreeWriteError(GeneratorError):
    """Writing a tree failed (disk full, read-only file system, permissions); nothing was swapped in."""


class ServingError(GeneratorError):
    """A build cannot be served safely; each job of serving has its family below, the message says what to fix."""


class RenderError(ServingError):
    """nginx's configuration or a systemd unit cannot be rendered from this build and these settings, or
    ``nginx -t`` refuses what was rendered."""


class DeployError(ServingError):
    """A release cannot be proven, packed, installed or switched to, or a rendered prefix not maintained."""


class ServeError(ServingError):
    """nginx cannot be started, kept up, reloaded or stopped, or a local topology cannot be formed."""


class TlsError(ServingError):
    """A certificate, key or CA cannot do the job its role gives it."""


class BuildLocked(GeneratorError):
    """Another build holds the lock and the caller asked not to wait."""



def read_file(path: Path, error: type[GeneratorError], missing: str, *, limit: int, fix: str = "",
              refused: type[GeneratorError] | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them; any failure becomes ``error``.

    Read by :func:`generator.base.bounded_read.read_bounded`: a FIFO, a device or a folder is ``FILE: not a
    regular file (a FIFO)``, a larger file ``FILE: larger than N MiB`` (``missing``: what to say if absent;
    ``fix``: what to do about any other failure, appended after ``; ``; ``refused``: the error for a file
    that is there but no regular file or too large, when a caller tells it from an absent one). The
    wording is :func:`unreadable_text`'s, which the readers that open a file themselves share.
    """
    try:
        return read_bounded(path, limit)
    except FileNotFoundError as exc:
        if os.path.islink(path):
            raise error(unreadable_text(path, exc, fix)) from None
        raise error(f"{shown_path(path)}: {missing}") from None
    except ReadRefused as exc:
        raise (refused or error)(unreadable_text(path, exc, fix)) from None
    except OSError as exc:
        raise error(unreadable_text(path, exc, fix)) from None


def unreadable_text(path: Path | str, exc: OSError, fix: str = "") -> str:
    """One line for a file that cannot be read: which file, why in words (a dangling link, a FIFO, the mode
    that forbids it), then ``fix``. Never the errno's number or a traceback."""
    if isinstance(exc, ReadRefused):
        reason = exc.strerror
    elif isinstance(exc, FileNotFoundError) and os.path.islink(path):
        reason = f"a symbolic link to {shown_path(os.readlink(path))}, which does not exist (a dangling link)"
    elif isinstance(exc, FileNotFoundError):
        reason = "no such file"
    elif isinstance(exc, PermissionError):
        reason = f"cannot read: permission denied{_mode_text(path)}"
    elif exc.errno == errno.ELOOP and _loops(path):
        reason = "cannot read: a symbolic link loop (links that lead back to themselves)"
    elif exc.errno == errno.ELOOP:
        reason = "a symbolic link, which is not followed here"
    else:
        reason = f"cannot read: {exc.strerror or type(exc).__name__}"
    return f"{shown_path(path)}: {reason}" + (f"; {fix}" if fix else "")


SHOWN_PATH = 200  # a longer path is cut in the middle in messages (its end names the file)
_BREAKING = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def shown_path(path: Path | str | bytes) -> str:
    """A path (or a name, a value) as a message shows it: on one line (a name holding a line feed or another
    control character is quoted, the character escaped), and at most :data:`SHOWN_PATH` characters."""
    text = _name(path)
    if _BREAKING.search(text):
        text = "'" + _BREAKING.sub(lambda found: repr(found.group())[1:-1], text) + "'"
    if len(text) > SHOWN_PATH:
        text = f"{text[:SHOWN_PATH - 61]}…{text[-60:]} ({len(text)} characters)"
    return text


def _loops(path: Path | str) -> bool:
    """Whether following ``path`` goes round in circles (ELOOP), rather than meeting one refused link."""
    try:
        os.stat(path)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False


def _mode_text(path: Path | str) -> str:
    try:
        info = os.stat(path)
    except OSError:
        return ""
    return f" (mode {info.st_mode & 0o7777:04o}, owner uid {info.st_uid}, this process uid {os.geteuid()})"


def os_error_text(exc: OSError) -> str:
    """``FILE: reason`` (``FILE -> OTHER: reason`` for a rename) from an OSError that escaped the command."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.filename is None:
        return reason
    where = shown_path(exc.filename)
    if exc.filename2 is not None:
        where += f" -> {shown_path(exc.filename2)}"
    return f"{where}: {reason}"


def _name(filename: object) -> str:
    return os.fsdecode(filename) if isinstance(filename, bytes) else str(filename)
