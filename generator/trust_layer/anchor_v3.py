"""The freeze anchor in proof-spec 3.x (spec §8.3, §8.5): the anchoring call's proof, opened by its owner.

A 3.x public view shows commitments, not values, so the anchor is the proof as the proxy serves it to the
challenge's key: the public view plus the owner's ``commitment_nonces`` and ``chain_data`` (or the ``/full``
view, which holds both). Those pairs open ``request_hash``, ``response_hash``, ``seller`` and
``buyer_fingerprint``; each must open its commitment and be the call of the record served at the track's
``/gel``, made with the challenge's key. Everything of condition 1 is checked too, and the season opens at
the token's time (never Trust Layer's ``timestamp``). The published anchor (``corpus-anchor/2``) keeps the
proof with its token and the pinned authority's certificates, so ``freeze-check`` verifies it again years
later without the proxy.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from generator.trust_layer.anchor_time import AnchorTimeError, check_anchor_time, instant_text, parse_instant
from generator.trust_layer.proof_v3 import Check, ProofV3, Window, condition_1, opening_problem

ANCHOR_FORMAT_V3 = "corpus-anchor/2"
ANCHOR_KEYS_V3 = ("format", "proof_id", "heure", "trust_layer_key", "challenge_key_fingerprint",
                  "autorite_horodatage", "proof")


@dataclass(frozen=True)
class CallHashes:
    """What the anchoring call must open to: the request and response hashes, the seller, the key's
    fingerprint (None: not compared)."""

    target: str
    request_hash: str
    response_hash: str
    seller: str
    fingerprint: str | None


def anchor_v3_problems(proof: ProofV3, call: CallHashes, keys: Sequence[str],
                       window: Window) -> tuple[list[str], Check]:
    """Why ``proof`` is not the 3.x proof of ``call`` (empty: it is), and the condition 1 check (its token
    time is the season's opening)."""
    where = f"anchor {proof.proof_id}"
    check = condition_1(proof, keys, window)
    problems = [f"{where}: {p}" for p in check.problems]
    if not check.problems and check.pending:
        problems.append(f"{where}: batch_anchor.status is pending: its batch is not anchored yet; anchor the "
                        "freeze once the proof carries its batch anchor and token")
    if not check.problems and not check.pending and check.time is None:
        problems.append(f"{where}: its RFC 3161 token is not verified: give --tsa-ca and --tsa-cert (the season "
                        "opens at the token's time)")
    if check.time is not None:
        try:  # the one time rule of an anchor (trust_layer/anchor_time.py), on the token's time
            check_anchor_time(check.time, None, datetime.now(UTC), field="timestamp_authority (token time)")
        except AnchorTimeError as exc:
            problems.append(f"{where}: {exc}")
    if not proof.owner:
        problems.append(f"{where}: commitment_nonces and chain_data: missing: give the proof as GET "
                        "/v1/proof/{id}/full returns it to the challenge's key (the public view opens no hash)")
        return problems, check
    wanted = {"request_hash": call.request_hash, "response_hash": call.response_hash, "seller": call.seller,
              "buyer_fingerprint": call.fingerprint}
    for name, value in wanted.items():
        problem = opening_problem(proof, name, proof.owner.get(name), "chain_data")
        if problem:
            problems.append(f"{where}: {problem}")
        elif value is not None and proof.owner[name].value != value:
            problems.append(f"{where}: chain_data.{name}: opens to {proof.owner[name].value!r}, not "
                            f"{value!r} ({_why(name, call)})")
    return problems, check


def _why(name: str, call: CallHashes) -> str:
    return {"request_hash": f"the call GET {call.target}: the proof anchors another request",
            "response_hash": "the record's response hash: the proof anchors another body",
            "seller": f"the host of {call.target}",
            "buyer_fingerprint": "the challenge key's fingerprint: the call was not made with the challenge's "
                                 "key (spec §8.3)"}[name]


def published_v3(document: Any, proof_id: str, token_time: datetime, key: str, fingerprint: str,
                 ca_pem: bytes, cert_pem: bytes | None) -> bytes:
    """``<freeze folder>/anchor.json`` for a 3.x proof: the proof as given (with its token), the key that
    signed it, the fingerprint, the pinned authority's PEMs and the token's time (the season's opening)."""
    document = {"format": ANCHOR_FORMAT_V3, "proof_id": proof_id, "heure": instant_text(token_time),
                "trust_layer_key": key, "challenge_key_fingerprint": fingerprint,
                "autorite_horodatage": {"ca_pem": ca_pem.decode("ascii"),
                                        "cert_pem": cert_pem.decode("ascii") if cert_pem else None},
                "proof": document}
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def parse_time(text: Any) -> datetime | None:
    """``YYYY-MM-DDTHH:MM:SSZ`` exactly (how an anchor writes its ``heure``) as a UTC time, else None."""
    try:
        when = parse_instant(text, "heure")
    except AnchorTimeError:
        return None
    return when if text == instant_text(when) else None
