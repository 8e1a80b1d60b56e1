"""Trust Layer proofs made in the tests the way the proxy makes them (proof-spec SPEC.md §2, §6), in the 1.2
shape of ``../shared/trust-layer/proof-1.7.0-anchor.json``, with a signing key made at run time: no private key
is committed, and no hash is taken from the code under test (json + hashlib here)."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
from pathlib import Path
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


_TSA_CONFIG = """[tsa]
default_tsa = tsa_config
[tsa_config]
serial = {serial}
crypto_device = builtin
signer_digest = sha256
default_policy = 1.2.3.4.1
digests = sha256
accuracy = secs:1
ordering = no
tsa_name = no
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


def _openssl(*args: str) -> None:
    subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=30)


class Authority:
    """A local RFC 3161 authority made with openssl (a CA and a timeStamping certificate), which stamps a
    chain hash's bytes as Trust Layer submits them (``-sha256 -no_nonce``, no ``-cert``)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        self.ca, self.cert, key = folder / "ca.crt", folder / "tsa.crt", folder / "tsa.key"
        (folder / "serial").write_text("01\n", "ascii")
        (folder / "tsa.cnf").write_text(_TSA_CONFIG.format(serial=folder / "serial"), "ascii")
        (folder / "ext.cnf").write_text("extendedKeyUsage=critical,timeStamping\nbasicConstraints=CA:FALSE\n",
                                        "ascii")
        ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
        _openssl("req", "-x509", *ec, "-keyout", str(folder / "ca.key"), "-out", str(self.ca), "-subj",
                 "/CN=Test TSA CA", "-days", "2", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                 "keyUsage=critical,keyCertSign")
        _openssl("req", *ec, "-keyout", str(key), "-out", str(folder / "tsa.csr"), "-subj", "/CN=Test TSA")
        _openssl("x509", "-req", "-in", str(folder / "tsa.csr"), "-CA", str(self.ca), "-CAkey",
                 str(folder / "ca.key"), "-CAcreateserial", "-out", str(self.cert), "-days", "2", "-extfile",
                 str(folder / "ext.cnf"))
        self.key = key

    def stamp(self, chain_hex: str) -> str:
        """The authority's reply over ``chain_hex``'s 32 bytes, base64 (``timestamp_authority.tsr_base64``)."""
        data, query, reply = self.folder / "chain.bin", self.folder / "q.tsq", self.folder / "r.tsr"
        data.write_bytes(bytes.fromhex(chain_hex))
        _openssl("ts", "-query", "-data", str(data), "-no_nonce", "-sha256", "-out", str(query))
        _openssl("ts", "-reply", "-config", str(self.folder / "tsa.cnf"), "-queryfile", str(query), "-inkey",
                 str(self.key), "-signer", str(self.cert), "-out", str(reply))
        return base64.b64encode(reply.read_bytes()).decode("ascii")
