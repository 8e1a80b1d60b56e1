"""What a source file and a string in it may contain: the limits and the character policy.

One place for the rules of docs/authoring.md ("Characters, sizes and depth"), read by the strict loader
and the validator:

- a source is UTF-8 (a leading byte-order mark is dropped) of at most :data:`MAX_FILE_BYTES` bytes, with
  values nested at most :data:`MAX_DEPTH` levels deep;
- no control character is written raw, except the line feed (and the carriage return of a CRLF pair): no
  tab, no NUL, no C1 control (U+0085 included), no U+2028/U+2029 line or paragraph separator, no bidi
  control (U+200E/F, U+202A-E, U+2066-9), no U+FEFF inside the text, no noncharacter U+FFFE/U+FFFF;
- a string value obeys the same rule whatever its escapes (``"\\u2028"`` is refused too); free text may hold
  line feeds, a key never; every string is in Unicode NFC form (refused, never silently normalised, so
  the served bytes are the bytes written).
"""

from __future__ import annotations

import re
import unicodedata

from generator.base.errors import Location, Problem

MAX_FILE_BYTES = 8 * 1024 * 1024
MAX_DEPTH = 32
SHOWN_CHARACTERS = 60  # a value longer than this is cut in messages

# Refused anywhere in the raw text (the line feed, and CR only as part of CRLF, are allowed).
_REFUSED = ("\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
            "\ufeff\ufffe\uffff")
_RAW = re.compile(f"[{_REFUSED}]|\r(?!\n)")
_VALUE = re.compile(f"[{_REFUSED}\r\ud800-\udfff]")
_ESCAPE = re.compile(f"[{_REFUSED}\r\n\ud800-\udfff]")
_NAMES = {"\t": "TAB", "\r": "CARRIAGE RETURN", "\n": "LINE FEED", "\x00": "NUL", "\x85": "NEXT LINE (NEL)",
          "\x7f": "DELETE"}


def describe(char: str) -> str:
    """``U+2028 LINE SEPARATOR ('\\u2028')``: a character named so that it can be found in an editor."""
    name = _NAMES.get(char) or unicodedata.name(char, "control character")
    return f"U+{ord(char):04X} {name} ({char!r})"


def cut(value: object, limit: int = SHOWN_CHARACTERS) -> str:
    """``repr(value)``, cut after ``limit`` characters (a 1 MiB value is not echoed in full)."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]!r}… ({len(value)} characters)"
    shown = repr(value)
    return shown if len(shown) <= limit + 2 else f"{shown[:limit]}… ({len(shown)} characters)"


def escaped(text: str) -> str:
    """``text`` with every refused character (and the line feed) escaped, so a message stays one line."""
    return _ESCAPE.sub(lambda found: repr(found.group())[1:-1], text)


def line_column(text: str, index: int) -> tuple[int, int]:
    """1-based line and column of ``text[index]``, counting lines as an editor does (at line feeds)."""
    return text.count("\n", 0, index) + 1, index - text.rfind("\n", 0, index)


def decode_source(data: str | bytes, source_name: str) -> str | Problem:
    """The text of a source, or the located problem that keeps it from being UTF-8."""
    if isinstance(data, str):
        return data.removeprefix("\ufeff")
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return Problem(Location(source_name, 1, 1), "", "the file is UTF-16 (or UTF-32): save it as UTF-8")
    body = data.removeprefix(b"\xef\xbb\xbf")
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = body[:exc.start].decode("utf-8")
        line, column = line_column(before, len(before))
        bad = body[exc.start:exc.end]
        hint = ""
        if len(bad) == 1 and bad[0] >= 0xA0:
            hint = f" (in Latin-1 it would be {bad.decode('latin-1')!r}: the file is probably Latin-1)"
        shown = "".join(f"\\x{byte:02x}" for byte in bad)
        return Problem(Location(source_name, line, column), "", f"not valid UTF-8: byte(s) {shown} {exc.reason}"
                       f"{hint}; save the file as UTF-8")


def raw_problem(text: str, source_name: str) -> Problem | None:
    """The first character the text may not hold raw, located, or None."""
    found = _RAW.search(text)
    if found is None:
        return None
    line, column = line_column(text, found.start())
    char = found.group()
    advice = "use spaces" if char == "\t" else ("save the file with LF or CRLF line endings" if char == "\r"
                                                 else "remove it (it is invisible or breaks lines)")
    return Problem(Location(source_name, line, column), "", f"character {describe(char)} is not allowed in a "
                   f"source: {advice}")


def bad_text(value: str) -> str | None:
    """Why a string value breaks the character policy (escapes included), or None."""
    found = _VALUE.search(value)
    if found is None:
        return None
    return f"character {describe(found.group())} is not allowed in a value (docs/authoring.md, Characters)"


def bad_key(key: str) -> str | None:
    """Why a mapping key breaks the policy: a key is a name, so not even a line feed."""
    if "\n" in key:
        return f"character {describe(chr(10))} is not allowed in a key"
    found = bad_text(key)
    return found.replace("in a value", "in a key") if found else None


def is_nfc(value: str) -> bool:
    return value.isascii() or unicodedata.is_normalized("NFC", value)
