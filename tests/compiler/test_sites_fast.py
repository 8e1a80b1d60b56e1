"""A link field of one level is read without the generator (issue 43): the same places, in the same order,
with the same names, as the general walk gives."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.compiler.validate import _sites, _walk

NAMES = ["a", "b", "a[]", "b[]", "", "[]"]
keys = st.sampled_from(["a", "b", ""])
values = st.recursive(st.none() | st.sampled_from(["/x/1", "", "a"]),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
                      max_leaves=8)


@settings(max_examples=400, deadline=None)
@given(values, st.sampled_from(NAMES))
def test_a_one_level_field_is_read_as_the_walk_reads_it(data: Any, field: str) -> None:
    assert list(_sites(data, field)) == list(_walk(data, [field], 0, ""))
