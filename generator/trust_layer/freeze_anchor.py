"""The freeze record anchored (spec §8.3, §8.5): the proxied call that anchors a track's record, its proof
checked against the record as it stands, and the published anchor (``<freeze folder>/anchor.json``) written
once.

The record itself, its bytes and the build guard are :mod:`generator.contract.freeze`'s: the corpus publishes
them, and this layer only anchors them with Trust Layer.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

from generator.base.bounded_read import PUBLISHED_LIMIT, read_bounded
from generator.base.errors import FreezeRecordError, FrozenMismatch
from generator.base.transaction import builder_lock, reading, write_file
from generator.contract.freeze import check_freeze, check_place, read_record, record_bytes
from generator.contract.manifest import MANIFEST_FILE, Manifest
from generator.contract.places import Places
from generator.trust_layer.anchor import Anchor, RecordCall, anchor_problems, record_call
from generator.trust_layer.anchor_v3 import CallHashes, anchor_v3_problems, published_v3
from generator.trust_layer.full_view import kept_view, view_problems
from generator.trust_layer.proof_v3 import ProofV3, Window
from generator.trust_layer.tsa_token import Authority


def record_call_of(root: Path, places: Places) -> RecordCall:
    """The proxied call that anchors the track's freeze record, as it stands, and the hashes it will have."""
    with reading(root):
        base_url = Manifest.read(root / places.manifest / MANIFEST_FILE).base_url
        record = record_bytes(root, places)
    return record_call(base_url, places, record)


def _pinned(option: str | None, published: str | None, what: str, flag: str) -> tuple[str | None, list[str]]:
    """The value given on the command line, else the published anchor's; both and different: a problem."""
    if option is not None and published is not None and option != published:
        return option, [f"{flag} {option} is not the {what} the published anchor was checked against "
                        f"({published})"]
    return (option if option is not None else published), []


def check_anchor(root: Path, places: Places, anchor_file: Path | None, proofs: dict[str, Any] | None = None,
                 trust_layer_key: str | None = None, fingerprint: str | None = None,
                 window: Window | None = None) -> tuple[Anchor | None, list[str]]:
    """The anchor and why it is not the proof of the record served (spec §8.3, §8.5); ``(None, [])`` when no
    anchor is given nor published. ``anchor_file`` overrides the published ``<freeze folder>/anchor.json``. The
    Trust Layer key is ``trust_layer_key``, else the one the track pins (``track.yaml``), never the one the
    published anchor names; the challenge key's fingerprint defaults to the published one. With
    ``proofs`` (the third-party verification of ``corpus score --proofs``), an opened pair must be held valid
    and bound there, since it carries no signature to check here."""
    check_place(root, places)
    published_path = root / places.anchor
    published = Anchor.read(published_path) if os.path.lexists(published_path) else None
    if anchor_file is None and published is None:
        return None, []
    anchor = Anchor.read(anchor_file) if anchor_file is not None else published
    assert anchor is not None
    # The key is pinned by the command line or the track's configuration, never taken from the published
    # anchor: an anchor.json re-made with another key names that key (anchor_problems says none was pinned).
    flag = "--trust-layer-key" if trust_layer_key is not None else f"track.yaml trust_layer_key of {places.piste}"
    key = trust_layer_key if trust_layer_key is not None else places.trust_layer_key
    problems = _pinned(key, published.trust_layer_key if published else None, "Trust Layer key", flag)[1]
    fingerprint, more = _pinned(fingerprint, published.fingerprint if published else None,
                                "challenge key fingerprint", "--challenge-key-fingerprint")
    problems += more + anchor_problems(anchor, record_call_of(root, places), key, fingerprint, window)
    if proofs is not None and anchor.proof.is_pair:
        verdict = proofs.get(anchor.proof_id)
        held = isinstance(verdict, dict) and verdict.get("valide") is True and verdict.get("identite_liee") is True
        if not held:
            problems.append(f"anchor {anchor.proof_id}: the proofs file does not hold it as valid and bound to "
                            "the challenge's identity (conditions 1 and 2)")
    return anchor, problems


def freeze_anchor(root: Path, places: Places, proof_file: Path, trust_layer_key: str,
                  fingerprint: str) -> tuple[Anchor, bool]:
    """Check the proof of the anchoring call against the track's record and write the published anchor
    ``<freeze folder>/anchor.json``; ``(anchor, written)``, ``written`` False when that very anchor is there.

    Refuses (:class:`FrozenMismatch`, one line, nothing written) unless the record passes the freeze check
    and the proof, verified offline against ``trust_layer_key``, was made with the key of ``fingerprint``
    for the call of the record as it stands."""
    with builder_lock(root):
        if read_record(root, places) is None:
            raise FrozenMismatch(f"{places.record} not found: run 'corpus freeze' first, serve the record, then "
                                 "anchor it")
        problems = check_freeze(root, None, places)
        anchor = Anchor.read(proof_file)
        problems += anchor_problems(anchor, record_call_of(root, places), trust_layer_key, fingerprint)
        if anchor.proof.is_pair:
            problems.insert(0, f"{proof_file}: an opened pair carries no chain hash and no signature: give the "
                               "proof as GET /v1/proof/{id}/full returns it")
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise FrozenMismatch(f"{problems[0]}{more}; nothing written")
        return anchor, _publish(root, places, anchor.published(trust_layer_key, fingerprint))


def _publish(root: Path, places: Places, data: bytes) -> bool:
    """Write the published anchor; False when that very anchor is there, refused when another is."""
    path = root / places.anchor
    if os.path.lexists(path):
        try:
            same = read_bounded(path, PUBLISHED_LIMIT, follow_symlinks=False) == data
        except OSError:
            same = False
        if same:
            return False
        raise FrozenMismatch(f"{places.anchor} already exists and anchors the record otherwise: a record is "
                             "anchored once; nothing written")
    try:
        write_file(path, data)
    except OSError as exc:
        raise FreezeRecordError(f"{exc.filename or path}: cannot write: {exc.strerror}; nothing "
                                "anchored") from None
    return True


def freeze_anchor_v3(root: Path, places: Places, anchor: Anchor, keys: list[str], fingerprint: str,
                     authority: Authority) -> tuple[Anchor, bool, datetime]:
    """:func:`freeze_anchor` for a 3.x proof (``anchor`` read from the file given): everything of condition 1
    with ``authority`` pinned, the owner's pairs opening the call of the record as it stands with the
    challenge's key; then ``corpus-anchor/2`` is written. ``(anchor, written, the token's time)``."""
    assert isinstance(anchor.proof, ProofV3)
    ca, cert = authority.pems()
    with builder_lock(root):
        if read_record(root, places) is None:
            raise FrozenMismatch(f"{places.record} not found: run 'corpus freeze' first, serve the record, then "
                                 "anchor it")
        problems = check_freeze(root, None, places)
        call = record_call_of(root, places)
        found, check = anchor_v3_problems(anchor.proof, CallHashes(call.target, call.request_hash,
                                                                   call.response_hash, call.seller, fingerprint),
                                          keys, Window(ca, cert))
        problems += found + [f"anchor {anchor.proof_id}: {p}"
                             for p in view_problems(anchor.proof, anchor.document)]
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise FrozenMismatch(f"{problems[0]}{more}; nothing written")
        assert check.time is not None and check.key is not None
        data = published_v3(kept_view(anchor.proof, anchor.document), anchor.proof_id, check.time, check.key,
                            fingerprint, ca, cert)
        return anchor, _publish(root, places, data), check.time

