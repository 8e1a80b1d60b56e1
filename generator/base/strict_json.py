"""Participants' JSON read strictly: what ``json.loads`` silently resolves is named as a defect instead.

Python's parser keeps the last of two equal keys (``{"verdict": "conforme", "verdict": "non_conforme"}``
would score as non_conforme), turns ``1e400`` into infinity (the report would then hold a bare
``Infinity``, which is not JSON) and accepts a lone surrogate ``"\\ud800"`` (no UTF-8 text holds it; the
table print would crash on it). Each is reported with the JSON Pointer of its place.

Most files have none of these, and a season's close reads hundreds of thousands of them (issue 43), so a
file is first read by ``orjson`` (C, several times faster than the pure-Python walk below). Its value is
kept only when it is provably the one the strict reader gives with no defect: orjson refuses a lone
surrogate, a number beyond a float and ``NaN`` itself; it turns an integer beyond 64 bits into a float, so
any float that large goes to the strict reader; it keeps the last of two equal keys, so the strings of the
value are counted and compared with the quotes of the text (a key written twice makes the text hold more:
see :func:`_no_key_twice`); and a value nested deeper than :data:`FAST_DEPTH` goes to the strict reader, whose
recursion limit decides as before. Anything else, and every file with a defect, is read by the strict
reader, which names each defect exactly as it always did.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson

from generator.base.errors import shown_path
from generator.base.jsonvalue import JsonValue, token


class _Pairs(dict[str, object]):
    """An object as parsed, remembering the keys written more than once (first value kept)."""

    repeated: list[str]


class _NonFinite:
    """A number too large for a float (``1e400``), kept as written until its place is known."""

    def __init__(self, text: str) -> None:
        self.text = text


def _pairs(pairs: list[tuple[str, object]]) -> _Pairs:
    obj = _Pairs()
    obj.repeated = []
    for key, value in pairs:
        if key in obj:
            obj.repeated.append(key)
        else:
            obj[key] = value
    return obj


def _float(text: str) -> float | _NonFinite:
    value = float(text)
    return value if math.isfinite(value) else _NonFinite(text)


def _constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _tok(key: str) -> str:
    """A pointer token that prints whatever the key holds (a lone surrogate is written ``\\udxxx``)."""
    return token(key.encode("utf-8", "backslashreplace").decode("utf-8"))


FAST_DEPTH = 100  # far below the strict reader's recursion limit: both readers accept anything this shallow
_WIDE_FLOAT = float(2**63)  # orjson's floats from here on may be integers it could not hold


class _Unsure(Exception):
    """The fast reader cannot vouch for the value: the strict reader decides."""


def _strings(value: Any) -> int:
    """How many strings ``value`` holds, its keys included; :class:`_Unsure` if it holds a float that may be an
    integer orjson could not hold, or is nested deeper than :data:`FAST_DEPTH`."""
    kind = type(value)
    if kind is dict or kind is list:
        return _strings_below(value, 0)
    if kind is float and not -_WIDE_FLOAT < value < _WIDE_FLOAT:
        raise _Unsure
    return 1 if kind is str else 0


def _strings_below(node: Any, depth: int) -> int:
    """:func:`_strings` of a dict or a list at ``depth`` (recursive: at most :data:`FAST_DEPTH` deep)."""
    if depth >= FAST_DEPTH:
        raise _Unsure
    if type(node) is dict:
        count, items = len(node), node.values()
    else:
        count, items = 0, node
    for item in items:
        kind = type(item)
        if kind is str:
            count += 1
        elif kind is dict or kind is list:
            count += _strings_below(item, depth + 1)
        elif kind is float and not -_WIDE_FLOAT < item < _WIDE_FLOAT:
            raise _Unsure
    return count


def _no_key_twice(text: str | bytes, strings: int) -> bool:
    """No key is written twice in ``text``, whose value (as parsed) holds ``strings`` strings, keys included.

    In JSON text a ``"`` is either one of the two quotes of a string written, or inside a string, escaped as
    ``\\"``: the text holds two quotes per string written, plus its escaped quotes. Every string of the value
    is one written (a key written twice keeps one of its two, and the value it loses may hold more), so the
    text holds at least twice the value's strings, and exactly that only when no string written was lost and
    none holds an escaped quote: no key written twice. Otherwise the strict reader decides. One count of one
    byte: the cheapest scan of the text there is (a season's close reads hundreds of thousands)."""
    return (text.count(b'"') if isinstance(text, bytes) else text.count('"')) == 2 * strings


def _fast_value(text: str | bytes) -> Any:
    """The value of ``text`` when orjson's is the strict reader's with no defect; :class:`_Unsure` otherwise."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        raise _Unsure from None
    if not _no_key_twice(text, _strings(value)):
        raise _Unsure
    return value


def fast_loads(text: str | bytes) -> tuple[JsonValue] | None:
    """``(value,)`` when the fast reader vouches for ``text`` (:func:`loads` would give that value and no
    defect), else None: a caller with its own fallback (a proof's whole check) uses it."""
    try:
        return (_fast_value(text),)
    except _Unsure:
        return None


def loads(text: str | bytes) -> tuple[JsonValue, list[str]]:
    """The parsed value and its defects (``POINTER: reason``, document order); ValueError if not JSON
    (UnicodeDecodeError for bytes that are not UTF-8).

    A non-finite number is replaced by None in the value: a value with defects is refused, never scored.
    """
    try:
        return _fast_value(text), []
    except _Unsure:
        return strict_loads(text.decode("utf-8") if isinstance(text, bytes) else text)


def strict_loads(text: str) -> tuple[JsonValue, list[str]]:
    """:func:`loads` by the strict reader alone: every defect found and named (the reference the fast reader
    is tested against)."""
    value = json.loads(text, object_pairs_hook=_pairs, parse_float=_float, parse_constant=_constant)
    defects: list[str] = []
    stack: list[tuple[Any, str, Any, Any]] = [(value, "", None, None)]  # node, pointer, parent, key in parent
    while stack:
        node, where, parent, slot = stack.pop()
        if isinstance(node, _NonFinite):
            defects.append(f"{where or '/'}: {node.text} is beyond the range of a JSON number "
                           "(a float overflows to infinity): write a finite number")
            if parent is not None:
                parent[slot] = None
            else:
                value = None
        elif isinstance(node, str):
            if _lone_surrogate(node):
                defects.append(f"{where or '/'}: a string holds a lone surrogate (\\ud800-\\udfff without its "
                               "pair): no UTF-8 text holds it; write the character itself")
        elif isinstance(node, dict):
            repeated = dict.fromkeys(getattr(node, "repeated", []))
            defects += [f"{shown_path(where or '/')}: the key {shown_path(json.dumps(key))} appears more than "
                        "once in this object: write each key once" for key in repeated]
            for key in node:
                if _lone_surrogate(key):
                    defects.append(f"{where}/{_tok(key)}: a key holds a lone surrogate (\\ud800-\\udfff "
                                   "without its pair): no UTF-8 text holds it")
            stack += [(item, f"{where}/{_tok(key)}", node, key) for key, item in reversed(node.items())]
        elif isinstance(node, list):
            stack += [(item, f"{where}/{index}", node, index) for index, item in reversed(list(enumerate(node)))]
    return value, defects


class NotJson(ValueError):
    """A file's bytes are no JSON document to use: empty, not UTF-8, not JSON, or JSON with a defect.

    ``reason`` is worded without the file; :meth:`text` puts the file (and the line and column of a parse
    error) in front, so that every reader of a JSON file words the same problem the same way.
    """

    def __init__(self, reason: str, line: int = 0, column: int = 0) -> None:
        super().__init__(reason)
        self.reason, self.line, self.column = reason, line, column

    def text(self, name: object) -> str:
        shown = shown_path(str(name))  # a file name holding a line feed stays on the message's one line
        where = f"{shown}:{self.line}:{self.column}" if self.line else shown
        return f"{where}: {self.reason}"


def document(data: bytes) -> Any:
    """The value of a JSON file's bytes, read strictly (:func:`loads`); :class:`NotJson` says why not.

    The one parser of the JSON files an operator, an author or the scorer reads back (settings.json, the
    season files, an anchor): the first defect is refused, never resolved silently.
    """
    if not data.strip():
        raise NotJson("empty")
    try:
        value, defects = loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise NotJson(f"not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise NotJson(f"not JSON: {exc.msg}", exc.lineno, exc.colno) from None
    except (ValueError, RecursionError) as exc:
        raise NotJson(f"not JSON: {exc or 'nested too deeply'}") from None
    if defects:
        raise NotJson(defects[0])
    return value
