"""The JSON Schemas (Draft 2020-12) of the sources, kept as files in ``generator/schemas/``."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

SCHEMA_NAMES = (
    "corpus", "referentiel", "systeme", "absents", "entites", "agrements", "attestations", "avenants",
    "beneficiaires", "listes-agrees", "mesures-restrictives",
)


def schema_text(name: str) -> str:
    return resources.files("generator").joinpath("schemas", f"{name}.schema.json").read_text("utf-8")


@cache
def schema(name: str) -> dict[str, Any]:
    return json.loads(schema_text(name))


@cache
def _registry() -> Registry:
    common = schema("common")
    return Registry().with_resource(common["$id"], Resource.from_contents(common))


@cache
def validator(name: str) -> Draft202012Validator:
    """A validator for one source kind; the shared definitions resolve through a local registry."""
    return Draft202012Validator(schema(name), registry=_registry())


def served_fields(name: str) -> tuple[str, ...]:
    """Fields of a record kind in served order: the schema's property order, minus source-only ones."""
    properties = schema(name)["properties"]
    return tuple(key for key, spec in properties.items() if not spec.get("x-source-only"))
