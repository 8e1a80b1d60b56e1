"""The package's one JSON writer (``indented_json``) writes ``json.dumps(value, indent=2,
ensure_ascii=False)``'s bytes whoever writes them: orjson when it provably writes the same, json.dumps
otherwise (issue 43: a close writes thousands of reports)."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.base.jsonvalue import indented_json


def _reference(value: Any) -> bytes | str:
    try:
        return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        return type(exc).__name__


def _written(value: Any) -> bytes | str:
    try:
        return indented_json(value)
    except (TypeError, ValueError) as exc:
        return type(exc).__name__


class Level(enum.IntEnum):
    ONE = 1


@dataclass
class Thing:
    x: int


@pytest.mark.parametrize("value", [
    {"a": [], "b": {}, "c": [1, {}], "d": None, "e": True, "f": 0.0488, "g": "é\u2028\x01\"\\/\x7f"},
    [], {}, 1e-7, 1e-5, 0.0001, 1e16, 1e15, 123456789012345.0, float("nan"), float("inf"), -0.0, 10**30,
    -(2**63) - 1, 2**64 - 1, [[[]]], ("a", 1), {1: "int key"}, {"s": "\ud800"}, [Level.ONE], Thing(1),
    {"deep": [[[[[[[[[[]]]]]]]]]]}, [[]] * 3, {"x": [0.1, 2.5, 1e300, 5e-324]}, "plain", 3, None, True])
def test_each_case_is_written_as_json_dumps_writes_it(value: Any) -> None:
    assert _written(value) == _reference(value)


def test_deeper_than_orjson_goes_to_json_dumps() -> None:
    value: Any = []
    for _ in range(300):
        value = [value]
    assert _written(value) == _reference(value)


scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=10))
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(st.text(max_size=5), inner, max_size=4)),
                      max_leaves=25)


@settings(max_examples=800, deadline=None)
@given(values)
def test_any_value_is_written_alike(value: Any) -> None:
    assert _written(value) == _reference(value)
