"""A Trust Layer proof issuer for the tests, proof-spec 3.x, written from the spec (CONTRACT §8, RFC 6962) with
``hashlib``, ``json`` and ``cryptography`` only: nothing of ``generator`` is imported, so a bug shared by the
verifier and its test data cannot hide.

It issues what the proxy serves: per-field commitments of the chain data, ``hashes.chain`` their Merkle root,
the Ed25519 ``arkforge_signature`` over that root's hex, and, once a batch closes, each proof's inclusion in
the batch (``batch_anchor``) with the batch root's RFC 3161 token from a local authority
(``trust_layer_fixtures.Authority``, openssl's RFC 3161 server: ``rfc3161-client`` verifies tokens but cannot
issue them). Views: :meth:`Issued.public` (``GET /v1/proof/{id}``) and :meth:`Issued.full` (``/full``, the
owner's nonces and values). Every field can be spoiled after issuing, which is how the negative tests are
made.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import secrets
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from trust_layer_fixtures import Authority

SELLER = "corpus.arkforge.tech"
IDENTITY = ("agent_identity", "agent_identity_verified", "did_resolution_status")


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def commit(name: str, nonce_hex: str, value: Any) -> str:
    """sha256(utf8(field) || 0x00 || nonce || utf8(canonical_json(value))), hex."""
    data = name.encode() + b"\x00" + bytes.fromhex(nonce_hex) + canonical(value).encode()
    return hashlib.sha256(data).hexdigest()


def _leaf(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def _node(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _k(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


def mth(data: list[bytes]) -> bytes:
    """RFC 6962 §2.1 MTH over raw entries (each hashed as a leaf here)."""
    if len(data) == 1:
        return _leaf(data[0])
    k = _k(len(data))
    return _node(mth(data[:k]), mth(data[k:]))


def audit_path(m: int, data: list[bytes]) -> list[bytes]:
    """RFC 6962 §2.1.1 PATH(m, D[n])."""
    if len(data) == 1:
        return []
    k = _k(len(data))
    if m < k:
        return [*audit_path(m, data[:k]), mth(data[k:])]
    return [*audit_path(m - k, data[k:]), mth(data[:k])]


def public_text(private: Ed25519PrivateKey) -> str:
    raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return "ed25519:" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def proof_id_at(when: datetime, tail: str) -> str:
    return f"prf_{when:%Y%m%d_%H%M%S}_{tail}"


def with_proxy_ids(sub: dict[str, Any], start: int = 0) -> dict[str, Any]:
    """A copy of a §4 submission whose proof ids have the proxy's form (prf_YYYYMMDD_HHMMSS_<hex>), numbered
    from ``start`` (give each submission of a participant its own range: a proof id names one proof)."""
    now = datetime.now(UTC)
    renamed = {old: proof_id_at(now, f"{start + i:06x}") for i, old in enumerate(sorted(sub["disclosures"]))}
    sub = copy.deepcopy(sub)
    sub["disclosures"] = {renamed[k]: v for k, v in sub["disclosures"].items()}
    for a in sub["assertions"]:
        a["proof_ids"] = [renamed[p] for p in a["proof_ids"]]
    return sub


@dataclass
class Issued:
    """One proof as the proxy keeps it: chain data, nonces, commitments, and the served parts."""

    proof_id: str
    spec_version: str
    chain_data: dict[str, Any]
    nonces: dict[str, str]
    commitments: dict[str, str]
    chain: str
    signature: str
    pubkey: str
    timestamp: str
    parties: dict[str, Any]
    batch_anchor: dict[str, Any] = field(default_factory=lambda: {"status": "pending", "batch_id": "batch_open"})
    timestamp_authority: dict[str, Any] = field(default_factory=lambda: {"status": "pending"})
    transparency_log: dict[str, Any] | None = None

    def pair(self, name: str) -> dict[str, Any]:
        return {"nonce": self.nonces[name], "value": self.chain_data[name]}

    def public(self) -> dict[str, Any]:
        """``GET /v1/proof/{id}`` as served (spec 3.1: ``disclosed`` opens the identity triplet)."""
        view: dict[str, Any] = {
            "proof_id": self.proof_id, "is_demo": False, "spec_version": self.spec_version,
            "hashes": {"request": f"sha256:{self.chain_data['request_hash']}",
                       "response": f"sha256:{self.chain_data['response_hash']}", "chain": f"sha256:{self.chain}"},
            "commitments": {k: f"sha256:{v}" for k, v in self.commitments.items()},
            "batch_anchor": copy.deepcopy(self.batch_anchor),
            "timestamp_authority": copy.deepcopy(self.timestamp_authority),
            "timestamp": self.timestamp, "upstream_timestamp": None, "verification_algorithm": None,
            "arkforge_signature": self.signature, "arkforge_pubkey": self.pubkey, "identity_consistent": None,
            "views_count": 0, "transaction_success": True, "upstream_status_code": 200, "disputed": None,
            "dispute_id": None, "transparency_log": copy.deepcopy(self.transparency_log),
            "agent_identity": self.parties["agent_identity"],
            "agent_identity_verified": self.parties["agent_identity_verified"],
            "did_resolution_status": self.parties["did_resolution_status"], "seller": SELLER,
            "provider_payment": None}
        if self.spec_version == "3.1":
            view["disclosed"] = {name: self.pair(name) for name in IDENTITY}
        return view

    def full(self) -> dict[str, Any]:
        """``GET /v1/proof/{id}/full``, the owner's view: parties, fee, every nonce and value."""
        view = self.public()
        view.update({"parties": copy.deepcopy(self.parties),
                     "certification_fee": {"transaction_id": "free_tier", "amount": 0.0, "currency": "eur",
                                           "status": "free_tier", "method": "free_tier"},
                     "buyer_reputation_score": None, "buyer_profile_url": None,
                     "commitment_nonces": dict(self.nonces), "chain_data": copy.deepcopy(self.chain_data)})
        return view

    def disclosure(self) -> dict[str, Any]:
        """The submission's §4 pairs for this proof."""
        return {"request_hash": self.pair("request_hash"), "response_hash": self.pair("response_hash")}


class RekorLog:
    """A transparency log of the tests shaped as Rekor's API answers (``GET /api/v1/log/entries/{uuid}``):
    a hashedrekord entry per batch, its signed entry timestamp by the log's ECDSA P-256 key."""

    def __init__(self) -> None:
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.submitter = ec.generate_private_key(ec.SECP256R1())  # Trust Layer's own Rekor key
        self.index = 2818513499

    def pem(self) -> bytes:
        return self.key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)

    def entry(self, artifact_hex: str) -> tuple[str, dict[str, Any]]:
        """``(uuid, entry)`` logging ``artifact_hex`` as UTF-8, as Trust Layer submits a batch root."""
        artifact = artifact_hex.encode()
        public = self.submitter.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
        signature = base64.b64encode(self.submitter.sign(artifact, ec.ECDSA(hashes.SHA256()))).decode()
        digest = {"algorithm": "sha256", "value": hashlib.sha256(artifact).hexdigest()}
        record = {"apiVersion": "0.0.1", "kind": "hashedrekord",
                  "spec": {"data": {"hash": digest},
                           "signature": {"content": signature,
                                         "publicKey": {"content": base64.b64encode(public).decode()}}}}
        body = base64.b64encode(canonical(record).encode()).decode()
        self.index += 1
        der = self.key.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
        fields = {"body": body, "integratedTime": 1796380800, "logID": hashlib.sha256(der).hexdigest(),
                  "logIndex": self.index}
        signed = self.key.sign(canonical(fields).encode(), ec.ECDSA(hashes.SHA256()))
        uuid = "24296fb24b8ad77a" + hashlib.sha256(b"\x00" + base64.b64decode(body)).hexdigest()
        return uuid, {**fields, "verification": {"signedEntryTimestamp": base64.b64encode(signed).decode()}}


class Issuer:
    """A Trust Layer of the tests: its signing key, a local RFC 3161 authority, batches of any size."""

    def __init__(self, authority: Authority | None, private: Ed25519PrivateKey | None = None,
                 rekor: RekorLog | None = None) -> None:
        self.private = private or Ed25519PrivateKey.generate()
        self.key = public_text(self.private)
        self.authority = authority
        self.rekor = rekor  # None: the transparency_log as Trust Layer serves it (uuid and index only)

    def proof(self, request_hash: str, response_hash: str, *, agent_did: str | None, api_key: str = "participant",
              proof_id: str | None = None, spec: str = "3.1", verified: bool | None = True,
              status: str | None = "bound", nonces: dict[str, str] | None = None,
              when: datetime | None = None) -> Issued:
        when = when or datetime.now(UTC).replace(microsecond=0)
        stamp = f"{when:%Y-%m-%dT%H:%M:%SZ}"
        chain_data: dict[str, Any] = {"request_hash": request_hash, "response_hash": response_hash,
                                      "transaction_id": "free_tier", "timestamp": stamp,
                                      "buyer_fingerprint": hashlib.sha256(api_key.encode()).hexdigest(),
                                      "seller": SELLER}
        parties = {"buyer_fingerprint": chain_data["buyer_fingerprint"], "seller": SELLER,
                   "agent_identity": agent_did, "agent_identity_verified": True if verified else None,
                   "did_resolution_status": status, "agent_version": None}
        if spec == "3.1":
            chain_data.update({name: parties[name] for name in IDENTITY})
        given = nonces or {}
        all_nonces = {name: given.get(name) or secrets.token_hex(32) for name in chain_data}
        commitments = {name: commit(name, all_nonces[name], value) for name, value in chain_data.items()}
        chain = self.root_of(commitments)
        signature = "ed25519:" + base64.urlsafe_b64encode(self.private.sign(chain.encode())).rstrip(b"=").decode()
        return Issued(proof_id or proof_id_at(when, secrets.token_hex(3)), spec, chain_data, all_nonces,
                      commitments, chain, signature, self.key, stamp, parties)

    @staticmethod
    def root_of(commitments: dict[str, str]) -> str:
        """hashes.chain: the tree hash of leaf(commitment) over the fields sorted by name."""
        return mth([bytes.fromhex(commitments[name]) for name in sorted(commitments)]).hex()

    def resign(self, issued: Issued) -> None:
        """Recompute the chain of (edited) commitments and sign it again, as an issuer would."""
        issued.chain = self.root_of(issued.commitments)
        issued.signature = "ed25519:" + base64.urlsafe_b64encode(
            self.private.sign(issued.chain.encode())).rstrip(b"=").decode()

    def proofs_of(self, sub: dict[str, Any]) -> list[Issued]:
        """One proof per proof id a §4 submission discloses, issued for its DID with its own pairs' nonces (so
        that its disclosures open them), in the order of the ids."""
        sides = ("request_hash", "response_hash")
        return [self.proof(pair["request_hash"]["value"], pair["response_hash"]["value"],
                           agent_did=sub["agent_did"], proof_id=proof_id,
                           nonces={side: pair[side]["nonce"] for side in sides})
                for proof_id, pair in sorted(sub["disclosures"].items())]

    @staticmethod
    def sign_with_another_key(issued: Issued) -> None:
        """A forgery: the chain signed by a key of the forger's own, which it names as its pubkey."""
        other = Ed25519PrivateKey.generate()
        issued.signature = "ed25519:" + base64.urlsafe_b64encode(
            other.sign(issued.chain.encode())).rstrip(b"=").decode()
        issued.pubkey = public_text(other)

    def as_spec_3_0(self, issued: Issued) -> None:
        """The proof as spec 3.0 issued it: no identity among the commitments, signed again."""
        for name in ("agent_identity", "agent_identity_verified", "did_resolution_status"):
            del issued.chain_data[name], issued.nonces[name], issued.commitments[name]
        issued.spec_version = "3.0"
        self.resign(issued)

    def close_batch(self, proofs: list[Issued], others: int = 0, batch_id: str = "batch_20261205_120000") -> str:
        """Close a batch of ``proofs`` (after ``others`` chains of other proofs): each gets its inclusion in
        the batch root, the root's RFC 3161 token and a Rekor reference. Returns the root (hex)."""
        chains = [hashlib.sha256(f"other-{i}".encode()).digest() for i in range(others)]
        chains += [bytes.fromhex(p.chain) for p in proofs]
        root = mth(chains).hex()
        token = self.authority.stamp(root) if self.authority is not None else None
        logged = self.rekor.entry(root) if self.rekor is not None else None
        for offset, issued in enumerate(proofs):
            index = others + offset
            issued.batch_anchor = {"status": "anchored", "batch_id": batch_id, "leaf_index": index,
                                   "tree_size": len(chains),
                                   "audit_path": [h.hex() for h in audit_path(index, chains)],
                                   "root": f"sha256:{root}"}
            issued.timestamp_authority = ({"status": "verified", "provider": "test-tsa", "tsr_base64": token,
                                           "anchored": "batch_root"} if token else {"status": "failed"})
            issued.transparency_log = {"provider": "sigstore-rekor", "status": "verified",
                                       "uuid": "24296fb24b8ad77a" + root[:48], "log_index": 2818513499,
                                       "integrated_time": 1796380800, "anchored": "batch_root"}
            if logged is not None:
                issued.transparency_log.update({"uuid": logged[0], "log_index": logged[1]["logIndex"],
                                                "entry": copy.deepcopy(logged[1])})
        return root


def write_views(folder: Path, issued: list[Issued]) -> Path:
    """``folder`` made, holding each proof's public view as ``<proof_id>.json``: what ``--proofs`` reads."""
    folder.mkdir()
    for proof in issued:
        (folder / f"{proof.proof_id}.json").write_text(json.dumps(proof.public()), "utf-8")
    return folder
