"""The manifest as one typed model: read it, write it, check bytes against it (CONTRACT §3).

``manifest/<piste>/manifest.json`` lists every served body: its canonical path, its kind (``resource``,
``absent`` or ``systeme``), its file under the track's ``build/<piste>/``, its length and SHA-256, the proxy's
``request_hash`` (resources and absents) or the HTTP ``status`` (``/_systeme`` bodies), and the proxy's
``response_hash``. The manifest hash, which the freeze anchors, is the SHA-256 of the file's bytes;
``manifest/<piste>/manifest.sha256`` repeats it. Build, verify, freeze and the CLI use this module; the nginx
renderer and ``serve`` are meant to (``Manifest.load(root, places.manifest)``, ``manifest.systeme(status)``,
``entry.read_checked(build_dir)``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from pathlib import Path
from typing import Any

import orjson

from generator.base.bounded_read import PUBLISHED_LIMIT
from generator.base.errors import ManifestError, read_file
from generator.base.transaction import reading
from generator.contract.hashing import request_hash, sha256_hex

FORMAT = "corpus-manifest/1"
MANIFEST_FILE = "manifest.json"
MANIFEST_HASH_FILE = "manifest.sha256"
KINDS = ("resource", "absent", "systeme")
_HEX64 = re.compile(r"[0-9a-f]{64}")


def bytes_difference(data: bytes, length: int, sha256: str) -> str | None:
    """``None`` when ``data`` has exactly this length and SHA-256, else what differs (for a message).

    The one place that decides whether bytes are the bytes a manifest (or a verify plan) promises.
    """
    digest = sha256_hex(data)
    if len(data) == length and digest == sha256:
        return None
    return f"{len(data)} bytes sha256 {digest[:16]}..., expected {length} bytes sha256 {sha256[:16]}..."


def release_hash(manifest_hashes: Mapping[str, str]) -> str:
    """The name of a release: one hash over every track's manifest hash, so that a change to any track
    is a new release (docs/operating.md, "Release"). SHA-256 of the lines ``<piste> <manifest hash>\n``,
    sorted, in UTF-8."""
    lines = sorted(f"{piste} {digest}\n" for piste, digest in manifest_hashes.items())
    return sha256_hex("".join(lines).encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Entry:
    """One served body of the manifest."""

    path: str
    kind: str  # one of KINDS
    file: str  # relative to build/
    length: int
    sha256: str
    response_hash: str
    request_hash: str | None = None  # resources and absents: the proxy's hash of GET base_url + path
    status: int | None = None  # /_systeme bodies: the HTTP status they answer

    def to_json(self) -> dict[str, object]:
        """The entry as written, keys in the published order."""
        data: dict[str, object] = {"path": self.path, "kind": self.kind, "file": self.file, "length": self.length,
                                "sha256": self.sha256}
        if self.kind == "systeme":
            data["status"] = self.status
        else:
            data["request_hash"] = self.request_hash
        data["response_hash"] = self.response_hash
        return data

    def difference(self, data: bytes) -> str | None:
        """``None`` when ``data`` are this entry's bytes, else what differs."""
        return bytes_difference(data, self.length, self.sha256)

    def check_bytes(self, data: bytes, where: str = "") -> bytes:
        """``data`` unchanged if they are this entry's bytes; :class:`ManifestError` naming both otherwise."""
        problem = self.difference(data)
        if problem is not None:
            raise ManifestError(f"{where or self.file}: bytes differ from the manifest entry of {self.path} "
                                f"({problem}); build/ and manifest/ must come from the same build: run "
                                "'corpus build'")
        return data

    def read_checked(self, build_dir: Path) -> bytes:
        """The bytes of this entry's file under ``build_dir``, refused if missing or different."""
        path = build_dir / self.file
        data = read_file(path, ManifestError, "listed in the manifest but missing; run 'corpus build'",
                         limit=PUBLISHED_LIMIT)
        return self.check_bytes(data, str(path))


@dataclass(frozen=True)
class Manifest:
    """The whole manifest; ``data`` are its exact bytes, ``hash`` the manifest hash."""

    corpus: str
    base_url: str
    entries: tuple[Entry, ...]
    data: bytes = field(repr=False, compare=False)

    @classmethod
    def create(cls, corpus: str, base_url: str, entries: Iterable[Entry]) -> Manifest:
        """A new manifest, entries sorted by path, serialised as ``json.dumps(indent=2, ensure_ascii=False)``.

        orjson gives the same bytes (a test checks it) without the pure-Python encoder that json.dumps falls
        back to when indenting (seconds on 100,000 entries).
        """
        ordered = tuple(sorted(entries, key=attrgetter("path")))  # a build's are in order already
        document = {"format": FORMAT, "corpus": corpus, "base_url": base_url,
                    "resources": [e.to_json() for e in ordered]}
        return cls(corpus, base_url, ordered, orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")

    @classmethod
    def from_bytes(cls, data: bytes, source: str = MANIFEST_FILE) -> Manifest:
        """Parse and check every field; :class:`ManifestError` names the file and the field otherwise."""
        try:
            document = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise ManifestError(f"{source}: not valid JSON ({exc})") from None
        _expect(isinstance(document, dict), source, "", "a JSON object")
        _expect(document.get("format") == FORMAT, source, "format", repr(FORMAT))
        for key in ("corpus", "base_url"):
            _expect(isinstance(document.get(key), str), source, key, "a string")
        resources = document.get("resources")
        _expect(isinstance(resources, list), source, "resources", "a list")
        entries = tuple(_entry(item, source, f"resources[{i}]") for i, item in enumerate(resources))
        return cls(document["corpus"], document["base_url"], entries, bytes(data))

    @classmethod
    def read(cls, path: Path) -> Manifest:
        return cls.from_bytes(read_file(path, ManifestError, "not found: run 'corpus build' first",
                                           limit=PUBLISHED_LIMIT), str(path))

    @classmethod
    def load(cls, root: Path, folder_name: str) -> Manifest:
        """``ROOT/<folder_name>/manifest.json`` (a track's manifest folder, ``manifest/<piste>``) read under the
        shared swap lock, checked
        against its ``.sha256``."""
        folder = root / folder_name
        with reading(root):
            manifest = cls.read(folder / MANIFEST_FILE)
            try:
                recorded = (folder / MANIFEST_HASH_FILE).read_text("ascii").strip()
            except (OSError, UnicodeDecodeError) as exc:
                raise ManifestError(f"{folder / MANIFEST_HASH_FILE}: cannot read ({exc}); run 'corpus build'") \
                    from None
        if recorded != manifest.hash:
            raise ManifestError(f"{folder / MANIFEST_HASH_FILE} says {recorded[:64]!r} but {MANIFEST_FILE} "
                                f"hashes to {manifest.hash}; run 'corpus build'")
        return manifest

    @property
    def hash(self) -> str:
        """The manifest hash: SHA-256 of ``manifest.json``'s bytes, what the freeze anchors."""
        return sha256_hex(self.data)

    def files(self) -> dict[str, bytes]:
        """The ``manifest/`` tree: ``manifest.json`` and ``manifest.sha256``."""
        return {MANIFEST_FILE: self.data, MANIFEST_HASH_FILE: (self.hash + "\n").encode("ascii")}

    def by_path(self, path: str) -> Entry | None:
        return self._index().get(path)

    def request_hash(self, path: str) -> str:
        """The proxy's request hash of ``GET base_url + path``: the manifest's, or recomputed (CONTRACT §2) for
        a canonical-shaped path the manifest does not list (an undeclared absent)."""
        entry = self.by_path(path)
        if entry is not None and entry.request_hash is not None:
            return entry.request_hash
        return request_hash(self.base_url + path)

    def response_hash(self, path: str) -> str | None:
        """The proxy's response hash of the body served at ``path``, if the manifest lists it."""
        entry = self.by_path(path)
        return None if entry is None else entry.response_hash

    def systeme(self, status: int) -> Entry:
        """The ``/_systeme`` body answered with ``status``."""
        for entry in self.entries:
            if entry.kind == "systeme" and entry.status == status:
                return entry
        raise ManifestError(f"the manifest has no /_systeme body for status {status}")

    def of_kind(self, *kinds: str) -> list[Entry]:
        return [e for e in self.entries if e.kind in kinds]

    def changed_paths(self, other: Manifest) -> list[str]:
        """Paths whose bytes differ between the two manifests, or that only one lists, sorted."""
        mine = {e.path: e.sha256 for e in self.entries}
        theirs = {e.path: e.sha256 for e in other.entries}
        return sorted(p for p in mine.keys() | theirs.keys() if mine.get(p) != theirs.get(p))

    def check_tree(self, build_dir: Path) -> list[str]:
        """Every way ``build_dir`` differs from this manifest: a file missing, different or not listed."""
        problems = []
        for entry in self.entries:
            try:
                entry.read_checked(build_dir)
            except ManifestError as exc:
                problems.append(str(exc))
        listed = {e.file for e in self.entries}
        extra = sorted(p.relative_to(build_dir).as_posix() for p in build_dir.rglob("*") if not p.is_dir())
        problems += [f"{build_dir / p}: not in the manifest" for p in extra if p not in listed]
        return problems

    def _index(self) -> dict[str, Entry]:
        index = self.__dict__.get("_by_path")
        if index is None:
            index = {e.path: e for e in self.entries}
            object.__setattr__(self, "_by_path", index)
        return index


def _expect(condition: bool, source: str, where: str, wanted: str) -> None:
    if not condition:
        raise ManifestError(f"{source}: {where + ': ' if where else ''}expected {wanted}")


def _entry(item: Any, source: str, where: str) -> Entry:
    _expect(isinstance(item, dict), source, where, "an object")
    for key in ("path", "kind", "file", "sha256", "response_hash"):
        _expect(isinstance(item.get(key), str), source, f"{where}.{key}", "a string")
    file = item["file"]
    _expect(not file.startswith("/") and ".." not in file.split("/") and "\\" not in file, source, f"{where}.file",
            "a path inside build/")
    kind = item["kind"]
    _expect(kind in KINDS, source, f"{where}.kind", f"one of {', '.join(KINDS)}")
    length = item.get("length")
    _expect(type(length) is int and length >= 0, source, f"{where}.length", "a count of bytes")
    for key in ("sha256", "response_hash"):
        _expect(bool(_HEX64.fullmatch(item[key])), source, f"{where}.{key}", "64 lowercase hex digits")
    if kind == "systeme":
        status = item.get("status")
        _expect(type(status) is int, source, f"{where}.status", "an HTTP status")
        return Entry(item["path"], kind, file, length, item["sha256"], item["response_hash"], status=status)
    request = item.get("request_hash")
    _expect(isinstance(request, str) and bool(_HEX64.fullmatch(request)), source, f"{where}.request_hash",
            "64 lowercase hex digits")
    return Entry(item["path"], kind, file, length, item["sha256"], item["response_hash"], request_hash=request)
