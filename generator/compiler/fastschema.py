"""A yes/no schema check for the common case (a valid record), about ten times faster than jsonschema.

``jsonschema`` builds a validator object for every subschema it descends into; on a 10,000-entity corpus
(a few hundred thousand subschema visits) that was most of ``corpus check``. Nearly every record is
valid, so :func:`compile_schema` turns a schema into a plain predicate for the subset of Draft 2020-12
keywords the source schemas use. The validator calls jsonschema only when the predicate says "invalid",
so every message still comes from jsonschema, unchanged.

Patterns have whole-string semantics here and in jsonschema alike: :func:`strict_patterns` rewrites each
schema ``pattern`` before either sees it, because Python's ``$`` also matches before a final line feed
(``"2021-02-30\n"`` would match ``^[0-9]{4}-[0-9]{2}-[0-9]{2}$``), and because a value constrained by a
pattern is never free text, so it may not hold a control character at all.

Safety rule: the predicate must never accept what jsonschema rejects. A schema using any keyword this
module does not implement compiles to ``None`` and is always checked by jsonschema; a predicate that is
stricter than jsonschema only costs time. ``tests/test_schemas.py`` compares both on many mutated records.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

Predicate = Callable[[Any], bool]

_ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description", "$comment", "examples", "default",
                "x-source-only"}
_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
    "boolean": lambda v: isinstance(v, bool),
    # JSON Schema's integer is a number with no fractional part; ``True`` is a Python int but a JSON boolean.
    # ``1.0`` is an integer to jsonschema and not here: stricter only costs a jsonschema run.
    "integer": lambda v: type(v) is int,
}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


# A pattern-constrained value (an id, a date, a path, a key) holds no control or line-breaking character.
_NO_CONTROL = r"(?![\s\S]*[\x00-\x1f\x7f-\x9f\u2028\u2029])"
_ORIGINAL: dict[str, str] = {}


def strict_pattern(pattern: str) -> str:
    """``pattern`` with every ``$`` meaning the end of the string, and no control character allowed.

    An unescaped ``$`` outside a character class becomes ``\\Z``; a pattern anchored with ``^`` gets a
    lookahead refusing control characters anywhere in the value. Idempotent; :func:`written_pattern` gives
    back the pattern as the schema file spells it, for messages.
    """
    if pattern in _ORIGINAL:
        return pattern
    out, escaped, in_class = [], False, False
    for char in pattern:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            out.append("\\Z")
            continue
        out.append(char)
    body = "".join(out)
    strict = f"\\A{_NO_CONTROL}{body[1:]}" if body.startswith("^") else body
    _ORIGINAL[strict] = pattern
    return strict


def written_pattern(pattern: str) -> str:
    """The pattern as written in the schema file (the inverse of :func:`strict_pattern`)."""
    return _ORIGINAL.get(pattern, pattern)


def strict_patterns(schema: Any) -> Any:
    """A copy of ``schema`` with every ``pattern`` keyword passed through :func:`strict_pattern`."""
    if isinstance(schema, list):
        return [strict_patterns(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {key: strict_patterns(value) for key, value in schema.items()}
    if isinstance(out.get("pattern"), str):
        out["pattern"] = strict_pattern(out["pattern"])
    return out


class Unsupported(Exception):
    """The schema uses something this module does not implement: leave it to jsonschema."""


def compile_schema(schema: Any) -> Predicate | None:
    """A predicate equivalent to (or stricter than) ``Draft202012Validator(schema).is_valid``, or None."""
    try:
        return _compile(schema)
    except Unsupported:
        return None


def _scalar_set(values: list[Any]) -> frozenset[str]:
    if not all(isinstance(v, str) for v in values):
        raise Unsupported("enum/const of non-strings")  # JSON equality of numbers and booleans differs
    return frozenset(values)


def _compile(schema: Any) -> Predicate:
    if schema is True or schema == {}:
        return lambda v: True
    if schema is False:
        return lambda v: False
    if not isinstance(schema, dict):
        raise Unsupported(repr(schema))
    unknown = set(schema) - _ANNOTATIONS - {
        "type", "enum", "const", "pattern", "minLength", "maxLength", "minimum", "required", "properties",
        "additionalProperties", "items", "minItems", "minProperties", "propertyNames", "oneOf", "anyOf", "allOf"}
    if unknown:
        raise Unsupported(", ".join(sorted(unknown)))
    checks: list[Predicate] = []
    type_test: Predicate | None = None
    only: str | None = None  # the single type the schema requires, if any: folded into the checks below
    if "type" in schema:
        names = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if any(name not in _TYPES for name in names):
            raise Unsupported(f"type {names}")
        tests = [_TYPES[name] for name in names]
        type_test = tests[0] if len(tests) == 1 else (lambda v: any(t(v) for t in tests))
        only = names[0] if len(names) == 1 else None
    if "enum" in schema:
        allowed = _scalar_set(list(schema["enum"]))
        checks.append(lambda v: isinstance(v, str) and v in allowed)
        type_test = None if only == "string" else type_test  # the enum check already requires a string
    if "const" in schema:
        const = schema["const"]
        if isinstance(const, bool) or const is None:
            checks.append(lambda v: v is const)
        else:
            expected = _scalar_set([const])
            checks.append(lambda v: isinstance(v, str) and v in expected)

    # strings
    # jsonschema calls re.search; the pattern is made whole-string here too, whoever compiled the schema
    search = re.compile(strict_pattern(schema["pattern"])).search if "pattern" in schema else None
    min_length = schema.get("minLength", 0)
    max_length = schema.get("maxLength")
    if search is not None or min_length or max_length is not None:
        strict = only == "string"

        def check_string(v: Any) -> bool:
            if not isinstance(v, str):
                return not strict
            return (search is None or search(v) is not None) and len(v) >= min_length \
                and (max_length is None or len(v) <= max_length)
        checks.append(check_string)
        type_test = None if strict else type_test

    # numbers (jsonschema ignores minimum on a non-number, a boolean included)
    if "minimum" in schema:
        minimum = schema["minimum"]
        checks.append(lambda v: not _is_number(v) or v >= minimum)

    # objects
    required = tuple(schema.get("required", ()))
    properties = {key: _compile(sub) for key, sub in schema.get("properties", {}).items()}
    extra: Predicate | None = None
    if "additionalProperties" in schema:
        extra = _compile(schema["additionalProperties"])
    names_test: Predicate | None = _compile(schema["propertyNames"]) if "propertyNames" in schema else None
    min_properties = schema.get("minProperties", 0)
    if required or properties or extra is not None or names_test is not None or min_properties:
        strict_object = only == "object"

        def check_object(v: Any) -> bool:
            if not isinstance(v, dict):
                return not strict_object
            if len(v) < min_properties:
                return False
            for key in required:
                if key not in v:
                    return False
            for key, inner in v.items():
                test = properties.get(key)
                if test is not None:
                    if not test(inner):
                        return False
                elif extra is not None and not extra(inner):
                    return False
                if names_test is not None and not names_test(key):
                    return False
            return True
        checks.append(check_object)
        type_test = None if strict_object else type_test

    # arrays
    items = _compile(schema["items"]) if "items" in schema else None
    min_items = schema.get("minItems", 0)
    if items is not None or min_items:
        strict_array = only == "array"

        def check_array(v: Any) -> bool:
            if not isinstance(v, list):
                return not strict_array
            if len(v) < min_items:
                return False
            if items is not None:
                for inner in v:
                    if not items(inner):
                        return False
            return True
        checks.append(check_array)
        type_test = None if strict_array else type_test

    # combinators
    if "allOf" in schema:
        subs = [_compile(sub) for sub in schema["allOf"]]
        checks.append(lambda v: all(s(v) for s in subs))
    if "anyOf" in schema:
        subs_any = [_compile(sub) for sub in schema["anyOf"]]
        checks.append(lambda v: any(s(v) for s in subs_any))
    if "oneOf" in schema:
        subs_one = [_compile(sub) for sub in schema["oneOf"]]
        checks.append(lambda v: sum(1 for s in subs_one if s(v)) == 1)

    if type_test is not None:
        checks.insert(0, type_test)
    return _all(checks)


def _all(checks: list[Predicate]) -> Predicate:
    """One predicate for several: the cheap cases without a loop (this runs for every value checked)."""
    if not checks:
        return lambda v: True
    if len(checks) == 1:
        return checks[0]
    if len(checks) == 2:
        first, second = checks
        return lambda v: first(v) and second(v)

    def every(v: Any) -> bool:
        for check in checks:  # noqa: SIM110 - a plain loop: all() over a generator costs more here
            if not check(v):
                return False
        return True
    return every
