"""The strict loader's event loop (issue 43: its common events handled inline, the open containers kept in
locals) gives what a plain reading of PyYAML's own composed nodes gives: the same values of the same types, the
same position for every key, item and container, and a refusal exactly where the rules refuse (a key twice,
``true``/``false``/``null`` or ``<<`` unquoted as a key, a key that is no string, text not in NFC in a
non-ASCII file, a refused character brought in by an escape, a tag, an anchor or an alias, on a key as on a
value)."""

from __future__ import annotations

import json
import unicodedata
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.base.text_policy import bad_key, bad_text, raw_problem
from generator.documents.yamlstrict import LocatedDict, LocatedList, YamlProblem, load_text, position

WORDS = {"true": True, "false": False, "null": None}
PLAIN = ["a", "b", "x y", "é", "e\u0301", "Société", "true", "false", "null", "no", "1", "~", "<<", "2026-02-30"]
REFUSED = "refused"


def reference(text: str) -> Any:
    """The document as PyYAML's composer (libyaml) reads it, with the strict loader's rules applied by hand."""
    check_nfc = not text.isascii()
    if raw_problem(text, "t.yaml") is not None:  # a character refused raw, before any parsing
        return REFUSED
    try:
        root = yaml.compose(text, Loader=yaml.CBaseLoader)
        events = list(yaml.parse(text, Loader=yaml.CBaseLoader))
    except yaml.YAMLError:
        return REFUSED
    if any(getattr(event, "anchor", None) is not None or getattr(event, "tag", None) is not None
           for event in events):  # no tag, anchor nor alias, on a key as on a value
        return REFUSED
    try:
        return None if root is None else _node(root, check_nfc)
    except ValueError:
        return REFUSED


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def _node(node: yaml.Node, check_nfc: bool) -> Any:
    if isinstance(node, yaml.ScalarNode):
        value = node.value
        if node.style == "" and value in WORDS:
            return WORDS[value]
        if (node.style == '"' and bad_text(value)) or (check_nfc and not unicodedata.is_normalized("NFC", value)):
            raise ValueError(value)
        return value
    if isinstance(node, yaml.SequenceNode):
        return ("seq", _mark(node), [(_mark(item), _node(item, check_nfc)) for item in node.value])
    assert isinstance(node, yaml.MappingNode)
    items: list[tuple[str, tuple[int, int], Any]] = []
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode) or (key.style == "" and key.value in (*WORDS, "<<")) \
                or bad_key(key.value) or (check_nfc and not unicodedata.is_normalized("NFC", key.value)) \
                or key.value in (name for name, _, _ in items):
            raise ValueError(key)
        items.append((key.value, _mark(key), _node(value, check_nfc)))
    return ("map", _mark(node), items)


def strict(text: str) -> Any:
    """The strict loader's value, its marks read into the same shape as :func:`reference`'s."""
    try:
        return _shape(load_text(text, "t.yaml"))
    except YamlProblem:
        return REFUSED


def _shape(value: Any) -> Any:
    if isinstance(value, LocatedDict):
        assert list(value.marks) == list(value)
        return ("map", position(value.mark), [(key, position(value.marks[key]), _shape(inner))
                                              for key, inner in value.items()])
    if isinstance(value, LocatedList):
        assert len(value.marks) == len(value)
        return ("seq", position(value.mark), [(position(mark), _shape(inner))
                                              for mark, inner in zip(value.marks, value, strict=True)])
    assert value is None or isinstance(value, str | bool)
    return value


# -- documents: block and flow style, plain, single- and double-quoted scalars, keys repeated now and then ----

texts = st.sampled_from(PLAIN) | st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)),
                                         max_size=6)
STYLES = ["plain", "plain", "single", "double", "ascii", "tag", "anchor"]
scalars = st.tuples(st.sampled_from(STYLES), texts)
keys = st.tuples(st.sampled_from(STYLES), st.sampled_from([*PLAIN[:8], "true", "<<", "k"]))
trees = st.recursive(scalars, lambda inner: st.one_of(
    st.tuples(st.just("seq"), st.sampled_from(["block", "flow"]), st.lists(inner, max_size=4)),
    st.tuples(st.just("map"), st.sampled_from(["block", "flow"]), st.lists(st.tuples(keys, inner), max_size=4))),
    max_leaves=12)


def _scalar(style: str, text: str) -> str:
    if style == "plain" and text in PLAIN:
        return text
    if style == "single" and text in PLAIN:
        return f"'{text}'"
    if style in ("tag", "anchor"):  # rarely needed, refused wherever written
        return ("!!str " if style == "tag" else "&a ") + json.dumps(text)
    return json.dumps(text, ensure_ascii=style == "ascii")  # a JSON string is a YAML double-quoted one


def _flow(tree: Any) -> str:
    if tree[0] == "seq":
        return "[" + ", ".join(_flow(item) for item in tree[2]) + "]"
    if tree[0] == "map":
        return "{" + ", ".join(f"{_scalar(*key)}: {_flow(value)}" for key, value in tree[2]) + "}"
    return _scalar(*tree)


def _block(tree: Any, indent: int) -> list[str]:
    """Lines of ``tree`` written in block style at ``indent`` (a scalar, flow or empty container: one line)."""
    pad = " " * indent
    if tree[0] not in ("seq", "map") or tree[1] == "flow" or not tree[2]:
        return [pad + _flow(tree)]
    lines = []
    for item in tree[2]:
        head, value = (f"{pad}- ", item) if tree[0] == "seq" else (f"{pad}{_scalar(*item[0])}: ", item[1])
        inner = _block(value, indent + 2)
        if len(inner) == 1:
            lines.append(head + inner[0].lstrip(" "))
        else:
            lines += [head.rstrip(" "), *inner]
    return lines


@settings(max_examples=600, deadline=None)
@given(trees)
def test_the_loader_reads_what_the_composer_reads(tree: Any) -> None:
    text = "\n".join(_block(tree, 0)) + "\n"
    assert strict(text) == reference(text), text


CASES = ["a: 1\nb: [x, {c: d}]\n", "a: 1\na: 2\n", "- a\n- {b: [c, [d, e]]}\n- []\n- {}\n", "true: x\n",
         "'true': x\n", "<<: x\n", "'<<': x\n", "x: &a b\n", "x: *a\n", "&a x: b\n", "!!str x: b\n",
         "x: !!str b\n", "{? !t [a]: b}\n", "x:\n  - &k a: b\n", "[a]: b\n", "a:\n  b:\n    - c\n    - d: e\n",
         '"\\u2028": x\n', 'x: "\\u2028"\n', "é: e\u0301\n", 'x: "e\\u0301"\n', "x:\n", "- \n- null\n", "plain\n",
         "'quoted'\n", "", "# only\n", "a: [b, c]\nd: e\na: f\n", "k:\n  k: 1\n  j: {k: 2, k: 3}\n"]


def test_the_loader_reads_what_the_composer_reads_on_chosen_documents() -> None:
    for text in CASES:
        assert strict(text) == reference(text), text
