"""Builds: the committed tree is what the sources compile to, builds are reproducible, failures are atomic."""

from __future__ import annotations

import gc
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import run_corpus
from corpusfix import apply, copy_fixture, replace
from trackfix import CONFORMITE, copy_tracks

from generator.base import transaction
from generator.base.errors import TreeWriteError
from generator.compiler.pipeline import build
from generator.tracks.model import DEFAULT_BASE_URL

ROOT = Path(__file__).resolve().parents[2]
TREES = (CONFORMITE.trees.build, CONFORMITE.trees.manifest)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file of build/ and manifest/ under ``root``, by relative path."""
    files: dict[str, bytes] = {}
    for name in TREES:
        for path in sorted((root / name).rglob("*")):
            if path.is_file():
                files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


def tree_differences(expected: dict[str, bytes], actual: dict[str, bytes]) -> str:
    """A readable list of differing, missing and extra files ('' when the trees are identical)."""
    differing = sorted(p for p in expected.keys() & actual.keys() if expected[p] != actual[p])
    missing = sorted(expected.keys() - actual.keys())
    extra = sorted(actual.keys() - expected.keys())
    parts = [f"{title} ({len(items)}):\n  " + "\n  ".join(items)
             for title, items in (("differing", differing), ("missing", missing), ("extra", extra)) if items]
    return "\n".join(parts)


def leftovers(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith((".build-", ".corpus-txn")))


# --- the committed build is exactly what the sources compile to -------------------------------------------

def test_committed_build_matches_sources(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "corpus_src/conformite", tmp_path / "corpus_src/conformite")
    copy_tracks(tmp_path)
    build(tmp_path / "corpus_src/conformite", tmp_path, DEFAULT_BASE_URL, CONFORMITE)
    fresh, committed = snapshot(tmp_path), snapshot(ROOT)
    assert fresh, "the fresh build is empty"
    # fresh build = what the committed tree should be: "missing" files are absent from the commit.
    report = tree_differences(fresh, committed)
    assert not report, ("build/conformite/ and manifest/conformite/ are not what corpus_src/conformite/ "
                        "compiles to; run `make build` and "
                        f"commit the result.\n(compared with a fresh build; 'missing' = not committed)\n{report}")


# --- reproducible: other path, timezone, locale and hash seed give the same bytes --------------------------

ENVIRONMENTS = [
    {"TZ": "UTC", "LANG": "C", "LC_ALL": "C", "PYTHONHASHSEED": "0"},
    {"TZ": "Pacific/Kiritimati", "LANG": "fr_FR.UTF-8", "LC_ALL": "fr_FR.UTF-8", "PYTHONHASHSEED": "random"},
    {"TZ": "America/St_Johns", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PYTHONHASHSEED": "12345"},
]


def test_build_is_reproducible_across_paths_and_environments(tmp_path: Path) -> None:
    roots = [tmp_path / "a", tmp_path / "b" / "deeper" / "clone", tmp_path / "c with space"]
    procs = []
    for root, variant in zip(roots, ENVIRONMENTS, strict=True):
        shutil.copytree(ROOT / "corpus_src/conformite", root / "corpus_src/conformite")
        copy_tracks(root)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), **variant}
        procs.append(subprocess.Popen([sys.executable, "-m", "generator.cli", "build", "--root", str(root)],
                                      cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode("utf-8", "replace")
    first = snapshot(roots[0])
    assert len(first) > 10
    for root in roots[1:]:
        report = tree_differences(first, snapshot(root))
        assert not report, f"{root} differs from {roots[0]}:\n{report}"


def test_base_url_is_a_build_setting(tmp_path: Path) -> None:
    src = copy_fixture(tmp_path)
    result = build(src, tmp_path, "http://127.0.0.1:8080", CONFORMITE)
    assert b'"base_url": "http://127.0.0.1:8080"' in result.manifest.data
    catalogue = (tmp_path / "build/conformite/catalogue.json").read_text("utf-8")
    assert '"url": "http://127.0.0.1:8080/entites/ENT-0001"' in catalogue
    assert DEFAULT_BASE_URL not in catalogue


# --- atomic: a failed or interrupted build leaves the previous tree untouched ------------------------------

@pytest.fixture
def built(tmp_path: Path) -> Path:
    """A project folder with a valid source and its build, as an author has before an edit."""
    build(copy_fixture(tmp_path), tmp_path, DEFAULT_BASE_URL, CONFORMITE)
    return tmp_path


RENAME = replace("entites/ENT-0002.yaml", "denomination: Cabinet Sans-Bénéficiaires", "denomination: Cabinet Neuf")


def test_failed_validation_leaves_previous_build(built: Path) -> None:
    before = snapshot(built)
    apply(built / "corpus_src/conformite", [RENAME, replace("entites/ENT-0002.yaml", "statut: suspendu",
        "statut: 12")])
    result = run_corpus("build", "--root", str(built))
    assert result.returncode == 1
    assert "corpus_src/conformite/entites/ENT-0002.yaml:15:5: agrements[0].statut: '12' is not one of" in (
        result.stderr)
    assert "build/conformite/ and manifest/conformite/ left unchanged" in result.stderr
    assert not tree_differences(before, snapshot(built))
    assert leftovers(built) == []


@pytest.mark.parametrize("exception", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_interrupted_write_leaves_previous_build(built: Path, monkeypatch: pytest.MonkeyPatch,
                                                 exception: BaseException) -> None:
    before = snapshot(built)
    apply(built / "corpus_src/conformite", [RENAME])
    real_write = transaction.write_tree

    def write_half_then_fail(target: Path, files: dict[str, bytes]) -> None:
        half = dict(list(files.items())[: len(files) // 2])
        real_write(target, half)
        raise exception

    monkeypatch.setattr(transaction, "write_tree", write_half_then_fail)
    with pytest.raises(TreeWriteError if isinstance(exception, OSError) else KeyboardInterrupt):
        build(built / "corpus_src/conformite", built, DEFAULT_BASE_URL, CONFORMITE)
    assert not tree_differences(before, snapshot(built))
    assert leftovers(built) == []


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "two-renames"])
def test_failure_between_swaps_is_rolled_back(built: Path, monkeypatch: pytest.MonkeyPatch,
                                              exchange: bool) -> None:
    """build/ is already swapped when swapping manifest/ fails: build/ must come back too."""
    before = snapshot(built)
    apply(built / "corpus_src/conformite", [RENAME])
    real_exchange, real_rename = transaction.exchange, os.rename

    def fail_on_manifest(first: Path, second: Path) -> None:
        if Path(second) == built / "manifest/conformite" and "stage" in str(first):
            raise OSError(5, "simulated failure on the second swap", str(second))

    def exchange_or_fail(first: Path, second: Path) -> bool:
        fail_on_manifest(first, second)
        return real_exchange(first, second) if exchange else False

    def rename(first: Path, second: Path) -> None:
        fail_on_manifest(first, second)
        real_rename(first, second)

    monkeypatch.setattr(transaction, "exchange", exchange_or_fail)
    monkeypatch.setattr(transaction.os, "rename", rename)
    with pytest.raises(TreeWriteError, match=r"second swap.*rolled back"):
        build(built / "corpus_src/conformite", built, DEFAULT_BASE_URL, CONFORMITE)
    assert not tree_differences(before, snapshot(built))
    assert leftovers(built) == []


def test_interrupted_first_build_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = copy_fixture(tmp_path)

    def fail(target: Path, files: dict[str, bytes]) -> None:
        raise OSError(5, "interrupted")

    monkeypatch.setattr(transaction, "write_tree", fail)
    with pytest.raises(TreeWriteError):
        build(src, tmp_path, DEFAULT_BASE_URL, CONFORMITE)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus_src", "tracks"]


def test_rebuild_replaces_the_whole_tree(built: Path) -> None:
    """Files of resources that no longer exist disappear (the tree is swapped, not overwritten)."""
    (built / "build/conformite/stale.json").write_text("{}\n")
    apply(built / "corpus_src/conformite", [RENAME])
    build(built / "corpus_src/conformite", built, DEFAULT_BASE_URL, CONFORMITE)
    after = snapshot(built)
    assert "build/conformite/stale.json" not in after
    assert "Cabinet Neuf" in after["build/conformite/entites/ENT-0002.json"].decode("utf-8")
    assert leftovers(built) == []


def test_pipeline_makes_no_cyclic_garbage_and_restores_the_collector(tmp_path: Path) -> None:
    """check/compile_build/build pause the cyclic GC for speed; that is sound only if valid sources make no
    cycles."""
    from generator.compiler.pipeline import check, compile_build

    src = copy_fixture(tmp_path)
    assert gc.isenabled()
    check(src, CONFORMITE)
    assert gc.isenabled()  # restored after a run
    build(src, tmp_path / "out", DEFAULT_BASE_URL, CONFORMITE)
    assert gc.isenabled() and gc.get_freeze_count() == 0  # what it left alive is old, not frozen
    gc.collect()
    gc.disable()
    try:
        check(src, CONFORMITE)
        compile_build(src, DEFAULT_BASE_URL, CONFORMITE)
        compile_build(ROOT / "corpus_src/conformite", DEFAULT_BASE_URL, CONFORMITE)
        build(src, tmp_path / "out", DEFAULT_BASE_URL, CONFORMITE)
        assert not gc.isenabled()  # a collector the caller paused stays paused
        garbage = gc.collect()
    finally:
        gc.enable()
    assert garbage == 0


def test_the_pipeline_moves_what_it_left_alive_to_the_oldest_generation(tmp_path: Path) -> None:
    """Resuming the collector, a build hands its survivors to the oldest generation (no young collection walks
    them), and leaves alone objects that a caller froze."""
    from generator.compiler.pipeline import compile_build

    src = copy_fixture(tmp_path)
    gc.collect()
    result = compile_build(src, DEFAULT_BASE_URL, CONFORMITE)
    young = {id(o) for o in gc.get_objects(0)} | {id(o) for o in gc.get_objects(1)}
    assert id(result.built[0].document.body) not in young
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        compile_build(src, DEFAULT_BASE_URL, CONFORMITE)
        assert gc.get_freeze_count() == frozen  # a caller's freeze is not undone
    finally:
        gc.unfreeze()
