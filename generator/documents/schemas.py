"""The JSON Schemas (Draft 2020-12) of the sources and their validation.

The engine's own schemas (``common``, ``systeme``, ``absents``, ``track``) are package data in
``generator/schemas/``; a track's schemas (its collections, its corpus file, its référentiel, statements,
key and submissions, and the published shapes of its season files) live in its folder,
``tracks/<piste>/schemas/``. ``folder`` names that folder; a name it does not hold is looked up among the
engine's.

Validation runs through ``jsonschema_rs`` (Rust): one validator per schema, every error of a value at once.
On a 10,000-entity corpus it checks the 90,000 records twice as fast as the hand-written predicates that
used to stand before the ``jsonschema`` library (``fastschema.py``), and an invalid record no longer needs a
second, slower pass to word its errors. :func:`errors` words each error as ``jsonschema`` (Python) did, so the
messages an author reads did not change.

Patterns have whole-string semantics: in the Rust engine, as in ECMA-262, ``$`` means the end of the value
(never "before a final line feed" as in Python's ``re``), and :func:`strict_pattern` adds to every pattern
anchored with ``^`` a lookahead refusing control characters, because a value constrained by a pattern (an
id, a date, a path, a key) is never free text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema_rs

from generator.base.jsonvalue import JsonObject

_SUFFIX = ".schema.json"


def _engine_names() -> list[str]:
    return sorted(entry.name.removesuffix(_SUFFIX) for entry in resources.files("generator").joinpath("schemas")
                  .iterdir() if entry.name.endswith(_SUFFIX))


def schema_names(folder: Path | None = None) -> tuple[str, ...]:
    """Every schema a validator may refer to: the engine's, and the track folder's (which take precedence)."""
    own = sorted(p.name.removesuffix(_SUFFIX) for p in folder.glob(f"*{_SUFFIX}")) if folder is not None else []
    return tuple(sorted({*_engine_names(), *own}))


def schema_text(name: str, folder: Path | None = None) -> str:
    if folder is not None and (folder / f"{name}{_SUFFIX}").is_file():
        return (folder / f"{name}{_SUFFIX}").read_text("utf-8")
    return resources.files("generator").joinpath("schemas", f"{name}{_SUFFIX}").read_text("utf-8")


@cache
def schema(name: str, folder: Path | None = None) -> dict[str, Any]:
    loaded: JsonObject = json.loads(schema_text(name, folder))  # every schema is a JSON object
    return loaded


# -- patterns ------------------------------------------------------------------------------------------------

# A pattern-constrained value (an id, a date, a path, a key) holds no control or line-breaking character.
_NO_CONTROL = r"(?![\s\S]*[\x00-\x1f\x7f-\x9f\u2028\u2029])"
_ORIGINAL: dict[str, str] = {}


def strict_pattern(pattern: str) -> str:
    """``pattern`` refusing any control character when it is anchored with ``^`` (the schemas' all are).

    ``$`` needs no rewriting: the Rust engine, like ECMA-262, matches it only at the end of the value.
    Idempotent; :func:`written_pattern` gives back the pattern as the schema file spells it, for messages.
    """
    if pattern in _ORIGINAL:
        return pattern
    strict = f"\\A{_NO_CONTROL}{pattern[1:]}" if pattern.startswith("^") else pattern
    _ORIGINAL[strict] = pattern
    return strict


def written_pattern(pattern: str) -> str:
    """The pattern as written in the schema file (the inverse of :func:`strict_pattern`)."""
    return _ORIGINAL.get(pattern, pattern)


def strict_patterns(node: Any) -> Any:
    """A copy of ``node`` with every ``pattern`` keyword passed through :func:`strict_pattern`."""
    if isinstance(node, list):
        return [strict_patterns(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: strict_patterns(value) for key, value in node.items()}
    if isinstance(out.get("pattern"), str):
        out["pattern"] = strict_pattern(out["pattern"])
    return out


# -- validators ----------------------------------------------------------------------------------------------

_COMMON_REF = "urn:proveit-corpus:common#/$defs/"


def _inline_common(node: Any, defs: JsonObject) -> Any:
    """``node`` with each ``$ref`` to a common definition replaced by the definition itself.

    Each error's subschema is then found in the record's own schema (:func:`errors` reads a ``oneOf``'s
    description there). The definitions are not recursive, so inlining terminates. Keywords written beside
    a ``$ref`` still apply: they are merged in, or kept apart under ``allOf`` when they would override a
    keyword of the definition. Errors are unchanged.
    """
    if isinstance(node, list):
        return [_inline_common(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _inline_common(value, defs) for key, value in node.items()}
    ref = out.get("$ref")
    if isinstance(ref, str) and ref.startswith(_COMMON_REF) and ref.removeprefix(_COMMON_REF) in defs:
        target = _inline_common(defs[ref.removeprefix(_COMMON_REF)], defs)
        siblings = {key: value for key, value in out.items() if key != "$ref"}
        clash = (siblings.keys() & target.keys()) - {"description", "title"}
        out = {"allOf": [target, siblings]} if clash else {**target, **siblings}
    return out


@cache
def checked_schema(name: str, folder: Path | None = None) -> dict[str, object]:
    """The schema as validation applies it: common definitions inlined, patterns whole-string and control-free."""
    checked: dict[str, object] = strict_patterns(_inline_common(schema(name, folder), schema("common")["$defs"]))
    return checked


@cache
def checked_by_id(folder: Path | None = None) -> dict[str, dict[str, object]]:
    """Every schema as validated (:func:`checked_schema`), by ``$id``: where an error's subschema is read."""
    return {schema(name, folder)["$id"]: checked_schema(name, folder) for name in schema_names(folder)}


@cache
def validator(name: str, folder: Path | None = None) -> jsonschema_rs.Validator:
    """A Draft 2020-12 validator for one schema; the schemas it refers to come from a local registry."""
    registry = jsonschema_rs.Registry(list(checked_by_id(folder).items()))
    return jsonschema_rs.Draft202012Validator(checked_schema(name, folder), registry=registry)


@cache
def _list_validator(name: str, folder: Path | None = None) -> jsonschema_rs.Validator:
    """A validator of a list whose every item must conform to schema ``name`` (by its ``$id``, from the same
    registry: the same checked schema as :func:`validator`'s)."""
    registry = jsonschema_rs.Registry(list(checked_by_id(folder).items()))
    return jsonschema_rs.Draft202012Validator({"type": "array", "items": {"$ref": schema(name, folder)["$id"]}},
                                              registry=registry)


def all_valid(name: str, values: list[object], folder: Path | None = None) -> bool:
    """Whether every value conforms to schema ``name``, in one call: for a record of a few fields, the call
    cost as much as the check (90,000 records at 10,000 entities). False when one does not, or when a value
    holds text the engine cannot take: :func:`errors` then says which and why, value by value."""
    try:
        return bool(_list_validator(name, folder).is_valid(values))
    except UnicodeEncodeError:
        return False


# -- errors, worded as the jsonschema library words them ------------------------------------------------------

@dataclass(frozen=True)
class SchemaError:
    """One schema error: where (``path``, a JSON path of keys and indexes), which keyword, and its message."""

    keyword: str  # "type", "enum", "pattern", "required", "additionalProperties", "oneOf", ...
    path: tuple[str | int, ...]
    instance: Any  # the failing value; for a ``propertyNames`` error, the key
    message: str
    schema: dict[str, object]  # the subschema holding the keyword
    detail: Any  # pattern: the pattern as written; required: the field; additionalProperties: the extra keys
    property_name: bool = False  # the error concerns a key of the mapping at ``path`` (propertyNames)


def _subschema(error: jsonschema_rs.ValidationError, root: dict[str, object],
               folder: Path | None) -> dict[str, object]:
    """The subschema holding the failing keyword, read at the error's absolute keyword location."""
    node: Any = root
    parts: list[str | int] = list(error.schema_path)
    location = error.absolute_keyword_location
    if location and "#" in location:
        uri, pointer = location.split("#", 1)
        node = checked_by_id(folder).get(uri, root)
        parts = [part.replace("~1", "/").replace("~0", "~") for part in pointer.split("/")[1:]]
    for part in parts[:-1]:  # the last part is the keyword (or, for a false subschema, its name)
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node if isinstance(node, dict) else {}


_Kind = jsonschema_rs.ValidationErrorKind  # one subclass per keyword, each with its own fields


def _word(keyword: str, error: jsonschema_rs.ValidationError, subschema: dict[str, Any]) -> str:
    """The message ``jsonschema`` (Python) gives for this error: messages did not change with the engine."""
    kind, instance = error.kind, error.instance
    if isinstance(kind, _Kind.Type):
        types = subschema.get("type", kind.types)  # the schema's order: the engine's may differ
        names = [types] if isinstance(types, str) else types
        return f"{instance!r} is not of type {', '.join(repr(t) for t in names)}"
    if isinstance(kind, _Kind.Enum):
        return f"{instance!r} is not one of {list(kind.options)!r}"
    if isinstance(kind, _Kind.Constant):
        return f"{kind.expected_value!r} was expected"
    if isinstance(kind, _Kind.Pattern):
        return f"{instance!r} does not match {kind.pattern!r}"
    if isinstance(kind, _Kind.Required):
        return f"{kind.property!r} is a required property"
    if isinstance(kind, _Kind.AdditionalProperties):
        extras = sorted(kind.unexpected, key=str)
        verb = "was" if len(extras) == 1 else "were"
        return f"Additional properties are not allowed ({', '.join(repr(e) for e in extras)} {verb} unexpected)"
    if isinstance(kind, _Kind.MinLength | _Kind.MinItems | _Kind.MinProperties):
        short = {"minLength": "is too short", "minItems": "is too short",
                 "minProperties": "does not have enough properties"}[keyword]
        return f"{instance!r} {'should be non-empty' if kind.limit == 1 else short}"
    if isinstance(kind, _Kind.MaxLength):
        return f"{instance!r} {'is expected to be empty' if kind.limit == 0 else 'is too long'}"
    if isinstance(kind, _Kind.Minimum):
        return f"{instance!r} is less than the minimum of {kind.limit!r}"
    if isinstance(kind, _Kind.OneOfMultipleValid):
        return f"{instance!r} is valid under more than one of the given schemas"
    if keyword in ("oneOf", "anyOf"):
        return f"{instance!r} is not valid under any of the given schemas"
    if keyword == "falseSchema":
        return f"False schema does not allow {instance!r}"
    return str(error.message)  # a keyword the schemas do not use today: the engine's own words


def _detail(kind: jsonschema_rs.ValidationErrorKind) -> object:
    """:attr:`SchemaError.detail` of an error of this kind (None for the kinds that carry none)."""
    if isinstance(kind, _Kind.Pattern):
        return written_pattern(kind.pattern)
    if isinstance(kind, _Kind.Required):
        return kind.property
    if isinstance(kind, _Kind.AdditionalProperties):
        return sorted(kind.unexpected, key=str)
    return None


def _path(data: object, parts: list[str | int]) -> tuple[str | int, ...]:
    """The error's instance path with each part as the data has it.

    ``jsonschema_rs`` gives a key made of digits (``408`` in ``systeme``) as an integer, as it gives an index:
    walking the data tells a key of a mapping from an index of a list."""
    out: list[str | int] = []
    node = data
    for part in parts:
        if isinstance(node, dict):
            part = part if part in node else str(part)
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
        else:
            node = None
        out.append(part)
    return tuple(out)


def _lone_surrogate(node: object, path: tuple[str | int, ...]) -> SchemaError:
    """The error naming the first string (value or key) of ``node`` that holds a lone surrogate."""
    stack: list[tuple[object, tuple[str | int, ...]]] = [(node, path)]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str) and not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return SchemaError("text", where, value, f"{value!r} holds a lone surrogate (not Unicode text)",
                                   {}, None)
        elif isinstance(value, dict):
            stack.extend((item, (*where, key)) for key, item in reversed(value.items()))
            stack.extend((key, where) for key in reversed(list(value)))
        elif isinstance(value, list):
            stack.extend((item, (*where, index)) for index, item in reversed(list(enumerate(value))))
    raise ValueError("no string holds a lone surrogate")  # not the engine's complaint, then: a bug here


def errors(name: str, data: object, folder: Path | None = None) -> list[SchemaError]:
    """Every error of ``data`` against schema ``name``, in the validator's order; empty when it conforms."""
    check = validator(name, folder)
    try:
        if check.is_valid(data):
            return []
        found = list(check.iter_errors(data))
    except UnicodeEncodeError:  # a string the engine cannot take (JSON lets "\ud800" through): say where
        return [_lone_surrogate(data, ())]
    out = []
    root = checked_schema(name, folder)
    for error in found:
        inner, property_name = error, False
        if isinstance(error.kind, _Kind.PropertyNames):  # the key itself fails: report the key's own error
            inner, property_name = error.kind.error, True
        keyword = inner.kind.name
        subschema = _subschema(inner, root, folder)
        out.append(SchemaError(keyword, _path(data, list(error.instance_path)), inner.instance,
                               _word(keyword, inner, subschema), subschema, _detail(inner.kind), property_name))
    return out


@cache
def served_fields(name: str, folder: Path | None = None) -> tuple[str, ...]:
    """Fields of a record kind in served order: the schema's property order, minus source-only ones (once per
    kind: the compiler asks it of every record)."""
    properties = schema(name, folder)["properties"]
    return tuple(key for key, spec in properties.items() if not spec.get("x-source-only"))
