"""The freeze anchored through the proxy (spec §8.3, §8.5): one proxied call whose response is the record.

Trust Layer certifies the request it forwarded and the body it received. So a track's freeze record is
served at a fixed canonical path (``track.yaml``, ``gel_servi``), and one call of that path through the proxy,
made with the challenge's key, anchors it: its ``request_hash`` names the path, its ``response_hash`` is the
hash of the record's bytes. :func:`record_call` says which call to make and which two hashes it will have;
:func:`anchor_problems` checks the opened pair of that call (``GET /v1/proof/{id}/full``) against the record.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.base import strict_json
from generator.base.bounded_read import SUBMISSION_LIMIT
from generator.base.errors import GeneratorError, read_file
from generator.contract.hashing import request_hash, response_hash
from generator.contract.places import Places


class AnchorError(GeneratorError):
    """The anchor file cannot be used (missing, not JSON, not the opened pair of a proof)."""


@dataclass(frozen=True)
class RecordCall:
    """The proxied call that anchors a freeze record, and the two hashes the proxy will give it."""

    target: str
    request_hash: str
    response_hash: str
    method: str = "GET"

    def lines(self) -> list[str]:
        return [f"target: {self.target}", f"method: {self.method}", "payload: {}",
                f"request_hash: {self.request_hash}", f"response_hash: {self.response_hash}"]


def record_call(base_url: str, places: Places, record: bytes) -> RecordCall:
    """The call of ``base_url + places.served_record`` and the hashes of it and of ``record`` (CONTRACT §2)."""
    target = base_url + places.served_record
    return RecordCall(target, request_hash(target), response_hash(record))


@dataclass(frozen=True)
class Anchor:
    """The opened pair of the anchoring proof: ``{"proof_id", "request_hash": {"nonce", "value"},
    "response_hash": {"nonce", "value"}}``, as ``GET /v1/proof/{id}/full`` gives it to the key's owner."""

    proof_id: str
    request_value: str
    response_value: str

    @classmethod
    def read(cls, path: Path) -> Anchor:
        data = read_file(path, AnchorError, "not found: give the opened pair of the anchoring proof",
                         limit=SUBMISSION_LIMIT)
        try:  # strictly, as every file a participant or an operator hands us: a key twice is refused
            value = strict_json.document(data)
        except strict_json.NotJson as exc:
            raise AnchorError(exc.text(path)) from None

        def text(*keys: str) -> str:
            found: Any = value
            for key in keys:
                if not isinstance(found, dict) or key not in found:
                    raise AnchorError(f"{path}: {'.'.join(keys)}: missing; expected {{\"proof_id\": ..., "
                                      "\"request_hash\": {\"nonce\", \"value\"}, \"response_hash\": {\"nonce\", "
                                      "\"value\"}}")
                found = found[key]
            if not isinstance(found, str) or not found:
                raise AnchorError(f"{path}: {'.'.join(keys)}: expected a non-empty string")
            return found

        for side in ("request_hash", "response_hash"):
            text(side, "nonce")
        return cls(text("proof_id"), text("request_hash", "value"), text("response_hash", "value"))


def anchor_problems(anchor: Anchor, call: RecordCall) -> list[str]:
    """Why ``anchor`` does not open to the call of the record (empty: it does)."""
    problems = []
    if anchor.request_value != call.request_hash:
        problems.append(f"anchor {anchor.proof_id}: its request_hash is not the call GET {call.target} "
                        f"({call.request_hash}): the proof anchors another request")
    if anchor.response_value != call.response_hash:
        problems.append(f"anchor {anchor.proof_id}: its response_hash is not the record's ({call.response_hash}): "
                        "the proof anchors another body")
    return problems
