"""The freeze record (CONTRACT §5, spec §8) and the guard that makes a frozen season fail loudly."""

from __future__ import annotations

import hashlib
import json
import shutil
import stat
from pathlib import Path

import pytest
from cli_run import Ran, run_corpus
from conftest import ROOT
from trackfix import copy_tracks

from generator.cli.main import main

BAREME = ROOT / "tracks" / "conformite" / "conformite-bareme-v3.txt"
# CONTRACT §5: the value published with the spec, not computed by the code under test.
PUBLISHED_BAREME_SHA256 = "960a7374f4d905eff4a38a1cc800bd6e75e8ded891b5c6242da139ecb7da51f1"

def frozen(repo: Path, salt_file: Path) -> Ran:
    return corpus("freeze", "--root", str(repo), "--bareme", str(BAREME), "--salt-file", str(salt_file))


def corpus(*args: str) -> Ran:
    return run_corpus(*args, cwd=ROOT)


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    """A copy of what a freeze reads and writes: sources, build, manifest, season."""
    root = tmp_path / "repo"
    root.mkdir()
    for name in ("corpus_src", "season_src", "build", "manifest", "season"):
        shutil.copytree(ROOT / name, root / name)
    copy_tracks(root)
    return root


def test_bareme_file_is_the_published_section() -> None:
    assert hashlib.sha256(BAREME.read_bytes()).hexdigest() == PUBLISHED_BAREME_SHA256
    shared = ROOT.parent / "shared" / "spec" / "conformite-bareme-v3.section-5.txt"
    if shared.is_file():
        assert shared.read_bytes() == BAREME.read_bytes()


def test_freeze_defaults_to_the_repository_copy_of_the_bareme(repo: Path, tmp_path: Path) -> None:
    result = corpus("freeze", "--root", str(repo), "--salt-file", str(tmp_path / "salt.hex"))
    assert result.returncode == 0, result.stderr
    record = json.loads((repo / "freeze/conformite/record.json").read_text("utf-8"))
    assert record["bareme"]["sha256"] == PUBLISHED_BAREME_SHA256


def test_freeze_records_manifest_bareme_and_salted_key_commitment(repo: Path, tmp_path: Path) -> None:
    salt_file = tmp_path / "salt.hex"
    result = frozen(repo, salt_file)
    assert result.returncode == 0, result.stderr
    record = json.loads((repo / "freeze/conformite/record.json").read_text("utf-8"))
    salt = bytes.fromhex(salt_file.read_text("ascii").strip())
    assert len(salt) == 32
    assert stat.S_IMODE(salt_file.stat().st_mode) == 0o600
    manifest = (repo / "manifest/conformite/manifest.json").read_bytes()
    assert record["manifest_hash"] == hashlib.sha256(manifest).hexdigest()
    assert record["manifest_hash"] == (repo / "manifest/conformite/manifest.sha256").read_text("ascii").strip()
    assert record["bareme"]["sha256"] == PUBLISHED_BAREME_SHA256
    tasks = (repo / "season/conformite/taches.json").read_bytes()
    assert record["format"] == "corpus-freeze/2"
    assert record["taches"] == {"fichier": "season/conformite/taches.json", "sha256": hashlib.sha256(
        tasks).hexdigest()}
    key = (repo / "season/conformite/cle.json").read_bytes()
    assert record["cle"]["engagement"] == hashlib.sha256(salt + key).hexdigest()
    assert record["cle"]["engagement"] != hashlib.sha256(key).hexdigest()
    assert salt.hex() not in (repo / "freeze/conformite/record.json").read_text("utf-8")
    assert corpus("freeze-check", "--root", str(repo), "--salt-file", str(salt_file)).returncode == 0


def test_salt_inside_the_repository_is_refused(repo: Path) -> None:
    result = corpus("freeze", "--root", str(repo), "--bareme", str(BAREME), "--salt-file", str(repo / "s.hex"))
    assert result.returncode == 1
    assert "inside the repository" in result.stderr
    assert not (repo / "freeze/conformite/record.json").exists()
    assert not (repo / "s.hex").exists()


def test_another_bareme_is_refused(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "bareme.txt"
    other.write_bytes(BAREME.read_bytes() + b"\n")
    result = corpus("freeze", "--root", str(repo), "--bareme", str(other), "--salt-file", str(tmp_path / "s"))
    assert result.returncode == 1 and "not to the published barème section" in result.stderr


def test_frozen_season_refuses_a_build_that_changes_a_byte(repo: Path, tmp_path: Path) -> None:
    salt_file = tmp_path / "salt.hex"
    assert frozen(repo, salt_file).returncode == 0
    assert frozen(repo, salt_file).returncode == 1, "a season is frozen once"
    assert corpus("build", "--root", str(repo)).returncode == 0, "an identical build is allowed"
    before = {p: p.read_bytes() for p in sorted((repo / "build/conformite").rglob("*.json"))}
    entity = next((repo / "corpus_src/conformite/entites").glob("*.yaml"))
    entity.write_text(entity.read_text("utf-8").replace("forme_juridique: ", "forme_juridique: X", 1), "utf-8")
    result = corpus("build", "--root", str(repo))
    assert result.returncode == 1
    assert "REFUSED" in result.stderr and f"/entites/{entity.stem}" in result.stderr
    assert {p: p.read_bytes() for p in sorted((repo / "build/conformite").rglob("*.json"))} == before
    check = corpus("freeze-check", "--root", str(repo), "--salt-file", str(salt_file))
    assert check.returncode == 0, check.stderr


def test_frozen_key_cannot_be_rebuilt_differently(repo: Path, tmp_path: Path) -> None:
    salt_file = tmp_path / "salt.hex"
    assert frozen(repo, salt_file).returncode == 0
    key = repo / "season_src/conformite/cle.yaml"
    key.write_text(key.read_text("utf-8").replace("piege: >-", "piege: >-\n      Modifié.", 1), "utf-8")
    before = (repo / "season/conformite/cle.json").read_bytes()
    result = corpus("build-season", "--root", str(repo))
    assert result.returncode == 1 and "frozen" in result.stderr
    assert (repo / "season/conformite/cle.json").read_bytes() == before


def test_frozen_task_statements_cannot_change(repo: Path, tmp_path: Path) -> None:
    """season/conformite/taches.json is anchored: build-season refuses to rewrite it, freeze-check sees it
    changed."""
    salt_file = tmp_path / "salt.hex"
    assert frozen(repo, salt_file).returncode == 0
    assert corpus("build-season", "--root", str(repo)).returncode == 0, "an identical season build is allowed"
    tasks_src = repo / "season_src/conformite/taches.yaml"
    text = tasks_src.read_text("utf-8")
    changed = text.replace('plafond: "4"', 'plafond: "5"', 1)
    assert changed != text
    tasks_src.write_text(changed, "utf-8")
    before = (repo / "season/conformite/taches.json").read_bytes()
    result = corpus("build-season", "--root", str(repo))
    assert result.returncode == 1 and "season/conformite/taches.json would change" in result.stderr, result.stderr
    assert (repo / "season/conformite/taches.json").read_bytes() == before
    tasks = repo / "season/conformite/taches.json"
    tasks.write_bytes(before.replace(b'"plafond": 4', b'"plafond": 5', 1))
    result = corpus("freeze-check", "--root", str(repo), "--salt-file", str(salt_file))
    assert result.returncode == 1 and "season/conformite/taches.json hashes to" in result.stderr, result.stderr


def test_freeze_check_detects_a_wrong_salt_and_a_changed_manifest(repo: Path, tmp_path: Path) -> None:
    salt_file = tmp_path / "salt.hex"
    assert frozen(repo, salt_file).returncode == 0
    wrong = tmp_path / "wrong.hex"
    wrong.write_text("00" * 32 + "\n", "ascii")
    result = corpus("freeze-check", "--root", str(repo), "--salt-file", str(wrong))
    assert result.returncode == 1 and "commitment" in result.stderr
    manifest = repo / "manifest/conformite/manifest.json"
    manifest.write_bytes(manifest.read_bytes().replace(b'"resources"', b'"resources" ', 1))
    result = corpus("freeze-check", "--root", str(repo))
    assert result.returncode == 1 and "differs from the frozen" in result.stderr


def test_unfrozen_repository_reports_it() -> None:
    if (ROOT / "freeze/conformite/record.json").exists():
        pytest.skip("the repository's season is frozen")
    result = corpus("freeze-check", "--root", str(ROOT))
    assert result.returncode == 1 and "not frozen" in result.stderr


VALID_RECORD = {"format": "corpus-freeze/2", "corpus": "c", "manifest_hash": "a" * 64,
                "bareme": {"section": "conformite-bareme-v3", "sha256": "b" * 64},
                "taches": {"fichier": "season/conformite/taches.json", "sha256": "d" * 64},
                "cle": {"fichier": "season/conformite/cle.json", "engagement": "c" * 64, "sel": "..."}}


def _without(*keys: str) -> dict:
    record = json.loads(json.dumps(VALID_RECORD))
    *parents, last = keys
    inner = record
    for key in parents:
        inner = inner[key]
    del inner[last]
    return record


CORRUPT_RECORDS = {
    "not JSON": (b'{"format": "corpus-freeze/1",\n  "corpus": }\n', "record.json:2:13: not JSON: Expecting value"),
    "not UTF-8": (b'{"corpus": "\xff"}', "not UTF-8 text (byte 12)"),
    "a key twice": (b'{"format": "corpus-freeze/2", "format": "x"}', 'the key "format" appears more than once'),
    "a list": (b"[]\n", "expected a JSON object"),
    "missing manifest hash": (json.dumps(_without("manifest_hash")).encode(), "manifest_hash: missing"),
    "missing key commitment": (json.dumps(_without("cle", "engagement")).encode(), "cle.engagement: missing"),
    "missing statements hash": (json.dumps(_without("taches", "sha256")).encode(), "taches.sha256: missing"),
    "statements hash uppercase": (json.dumps({**VALID_RECORD, "taches": {"sha256": "D" * 64}}).encode(),
                                  "taches.sha256: expected 64 lowercase hex digits"),
    "format 1, before the statements were anchored": (
        json.dumps({**VALID_RECORD, "format": "corpus-freeze/1"}).encode(), "format: expected 'corpus-freeze/2'"),
    "bareme a string": (json.dumps({**VALID_RECORD, "bareme": "b" * 64}).encode(), "bareme.sha256: missing"),
    "hash a number": (json.dumps({**VALID_RECORD, "manifest_hash": 12}).encode(),
                      "manifest_hash: expected 64 lowercase hex digits"),
    "corpus a list": (json.dumps({**VALID_RECORD, "corpus": []}).encode(), "corpus: expected a string"),
    "other format": (json.dumps({**VALID_RECORD, "format": "x"}).encode(), "format: expected 'corpus-freeze/2'"),
}


@pytest.mark.parametrize("case", sorted(CORRUPT_RECORDS))
def test_a_corrupt_record_is_one_message_naming_it(repo: Path, case: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    data, expected = CORRUPT_RECORDS[case]
    (repo / "freeze/conformite").mkdir(parents=True)
    (repo / "freeze/conformite/record.json").write_bytes(data)
    files = [p for name in ("build", "manifest", "season") for p in (repo / name).rglob("*") if p.is_file()]
    trees = {p: p.read_bytes() for p in files}
    for command in ("build", "build-season", "freeze-check"):
        assert main([command, "--root", str(repo)]) == 1, command
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"corpus {command}: "
                                                       f"{repo}/freeze/conformite/record.json:"), lines
        assert expected in lines[0] and "restore it from git" in lines[0]
    assert trees == {p: p.read_bytes() for p in trees}


def test_a_bad_salt_file_is_one_message(repo: Path, tmp_path: Path) -> None:
    assert frozen(repo, tmp_path / "salt.hex").returncode == 0
    bad = tmp_path / "bad.hex"
    bad.write_text("not hex at all\n", "ascii")
    for result in (corpus("freeze-check", "--root", str(repo), "--salt-file", str(bad)),
                   corpus("freeze-check", "--root", str(repo), "--salt-file", str(tmp_path / "missing.hex"))):
        assert result.returncode == 1 and "Traceback" not in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "salt" in result.stderr
