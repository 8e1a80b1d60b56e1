"""The accepted values of ``X-Challenge-Secret``: where they come from, what they may look like.

The secret is the only thing that keeps participants from reading the corpus without the proxy (spec
§2.2, §2.3), so it must never reach git, ``build/``, ``manifest/``, a log or an answer. It is read at
render time from a file that only its owner can read, kept outside the repository, or from an
environment variable, and written only into the rendered nginx include (mode 0600). Several values may
be accepted at once so that a rotation never locks the proxy out.
"""

from __future__ import annotations

import errno
import os
import re
import secrets as _random
import stat
from collections.abc import Iterable
from pathlib import Path

from generator.base.atomic_file import FileWriteError, write_atomic
from generator.base.bounded_read import ReadRefused, read_bounded
from generator.base.errors import GeneratorError, unreadable_text

MIN_LENGTH = 16
MAX_LENGTH = 512
# base64, base64url, hex and UUID alphabets: nothing that nginx's config parser, PCRE or a shell would
# read as syntax, no whitespace (nginx trims it from header values) and no quote.
SECRET_SHAPE = re.compile(rf"[A-Za-z0-9._~+/=-]{{{MIN_LENGTH},{MAX_LENGTH}}}")
# A secrets file holds a few lines of at most MAX_LENGTH characters: anything larger is not one, and is
# refused before it is read (a 300 MB file would otherwise be read and scanned only to word the error).
MAX_FILE_BYTES = 64 * 1024
# A folder of the checkout where private runtime files may live: ignored by git (see .gitignore).
PRIVATE_RUN_DIR = "run"


class SecretError(GeneratorError, ValueError):
    """The secret source is unusable; the message says why without ever quoting a secret."""


def check_shape(value: str, where: str) -> str:
    """Return ``value`` if it is a well-formed secret, else raise naming ``where`` (never the value)."""
    if not SECRET_SHAPE.fullmatch(value):
        raise SecretError(
            f"{where}: a secret is {MIN_LENGTH} to {MAX_LENGTH} characters among A-Z a-z 0-9 - . _ ~ + / = "
            f"(this one has {len(value)} characters{_bad_chars_hint(value)})")
    return value


_BAD_CHAR = re.compile(r"[^A-Za-z0-9._~+/=-]")


def _bad_chars_hint(value: str) -> str:
    """The first character outside the alphabet, by code point: one linear scan, whatever the length."""
    bad = _BAD_CHAR.search(value)
    return f", including U+{ord(bad.group()):04X}" if bad else ""


def parse_secrets(text: str, where: str) -> list[str]:
    """One secret per line; blank lines and lines starting with ``#`` are ignored; duplicates dropped."""
    found: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        value = line.strip()
        if not value or value.startswith("#"):
            continue
        check_shape(value, f"{where}:{number}")
        if value not in found:
            found.append(value)
    if not found:
        raise SecretError(f"{where}: no secret found (one per line, '#' starts a comment)")
    return found


def _inside(path: Path, folder: Path) -> bool:
    try:
        path.relative_to(folder)
    except ValueError:
        return False
    return True


def check_location(path: Path, repo_root: Path | None) -> None:
    """Refuse a secret file inside the checkout, except under its git-ignored ``run/`` folder."""
    if repo_root is None:
        return
    real = path.resolve()
    root = repo_root.resolve()
    if _inside(real, root) and not _inside(real, root / PRIVATE_RUN_DIR):
        raise SecretError(f"{path}: a secret file must live outside the repository ({root}), or under its "
                          f"git-ignored {PRIVATE_RUN_DIR}/ folder, so that it can never be committed")


def read_secret_file(path: Path, repo_root: Path | None = None) -> list[str]:
    """Read the accepted secrets from ``path``: a regular file only its owner can read (mode 0600 or 0400).

    Read by the one bounded reader (a FIFO is refused without waiting, a device or a folder by name, the
    mode checked on the open file before a byte is read); every refusal says what to do.
    """
    check_location(path, repo_root)

    def private(info: os.stat_result) -> None:
        if info.st_mode & 0o077:
            raise SecretError(f"{path}: mode {stat.S_IMODE(info.st_mode):04o} lets others read the secret; "
                              f"run: chmod 600 {path}")

    try:
        data = read_bounded(path, MAX_FILE_BYTES, check=private)
    except FileNotFoundError as exc:
        raise SecretError(unreadable_text(path, exc, _FIX) if path.is_symlink()
                          else f"{path}: secret file not found; {_FIX}") from None
    except ReadRefused as exc:
        if exc.errno == errno.EFBIG:
            raise SecretError(f"{path}: larger than {MAX_FILE_BYTES // 1024} KiB, not a secrets file") from None
        raise SecretError(unreadable_text(path, exc, _FIX)) from None
    except OSError as exc:
        raise SecretError(unreadable_text(path, exc, _FIX)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:  # the error holds the bytes around the fault: a piece of a secret, never shown
        raise SecretError(f"{path}: not UTF-8 text") from None
    return parse_secrets(text, str(path))


_FIX = "write the accepted secrets there, one per line, in a regular file of mode 0600 (--secret-file)"


def read_secret_env(name: str, environ: dict[str, str] | None = None) -> list[str]:
    """Read the accepted secrets from an environment variable: values separated by whitespace or commas."""
    env = os.environ if environ is None else environ
    raw = env.get(name)
    if raw is None:
        raise SecretError(f"${name} is not set")
    values = [v for v in re.split(r"[\s,]+", raw) if v]
    if not values:
        raise SecretError(f"${name} is empty")
    for index, value in enumerate(values, start=1):
        check_shape(value, f"${name} (value {index})")
    return list(dict.fromkeys(values))


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` with mode 0600 from the first byte (never briefly world-readable)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FileWriteError(exc.errno, exc.strerror or str(exc), os.fspath(path.parent)) from None
    write_atomic(path, text, mode=0o600)


def new_secret() -> str:
    """A fresh development secret: 32 random bytes, base64url (43 characters)."""
    return check_shape(_random.token_urlsafe(32), "generated secret")


def nginx_map_entries(values: Iterable[str]) -> list[str]:
    """One ``map`` line per accepted secret, matching the whole header value, case included.

    nginx compares plain ``map`` keys case-insensitively, so each secret becomes an anchored,
    case-sensitive regular expression. The shape check guarantees that ``re.escape`` output means the
    same thing to PCRE and survives nginx's quoted-string parsing (no quote, no backslash in the value).
    """
    lines = []
    for value in values:
        check_shape(value, "secret")
        lines.append(f'"~^{re.escape(value)}$" 1;')
    return lines
