"""The JSON Schemas (Draft 2020-12) of the sources.

The engine's own schemas (``common``, ``systeme``, ``absents``, ``track``) are package data in
``generator/schemas/``; a track's schemas (its collections, its corpus file, its référentiel, statements,
key and submissions, and the published shapes of its season files) live in its folder,
``tracks/<piste>/schemas/``. ``folder`` names
that folder; a name it does not hold is looked up among the engine's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from generator.compiler.fastschema import compile_schema, strict_patterns


def schema_text(name: str, folder: Path | None = None) -> str:
    if folder is not None and (folder / f"{name}.schema.json").is_file():
        return (folder / f"{name}.schema.json").read_text("utf-8")
    return resources.files("generator").joinpath("schemas", f"{name}.schema.json").read_text("utf-8")


@cache
def schema(name: str, folder: Path | None = None) -> dict[str, Any]:
    return json.loads(schema_text(name, folder))


@cache
def _registry() -> Registry:
    common = schema("common")
    return Registry().with_resource(common["$id"], Resource.from_contents(common))


_COMMON_REF = "urn:proveit-corpus:common#/$defs/"


def _inline_common(node: Any, defs: dict[str, Any]) -> Any:
    """``node`` with each ``$ref`` to a common definition replaced by the definition itself.

    Validation then never resolves a reference: on a 10,000-entity corpus, resolving ``$ref`` through
    ``referencing`` was half of the schema-validation time. The definitions are not recursive, so
    inlining terminates. Keywords written beside a ``$ref`` still apply: they are merged in, or kept
    apart under ``allOf`` when they would override a keyword of the definition. Errors are unchanged.
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
def _checked_schema(name: str, folder: Path | None = None) -> dict[str, Any]:
    """The schema as validation applies it: common definitions inlined, patterns whole-string.

    Every pattern goes through :func:`generator.compiler.fastschema.strict_pattern` here, once for all schema
    files, so a ``$`` written in any of them never lets a trailing line feed through.
    """
    return strict_patterns(_inline_common(schema(name, folder), schema("common")["$defs"]))


@cache
def validator(name: str, folder: Path | None = None) -> Draft202012Validator:
    """A validator for one source kind, common definitions inlined (other references use a local registry)."""
    return Draft202012Validator(_checked_schema(name, folder), registry=_registry())


@cache
def quick_check(name: str, folder: Path | None = None) -> Callable[[Any], bool] | None:
    """A fast predicate that accepts only what :func:`validator` accepts (None: use the validator)."""
    return compile_schema(_checked_schema(name, folder))


def served_fields(name: str, folder: Path | None = None) -> tuple[str, ...]:
    """Fields of a record kind in served order: the schema's property order, minus source-only ones."""
    properties = schema(name, folder)["properties"]
    return tuple(key for key, spec in properties.items() if not spec.get("x-source-only"))
