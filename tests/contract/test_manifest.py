"""The typed manifest model: the committed manifest round-trips byte for byte, every field is checked on
read, and bytes are checked against an entry in one place."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from conftest import ROOT
from trackfix import copy_tracks

from generator.base.errors import GeneratorError, ManifestError
from generator.cli.main import main
from generator.contract.manifest import Entry, Manifest, bytes_difference

COMMITTED = (ROOT / "manifest" / "conformite" / "manifest.json").read_bytes()


def test_the_committed_manifest_round_trips_byte_for_byte() -> None:
    manifest = Manifest.from_bytes(COMMITTED)
    assert manifest.data == COMMITTED
    assert manifest.hash == hashlib.sha256(COMMITTED).hexdigest()
    assert Manifest.create(manifest.corpus, manifest.base_url, reversed(manifest.entries)).data == COMMITTED
    raw = json.loads(COMMITTED)
    assert [e.to_json() for e in manifest.entries] == raw["resources"]


def test_lookups(manifest: dict) -> None:
    model = Manifest.load(ROOT, "manifest/conformite")
    assert model.hash == (ROOT / "manifest" / "conformite" / "manifest.sha256").read_text("ascii").strip()
    for raw in manifest["resources"]:
        assert model.by_path(raw["path"]).to_json() == raw
    assert model.by_path("/entites/ENT-0001/") is None
    assert model.systeme(404).path == "/_systeme/404" and model.systeme(404).status == 404
    with pytest.raises(ManifestError, match="no /_systeme body for status 299"):
        model.systeme(299)
    kinds = {k: len(model.of_kind(k)) for k in ("resource", "absent", "systeme")}
    assert sum(kinds.values()) == len(manifest["resources"]) and all(kinds.values())


def test_bytes_are_checked_against_an_entry() -> None:
    model = Manifest.load(ROOT, "manifest/conformite")
    entry = model.by_path("/catalogue")
    assert entry is not None
    data = (ROOT / "build" / "conformite" / entry.file).read_bytes()
    assert entry.read_checked(ROOT / "build" / "conformite") == data and entry.difference(data) is None
    assert bytes_difference(data, len(data), hashlib.sha256(data).hexdigest()) is None
    altered = data.replace(b"{", b"[", 1)
    assert entry.difference(altered) is not None  # same length, other bytes
    with pytest.raises(ManifestError, match="bytes differ from the manifest entry of /catalogue"):
        entry.check_bytes(altered)
    assert model.check_tree(ROOT / "build" / "conformite") == []
    assert issubclass(ManifestError, GeneratorError)


def _edited(edit: object) -> bytes:
    document = json.loads(COMMITTED)
    edit(document)  # type: ignore[operator]
    return json.dumps(document).encode()


CORRUPT = {
    "not JSON": (COMMITTED[:-20], "not valid JSON"),
    "other format": (_edited(lambda d: d.update(format="x")), "format: expected 'corpus-manifest/1'"),
    "no resources": (_edited(lambda d: d.pop("resources")), "resources: expected a list"),
    "length a string": (_edited(lambda d: d["resources"][2].update(length="12")),
                        "resources[2].length: expected a count of bytes"),
    "unknown kind": (_edited(lambda d: d["resources"][0].update(kind="page")),
                     "resources[0].kind: expected one of"),
    "short hash": (_edited(lambda d: d["resources"][1].update(sha256="abc")),
                   "resources[1].sha256: expected 64 lowercase hex digits"),
    "file outside build": (_edited(lambda d: d["resources"][0].update(file="../../etc/passwd")),
                           "resources[0].file: expected a path inside build/"),
    "status missing": (_edited(lambda d: next(e for e in d["resources"] if e["kind"] == "systeme").pop("status")),
                       ".status: expected an HTTP status"),
}


@pytest.mark.parametrize("case", sorted(CORRUPT))
def test_a_corrupt_manifest_is_named_with_its_field(case: str) -> None:
    data, expected = CORRUPT[case]
    with pytest.raises(ManifestError) as info:
        Manifest.from_bytes(data, "manifest/conformite/manifest.json")
    assert str(info.value).startswith("manifest/conformite/manifest.json: ") and expected in str(info.value)


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    for name in ("build", "manifest"):
        shutil.copytree(ROOT / name, tmp_path / name)
    copy_tracks(tmp_path)
    return tmp_path


def test_show_refuses_bytes_that_differ_from_the_manifest(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = copy / "build" / "conformite" / "catalogue.json"
    target.write_bytes(target.read_bytes().replace(b"{", b"[", 1))
    assert main(["show", "/catalogue", "--root", str(copy)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"corpus show: {target}: bytes differ from the manifest entry of /catalogue")


def test_manifest_hash_refuses_a_hash_file_from_another_build(copy: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    (copy / "manifest" / "conformite" / "manifest.sha256").write_text("0" * 64 + "\n", "ascii")
    assert main(["manifest-hash", "--root", str(copy)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "manifest.sha256 says '" + "0" * 64 + "' but manifest.json hashes to" in err


def test_entries_are_typed() -> None:
    entry = Entry("/a", "systeme", "_systeme/a.json", 3, "0" * 64, "1" * 64, status=404)
    assert entry.to_json() == {"path": "/a", "kind": "systeme", "file": "_systeme/a.json", "length": 3,
                               "sha256": "0" * 64, "status": 404, "response_hash": "1" * 64}
    with pytest.raises(AttributeError):
        entry.length = 4  # type: ignore[misc]
