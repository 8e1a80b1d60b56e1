"""The source schemas are valid JSON Schema Draft 2020-12 documents, and every one of them is used."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from generator.schemas import SCHEMA_NAMES, schema, served_fields, validator

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "generator" / "schemas"
FILES = sorted(SCHEMA_DIR.glob("*.schema.json"))


def test_schema_files_exist() -> None:
    assert len(FILES) >= len(SCHEMA_NAMES) + 1  # + common


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_schema_is_valid_draft_2020_12(path: Path) -> None:
    document = json.loads(path.read_text("utf-8"))
    assert document["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert document["$id"] == f"urn:proveit-corpus:{path.name.removesuffix('.schema.json')}"
    Draft202012Validator.check_schema(document)


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_compiler_schemas_resolve(name: str) -> None:
    """Every $ref resolves (through the local registry): validating anything must not raise."""
    list(validator(name).iter_errors({}))
    assert (SCHEMA_DIR / f"{name}.schema.json").exists()


def test_collection_schemas_are_closed() -> None:
    """A misspelt field is an error, not a silently served extra: collection schemas forbid extra keys."""
    for name in ("entites", "agrements", "attestations", "avenants", "beneficiaires", "listes-agrees",
                 "mesures-restrictives", "absents", "corpus"):
        assert schema(name)["additionalProperties"] is False, name


def test_source_only_fields_are_not_served() -> None:
    assert "id" not in served_fields("agrements")
    assert "incoherence_voulue" not in served_fields("avenants")
    assert served_fields("avenants")[:2] == ("attestation", "objet")
