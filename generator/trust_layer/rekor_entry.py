"""A proof's Rekor entry verified offline, when the proof carries the entry itself (spec §4.1 condition 1).

Trust Layer writes one ``hashedrekord`` entry per batch whose artifact is the batch root's hex as UTF-8, and
serves only its ``uuid`` and ``log_index``: nothing offline can check that. When ``transparency_log.entry``
holds the entry as Rekor's own API returns it (``GET /api/v1/log/entries/{uuid}``: ``body``,
``integratedTime``, ``logID``, ``logIndex``, ``verification.signedEntryTimestamp``), it is verified against
a **pinned** Rekor public key (``--rekor-key``, Rekor's ECDSA P-256 key, PEM): the signed entry timestamp
(Rekor's signature over the canonical JSON of body, integratedTime, logID and logIndex), the log ID (the
SHA-256 of that key), the uuid (its last 64 hex are the RFC 6962 leaf hash of the body), and the body: a
hashedrekord over ``sha256(root hex)`` whose signature verifies with the public key it carries.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec

from generator.base.errors import GeneratorError
from generator.contract.hashing import canonical_json, sha256_hex
from generator.trust_layer.merkle import leaf as leaf_hash


class RekorKeyError(GeneratorError):
    """The pinned Rekor key cannot be used: one line, before any proof is judged."""


def load_rekor_key(pem: bytes, what: str = "--rekor-key") -> ec.EllipticCurvePublicKey:
    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, UnsupportedAlgorithm):
        raise RekorKeyError(f"{what}: not a PEM public key") from None
    if not isinstance(key, ec.EllipticCurvePublicKey):
        raise RekorKeyError(f"{what}: not an ECDSA public key (Rekor signs with ECDSA P-256)")
    return key


def _b64(text: Any, field: str) -> bytes:
    if not isinstance(text, str):
        raise ValueError(f"{field}: expected base64 text")
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{field}: not base64") from None


def _body_problem(body: bytes, root_hex: str) -> str:
    try:
        entry = json.loads(body)
        data = entry["spec"]["data"]["hash"]
        if not isinstance(data, dict):
            raise TypeError("spec.data.hash is not an object")
        signature = _b64(entry["spec"]["signature"]["content"], "body.spec.signature.content")
        key_pem = _b64(entry["spec"]["signature"]["publicKey"]["content"], "body.spec.signature.publicKey")
    except (ValueError, KeyError, TypeError) as exc:
        return f"transparency_log.entry.body: not a hashedrekord entry ({exc})"
    artifact = root_hex.encode("ascii")
    if entry.get("kind") != "hashedrekord" or data.get("algorithm") != "sha256" \
            or data.get("value") != sha256_hex(artifact):
        return ("transparency_log.entry.body: its hash is not sha256 of the batch root's hex: the entry logs "
                "another artifact")
    try:
        signer = serialization.load_pem_public_key(key_pem)
        if not isinstance(signer, ec.EllipticCurvePublicKey):
            return "transparency_log.entry.body: its public key is not ECDSA"
        signer.verify(signature, artifact, ec.ECDSA(hashes.SHA256()))
    except (ValueError, UnsupportedAlgorithm, InvalidSignature):
        return "transparency_log.entry.body: its signature does not verify over the batch root's hex"
    return ""


def rekor_problem(entry: Any, uuid: Any, root_hex: str, key: ec.EllipticCurvePublicKey) -> str:
    """Why ``entry`` is not Rekor's entry for the batch root (empty: it is), checked with the pinned ``key``."""
    if not isinstance(entry, dict):
        return "transparency_log.entry: expected Rekor's log entry object"
    try:
        body = _b64(entry.get("body"), "transparency_log.entry.body")
        verification = entry.get("verification")
        signed = _b64(verification.get("signedEntryTimestamp") if isinstance(verification, dict) else None,
                      "transparency_log.entry.verification.signedEntryTimestamp")
    except ValueError as exc:
        return str(exc)
    fields = {name: entry.get(name) for name in ("integratedTime", "logID", "logIndex")}
    if type(fields["integratedTime"]) is not int or type(fields["logIndex"]) is not int \
            or not isinstance(fields["logID"], str):
        return "transparency_log.entry: integratedTime, logIndex (integers) and logID (hex) are required"
    der = key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    if fields["logID"] != sha256_hex(der):
        return "transparency_log.entry.logID: not the pinned Rekor key's log (sha256 of the key differs)"
    payload = canonical_json({"body": entry["body"], **fields}).encode("ascii")  # Rekor's canonical entry
    try:
        key.verify(signed, payload, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        return ("transparency_log.entry.verification.signedEntryTimestamp: not Rekor's signature (pinned key) "
                "over the entry")
    leaf = leaf_hash(body).hex()
    if isinstance(uuid, str) and not uuid.endswith(leaf):
        return "transparency_log.uuid: not the leaf hash of the entry's body"
    return _body_problem(body, root_hex)
