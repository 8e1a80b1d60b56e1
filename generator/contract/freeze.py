"""The freeze record (spec §8, CONTRACT §5): what the pre-registration anchors, and the build guard.

A track's freeze record (``freeze/record.json`` for conformité: :class:`~generator.contract.places.Places`)
holds the manifest hash, the SHA-256 of the frozen barème section, the SHA-256 of
the task statements ``season/taches.json`` (entity, date d'examen, minimum and plafond of each task: the
scorer reads them, so they are anchored too) and the answer-key commitment ``sha256(salt ‖ key bytes)``.
The 32-byte salt lives in a file outside the repository and is published only at the close. Once the
record exists, any build that would change a byte of ``manifest/``, of ``season/taches.json`` or of
``season/cle.json`` fails loudly instead of writing.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.base import strict_json
from generator.base.bounded_read import PUBLISHED_LIMIT, SALT_LIMIT
from generator.base.errors import FreezeRecordError, FrozenMismatch, ManifestError, read_file
from generator.base.transaction import builder_lock, make_dir, reading, write_file
from generator.contract.anchor import Anchor, RecordCall, anchor_problems, record_call
from generator.contract.hashing import sha256_hex
from generator.contract.manifest import MANIFEST_FILE, Manifest
from generator.contract.places import Places

FORMAT = "corpus-freeze/2"  # /2: the task statements are anchored (taches.sha256)
SALT_BYTES = 32


def _hex(value: Any, size: int) -> bool:
    return isinstance(value, str) and len(value) == 2 * size and all(c in "0123456789abcdef" for c in value)


@dataclass(frozen=True)
class FreezeRecord:
    """``freeze/record.json``, every field checked: a corrupt record is named, never half-read."""

    corpus: str
    manifest_hash: str
    bareme_sha256: str
    tasks_sha256: str
    key_commitment: str
    places: Places | None = None  # where the record names its files; None for a record read back

    def to_bytes(self) -> bytes:
        assert self.places is not None
        record = {"format": FORMAT, "corpus": self.corpus, "manifest_hash": self.manifest_hash,
                  "bareme": {"section": self.places.bareme_section, "sha256": self.bareme_sha256},
                  "taches": {"fichier": self.places.tasks_file.as_posix(), "sha256": self.tasks_sha256},
                  "cle": {"fichier": self.places.key_file.as_posix(), "engagement": self.key_commitment,
                          "sel": "32 octets aléatoires, hors du dépôt, publiés à la clôture"}}
        return (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8")

    @classmethod
    def from_bytes(cls, data: bytes, source: str = "freeze/record.json") -> FreezeRecord:
        def fail(what: str) -> FreezeRecordError:
            return FreezeRecordError(f"{source}: {what}; the record is corrupt: restore it from git (it is "
                                     "committed and anchored), never rewrite it by hand")

        try:  # the one strict reader of JSON files: a key twice is a corruption too
            record = strict_json.document(data)
        except strict_json.NotJson as exc:
            raise FreezeRecordError(f"{exc.text(source)}; the record is corrupt: restore it from git (it is "
                                    "committed and anchored), never rewrite it by hand") from None
        if not isinstance(record, dict):
            raise fail("expected a JSON object")
        if record.get("format") != FORMAT:
            raise fail(f"format: expected {FORMAT!r}")

        def field(*keys: str) -> Any:
            value: Any = record
            for key in keys:
                if not isinstance(value, dict) or key not in value:
                    raise fail(f"{'.'.join(keys)}: missing")
                value = value[key]
            return value

        corpus = field("corpus")
        if not isinstance(corpus, str):
            raise fail("corpus: expected a string")
        hashes = {}
        for keys in (("manifest_hash",), ("bareme", "sha256"), ("taches", "sha256"), ("cle", "engagement")):
            value = hashes[keys] = field(*keys)
            if not _hex(value, 32):
                raise fail(f"{'.'.join(keys)}: expected 64 lowercase hex digits")
        return cls(corpus, *hashes.values())


def read_record(root: Path, places: Places) -> FreezeRecord | None:
    """The freeze record, or ``None`` when the season is not frozen."""
    path = root / places.record
    if not path.exists():
        return None
    return FreezeRecord.from_bytes(_read(path), str(path))


def commitment(salt: bytes, key: bytes) -> str:
    """``sha256(salt ‖ key bytes)``: without the salt, ten verdicts among three fall to brute force."""
    return sha256_hex(salt + key)


def read_salt(path: Path) -> bytes:
    data = read_file(path, FreezeRecordError, "not found: give the salt file written by 'corpus freeze'",
                     limit=SALT_LIMIT)
    try:
        salt = bytes.fromhex(data.decode("ascii").strip())
    except ValueError:  # UnicodeDecodeError included
        raise FreezeRecordError(f"{path}: does not hold a {SALT_BYTES}-byte hex salt") from None
    if len(salt) != SALT_BYTES:
        raise FreezeRecordError(f"{path}: does not hold a {SALT_BYTES}-byte hex salt")
    return salt


def load_or_make_salt(path: Path, root: Path) -> bytes:
    """Read a hex salt, or create one (mode 0600); refuse a path inside the repository."""
    resolved, repo = path.resolve(), root.resolve()
    if resolved == repo or repo in resolved.parents:
        raise FreezeRecordError(f"{path} is inside the repository: the salt must never enter it")
    if path.exists():
        return read_salt(path)
    salt = secrets.token_bytes(SALT_BYTES)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(salt.hex() + "\n")
    except OSError as exc:
        raise FreezeRecordError(f"{path}: cannot write the salt: {exc.strerror}") from None
    return salt


def _read(path: Path) -> bytes:
    return read_file(path, FreezeRecordError, "not found: run 'make build' first", limit=PUBLISHED_LIMIT)


def freeze(root: Path, bareme: Path, salt_file: Path, places: Places) -> bytes:
    """Write ``freeze/record.json`` from the committed manifest, the barème section and the key.

    Under the builder lock: no build or season build runs meanwhile, so the record anchors the manifest
    and the key as they stand, and every later build sees the record.
    """
    with builder_lock(root):
        if (root / places.record).exists():
            raise FrozenMismatch(f"{places.record} already exists: a season is frozen once (delete the record "
                                 "only to start a new season)")
        bareme_hash = sha256_hex(_read(bareme))
        if bareme_hash != places.bareme_sha256:
            raise FrozenMismatch(f"{bareme} hashes to {bareme_hash}, not to the published barème section "
                                 f"{places.bareme_sha256}")
        with reading(root):
            manifest = Manifest.load(root, places.manifest)
            tasks = _read(root / places.tasks_file)
            key = _read(root / places.key_file)
        salt = load_or_make_salt(salt_file, root)
        data = FreezeRecord(manifest.corpus, manifest.hash, bareme_hash, sha256_hex(tasks),
                            commitment(salt, key), places).to_bytes()
        path = root / places.record
        try:
            if not path.parent.is_dir():
                make_dir(path.parent)
            write_file(path, data)
        except OSError as exc:
            raise FreezeRecordError(f"{exc.filename or path}: cannot write: {exc.strerror}; the season is not "
                                    "frozen") from None
    return data


def guard_manifest(root: Path, new: Manifest, places: Places) -> None:
    """Refuse a build whose manifest differs from the frozen one, naming the resources that change."""
    record = read_record(root, places)
    if record is None or new.hash == record.manifest_hash:
        return
    try:
        changed = Manifest.read(root / places.manifest / MANIFEST_FILE).changed_paths(new)
    except ManifestError:
        changed = []
    limit = 20
    shown = changed[:limit] + ([f"... ({len(changed) - limit} more)"] if len(changed) > limit else [])
    raise FrozenMismatch(f"the season is frozen ({places.record}, manifest hash {record.manifest_hash}); this "
                         f"build would give {new.hash} and change: " + (", ".join(shown) or "the manifest itself"))


def guard_season(root: Path, new_tasks: bytes, new_key: bytes, places: Places) -> None:
    """Refuse to rewrite ``season/taches.json`` or ``season/cle.json`` once frozen (both are anchored).

    The statements are compared with their anchored SHA-256 (the record holds it); the key with the file
    on disk, since only its salted commitment is anchored and the salt is not at hand."""
    record = read_record(root, places)
    if record is None:
        return
    if sha256_hex(new_tasks) != record.tasks_sha256:
        raise FrozenMismatch(f"the season is frozen ({places.record}): {places.tasks_file} would change, and "
                             f"its SHA-256 {record.tasks_sha256} is anchored")
    path = root / places.key_file
    if path.is_file() and _read(path) != new_key:
        raise FrozenMismatch(f"the season is frozen ({places.record}): {places.key_file} would change, and its "
                             "commitment is anchored")


def check_freeze(root: Path, salt_file: Path | None, places: Places) -> list[str]:
    """What the scorer checks before scoring (spec §8.5): the record against the repository."""
    record = read_record(root, places)
    if record is None:
        return [f"{places.record} not found: the season is not frozen"]
    problems = []
    with reading(root):
        manifest_hash = sha256_hex(_read(root / places.manifest / MANIFEST_FILE))
        tasks_hash = sha256_hex(_read(root / places.tasks_file))
        key = _read(root / places.key_file)
    if manifest_hash != record.manifest_hash:
        problems.append(f"manifest hash {manifest_hash} differs from the frozen {record.manifest_hash}")
    if tasks_hash != record.tasks_sha256:
        problems.append(f"{places.tasks_file} hashes to {tasks_hash}, not to the frozen {record.tasks_sha256}")
    if record.bareme_sha256 != places.bareme_sha256:
        problems.append("the record's barème hash is not the published one")
    if salt_file is not None and commitment(read_salt(salt_file), key) != record.key_commitment:
        problems.append(f"sha256(salt ‖ {places.key_file}) differs from the frozen commitment")
    return problems


def record_call_of(root: Path, places: Places) -> RecordCall:
    """The proxied call that anchors the track's freeze record, as it stands, and the hashes it will have."""
    with reading(root):
        base_url = Manifest.load(root, places.manifest).base_url
        record = _read(root / places.record)
    return record_call(base_url, places, record)


def check_anchor(root: Path, places: Places, anchor_file: Path,
                 proofs: dict[str, Any] | None = None) -> tuple[Anchor, list[str]]:
    """The anchor and why it does not open to the record served (spec §8.3, §8.5); with ``proofs`` (the
    third-party verification of ``corpus score --proofs``), the anchoring proof must be valid and bound."""
    anchor = Anchor.read(anchor_file)
    problems = anchor_problems(anchor, record_call_of(root, places))
    if proofs is not None:
        verdict = proofs.get(anchor.proof_id)
        held = isinstance(verdict, dict) and verdict.get("valide") is True and verdict.get("identite_liee") is True
        if not held:
            problems.append(f"anchor {anchor.proof_id}: the proofs file does not hold it as valid and bound to "
                            "the challenge's identity (conditions 1 and 2)")
    return anchor, problems
