"""Trust Layer proofs verified offline (proof-spec SPEC.md §2, §6): the chain hash of both algorithms against
proof-spec's own test vectors, and the real proof of ``../shared/trust-layer/`` (chain and Ed25519 signature)
against the key it was made with, given as the pinned key.

Every expected value comes from outside the code under test: the vectors file (copied from upstream, see
``tests/fixtures/proof-spec/README.md``), the proof as the proxy stored it, json + hashlib here. Keys for
the tampering cases are made at run time; no private key is committed.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from generator.contract.hashing import canonical_json
from generator.trust_layer.trust_proof import (
    ChainFields,
    ProofError,
    chain_hash,
    fingerprint_of,
    read_proof,
    verification_problems,
)

HERE = Path(__file__).resolve().parents[1]  # tests/
VECTORS = HERE / "fixtures" / "proof-spec" / "test-vectors.json"
REAL = HERE / "fixtures" / "trust-layer" / "proof-1.7.0-anchor.json"  # a copy of the shared file
SHARED = HERE.parent.parent / "shared" / "trust-layer" / "proof-1.7.0-anchor.json"
UPSTREAM_VECTORS_SHA256 = "6fc45d098df90c52f515e5d84ca0e694ecb8a6c680574e8e2f82203a3cbe3164"


def _vectors() -> list[dict[str, Any]]:
    return json.loads(VECTORS.read_text("utf-8"))["vectors"]


def test_the_vectors_are_upstreams_bytes() -> None:
    assert hashlib.sha256(VECTORS.read_bytes()).hexdigest() == UPSTREAM_VECTORS_SHA256


@pytest.mark.parametrize("vector", _vectors(), ids=lambda v: v["name"])
def test_proof_spec_vector(vector: dict[str, Any]) -> None:
    given, expected = vector["input"], vector["expected"]
    assert canonical_json(given["request"]) == expected["canonical_request"]
    assert canonical_json(given["response"]) == expected["canonical_response"]
    request = hashlib.sha256(canonical_json(given["request"]).encode()).hexdigest()
    response = hashlib.sha256(canonical_json(given["response"]).encode()).hexdigest()
    assert (request, response) == (expected["request_hash"], expected["response_hash"])
    assert fingerprint_of(given["api_key"]) == expected["buyer_fingerprint"]
    fields = ChainFields(request, response, given["payment_intent_id"], given["timestamp"],
                         expected["buyer_fingerprint"], given["seller"], given.get("upstream_timestamp"),
                         given.get("receipt_content_hash"))
    version = vector.get("spec_version")  # the legacy vectors carry none: the concatenation, as for 1.1
    assert chain_hash(fields, version) == expected["chain_hash"]


def test_legacy_versions_concatenate_and_current_ones_do_not() -> None:
    legacy = next(v for v in _vectors() if v["name"] == "minimal_transaction")
    given, expected = legacy["input"], legacy["expected"]
    fields = ChainFields(expected["request_hash"], expected["response_hash"], given["payment_intent_id"],
                         given["timestamp"], expected["buyer_fingerprint"], given["seller"])
    for version in ("1.0", "1.1", "2.0", None):
        assert chain_hash(fields, version) == expected["chain_hash"]
    assert chain_hash(fields, "1.2") == chain_hash(fields, "2.1") != expected["chain_hash"]
    with pytest.raises(ProofError, match=r"^spec_version: '3\.1' is no version whose chain hash is known"):
        chain_hash(fields, "3.1")


def _real() -> dict[str, Any]:
    return json.loads(REAL.read_text("utf-8"))


def test_the_copy_is_the_shared_proof() -> None:
    if SHARED.is_file():
        assert SHARED.read_bytes() == REAL.read_bytes()


def test_the_real_proof_verifies_end_to_end() -> None:
    served = _real()
    proof = read_proof(served)
    pinned = served["arkforge_pubkey"]  # the run's key (not production's): the pinned key for this proof
    assert verification_problems(proof, pinned, served["parties"]["buyer_fingerprint"]) == []
    request = {"target": "https://corpus.arkforge.tech/gel", "method": "GET", "payload": {}, "amount": 0.0,
               "currency": "eur"}
    digest = hashlib.sha256(json.dumps(request, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert served["hashes"]["request"] == f"sha256:{digest}" and proof.request_hash == digest
    assert proof.spec_version == "1.2" and proof.timestamp == "2026-12-02T01:30:23Z"
    assert proof.fields is not None and proof.fields.transaction_id == "free_tier"


def _other_key() -> tuple[Ed25519PrivateKey, str]:
    private = Ed25519PrivateKey.generate()
    raw = private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return private, "ed25519:" + base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _flip(text: str) -> str:
    body = text.removeprefix("ed25519:")
    middle = len(body) // 2
    return "ed25519:" + body[:middle] + ("A" if body[middle] != "A" else "B") + body[middle + 1:]


@pytest.mark.parametrize(("case", "field"), [
    ("flipped signature", "arkforge_signature: not a signature of its chain hash"),
    ("the proof's key is not the pinned one", "arkforge_pubkey: "),
    ("another pinned key, the proof's key replaced by it", "arkforge_signature: not a signature"),
    ("another fingerprint", "parties.buyer_fingerprint: "),
    ("timestamp changed", "hashes.chain: "),
    ("upstream_timestamp dropped", "hashes.chain: "),
    ("no signature", "arkforge_signature: missing"),
    ("the public view", "parties.buyer_fingerprint: missing"),
    ("an unknown spec_version", "spec_version: '9.9'"),
])
def test_a_tampered_real_proof_names_its_field(case: str, field: str) -> None:
    served = copy.deepcopy(_real())
    pinned, fingerprint = served["arkforge_pubkey"], served["parties"]["buyer_fingerprint"]
    if case == "flipped signature":
        served["arkforge_signature"] = _flip(served["arkforge_signature"])
    elif case == "the proof's key is not the pinned one":
        pinned = _other_key()[1]
    elif case == "another pinned key, the proof's key replaced by it":
        pinned = served["arkforge_pubkey"] = _other_key()[1]
    elif case == "another fingerprint":
        fingerprint = hashlib.sha256(b"another key").hexdigest()
    elif case == "timestamp changed":
        served["timestamp"] = "2026-12-02T01:30:24Z"
    elif case == "upstream_timestamp dropped":
        del served["upstream_timestamp"]
    elif case == "no signature":
        del served["arkforge_signature"]
    elif case == "the public view":
        del served["parties"], served["certification_fee"]
        served["seller"] = "corpus.arkforge.tech"
    elif case == "an unknown spec_version":
        served["spec_version"] = "9.9"
    problems = verification_problems(read_proof(served), pinned, fingerprint)
    assert problems and any(field in p for p in problems), problems
    assert all(p.startswith("proof prf_20261202_013023_ae4117: ") and "\n" not in p for p in problems)


def test_a_bare_hash_and_proof_specs_payment_are_the_same_proof() -> None:
    served = _real()
    for side in ("request", "response", "chain"):
        served["hashes"][side] = served["hashes"][side].removeprefix("sha256:")
    served["payment"] = served.pop("certification_fee")
    assert verification_problems(read_proof(served), served["arkforge_pubkey"]) == []
    served["certification_fee"] = {"transaction_id": "pi_other"}
    with pytest.raises(ProofError, match=r"certification_fee\.transaction_id and payment\.transaction_id differ"):
        read_proof(served)


def test_a_proof_signed_here_verifies_and_a_resigned_edit_does_not() -> None:
    """A proof made in the test the way proof-spec §2 and §6 describe it (not by the code under test)."""
    private, public = _other_key()
    chain_data = {"request_hash": "1" * 64, "response_hash": "2" * 64, "transaction_id": "free_tier",
                  "timestamp": "2026-12-02T01:00:00Z", "buyer_fingerprint": "3" * 64,
                  "seller": "corpus.arkforge.tech"}
    chain = hashlib.sha256(json.dumps(chain_data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    signature = base64.urlsafe_b64encode(private.sign(chain.encode())).rstrip(b"=").decode()
    proof = {"proof_id": "prf_x", "spec_version": "1.2",
             "hashes": {"request": "sha256:" + "1" * 64, "response": "sha256:" + "2" * 64,
                        "chain": "sha256:" + chain},
             "parties": {"buyer_fingerprint": "3" * 64, "seller": "corpus.arkforge.tech"},
             "certification_fee": {"transaction_id": "free_tier"}, "timestamp": "2026-12-02T01:00:00Z",
             "arkforge_signature": "ed25519:" + signature, "arkforge_pubkey": public}
    assert verification_problems(read_proof(proof), public, "3" * 64) == []
    proof["hashes"]["response"] = "sha256:" + "4" * 64  # the chain no longer binds the fields
    problems = verification_problems(read_proof(proof), public)
    assert any(p.startswith("proof prf_x: hashes.chain: ") for p in problems), problems


@pytest.mark.parametrize(("value", "expected"), [
    (None, "expected a JSON object"),
    ([], "expected a JSON object"),
    ("x", "expected a JSON object"),
    ({"proof_id": "p"}, "hashes: missing"),
    ({"proof_id": "p", "hashes": {"request": "sha256:" + "0" * 63}}, "hashes.request: expected sha256:<64"),
    ({"hashes": {"request": "0" * 64, "response": "0" * 64, "chain": "0" * 64}}, "timestamp: missing"),
    ({"request_hash": {"nonce": "n", "value": "0" * 64}, "response_hash": {"nonce": "n", "value": "0" * 64}},
     "proof_id: missing"),
    ({"proof_id": "p", "hashes": {"request": "0" * 64, "response": "0" * 64, "chain": "0" * 64}, "timestamp": "t",
      "timestamp_authority": {"status": "submitted", "tsr_base64": 5}},
     "timestamp_authority.tsr_base64: expected a string, got 5"),
    ({"proof_id": "p", "hashes": {"request": "0" * 64, "response": "0" * 64, "chain": "0" * 64}, "timestamp": "t",
      "timestamp_authority": {"status": ["verified"]}}, "timestamp_authority.status: expected a string"),
])
def test_an_unusable_proof_is_one_line_naming_its_field(value: Any, expected: str) -> None:
    with pytest.raises(ProofError) as caught:
        read_proof(value)
    assert expected in str(caught.value) and "\n" not in str(caught.value)
