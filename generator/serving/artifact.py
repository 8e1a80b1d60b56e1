"""Release artifacts: the verified build as one deterministic file, packed once and installed on every host.

``corpus release pack --out DIR`` proves every track of the checkout (as ``corpus release`` does), copies
what a release holds (each track's ``build/`` and ``manifest/``, its freeze record once frozen, and
``tracks/``) aside, and writes it as ``DIR/<release hash>.tar`` with ``DIR/<release hash>.sha256``
(``sha256sum -c`` reads it) beside it.

- **Deterministic**: members sorted by path, folders 0755 and files 0644, owner 0, no user or group name,
  time 0, names in UTF-8 (never the locale's encoding), POSIX pax format. The same sources give the same
  bytes on any machine, in any folder, under any umask, timezone or locale (tests/test_release_artifact.py).
- **Not compressed**: a compressor's output may change with its version (zlib and zlib-ng differ), which
  would break byte identity across hosts; and an uncompressed tar can never expand beyond its own size
  when installed (no decompression bomb). A build is a few MiB.
- **Named by the release hash**, one hash over every track's manifest hash
  (:func:`generator.contract.manifest.release_hash`), as the release folder it installs to and the hash a
  replica's settings expect: one name for one set of tracks, from the ceremony to the file on each host,
  and a change to any track is a new name. A release folder already installed under that name must hold
  the same manifests for every track, or the install is refused (it never rewrites a release, never
  serves another build under a known name).

``corpus release install ARTIFACT --releases DIR --prefix P...`` checks the SHA-256 first (a truncated,
tampered or mixed-up copy stops there), then unpacks into a private folder beside the releases, refusing
any member that is not a plain file or folder inside it, any file no track serves, and proves every track
against its manifest inside, their release hash being the artifact's name. Only then is the folder
renamed into place and :func:`generator.serving.release.release` switches and reloads, rolling back as
``corpus release`` does. Nothing is switched, and nothing is left, when a check fails.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import tarfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from secrets import token_hex
from typing import BinaryIO

from generator.base.atomic_file import check_target, write_atomic, write_new
from generator.base.bounded_read import open_regular
from generator.base.errors import GeneratorError, RenderError, read_file, unreadable_text
from generator.compiler.track_file import TRACKS_DIR
from generator.contract.manifest import MANIFEST_FILE, MANIFEST_HASH_FILE
from generator.serving.release import (
    DIR_MODE,
    FILE_MODE,
    Proven,
    carried,
    carry_records,
    check_same,
    copy_release,
    folder_for,
    prove_tracks,
    release_name,
    release_target,
    settle,
    staged,
    track_places,
)

SUFFIX = ".tar"
DIGEST_SUFFIX = ".sha256"
DIGEST_LIMIT = 1024  # "<64 hex>  <name>\n"
_HASH_NAME = re.compile(r"[0-9a-f]{64}")
_CHUNK = 1024 * 1024
_AGAIN = "copy it again from where it was packed (corpus release pack)"


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


def tar_bytes(tree: Path) -> tuple[bytes, int]:
    """The deterministic tar of ``tree`` (folders and regular files only) and its count of files."""
    paths: list[PurePosixPath] = []
    for folder, dirs, files in os.walk(tree):
        here = PurePosixPath(Path(folder).relative_to(tree).as_posix())
        paths += [here / name for name in (*dirs, *files)]
    buffer, count = io.BytesIO(), 0
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT, encoding="utf-8") as tar:
        for rel in sorted(paths, key=lambda p: p.parts):
            source = tree / rel
            info = tarfile.TarInfo(rel.as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if source.is_dir():
                info.type, info.mode = tarfile.DIRTYPE, DIR_MODE
                tar.addfile(info)
            else:
                data = source.read_bytes()  # a copy this run made and proved: plain files only
                info.size, info.mode = len(data), FILE_MODE
                tar.addfile(info, io.BytesIO(data))
                count += 1
    return buffer.getvalue(), count


def pack(root: Path, out: Path, expect: str | None = None) -> Packed:
    """Prove ``root``'s tracks, copy them aside, write ``OUT/<hash>.tar`` and ``OUT/<hash>.sha256``.

    The archive is read back and checked as an install would check it before it gets its name: what is
    published is what was proven. An artifact of the same name already there is replaced (the same bytes,
    by construction); the digest file is written after it, each in one rename.
    """
    proven = prove_tracks(root, expect)
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
        data, files = tar_bytes(staging / "tree")
        sha256 = hashlib.sha256(data).hexdigest()
        check_members(io.BytesIO(data), staging / "check", artifact)
        check_same(staging / "check", proven)
        write_atomic(artifact, data, mode=FILE_MODE)
        write_atomic(digest_file, f"{sha256}  {artifact.name}\n", mode=FILE_MODE)
    except OSError as exc:
        raise RenderError(f"{exc.filename or artifact}: cannot write the artifact: {exc.strerror}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return Packed(artifact, digest_file, sha256, len(data), files)


def recorded_digest(artifact: Path) -> str:
    """The SHA-256 that ``DIR/<name>.sha256`` records for ``artifact`` (``sha256sum``'s line)."""
    path = digest_path(artifact)
    data = read_file(path, RenderError, f"not found: the SHA-256 of {artifact.name} travels beside it; {_AGAIN}",
                     limit=DIGEST_LIMIT, fix=_AGAIN)
    fields = data.decode("ascii", "replace").split()
    if len(fields) != 2 or not _HASH_NAME.fullmatch(fields[0]) or fields[1].lstrip("*") != artifact.name:
        raise RenderError(f"{path}: expected one line '<sha256>  {artifact.name}' (as sha256sum writes it); "
                          f"{_AGAIN}")
    return fields[0]


def install_artifact(artifact: Path, releases: Path, expect: str | None = None) -> Path:
    """Check ``artifact`` (SHA-256, members, every track against its manifest) and install it as
    ``releases/<its name>/``; return that folder. Nothing is installed, and nothing left, on a refusal."""
    name = artifact.name.removesuffix(SUFFIX)
    if not artifact.name.endswith(SUFFIX) or not _HASH_NAME.fullmatch(name):
        raise RenderError(f"{artifact}: not named <release hash>{SUFFIX} as corpus release pack names an "
                          "artifact; give the packed file under its own name")
    try:
        fd = open_regular(artifact)
    except OSError as exc:
        raise RenderError(unreadable_text(artifact, exc, _AGAIN)) from None
    with os.fdopen(fd, "rb") as handle:
        wanted = recorded_digest(artifact)
        got = _sha256(handle)
        if got != wanted:
            raise RenderError(f"{artifact}: SHA-256 {got} differs from {wanted} recorded in "
                              f"{digest_path(artifact).name}: the artifact is truncated, altered or another one; "
                              f"{_AGAIN}")
        handle.seek(0)
        target = release_target(releases, name)
        with staged(releases, target) as staging:
            check_members(handle, staging, artifact)
            proven = _proven(staging, name, artifact)
            wanted = expect.strip().lower() if expect is not None else None
            if wanted is not None and wanted not in (name, proven[0].manifest.hash):
                raise RenderError(f"{artifact}: is the release {name} (manifest hash {proven[0].manifest.hash} "
                                  f"of the track {proven[0].places.piste}), not {wanted} expected by "
                                  "--expect-manifest-hash; refusing to install another corpus")
            if target.is_dir():
                check_same(target, proven)
                carry_records(staging, target, [p.places for p in proven])
            else:
                settle(staging, target, proven)
    return target


def _sha256(handle: BinaryIO) -> str:
    digest = hashlib.sha256()
    while chunk := handle.read(_CHUNK):
        digest.update(chunk)
    return digest.hexdigest()


def check_members(handle: BinaryIO, dest: Path, artifact: Path) -> int:
    """Unpack the tar read from ``handle`` into the new folder ``dest``: plain folders and files only, each
    name relative and normalised, none twice. Return the count of files. Any other member is refused by
    name: a link could point outside the release, a device or a FIFO has no place in one."""
    dest.mkdir()
    os.chmod(dest, DIR_MODE)
    count = 0
    try:
        with tarfile.open(fileobj=handle, mode="r:", encoding="utf-8", errors="strict") as tar:
            for member in tar:
                rel = _member_path(member.name, artifact)
                path = dest / rel
                if member.isdir():
                    path.mkdir(parents=True, exist_ok=False)
                    os.chmod(path, DIR_MODE)
                elif member.isreg():
                    path.parent.mkdir(parents=True, exist_ok=True)
                    source = tar.extractfile(member)
                    write_new(path, source.read() if source else b"", FILE_MODE)
                    count += 1
                else:
                    raise RenderError(f"{artifact}: member {member.name}: {_member_kind(member)}, not a file or "
                                      f"folder: not a release artifact; {_AGAIN}")
    except (tarfile.TarError, EOFError, UnicodeError) as exc:
        raise RenderError(f"{artifact}: not a release artifact ({exc or type(exc).__name__}); {_AGAIN}") from None
    except FileExistsError as exc:
        raise RenderError(f"{artifact}: member {Path(exc.filename).relative_to(dest)} appears twice: not a "
                          f"release artifact; {_AGAIN}") from None
    for folder in (p for p in dest.rglob("*") if p.is_dir()):  # parents made for a file first
        os.chmod(folder, DIR_MODE)
    return count


def _member_path(name: str, artifact: Path) -> PurePosixPath:
    rel = PurePosixPath(name)
    if not name or rel.is_absolute() or any(part in ("..", ".", "") for part in name.rstrip("/").split("/")) \
            or "\\" in name or "\0" in name:
        raise RenderError(f"{artifact}: member {name!r}: not a plain relative path inside the release; {_AGAIN}")
    return rel


def _member_kind(member: tarfile.TarInfo) -> str:
    if member.issym() or member.islnk():
        return f"a link to {member.linkname}"
    if member.isfifo():
        return "a FIFO"
    return "a device" if member.isdev() else "an unknown kind of member"


def _proven(staging: Path, name: str, artifact: Path) -> list[Proven]:
    """Every track of the unpacked artifact proven, their release hash being ``name``. Before any of
    it is read, a file that no track serves is refused (only the tracks' builds, manifests, freeze records
    and ``tracks/`` may be there): nothing else of an artifact is ever looked at or installed."""
    try:
        every = track_places(staging)
        allowed_files = {f"{p.manifest}/{n}" for p in every for n in (MANIFEST_FILE, MANIFEST_HASH_FILE)}
        allowed_files |= {p.record.as_posix() for p in every}
        allowed_trees = [TRACKS_DIR, *(p.build for p in every)]
        for path in sorted(staging.rglob("*")):
            rel = path.relative_to(staging).as_posix()
            if path.is_dir() or rel in allowed_files or any(rel.startswith(t + "/") for t in allowed_trees):
                continue
            raise RenderError(f"{rel}: no track serves it (a release holds each track's build, manifest and "
                              f"freeze record, and {TRACKS_DIR}/): not an artifact of corpus release pack")
        proven = prove_tracks(staging, name, "the artifact's name")
        if release_name(proven) != name:  # an artifact is named by the release hash alone
            raise RenderError(f"its tracks make the release {release_name(proven)}, not {name}")
        return proven
    except GeneratorError as exc:  # a manifest, a record or a build that is not what it says
        inside = str(exc).replace(f"{staging}/", "").replace(f"{staging}: ", "")  # names as packed
        raise RenderError(f"{artifact}: {inside}; {_AGAIN}") from None
