"""The source schemas are valid Draft 2020-12 documents; jsonschema_rs agrees with jsonschema on them."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from schema_reference import reference_errors
from trackfix import CONFORMITE

from generator.documents.schemas import errors, schema, served_fields, validator

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_DIR = ROOT / "generator" / "schemas"  # the engine's; the track's are in CONFORMITE.schemas
TRACK_DIR = CONFORMITE.schemas
FILES = sorted([*SCHEMA_DIR.glob("*.schema.json"), *TRACK_DIR.glob("*.schema.json")])
# The schemas of the source files: the four fixed files and the track's collections.
SCHEMA_NAMES = ("corpus", "referentiel", "systeme", "absents", *(c.schema for c in CONFORMITE.collections))


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
    list(validator(name, TRACK_DIR).iter_errors({}))
    assert (SCHEMA_DIR / f"{name}.schema.json").exists() or (TRACK_DIR / f"{name}.schema.json").exists()


def test_collection_schemas_are_closed() -> None:
    """A misspelt field is an error, not a silently served extra: collection schemas forbid extra keys."""
    for name in ("entites", "agrements", "attestations", "avenants", "beneficiaires", "listes-agrees",
                 "mesures-restrictives", "absents", "corpus"):
        assert schema(name, TRACK_DIR)["additionalProperties"] is False, name


def test_source_only_fields_are_not_served() -> None:
    assert "id" not in served_fields("agrements", TRACK_DIR)
    assert "incoherence_voulue" not in served_fields("avenants", TRACK_DIR)
    assert served_fields("avenants", TRACK_DIR)[:2] == ("attestation", "objet")


# --- jsonschema_rs finds what jsonschema finds, worded the same (tests/schema_reference.py) ---------------

def _records(src: Path) -> list[tuple[str, Any]]:
    from generator.compiler.sources import load_sources

    sources = load_sources(src, CONFORMITE)
    singles = [r for r in (sources.corpus, sources.referentiel, sources.systeme, sources.absents) if r]
    return [(r.kind, r.data) for r in singles + [r for rs in sources.records.values() for r in rs]]


POOL: list[Any] = ["x", "", "2026-02-30", "/agrements/AGR-0001", "actif", "active", "complete", "1", "MR-0001",
                   True, False, None, [], ["a"], [{}], {}, {"a": "b"}, 12, 1.5]


def _mutate(value: Any, rng: random.Random) -> Any:
    """A copy of ``value`` with one random change somewhere: replaced, removed or added."""
    value = copy.deepcopy(value)
    containers = []

    def collect(node: Any) -> None:
        if isinstance(node, dict | list):
            containers.append(node)
            for inner in node.values() if isinstance(node, dict) else node:
                collect(inner)

    collect(value)
    if not containers:
        return rng.choice(POOL)
    node = rng.choice(containers)
    action = rng.random()
    if isinstance(node, dict):
        if node and action < 0.6:
            node[rng.choice(list(node))] = copy.deepcopy(rng.choice(POOL))
        elif node and action < 0.8:
            del node[rng.choice(list(node))]
        else:
            node[rng.choice(["extra", "id", "page", "entrees", "statut", "403"])] = copy.deepcopy(rng.choice(POOL))
    elif node and action < 0.7:
        node[rng.randrange(len(node))] = copy.deepcopy(rng.choice(POOL))
    elif node and action < 0.85:
        node.pop(rng.randrange(len(node)))
    else:
        node.append(copy.deepcopy(rng.choice(POOL)))
    return value


def _found(kind: str, data: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """``(path, message)`` of every error :func:`errors` gives, as the library would word it, sorted."""
    return sorted(((e.path, e.message) for e in errors(kind, data, TRACK_DIR)), key=repr)


def test_validator_accepts_the_real_records() -> None:
    from corpusfix import FIXTURES

    records = _records(FIXTURES / "valid" / "corpus_src") + _records(ROOT / "corpus_src" / "conformite")
    for kind, data in records:
        assert validator(kind, TRACK_DIR).is_valid(data)
        assert errors(kind, data, TRACK_DIR) == [] and reference_errors(kind, data, TRACK_DIR) == []


def test_validator_agrees_with_jsonschema_on_mutated_records() -> None:
    """Thousands of one-change mutations: the same verdict, the same errors at the same paths, the same words."""
    from corpusfix import FIXTURES

    rng = random.Random(20260331)
    records = _records(FIXTURES / "valid" / "corpus_src")
    disagreements, rejected = [], 0
    for _ in range(40):
        for kind, data in records:
            mutated = _mutate(data, rng)
            found, expected = _found(kind, mutated), reference_errors(kind, mutated, TRACK_DIR)
            rejected += bool(expected)
            if validator(kind, TRACK_DIR).is_valid(mutated) != (not expected) or found != expected:
                disagreements.append((kind, found, expected))
    assert rejected > 200  # the mutations do produce invalid records
    assert not disagreements, disagreements[:3]


def test_a_lone_surrogate_is_an_error_at_its_place_not_a_traceback() -> None:
    """JSON lets ``"\\ud800"`` through and the Rust engine cannot take it: the error names the string's place."""
    found = errors("corpus", {"corpus": "ok\ud800", "titre": "T", "activites": {"a-b": "x"}}, TRACK_DIR)
    assert [(e.path, e.keyword) for e in found] == [(("corpus",), "text")]
    assert "lone surrogate" in found[0].message
