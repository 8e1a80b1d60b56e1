"""A freeze replaced before the opening, and the whole chain anchored (spec §8).

``corpus freeze --replaces PROOF_ID --motif TEXT`` (:func:`replace_freeze`) keeps the record in force and
its anchor (``<freeze folder>/remplaces/<n>/``, :mod:`generator.contract.freeze_chain`) and writes a record
naming them and the motive, to be served and anchored like the first. Only before the opening: after it, "un
changement en cours de saison n'est pas une correction : il invalide la saison" (spec §8), and the one way out
is ``corpus season invalidate``.

:func:`chain_problems` is what ``freeze-check`` and the scorer add for a chain: every kept link anchored (its
anchor verified offline against the pinned key, for the call of that record's bytes), each record naming the
proof_id and SHA-256 of the one it replaces, the anchors in time order, each replacement anchored before the
opening, every replaced record's commitment recomputed with its own salt. :func:`chain_entries` is the chain
as a publication shows it (every record, anchor and motive).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from pathlib import Path
from typing import TypedDict

from generator.base.errors import FreezeRecordError, FrozenMismatch
from generator.base.transaction import builder_lock, reading
from generator.contract.freeze import Replaced, check_freeze, new_record, write_record
from generator.contract.freeze_chain import (
    ChainLink,
    chain_of,
    keep_replaced,
    link_problems,
    replaced_salt_problems,
)
from generator.contract.invalidation import Invalidation, read_invalidation, write_invalidation
from generator.contract.manifest import MANIFEST_FILE, Manifest
from generator.contract.places import Places
from generator.trust_layer.anchor import Anchor, AnchorError, anchor_problems, record_call
from generator.trust_layer.anchor_time import AnchorTimeError, instant_text, proof_time
from generator.trust_layer.anchor_v3 import parse_time
from generator.trust_layer.proof_v3 import ProofV3, Window

AFTER_OPENING = ("un changement en cours de saison n'est pas une correction : il invalide la saison (spec §8)")


def anchor_time(anchor: Anchor) -> datetime | None:
    """The instant an anchor opens the season at: a 3.x anchor's RFC 3161 time (``heure``, verified when it was
    published), a 1.2 proof's time once it passes the time rule; None for an opened pair (no time)."""
    if isinstance(anchor.proof, ProofV3):
        return parse_time(anchor.heure) if anchor.heure else None
    fields = anchor.proof.fields
    if fields is None:
        return None
    try:
        return proof_time(fields.timestamp, fields.upstream_timestamp)
    except AnchorTimeError as exc:
        raise AnchorError(f"anchor {anchor.proof_id}: {exc}") from None


@dataclass(frozen=True)
class Replacement:
    """What ``corpus freeze --replaces`` did: the new record's bytes, where the replaced one is kept, the
    proof_id it replaces and the opening it was compared with."""

    data: bytes
    kept: Path
    replaced: str
    opening: datetime


def _in_force_anchor(root: Path, places: Places, links: Sequence[ChainLink], proof_id: str) -> Anchor:
    """The published anchor of the record in force, once ``proof_id`` names it (else one line: unknown, or
    replaced already)."""
    if not links:
        raise FrozenMismatch(f"--replaces {proof_id}: the track {places.piste} is not frozen ({places.record} not "
                             "found): 'corpus freeze' freezes it; nothing written")
    if not os.path.lexists(root / places.anchor):
        raise FrozenMismatch(f"--replaces {proof_id}: {places.record} is not anchored ({places.anchor} not "
                             "found): a record is replaced once its proof_id is published; anchor it first "
                             "('corpus freeze-anchor'); nothing written")
    anchor = Anchor.read(root / places.anchor)
    if anchor.proof_id == proof_id:
        return anchor
    for link in links[:-1]:
        if Anchor.read(root / link.anchor_path).proof_id == proof_id:
            raise FrozenMismatch(f"--replaces {proof_id}: not in force: it anchors {link.record_path}, already "
                                 f"replaced; the record in force is anchored by {anchor.proof_id}; nothing "
                                 "written")
    raise FrozenMismatch(f"--replaces {proof_id}: unknown: no anchor of the track {places.piste} has this "
                         f"proof_id (the record in force is anchored by {anchor.proof_id}); nothing written")


def replace_freeze(root: Path, places: Places, bareme: Path, salt_file: Path, proof_id: str, motif: str,
                   opening: datetime | None, now: datetime) -> Replacement:
    """Replace the record in force, anchored by ``proof_id``, before the opening (spec §8): keep it and its
    anchor in ``remplaces/<n>/``, write the new record (the trees as they stand, a new salt) naming the
    replaced one's SHA-256, ``proof_id`` and ``motif``; the new record is then served and anchored like the
    first. ``opening`` is the season's pinned opening; None: the anchor's time (the season opened then).

    One line, nothing written (:class:`FrozenMismatch`): an empty motive, an unknown or replaced proof_id, an
    unanchored record, an invalidated season, ``now`` at or after the opening."""
    if not motif.strip():
        raise FrozenMismatch("--motif is empty: a replacement is published with its motive (spec §8); nothing "
                             "written")
    with builder_lock(root):
        links = chain_of(root, places)
        anchor = _in_force_anchor(root, places, links, proof_id)
        invalidation = read_invalidation(root, places)
        if invalidation is not None:
            raise FrozenMismatch(f"the season of {places.piste} is invalidated ({invalidation.path}, "
                                 f"{invalidation.le}): nothing replaces a freeze of an invalidated season; a new "
                                 "season starts afresh; nothing written")
        opened = opening if opening is not None else anchor_time(anchor)
        if opened is None:
            raise FrozenMismatch(f"--replaces {proof_id}: its anchor carries no time and no opening is pinned: "
                                 "give --opening; nothing written")
        if now >= opened:
            said = "the pinned opening" if opening is not None else f"the time of its anchor {proof_id}"
            raise FrozenMismatch(f"--replaces {proof_id}: the season of {places.piste} opened at "
                                 f"{instant_text(opened)} ({said}), it is {instant_text(now)}: "
                                 f"{AFTER_OPENING}; the one way out: 'corpus season invalidate --track "
                                 f"{places.piste} --motif TEXT', then a new season; nothing written")
        problems = check_freeze(root, None, places)
        if problems:
            raise FrozenMismatch(f"{problems[0]}; the record in force fails its check: restore it before "
                                 "replacing it; nothing written")
        in_force = links[-1]
        remplace = Replaced(proof_id, in_force.sha256, motif.strip())
        data = new_record(root, bareme, salt_file, places, remplace, in_force.record.key_commitment)
        kept = keep_replaced(root, places, links)
        write_record(root, places, data)
        try:
            os.unlink(root / places.anchor)  # kept in remplaces/<n>/: the new record awaits its own anchor
        except OSError as exc:
            raise FreezeRecordError(f"{places.anchor}: cannot remove it ({exc.strerror}) after keeping it in "
                                    f"{kept}: remove it by hand, it anchors the replaced record") from None
    return Replacement(data, kept, proof_id, opened)


def chain_problems(root: Path, places: Places, salts: Sequence[Path] | None, trust_layer_key: str | None,
                   fingerprint: str | None, window: Window | None = None,
                   opening: datetime | None = None) -> list[str]:
    """Why the track's chain does not hold (empty: it does, or the track froze once and nothing was replaced).
    The record in force and its anchor are :func:`check_freeze`'s and ``check_anchor``'s; here, each kept
    record is verified like it: its anchor offline (pinned key, fingerprint, the call of its bytes), the
    proof_id and SHA-256 the next record names, anchors in time order, the last replacement anchored at or
    before ``opening`` when pinned (else the in-force anchor's time is the opening), and with ``salts`` (one
    per replaced record, in order) each commitment recomputed."""
    links = chain_of(root, places)
    if len(links) < 2:
        return []
    problems = link_problems(links)
    with reading(root):
        base_url = Manifest.read(root / places.manifest / MANIFEST_FILE).base_url
    times: list[tuple[ChainLink, Anchor, datetime | None]] = []
    for link in links:
        if link.in_force and not os.path.lexists(root / places.anchor):
            continue  # not anchored yet: check_anchor says so (or --anchor gives it)
        anchor = Anchor.read(root / link.anchor_path)
        if not link.in_force:
            problems += [f"{link.anchor_path}: {p}" for p in
                         anchor_problems(anchor, record_call(base_url, places, link.data), trust_layer_key,
                                         fingerprint, window)]
        times.append((link, anchor, anchor_time(anchor)))
    for (link, anchor, _), after in zip(times, links[1:], strict=False):
        named = after.record.remplace
        if not link.in_force and named is not None and named.proof_id != anchor.proof_id:
            problems.append(f"{after.record_path}: remplace.proof_id: {named.proof_id} is not the proof_id of "
                            f"{link.anchor_path} ({anchor.proof_id})")
    for (before, _, t0), (link, _, t1) in pairwise(times):
        if t0 is not None and t1 is not None and not t0 < t1:
            problems.append(f"{link.anchor_path}: anchored at {instant_text(t1)}, not after {before.anchor_path} "
                            f"({instant_text(t0)}): a replacement is anchored after the record it replaces")
    last = times[-1] if times else None
    if opening is not None and last is not None and last[2] is not None and last[2] > opening:
        problems.append(f"{last[0].anchor_path}: anchored at {instant_text(last[2])}, after the season's "
                        f"opening {instant_text(opening)}: a replacement after the opening invalidates the season "
                        "(spec §8)")
    if salts is not None:
        problems += replaced_salt_problems(root, places, links, salts)
    return problems


class ChainEntryJson(TypedDict):
    """One record of the chain as a publication lists it (French field names, as every published document)."""

    numero: int
    gel: str  # the record, checkout-relative
    sha256: str
    ancre: str | None  # the anchor file, checkout-relative; None: the record in force, not anchored yet
    proof_id: str | None
    heure: str | None
    en_vigueur: bool
    remplace: str | None  # the proof_id of the record it replaces
    motif: str | None  # why it replaced that record


def chain_entries(root: Path, places: Places) -> list[ChainEntryJson]:
    """Every record of the chain with its anchor, its proof_id, its time and the motive of the replacement it
    made: what the opening kit lists and the close publication holds (``[]``: not frozen)."""
    entries: list[ChainEntryJson] = []
    for link in chain_of(root, places):
        anchored = os.path.lexists(root / link.anchor_path)
        anchor = Anchor.read(root / link.anchor_path) if anchored else None
        when = anchor_time(anchor) if anchor is not None else None
        named = link.record.remplace
        entries.append({"numero": link.number, "gel": link.record_path.as_posix(), "sha256": link.sha256,
                        "ancre": link.anchor_path.as_posix() if anchored else None,
                        "proof_id": anchor.proof_id if anchor else None,
                        "heure": instant_text(when) if when else None, "en_vigueur": link.in_force,
                        "remplace": named.proof_id if named else None, "motif": named.motif if named else None})
    return entries


def invalidate_season(root: Path, places: Places, motif: str, now: datetime) -> Invalidation:
    """Record that the track's season is invalidated (spec §8: a change during the season invalidates it; the
    one answer is to publish it, close the season and start again): ``<freeze folder>/invalidation.json``
    with the time, the motive and the proof_id in force, written once. ``corpus index`` then publishes the
    invalidation and no ranking. Refused, one line, nothing written: an empty motive, a track never frozen,
    a season already invalidated."""
    if not motif.strip():
        raise FrozenMismatch("--motif is empty: an invalidation is published with its motive (spec §8); nothing "
                             "written")
    with builder_lock(root):
        links = chain_of(root, places)
        if not links:
            raise FrozenMismatch(f"the track {places.piste} is not frozen ({places.record} not found): there is "
                                 "no season to invalidate; nothing written")
        anchored = os.path.lexists(root / places.anchor)
        proof_id = Anchor.read(root / places.anchor).proof_id if anchored else None
        return write_invalidation(root, places, motif.strip(), now, proof_id, len(links))
