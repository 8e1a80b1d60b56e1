"""A proof-spec 3.x Trust Layer proof read as served and verified offline (spec §4.1, §10; CONTRACT §8).

From 3.0 on a proof carries no chain over values: it publishes one commitment per chain field
(``commitments``), ``hashes.chain`` is their Merkle root, signed (``arkforge_signature``), and the root of the
batch the chain joined (``batch_anchor``) is what the RFC 3161 token and Rekor anchor. From 3.1 the identity
triplet is committed too and opened to everyone (``disclosed``). The owner's ``GET /v1/proof/{id}/full`` adds
``commitment_nonces`` and ``chain_data``, which open every field (the freeze anchor uses them).

Reading (:func:`read_v3`) checks only the shapes, naming the field; every check a forger could fail is in
:func:`condition_1` and :func:`identity_problem`, so that a forged proof is *judged* (preuve invalide,
identité non liée) rather than refused as a file. Flat fields (``hashes.request``, ``agent_identity``...) are
kept only to report a Trust Layer incident when they differ from the opened value; they are never trusted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from generator.trust_layer.merkle import MerkleError, commitment, commitments_root, inclusion_root, leaf
from generator.trust_layer.rekor_entry import rekor_problem
from generator.trust_layer.trust_proof import (
    ProofError,
    _b64url,  # one decoder of ed25519:<base64url>, keys and signatures alike
    _shown,  # one way to quote a served value in a message
    bare_hash,
    public_key,
)
from generator.trust_layer.tsa_token import TokenError, verified_time

IDENTITY_FIELDS = ("agent_identity", "agent_identity_verified", "did_resolution_status")
CONSISTENCY = "identity_consistent"  # opened too when the proof commits it
COMMITMENTS_FROM = (3, 0)
IDENTITY_FROM = (3, 1)  # spec §4.1 condition 2: the identity triplet is anchored from 3.1 on
_VERSION = re.compile(r"([0-9]+)\.([0-9]+)")
_HEX64 = re.compile(r"[0-9a-f]{64}")


def version_of(text: Any) -> tuple[int, int] | None:
    """``"3.1"`` as ``(3, 1)``; anything else None (compared as numbers: "3.10" is after "3.9")."""
    found = _VERSION.fullmatch(text) if isinstance(text, str) else None
    return (int(found[1]), int(found[2])) if found else None


def is_v3(value: Any) -> bool:
    """A served proof whose ``spec_version`` is 3.0 or later: read with :func:`read_v3`."""
    version = version_of(value.get("spec_version")) if isinstance(value, dict) else None
    return version is not None and version >= COMMITMENTS_FROM


@dataclass(frozen=True)
class Opening:
    """A ``{nonce, value}`` pair that claims to open the commitment of one field."""

    nonce: str
    value: Any


@dataclass(frozen=True)
class BatchAnchor:
    status: str
    leaf_index: Any = None
    tree_size: Any = None
    audit_path: tuple[str, ...] = ()
    root: str | None = None


@dataclass(frozen=True)
class ProofV3:
    """A 3.x proof as served: what a third party reads, hashes as bare hex."""

    proof_id: str
    spec_version: str
    chain: str
    commitments: dict[str, str]
    signature: str | None
    pubkey: str | None
    batch: BatchAnchor | None
    tsr_base64: str | None
    tsa_status: str | None
    rekor: dict[str, Any] | None
    disclosed: dict[str, Opening]
    flat: dict[str, Any]  # hashes.request / hashes.response (bare) and the flat identity fields, as served
    timestamp: str | None
    owner: dict[str, Opening] = field(default_factory=dict)  # /full: commitment_nonces + chain_data
    is_pair: bool = False

    @property
    def version(self) -> tuple[int, int]:
        found = version_of(self.spec_version)
        assert found is not None
        return found

    @property
    def pending(self) -> bool:
        """The batch is not closed yet: neither valid nor invalid (spec §4.1, "en attente"). A proof with no
        ``batch_anchor`` at all is not pending but unanchored (condition 1 fails): stripping the block must
        not buy a submission an endless "en attente"."""
        return self.batch is not None and self.batch.status == "pending"


def _object(value: Any, name: str, *, optional: bool = False) -> dict[str, Any] | None:
    if value is None and optional:
        return None
    if not isinstance(value, dict):
        raise ProofError(f"{name}: {'missing' if value is None else 'expected an object, got ' + _shown(value)}")
    return value


def _text(value: Any, name: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise ProofError(f"{name}: expected a string, got {_shown(value)}")
    return value


def _openings(value: Any, name: str) -> dict[str, Opening]:
    found = _object(value, name, optional=True) or {}
    openings = {}
    for key, pair in found.items():
        pair = _object(pair, f"{name}.{key}")
        assert pair is not None
        if set(pair) != {"nonce", "value"} or not isinstance(pair["nonce"], str):
            raise ProofError(f"{name}.{key}: expected {{\"nonce\": \"<64 hex>\", \"value\": ...}}")
        openings[key] = Opening(pair["nonce"], pair["value"])
    return openings


def _owner(value: dict[str, Any]) -> dict[str, Opening]:
    """``commitment_nonces`` + ``chain_data`` of the ``/full`` view, as openings (absent: none)."""
    nonces = _object(value.get("commitment_nonces"), "commitment_nonces", optional=True)
    data = _object(value.get("chain_data"), "chain_data", optional=True)
    if nonces is None and data is None:
        return {}
    if nonces is None or data is None or set(nonces) != set(data):
        raise ProofError("commitment_nonces and chain_data: the /full view gives both, for the same fields")
    for key, nonce in nonces.items():
        if not isinstance(nonce, str):
            raise ProofError(f"commitment_nonces.{key}: expected 64 hex digits")
    return {key: Opening(nonces[key], data[key]) for key in sorted(nonces)}


def _batch(value: Any) -> BatchAnchor | None:
    found = _object(value, "batch_anchor", optional=True)
    if found is None:
        return None
    status = _text(found.get("status"), "batch_anchor.status")
    if status is None:
        raise ProofError("batch_anchor.status: missing")
    if status == "pending":
        return BatchAnchor(status)
    path = found.get("audit_path")
    if not isinstance(path, list) or not all(isinstance(h, str) for h in path):
        raise ProofError("batch_anchor.audit_path: expected a list of hex hashes")
    root = bare_hash(found.get("root"), "batch_anchor.root")
    return BatchAnchor(status, found.get("leaf_index"), found.get("tree_size"),
                       tuple(h.removeprefix("sha256:") for h in path), root)


def read_v3(value: Any) -> ProofV3:
    """A 3.x proof (public view, ``/full`` view, or public view plus the owner's pairs); :class:`ProofError`
    names the first field whose shape is wrong."""
    doc = _object(value, "proof")
    assert doc is not None
    proof_id = doc.get("proof_id")
    if not isinstance(proof_id, str) or not proof_id:
        raise ProofError("proof_id: missing" if proof_id is None else "proof_id: expected a non-empty string")
    spec_version = doc.get("spec_version")
    if not is_v3(doc):
        raise ProofError(f"spec_version: {_shown(spec_version)} is not 3.0 or later")
    hashes = _object(doc.get("hashes"), "hashes")
    assert hashes is not None
    chain = bare_hash(hashes.get("chain"), "hashes.chain")
    raw = _object(doc.get("commitments"), "commitments")
    assert raw is not None
    if not raw:
        raise ProofError("commitments: empty: a 3.x chain is the Merkle root of its commitments")
    commitments = {name: bare_hash(h, f"commitments.{name}") for name, h in raw.items()}
    flat = {side: bare_hash(hashes[key], f"hashes.{key}") for side, key in
            (("request_hash", "request"), ("response_hash", "response")) if hashes.get(key) is not None}
    flat.update({name: doc[name] for name in (*IDENTITY_FIELDS, CONSISTENCY) if name in doc})
    authority = _object(doc.get("timestamp_authority"), "timestamp_authority", optional=True) or {}
    rekor = _object(doc.get("transparency_log"), "transparency_log", optional=True)
    return ProofV3(proof_id, str(spec_version), chain, commitments,
                   _text(doc.get("arkforge_signature"), "arkforge_signature"),
                   _text(doc.get("arkforge_pubkey"), "arkforge_pubkey"), _batch(doc.get("batch_anchor")),
                   _text(authority.get("tsr_base64"), "timestamp_authority.tsr_base64"),
                   _text(authority.get("status"), "timestamp_authority.status"), rekor,
                   _openings(doc.get("disclosed"), "disclosed"), flat, _text(doc.get("timestamp"), "timestamp"),
                   _owner(doc))


# ------------------------------------------------------------------------------ openings


def opens(name: str, opening: Opening, committed: str | None) -> bool:
    """``opening`` opens ``committed`` (bare hex) as the commitment of field ``name``."""
    if committed is None or not _HEX64.fullmatch(opening.nonce):
        return False
    return commitment(name, bytes.fromhex(opening.nonce), opening.value).hex() == committed


def opening_problem(proof: ProofV3, name: str, opening: Opening | None, source: str) -> str:
    """Why ``opening`` does not open ``commitments.<name>`` (empty: it does). ``source`` names where the
    pair comes from (``disclosed``, the submission's disclosures, ``chain_data``)."""
    if name not in proof.commitments:
        return f"commitments.{name}: not committed by this proof"
    if opening is None:
        return f"{source}.{name}: missing: commitments.{name} is not opened"
    if not _HEX64.fullmatch(opening.nonce):
        return f"{source}.{name}.nonce: expected 64 lowercase hex digits (32 bytes)"
    opened = commitment(name, bytes.fromhex(opening.nonce), opening.value).hex()
    if opened != proof.commitments[name]:
        return (f"{source}.{name}: sha256({name} ‖ 0x00 ‖ nonce ‖ canonical_json(value)) is {opened[:16]}…, not "
                f"commitments.{name} {proof.commitments[name][:16]}…: the pair does not open the anchored "
                "commitment")
    return ""


# ------------------------------------------------------------------------------ condition 1


@dataclass(frozen=True)
class Window:
    """The pinned authority (PEM bytes) and the season a token's time must fall in, bounds included."""

    ca_pem: bytes | None = None
    cert_pem: bytes | None = None
    opening: datetime | None = None
    closing: datetime | None = None
    rekor_key: ec.EllipticCurvePublicKey | None = None  # --rekor-key: checks an entry the proof carries


@dataclass(frozen=True)
class Check:
    """Condition 1 on one proof: its problems (the first is the cause), whether its batch is pending, the
    token's verified time, the key that signed it, and what was not checked, in words."""

    problems: list[str]
    pending: bool = False
    time: datetime | None = None
    key: str | None = None
    unchecked: list[str] = field(default_factory=list)


def _signature_key(proof: ProofV3, keys: Sequence[str]) -> tuple[str | None, str]:
    """The pinned key whose Ed25519 signature over the chain's hex verifies, or why none does."""
    if proof.signature is None:
        return None, "arkforge_signature: missing: an unsigned proof proves no origin"
    try:
        signature = _b64url(proof.signature, 64, "arkforge_signature", "an Ed25519 signature")
    except ProofError as exc:
        return None, str(exc)
    for key in keys:
        verifier: Ed25519PublicKey = public_key(key)
        try:
            verifier.verify(signature, proof.chain.encode("ascii"))
        except InvalidSignature:
            continue
        return key, ""
    pinned = ", ".join(keys) or "none given"
    return None, (f"arkforge_signature: not a signature of hashes.chain by a pinned Trust Layer key ({pinned}): "
                  "the proof was signed by another key")


def _batch_problem(proof: ProofV3) -> str:
    batch = proof.batch
    if batch is None:
        return "batch_anchor: missing: the chain is in no anchored batch"
    assert batch.root is not None
    if batch.status != "anchored":
        return f"batch_anchor.status: {_shown(batch.status)}, not anchored"
    index, size = batch.leaf_index, batch.tree_size
    if type(size) is not int or size < 1:
        return f"batch_anchor.tree_size: {_shown(size)} is not a tree size"
    if type(index) is not int or not 0 <= index < size:
        return f"batch_anchor.leaf_index: {_shown(index)} is not in [0, {size}) (tree_size {size})"
    if not all(_HEX64.fullmatch(h) for h in batch.audit_path):
        return "batch_anchor.audit_path: expected sha256 hashes (64 lowercase hex digits)"
    try:
        reached = inclusion_root(leaf(bytes.fromhex(proof.chain)), index, size,
                                 [bytes.fromhex(h) for h in batch.audit_path]).hex()
    except MerkleError as exc:
        return f"batch_anchor: {exc} (an overstated tree_size, or a path of another tree)"
    if reached != batch.root:
        return (f"batch_anchor: the walk from leaf(hashes.chain) along audit_path reaches {reached[:16]}…, not "
                f"root {batch.root[:16]}…: the chain is not in the anchored batch")
    return ""


def _time_problem(proof: ProofV3, window: Window) -> tuple[str, datetime | None, str]:
    """``(problem, time, unchecked)`` of the batch root's RFC 3161 token."""
    assert proof.batch is not None and proof.batch.root is not None
    if proof.tsr_base64 is None:
        return (f"timestamp_authority: no RFC 3161 token (status {_shown(proof.tsa_status)}): the batch root's "
                "time is anchored by no third party", None, "")
    if window.ca_pem is None:
        return "", None, ("the RFC 3161 token is not verified (no --tsa-ca given): its time within the season is "
                          "not checked")
    try:
        when = verified_time(proof.tsr_base64, bytes.fromhex(proof.batch.root), window.ca_pem, window.cert_pem)
    except TokenError as exc:
        return str(exc), None, ""
    shown = f"{when:%Y-%m-%dT%H:%M:%SZ}"
    when = when.replace(microsecond=0)  # the season's bounds are written to the second, and included
    if window.opening is not None and when < window.opening:
        return (f"timestamp_authority: RFC 3161 time {shown} is before the season opened "
                f"({window.opening:%Y-%m-%dT%H:%M:%SZ}, the anchor's token time)"), when, ""
    if window.closing is not None and when > window.closing:
        return (f"timestamp_authority: RFC 3161 time {shown} is after the close "
                f"({window.closing:%Y-%m-%dT%H:%M:%SZ})"), when, ""
    close = "" if window.closing is not None else "the close not checked (no --season-close)"
    return "", when, close


def rekor_check(proof: ProofV3, window: Window) -> tuple[str, str]:
    """``(problem, unchecked)`` of the batch's Rekor entry. Verified offline only when the proof carries the
    entry itself (``transparency_log.entry``) and a Rekor key is pinned (:mod:`.rekor_entry`); Trust Layer
    serves a uuid and a log index only, so otherwise it is said in words, the same for every proof (a report
    counts them once), never silent."""
    log = proof.rekor or {}
    entry = log.get("entry")
    if entry is not None and window.rekor_key is not None:
        assert proof.batch is not None and proof.batch.root is not None
        return rekor_problem(entry, log.get("uuid"), proof.batch.root, window.rekor_key), ""
    if entry is not None:
        return "", "Rekor not checked offline: the proofs carry their Rekor entries, but no --rekor-key is pinned"
    if log.get("status") != "verified":
        return "", (f"Rekor not checked offline: the batch has no Rekor entry (transparency_log status "
                    f"{_shown(log.get('status'))})")
    return "", ("Rekor not checked offline: the served transparency_log gives only its uuid and log_index, no "
                "entry body, inclusion proof nor signed entry timestamp that a pinned Rekor key could verify")


def condition_1(proof: ProofV3, keys: Sequence[str], window: Window) -> Check:
    """Every check of spec §4.1 condition 1 a third party can make on the served proof, in order: the chain
    is the Merkle root of the commitments, signed by a pinned key; then a pending batch is en attente; then
    the inclusion in the batch, the token over the batch root by the pinned authority within the season."""
    problems: list[str] = []
    computed = commitments_root({k: bytes.fromhex(v) for k, v in proof.commitments.items()}).hex()
    if computed != proof.chain:
        problems.append(f"hashes.chain: sha256:{proof.chain[:16]}… is not the Merkle root of its commitments "
                        f"(sha256:{computed[:16]}…): a commitment was changed after signing")
    key, problem = _signature_key(proof, keys)
    problems += [problem] if problem else []
    if proof.pubkey is not None and proof.pubkey not in keys:
        problems.append(f"arkforge_pubkey: {proof.pubkey} is not a pinned Trust Layer key")
    if problems:
        return Check(problems, key=key)
    if proof.pending:
        return Check([], pending=True, key=key)
    problem = _batch_problem(proof)
    if problem:
        return Check([problem], key=key)
    problem, when, unchecked = _time_problem(proof, window)
    logged, not_logged = rekor_check(proof, window)
    notes = [n for n in (unchecked, not_logged) if n]
    return Check([p for p in (problem, logged) if p], time=when, key=key, unchecked=notes)


# ------------------------------------------------------------------------------ condition 2


def identity_problem(proof: ProofV3) -> str:
    """Why ``disclosed`` does not open a bound, verified identity (empty: it does; the DID itself is compared
    with the submission's by the caller). Below 3.1 the identity is covered by no anchor: not receivable."""
    if proof.version < IDENTITY_FROM:
        return (f"spec_version {proof.spec_version} is below 3.1: the identity it carries is covered by no "
                "anchor, not receivable for condition 2 (spec §4.1, §10)")
    names = (*IDENTITY_FIELDS, *((CONSISTENCY,) if CONSISTENCY in proof.commitments else ()))
    for name in names:
        problem = opening_problem(proof, name, proof.disclosed.get(name), "disclosed")
        if problem:
            return f"the identity does not open: {problem}"
    opened = {name: proof.disclosed[name].value for name in IDENTITY_FIELDS}
    if opened["agent_identity_verified"] is not True:
        shown = _shown(opened["agent_identity_verified"])
        return f"disclosed.agent_identity_verified opens to {shown}, not true: no DID binding verified"
    if opened["did_resolution_status"] != "bound":
        return (f"disclosed.did_resolution_status opens to {_shown(opened['did_resolution_status'])}, not "
                "'bound'")
    if not isinstance(opened["agent_identity"], str) or not opened["agent_identity"]:
        return f"disclosed.agent_identity opens to {_shown(opened['agent_identity'])}, not a DID"
    return ""


def flat_incidents(proof: ProofV3) -> list[str]:
    """Flat identity fields that differ from the value ``disclosed`` opens: a Trust Layer incident."""
    return [f"Trust Layer incident: the flat {name} {_shown(proof.flat[name])} differs from the opened value "
            f"{_shown(proof.disclosed[name].value)}" for name in (*IDENTITY_FIELDS, CONSISTENCY)
            if name in proof.flat and name in proof.disclosed and proof.flat[name] != proof.disclosed[name].value]
