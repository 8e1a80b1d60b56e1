"""The source schemas are valid JSON Schema Draft 2020-12 documents; the fast check agrees with jsonschema."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from trackfix import CONFORMITE

from generator.compiler.schemas import quick_check, schema, served_fields, validator

ROOT = Path(__file__).resolve().parent.parent
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


# --- the fast yes/no check agrees with jsonschema (generator/compiler/fastschema.py) ---

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


def test_quick_check_compiles_for_the_source_schemas() -> None:
    for name in SCHEMA_NAMES:
        assert quick_check(name, TRACK_DIR) is not None, name  # else the fast path is silently lost


def test_quick_check_agrees_with_jsonschema_on_real_records() -> None:
    from corpusfix import FIXTURES

    records = _records(FIXTURES / "valid" / "corpus_src") + _records(ROOT / "corpus_src")
    for kind, data in records:
        assert quick_check(kind, TRACK_DIR)(data) is True
        assert validator(kind, TRACK_DIR).is_valid(data)


def test_quick_check_agrees_with_jsonschema_on_mutated_records() -> None:
    """Thousands of one-change mutations: the fast check must never accept what jsonschema rejects."""
    from corpusfix import FIXTURES

    rng = random.Random(20260331)
    records = _records(FIXTURES / "valid" / "corpus_src")
    disagreements, rejected = [], 0
    for _ in range(40):
        for kind, data in records:
            mutated = _mutate(data, rng)
            quick, full = quick_check(kind, TRACK_DIR)(mutated), validator(kind, TRACK_DIR).is_valid(mutated)
            rejected += not full
            if quick != full:
                disagreements.append((kind, quick, full, mutated))
    assert rejected > 200  # the mutations do produce invalid records
    assert not disagreements, disagreements[:3]
