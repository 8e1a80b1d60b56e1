"""Property tests: what an author writes is what an agent reads, or an error; never a torn tree.

Bounded so the suite stays fast on two shared cores: few examples each, no deadline (a build on a loaded
machine may take a while), derandomized so a run is reproducible, no example database written to disk.
Expected values are derived from the generated input, never from the code under test: the served JSON
is parsed with the standard library, hashes are recomputed with hashlib.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import jsonschema_rs
import pytest
from corpusfix import FIXTURES
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from trackfix import CONFORMITE

from generator.base.errors import CorpusError, Severity
from generator.base.text_policy import bad_text
from generator.compiler.pipeline import build, check, compile_build
from generator.documents.schemas import strict_pattern
from generator.tracks.model import DEFAULT_BASE_URL, file_for

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
E2 = "entites/ENT-0002.yaml"
DENOMINATION = "  denomination: Cabinet Sans-Bénéficiaires\n"
# where an error about it is reported
FIELD = "corpus_src/conformite/entites/ENT-0002.yaml:3:3: entite.denomination: "


@contextmanager
def fixture_copy() -> Iterator[Path]:
    """A fresh copy of the valid fixture's ``corpus_src`` (per example: hypothesis reruns the body)."""
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "corpus_src/conformite"
        shutil.copytree(FIXTURES / "valid" / "corpus_src", src)
        yield src


def _with_denomination(src: Path, written: str) -> None:
    path = src / E2
    text = path.read_text("utf-8")
    assert text.count(DENOMINATION) == 1
    path.write_text(text.replace(DENOMINATION, f"  denomination: {written}\n"), "utf-8")


def _served_denomination(src: Path) -> object:
    result = compile_build(src, DEFAULT_BASE_URL, CONFORMITE)
    files = {file_for(b.document.path): b.data for b in result.built}
    return json.loads(files["entites/ENT-0002.json"])["denomination"]


def _allowed(value: str) -> bool:
    """The documented policy (docs/authoring.md, Characters), restated: non-empty, NFC, no refused character."""
    return bool(value) and unicodedata.is_normalized("NFC", value) and bad_text(value) is None


def _double_quoted(value: str, escape_all: bool) -> str:
    """``value`` as a YAML double-quoted scalar: escapes for what cannot be written raw (or for everything)."""
    out = []
    for char in value:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif (escape_all and code > 0x7E) or code < 0x20 or 0x7F <= code <= 0x9F or bad_text(char) is not None:
            out.append(f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF
                       else f"\\U{code:08x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


@SETTINGS
@given(value=st.text(max_size=40), escape_all=st.booleans())
@example(value="2021-02-30\n", escape_all=False)
@example(value="Société\u2028Générale", escape_all=False)
@example(value=unicodedata.normalize("NFD", "Société"), escape_all=True)
@example(value="no", escape_all=False)
@example(value=" 007 ", escape_all=False)
def test_double_quoted_text_is_served_identical_or_refused(value: str, escape_all: bool) -> None:
    with fixture_copy() as src:
        _with_denomination(src, _double_quoted(value, escape_all))
        errors = [str(p) for p in check(src, CONFORMITE) if p.severity is Severity.ERROR]
        if _allowed(value):
            assert errors == []
            assert _served_denomination(src) == value
        else:
            assert errors and all(line.startswith("corpus_src/conformite/entites/ENT-0002.yaml:3:") for line
                in errors[:1])
            with pytest.raises(CorpusError):
                compile_build(src, DEFAULT_BASE_URL, CONFORMITE)


# Plain scalars: one line, no surrounding blanks (YAML strips them: they are not part of the scalar), and
# no " #" (a comment starts there by definition). What remains must come back exactly, or be an error.
PLAIN = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30).map(str.strip).filter(
    lambda s: s and "\n" not in s and "\r" not in s and " #" not in s and s[0] not in "'\"|>#")


@SETTINGS
@given(value=PLAIN)
@example(value="no")
@example(value="2026-03-31")
@example(value="0x1F")
@example(value="12:30:00")
@example(value="~")
@example(value="! true")
@example(value="&a x")
@example(value="*a")
@example(value="a: b")
@example(value="[x]")
@example(value="true")
def test_plain_scalar_is_the_string_written_or_an_error(value: str) -> None:
    with fixture_copy() as src:
        _with_denomination(src, value)
        errors = [str(p) for p in check(src, CONFORMITE) if p.severity is Severity.ERROR]
        if errors:
            with pytest.raises(CorpusError):
                compile_build(src, DEFAULT_BASE_URL, CONFORMITE)
        else:
            assert _served_denomination(src) == value


# --- any source tree: a build matching its manifest, or nothing changed ---------------------------------------

SOURCE_FILES = sorted(p.relative_to(FIXTURES / "valid" / "corpus_src").as_posix()
                      for p in (FIXTURES / "valid" / "corpus_src").rglob("*.yaml"))
LINE_EDIT = st.tuples(st.sampled_from(SOURCE_FILES), st.integers(0, 80),
                      st.sampled_from(["replace", "insert", "delete"]), st.text(max_size=30))
# Rewriting one free-text value keeps most trees valid, so the "builds to its manifest" side is exercised too.
TEXT_EDIT = st.tuples(st.sampled_from(SOURCE_FILES), st.integers(0, 80), st.just("text"),
                      st.text(st.characters(categories=("L", "N", "P", "Zs")), min_size=1, max_size=30))
EDIT = st.one_of(LINE_EDIT, TEXT_EDIT)
FREE_TEXT = re.compile(r"^(\s*(?:- )?(?:denomination|siege|message|libelle|regle|motif|titre): ).*$", re.M)


def _edit(src: Path, relative: str, line: int, how: str, text: str) -> None:
    path = src / relative
    if how == "text":
        source = path.read_text("utf-8")
        found = list(FREE_TEXT.finditer(source))
        if found:
            hit = found[line % len(found)]
            source = source[:hit.start()] + hit.group(1) + _double_quoted(text, False) + source[hit.end():]
            path.write_text(source, "utf-8")
        return
    lines = path.read_text("utf-8").splitlines(keepends=True) or [""]
    index = line % len(lines)
    indent = lines[index][:len(lines[index]) - len(lines[index].lstrip(" "))]
    new = indent + text.replace("\r", "").replace("\n", " ") + "\n"
    if how == "replace":
        lines[index] = new
    elif how == "insert":
        lines.insert(index, new)
    else:
        del lines[index]
    path.write_text("".join(lines), "utf-8")


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _assert_matches_manifest(out: Path) -> None:
    """Recomputed with hashlib: manifest.sha256 names manifest.json, each entry names its file's bytes."""
    manifest_bytes = (out / "manifest/conformite/manifest.json").read_bytes()
    recorded = (out / "manifest/conformite/manifest.sha256").read_text("ascii").strip()
    assert recorded == hashlib.sha256(manifest_bytes).hexdigest()
    entries = json.loads(manifest_bytes)["resources"]
    files = _tree(out / "build/conformite")
    assert sorted(files) == sorted(entry["file"] for entry in entries)
    for entry in entries:
        data = files[entry["file"]]
        assert len(data) == entry["length"] and hashlib.sha256(data).hexdigest() == entry["sha256"]


@pytest.fixture(scope="module")
def out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One output root shared by the examples: each starts from whatever the previous one left."""
    root = tmp_path_factory.mktemp("property-out")
    with fixture_copy() as src:
        build(src, root, DEFAULT_BASE_URL, CONFORMITE)
    return root


@settings(SETTINGS, max_examples=40)
@given(edits=st.one_of(st.lists(TEXT_EDIT, min_size=1, max_size=3), st.lists(EDIT, min_size=1, max_size=3)))
def test_any_source_tree_builds_to_its_manifest_or_changes_nothing(out: Path, edits: list) -> None:
    """And ``corpus check`` agrees with the build: the same errors, or none."""
    before = _tree(out)
    with fixture_copy() as src:
        for edit in edits:
            _edit(src, *edit)
        errors = [str(p) for p in check(src, CONFORMITE) if p.severity is Severity.ERROR]
        try:
            build(src, out, DEFAULT_BASE_URL, CONFORMITE)
        except CorpusError as exc:
            assert [str(p) for p in exc.problems] == errors  # check said no, with the same words
            assert _tree(out) == before
            event("refused")
            return
    event("built")
    assert errors == []  # check said yes, and build agreed
    _assert_matches_manifest(out)


# --- every schema pattern is whole-string ----------------------------------------------------------------

def _schema_patterns() -> list[str]:
    found: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                found.add(node["pattern"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in sorted((Path(__file__).resolve().parents[2] / "generator" / "schemas").glob("*.json")):
        walk(json.loads(path.read_text("utf-8")))
    return sorted(found)


PATTERNS = _schema_patterns()
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


@settings(SETTINGS, max_examples=150)
@given(data=st.data(), pattern=st.sampled_from(PATTERNS), tail=st.sampled_from(["", "\n", "\r\n", "\x85", "x"]))
def test_schema_patterns_match_the_whole_value(data: st.DataObject, pattern: str, tail: str) -> None:
    """As validation applies them (the Rust engine of jsonschema_rs): a value matches only when nothing follows,
    and holds no control character; else it means what Python's ``re`` reads in the pattern."""
    value = data.draw(st.from_regex(pattern, fullmatch=True)) + tail
    expected = re.search(pattern, value) is not None and CONTROL.search(value) is None \
        and not (pattern.endswith("$") and value.endswith("\n"))
    check = jsonschema_rs.Draft202012Validator({"type": "string", "pattern": strict_pattern(pattern)})
    assert check.is_valid(value) == expected


def test_every_schema_pattern_is_anchored() -> None:
    """strict_pattern refuses controls only in patterns anchored with ^: every schema pattern must be."""
    assert PATTERNS and all(p.startswith("^") for p in PATTERNS)
