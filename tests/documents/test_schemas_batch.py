"""The records of one schema are first checked together (issue 43, :func:`all_valid`): the problems are those
of checking each record alone, on a valid corpus (none), on the corpus of every error, and on records of a
schema that one of them breaks."""

from __future__ import annotations

from pathlib import Path

from corpusfix import copy_fixture
from trackfix import CONFORMITE

from generator.compiler.sources import load_sources
from generator.documents.records import Record
from generator.documents.schema_checks import check_schema, check_schemas
from generator.documents.schemas import all_valid


def every_record(src: Path) -> list[Record]:
    sources = load_sources(src, CONFORMITE)
    singles = [r for r in (sources.corpus, sources.referentiel, sources.systeme, sources.absents) if r is not None]
    return singles + [r for records in sources.records.values() for r in records]


def test_together_or_one_by_one_the_problems_are_the_same(tmp_path: Path) -> None:
    for name in ("valid", "errors"):
        records = every_record(copy_fixture(tmp_path / name, name))
        alone = [problem for record in records for problem in check_schema(record)]
        assert sorted(check_schemas(records)) == sorted(alone)
        assert bool(alone) == (name == "errors")


def test_all_valid_says_whether_each_value_conforms() -> None:
    assert all_valid("absents", [{"absents": []}, {"absents": []}])
    assert not all_valid("absents", [{"absents": []}, {"absents": "x"}])
    assert not all_valid("absents", [{"absents": [{"chemin": "\ud800", "motif": "m"}]}])  # no crash
    assert all_valid("absents", [])
