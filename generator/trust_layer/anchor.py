"""The freeze anchored through the proxy (spec §8.3, §8.5): one proxied call whose response is the record.

Trust Layer certifies the request it forwarded and the body it received. So a track's freeze record is
served at a fixed canonical path (``track.yaml``, ``gel_servi``), and one call of that path through the proxy,
made with the challenge's key, anchors it: its ``request_hash`` names the path, its ``response_hash`` is the
hash of the record's bytes. :func:`record_call` says which call to make and which two hashes it will have;
:func:`anchor_problems` checks the proof of that call (as Trust Layer serves it, verified offline, or the
opened pair of spec §4) against the record. The published anchor (``<freeze folder>/anchor.json``, written by
``corpus freeze-anchor``) keeps the proof as fetched with the pinned Trust Layer key and the challenge key's
fingerprint it was checked against.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from generator.base import strict_json
from generator.base.bounded_read import SUBMISSION_LIMIT
from generator.base.errors import GeneratorError, read_file
from generator.base.text_policy import cut
from generator.contract.hashing import request_hash, response_hash
from generator.contract.places import Places
from generator.trust_layer.anchor_time import AnchorTimeError, proof_time
from generator.trust_layer.anchor_v3 import (
    ANCHOR_FORMAT_V3,
    ANCHOR_KEYS_V3,
    CallHashes,
    anchor_v3_problems,
    parse_time,
)
from generator.trust_layer.full_view import view_problems
from generator.trust_layer.proof_v3 import ProofV3, Window, read_v3
from generator.trust_layer.served_proof import ServedProof, read_served_proof
from generator.trust_layer.trust_proof import (
    ProofError,
    TrustProof,
    check_fingerprint,
    check_proof_id,
    public_key,
    read_proof,
    verification_problems,
)

ANCHOR_FORMAT = "corpus-anchor/1"
_ANCHOR_KEYS = ("format", "proof_id", "heure", "trust_layer_key", "challenge_key_fingerprint", "proof")


class AnchorError(GeneratorError):
    """The anchor file cannot be used (missing, not JSON, not a proof nor its opened pair)."""


@dataclass(frozen=True)
class RecordCall:
    """The proxied call that anchors a freeze record, and the two hashes the proxy will give it."""

    target: str
    request_hash: str
    response_hash: str
    method: str = "GET"

    @property
    def seller(self) -> str:
        """What the proxy writes as ``parties.seller``: the target's host."""
        return urlsplit(self.target).hostname or ""

    def lines(self) -> list[str]:
        return [f"target: {self.target}", f"method: {self.method}", "payload: {}",
                f"request_hash: {self.request_hash}", f"response_hash: {self.response_hash}"]


def record_call(base_url: str, places: Places, record: bytes) -> RecordCall:
    """The call of ``base_url + places.served_record`` and the hashes of it and of ``record`` (CONTRACT §2)."""
    target = base_url + places.served_record
    return RecordCall(target, request_hash(target), response_hash(record))



def _check_fields(value: dict[str, Any], format_name: str, keys: Sequence[str]) -> None:
    """A published anchor holds exactly the fields of its format: an unknown one or a missing one is named."""
    for key in sorted(set(value) - set(keys)):
        raise ProofError(f"{cut(key)}: unknown field of a {format_name} anchor ({', '.join(keys)})")
    for key in keys:
        if key not in value:
            raise ProofError(f"{key}: missing")


def _published_fields(value: dict[str, Any], proof_id: str) -> tuple[str, str]:
    """What every published anchor states beside its proof, checked: the proof id (the proxy's form, the
    proof's own), the Trust Layer key and the challenge key's fingerprint, returned as (key, fingerprint)."""
    check_proof_id(value["proof_id"])
    check_proof_id(proof_id, "proof.proof_id")
    key, fingerprint = value["trust_layer_key"], value["challenge_key_fingerprint"]
    if not isinstance(key, str):
        raise ProofError("trust_layer_key: expected ed25519:<base64url>")
    public_key(key, "trust_layer_key")
    if not isinstance(fingerprint, str):
        raise ProofError("challenge_key_fingerprint: expected 64 lowercase hex digits")
    check_fingerprint(fingerprint, "challenge_key_fingerprint")
    if value["proof_id"] != proof_id:
        raise ProofError(f"proof_id: {cut(value['proof_id'])} is not the proof's {cut(proof_id)}")
    return key, fingerprint

@dataclass(frozen=True)
class Anchor:
    """A proof of the anchoring call: read from a proof file, a pair file or the published anchor.

    ``trust_layer_key`` and ``fingerprint`` are those the published anchor was checked against (None for a
    bare proof or pair); ``document`` is the proof as fetched."""

    proof: TrustProof | ProofV3
    document: Any
    trust_layer_key: str | None = None
    fingerprint: str | None = None
    authority: tuple[bytes, bytes | None] | None = None  # 3.x published anchor: the pinned authority's PEMs
    heure: str | None = None  # 3.x published anchor: the token's time, the season's opening

    @property
    def proof_id(self) -> str:
        return self.proof.proof_id

    @classmethod
    def parse(cls, value: Any) -> Anchor:
        """``value`` parsed from JSON; :class:`ProofError` names the field at fault."""
        if isinstance(value, dict) and value.get("format") == ANCHOR_FORMAT_V3:
            return cls._parse_v3(value)
        if not (isinstance(value, dict) and value.get("format") == ANCHOR_FORMAT):
            proof: ServedProof = read_served_proof(value)
            check_proof_id(proof.proof_id)  # an anchor's id is published: the proxy's form only
            return cls(proof, value)
        _check_fields(value, ANCHOR_FORMAT, _ANCHOR_KEYS)
        proof = read_proof(value["proof"])
        key, fingerprint = _published_fields(value, proof.proof_id)
        if proof.is_pair:
            raise ProofError("proof: an opened pair: a published anchor holds the proof as Trust Layer serves it")
        if value["heure"] != proof.timestamp:
            raise ProofError(f"heure: {cut(value['heure'])} is not the proof's timestamp {cut(proof.timestamp)}")
        return cls(proof, value["proof"], key, fingerprint)

    @classmethod
    def _parse_v3(cls, value: dict[str, Any]) -> Anchor:
        """A published ``corpus-anchor/2``: every field there, the proof a 3.x proof, the PEMs text."""
        _check_fields(value, ANCHOR_FORMAT_V3, ANCHOR_KEYS_V3)
        proof = read_v3(value["proof"])
        key, fingerprint = _published_fields(value, proof.proof_id)
        tsa = value["autorite_horodatage"]
        if parse_time(value["heure"]) is None:
            raise ProofError("heure: expected the token's time written YYYY-MM-DDTHH:MM:SSZ")
        if not (isinstance(tsa, dict) and set(tsa) == {"ca_pem", "cert_pem"} and isinstance(tsa["ca_pem"], str)
                and isinstance(tsa["cert_pem"], str | None)):
            raise ProofError('autorite_horodatage: expected {"ca_pem": "<PEM>", "cert_pem": "<PEM>" or null}')
        cert = tsa["cert_pem"].encode("ascii", "replace") if tsa["cert_pem"] else None
        return cls(proof, value["proof"], key, fingerprint, (tsa["ca_pem"].encode("ascii", "replace"), cert),
                   value["heure"])

    def v3_words(self) -> str:
        """What was verified of a 3.x anchor, said by freeze-check and score (empty for a 1.2 proof)."""
        if not isinstance(self.proof, ProofV3):
            return ""
        when = f"its RFC 3161 token at {self.heure} (the season's opening)" if self.heure else "its token"
        return (f"spec {self.proof.spec_version}: commitments root, signature by the pinned key, batch inclusion, "
                f"{when} by the pinned authority, the owner's pairs opening the call and the challenge's key; "
                "Rekor not checked offline")

    @classmethod
    def read(cls, path: Path) -> Anchor:
        data = read_file(path, AnchorError, "not found: give the proof of the anchoring call (GET "
                         "/v1/proof/{id}/full) or its opened pair", limit=SUBMISSION_LIMIT)
        try:  # strictly, as every file a participant or an operator hands us: a key twice is refused
            value = strict_json.document(data)
        except strict_json.NotJson as exc:
            raise AnchorError(exc.text(path)) from None
        try:
            return cls.parse(value)
        except ProofError as exc:
            raise AnchorError(f"{path}: {exc}") from None

    def published(self, trust_layer_key: str, fingerprint: str) -> bytes:
        """``<freeze folder>/anchor.json``: the proof as fetched, the pinned key, the fingerprint, its time."""
        document = {"format": ANCHOR_FORMAT, "proof_id": self.proof_id, "heure": self.proof.timestamp,
                    "trust_layer_key": trust_layer_key, "challenge_key_fingerprint": fingerprint,
                    "proof": self.document}
        return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def anchor_problems(anchor: Anchor, call: RecordCall, trust_layer_key: str | None = None,
                    fingerprint: str | None = None, window: Window | None = None) -> list[str]:
    """Why ``anchor`` is not the proof of ``call`` (empty: it is). A proof as Trust Layer serves it is
    verified offline against ``trust_layer_key`` (required for it) and ``fingerprint``; an opened pair carries
    neither chain nor signature, so only its two hashes are compared. A 3.x proof is checked by
    :func:`anchor_v3_problems` against ``window``, the pinned authority: never the one the anchor names, since
    Trust Layer's signature covers the chain, not the token (whoever rewrites an anchor.json can stamp its root
    again with an authority of their own, and name it)."""
    proof, where = anchor.proof, f"anchor {anchor.proof_id}"
    if isinstance(proof, ProofV3):
        if trust_layer_key is None:
            return [f"{where}: its signature was not checked against a pinned key: give --trust-layer-key "
                    "ed25519:<base64url>, or pin it once (corpus pin --track PISTE --trust-layer-key "
                    "ed25519:<GET /v1/pubkey>) (the key a proof or a published anchor names proves nothing)"]
        if window is None or window.ca_pem is None:
            return [f"{where}: its RFC 3161 token, which opens the season, was not checked against a pinned "
                    "authority: give --tsa-ca and --tsa-cert, or pin them once (corpus pin --track PISTE --tsa-ca "
                    "CA.pem --tsa-cert TSA.pem) (the authority a published anchor names proves nothing)"]
        if anchor.authority is not None and anchor.authority != (window.ca_pem, window.cert_pem):
            return [f"{where}: autorite_horodatage: the published anchor names another timestamp authority than "
                    "the pinned --tsa-ca/--tsa-cert"]
        hashes = CallHashes(call.target, call.request_hash, call.response_hash, call.seller, fingerprint)
        problems, check = anchor_v3_problems(proof, hashes, [trust_layer_key], window)
        problems += [f"{where}: {p}" for p in view_problems(proof, anchor.document)]  # an edited copy
        if anchor.heure is not None and check.time is not None \
                and parse_time(anchor.heure) != check.time.replace(microsecond=0):  # heure: to the second
            problems.append(f"{where}: heure: {anchor.heure} is not the token's time "
                            f"{check.time:%Y-%m-%dT%H:%M:%SZ}")
        return problems
    problems = []
    if not proof.is_pair:
        if trust_layer_key is None:
            problems.append(f"{where}: its signature was not checked against a pinned key: give "
                            "--trust-layer-key ed25519:<base64url>, or pin trust_layer_key in the track's "
                            "track.yaml (the key a proof or a published anchor names proves nothing)")
        else:
            problems += verification_problems(proof, trust_layer_key, fingerprint)
        if proof.fields is not None:
            try:  # the one time rule (trust_layer/anchor_time.py): valid, not ahead of now, not before the record
                proof_time(proof.fields.timestamp, proof.fields.upstream_timestamp)
            except AnchorTimeError as exc:
                problems.append(f"{where}: {exc}")
        if proof.fields is not None and proof.fields.seller != call.seller:
            problems.append(f"{where}: parties.seller: {proof.fields.seller!r} is not the host of {call.target} "
                            f"({call.seller!r})")
    request_field, response_field = (("request_hash.value", "response_hash.value") if proof.is_pair
                                     else ("hashes.request", "hashes.response"))
    if proof.request_hash != call.request_hash:
        problems.append(f"{where}: {request_field}: sha256:{proof.request_hash} is not the call GET {call.target} "
                        f"(expected sha256:{call.request_hash}): the proof anchors another request")
    if proof.response_hash != call.response_hash:
        problems.append(f"{where}: {response_field}: sha256:{proof.response_hash} is not the record's response "
                        f"hash (expected sha256:{call.response_hash}): the proof anchors another body")
    return problems
