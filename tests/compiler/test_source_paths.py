"""A record's canonical path is kept on it (the validator and the compiler ask it several times), and made
again when what it came from changes: the id, the track or the kind."""

from __future__ import annotations

from dataclasses import replace

from trackfix import CONFORMITE

from generator.compiler.source_paths import record_path
from generator.documents.records import Record


def test_the_path_is_kept_and_made_again_when_its_sources_change() -> None:
    record = Record("agrements", {"id": "AGR-0001"}, "entites/ENT-0001.yaml", "agrements[0]", "ENT-0001")
    first = record_path(record, CONFORMITE)
    assert first == "/agrements/AGR-0001" and record_path(record, CONFORMITE) is first
    record.data["id"] = "AGR-0002"
    assert record_path(record, CONFORMITE) == "/agrements/AGR-0002"
    record.kind = "attestations"
    assert record_path(record, CONFORMITE) == "/attestations/AGR-0002"
    other = replace(CONFORMITE, collections=tuple(
        replace(c, template=c.template.replace("/attestations/", "/att/")) for c in CONFORMITE.collections))
    assert record_path(record, other) == "/att/AGR-0002"
    record.data["id"] = 7
    assert record_path(record, other) is None
