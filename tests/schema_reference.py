"""The Python ``jsonschema`` library as the reference implementation that ``jsonschema_rs`` is checked against.

Validation runs through ``jsonschema_rs``; the tests compare it, schema by schema and record by record, with
the library that worded the messages before, on the very schemas validation applies (common definitions
inlined, patterns control-free). Python's ``re`` and the Rust engine agree on them: each is anchored with ``^``
and carries a lookahead refusing a line feed, so Python's ``$`` before a final line feed never matters.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from referencing import Registry, Resource

from generator.documents.schemas import checked_by_id, checked_schema


@cache
def reference_validator(name: str, folder: Path | None = None) -> Draft202012Validator:
    documents = checked_by_id(folder).items()
    registry = Registry().with_resources((uri, Resource.from_contents(doc)) for uri, doc in documents)
    return Draft202012Validator(checked_schema(name, folder), registry=registry)


def reference_errors(name: str, data: Any, folder: Path | None = None) -> list[tuple[tuple[str | int, ...], str]]:
    """``(path, message)`` of every error the library finds, sorted (``folder``: the track's schemas)."""
    found = reference_validator(name, folder).iter_errors(data)
    return sorted(((tuple(e.absolute_path), e.message) for e in found), key=repr)
