"""A yes/no schema check for the common case (a valid record), about ten times faster than jsonschema.

``jsonschema`` builds a validator object for every subschema it descends into; on a 10,000-entity corpus
(a few hundred thousand subschema visits) that was most of ``corpus check``. Nearly every record is
valid, so :func:`compile_schema` turns a schema into a plain predicate for the subset of Draft 2020-12
keywords the source schemas use. The validator calls jsonschema only when the predicate says "invalid",
so every message still comes from jsonschema, unchanged.

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
}


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
        "type", "enum", "const", "pattern", "minLength", "required", "properties", "additionalProperties",
        "items", "minItems", "minProperties", "propertyNames", "oneOf", "anyOf", "allOf"}
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
    search = re.compile(schema["pattern"]).search if "pattern" in schema else None  # jsonschema: re.search
    min_length = schema.get("minLength", 0)
    if search is not None or min_length:
        strict = only == "string"

        def check_string(v: Any) -> bool:
            if not isinstance(v, str):
                return not strict
            return (search is None or search(v) is not None) and len(v) >= min_length
        checks.append(check_string)
        type_test = None if strict else type_test

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
