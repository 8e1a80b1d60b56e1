"""The strict YAML loader: a value is a string unless written exactly ``true``, ``false`` or ``null``.

PyYAML's default (YAML 1.1) resolution would turn ``no`` into False, ``2026-03-31`` into a date and
``0755`` into 493; served byte for byte, any of these silently changes a season. These tests pin the
loader's behaviour on each such trap, and the errors it raises for what it refuses.
"""

from __future__ import annotations

import pytest
import yaml

from generator.base.errors import Location
from generator.documents import yamlstrict
from generator.documents.yamlstrict import LocatedDict, LocatedList, YamlProblem, load_text, location_of, position

# Written plain (unquoted), each of these would be typed by YAML 1.1 or 1.2 core resolution.
STAY_STRINGS = [
    "no", "No", "NO", "yes", "Yes", "on", "On", "off", "OFF", "y", "Y", "n", "N",
    "True", "TRUE", "False", "FALSE", "Null", "NULL", "~",
    "2026-03-31", "2026-03-31T10:00:00Z", "2026-02-30",
    "0755", "0o755", "0x1F", "0b101", "1e3", "1E3", "1.5", "-1.5", ".5", "1_000", "12", "-3", "+4", "0",
    ".inf", "-.inf", ".NaN", "12:30:00", "190:20:30",
    "=", "<<x",
]


@pytest.mark.parametrize("raw", STAY_STRINGS)
def test_plain_scalars_stay_strings(raw: str) -> None:
    data = load_text(f"value: {raw}\nlist: [{raw}]\n", "t.yaml")
    assert data["value"] == raw and type(data["value"]) is str
    assert data["list"] == [raw] and type(data["list"][0]) is str


def test_only_true_false_null_are_typed() -> None:
    data = load_text("a: true\nb: false\nc: null\nd: [true, false, null]\n", "t.yaml")
    assert data == {"a": True, "b": False, "c": None, "d": [True, False, None]}
    assert data["a"] is True and data["b"] is False and data["c"] is None


@pytest.mark.parametrize("raw", ['"true"', "'false'", '"null"', '"12"', "'2026-03-31'"])
def test_quoted_scalars_are_strings(raw: str) -> None:
    value = load_text(f"v: {raw}\n", "t.yaml")["v"]
    assert value == raw[1:-1] and type(value) is str


def test_empty_value_is_an_empty_string_not_null() -> None:
    """``key:`` with nothing after it is not ``null``: only the word null is (and schemas refuse "")."""
    assert load_text("v:\n", "t.yaml") == {"v": ""}


def test_block_scalars_and_unicode_are_kept() -> None:
    data = load_text("a: >-\n  Société\n  Mésange\nb: |\n  ligne 1\n  ligne 2\n".encode(), "t.yaml")
    assert data == {"a": "Société Mésange", "b": "ligne 1\nligne 2\n"}


def test_keys_are_strings_even_when_they_look_like_numbers() -> None:
    assert load_text('403: a\n"404": b\n2026-03-31: c\n', "t.yaml") == {"403": "a", "404": "b", "2026-03-31": "c"}


def test_empty_document_is_none() -> None:
    assert load_text("# only a comment\n", "t.yaml") is None


def test_positions_are_remembered() -> None:
    data = load_text("top:\n  a: x\n  items:\n    - one\n    - two\n", "t.yaml")
    assert isinstance(data, LocatedDict) and isinstance(data["top"]["items"], LocatedList)
    assert {key: position(mark) for key, mark in data["top"].marks.items()} == {"a": (2, 3), "items": (3, 3)}
    assert [position(mark) for mark in data["top"]["items"].marks] == [(4, 7), (5, 7)]
    assert position(data["top"].mark) == (2, 3) and position(data.mark) == (1, 1)
    assert location_of(data["top"], "items", "f.yaml") == Location("f.yaml", 3, 3)
    assert location_of(data["top"]["items"], 1, "f.yaml") == Location("f.yaml", 5, 7)
    assert location_of(data["top"], "missing", "f.yaml") == Location("f.yaml", 2, 3)  # falls back to the mapping


def test_uses_the_c_parser_when_available() -> None:
    """The 10,000-entity benchmark depends on libyaml; fail loudly if the fast path is lost."""
    if not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("PyYAML built without libyaml")
    assert yamlstrict._Parser is yaml.CBaseLoader


def _problem(text: str) -> str:
    with pytest.raises(YamlProblem) as info:
        load_text(text, "t.yaml")
    return str(info.value.problem)


def test_duplicate_key_is_an_error() -> None:
    assert _problem("a:\n  b: 1\n  c: 2\n  b: 3\n") == "t.yaml:4:3: a.b: duplicate key (first written at line 2)"


def test_duplicate_key_at_top_level() -> None:
    assert _problem("b: 1\nb: 1\n") == "t.yaml:2:1: b: duplicate key (first written at line 1)"


@pytest.mark.parametrize("tag", ["!!int", "!!float", "!!bool", "!!null", "!!str", "!!timestamp", "!!binary",
                                 "!custom", "!"])
def test_explicit_scalar_tags_are_refused(tag: str) -> None:
    """Even the non-specific ``!`` (YAML: "a string"; PyYAML: ``! true`` is a boolean) is refused."""
    assert _problem(f"l:\n  - ok\n  - {tag} 12\n") == (
        f"t.yaml:3:5: l[1]: explicit tag '{tag}' is not allowed: write the value without a tag (a plain string, "
        "or exactly true, false or null)")


@pytest.mark.parametrize(("text", "shown"), [("m: !!map {a: b}\n", "!!map"), ("m: !!seq [a]\n", "!!seq"),
                                             ("m: !!omap [a: b]\n", "!!omap"), ("m: !!set {a}\n", "!!set")])
def test_explicit_collection_tags_are_refused(text: str, shown: str) -> None:
    assert _problem(text).startswith(f"t.yaml:1:4: m: explicit tag '{shown}' is not allowed")


@pytest.mark.parametrize(("text", "said"), [
    ("!!str a: b\n", "t.yaml:1:1: a: explicit tag '!!str' is not allowed"),
    ("top:\n  !!int 12: b\n", "t.yaml:2:3: top.12: explicit tag '!!int' is not allowed"),
    ("l:\n  - &k a: b\n", "t.yaml:2:5: l[0].a: YAML anchors are not allowed (&k): write each value out"),
    ("{! x: y}\n", "t.yaml:1:2: x: explicit tag '!' is not allowed")])
def test_a_key_takes_no_tag_nor_anchor(text: str, said: str) -> None:
    """A key is a name: a tag or an anchor on it is refused as on a value (they were once let through)."""
    assert _problem(text).startswith(said)


def test_merge_key_is_refused() -> None:
    assert _problem("base: {x: 1}\nitem:\n  <<: x\n  y: 2\n") == (
        "t.yaml:3:3: item.<<: merge keys ('<<') are not allowed: write each field out")


def test_non_scalar_key_is_refused() -> None:
    assert _problem("? [a, b]\n: c\n") == "t.yaml:1:3: a mapping key must be a plain string"


def test_true_as_a_key_is_refused() -> None:
    """A key must be a string; ``true`` would be a boolean, so it is refused rather than stringified."""
    assert _problem("outer:\n  true: x\n") == "t.yaml:2:3: outer: a mapping key must be a plain string"


def test_syntax_error_names_the_position() -> None:
    assert _problem("a: [1, 2\nb: c\n") == (
        "t.yaml:2:2: YAML syntax: while parsing a flow sequence did not find expected ',' or ']'")


def test_tab_is_refused_where_written() -> None:
    assert _problem("a:\n\tb: c\n") == \
        "t.yaml:2:1: character U+0009 TAB ('\\t') is not allowed in a source: use spaces"


def test_several_documents_are_refused() -> None:
    assert _problem("a: b\n---\nc: d\n") == (
        "t.yaml:2:1: YAML syntax: expected a single document in the stream but found another document")


def test_anchors_and_aliases_are_refused() -> None:
    """Authors never need them, and an alias is how a 1 KB file expands to gigabytes."""
    assert _problem("a: &x Société\nb: c\n") == (
        "t.yaml:1:4: a: YAML anchors are not allowed (&x): write each value out")
    assert _problem("a: [x]\nb: *x\n") .startswith("t.yaml:2:4: b: YAML aliases are not allowed (*x)")


# --- bounded by construction, and the character policy ---------------------------------------------------------

def test_depth_limit_is_exact() -> None:
    """The top mapping is level 1: MAX_DEPTH levels load, one more is refused where it opens."""
    from generator.base.text_policy import MAX_DEPTH

    def nested(levels: int) -> str:  # the top mapping, then levels - 1 flow mappings
        return "a: " + "{a: " * (levels - 1) + "x" + "}" * (levels - 1) + "\n"

    data = load_text(nested(MAX_DEPTH), "t.yaml")
    for _ in range(MAX_DEPTH - 1):
        data = data["a"]
    assert data == {"a": "x"}
    assert _problem(nested(MAX_DEPTH + 1)) == (
        f"t.yaml:1:{4 + 4 * (MAX_DEPTH - 1)}: a.a.a…: nesting deeper than {MAX_DEPTH} levels is not allowed "
        f"(level {MAX_DEPTH + 1} opens here; the nesting starts at line 1, column 4)")


def test_a_hundred_thousand_open_brackets_are_a_message_not_a_crash() -> None:
    """Whichever limit answers first (libyaml's flow depth, or ours), the author gets a located line."""
    message = _problem("a: " + "[" * 100_000 + "\n")
    assert message.startswith("t.yaml:1:") and "nesting" in message
    block = "".join(" " * level + "- x:\n" for level in range(0, 2000, 2))  # block style, 1,000 levels
    assert "nesting" in _problem(block)


def test_size_limit() -> None:
    from generator.base.text_policy import MAX_FILE_BYTES

    assert load_text(b"# " + b"x" * (MAX_FILE_BYTES - 3) + b"\n", "t.yaml") is None  # exactly the limit
    assert _problem(b"# " + b"x" * (MAX_FILE_BYTES - 2) + b"\n").startswith("t.yaml: file larger than")


def test_bom_and_crlf_are_fine_a_lone_cr_is_not() -> None:
    assert load_text(b"\xef\xbb\xbfa: b\r\nc: d\r\n", "t.yaml") == {"a": "b", "c": "d"}
    assert _problem("a: b\rc: d\n") == ("t.yaml:1:5: character U+000D CARRIAGE RETURN ('\\r') is not allowed in "
                                        "a source: save the file with LF or CRLF line endings")


def test_positions_after_crlf_lines_are_editor_positions() -> None:
    assert _problem("a: b\r\nb: c\r\nb: d\r\n") == "t.yaml:3:1: b: duplicate key (first written at line 2)"


@pytest.mark.parametrize(("escape", "shown"), [("\\t", "U+0009 TAB ('\\t')"), ("\\0", "U+0000 NUL ('\\x00')"),
                                               ("\\x85", "U+0085 NEXT LINE (NEL) ('\\x85')"),
                                               ("\\u2029", "U+2029 PARAGRAPH SEPARATOR ('\\u2029')"),
                                               ("\\u200f", "U+200F RIGHT-TO-LEFT MARK ('\\u200f')")])
def test_escapes_cannot_bring_a_refused_character_in(escape: str, shown: str) -> None:
    assert _problem(f'v: "a{escape}b"\n') == (f"t.yaml:1:4: v: character {shown} is not allowed in a value "
                                              "(docs/authoring.md, Characters)")


def test_line_feeds_are_free_text_and_escapes_are_kept() -> None:
    assert load_text('a: "x\\ny"\nb: "\\u00e9\\x41"\nc: |\n  l1\n  l2\n', "t.yaml") == {
        "a": "x\ny", "b": "éA", "c": "l1\nl2\n"}


def test_nfc_is_required_of_values_and_keys() -> None:
    assert load_text("Société: Mésange\n", "t.yaml") == {"Société": "Mésange"}
    assert _problem("v: Me\u0301sange\n").startswith("t.yaml:1:4: v: text not in Unicode NFC form")
    assert _problem("cle\u0301: x\n") == "t.yaml:1:1: cle\u0301: key not in Unicode NFC form"


def test_the_characters_read_without_asking_the_policy_are_all_allowed() -> None:
    """The loader skips the policy's scan for a text of characters it lets through raw (issue 43): every one
    of them, asked one by one, is one the policy lets a source hold; a carriage return is always asked."""
    from generator.base.text_policy import raw_problem

    fast = yamlstrict._NOT_SURELY_ALLOWED
    skipped = [chr(code) for code in range(0x110000) if not 0xD800 <= code <= 0xDFFF
               and fast.search(chr(code)) is None]
    assert len(skipped) > 1_000_000 and "\r" not in skipped and "\t" not in skipped
    assert [char for char in skipped if raw_problem(f"a{char}b", "t.yaml") is not None] == []
