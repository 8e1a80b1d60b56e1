"""Strict JSON equality (spec §4: "égalité JSON stricte, type compris").

Two values are equal when they have the same JSON type (object, array, string, number, boolean, null)
and the same value: ``"1"`` is not ``1``, ``true`` is not ``"true"`` nor ``1``, ``null`` is not ``""``,
arrays compare in order, objects by key set. Numbers compare by mathematical value, as in JSON Schema's
``const`` (``1`` equals ``1.0``: JSON has one number type; the corpus serves no number anyway).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TypeAlias, cast

import orjson

# A JSON value as ``json.loads`` returns it, and an object of them: what crosses a boundary before it is read
# into a typed object (a dataclass or a TypedDict) or after it is written out of one.
JsonValue: TypeAlias = "bool | int | float | str | list[JsonValue] | dict[str, JsonValue] | None"
JsonObject: TypeAlias = "dict[str, JsonValue]"


def json_key(value: object) -> object:
    """A hashable form of ``value`` such that ``json_key(a) == json_key(b)`` iff a and b are JSON-equal."""
    if value is None:
        return ("null",)
    if isinstance(value, bool):  # before numbers: True == 1 in Python, never in JSON
        return ("boolean", value)
    if isinstance(value, str):
        return ("string", value)
    if isinstance(value, int | float):
        return ("number", value)  # 1 == 1.0 and hash(1) == hash(1.0)
    if isinstance(value, list):
        return ("array", tuple(json_key(item) for item in value))
    if isinstance(value, dict):
        return ("object", frozenset((key, json_key(item)) for key, item in value.items()))
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def json_equal(left: object, right: object) -> bool:
    return bool(json_key(left) == json_key(right))


def token(part: object) -> str:
    """One RFC 6901 reference token: ``~`` written ``~0``, ``/`` written ``~1``."""
    return str(part).replace("~", "~0").replace("/", "~1")


def pointer(parts: Iterable[object]) -> str:
    """The JSON Pointer of a path of keys and indexes; ``/`` for the whole document, as messages name it."""
    return "".join(f"/{token(part)}" for part in parts) or "/"


MAX_DEPTH = 64  # far beyond any corpus value; keeps every recursive step of the scorer bounded


def _depth_within(value: object, limit: int) -> bool:
    """``value`` is nested at most ``limit`` levels (no pointer is made: the common case, asked of every
    submission)."""
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(node, dict):
            stack += [(item, depth + 1) for item in node.values() if isinstance(item, dict | list)]
        elif isinstance(node, list):
            stack += [(item, depth + 1) for item in node if isinstance(item, dict | list)]
    return True


def too_deep(value: object, limit: int = MAX_DEPTH) -> str | None:
    """The JSON Pointer of the first place nested deeper than ``limit`` levels, or None (no recursion)."""
    if _depth_within(value, limit - 1):  # its scalars one level deeper still within the limit
        return None
    stack: list[tuple[object, str, int]] = [(value, "", 0)]
    while stack:
        node, where, depth = stack.pop()
        if depth > limit:
            return where
        if isinstance(node, dict):
            stack += [(item, f"{where}/{token(key)}", depth + 1)
                      for key, item in node.items()]
        elif isinstance(node, list):
            stack += [(item, f"{where}/{index}", depth + 1) for index, item in enumerate(node)]
    return None


_ORJSON_INDENTED = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE | orjson.OPT_PASSTHROUGH_DATACLASS \
    | orjson.OPT_PASSTHROUGH_DATETIME  # what json.dumps refuses, orjson must refuse too (then json.dumps says)


def _floats_written_alike(value: object) -> bool:
    """Every float of ``value`` is one that orjson writes as ``json.dumps`` does: finite (orjson writes NaN as
    null) and written without an exponent by Python (orjson writes ``1e-7``, Python ``1e-07``; ``0.00001``
    for ``1e-05``); the digits are the same shortest round trip otherwise. Any value other than a JSON one
    (str, int, float, bool, None, dict, list, tuple and their subclasses) is left to ``json.dumps`` too."""
    try:
        return _alike(value)
    except RecursionError:  # deeper than this walk goes: json.dumps decides
        return False


def _scalar_alike(node: object) -> bool:
    if isinstance(node, float):
        text = repr(node)
        return "e" not in text and "n" not in text  # no exponent, no inf, no nan
    return node is None or isinstance(node, str | int)


def _alike(node: object) -> bool:
    """:func:`_floats_written_alike` of one value (recursive; the exact types first: a report has thousands)."""
    kind = type(node)
    if kind is dict or (kind is not list and isinstance(node, dict)):
        items: Iterable[object] = cast(dict[str, object], node).values()
    elif kind is list or isinstance(node, list | tuple):
        items = cast(Iterable[object], node)
    else:
        return _scalar_alike(node)
    for item in items:
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if not (_alike(item) if kind is dict or kind is list else _scalar_alike(item) if kind is float
                else _alike(item)):
            return False
    return True


def indented_json(value: object) -> bytes:
    """A JSON document as the files the package writes hold it: indented by 2, UTF-8 (no ``\\u`` escapes of
    text), one newline at the end: ``json.dumps(value, indent=2, ensure_ascii=False)``'s bytes.

    Written by orjson (C) when its bytes are provably those: no float that either writes its own way, no type
    that either refuses or writes otherwise (a failure of orjson's, such as an integer beyond 64 bits or a
    nesting deeper than 254, goes to ``json.dumps`` too). A season's close writes thousands of reports; the
    pure-Python indenting encoder cost 5 ms each (issue 43)."""
    if _floats_written_alike(value):
        try:
            return orjson.dumps(value, option=_ORJSON_INDENTED)
        except TypeError:  # orjson.JSONEncodeError included
            pass
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
