"""The build's shortcuts to the proxy's hashes write what ``canonical_json`` writes (issue 43): the request of
``GET url`` from a fixed template, and a served body's canonical JSON by orjson with every character beyond
ASCII and DEL escaped as ``json.dumps`` escapes them."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.contract.hashing import canonical_bytes, canonical_json, request_hash, sha256_hex

texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=()), max_size=12) | st.sampled_from(
    ["é", "\x7f", "\x00", "\u2028", "😀", "\ud800", '"\\', "Société Hélène — n° 3"])
bodies = st.recursive(st.one_of(st.none(), st.booleans(), texts),
                      lambda inner: st.one_of(st.lists(inner, max_size=4),
                                              st.dictionaries(texts, inner, max_size=4)), max_leaves=20)


@settings(max_examples=600, deadline=None)
@given(bodies)
def test_a_body_s_canonical_bytes_are_canonical_json_s(body: Any) -> None:
    assert canonical_bytes(body) == canonical_json(body).encode("utf-8")


@settings(max_examples=400, deadline=None)
@given(texts)
def test_the_request_of_a_url_hashes_as_canonical_json_writes_it(url: str) -> None:
    request = {"target": url, "method": "GET", "payload": {}, "amount": 0.0, "currency": "eur"}
    assert request_hash(url) == sha256_hex(canonical_json(request).encode("utf-8"))


def test_runs_escaped_once_are_looked_up_alike() -> None:
    """Each short run of characters beyond ASCII is escaped once, then looked up: the second body of the same
    runs is written as the first, and a long run (not kept) as json.dumps writes it."""
    body = {"a": "Société Hélène — n° 3 😀", "é": ["é", "Ωμέγα" * 5, "e\u0301"]}
    for _ in range(3):
        assert canonical_bytes(body) == canonical_json(body).encode("utf-8")
