"""The date check's shortcuts (issue 43) find a false day exactly where the walk that names them does: a
mapping's value shaped like a date that is no real day, at any depth; never a string item of a list, never a
key. The first pass makes no field path; the loader notes a false day as it builds a document, and a record of
a file where it noted none is not looked at again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.base.errors import Problem
from generator.documents import schema_checks
from generator.documents.records import Record, read_record
from generator.documents.yamlstrict import load_noting_days

DAYS = ["2026-02-28", "2026-02-29", "2024-02-29", "2026-13-01", "2026-00-10", "2026-04-31", "0000-01-01",
        "9999-12-31", "2026-1-01", "2026-01-01 ", "2026/01/01", "AGR-100001", "２０２６-01-01", "x"]
values = st.recursive(st.sampled_from(DAYS) | st.none() | st.booleans(),
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(DAYS), inner,
                                                                                   max_size=4), max_leaves=16)


def walked(record: Record) -> list[Problem]:
    """The reference: the walk alone, over every value."""
    problems: list[Problem] = []
    schema_checks._check_dates_in(record, record.data, (), problems)
    return problems


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.sampled_from(DAYS), values, max_size=5))
def test_check_dates_says_what_the_walk_says(data: dict[str, Any]) -> None:
    record = Record("entites", data, "f.yaml", "entite")
    assert schema_checks.check_dates(record) == walked(record)


def test_a_false_day_deep_in_a_list_is_found() -> None:
    record = Record("entites", {"a": [{"b": [[{"du": "2026-02-30"}]]}], "c": ["2026-02-30"]}, "f.yaml")
    assert [p.field for p in schema_checks.check_dates(record)] == ["a[0].b[0][0].du"]


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.sampled_from(DAYS[:-2]), values, max_size=5), st.booleans())
def test_the_loader_notes_a_false_day_where_the_check_finds_one(data: dict[str, Any], flow: bool) -> None:
    text = yaml.safe_dump(data, default_flow_style=flow, allow_unicode=True)
    loaded, false_day = load_noting_days(text, "f.yaml")
    assert false_day == schema_checks._false_day_in(loaded), text
    record = Record("entites", loaded, "f.yaml", days_checked=not false_day)
    assert schema_checks.check_dates(record) == walked(record)


def test_a_record_read_from_a_file_says_whether_it_holds_a_false_day(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("du: 2026-02-28\nau: [2026-02-30]\n", "utf-8")
    (tmp_path / "b.yaml").write_text("du: 2026-02-28\nau: {fin: '2026-02-30'}\n", "utf-8")
    problems: list[Problem] = []
    first, second = (read_record(tmp_path, name, "x", problems) for name in ("a.yaml", "b.yaml"))
    assert first is not None and second is not None and not problems
    assert first.days_checked and not second.days_checked
    assert [p.field for p in schema_checks.check_dates(second)] == ["au.fin"]
