"""The season files as the scorer reads them: the key's vocabulary, and the shape of ``season/cle.json`` and
``season/taches.json`` checked before a byte of them is used.

``TOUS`` and ``UN_CRITERE`` are the two values of the key's ``fonde_par``, defined once by the season code
that derives the key (:mod:`generator.season.founding`, a layer below) and named here for the scorer. The
published shapes are ``season-cle.schema.json`` and ``season-taches.schema.json``, which refer to the source
schemas (``cle``, ``taches``) part by part: a key or a statement file the scorer accepts is one the season
compiler could have written.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from generator.base.jsonvalue import pointer
from generator.compiler.fastschema import strict_patterns
from generator.compiler.schemas import schema
from generator.compiler.validate import schema_message
from generator.season.founding import TOUS as TOUS  # the scorer's names for them (explicit re-export)
from generator.season.founding import UN_CRITERE as UN_CRITERE

KEY_SCHEMA, TASKS_SCHEMA = "season-cle", "season-taches"
_REFERENCED = ("common", "cle", "taches")


@cache
def _validator(name: str) -> Draft202012Validator:
    """Draft 2020-12 with the referenced schemas in a local registry, patterns whole-string as everywhere."""
    registry = Registry().with_resources(
        (schema(ref)["$id"], Resource.from_contents(strict_patterns(schema(ref)))) for ref in _REFERENCED)
    return Draft202012Validator(strict_patterns(schema(name)), registry=registry)


def shape_problem(name: str, data: Any) -> str | None:
    """``<JSON Pointer>: <message>`` of the first error of ``data`` against schema ``name`` (in document order,
    with how many more), or None when it conforms."""
    errors = sorted(_validator(name).iter_errors(data), key=lambda e: [str(p) for p in e.absolute_path])
    if not errors:
        return None
    more = f" (and {len(errors) - 1} more error(s))" if len(errors) > 1 else ""
    return f"{pointer(errors[0].absolute_path)}: {schema_message(errors[0])}{more}"
