"""Release artifacts: ``corpus release pack`` gives the same bytes from any checkout and environment, ``corpus
release install`` refuses a truncated or altered artifact with one line and switches nothing, and installs and
switches under load on a real topology without losing a request."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from nginx_server import private_folder
from release_fixtures import NEW_ADDRESS, bodies, checkout, manifest_hash, release_name, switch_under_load
from test_second_track import corpus, make_checkout

from generator.cli.main import main
from generator.contract.hashing import sha256_hex

ROOT = Path(__file__).resolve().parent.parent
@pytest.fixture(scope="module")
def builds() -> Iterator[tuple[Path, Path]]:
    """Two builds of the fixture corpus that differ in a few bodies (an entity's address)."""
    with private_folder("corpus-artifacts-") as folder:
        yield checkout(folder / "a"), checkout(folder / "b", NEW_ADDRESS)


@pytest.fixture
def work() -> Iterator[Path]:
    with private_folder("corpus-artifact-run-") as folder:
        yield folder




def _pack(root: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    assert main(["release", "pack", "--root", str(root), "--out", str(out)]) == 0
    assert "corpus release pack: " in capsys.readouterr().err
    return out / f"{release_name(root)}.tar"


def _pack_elsewhere(root: Path, out: Path, env: dict[str, str], umask: int, cwd: Path) -> None:
    """``corpus release pack`` in a child process with its own environment, umask and working folder."""
    argv = [sys.executable, "-m", "generator.cli", "release", "pack", "--root", str(root), "--out", str(out)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False, cwd=cwd,
                            env={**os.environ, "PYTHONPATH": str(ROOT), **env}, preexec_fn=lambda: os.umask(umask))
    assert result.returncode == 0, result.stderr


# ------------------------------------------------------------------------------------------- pack

def test_two_packs_are_byte_identical_from_two_checkouts_and_two_environments(work: Path) -> None:
    """The same sources compiled in two checkouts at different paths, packed under different umasks,
    timezones, locales and hash seeds: one name, the same bytes; and the artifact is what it says."""
    one = checkout(work / "x" / "checkout")
    two = checkout(work / "somewhere" / "much" / "deeper" / "other-checkout")
    _pack_elsewhere(one, work / "out-1", {"TZ": "UTC", "LC_ALL": "C", "LANG": "C", "PYTHONHASHSEED": "0"},
                    0o022, work)
    _pack_elsewhere(two, work / "out-2", {"TZ": "Pacific/Kiritimati", "LC_ALL": "fr_FR.UTF-8",
                                          "LANG": "fr_FR.UTF-8", "PYTHONHASHSEED": "random"}, 0o077, two)
    names = [sorted(p.name for p in (work / out).iterdir()) for out in ("out-1", "out-2")]
    digest = release_name(one)
    assert names[0] == names[1] == [f"{digest}.sha256", f"{digest}.tar"]
    first, second = ((work / out / f"{digest}.tar").read_bytes() for out in ("out-1", "out-2"))
    assert first == second
    # what sha256sum reads, and a tar any tool lists: every manifest file and nothing but the release
    assert (work / "out-1" / f"{digest}.sha256").read_text() == \
        f"{hashlib.sha256(first).hexdigest()}  {digest}.tar\n"
    with tarfile.open(fileobj=io.BytesIO(first)) as tar:
        members = tar.getmembers()
    files = {m.name for m in members if m.isfile()}
    entries = json.loads((one / "manifest" / "manifest.json").read_text())["resources"]
    built = {f"build/{e['file']}" for e in entries}
    assert built <= files and {"manifest/manifest.json", "manifest/manifest.sha256"} <= files
    assert files - built - {"manifest/manifest.json", "manifest/manifest.sha256"} == \
        {p.relative_to(one).as_posix() for p in (one / "tracks").rglob("*") if p.is_file()}
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, 0, "", "")}
    assert {m.mode for m in members if m.isfile()} == {0o644} and {m.mode for m in members if m.isdir()} == {0o755}


def test_pack_refuses_a_build_that_is_not_its_manifest(builds: tuple[Path, Path], work: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    root = work / "root"
    shutil.copytree(builds[0], root)
    target = next((root / "build" / "entites").iterdir())
    target.write_bytes(target.read_bytes() + b" ")
    assert main(["release", "pack", "--root", str(root), "--out", str(work / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{target}: bytes differ from the manifest entry" in err
    assert not (work / "out").exists() or list((work / "out").iterdir()) == []


# ------------------------------------------------------------------------------ install refuses

def _tamper_member(artifact: Path, name: str, change: Callable[[bytes], bytes]) -> None:
    """Rewrite one member of the artifact (the tar stays well-formed) and record the new SHA-256: only the
    manifest inside can tell."""
    with tarfile.open(artifact) as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]  # type: ignore[union-attr]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for member, data in members:
            if member.name == name and data is not None:
                data = change(data)
                member.size = len(data)
            tar.addfile(member, io.BytesIO(data) if data is not None else None)
    _rewrite(artifact, buffer.getvalue())


def _add_member(artifact: Path, member: tarfile.TarInfo, data: bytes | None = None) -> None:
    with tarfile.open(artifact) as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]  # type: ignore[union-attr]
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for old, content in [*members, (member, data)]:
            tar.addfile(old, io.BytesIO(content) if content is not None else None)
    _rewrite(artifact, buffer.getvalue())


def _rewrite(artifact: Path, data: bytes) -> None:
    artifact.write_bytes(data)
    artifact.with_suffix(".sha256").write_text(f"{hashlib.sha256(data).hexdigest()}  {artifact.name}\n")


def _link(name: str, to: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.SYMTYPE, to
    return info


def _file(name: str, size: int = 0) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.size = size
    return info


def _first_entity(artifact: Path) -> str:
    with tarfile.open(artifact) as tar:
        return next(n for n in tar.getnames() if n.startswith("build/entites/") and n.endswith(".json"))


TAMPERS: dict[str, tuple[Callable[[Path], None], str]] = {
    "truncated": (lambda a: a.write_bytes(a.read_bytes()[:-20000]), "differs from"),
    "one byte flipped": (lambda a: a.write_bytes(a.read_bytes().replace(b"rue de l", b"rue de L", 1)),
                         "differs from"),
    "empty": (lambda a: a.write_bytes(b""), "differs from"),
    "sha256 file missing": (lambda a: a.with_suffix(".sha256").unlink(), ".sha256: not found"),
    "sha256 file garbled": (lambda a: a.with_suffix(".sha256").write_text("nope\n"), "expected one line"),
    "sha256 file a folder": (lambda a: (a.with_suffix(".sha256").unlink(), a.with_suffix(".sha256").mkdir()),
                             ".sha256: not a regular file (a folder)"),
    "a body altered, sha256 recomputed": (
        lambda a: _tamper_member(a, _first_entity(a), lambda d: d.replace(b"rue", b"RUE", 1)),
        "bytes differ from the manifest entry"),
    "manifest altered, sha256 recomputed": (
        lambda a: _tamper_member(a, "manifest/manifest.json", lambda d: d.replace(b'"base_url": "https://',
                                                                                  b'"base_url": "http://', 1)),
        "manifest/manifest.sha256 says"),
    "a symbolic link added": (lambda a: _add_member(a, _link("build/evil.json", "/etc/passwd")),
                              "member build/evil.json: a link to /etc/passwd, not a file or folder"),
    "a path outside": (lambda a: _add_member(a, _file("../outside.json"), b""), "not a plain relative path"),
    "a file no track serves": (lambda a: _add_member(a, _file("extra/notes.txt", 2), b"hi"),
                               "extra/notes.txt: no track serves it"),
    "a member twice": (lambda a: _add_member(a, _file("manifest/manifest.sha256", 2), b"x\n"), "appears twice"),
    "not a tar": (lambda a: _rewrite(a, b"not a tar at all\n" * 100), "not a release artifact"),
}


@pytest.mark.parametrize("case", list(TAMPERS))
def test_a_tampered_or_truncated_artifact_is_refused_and_nothing_switched(
        builds: tuple[Path, Path], work: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = builds
    releases = work / "releases"
    assert main(["release", "--root", str(a), "--releases", str(releases)]) == 0
    artifact = _pack(b, work / "artifacts", capsys)
    before = sorted(os.listdir(releases))
    spoil, says = TAMPERS[case]
    spoil(artifact)
    assert main(["release", "install", str(artifact), "--releases", str(releases)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"corpus release: {artifact.with_suffix('')}.") and says in err, err  # .tar or .sha256
    assert sorted(os.listdir(releases)) == before  # no release folder, no staging left
    assert os.readlink(releases / "current") == release_name(a) and not (releases / "previous").exists()


def test_an_artifact_under_another_name_or_another_expected_hash_is_refused(
        builds: tuple[Path, Path], work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = builds
    artifact = _pack(b, work / "artifacts", capsys)
    renamed = artifact.with_name(f"{release_name(a)}.tar")
    shutil.copy(artifact, renamed)
    shutil.copy(artifact.with_suffix(".sha256"), renamed.with_suffix(".sha256"))
    renamed.with_suffix(".sha256").write_text(artifact.with_suffix(".sha256").read_text().replace(
        artifact.name, renamed.name))
    releases = work / "releases"
    assert main(["release", "install", str(renamed), "--releases", str(releases)]) == 1
    assert f"release {release_name(b)} (manifest hash {manifest_hash(b)} of the track conformite) differs from " \
           f"{release_name(a)} expected by the artifact's name" in capsys.readouterr().err
    for other in (manifest_hash(a), release_name(a)):  # the first track's manifest hash, or the release hash
        assert main(["release", "install", str(artifact), "--releases", str(releases), "--expect-manifest-hash",
                     other]) == 1
        assert f"is the release {release_name(b)} (manifest hash {manifest_hash(b)} of the track conformite), " \
               f"not {other} expected" in capsys.readouterr().err
    assert not releases.exists() or os.listdir(releases) == []


def test_a_release_folder_of_that_name_holding_another_build_is_never_used(
        builds: tuple[Path, Path], work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A folder releases/<hash>/ already there is used only if every track in it is the artifact's."""
    a, b = builds
    releases = work / "releases"
    artifact = _pack(b, work / "artifacts", capsys)
    shutil.copytree(a, releases / release_name(b))  # another build under the artifact's name
    assert main(["release", "install", str(artifact), "--releases", str(releases)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"track conformite is at manifest {manifest_hash(a)} there, not " \
        f"{manifest_hash(b)}" in err, err
    assert not (releases / "current").exists() and sorted(os.listdir(releases)) == [release_name(b)]


def test_every_track_travels_and_another_track_changed_alone_is_a_new_release(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two tracks (conformité and the tests' essai): the artifact carries both, installed and proven. An
    essai-only change is a new release (the release hash names every track): another artifact name, installed
    beside the first one and switched to, the first one untouched."""
    root = make_checkout(work / "root")
    assert corpus(root, "build").returncode == 0
    artifact = _pack(root, work / "one", capsys)
    with tarfile.open(artifact) as tar:
        names = set(tar.getnames())
    assert {"essai/manifest/manifest.json", "manifest/manifest.json", "tracks/essai/track.yaml"} <= names
    assert any(n.startswith("essai/build/essai/produits/") for n in names)
    releases = work / "releases"
    assert main(["release", "install", str(artifact), "--releases", str(releases)]) == 0
    installed = releases / artifact.stem
    first = (installed / "essai" / "manifest" / "manifest.json").read_bytes()
    assert first == (root / "essai" / "manifest" / "manifest.json").read_bytes()
    conformite = manifest_hash(root)
    product = root / "essai" / "corpus_src" / "produits" / "PRD-0001.yaml"
    product.write_text(product.read_text("utf-8").replace("disponible: true", "disponible: false", 1), "utf-8")
    assert corpus(root, "build").returncode == 0
    assert sha256_hex((root / "essai" / "manifest" / "manifest.json").read_bytes()) != sha256_hex(first)
    assert manifest_hash(root) == conformite
    again = _pack(root, work / "two", capsys)
    assert again.name != artifact.name and again.name == f"{release_name(root)}.tar"
    assert main(["release", "install", str(again), "--releases", str(releases)]) == 0
    assert f"{again.stem} is current (previous {artifact.stem})" in capsys.readouterr().err
    assert (installed / "essai" / "manifest" / "manifest.json").read_bytes() == first  # never rewritten
    assert (releases / again.stem / "essai" / "manifest" / "manifest.json").read_bytes() == \
        (root / "essai" / "manifest" / "manifest.json").read_bytes()
    assert sorted(os.listdir(releases)) == sorted([artifact.stem, again.stem, "current", "previous"])


# ------------------------------------------------------------------------- install under load

def test_install_and_switch_under_load_lose_no_request(builds: tuple[Path, Path], work: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Pack once, install on a running topology (two replicas, one frontal) under a bounded proxy-like
    load, then roll back: every answer is 200 with the old or the new release's bytes."""
    a, b = builds
    releases = work / "releases"
    assert main(["release", "install", str(_pack(a, work / "artifacts", capsys)), "--releases",
                 str(releases)]) == 0
    artifact = _pack(b, work / "artifacts", capsys)
    answers = switch_under_load(work, releases, bodies(a), bodies(b), ["release", "install", str(artifact)])
    assert len(answers) >= 250
    assert os.readlink(releases / "current") == release_name(a)
    assert os.readlink(releases / "previous") == release_name(b)
    err = capsys.readouterr().err
    assert f"corpus release install: {release_name(b)} is current (previous {release_name(a)})" in err
