"""The members of a release artifact, each checked from its header before a byte of it is read or written.

A tar header states a size, and a reader that trusts it reads what it says: a 2 GiB member in a half-MiB
artifact, a sparse member (GNU or PAX) that expands to anything. So every header is checked first, alone:
a plain relative name seen once, a folder or a regular file (a link, a device, a FIFO or a sparse file is
refused by name), and a size within one overall bound (the declared sizes together never exceed the
artifact's own size, as in an uncompressed tar that holds what it declares). Then every file is checked by
name and size against the artifact's index (:data:`INDEX`, which ``release pack`` writes: each file's path,
length and SHA-256, the builds' entries being their manifests' own), still from the headers alone. Only then
are bytes read: in bounded chunks, hashed as they are written into a new file, and compared with the
declared SHA-256 at its end.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tarfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, BinaryIO

from generator.base import strict_json
from generator.base.atomic_file import write_fd
from generator.base.bounded_read import size_text
from generator.base.errors import DeployError
from generator.serving.releases.release import DIR_MODE, FILE_MODE

INDEX = "release.json"  # the artifact's index of its files; read first, never installed
# /2: every track's trees at <kind>/<piste> (build/conformite/...). A /1 artifact laid conformité's trees at
# the root and générique's under generique/: the same release hash, another layout, so never installed as one.
INDEX_FORMAT = "corpus-release-files/2"
OLD_LAYOUT_FORMATS = ("corpus-release-files/1",)
INDEX_LIMIT = 16 * 1024 * 1024
CHUNK = 1024 * 1024  # one read of a member's data, one write of it
READ_LIMIT = 16 * 1024 * 1024  # one read of the artifact: a header's extended data, or a chunk of a file
HEX64 = re.compile(r"[0-9a-f]{64}")
AGAIN = "copy it again from where it was packed (corpus release pack)"


@dataclass(frozen=True)
class Declared:
    """What the index says of one file: its length and SHA-256."""

    length: int
    sha256: str


def index_bytes(name: str, files: dict[str, Declared]) -> bytes:
    """The index of an artifact named ``name``: every file's path, length and SHA-256, sorted, one JSON line
    per file (deterministic: the same files give the same bytes)."""
    lines = [f'{{"format": "{INDEX_FORMAT}", "release": "{name}", "files": [']
    rows = [f'  {{"path": {_quote(path)}, "length": {d.length}, "sha256": "{d.sha256}"}}'
            for path, d in sorted(files.items(), key=lambda item: PurePosixPath(item[0]).parts)]
    return ("\n".join([*lines, ",\n".join(rows), "]}"]) + "\n").encode("utf-8")


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def member_path(name: str, artifact: Path) -> str:
    """``name`` as a plain relative path (no ``..``, ``.``, empty part, backslash or NUL), else refused."""
    rel = name.rstrip("/") if name.endswith("/") and name.strip("/") else name
    if not rel or rel.startswith("/") or any(part in ("..", ".", "") for part in rel.split("/")) \
            or "\\" in rel or "\0" in rel:
        raise DeployError(f"{artifact}: member {name!r}: not a plain relative path inside the release; {AGAIN}")
    return rel


def _kind(member: tarfile.TarInfo) -> str | None:
    """What is wrong with the member's type, or ``None`` for a folder or a regular, non-sparse file."""
    if member.issparse():
        return "a sparse file (its header declares data it does not hold)"
    if member.issym() or member.islnk():
        return f"a link to {member.linkname}"
    if member.isfifo():
        return "a FIFO"
    if member.isdev():
        return "a device"
    if member.isdir():
        return None if member.size == 0 else f"a folder declaring {member.size} bytes of data"
    return None if member.type in (tarfile.REGTYPE, tarfile.AREGTYPE) else "an unknown kind of member"


class Members:
    """The artifact's tar, every header read and checked (:func:`open_members`), no byte of data read yet."""

    def __init__(self, tar: tarfile.TarFile, files: dict[str, tarfile.TarInfo], folders: set[str],
                 artifact: Path) -> None:
        self.tar, self.files, self.folders, self.artifact = tar, files, folders, artifact

    def refuse(self, name: str, what: str) -> DeployError:
        return DeployError(f"{self.artifact}: member {name}: {what}: not a release artifact; {AGAIN}")

    def read_index(self, name: str) -> dict[str, Declared]:
        """The index, checked: strict JSON, the artifact's name, every file once with a length and a SHA-256;
        then every member against it, from the headers: a file it does not declare, or of another size, or
        a folder holding none of its files, and a file it declares that the artifact lacks, are refused."""
        info = self.files.get(INDEX)
        if info is None:
            raise DeployError(f"{self.artifact}: holds no {INDEX} (the SHA-256 of each of its files): packed by "
                              f"an older corpus or by hand; pack it again with corpus release pack")
        if info.size > INDEX_LIMIT:
            raise self.refuse(INDEX, f"declares {info.size} bytes, more than the {size_text(INDEX_LIMIT)} an "
                                     "index may hold")
        declared = _parse_index(self.read(INDEX), name, self)
        for path, member in sorted(self.files.items()):
            wanted = declared.get(path)
            if path == INDEX:
                continue
            if wanted is None:
                raise self.refuse(path, f"not declared by {INDEX}: no track serves it")
            if member.size != wanted.length:
                raise self.refuse(path, f"declares {member.size} bytes, {INDEX} {wanted.length}")
        for path in sorted(declared):
            if path not in self.files:
                raise DeployError(f"{self.artifact}: {INDEX} declares {path}, which the artifact does not hold; "
                                  f"{AGAIN}")
        parents = {str(p) for path in declared for p in PurePosixPath(path).parents}
        for folder in sorted(self.folders - parents):
            raise self.refuse(folder + "/", f"a folder that holds none of the files {INDEX} declares")
        return declared

    def read(self, name: str) -> bytes:
        """One member's bytes (the size its header declares, already checked against the bound), in memory."""
        return b"".join(self._chunks(name, self.files[name].size))

    def extract(self, name: str, dest: Path, declared: Declared, what: str) -> None:
        """Write the member ``name`` as the new file ``dest/name`` in bounded chunks, hashed on the way;
        bytes that are not ``declared`` are refused, ``what`` saying who declares them."""
        target = dest / name
        _folders(dest, target.parent)
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), FILE_MODE)
        try:
            os.fchmod(fd, FILE_MODE)
            digest = hashlib.sha256()
            for chunk in self._chunks(name, declared.length):
                digest.update(chunk)
                write_fd(fd, chunk)
        finally:
            os.close(fd)
        if digest.hexdigest() != declared.sha256:
            raise self.refuse(name, f"bytes differ from {what} (sha256 {digest.hexdigest()[:16]}..., expected "
                                    f"{declared.sha256[:16]}...)")

    def _chunks(self, name: str, length: int) -> Iterable[bytes]:
        source = self.tar.extractfile(self.files[name])
        left = length
        try:
            while left > 0:
                chunk = source.read(min(CHUNK, left)) if source else b""
                if not chunk:
                    raise self.refuse(name, f"ends {left} bytes before the {length} its header declares")
                left -= len(chunk)
                yield chunk
        except (tarfile.TarError, EOFError, OSError) as exc:  # a DeployError is none of these: it goes through
            raise self.refuse(name, f"cannot be read ({exc or type(exc).__name__})") from None


class _BoundedReads:
    """The artifact's file as tarfile reads it, no single read larger than :data:`READ_LIMIT`: tarfile reads a
    PAX or GNU extended header whole, as large as its header says; data is read in :data:`CHUNK` pieces."""

    def __init__(self, handle: BinaryIO, artifact: Path) -> None:
        self.handle, self.artifact = handle, artifact

    def read(self, size: int = -1) -> bytes:
        if size < 0 or size > READ_LIMIT:
            raise DeployError(f"{self.artifact}: a member's extended header declares {size} bytes, more than the "
                              f"{size_text(READ_LIMIT)} one may hold: not a release artifact; {AGAIN}")
        return self.handle.read(size)

    def seek(self, offset: int, whence: int = os.SEEK_SET) -> int:
        return self.handle.seek(offset, whence)

    def tell(self) -> int:
        return self.handle.tell()

    # write and close are never called in mode "r:" on a fileobj tarfile did not open; they stay because
    # tarfile's file protocol (typeshed's _Fileobj) requires them
    def write(self, data: bytes) -> int:
        raise OSError("an artifact is opened for reading only")

    def close(self) -> None:  # ``handle`` belongs to the caller, who closes it
        pass


def open_members(handle: BinaryIO, size: int, artifact: Path) -> Members:
    """Read every header of the tar in ``handle`` (``size`` bytes), checking each as it comes, before any
    member's data: its name, its type, its size against what is left of the artifact, and that no name comes
    twice or under a file. A header that fails is refused there, the rest of the artifact unread."""
    files: dict[str, tarfile.TarInfo] = {}
    folders: set[str] = set()
    above: set[str] = set()  # every folder a file seen so far is in
    left = size
    try:
        # the TarFile lives as long as Members; closing it would not close ``handle``, which the caller owns
        tar = tarfile.open(fileobj=_BoundedReads(handle, artifact),  # noqa: SIM115
                           mode="r:", encoding="utf-8", errors="strict")
        members = Members(tar, files, folders, artifact)
        for info in tar:
            path = member_path(info.name, artifact)
            wrong = _kind(info)
            if wrong is not None:
                raise members.refuse(info.name, f"{wrong}, not a file or folder")
            if path in files or path in folders:
                raise members.refuse(path, "appears twice")
            parents = [str(p) for p in PurePosixPath(path).parents][:-1]  # without "."
            if any(p in files for p in parents) or (path in above and not info.isdir()):
                raise members.refuse(path, "a file and a folder at once")
            above.update(parents)
            if info.isdir():
                folders.add(path)
                continue
            if info.size > left:
                raise members.refuse(path, f"declares {info.size} bytes, more than the {left} bytes left in the "
                                           f"{size}-byte artifact")
            left -= info.size
            files[path] = info
    except (tarfile.TarError, EOFError, UnicodeError, ValueError) as exc:
        raise DeployError(f"{artifact}: not a release artifact ({exc or type(exc).__name__}); {AGAIN}") from None
    return members


def _parse_index(data: bytes, name: str, members: Members) -> dict[str, Declared]:
    def fail(what: str) -> DeployError:
        return members.refuse(INDEX, what)

    try:
        index: Any = strict_json.document(data)
    except strict_json.NotJson as exc:
        raise fail(exc.reason) from None
    if not isinstance(index, dict) or set(index) != {"format", "release", "files"}:
        raise fail("expected an object with format, release and files")
    if index["format"] in OLD_LAYOUT_FORMATS:
        raise fail(f"format: {index['format']!r}, an artifact of the layout before <kind>/<piste> (conformité at "
                   f"the root): never installed as a release of today's layout; pack it again from today's "
                   f"checkout (corpus release pack)")
    if index["format"] != INDEX_FORMAT:
        raise fail(f"format: expected {INDEX_FORMAT!r}")
    if index["release"] != name:
        raise fail(f"release: {str(index['release'])[:64]!r}, not the artifact's name {name}")
    if not isinstance(index["files"], list):
        raise fail("files: expected a list")
    declared: dict[str, Declared] = {}
    for n, row in enumerate(index["files"]):
        if not isinstance(row, dict) or set(row) != {"path", "length", "sha256"} \
                or not isinstance(row["path"], str) or type(row["length"]) is not int or row["length"] < 0 \
                or not isinstance(row["sha256"], str) or not HEX64.fullmatch(row["sha256"]):
            raise fail(f"files[{n}]: expected path, length (bytes) and sha256 (64 lowercase hex digits)")
        path = member_path(row["path"], members.artifact)
        if path in declared or path == INDEX:
            raise fail(f"files[{n}]: {path} declared twice")
        declared[path] = Declared(row["length"], row["sha256"])
    return declared


def _folders(dest: Path, folder: Path) -> None:
    """``folder`` (inside ``dest``) and its missing parents, each 0755."""
    missing = []
    while folder != dest and not folder.is_dir():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir(mode=DIR_MODE)
        os.chmod(path, DIR_MODE)
