"""The fast reader of participants' JSON (orjson, issue 43) gives exactly what the strict reader gives: the
same value, of the same types, and the same defects or the same error, on any text; the files it cannot vouch
for (a key twice, a number beyond a float, an integer beyond 64 bits, a lone surrogate, deep nesting, an
escaped quote) go to the strict reader."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.base import strict_json


def _outcome(read: Any, text: str | bytes) -> tuple[str, Any]:
    try:
        value, defects = read(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return "error", (type(exc).__name__, str(exc))
    return "value", (_typed(value), defects)


def _typed(value: Any) -> Any:
    """``value`` with each scalar's type beside it: 1 and 1.0 and True stay apart."""
    if isinstance(value, dict):
        return ("object", [(k, _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("array", [_typed(v) for v in value])
    return (type(value).__name__, repr(value))


def _strict(text: str | bytes) -> tuple[Any, list[str]]:
    return strict_json.strict_loads(text.decode("utf-8") if isinstance(text, bytes) else text)


def same(text: str | bytes) -> None:
    assert _outcome(strict_json.loads, text) == _outcome(_strict, text), text


CASES = ['{"a":1,"a":2}', '{"a" :1,"a":2}', '{"a"\n:1,"a":2}', '{"a\\":":1}', '{"a":"\\":","a":1}',
         '{"a":1e400}', '[-1e400]', '1e400', '["\\ud800"]', '{"\\udc00":1}', '12345678901234567890123',
         '-9223372036854775809', '18446744073709551615', '9.3e18', '-9.3e18', '{"a":[1,{"b":2,"b":3}]}',
         '[' * 99 + ']' * 99, '[' * 101 + ']' * 101, '{"a":' * 120 + '1' + '}' * 120, '[' * 2000 + ']' * 2000,
         '{"x": 0.5, "y": -0.0, "z": "é", "w": 1E2, "v": -0, "u": 1e-400}', 'NaN', '[Infinity]', '"\\u0000"',
         '{"\\u0061":1,"a":2}', '{"a":1, "\\u0061":2}', '\ufeff{}', '{}\x00', '[1,]', '01', '', ' ', '"\x01"',
         '{"a":"\\ud83d\\ude00"}', '"\ud800"', '{"a": {"b": {"a": 1, "b": 2}}, "b": [{"": 0}, {"": 1}]}']


@pytest.mark.parametrize("text", CASES)
def test_the_cases_each_reader_is_built_for(text: str) -> None:
    same(text)
    if "\ud800" not in text:
        same(text.encode("utf-8"))


def test_bytes_that_are_not_utf8_are_refused_as_before() -> None:
    same(b'{"a": "\xff"}')
    with pytest.raises(UnicodeDecodeError):
        strict_json.loads(b'{"a": "\xff"}')


scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
                    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=8))
keys = st.sampled_from(["a", "b", "c", "é", 'q"', "a\\", "", "\u2028", "k:", '":'])
values = st.recursive(scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                      st.dictionaries(keys, inner, max_size=4)), max_leaves=20)


def _with_duplicate(text: str, rng: random.Random) -> str:
    """``text`` with one of its keys written twice (a ``"a": `` copied after an object's opening brace)."""
    found = [i for i in range(len(text)) if text.startswith('{"', i)]
    if not found:
        return text
    at = rng.choice(found)
    end = text.find('":', at + 2)
    return text if end < 0 else text[:at + 1] + text[at + 1:end + 2] + " 0, " + text[at + 1:]


@settings(max_examples=600, deadline=None)
@given(values, st.sampled_from([None, 0, 1, 2]), st.sampled_from([(",", ":"), (", ", ": "), (",", " : ")]),
       st.booleans(), st.integers(0, 10**6))
def test_any_text_reads_alike(value: Any, indent: int | None, separators: tuple[str, str], ascii_only: bool,
                              seed: int) -> None:
    text = json.dumps(value, indent=indent, separators=separators, ensure_ascii=ascii_only)
    same(text)
    same(_with_duplicate(text, random.Random(seed)))


@pytest.mark.parametrize("text", ['{"a":1,"a":2}', '{"a" :1,"a":2}', '{"a"\n:1, "a":2}', '{"a":{"b":1,"b":[2]}}',
                                  '[{"x":"y"},{"x":"y","x":"y"}]', '{"a":1,"b":{},"a":"s"}', '{"a":"\\"","b":1}'])
def test_a_key_written_twice_or_an_escaped_quote_is_never_vouched_for(text: str) -> None:
    assert strict_json.fast_loads(text) is None
    assert strict_json.fast_loads(text.encode()) is None


@pytest.mark.parametrize("separators", [(",", ":"), (", ", ": "), (",", " : "), (" ,\n", "\t:\r\n")])
def test_the_fast_reader_vouches_for_ordinary_texts_however_spaced(separators: tuple[str, str]) -> None:
    value = {"proof_id": "prf_1", "hashes": {"chain": "sha256:" + "ab" * 32}, "n": [1, 2.5, None, True, {"": ""}],
             "k:": "did:key:z", "é": ["\u2028", {"a": {"b": "c"}}]}
    text = json.dumps(value, separators=separators, ensure_ascii=False)
    assert strict_json.fast_loads(text) == (value,)
    assert strict_json.fast_loads(text.encode()) == (value,)


@settings(max_examples=300, deadline=None)
@given(values, st.integers(0, 10**6))
def test_a_duplicated_key_is_never_vouched_for(value: Any, seed: int) -> None:
    text = json.dumps(value)
    spoiled = _with_duplicate(text, random.Random(seed))
    if spoiled == text or '\\"' in text:  # no object, or a key holding a quote (the copy may not be JSON)
        return
    assert strict_json.fast_loads(spoiled) is None
    assert strict_json.loads(spoiled)[1]  # the strict reader names it
