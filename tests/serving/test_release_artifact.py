"""Release artifacts: ``corpus release pack`` gives the same bytes from any checkout and environment, ``corpus
release install`` refuses a truncated or altered artifact with one line and switches nothing, and installs and
switches under load on a real topology without losing a request."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import stat
import subprocess
import sys
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_run import run_corpus
from nginx_server import private_folder
from release_fixtures import (
    bodies,
    checkout,
    manifest_hash,
    release_name,
    switch_under_load,
    two_builds,
    two_tracks,
)
from tar_bombs import INDEX, bombs, extended_header, members_of, repack, rewrite, run_install
from trackfix import essai_checkout

from generator.base.errors import GeneratorError
from generator.cli.main import main
from generator.contract.freeze import FreezeRecord
from generator.contract.hashing import sha256_hex
from generator.tracks.loader import track_named

ROOT = Path(__file__).resolve().parents[2]
@pytest.fixture(scope="module")
def builds() -> Iterator[tuple[Path, Path]]:
    with two_builds("corpus-artifacts-") as pair:
        yield pair


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
    entries = json.loads((one / "manifest/conformite/manifest.json").read_text())["resources"]
    built = {f"build/conformite/{e['file']}" for e in entries}
    assert built <= files and {"manifest/conformite/manifest.json", "manifest/conformite/manifest.sha256"} <= files
    definitions = {p.relative_to(one).as_posix() for p in (one / "tracks").rglob("*") if p.is_file()}
    assert files - built - {"manifest/conformite/manifest.json", "manifest/conformite/manifest.sha256"} == {
        INDEX, *definitions}
    # the index covers every other file by its length and SHA-256, track definitions included
    with tarfile.open(fileobj=io.BytesIO(first)) as tar:
        contents = {m.name: tar.extractfile(m).read() for m in members if m.isfile()}  # type: ignore[union-attr]
    index = json.loads(contents.pop(INDEX))
    assert index["format"] == "corpus-release-files/2" and index["release"] == digest
    assert {row["path"]: (row["length"], row["sha256"]) for row in index["files"]} == \
        {name: (len(data), hashlib.sha256(data).hexdigest()) for name, data in contents.items()}
    assert {(m.mtime, m.uid, m.gid, m.uname, m.gname) for m in members} == {(0, 0, 0, "", "")}
    assert {m.mode for m in members if m.isfile()} == {0o644} and {m.mode for m in members if m.isdir()} == {0o755}


def test_pack_refuses_a_build_that_is_not_its_manifest(builds: tuple[Path, Path], work: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    root = work / "root"
    shutil.copytree(builds[0], root)
    target = next((root / "build/conformite/entites").iterdir())
    target.write_bytes(target.read_bytes() + b" ")
    assert main(["release", "pack", "--root", str(root), "--out", str(work / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{target}: bytes differ from the manifest entry" in err
    assert not (work / "out").exists() or list((work / "out").iterdir()) == []


# ------------------------------------------------------------------------------ install refuses

def _tamper_member(artifact: Path, name: str, change: Callable[[bytes], bytes], reindex: bool = False) -> None:
    """Rewrite one member of the artifact (the tar stays well-formed) and record the new SHA-256; with
    ``reindex``, declare it anew in the artifact's index too (a thorough forger): only what anchors the
    index, the manifests, can tell."""
    def edit(members: list[tuple[tarfile.TarInfo, bytes | None]]) -> list[tuple[tarfile.TarInfo, bytes | None]]:
        out = []
        for member, data in members:
            if member.name == name and data is not None:
                data = change(data)
                member.size = len(data)
            out.append((member, data))
        return out

    repack(artifact, edit, reindex)


def _add_member(artifact: Path, member: tarfile.TarInfo, data: bytes | None = None, reindex: bool = False) -> None:
    repack(artifact, lambda members: [*members, (member, data)], reindex)


def _rewrite(artifact: Path, data: bytes) -> None:
    rewrite(artifact, data)


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
        return next(n for n in tar.getnames() if n.startswith("build/conformite/entites/") and n.endswith(".json"))


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
    "a body altered, index and sha256 recomputed": (
        lambda a: _tamper_member(a, _first_entity(a), lambda d: d.replace(b"rue", b"RUE", 1), reindex=True),
        f"bytes differ from the manifest entry ({INDEX} declares"),
    "manifest altered, sha256 recomputed": (
        lambda a: _tamper_member(a, "manifest/conformite/manifest.json", lambda d: d.replace(
            b'"base_url": "https://',
                                                                                  b'"base_url": "http://', 1)),
        f"member manifest/conformite/manifest.json: declares {{size}} bytes, {INDEX} {{size+1}}"),
    "manifest altered, index and sha256 recomputed": (
        lambda a: _tamper_member(a, "manifest/conformite/manifest.json", lambda d: d.replace(
            b'"base_url": "https://',
                                                                                  b'"base_url": "http://', 1),
                                 reindex=True),
        "manifest/conformite/manifest.sha256 says"),
    "a track definition changed, sha256 recomputed": (
        lambda a: _tamper_member(a, "tracks/conformite/track.yaml", lambda d: d.replace(b"piste", b"pistE", 1)),
        f"member tracks/conformite/track.yaml: bytes differ from {INDEX}"),
    "a track definition grown, sha256 recomputed": (
        lambda a: _tamper_member(a, "tracks/conformite/track.yaml", lambda d: d + b"# another\n"),
        "member tracks/conformite/track.yaml: declares"),
    "a schema changed, sha256 recomputed": (
        lambda a: _tamper_member(a, "tracks/conformite/schemas/entites.schema.json",
                                 lambda d: d.replace(b"object", b"Object", 1)),
        f"member tracks/conformite/schemas/entites.schema.json: bytes differ from {INDEX}"),
    "the index missing": (lambda a: repack(a, lambda ms: [(m, d) for m, d in ms if m.name != INDEX]),
                          f"holds no {INDEX}"),
    "the index not JSON": (lambda a: _tamper_member(a, INDEX, lambda d: d[:-5]), f"member {INDEX}: not JSON"),
    "an artifact of the old layout": (  # same release hash, conformité at the root: never installed as today's
        lambda a: _tamper_member(a, INDEX, lambda d: d.replace(b"corpus-release-files/2",
            b"corpus-release-files/1")),
        f"member {INDEX}: format: 'corpus-release-files/1', an artifact of the layout before <kind>/<piste>"),
    "the index of another release": (
        lambda a: _tamper_member(a, INDEX, lambda d: d.replace(b'"release": "', b'"release": "0', 1)),
        f"member {INDEX}: release:"),
    "a symbolic link added": (lambda a: _add_member(a, _link("build/conformite/evil.json", "/etc/passwd")),
                              "member build/conformite/evil.json: a link to /etc/passwd, not a file or folder"),
    "a hard link added": (lambda a: _add_member(a, _hard("build/conformite/evil.json",
                                                          "manifest/conformite/manifest.json")),
                          "member build/conformite/evil.json: a link to manifest/conformite/manifest.json, not "
                          "a file or folder"),
    "a device added": (lambda a: _add_member(a, _special("build/conformite/zero.json", tarfile.CHRTYPE)),
                       "member build/conformite/zero.json: a device, not a file or folder"),
    "a FIFO added": (lambda a: _add_member(a, _special("build/conformite/pipe.json", tarfile.FIFOTYPE)),
                     "member build/conformite/pipe.json: a FIFO, not a file or folder"),
    "a path outside": (lambda a: _add_member(a, _file("../outside.json"), b""), "not a plain relative path"),
    "a file no track serves": (lambda a: _add_member(a, _file("extra/notes.txt", 2), b"hi"),
                               f"member extra/notes.txt: not declared by {INDEX}: no track serves it"),
    "a file no track serves, declared": (lambda a: _add_member(a, _file("extra/notes.txt", 2), b"hi", True),
                                         "member extra/notes.txt: no track serves it"),
    "a folder no file needs": (lambda a: _add_member(a, _special("extra", tarfile.DIRTYPE)),
                               f"member extra/: a folder that holds none of the files {INDEX} declares"),
    "a member twice": (lambda a: _add_member(a, _file("manifest/conformite/manifest.sha256", 2), b"x\n"),
        "appears twice"),
    "a file under a file": (lambda a: _add_member(a, _file("manifest/conformite/manifest.sha256/x", 2), b"x\n"),
                            "a file and a folder at once"),
    "not a tar": (lambda a: _rewrite(a, b"not a tar at all\n" * 100), "not a release artifact"),
    "a 2 GiB artifact": (lambda a: os.truncate(a, 2 * 1024 ** 3),  # a hole on disk: refused by its size, unread
                         "2147483648 bytes, more than the 1024 MiB an artifact may hold"),
    "an extended header of 100 MiB": (lambda a: repack(a, lambda ms: ms, tail=extended_header()),
                                      "a member's extended header declares 104857600 bytes, more than the 16 MiB"),
}


def _hard(name: str, to: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = tarfile.LNKTYPE, to
    return info


def _special(name: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    if kind == tarfile.DIRTYPE:
        info.mode = 0o755
    return info


@pytest.mark.parametrize("case", list(TAMPERS))
def test_a_tampered_or_truncated_artifact_is_refused_and_nothing_switched(
        builds: tuple[Path, Path], work: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = builds
    releases = work / "releases"
    assert main(["release", "--root", str(a), "--releases", str(releases)]) == 0
    artifact = _pack(b, work / "artifacts", capsys)
    before = sorted(os.listdir(releases))
    spoil, says = TAMPERS[case]
    size = next(len(d) for m, d in members_of(artifact) if m.name == "manifest/conformite/manifest.json"
        and d is not None)
    says = says.replace("{size}", str(size - 1)).replace("{size+1}", str(size))
    spoil(artifact)
    assert main(["release", "install", str(artifact), "--releases", str(releases)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith(f"corpus release: {artifact.with_suffix('')}.") and says in err, err  # .tar or .sha256
    assert sorted(os.listdir(releases)) == before  # no release folder, no staging left
    assert os.readlink(releases / "current") == release_name(a) and not (releases / "previous").exists()


BOMB_SAYS = {
    "a 2 GiB member in a few bytes": "declares 2147483648 bytes, more than the",
    **{case: "a sparse file (its header declares data it does not hold), not a file or folder"
       for case in ("a GNU sparse member of 2 GiB", "a PAX 0.1 sparse member of 2 GiB",
                    "a PAX 1.0 sparse member of 2 GiB")},
}


@pytest.mark.parametrize("case", list(BOMB_SAYS))
def test_a_2_gib_member_is_refused_from_its_header_and_nothing_is_written(
        builds: tuple[Path, Path], work: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A small artifact whose member declares 2 GiB (a plain file whose header lies, a GNU sparse file, a
    PAX sparse file 0.1 or 1.0), its SHA-256 file in step: ``release install`` in a child process refuses it
    by that member's header, in one line, creating nothing inside the releases folder (an audit hook in the
    child sees every open for writing, mkdir and rename there) and switching nothing. The child's time and
    peak memory are printed (bench/bench_release.py measures them too)."""
    a, b = builds
    releases = work / "releases"
    assert main(["release", "--root", str(a), "--releases", str(releases)]) == 0
    artifact = _pack(b, work / "artifacts", capsys)
    name = _first_entity(artifact)
    bombs()[case](artifact, name)
    assert artifact.stat().st_size < 1024 * 1024
    before = sorted(os.listdir(releases))
    run = run_install(artifact, releases, ROOT)
    assert run.code == 1 and run.err.count("\n") == 1 and "Traceback" not in run.err, run.err
    assert run.err.startswith(f"corpus release: {artifact}: member {name}: "), run.err
    assert BOMB_SAYS[case] in run.err, run.err
    assert run.written == []
    assert sorted(os.listdir(releases)) == before
    assert os.readlink(releases / "current") == release_name(a) and not (releases / "previous").exists()
    with capsys.disabled():  # the figures, shown with pytest -s
        print(f"\n{case}: refused in {run.seconds:.2f} s, child peak RSS {run.max_rss_mib:.0f} MiB",
              file=sys.stderr)


def _record(root: Path, piste: str = "conformite", commitment: str = "c" * 64,
            manifest: str | None = None) -> bytes:
    """A freeze record of ``root``'s track as ``corpus freeze`` writes it (the commitment given: the salt is
    not at hand), anchoring ``manifest`` (default: the track's own manifest hash)."""
    places = track_named(root, piste).places
    data = (root / places.manifest_file).read_bytes()
    corpus_id = json.loads(data)["corpus"]
    return FreezeRecord(corpus_id, manifest or sha256_hex(data), places.bareme_sha256, "d" * 64, commitment,
                        places).to_bytes()


def _put_record(root: Path, data: bytes, piste: str = "conformite") -> Path:
    path = root / track_named(root, piste).places.record
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_a_release_that_holds_a_record_never_gets_another(builds: tuple[Path, Path], work: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """Installed before the freeze, a release gets its record added once (it proves against the release's
    trees); an artifact or a checkout carrying another record of the same release is then refused in one
    line, the record served unchanged and nothing switched."""
    _a, b = builds
    root = work / "root"
    shutil.copytree(b, root)
    releases = work / "releases"
    artifact = _pack(root, work / "before-freeze", capsys)
    assert main(["release", "install", str(artifact), "--releases", str(releases)]) == 0
    installed = releases / release_name(root) / "freeze/conformite/record.json"
    assert not installed.exists()
    good = _record(root)
    _put_record(root, good)
    frozen = _pack(root, work / "frozen", capsys)
    assert main(["release", "install", str(frozen), "--releases", str(releases)]) == 0
    assert installed.read_bytes() == good  # added once to the release of that very build
    capsys.readouterr()
    _put_record(root, _record(root, commitment="e" * 64))  # another record, well-formed, of the same build
    other = _pack(root, work / "other", capsys)
    for command in (["release", "install", str(other)], ["release", "--root", str(root)]):
        assert main([*command, "--releases", str(releases)]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{installed}: the release already holds a freeze record of the track " \
            "conformite" in err and "never rewritten" in err, err
        assert installed.read_bytes() == good
        assert os.readlink(releases / "current") == release_name(root)


RECORDS: dict[str, tuple[Callable[[Path], bytes], str]] = {
    "another manifest hash": (lambda r: _record(r, manifest="0" * 64),
                              f"manifest_hash {'0' * 64}, not the track's"),
    "a key twice": (lambda r: _record(r).replace(b'"corpus":', b'"corpus": "x", "corpus":', 1), "corpus"),
    "not JSON": (lambda r: _record(r)[:-3], "freeze/conformite/record.json"),
    "not as corpus freeze writes it": (lambda r: _record(r).replace(b"\n  ", b"\n    "),
                                       "not byte for byte what corpus freeze writes"),
}


@pytest.mark.parametrize("case", list(RECORDS))
def test_a_corrupt_record_is_refused_at_pack_time_whatever_is_expected(
        builds: tuple[Path, Path], work: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    """``release pack`` (with or without ``--expect-manifest-hash``, which proves the first track by its
    hash alone) refuses a record that is not this build's, in one line naming it, and writes nothing."""
    _a, b = builds
    root = work / "root"
    shutil.copytree(b, root)
    make, says = RECORDS[case]
    path = _put_record(root, make(root))
    commands = (["release", "pack", "--out", str(work / "out")], ["release", "--releases", str(work / "releases")])
    for command in commands:
        for expect in ([], ["--expect-manifest-hash", manifest_hash(root)]):
            assert main([*command, "--root", str(root), *expect]) == 1
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err, err
            assert says in err or not expect, err  # without it, the record is also what the first track is held to
    for folder in ("out", "releases"):
        assert not (work / folder).exists() or list((work / folder).iterdir()) == []


def test_a_record_is_added_to_a_release_only_when_it_proves_against_that_releases_trees(
        builds: tuple[Path, Path], work: Path) -> None:
    """A record that holds for its own checkout, carried to a release of another build: refused, nothing
    written in the release (the release's own manifest is what a record must anchor)."""
    from generator.serving.releases.release import carry_records, install, prove_tracks

    a, b = builds
    root = work / "root"
    shutil.copytree(b, root)
    _put_record(root, _record(root))
    releases = work / "releases"
    target = install(a, releases)
    says = f"the freeze record of the track conformite says manifest_hash {manifest_hash(b)}, not the track's " \
        f"{manifest_hash(a)}"
    with pytest.raises(GeneratorError, match=says):
        carry_records(root, target, prove_tracks(a))
    assert not (target / "freeze/conformite").exists()


@pytest.mark.parametrize("case", ["another manifest", "not as corpus freeze writes it"])
def test_a_carried_record_is_checked_like_the_builds_for_every_track(
        work: Path, case: str, capsys: pytest.CaptureFixture[str]) -> None:
    """An artifact of both tracks carrying a générique record (the second track) that is not this build's,
    index and SHA-256 in step: refused in one line naming the record, nothing installed."""
    root = two_tracks(work / "root")
    artifact = _pack(root, work / "out", capsys)
    if case == "another manifest":
        record, says = _record(root, "generique", manifest="1" * 64), "1" * 64
    else:
        record, says = _record(root, "generique").replace(b"\n  ", b"\n "), "not byte for byte"
    place = track_named(root, "generique").places.record.as_posix()
    repack(artifact, lambda ms: [*ms, (_file(place, len(record)), record)], reindex=True)
    releases = work / "releases"
    assert main(["release", "install", str(artifact), "--releases", str(releases)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and place in err and says in err, err
    assert not releases.exists() or os.listdir(releases) == []


def test_other_track_definitions_under_a_known_release_name_are_refused(
        builds: tuple[Path, Path], work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The same builds with another track.yaml (index and SHA-256 in step): the release folder of that name
    is never used with other definitions, by an artifact or by a checkout."""
    _a, b = builds
    releases = work / "releases"
    artifact = _pack(b, work / "artifacts", capsys)
    assert main(["release", "install", str(artifact), "--releases", str(releases)]) == 0
    capsys.readouterr()
    _tamper_member(artifact, "tracks/conformite/track.yaml", lambda d: d + b"# changed\n", reindex=True)
    root = work / "root"
    shutil.copytree(b, root)
    with (root / "tracks" / "conformite" / "track.yaml").open("ab") as handle:
        handle.write(b"# changed\n")
    installed = releases / release_name(b) / "tracks" / "conformite" / "track.yaml"
    kept = installed.read_bytes()
    for command in (["release", "install", str(artifact)], ["release", "--root", str(root)]):
        assert main([*command, "--releases", str(releases)]) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{installed}: this track definition of the installed release differs " \
            "from the one given" in err, err
        assert installed.read_bytes() == kept


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
    assert f"member {INDEX}: release: '{release_name(b)}', not the artifact's name {release_name(a)}" in \
        capsys.readouterr().err  # its index names the release it was packed as
    _tamper_member(renamed, INDEX, lambda d: d.replace(release_name(b).encode(), release_name(a).encode()))
    assert main(["release", "install", str(renamed), "--releases", str(releases)]) == 1
    assert f"release {release_name(b)} (manifest hash {manifest_hash(b)} of the track conformite) differs from " \
           f"{release_name(a)} expected by the artifact's name" in capsys.readouterr().err  # and its manifests
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
    root = essai_checkout(work / "root")
    assert run_corpus("build", "--root", str(root), cwd=root).returncode == 0
    artifact = _pack(root, work / "one", capsys)
    with tarfile.open(artifact) as tar:
        names = set(tar.getnames())
    assert {"manifest/essai/manifest.json", "manifest/conformite/manifest.json",
        "tracks/essai/track.yaml"} <= names
    assert any(n.startswith("build/essai/essai/produits/") for n in names)
    releases = work / "releases"
    assert main(["release", "install", str(artifact), "--releases", str(releases)]) == 0
    installed = releases / artifact.stem
    first = (installed / "manifest/essai/manifest.json").read_bytes()
    assert first == (root / "manifest/essai/manifest.json").read_bytes()
    conformite = manifest_hash(root)
    product = root / "corpus_src/essai/produits/PRD-0001.yaml"
    product.write_text(product.read_text("utf-8").replace("disponible: true", "disponible: false", 1), "utf-8")
    assert run_corpus("build", "--root", str(root), cwd=root).returncode == 0
    assert sha256_hex((root / "manifest/essai/manifest.json").read_bytes()) != sha256_hex(first)
    assert manifest_hash(root) == conformite
    again = _pack(root, work / "two", capsys)
    assert again.name != artifact.name and again.name == f"{release_name(root)}.tar"
    assert main(["release", "install", str(again), "--releases", str(releases)]) == 0
    assert f"{again.stem} is current (previous {artifact.stem})" in capsys.readouterr().err
    assert (installed / "manifest/essai/manifest.json").read_bytes() == first  # never rewritten
    assert (releases / again.stem / "manifest/essai/manifest.json").read_bytes() == \
        (root / "manifest/essai/manifest.json").read_bytes()
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


def test_an_installed_artifact_is_0755_and_0644_whatever_the_umask(builds: tuple[Path, Path], work: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """nginx's workers read a release whoever installed it: every folder 0755, every file 0644, under umask 077."""
    _a, b = builds
    artifact = _pack(b, work / "out", capsys)
    releases = work / "releases"
    previous = os.umask(0o077)
    try:
        assert main(["release", "install", str(artifact), "--releases", str(releases)]) == 0
    finally:
        os.umask(previous)
    release = releases / release_name(b)
    modes = {p.relative_to(release).as_posix(): stat.S_IMODE(p.stat().st_mode) for p in release.rglob("*")}
    assert {m for p, m in modes.items() if (release / p).is_dir()} == {0o755}, modes
    assert {m for p, m in modes.items() if (release / p).is_file()} == {0o644}, modes
    assert stat.S_IMODE(release.stat().st_mode) == 0o755
