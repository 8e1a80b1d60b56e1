"""Trust Layer proofs made in the tests the way the proxy makes them (proof-spec SPEC.md §2, §6), in the 1.2
shape of ``../shared/trust-layer/proof-1.7.0-anchor.json``, with a signing key made at run time: no private key
is committed, and no hash is taken from the code under test (json + hashlib here)."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

CHALLENGE_KEY = "proveit-challenge-key-for-this-test"
FINGERPRINT = hashlib.sha256(CHALLENGE_KEY.encode()).hexdigest()
TIMESTAMP = "2026-12-02T01:30:23Z"


def _public(private: Ed25519PrivateKey) -> str:
    raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return "ed25519:" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


class TrustLayer:
    """A signing key of the proxy's, and proofs made the way the proxy makes them (proof-spec §2, §6)."""

    def __init__(self) -> None:
        self.private = Ed25519PrivateKey.generate()
        self.key = _public(self.private)

    def proof(self, request: str, response: str, *, api_key: str = CHALLENGE_KEY, timestamp: str = TIMESTAMP,
              proof_id: str = "prf_20261202_013023_ae4117") -> dict[str, Any]:
        fingerprint = hashlib.sha256(api_key.encode()).hexdigest()
        upstream = "Wed, 02 Dec 2026 01:30:23 GMT"
        chain_data = {"request_hash": request, "response_hash": response, "transaction_id": "free_tier",
                      "timestamp": timestamp, "buyer_fingerprint": fingerprint, "seller": "corpus.arkforge.tech",
                      "upstream_timestamp": upstream}
        chain = hashlib.sha256(json.dumps(chain_data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        signature = base64.urlsafe_b64encode(self.private.sign(chain.encode())).rstrip(b"=").decode()
        return {"proof_id": proof_id, "spec_version": "1.2",
                "hashes": {"request": f"sha256:{request}", "response": f"sha256:{response}",
                           "chain": f"sha256:{chain}"},
                "parties": {"buyer_fingerprint": fingerprint, "seller": "corpus.arkforge.tech",
                            "agent_identity": None, "agent_identity_verified": None},
                "certification_fee": {"method": "free_tier", "transaction_id": "free_tier", "amount": 0.0,
                                      "currency": "eur", "status": "free_tier"},
                "timestamp": timestamp, "upstream_timestamp": upstream, "upstream_status_code": 200,
                "timestamp_authority": {"status": "submitted", "provider": "freetsa.org"},
                "arkforge_signature": f"ed25519:{signature}", "arkforge_pubkey": self.key}
