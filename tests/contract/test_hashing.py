"""The proxy's hashes, checked on the worked vectors of CONTRACT §2 (copied here from the contract).

Each expected value is either a literal published in the contract or recomputed in this file from the
contract's formula with ``hashlib`` and ``json`` alone, never taken from the generator's own output.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from generator.contract.bodies import body_bytes
from generator.contract.hashing import canonical_json, parsed_body, request_hash, response_hash, sha256_hex
from generator.contract.manifest import release_hash

# CONTRACT §2, "Worked vector".
VECTOR_URL = "https://corpus.arkforge.tech/agrements/AGR-4417"
VECTOR_REQUEST_HASH = "1378d38cdb14483cdbea18463c2a908158202cc6dfba0195dbad8050d1bbaa9c"
VECTOR_BODY = (
    '{\n  "ressource": "/agrements/AGR-4417",\n  "existe": true,\n  "activite": "courtage-en-assurance",\n'
    '  "statut": "suspendu",\n  "dénomination": "Société Vauclair-Mésange"\n}\n'
).encode()
VECTOR_RESPONSE_HASH = "42a4d0e98276199415dd0d75f9aec4ea13a341bc59465c21a1dcccdcb5e426d3"
VECTOR_SHA256 = "8fafbbda726ec05b2525e0d1b62197abfd3ded57e1d9eca222802d1c849535a8"
SUBSTITUTE_HASH = "247fb85306c7b6f642aee12a918f957c0b9a12bb7ec0137ac820deb73746f779"  # {"error": null}


def proxy_hash(value: object) -> str:
    """The contract's formula, written out independently of generator.contract.hashing."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_request_hash_vector() -> None:
    assert request_hash(VECTOR_URL) == VECTOR_REQUEST_HASH


def test_request_hash_canonical_text() -> None:
    """Written by hand: sorted keys, no spaces, amount the float 0.0 (not 0), payload an empty object."""
    text = ('{"amount":0.0,"currency":"eur","method":"GET","payload":{},'
            '"target":"https://corpus.arkforge.tech/agrements/AGR-4417"}')
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == VECTOR_REQUEST_HASH
    request = {"target": VECTOR_URL, "method": "GET", "payload": {}, "amount": 0.0, "currency": "eur"}
    assert canonical_json(request) == text


def test_request_hash_depends_on_every_character_of_the_url() -> None:
    variants = [VECTOR_URL + "/", VECTOR_URL + "?", VECTOR_URL.replace("https", "http"), VECTOR_URL.lower()]
    assert all(request_hash(url) != VECTOR_REQUEST_HASH for url in variants)


def test_body_vector() -> None:
    assert hashlib.sha256(VECTOR_BODY).hexdigest() == VECTOR_SHA256
    assert sha256_hex(VECTOR_BODY) == VECTOR_SHA256
    assert response_hash(VECTOR_BODY) == VECTOR_RESPONSE_HASH
    assert proxy_hash(json.loads(VECTOR_BODY)) == VECTOR_RESPONSE_HASH


def test_body_vector_canonical_text_escapes_non_ascii() -> None:
    canonical = canonical_json(json.loads(VECTOR_BODY))
    assert canonical.isascii()
    assert '"d\\u00e9nomination":"Soci\\u00e9t\\u00e9 Vauclair-M\\u00e9sange"' in canonical


def test_writer_produces_the_vector_bytes() -> None:
    """The compiler's serialisation of the vector's object gives exactly the contract's bytes."""
    body = {"ressource": "/agrements/AGR-4417", "existe": True, "activite": "courtage-en-assurance",
            "statut": "suspendu", "dénomination": "Société Vauclair-Mésange"}
    assert body_bytes(body) == VECTOR_BODY


def test_substitute_vector() -> None:
    assert hashlib.sha256(b'{"error":null}').hexdigest() == SUBSTITUTE_HASH
    assert proxy_hash({"error": None}) == SUBSTITUTE_HASH


@pytest.mark.parametrize("body", [b"{}", b"[]", b"null", b'""', b"false", b"0", b"0.0", b" {} \n", b"{\n}\n"])
def test_falsy_bodies_hash_as_the_substitute(body: bytes) -> None:
    assert parsed_body(body) == {"error": None}
    assert response_hash(body) == SUBSTITUTE_HASH


@pytest.mark.parametrize("text", ["<html>Forbidden</html>", "", "{not json", "Accès refusé", '{"a": 1'])
def test_non_json_bodies_hash_as_raw_text(text: str) -> None:
    body = text.encode("utf-8")
    assert parsed_body(body) == {"_raw_text": text}
    expected = hashlib.sha256(
        json.dumps({"_raw_text": text}, sort_keys=True, separators=(",", ":")).encode("utf-8")).hexdigest()
    assert response_hash(body) == expected


def test_raw_text_is_not_the_substitute() -> None:
    assert response_hash(b"") != SUBSTITUTE_HASH


def test_truthy_values_are_hashed_as_parsed() -> None:
    for body, value in ((b"true", True), (b"[0]", [0]), (b'"x"', "x"), (b'{"error": null}', {"error": None})):
        assert response_hash(body) == proxy_hash(value)


def test_formatting_does_not_change_the_response_hash() -> None:
    """Whitespace and key order of the served bytes do not matter to the proxy, only the parsed value."""
    compact = json.dumps(json.loads(VECTOR_BODY), ensure_ascii=True, separators=(",", ":")).encode()
    reordered = json.dumps(dict(reversed(list(json.loads(VECTOR_BODY).items())))).encode()
    assert response_hash(compact) == response_hash(reordered) == VECTOR_RESPONSE_HASH


# docs/operating.md, "The release hash": its worked example, computed there with printf | sha256sum.
RELEASE_VECTOR = {"generique": "8a332b23604609f049b14f0fd568f2abbfbca5771a90685ec797c2b6c77fe11d",
                  "conformite": "fbdc8cf65d8eda68cfcdc81ea7cfb9dfc97341944646f3e196a8e879dc3f89b8"}
RELEASE_VECTOR_HASH = "dd00c56cda8fc81b21ebd470fa786be1521367bfa13bced28613bad7b6b480a1"


def test_release_hash_vector_names_every_track() -> None:
    lines = "".join(f"{piste} {RELEASE_VECTOR[piste]}\n" for piste in sorted(RELEASE_VECTOR))
    assert hashlib.sha256(lines.encode()).hexdigest() == RELEASE_VECTOR_HASH == release_hash(RELEASE_VECTOR)
    doc = (Path(__file__).resolve().parents[2] / "docs" / "operating.md").read_text("utf-8")
    assert RELEASE_VECTOR_HASH in doc and all(h in doc for h in RELEASE_VECTOR.values())
    for piste in RELEASE_VECTOR:  # any track changed alone is another release
        changed = {**RELEASE_VECTOR, piste: "0" * 64}
        assert release_hash(changed) != RELEASE_VECTOR_HASH
    assert release_hash({"conformite": RELEASE_VECTOR["conformite"]}) != RELEASE_VECTOR_HASH
