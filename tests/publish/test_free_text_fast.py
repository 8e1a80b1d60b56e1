"""The clean document's shortcut of ``published_document`` (issue 43) against the walk it skips: the same
published bytes for any JSON document, control characters, escapes and odd keys included."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from generator.base.jsonvalue import indented_json
from generator.publish.free_text import _clean, _published, published_document

# text drawn mostly from what a participant writes, with every kind of character the publication drops
ALPHABET = st.sampled_from(["a", "é", " ", "\\", "u", "0", "r", "b", "f", "\n", "\t", "\r", "\x00", "\x1f",
                            "\x7f", "\x85", "\u202e", "\u2066", "\u200f", "\u2028", "\ufeff", "\uffff", "\ud800",
                            '"', "😀"])
TEXT = st.text(ALPHABET, max_size=12)
LEAF = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | TEXT
DOCUMENTS = st.recursive(LEAF, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                         | st.dictionaries(TEXT, inner, max_size=4), max_leaves=20)


def _bytes(document: Any) -> bytes:
    try:
        return indented_json(document)
    except (ValueError, TypeError, UnicodeError) as exc:
        return repr(type(exc)).encode()


@settings(max_examples=600, deadline=None)
@given(DOCUMENTS)
def test_the_shortcut_publishes_what_the_walk_publishes(document: Any) -> None:
    assert _bytes(published_document(document)) == _bytes(_published(document))


def test_the_shortcut_is_taken_for_a_clean_document_and_never_for_a_dirty_one() -> None:
    clean = {"recit": "Ligne 1\n\tLigne 2 — « é »", "n": [1, 2.5, None, True]}
    assert _clean(clean) and published_document(clean) is clean
    for dirty in ("\x00", "\r", "\x85", "\u202e", "\ufeff", "\ud800"):
        document = {"recit": f"avant{dirty}après"}
        assert not _clean(document)
        assert "retirés à la publication" in published_document(document)["recit"]
    assert not _clean({"cle\u202e": 1}) and not _clean({1: "a"})
