"""The date check's first pass (issue 43: an explicit stack that makes no field path) finds a problem exactly
where the walk that names them does: a mapping's value shaped like a date that is no real day, at any depth;
never a string item of a list, never a key."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.base.errors import Problem
from generator.documents import schema_checks
from generator.documents.records import Record

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
