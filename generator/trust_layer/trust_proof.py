"""A Trust Layer proof read as the proxy serves it, and verified offline (spec §4, §8.3; proof-spec SPEC.md).

Two shapes are read. The proof itself, as ``GET /v1/proof/{id}`` or ``/full`` returns it (or as the proxy
stores it): ``hashes.request`` / ``response`` / ``chain`` written ``sha256:<hex>``, ``parties``,
``certification_fee`` (or proof-spec's ``payment``), ``timestamp``, ``upstream_timestamp``,
``arkforge_signature`` and ``arkforge_pubkey``. And the opened pair of spec §4, ``{"proof_id",
"request_hash": {"nonce", "value"}, "response_hash": {"nonce", "value"}}``, which carries no chain and no
signature. A prefixed hash is the same hash as its bare hex.

Verifying a proof: its chain hash is recomputed from its fields (canonical JSON from ``spec_version`` 1.2 on,
proof-spec's plain concatenation for 1.0, 1.1, 2.0 and an absent version), the Ed25519 signature over that
chain's hex string is checked against a **pinned** key (the key a proof carries is only compared with it:
whoever forges a proof signs it with a key of their own), and ``parties.buyer_fingerprint`` is compared with
the SHA-256 of the key that had to make the call. Every failure is one line naming the field.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from generator.base.errors import GeneratorError
from generator.base.text_policy import escaped
from generator.contract.hashing import canonical_json, sha256_hex

HASH_PREFIX = "sha256:"
KEY_PREFIX = "ed25519:"
CANONICAL_VERSIONS = ("1.2", "2.1")  # chain = SHA-256 of the canonical JSON of its fields
LEGACY_VERSIONS = ("1.0", "1.1", "2.0")  # and an absent spec_version: the plain concatenation
_HEX64 = re.compile(r"[0-9a-f]{64}")
_B64URL = re.compile(r"[A-Za-z0-9_-]+")
PROOF_ID = re.compile(r"prf_[0-9]{8}_[0-9]{6}_[0-9a-f]{6,64}")  # the proxy's form, bounded (at most 84 chars)
PROOF_ID_FORM = "prf_YYYYMMDD_HHMMSS_<6 to 64 lowercase hex digits>"
PAIR_SHAPE = '{"proof_id", "request_hash": {"nonce", "value"}, "response_hash": {"nonce", "value"}}'


class ProofError(GeneratorError):
    """A proof cannot be read, or does not verify: the message names the field."""


def bare_hash(value: Any, field: str) -> str:
    """``sha256:<hex>`` or ``<hex>`` as the bare 64 lowercase hex digits (one hash, two spellings)."""
    text = value.removeprefix(HASH_PREFIX) if isinstance(value, str) else None
    if text is None or not _HEX64.fullmatch(text):
        raise ProofError(f"{field}: expected sha256:<64 lowercase hex digits>, got {_shown(value)}")
    return text


def check_proof_id(value: Any, field: str = "proof_id") -> str:
    """``value`` once it has the form of the proxy's proof ids: the one check before an id names a file or enters
    a published anchor (``../../x`` or a 20,000-character id never does)."""
    if not isinstance(value, str) or not PROOF_ID.fullmatch(value):
        raise ProofError(f"{field}: {_shown(value)} is not a proof id of Trust Layer's ({PROOF_ID_FORM})")
    return value


def fingerprint_of(api_key: str) -> str:
    """``parties.buyer_fingerprint``: the SHA-256 of the API key's text (proof-spec §4)."""
    return sha256_hex(api_key.encode("utf-8"))


def check_fingerprint(value: str, field: str) -> str:
    if not _HEX64.fullmatch(value):
        raise ProofError(f"{field}: expected the 64 lowercase hex digits of SHA-256(challenge key), got "
                         f"{_shown(value)}")
    return value


def _b64url(text: str, size: int, field: str, what: str) -> bytes:
    """``ed25519:<base64url without padding>`` decoded to exactly ``size`` bytes."""
    body = text.removeprefix(KEY_PREFIX) if isinstance(text, str) and text.startswith(KEY_PREFIX) else None
    expected = (4 * size + 2) // 3
    if body is None or len(body) != expected or not _B64URL.fullmatch(body):
        raise ProofError(f"{field}: expected {what} written ed25519:<{expected} base64url characters, no "
                         f"padding>, got {_shown(text)}")
    try:
        return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        raise ProofError(f"{field}: not base64url") from None


def public_key(text: str, field: str = "--trust-layer-key") -> Ed25519PublicKey:
    """An Ed25519 public key written as Trust Layer writes ``arkforge_pubkey``.

    ``from_public_bytes`` refuses only a length other than 32, which ``_b64url`` already guarantees."""
    return Ed25519PublicKey.from_public_bytes(_b64url(text, 32, field, "an Ed25519 public key"))


@dataclass(frozen=True)
class ChainFields:
    """What the chain hash binds (proof-spec §2), hashes as bare hex."""

    request_hash: str
    response_hash: str
    transaction_id: str
    timestamp: str
    buyer_fingerprint: str
    seller: str
    upstream_timestamp: str | None = None
    receipt_content_hash: str | None = None


def chain_hash(fields: ChainFields, spec_version: str | None) -> str:
    """The chain hash as the proxy computes it for ``spec_version`` (a version it never wrote: ProofError)."""
    optional = [(name, value) for name, value in (("upstream_timestamp", fields.upstream_timestamp),
                                                  ("receipt_content_hash", fields.receipt_content_hash))
                if value]
    base = [fields.request_hash, fields.response_hash, fields.transaction_id, fields.timestamp,
            fields.buyer_fingerprint, fields.seller]
    if spec_version in CANONICAL_VERSIONS:
        data = {"request_hash": base[0], "response_hash": base[1], "transaction_id": base[2],
                "timestamp": base[3], "buyer_fingerprint": base[4], "seller": base[5], **dict(optional)}
        return sha256_hex(canonical_json(data).encode("utf-8"))
    if spec_version is None or spec_version in LEGACY_VERSIONS:
        return sha256_hex("".join(base + [value for _, value in optional]).encode("utf-8"))
    known = ", ".join((*LEGACY_VERSIONS, *CANONICAL_VERSIONS))
    raise ProofError(f"spec_version: {_shown(spec_version)} is no version whose chain hash is known here "
                     f"({known}, or absent)")


@dataclass(frozen=True)
class TrustProof:
    """A proof as Trust Layer serves it (``chain`` set) or an opened pair of spec §4 (``chain`` None)."""

    proof_id: str
    request_hash: str
    response_hash: str
    spec_version: str | None = None
    chain: str | None = None
    fields: ChainFields | None = None  # None: the view omits what the chain binds (the public view)
    signature: str | None = None
    pubkey: str | None = None
    missing: str = ""  # the first chain field the view lacks, when ``fields`` is None
    tsr_base64: str | None = None
    tsa_status: str | None = None  # timestamp_authority.status: "submitted" until the token is issued

    @property
    def awaiting_token(self) -> bool:
        """Trust Layer has asked for the RFC 3161 token and not got it yet: the proof's time is not anchored
        (``submitted``, as every proof is right after its call; ``verified`` once the token is added)."""
        return self.tsa_status == "submitted" and self.tsr_base64 is None

    @property
    def is_pair(self) -> bool:
        return self.chain is None

    @property
    def timestamp(self) -> str | None:
        return self.fields.timestamp if self.fields is not None else None


def _shown(value: Any, limit: int = 80) -> str:
    text = repr(value) if not isinstance(value, str) else f"'{escaped(value)}'"  # one line, whatever it holds
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _at(value: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            return None
        value = value[key]
    return value


def _text(value: Any, field: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise ProofError(f"{field}: {'missing' if value is None else 'expected a string, got ' + _shown(value)}")
    return value


def _pair(value: dict[str, Any]) -> TrustProof:
    def opened(side: str) -> str:
        for part in ("nonce", "value"):
            found = _at(value, side, part)
            if not isinstance(found, str) or not found:
                raise ProofError(f"{side}.{part}: {'missing' if found is None else 'expected a non-empty string'}"
                                 f"; expected {PAIR_SHAPE}")
        return bare_hash(value[side]["value"], f"{side}.value")

    return TrustProof(_proof_id(value), opened("request_hash"), opened("response_hash"))


def _proof_id(value: dict[str, Any]) -> str:
    proof_id = value.get("proof_id")
    if not isinstance(proof_id, str) or not proof_id:
        raise ProofError("proof_id: missing" if proof_id is None else "proof_id: expected a non-empty string")
    return proof_id


def _transaction_id(value: dict[str, Any]) -> str | None:
    """``certification_fee.transaction_id`` (what the proxy writes) or ``payment.transaction_id`` (proof-spec)."""
    found = {name: _at(value, name, "transaction_id") for name in ("certification_fee", "payment")
             if _at(value, name, "transaction_id") is not None}
    if len(found) == 2 and found["certification_fee"] != found["payment"]:
        raise ProofError("certification_fee.transaction_id and payment.transaction_id differ: one proof binds "
                         "one transaction")
    for name, tid in found.items():
        return _text(tid, f"{name}.transaction_id")
    return None


def _served(value: dict[str, Any]) -> TrustProof:
    spec_version = value.get("spec_version")
    if spec_version is not None and not isinstance(spec_version, str):
        raise ProofError(f"spec_version: expected a string, got {_shown(spec_version)}")
    request = bare_hash(_at(value, "hashes", "request"), "hashes.request")
    response = bare_hash(_at(value, "hashes", "response"), "hashes.response")
    chain = bare_hash(_at(value, "hashes", "chain"), "hashes.chain")
    receipt = _at(value, "provider_payment", "receipt_content_hash")
    receipt = None if receipt is None else bare_hash(receipt, "provider_payment.receipt_content_hash")
    upstream = _text(value.get("upstream_timestamp"), "upstream_timestamp", optional=True)
    timestamp = _text(value.get("timestamp"), "timestamp")
    parts = {"parties.buyer_fingerprint": _at(value, "parties", "buyer_fingerprint"),
             "parties.seller": _at(value, "parties", "seller") if "parties" in value else value.get("seller"),
             "certification_fee.transaction_id": _transaction_id(value)}
    missing = next((name for name, found in parts.items() if found is None), "")
    fields = None
    if not missing:
        texts = [_text(found, name) for name, found in parts.items()]
        fields = ChainFields(request, response, texts[2] or "", timestamp or "", texts[0] or "", texts[1] or "",
                             upstream, receipt)
    signature = _text(value.get("arkforge_signature"), "arkforge_signature", optional=True)
    pubkey = _text(value.get("arkforge_pubkey"), "arkforge_pubkey", optional=True)
    tsr = _text(_at(value, "timestamp_authority", "tsr_base64"), "timestamp_authority.tsr_base64", optional=True)
    status = _text(_at(value, "timestamp_authority", "status"), "timestamp_authority.status", optional=True)
    return TrustProof(_proof_id(value), request, response, spec_version, chain, fields, signature, pubkey,
                      missing, tsr, status)


def read_proof(value: Any) -> TrustProof:
    """A proof in either shape; :class:`ProofError` names the first field that cannot be used."""
    if not isinstance(value, dict):
        raise ProofError(f"expected a JSON object (a Trust Layer proof, or {PAIR_SHAPE}), got {_shown(value)}")
    if "hashes" in value:
        return _served(value)
    if "request_hash" in value or "response_hash" in value:
        return _pair(value)
    raise ProofError("hashes: missing: expected a proof as GET /v1/proof/{id}/full returns it, or the opened "
                     f"pair {PAIR_SHAPE}")


def verification_problems(proof: TrustProof, pinned_key: str, fingerprint: str | None = None) -> list[str]:
    """Why ``proof`` is not a proof of Trust Layer's, signed by the pinned key, made with the key whose
    SHA-256 is ``fingerprint`` (None: not checked). Empty: it is."""
    where = f"proof {proof.proof_id}"
    if proof.chain is None:  # is_pair
        return [f"{where}: an opened pair carries no chain hash and no signature: give the proof as GET "
                "/v1/proof/{id}/full returns it"]
    if proof.fields is None:
        return [f"{where}: {proof.missing}: missing, so its chain hash cannot be recomputed (the public view of "
                "GET /v1/proof/{id} omits parties and certification_fee: give the /full view, fetched with "
                "the key that made the call)"]
    try:
        computed = chain_hash(proof.fields, proof.spec_version)
    except ProofError as exc:
        return [f"{where}: {exc}"]
    problems = []
    if computed != proof.chain:
        problems.append(f"{where}: hashes.chain: sha256:{proof.chain} is not the chain of its fields "
                        f"(sha256:{computed}, spec_version {proof.spec_version}): a field was changed after "
                        "signing")
    key = public_key(pinned_key)
    if proof.pubkey is not None and proof.pubkey != pinned_key:
        problems.append(f"{where}: arkforge_pubkey: {proof.pubkey} is not the pinned Trust Layer key {pinned_key}")
    if proof.signature is None:
        problems.append(f"{where}: arkforge_signature: missing: an unsigned proof proves no origin")
    else:
        try:
            signature = _b64url(proof.signature, 64, "arkforge_signature", "an Ed25519 signature")
            key.verify(signature, proof.chain.encode("ascii"))
        except ProofError as exc:
            problems.append(f"{where}: {exc}")
        except InvalidSignature:
            problems.append(f"{where}: arkforge_signature: not a signature of its chain hash by the pinned Trust "
                            f"Layer key {pinned_key}")
    if fingerprint is not None and proof.fields.buyer_fingerprint != fingerprint:
        problems.append(f"{where}: parties.buyer_fingerprint: {proof.fields.buyer_fingerprint} is not the "
                        f"challenge key's fingerprint {fingerprint}: the call was not made with the challenge's "
                        "key (spec §8.3)")
    return problems
