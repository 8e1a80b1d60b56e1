"""A track's freeze chain (spec §8): the records it froze, the first one and each that replaced another
before the opening, in order; the last one is in force.

The record in force is always ``<freeze folder>/record.json`` with its ``anchor.json``: what ``/gel`` serves
and the ceremony anchors, what the build guard and the scorer read. ``corpus freeze --replaces`` first keeps
the record it replaces and its anchor, byte for byte, as ``<freeze folder>/remplaces/<n>/record.json`` and
``anchor.json`` (``n`` from 1, the first freeze, in the chain's order), then writes the new record, which
names the one it replaces (its SHA-256 and the proof_id that anchored it) and the motive. A kept link is never
rewritten. Checking each link's anchor is :mod:`generator.trust_layer.freeze_chain`'s; this module reads the
chain, checks that each record names the previous one, and recomputes each replaced record's commitment
with its own salt.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.base.bounded_read import PUBLISHED_LIMIT, read_bounded
from generator.base.errors import FreezeRecordError, FrozenMismatch, unreadable_text
from generator.base.path_checks import inside_checkout
from generator.base.transaction import make_dir, make_parents, reading, write_file
from generator.contract.freeze import FreezeRecord, commitment, read_salt, record_bytes
from generator.contract.hashing import sha256_hex
from generator.contract.manifest import MANIFEST_FILE, Manifest
from generator.contract.places import Places

REPLACED = "remplaces"  # <freeze folder>/remplaces/<n>/: the replaced records and their anchors, kept


def replaced_folder(places: Places) -> Path:
    """``<freeze folder>/remplaces``: one numbered folder per replaced record, checkout-relative."""
    return Path(places.freeze) / REPLACED


@dataclass(frozen=True)
class ChainLink:
    """One record of the chain: its number (1: the first freeze), where it and its anchor are, its bytes."""

    number: int
    record_path: Path  # checkout-relative
    anchor_path: Path  # checkout-relative; the anchor may be missing (the record in force, not anchored yet)
    data: bytes
    record: FreezeRecord
    in_force: bool

    @property
    def sha256(self) -> str:
        """The SHA-256 of the record's bytes, as the record replacing it names them."""
        return sha256_hex(self.data)


def _regular(root: Path, path: Path, what: str) -> bytes:
    full = root / path
    inside_checkout(root, path, FreezeRecordError)
    fix = "restore the freeze folder from git: a replaced record and its anchor are kept, never rewritten"
    try:
        mode = os.lstat(full).st_mode
    except FileNotFoundError:
        raise FreezeRecordError(f"{path}: missing ({what}); {fix}") from None
    except OSError as exc:
        raise FreezeRecordError(unreadable_text(full, exc, fix)) from None
    if not stat.S_ISREG(mode):
        raise FreezeRecordError(f"{path}: not a regular file ({what}); {fix}")
    try:
        return read_bounded(full, PUBLISHED_LIMIT, follow_symlinks=False)
    except OSError as exc:
        raise FreezeRecordError(unreadable_text(full, exc, fix)) from None


def _replaced_numbers(root: Path, places: Places) -> int:
    """How many records were replaced: the folder holds exactly ``1`` .. ``k``, nothing else."""
    folder = replaced_folder(places)
    inside_checkout(root, folder, FreezeRecordError)
    if not os.path.lexists(root / folder):
        return 0
    try:
        names = sorted(os.listdir(root / folder))
    except OSError as exc:
        raise FreezeRecordError(unreadable_text(root / folder, exc, "restore it from git")) from None
    wanted = [str(n) for n in range(1, len(names) + 1)]
    if sorted(names, key=lambda n: (len(n), n)) != wanted:
        extra = sorted(set(names) - set(wanted)) or [f"{n} (missing)" for n in wanted if n not in names]
        raise FreezeRecordError(f"{folder}: holds {', '.join(extra)}; it holds the replaced records numbered 1, "
                                "2, ... in the chain's order, nothing else: restore it from git")
    return len(names)


def chain_of(root: Path, places: Places) -> list[ChainLink]:
    """Every record of the track's chain in order, the one in force last; ``[]`` when the track is not frozen.

    A kept record or anchor missing, not a regular file or not a record, and a record in force that replaces
    nothing while records were replaced, are a :class:`FreezeRecordError` naming the file."""
    count = _replaced_numbers(root, places)
    links: list[ChainLink] = []
    for number in range(1, count + 1):
        folder = replaced_folder(places) / str(number)
        record_path, anchor_path = folder / "record.json", folder / "anchor.json"
        data = _regular(root, record_path, f"record {number} of the chain")
        _regular(root, anchor_path, f"the anchor of record {number} of the chain")
        links.append(ChainLink(number, record_path, anchor_path, data,
                               FreezeRecord.from_bytes(data, str(root / record_path)), False))
    if os.path.lexists(root / places.record):
        data = record_bytes(root, places)
        links.append(ChainLink(count + 1, places.record, places.anchor, data,
                               FreezeRecord.from_bytes(data, str(root / places.record)), True))
    elif count:
        raise FreezeRecordError(f"{places.record}: missing, while {count} replaced record(s) are kept in "
                                f"{replaced_folder(places)}: restore it from git")
    return links


def link_problems(links: Sequence[ChainLink]) -> list[str]:
    """Each record names the one before it (its SHA-256; the proof_id is checked with the anchors), and the
    first one names none."""
    problems: list[str] = []
    for before, link in zip([None, *links], links, strict=False):
        named = link.record.remplace
        if before is None:
            if named is not None:
                problems.append(f"{link.record_path}: remplace: the first record of the chain replaces nothing, "
                                f"yet it names {named.proof_id}")
            continue
        if named is None:
            problems.append(f"{link.record_path}: remplace: missing; the record follows {before.record_path} in "
                            "the chain, so it must name it (its SHA-256, its proof_id, the motive)")
        elif named.sha256 != before.sha256:
            problems.append(f"{link.record_path}: remplace.sha256: {named.sha256} is not the SHA-256 of "
                            f"{before.record_path} ({before.sha256}): the replaced record was changed")
    return problems


def replaced_salt_problems(root: Path, places: Places, links: Sequence[ChainLink],
                           salts: Sequence[Path]) -> list[str]:
    """Each replaced record checked as the scorer checks the one in force (spec §8.5): one salt per replaced
    record, in the chain's order, each recomputing its commitment ``sha256(salt ‖ clé)`` over the season's
    key; its manifest hash, statements hash and corpus those of the trees (a replacement re-anchors the
    trees as they stand: the build guard keeps them); its bytes those ``corpus freeze`` writes."""
    replaced = [link for link in links if not link.in_force]
    if len(salts) != len(replaced):
        shown = ", ".join(str(link.record_path) for link in links)
        return [f"the chain holds {len(links)} record(s) ({shown}): give --salt-file once per record, in the "
                f"chain's order ({len(salts) + 1} given); every salt of the chain is published at the close"]
    with reading(root):
        manifest = Manifest.read(root / places.manifest / MANIFEST_FILE)
        tasks_hash = sha256_hex(read_bounded(root / places.tasks_file, PUBLISHED_LIMIT))
        key = read_bounded(root / places.key_file, PUBLISHED_LIMIT)
    problems: list[str] = []
    for link, salt in zip(replaced, salts, strict=True):
        r, where = link.record, link.record_path
        if commitment(read_salt(salt), key) != r.key_commitment:
            problems.append(f"{where}: cle.engagement: sha256({salt} ‖ {places.key_file}) differs from the "
                            f"commitment of record {link.number} (its salt is the chain's salt number "
                            f"{link.number})")
        for name, found, expected in (("corpus", r.corpus, manifest.corpus),
                                      ("manifest_hash", r.manifest_hash, manifest.hash),
                                      ("taches.sha256", r.tasks_sha256, tasks_hash)):
            if found != expected:
                problems.append(f"{where}: {name}: {found} is not the trees' {expected}")
        if r.to_bytes() != link.data:
            problems.append(f"{where}: its bytes are not those corpus freeze writes for its fields: restore it "
                            "from git")
    return problems


def keep_replaced(root: Path, places: Places, links: Sequence[ChainLink]) -> Path:
    """Copy the record in force and its anchor, byte for byte, to the next ``remplaces/<n>/`` (written once,
    never over a file); the caller holds the builder lock, then writes the new record. Returns the folder."""
    in_force = links[-1]
    folder = replaced_folder(places) / str(in_force.number)
    anchor = _regular(root, places.anchor, "the anchor of the record in force")
    try:
        make_parents(root / folder, root)
        make_dir(root / folder)
        write_file(root / folder / "record.json", in_force.data)
        write_file(root / folder / "anchor.json", anchor)
    except OSError as exc:
        raise FreezeRecordError(f"{exc.filename or folder}: cannot write: {exc.strerror}; the record in force is "
                                "unchanged") from None
    if _regular(root, folder / "record.json", "kept") != in_force.data:
        raise FrozenMismatch(f"{folder}/record.json: not the bytes of the record in force; the record in force "
                             "is unchanged")
    return folder
