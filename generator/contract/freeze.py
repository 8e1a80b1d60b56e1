"""The freeze record (spec §8, CONTRACT §5): what the pre-registration anchors, and the build guard.

A track's freeze record (``freeze/record.json`` for conformité: :class:`~generator.contract.places.Places`)
holds the manifest hash, the SHA-256 of the frozen barème section, the SHA-256 of
the task statements ``season/taches.json`` (entity, date d'examen, minimum and plafond of each task: the
scorer reads them, so they are anchored too) and the answer-key commitment ``sha256(salt ‖ key bytes)``.
The 32-byte salt lives in a file outside the repository and is published only at the close. Once the
record exists, any build that would change a byte of ``manifest/``, of ``season/taches.json`` or of
``season/cle.json`` fails loudly instead of writing. Anchoring the record with Trust Layer is
:mod:`generator.trust_layer.freeze_anchor`'s.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.base import strict_json
from generator.base.atomic_file import write_atomic
from generator.base.bounded_read import PUBLISHED_LIMIT, SALT_LIMIT, read_bounded
from generator.base.errors import (
    FreezeRecordError,
    FrozenMismatch,
    ManifestError,
    read_file,
    shown_path,
    unreadable_text,
)
from generator.base.jsonvalue import JsonObject, JsonValue
from generator.base.path_checks import inside_checkout
from generator.base.transaction import builder_lock, make_dir, make_parents, reading
from generator.contract.hashing import sha256_hex
from generator.contract.manifest import MANIFEST_FILE, Manifest
from generator.contract.places import Places

FORMAT = "corpus-freeze/2"  # /2: the task statements are anchored (taches.sha256)
SALT_BYTES = 32


def _hex(value: object, size: int) -> bool:
    return isinstance(value, str) and len(value) == 2 * size and all(c in "0123456789abcdef" for c in value)


SEL_TEXT = "32 octets aléatoires, hors du dépôt, publiés à la clôture"
# Every field of a record, by its dotted name; any other is refused (the record is read whole or not at all).
RECORD_FIELDS = ("format", "corpus", "manifest_hash", "bareme.section", "bareme.sha256", "taches.fichier",
                 "taches.sha256", "cle.fichier", "cle.engagement", "cle.sel")
# A record that replaces another (``corpus freeze --replaces``, spec §8) adds these, and only such a record.
REPLACED_FIELDS = ("remplace.proof_id", "remplace.sha256", "remplace.motif")
_PROOF_ID = re.compile(r"prf_[0-9]{8}_[0-9]{6}_[0-9a-f]{6,64}")  # the proxy's form (trust_proof.check_proof_id)


@dataclass(frozen=True)
class Replaced:
    """What a replacing record names of the record it replaces: the proof_id that anchored it, the SHA-256 of
    its bytes (as ``/gel`` served them) and the motive of the replacement, all anchored with the new record."""

    proof_id: str
    sha256: str
    motif: str

    def to_json(self) -> dict[str, str]:
        return {"proof_id": self.proof_id, "sha256": self.sha256, "motif": self.motif}


@dataclass(frozen=True)
class FreezeRecord:
    """``freeze/record.json``, every field checked: a corrupt record is named, never half-read."""

    corpus: str
    manifest_hash: str
    bareme_sha256: str
    tasks_sha256: str
    key_commitment: str
    places: Places | None = None  # where the record names its files; None for a record read back
    texts: tuple[tuple[str, str], ...] = ()  # read back: bareme.section, taches.fichier, cle.fichier, cle.sel
    remplace: Replaced | None = None  # the record it replaces, when it replaces one (spec §8)

    def to_bytes(self) -> bytes:
        """The bytes ``corpus freeze`` writes: the track's texts from ``places``, else those read back."""
        texts = self.expected_texts(self.places) if self.places is not None else dict(self.texts)
        record: dict[str, object] = {
            "format": FORMAT, "corpus": self.corpus, "manifest_hash": self.manifest_hash,
            "bareme": {"section": texts["bareme.section"], "sha256": self.bareme_sha256},
            "taches": {"fichier": texts["taches.fichier"], "sha256": self.tasks_sha256},
            "cle": {"fichier": texts["cle.fichier"], "engagement": self.key_commitment, "sel": texts["cle.sel"]}}
        if self.remplace is not None:
            record["remplace"] = self.remplace.to_json()
        return (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8")

    def expected_texts(self, places: Places) -> dict[str, str]:
        """The fixed texts ``corpus freeze`` writes for the track of ``places``."""
        return {"bareme.section": places.bareme_section, "taches.fichier": places.tasks_file.as_posix(),
                "cle.fichier": places.key_file.as_posix(), "cle.sel": SEL_TEXT}

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
        for name in _unknown_fields(record):
            raise fail(f"{shown_path(name)}: unknown field (a record holds {', '.join(RECORD_FIELDS)})")

        def field(*keys: str) -> Any:
            value: JsonValue = record
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
        texts = []
        for name in ("bareme.section", "taches.fichier", "cle.fichier", "cle.sel"):
            value = field(*name.split("."))
            if not isinstance(value, str):
                raise fail(f"{name}: expected a string")
            texts.append((name, value))
        manifest_hash, bareme_sha256, tasks_sha256, key_commitment = hashes.values()
        remplace = None
        if "remplace" in record:
            proof_id, sha, motif = (field("remplace", name) for name in ("proof_id", "sha256", "motif"))
            if not (isinstance(proof_id, str) and _PROOF_ID.fullmatch(proof_id)):
                raise fail("remplace.proof_id: expected a proof_id prf_YYYYMMDD_HHMMSS_<hex>")
            if not _hex(sha, 32):
                raise fail("remplace.sha256: expected 64 lowercase hex digits")
            if not (isinstance(motif, str) and motif.strip()):
                raise fail("remplace.motif: expected the motive of the replacement, a non-empty string")
            remplace = Replaced(proof_id, sha, motif)
        return cls(corpus, manifest_hash, bareme_sha256, tasks_sha256, key_commitment, texts=tuple(texts),
                   remplace=remplace)


def _unknown_fields(record: JsonObject) -> list[str]:
    """The dotted names of the fields a record holds and ``corpus freeze`` never writes."""
    known = {name.split(".")[0] for name in RECORD_FIELDS + REPLACED_FIELDS}
    unknown = [key for key in record if key not in known]
    for group in ("bareme", "taches", "cle", "remplace"):
        inner = record.get(group)
        if isinstance(inner, dict):
            unknown += [f"{group}.{key}" for key in inner
                        if f"{group}.{key}" not in RECORD_FIELDS + REPLACED_FIELDS]
    return unknown


def check_place(root: Path, places: Places) -> None:
    """Refuse a freeze folder, record or anchor that is a symbolic link or resolves outside the checkout, and
    name one that cannot be looked at (permission denied, a link loop) instead of taking it for absent."""
    for path in (places.record, places.anchor):
        inside_checkout(root, path, FreezeRecordError)


def is_frozen(root: Path, places: Places) -> bool:
    """The track's freeze folder holds a record or an anchor (of any kind: a FIFO counts; a link is refused)."""
    check_place(root, places)
    return os.path.lexists(root / places.record) or os.path.lexists(root / places.anchor)


def record_bytes(root: Path, places: Places) -> bytes:
    """The record's bytes: a regular file, never a link, a FIFO or a folder (the record is what /gel serves)."""
    path = root / places.record
    fix = "restore the record from git (it is committed and anchored)"
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        anchored = f", while {places.anchor} anchors it" if os.path.lexists(root / places.anchor) else ""
        raise FreezeRecordError(f"{path}: missing{anchored}: the season is frozen; {fix}") from None
    except OSError as exc:
        raise FreezeRecordError(unreadable_text(path, exc, fix)) from None
    if stat.S_ISLNK(mode):
        raise FreezeRecordError(f"{path}: a symbolic link (to {os.readlink(path)}), not a regular file; {fix}")
    try:
        return read_bounded(path, PUBLISHED_LIMIT, follow_symlinks=False)
    except OSError as exc:
        raise FreezeRecordError(unreadable_text(path, exc, fix)) from None


def read_record(root: Path, places: Places) -> FreezeRecord | None:
    """The freeze record, or ``None`` when the season is not frozen; once frozen (a record or an anchor in the
    freeze folder), a record missing, not a regular file or not strict JSON is a :class:`FreezeRecordError`."""
    if not is_frozen(root, places):
        return None
    return FreezeRecord.from_bytes(record_bytes(root, places), str(root / places.record))


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
    if os.path.lexists(path):  # a dangling link: creating the salt through it would write who knows where
        raise FreezeRecordError(unreadable_text(path, FileNotFoundError(path), "give the salt file written by "
                                                "'corpus freeze', or a path where no file is"))
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
        check_place(root, places)  # never write a record through a link, or outside the checkout
        if os.path.lexists(root / places.anchor) and not os.path.lexists(root / places.record):
            raise FrozenMismatch(f"{places.anchor} exists: this track's season is anchored; a new season starts "
                                 "by removing its record and its anchor in one commit")
        if os.path.lexists(root / places.record):
            raise FrozenMismatch(f"{places.record} already exists: a season is frozen once; before the opening, "
                                 f"'corpus freeze --track {places.piste} --replaces PROOF_ID --motif TEXT' "
                                 "replaces it and keeps it (delete the record only to start a new season)")
        data = new_record(root, bareme, salt_file, places)
        write_record(root, places, data)
    return data


def new_record(root: Path, bareme: Path, salt_file: Path, places: Places, remplace: Replaced | None = None,
               refused_commitment: str | None = None) -> bytes:
    """The bytes of a record of the trees as they stand (the caller holds the builder lock); ``remplace``
    names the record it replaces. A salt whose commitment is ``refused_commitment`` (the replaced record's:
    the same salt) is refused: each record of a chain has its own salt, all published at the close."""
    bareme_hash = sha256_hex(_read(bareme))
    if bareme_hash != places.bareme_sha256:
        raise FrozenMismatch(f"{bareme} hashes to {bareme_hash}, not to the published barème section "
                             f"{places.bareme_sha256}")
    with reading(root):
        manifest = Manifest.load(root, places.manifest)
        tasks = _read(root / places.tasks_file)
        key = _read(root / places.key_file)
    salt = load_or_make_salt(salt_file, root)
    if refused_commitment is not None and commitment(salt, key) == refused_commitment:
        raise FrozenMismatch(f"{salt_file} is the salt of the record it replaces: give a new salt file (each "
                             "record has its own salt, every one published at the close); nothing written")
    return FreezeRecord(manifest.corpus, manifest.hash, bareme_hash, sha256_hex(tasks), commitment(salt, key),
                        places, remplace=remplace).to_bytes()


def write_record(root: Path, places: Places, data: bytes) -> None:
    """Write ``data`` as the track's record in force (the caller holds the builder lock), whole."""
    path = root / places.record
    try:
        if not path.parent.is_dir():  # freeze/<piste>/, and freeze/ itself before the first track's freeze
            make_parents(path.parent, root)
            make_dir(path.parent)
        write_atomic(path, data)
    except OSError as exc:
        raise FreezeRecordError(f"{exc.filename or path}: cannot write: {exc.strerror}; the season is not "
                                "frozen") from None


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


def _field_problems(record: FreezeRecord, values: dict[str, str], places: Places) -> list[str]:
    """Each field of ``record`` against what the repository gives it (``values``) and the track's texts."""
    expected = {**values, **record.expected_texts(places)}
    found = {"corpus": record.corpus, "manifest_hash": record.manifest_hash, "bareme.sha256": record.bareme_sha256,
             "taches.sha256": record.tasks_sha256, **dict(record.texts)}
    said = {"manifest_hash": lambda: f"manifest hash {expected['manifest_hash']} differs from the frozen "
                                     f"{found['manifest_hash']}",
            "taches.sha256": lambda: f"{places.tasks_file} hashes to {expected['taches.sha256']}, not to the "
                                     f"frozen {found['taches.sha256']}",
            "bareme.sha256": lambda: f"the record's barème hash {found['bareme.sha256']} is not the published "
                                     f"one {expected['bareme.sha256']}"}
    whats = {"corpus": "the manifest's corpus", "bareme.section": "the track's barème section",
             "taches.fichier": "the track's statements file", "cle.fichier": "the track's key file",
             "cle.sel": "what corpus freeze writes"}
    return [f"{places.record}: {name}: " + (said[name]() if name in said else
                                            f"{found[name]!r} is not {whats[name]} ({expected[name]!r})")
            for name in ("corpus", "manifest_hash", "bareme.section", "bareme.sha256", "taches.fichier",
                         "taches.sha256", "cle.fichier", "cle.sel")
            if found[name] != expected[name]]


def check_freeze(root: Path, salt_file: Path | None, places: Places) -> list[str]:
    """What the scorer checks before scoring (spec §8.5): every field of the record against the repository,
    its bytes against those ``corpus freeze`` writes, and with the salt the key commitment."""
    record = read_record(root, places)
    if record is None:
        return [f"{places.record} not found: the season is not frozen"]
    with reading(root):
        manifest = Manifest.read(root / places.manifest / MANIFEST_FILE)
        tasks_hash = sha256_hex(_read(root / places.tasks_file))
        key = _read(root / places.key_file)
        data = record_bytes(root, places)
    problems = _field_problems(record, {"corpus": manifest.corpus, "manifest_hash": manifest.hash,
                                        "bareme.sha256": places.bareme_sha256, "taches.sha256": tasks_hash},
                               places)
    if salt_file is not None and commitment(read_salt(salt_file), key) != record.key_commitment:
        problems.append(f"{places.record}: cle.engagement: sha256(salt ‖ {places.key_file}) differs from the "
                        "frozen commitment")
    rewritten = FreezeRecord(record.corpus, record.manifest_hash, record.bareme_sha256, record.tasks_sha256,
                             record.key_commitment, places, remplace=record.remplace).to_bytes()
    if not problems and data != rewritten:
        problems.append(f"{places.record}: its bytes are not those corpus freeze writes for its fields (spacing, "
                        f"order or escapes changed): what {places.served_record} serves changed; restore it from "
                        "git")
    return problems
