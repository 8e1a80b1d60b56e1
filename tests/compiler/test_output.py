"""What the compiler writes: bodies, manifest and catalogue, checked against the contract from the files.

Two trees are checked: the committed ``build/`` + ``manifest/`` (what the vhost serves this season, whatever
the season's content) and a fresh build of the small valid fixture (whose exact content is known, so some
tests can pin exact paths and bytes). Every hash, length and serialisation is recomputed here with
``hashlib`` and ``json``, independently of the generator and of orjson.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from corpusfix import copy_fixture
from trackfix import CONFORMITE

from generator.compiler.pipeline import build
from generator.tracks.model import DEFAULT_BASE_URL

ROOT = Path(__file__).resolve().parents[2]
REQUIRED_STATUSES = {400, 403, 404, 405, 408, 412, 413, 414, 500, 501, 502, 503, 504, 505}  # + 431 or 494
ENTRY_KEYS = {"path", "kind", "file", "length", "sha256", "request_hash", "response_hash"}
SYSTEME_KEYS = {"path", "kind", "file", "length", "sha256", "status", "response_hash"}
# Canonical shapes of the collection documents (spec §5.2), written independently of the track definition.
COLLECTION_PATH = re.compile(
    r"/(entites/ENT-\d{4,6}|agrements/AGR-\d{4,6}|attestations/ATT-\d{4,6}|avenants/AVN-\d{4,6}"
    r"|beneficiaires/ENT-\d{4,6}/[1-9]\d{0,2}|listes/agrees/[a-z]+(-[a-z]+)*/[1-9]\d{0,2}"
    r"|mesures-restrictives/[1-9]\d{0,2})")
PREFIXES = ("/entites/", "/agrements/", "/attestations/", "/avenants/", "/beneficiaires/", "/listes/agrees/",
            "/mesures-restrictives/")


@dataclass
class Tree:
    """A built tree read back from disk: the manifest and every body, raw and parsed."""

    root: Path
    manifest_bytes: bytes
    manifest: dict[str, Any]
    raw: dict[str, bytes]  # canonical path -> file bytes
    bodies: dict[str, Any]  # canonical path -> parsed JSON

    @property
    def entries(self) -> list[dict[str, Any]]:
        return self.manifest["resources"]

    def paths(self, kind: str) -> list[str]:
        return [e["path"] for e in self.entries if e["kind"] == kind]


def read_tree(root: Path) -> Tree:
    manifest_bytes = (root / "manifest/conformite/manifest.json").read_bytes()
    manifest = json.loads(manifest_bytes)
    raw = {e["path"]: (root / "build/conformite" / e["file"]).read_bytes() for e in manifest["resources"]}
    return Tree(root, manifest_bytes, manifest, raw, {p: json.loads(b) for p, b in raw.items()})


@pytest.fixture(scope="session")
def fixture_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("fixture-build")
    build(copy_fixture(out), out, DEFAULT_BASE_URL, CONFORMITE)
    return out


@pytest.fixture(scope="session", params=["repo", "fixture"])
def tree(request: pytest.FixtureRequest, fixture_root: Path) -> Tree:
    return read_tree(ROOT if request.param == "repo" else fixture_root)


def walk(value: Any, pointer: str = "") -> list[tuple[str, Any]]:
    """Every (JSON Pointer, scalar) pair of a parsed document."""
    if isinstance(value, dict):
        return [item for key, inner in value.items() for item in walk(inner, f"{pointer}/{key}")]
    if isinstance(value, list):
        return [item for i, inner in enumerate(value) for item in walk(inner, f"{pointer}/{i}")]
    return [(pointer, value)]


def proxy_hash(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- a guard against an empty or partial build -----------------------------------------------------------

def test_build_is_not_empty_and_covers_every_collection(tree: Tree) -> None:
    resources = tree.paths("resource")
    assert len(tree.entries) >= 30
    for prefix in PREFIXES:
        assert any(p.startswith(prefix) for p in resources), f"no resource under {prefix}"
    assert "/referentiel" in resources and "/catalogue" in resources
    assert tree.paths("absent"), "no declared absent reference"
    statuses = {e["status"] for e in tree.entries if e["kind"] == "systeme"}
    assert statuses >= REQUIRED_STATUSES and statuses & {431, 494}


def test_fixture_build_has_exactly_the_expected_paths(fixture_root: Path) -> None:
    tree = read_tree(fixture_root)
    assert tree.paths("resource") == [
        "/agrements/AGR-0001", "/agrements/AGR-0002", "/attestations/ATT-0001", "/avenants/AVN-0001",
        "/avenants/AVN-0002", "/beneficiaires/ENT-0001/1", "/beneficiaires/ENT-0001/2", "/catalogue",
        "/entites/ENT-0001", "/entites/ENT-0002", "/listes/agrees/conseil-en-investissements-financiers/1",
        "/listes/agrees/courtage-en-assurance/1", "/listes/agrees/courtage-en-assurance/2",
        "/mesures-restrictives/1", "/referentiel"]
    assert tree.paths("absent") == ["/agrements/AGR-0999"]
    assert len(tree.paths("systeme")) == 15


# --- bodies ------------------------------------------------------------------------------------------------

def test_files_on_disk_are_exactly_the_manifest(tree: Tree) -> None:
    on_disk = {p.relative_to(tree.root / "build/conformite").as_posix() for p in (
        tree.root / "build/conformite").rglob("*")
               if p.is_file()}
    listed = [e["file"] for e in tree.entries]
    assert len(listed) == len(set(listed))
    assert on_disk == set(listed)
    for entry in tree.entries:
        assert entry["file"] == entry["path"][1:] + ".json"


def test_paths_are_canonical(tree: Tree) -> None:
    for path in tree.raw:
        assert re.fullmatch(r"(/[A-Za-z0-9_-]+)+", path), path  # no trailing slash, ?, %, //, .., or dot


def test_bodies_are_objects_carrying_their_path(tree: Tree) -> None:
    for path, body in tree.bodies.items():
        assert isinstance(body, dict) and body, path
        assert next(iter(body)) == "ressource" and body["ressource"] == path


def test_no_json_numbers_anywhere(tree: Tree) -> None:
    for path, body in tree.bodies.items():
        for pointer, value in walk(body):
            assert value is None or isinstance(value, str | bool), f"{path}{pointer}: {value!r}"


def test_bytes_are_the_fixed_serialisation(tree: Tree) -> None:
    """Two-space indentation, file order of keys, raw UTF-8, one trailing newline: json.dumps reproduces it."""
    for path, data in tree.raw.items():
        text = data.decode("utf-8")  # strict: the bytes are valid UTF-8
        assert data.endswith(b"}\n") and not data.endswith(b"\n\n"), path
        assert text == json.dumps(tree.bodies[path], indent=2, ensure_ascii=False) + "\n", path
        assert "\r" not in text and "\t" not in text


def test_non_ascii_is_kept_raw(tree: Tree) -> None:
    accented = [p for p, data in tree.raw.items() if not data.isascii()]
    assert accented, "no body carries raw non-ASCII text"
    assert all(b"\\u00" not in data for data in tree.raw.values())


def test_collection_documents_exist_and_absents_do_not(tree: Tree) -> None:
    for path in tree.paths("resource"):
        if COLLECTION_PATH.fullmatch(path):
            assert tree.bodies[path]["existe"] is True, path
    for path in tree.paths("absent"):
        assert COLLECTION_PATH.fullmatch(path), path
        assert tree.bodies[path]["existe"] is False, path


def test_absent_bodies_are_a_function_of_the_path(tree: Tree) -> None:
    absents = [tree.bodies[p] for p in tree.paths("absent")]
    shapes = {json.dumps({k: v for k, v in body.items() if k != "ressource"}, sort_keys=True) for body in absents}
    assert len(shapes) == 1


def test_source_only_fields_are_never_served(tree: Tree) -> None:
    for path, body in tree.bodies.items():
        keys = {pointer.rsplit("/", 1)[-1] for pointer, _ in walk(body)}
        assert "incoherence_voulue" not in keys, path
        if COLLECTION_PATH.fullmatch(path):
            assert "id" not in body and "motif" not in body, path


def test_every_cited_reference_is_served(tree: Tree) -> None:
    """Each canonical path a body cites is in the manifest: as a resource, or as a declared absent."""
    served = set(tree.raw)
    for path, body in tree.bodies.items():
        for pointer, value in walk(body):
            if isinstance(value, str) and COLLECTION_PATH.fullmatch(value):
                assert value in served, f"{path}{pointer} cites {value}, which is not served"


def test_page_chains_are_complete(tree: Tree) -> None:
    """Every paginated series starts at page 1 and its page_suivante chain visits each page exactly once."""
    series: dict[str, set[str]] = {}
    for path in tree.paths("resource"):
        if re.fullmatch(r"/(beneficiaires/[^/]+|listes/agrees/[^/]+|mesures-restrictives)/\d+", path):
            series.setdefault(path.rsplit("/", 1)[0], set()).add(path)
    assert series
    for prefix, pages in series.items():
        seen, current = [], f"{prefix}/1"
        while current is not None:
            assert current in pages and current not in seen, current
            seen.append(current)
            body = tree.bodies[current]
            assert body["page"] == current.rsplit("/", 1)[1]
            current = body["page_suivante"]
        assert set(seen) == pages, prefix


def test_systeme_bodies_carry_their_status_as_a_string(tree: Tree) -> None:
    for entry in tree.entries:
        if entry["kind"] == "systeme":
            assert entry["path"] == f"/_systeme/{entry['status']}"
            assert tree.bodies[entry["path"]]["statut"] == str(entry["status"])
            assert tree.bodies[entry["path"]]["message"]


# --- the manifest ------------------------------------------------------------------------------------------

def test_manifest_document(tree: Tree) -> None:
    assert list(tree.manifest) == ["format", "corpus", "base_url", "resources"]
    assert tree.manifest["format"] == "corpus-manifest/1"
    assert tree.manifest["base_url"] == DEFAULT_BASE_URL
    assert tree.manifest["corpus"] == tree.bodies["/catalogue"]["corpus"] and tree.manifest["corpus"]
    assert tree.manifest_bytes == (json.dumps(tree.manifest, indent=2, ensure_ascii=False) + "\n").encode()


def test_manifest_hash_file(tree: Tree) -> None:
    recorded = (tree.root / "manifest/conformite/manifest.sha256").read_text("ascii")
    assert recorded == hashlib.sha256(tree.manifest_bytes).hexdigest() + "\n"
    assert sorted(p.name for p in (tree.root / "manifest/conformite").iterdir()) == ["manifest.json",
        "manifest.sha256"]


def test_manifest_entries_sorted_and_named(tree: Tree) -> None:
    paths = [e["path"] for e in tree.entries]
    assert paths == sorted(paths) and len(paths) == len(set(paths))
    for entry in tree.entries:
        assert entry["kind"] in ("resource", "absent", "systeme")
        if entry["kind"] == "systeme":
            assert set(entry) == SYSTEME_KEYS and type(entry["status"]) is int, entry
            assert entry["path"].startswith("/_systeme/")
        else:
            assert set(entry) == ENTRY_KEYS, entry
            assert not entry["path"].startswith("/_systeme/")


def test_manifest_hashes_recomputed(tree: Tree) -> None:
    base = tree.manifest["base_url"]
    for entry in tree.entries:
        data = tree.raw[entry["path"]]
        assert entry["length"] == len(data) and type(entry["length"]) is int
        assert entry["sha256"] == hashlib.sha256(data).hexdigest()
        assert entry["response_hash"] == proxy_hash(json.loads(data.decode("utf-8")))
        if entry["kind"] != "systeme":
            request = {"target": base + entry["path"], "method": "GET", "payload": {}, "amount": 0.0,
                       "currency": "eur"}
            assert entry["request_hash"] == proxy_hash(request)


def test_catalogue_lists_every_resource(tree: Tree) -> None:
    """Every path of the manifest but the system bodies: a declared absent too, unmarked, so that the catalogue
    compared with a fiche's references points at no absent one (the 404 body: it publishes all the paths)."""
    base = tree.manifest["base_url"]
    catalogue = tree.bodies["/catalogue"]
    assert catalogue["base_url"] == base
    listed = sorted([*tree.paths("resource"), *tree.paths("absent")])
    expected = [{"url": base + path, "method": "GET", "payload": {}} for path in listed]
    assert catalogue["ressources"] == expected


# --- exact bytes of the small fixture ----------------------------------------------------------------------

def test_fixture_bytes_of_an_avenant(fixture_root: Path) -> None:
    """Key order is the schema's, source-only fields (id) dropped, null kept, dates plain strings."""
    assert (fixture_root / "build/conformite/avenants/AVN-0002.json").read_text("utf-8") == (
        '{\n'
        '  "ressource": "/avenants/AVN-0002",\n'
        '  "existe": true,\n'
        '  "attestation": "/attestations/ATT-0001",\n'
        '  "objet": "exclusion-activite",\n'
        '  "date_effet": "2026-01-01",\n'
        '  "nouvelle_date_fin": null,\n'
        '  "activite_exclue": "conseil-en-investissements-financiers"\n'
        '}\n')


def test_fixture_bytes_of_a_page(fixture_root: Path) -> None:
    assert (fixture_root / "build/conformite/beneficiaires/ENT-0001/1.json").read_text("utf-8") == (
        '{\n'
        '  "ressource": "/beneficiaires/ENT-0001/1",\n'
        '  "existe": true,\n'
        '  "entite": "/entites/ENT-0001",\n'
        '  "statut_declaration": "complete",\n'
        '  "page": "1",\n'
        '  "entrees": [\n'
        '    {\n'
        '      "nom": "Érable",\n'
        '      "prenoms": "Zoé",\n'
        '      "date_naissance": "1970-01-01"\n'
        '    }\n'
        '  ],\n'
        '  "page_suivante": "/beneficiaires/ENT-0001/2"\n'
        '}\n')


def test_fixture_bytes_of_an_absent(fixture_root: Path) -> None:
    body = json.loads((fixture_root / "build/conformite/agrements/AGR-0999.json").read_bytes())
    assert body["ressource"] == "/agrements/AGR-0999" and body["existe"] is False
    assert set(body) <= {"ressource", "existe", "message"}


# --- the output guard of the compiler itself (output.find_numbers / check_bodies) ---------------------------

def test_find_numbers_names_every_number() -> None:
    from generator.contract.bodies import find_numbers

    body = {"ressource": "/x", "a": 1, "b": [True, 2.5, "3", None], "c": {"d": False, "e": [0]}}
    assert find_numbers(body) == ["/a", "/b/1", "/c/e/0"]
    assert find_numbers({"ok": ["1", True, None, {"x": "2.5"}]}) == []


def test_check_bodies_reports_numbers_and_bad_bodies() -> None:
    from generator.compiler.compile import Document
    from generator.compiler.output import check_bodies

    docs = [Document("/agrements/AGR-0001", "resource", {"ressource": "/agrements/AGR-0001", "n": 3}),
            Document("/agrements/AGR-0002", "resource", {}),
            Document("/agrements/AGR-0003", "resource", {"existe": True, "ressource": "/agrements/AGR-0003"}),
            Document("/agrements/AGR-0004", "resource", {"ressource": "/agrements/AGR-9999"})]
    assert [str(p) for p in check_bodies(docs, "build/conformite")] == [
        "build/conformite/agrements/AGR-0001.json: /n: a JSON number would be served; write it as a string",
        "build/conformite/agrements/AGR-0002.json: ressource: every body starts with its canonical path",
        "build/conformite/agrements/AGR-0003.json: ressource: every body starts with its canonical path",
        "build/conformite/agrements/AGR-0004.json: ressource: every body starts with its canonical path",
    ]


def test_a_number_stops_the_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The loader cannot produce numbers; if a compiler change ever did, the build fails instead of serving it."""
    from generator.base.errors import CorpusError
    from generator.compiler import pipeline

    real = pipeline.compile_documents

    def with_a_number(*args: Any) -> list[Any]:
        docs = real(*args)
        docs[0].body["compteur"] = 1
        return docs

    monkeypatch.setattr(pipeline, "compile_documents", with_a_number)
    with pytest.raises(CorpusError) as info:
        pipeline.compile_build(copy_fixture(tmp_path), DEFAULT_BASE_URL, CONFORMITE)
    assert [p.field for p in info.value.problems] == ["/compteur"]
    assert not (tmp_path / "build/conformite").exists()


def test_serialise_is_check_bodies_then_bytes_then_entries(tmp_path: Path) -> None:
    """One pass per body (issue 43) gives what the three passes give: the same problems, bytes and entries."""
    from generator.compiler.compile import Document, compile_documents
    from generator.compiler.output import Built, check_bodies, serialise
    from generator.compiler.sources import load_sources
    from generator.compiler.validate import validate
    from generator.contract.bodies import body_bytes

    sources = load_sources(copy_fixture(tmp_path), CONFORMITE)
    _, index = validate(sources, CONFORMITE)
    docs = compile_documents(sources, index, DEFAULT_BASE_URL, CONFORMITE)
    out = serialise(docs, "build/conformite", DEFAULT_BASE_URL)
    built = [Built(doc, body_bytes(doc.body)) for doc in docs]
    assert out.problems == [] and out.built == built
    assert out.entries == [b.entry(DEFAULT_BASE_URL) for b in built]
    bad = [*docs[:2], Document("/agrements/AGR-0001", "resource", {"ressource": "/x", "n": 3}), docs[3],
           Document("/agrements/AGR-0002", "resource", {})]
    refused = serialise(bad, "build/conformite", DEFAULT_BASE_URL)
    assert refused.problems == check_bodies(bad, "build/conformite") and len(refused.problems) == 3
