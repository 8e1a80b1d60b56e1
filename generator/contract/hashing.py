"""The hashes exactly as the Trust Layer proxy computes them (CONTRACT §2, spec §2.4)."""

from __future__ import annotations

import hashlib
import json


def canonical_json(data: object) -> str:
    """``json.dumps`` with sorted keys and compact separators; ``ensure_ascii`` keeps its default True."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def request_hash(url: str) -> str:
    """Hash of the proxy's request data for ``GET url`` with an empty payload; amount is the float 0.0."""
    request = {"target": url, "method": "GET", "payload": {}, "amount": 0.0, "currency": "eur"}
    return sha256_hex(canonical_json(request).encode("utf-8"))


def parsed_body(body: bytes) -> object:
    """What the proxy hashes for a body: the parsed JSON, a raw-text wrapper, or the falsy substitute."""
    text = body.decode("utf-8", errors="replace")
    try:
        parsed = json.loads(text)
    except ValueError:
        return {"_raw_text": text}
    return parsed or {"error": None}


def parsed_hash(value: object) -> str:
    """Hash of a body the proxy has parsed into ``value`` (a falsy value is replaced by the substitute)."""
    return sha256_hex(canonical_json(value or {"error": None}).encode("utf-8"))


def response_hash(body: bytes) -> str:
    """Hash of a served body as the proxy computes it: parse, canonicalise, SHA-256."""
    return parsed_hash(parsed_body(body))
