"""Write values into nginx configuration safely: quoted paths, regular expressions and literal bodies.

nginx's config parser unescapes only ``\\"``, ``\\'``, ``\\\\``, ``\\n``, ``\\r`` and ``\\t`` inside a quoted
string, and a ``return`` text is then read as a complex value where ``$`` starts a variable. A body
written through these functions reaches the client byte for byte; anything that could not is refused
at render time, never discovered by a participant's hash.
"""

from __future__ import annotations

import re

# nginx reads a configuration token into a 4096-byte buffer ("too long parameter" beyond).
MAX_TOKEN = 4000
# The variable that stands for a literal "$" inside a return text (defined by a geo block, whose
# values are never interpolated).
DOLLAR_VARIABLE = "corpus_dollar"

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


class NginxSyntaxError(ValueError):
    """A value cannot be written into the configuration without changing its meaning."""


def _escape(text: str) -> str:
    return "".join(_ESCAPES.get(char, char) for char in text)


def _check_token(token: str, what: str) -> str:
    if len(token.encode("utf-8")) > MAX_TOKEN:
        raise NginxSyntaxError(f"{what}: {len(token.encode())} bytes once escaped; nginx accepts at most "
                               f"{MAX_TOKEN} in one configuration token")
    return token


def quote_path(path: object) -> str:
    """A file or folder path as a quoted nginx string; ``$`` and control characters are refused.

    Most path directives (root, access_log, ssl_certificate...) expand variables, so a ``$`` in a path
    would silently point somewhere else.
    """
    text = str(path)
    if "$" in text or _CONTROL.search(text) or "\n" in text or "\r" in text or "\t" in text:
        raise NginxSyntaxError(f"{text!r}: a path written into nginx config cannot hold '$' or control "
                               "characters")
    return _check_token(f'"{_escape(text)}"', text)


def quote_regex(pattern: str) -> str:
    """An anchored, case-sensitive nginx regular expression (``"~^(?:...)$"``) for a map key."""
    if "$" in pattern or _CONTROL.search(pattern):
        raise NginxSyntaxError(f"{pattern!r}: pattern holds '$' or a control character")
    return _check_token(f'"~^(?:{_escape(pattern)})$"', pattern)


def quote_text(data: bytes, placeholder: str | None = None, variable: str | None = None) -> str:
    """A quoted ``return`` text that nginx sends back as exactly ``data``.

    If given, the single occurrence of ``placeholder`` in ``data`` becomes the nginx variable
    ``variable`` (e.g. the requested path in the absent template); every other ``$`` becomes
    ``${corpus_dollar}``.
    """
    text = data.decode("utf-8")
    if "\x00" in text:
        raise NginxSyntaxError("a body with a NUL byte cannot be written into nginx config")
    pieces = [text]
    if placeholder is not None:
        if variable is None or not re.fullmatch(r"[a-z_][a-z0-9_]*", variable):
            raise NginxSyntaxError(f"{variable!r} is not an nginx variable name")
        if text.count(placeholder) != 1:
            raise NginxSyntaxError(f"placeholder {placeholder!r} must occur exactly once in the body")
        pieces = text.split(placeholder)
    escaped = [_escape(piece).replace("$", "${" + DOLLAR_VARIABLE + "}") for piece in pieces]
    joined = ("${" + str(variable) + "}").join(escaped)
    return _check_token(f'"{joined}"', "return text")


def needs_dollar(data: bytes) -> bool:
    """Whether a literal body uses ``${corpus_dollar}`` once quoted (so the geo block must exist)."""
    return b"$" in data
