"""The hashes exactly as the Trust Layer proxy computes them (CONTRACT §2, spec §2.4)."""

from __future__ import annotations

import codecs
import hashlib
import json
from json.encoder import encode_basestring_ascii

import orjson


def canonical_json(data: object) -> str:
    """``json.dumps`` with sorted keys and compact separators; ``ensure_ascii`` keeps its default True."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)


_ESCAPED_RUNS: dict[str, str] = {}  # short runs of characters beyond ASCII met, escaped: a build meets a few dozen
_KEPT_RUNS, _KEPT_LENGTH = 4096, 8


def _escaped(error: UnicodeError) -> tuple[str, int]:
    """What ``json.dumps(ensure_ascii=True)`` writes for characters beyond ASCII: ``\\u00e9``, and a character
    beyond the BMP as its surrogate pair (``\\ud83d\\ude00``). Called for each run of them in a body (240,000
    runs of a few dozen kinds at 10,000 entities), so each run is escaped once and then looked up."""
    assert isinstance(error, UnicodeEncodeError)
    run = error.object[error.start:error.end]
    known = _ESCAPED_RUNS.get(run)
    if known is None:
        known = _escape_run(run)
        if len(run) <= _KEPT_LENGTH and len(_ESCAPED_RUNS) < _KEPT_RUNS:
            _ESCAPED_RUNS[run] = known
    return known, error.end


def _escape_run(run: str) -> str:
    out = []
    for char in run:
        code = ord(char)
        if code > 0xFFFF:
            code -= 0x10000
            out.append(f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}")
        else:
            out.append(f"\\u{code:04x}")
    return "".join(out)


codecs.register_error("corpus-json-ascii", _escaped)


def canonical_bytes(data: object) -> bytes:
    """``canonical_json(data)`` as UTF-8, for a value of objects, arrays, strings, booleans and null only (a
    served body: the corpus serves no number), by orjson: sorted keys, compact, then every character beyond
    ASCII and DEL escaped as ``json.dumps`` escapes them. A value it cannot write (a lone surrogate, a key that
    is no string) is written by :func:`canonical_json`."""
    try:
        text = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError included
        return canonical_json(data).encode("utf-8")
    if text.isascii():
        return text if b"\x7f" not in text else text.replace(b"\x7f", b"\\u007f")
    return text.decode("utf-8").replace("\x7f", "\\u007f").encode("ascii", "corpus-json-ascii")


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_REQUEST = '{"amount":0.0,"currency":"eur","method":"GET","payload":{},"target":%s}'


def request_hash(url: str) -> str:
    """Hash of the proxy's request data for ``GET url`` with an empty payload; amount is the float 0.0:
    ``canonical_json({"target": url, "method": "GET", "payload": {}, "amount": 0.0, "currency": "eur"})``,
    its keys in their sorted order, written once (a build hashes a request per resource)."""
    return sha256_hex((_REQUEST % encode_basestring_ascii(url)).encode("utf-8"))


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
