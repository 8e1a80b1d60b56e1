"""Release artifacts: the verified build as one deterministic file, packed once and installed on every host.

``corpus release pack --out DIR`` proves every track of the checkout (as ``corpus release`` does), copies
what a release holds (each track's ``build/`` and ``manifest/``, its freeze record once frozen, and
``tracks/``) aside, and writes it as ``DIR/<release hash>.tar`` with ``DIR/<release hash>.sha256``
(``sha256sum -c`` reads it) beside it.

- **Indexed**: its first member, ``release.json``, gives every other file's length and SHA-256 (the
  track definitions and freeze records included; the builds' entries are their manifests' own).
- **Deterministic**: members sorted by path, folders 0755 and files 0644, owner 0, no user or group name,
  time 0, names in UTF-8 (never the locale's encoding), POSIX pax format. The same sources give the same
  bytes on any machine, in any folder, under any umask, timezone or locale
  (tests/serving/test_release_artifact.py).
- **Not compressed**: a compressor's output may change with its version (zlib and zlib-ng differ), which
  would break byte identity across hosts; and an uncompressed tar can never expand beyond its own size
  when installed (no decompression bomb). A build is a few MiB.
- **Named by the release hash**, one hash over every track's manifest hash
  (:func:`generator.contract.manifest.release_hash`), as the release folder it installs to and the hash a
  replica's settings expect: one name for one set of tracks, from the ceremony to the file on each host,
  and a change to any track is a new name. A release folder already installed under that name must hold
  the same manifests for every track, or the install is refused (it never rewrites a release, never
  serves another build under a known name).

``corpus release install ARTIFACT --releases DIR --prefix P...`` refuses an artifact over 1 GiB and checks
the SHA-256 first (a truncated, tampered or mixed-up copy stops there), then reads every member's header
before any of its bytes (:mod:`generator.serving.releases.artifact_members`: links, devices, sparse members, a
name twice, a size beyond the artifact are refused there), checks every member against the artifact's
index and the index against the manifests, unpacks into a private folder beside the releases in bounded
chunks, each file hashed as it is written, and proves every track against its manifest inside, their
release hash being the artifact's name, and every freeze record against its track. Only then is the
folder renamed into place and :func:`generator.serving.releases.release.release` switches and reloads, rolling
back as ``corpus release`` does. Nothing is switched, and nothing is left, when a check fails; a release
folder already there is never rewritten (its manifests, track definitions and record must be the
artifact's, a record only added once).
"""

from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from secrets import token_hex
from typing import BinaryIO, TypeVar

from generator.base.atomic_file import check_target, write_atomic
from generator.base.bounded_read import PUBLISHED_LIMIT, open_regular, size_text
from generator.base.errors import DeployError, GeneratorError, read_file, shown_path, unreadable_text
from generator.contract.manifest import MANIFEST_FILE, MANIFEST_HASH_FILE, Manifest
from generator.serving.releases.artifact_members import (
    AGAIN,
    CHUNK,
    HEX64,
    INDEX,
    Declared,
    index_bytes,
    open_members,
)
from generator.serving.releases.release import (
    DIR_MODE,
    FILE_MODE,
    Proven,
    carried,
    check_records,
    check_same,
    copy_release,
    folder_for,
    prove_tracks,
    release_name,
    release_target,
    reuse_release,
    settle,
    staged,
    track_places,
)
from generator.tracks.loader import TRACKS_DIR

SUFFIX = ".tar"
DIGEST_SUFFIX = ".sha256"
DIGEST_LIMIT = 1024  # "<64 hex>  <name>\n"
ARTIFACT_LIMIT = 1024 * 1024 * 1024  # the overall bound, checked before any byte is read (a release: a few MiB)
T = TypeVar("T")


@dataclass(frozen=True)
class Packed:
    """What ``pack`` wrote: the artifact, its digest file, its SHA-256, its size and how many files."""

    path: Path
    digest_path: Path
    sha256: str
    size: int
    files: int


def digest_path(artifact: Path) -> Path:
    """``DIR/<name>.sha256`` beside ``DIR/<name>.tar``."""
    return artifact.with_name(artifact.name.removesuffix(SUFFIX) + DIGEST_SUFFIX)


def tar_bytes(tree: Path, name: str) -> tuple[bytes, int]:
    """The deterministic tar of ``tree`` (folders and regular files only) and its count of files, its index
    (:data:`INDEX`: every file's length and SHA-256, the release ``name``) first."""
    paths: list[PurePosixPath] = []
    for folder, dirs, files in os.walk(tree):
        here = PurePosixPath(Path(folder).relative_to(tree).as_posix())
        paths += [here / name for name in (*dirs, *files)]
    ordered = sorted(paths, key=lambda p: p.parts)
    contents = {rel: (tree / rel).read_bytes() for rel in ordered if not (tree / rel).is_dir()}  # proven copies
    index = index_bytes(name, {rel.as_posix(): Declared(len(data), hashlib.sha256(data).hexdigest())
                               for rel, data in contents.items()})
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8") as tar:
        for rel, data in [(PurePosixPath(INDEX), index), *((rel, contents.get(rel)) for rel in ordered)]:
            info = tarfile.TarInfo(rel.as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if data is None:
                info.type, info.mode = tarfile.DIRTYPE, DIR_MODE
                tar.addfile(info)
            else:
                info.size, info.mode = len(data), FILE_MODE
                tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue(), len(contents)


def pack(root: Path, out: Path, expect: str | None = None) -> Packed:
    """Prove ``root``'s tracks, copy them aside, write ``OUT/<hash>.tar`` and ``OUT/<hash>.sha256``.

    The archive is read back and checked as an install would check it before it gets its name: what is
    published is what was proven. An artifact of the same name already there is replaced (the same bytes,
    by construction); the digest file is written after it, each in one rename.
    """
    proven = prove_tracks(root, expect)
    check_records(root, proven)  # every track's, --expect-manifest-hash or not
    name = release_name(proven)
    folder = folder_for(out, "--out names the folder the artifact is written to")
    artifact, digest_file = folder / f"{name}{SUFFIX}", folder / f"{name}{DIGEST_SUFFIX}"
    for target in (artifact, digest_file):
        check_target(target)  # a FIFO, a folder or a link there is refused before any work
    staging = folder / f".pack-{os.getpid()}-{token_hex(4)}"
    try:
        staging.mkdir()
        copy_release(root, staging / "tree", carried(proven, root))
        check_same(staging / "tree", proven)
        data, files = tar_bytes(staging / "tree", name)
        sha256 = hashlib.sha256(data).hexdigest()
        unpacked = unpack(io.BytesIO(data), len(data), staging / "check", name, artifact)  # as each host will
        check_same(staging / "check", proven, unpacked)
        write_atomic(artifact, data, mode=FILE_MODE)
        write_atomic(digest_file, f"{sha256}  {artifact.name}\n", mode=FILE_MODE)
    except OSError as exc:
        raise DeployError(f"{exc.filename or artifact}: cannot write the artifact: {exc.strerror}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Packed(artifact, digest_file, sha256, len(data), files)


def recorded_digest(artifact: Path) -> str:
    """The SHA-256 that ``DIR/<name>.sha256`` records for ``artifact`` (``sha256sum``'s line)."""
    path = digest_path(artifact)
    data = read_file(path, DeployError, f"not found: the SHA-256 of {artifact.name} travels beside it; {AGAIN}",
                     limit=DIGEST_LIMIT, fix=AGAIN)
    fields = data.decode("ascii", "replace").split()
    if len(fields) != 2 or not HEX64.fullmatch(fields[0]) or fields[1].lstrip("*") != artifact.name:
        raise DeployError(f"{path}: expected one line '<sha256>  {artifact.name}' (as sha256sum writes it); "
                          f"{AGAIN}")
    return fields[0]


def install_artifact(artifact: Path, releases: Path, expect: str | None = None) -> Path:
    """Check ``artifact`` (SHA-256, members, every track against its manifest) and install it as
    ``releases/<its name>/``; return that folder. Nothing is installed, and nothing left, on a refusal."""
    name = artifact.name.removesuffix(SUFFIX)
    if not artifact.name.endswith(SUFFIX) or not HEX64.fullmatch(name):
        raise DeployError(f"{shown_path(artifact)}: not named <release hash>{SUFFIX} as corpus release pack "
                          "names an artifact; give the packed file under its own name")
    try:
        fd = open_regular(artifact)
    except OSError as exc:
        raise DeployError(unreadable_text(artifact, exc, AGAIN)) from None
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > ARTIFACT_LIMIT:  # the one bound before any byte is read: a release is a few MiB
            raise DeployError(f"{artifact}: {size} bytes, more than the {size_text(ARTIFACT_LIMIT)} an artifact "
                              f"may hold: not a release artifact; {AGAIN}")
        wanted = recorded_digest(artifact)
        got = _sha256(handle)
        if got != wanted:
            raise DeployError(f"{artifact}: SHA-256 {got} differs from {wanted} recorded in "
                              f"{digest_path(artifact).name}: the artifact is truncated, altered or another one; "
                              f"{AGAIN}")
        handle.seek(0)
        target = release_target(releases, name)
        with staged(releases, target) as staging:
            proven = unpack(handle, size, staging, name, artifact)
            expected = expect.strip().lower() if expect is not None else None
            if expected is not None and expected not in (name, proven[0].manifest.hash):
                raise DeployError(f"{artifact}: is the release {name} (manifest hash {proven[0].manifest.hash} "
                                  f"of the track {proven[0].places.piste}), not {expected} expected by "
                                  "--expect-manifest-hash; refusing to install another corpus")
            if target.is_dir():
                reuse_release(staging, target, proven)
            else:
                settle(staging, target, proven)
    return target


def _sha256(handle: BinaryIO) -> str:
    digest = hashlib.sha256()
    while chunk := handle.read(CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def unpack(handle: BinaryIO, size: int, dest: Path, name: str, artifact: Path) -> list[Proven]:
    """Unpack the artifact named ``name`` (its tar in ``handle``, ``size`` bytes) into the new folder ``dest``
    and prove it; return its tracks. Every header is checked before any byte is read
    (:func:`~generator.serving.releases.artifact_members.open_members`), every file against the index before any
    other byte is read, the index's entries for the builds against the manifests before any build byte is
    read, and every byte against its SHA-256 as it is written. Nothing of an artifact is installed that no
    hash checked: the builds by their manifests, the manifests by the artifact's name (the release hash),
    the freeze records by :func:`check_record`, the track definitions by the index."""
    members = open_members(handle, size, artifact)
    declared = members.read_index(name)
    dest.mkdir()
    os.chmod(dest, DIR_MODE)
    done: set[str] = set()

    def extract(path: str, what: str) -> None:
        members.extract(path, dest, declared[path], what)
        done.add(path)

    for path in sorted(p for p in declared if p.startswith(f"{TRACKS_DIR}/")):
        extract(path, INDEX)
    every = _named(artifact, dest, lambda: track_places(dest))
    builds: dict[str, tuple[str, int, str]] = {}  # path -> (the manifest that lists it, length, sha256)
    for places in every:
        for file in (MANIFEST_FILE, MANIFEST_HASH_FILE):
            path = f"{places.manifest}/{file}"
            if path not in declared:
                raise DeployError(f"{artifact}: holds no {path}: the track {places.piste} has no manifest there; "
                                  f"{AGAIN}")
            extract(path, INDEX)
        manifest = _named(artifact, dest, lambda p=places: Manifest.load(dest, p.manifest))  # type: ignore[misc]
        builds.update({f"{places.build}/{e.file}": (places.manifest_file.as_posix(), e.length, e.sha256)
                       for e in manifest.entries})
    for path, (listed_by, length, sha256) in sorted(builds.items()):
        if path not in declared:
            raise DeployError(f"{artifact}: {listed_by} lists {path}, which the artifact does not hold; {AGAIN}")
        if declared[path] != Declared(length, sha256):
            got = declared[path]
            raise members.refuse(path, f"bytes differ from the manifest entry ({INDEX} declares {got.length} "
                                       f"bytes sha256 {got.sha256[:16]}..., {listed_by} {length} bytes sha256 "
                                       f"{sha256[:16]}...)")
    records = {places.record.as_posix() for places in every}
    for path in sorted(set(declared) - done - set(builds)):
        if path not in records:
            raise members.refuse(path, f"no track serves it (a release holds each track's build, manifest and "
                                       f"freeze record, and {TRACKS_DIR}/)")
        if declared[path].length > PUBLISHED_LIMIT:
            raise members.refuse(path, f"declares {declared[path].length} bytes, more than a record may hold")
        extract(path, INDEX)
    for path in sorted(builds):
        extract(path, "the manifest entry")
    proven = _proven(dest, name, artifact)
    _named(artifact, dest, lambda: check_records(dest, proven))
    return proven


def _named(artifact: Path, staging: Path, step: Callable[[], T]) -> T:
    """``step()``, a refusal of it naming the artifact and the files as packed (not the private folder)."""
    try:
        return step()
    except GeneratorError as exc:  # a manifest, a record or a track file that is not what it says
        inside = str(exc).replace(f"{staging}/", "").replace(f"{staging}: ", "")
        raise DeployError(f"{artifact}: {inside}; {AGAIN}") from None


def _proven(staging: Path, name: str, artifact: Path) -> list[Proven]:
    """Every track of the unpacked artifact proven, their release hash being ``name``."""
    def prove() -> list[Proven]:
        proven = prove_tracks(staging, name, "the artifact's name")
        if release_name(proven) != name:  # an artifact is named by the release hash alone
            raise DeployError(f"its tracks make the release {release_name(proven)}, not {name}")
        return proven

    return _named(artifact, staging, prove)
