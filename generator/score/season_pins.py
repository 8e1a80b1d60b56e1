"""The season's pins, declared once per track (``corpus pin``) and read by every command of the season: the
Trust Layer key(s), the challenge key's fingerprint, the timestamp authority (its CA bundle and signing
certificate), Rekor's key if used, the one Trust Layer base URL, and the season's opening and close.

They live in the track's freeze folder (``freeze/<piste>/pins.json``, ``corpus-pins/1``), beside the record
and the anchor they are published with, never served (a release carries the record only). The authority's
and Rekor's PEM files are copied there too (``tsa-ca.pem``, ``tsa-cert.pem``, ``rekor-key.pem``) and pinned by
their SHA-256: a file swapped afterwards is refused, naming it. A flag of a command overrides the file's
value (``--tsa-ca`` given: the whole authority is the flags'). The opening defaults to the freeze anchor's
token time and may never precede it. docs/operating.md, "The season's pins", shows the file field by field.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import fields, replace
from datetime import datetime
from pathlib import Path

from generator.base import strict_json
from generator.base.atomic_file import write_atomic
from generator.base.bounded_read import SALT_LIMIT, SUBMISSION_LIMIT, read_bounded
from generator.base.errors import GeneratorError, shown_path, unreadable_text
from generator.base.path_checks import inside_checkout
from generator.contract.hashing import sha256_hex
from generator.contract.places import Places
from generator.score.close_inputs import Pins, anchor_opening
from generator.trust_layer.anchor import Anchor
from generator.trust_layer.anchor_time import AnchorTimeError, instant_text, parse_instant
from generator.trust_layer.rekor_entry import RekorKeyError, load_rekor_key
from generator.trust_layer.trust_proof import ProofError, check_fingerprint, public_key
from generator.trust_layer.tsa_token import PEM_LIMIT, TokenError, check_authority

FORMAT = "corpus-pins/1"
PINS_FILE = "pins.json"
TSA_CA_FILE, TSA_CERT_FILE, REKOR_FILE = "tsa-ca.pem", "tsa-cert.pem", "rekor-key.pem"
DEFAULT_TRUST_LAYER_URL = "https://trust.arkforge.tech"  # the one base URL: the proxy, /v1/proof/<id>, /v1/pubkey
_URL = re.compile(r"https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~/-]*)?")
KEY_FILE_LIMIT = 4 * SALT_LIMIT  # an API key file: one line


class PinsError(GeneratorError):
    """The pins file, or a value given to ``corpus pin``, cannot be used: one line naming it, exit 1."""


def check_url(text: str, what: str = "--trust-layer-url") -> str:
    """Trust Layer's base URL: http(s), a host, a path; no query, no credentials (pages link to it)."""
    if not _URL.fullmatch(text):
        raise PinsError(f"{what}: {shown_path(text)} is not an http(s) URL of a host and a path (no query, no "
                        "credentials), e.g. https://trust.arkforge.tech")
    return text.rstrip("/")


def pins_lines(pins: Pins) -> list[str]:
    """What ``corpus pin`` prints: one pin a line, ``not pinned`` for those left out."""
    def shown(value: object) -> str:
        if value is None or value == ():
            return "not pinned"
        if isinstance(value, datetime):
            return instant_text(value)
        return ", ".join(value) if isinstance(value, tuple) else str(value)
    opening = shown(pins.season_opening) if pins.season_opening else "the freeze anchor's token time (default)"
    return [f"trust layer url: {shown(pins.trust_layer_url)}",
            f"trust layer key(s): {shown(pins.trust_layer_keys)}",
            f"challenge key fingerprint: {shown(pins.fingerprint)}",
            f"timestamp authority CA: {shown(pins.tsa_ca)}",
            f"its signing certificate: {shown(pins.tsa_cert)}",
            f"rekor key: {shown(pins.rekor_key)}", f"season opening: {opening}",
            f"season close: {shown(pins.season_close)}"]


def pins_path(root: Path, places: Places) -> Path:
    return root / places.freeze / PINS_FILE


def _pinned_file(root: Path, places: Places, value: object, where: str, source: Path) -> Path | None:
    """A PEM file the pins name, ``{"fichier", "sha256"}``: in the freeze folder, of that very SHA-256."""
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != {"fichier", "sha256"} or \
            not all(isinstance(value[k], str) for k in value):
        raise PinsError(f"{source}: {where}: expected {{\"fichier\", \"sha256\"}} or null")
    name, digest = value["fichier"], value["sha256"]
    if name not in (TSA_CA_FILE, TSA_CERT_FILE, REKOR_FILE):
        raise PinsError(f"{source}: {where}/fichier: {shown_path(name)} is not a file corpus pin writes")
    path = inside_checkout(root, Path(places.freeze) / name, PinsError)
    try:
        data = read_bounded(path, PEM_LIMIT, follow_symlinks=False)
    except OSError as exc:
        raise PinsError(f"{unreadable_text(path, exc)} ({source} pins it): run corpus pin again") from None
    if sha256_hex(data) != digest:
        raise PinsError(f"{path}: SHA-256 {sha256_hex(data)} is not the {digest} that {source} pins ({where}): "
                        "the file was replaced after it was pinned; run corpus pin again with the right file")
    return path


def _instant(value: object, where: str, source: Path) -> datetime | None:
    if value is None:
        return None
    try:
        return parse_instant(value, where)
    except AnchorTimeError as exc:
        raise PinsError(f"{source}: {exc}") from None


_FIELDS = {"": ("format", "piste", "trust_layer", "horodatage", "rekor", "saison"),
           "/trust_layer": ("url", "cles", "empreinte_cle_challenge"),
           "/horodatage": ("ca", "certificat"), "/saison": ("ouverture", "cloture")}


def _object(value: object, where: str, source: Path) -> dict[str, object]:
    wanted = _FIELDS[where]
    if not isinstance(value, dict) or set(value) != set(wanted):
        extra = sorted(set(value) - set(wanted)) if isinstance(value, dict) else []
        why = f"unknown field {extra[0]!r}" if extra else f"expected an object of {', '.join(wanted)}"
        raise PinsError(f"{source}: {where or '/'}: {why}")
    return value


def read_pins(root: Path, places: Places) -> Pins | None:
    """The track's pins, every field checked; None when the track has no pins file."""
    source = pins_path(root, places)
    path = inside_checkout(root, Path(places.freeze) / PINS_FILE, PinsError)
    if not os.path.lexists(path):
        return None
    try:
        value = strict_json.document(read_bounded(path, SUBMISSION_LIMIT, follow_symlinks=False))
    except strict_json.NotJson as exc:
        raise PinsError(f"{exc.text(source)}; write it again with corpus pin") from None
    except OSError as exc:
        raise PinsError(unreadable_text(path, exc)) from None
    top = _object(value, "", source)
    if top["format"] != FORMAT or top["piste"] != places.piste:
        raise PinsError(f"{source}: expected format {FORMAT!r} for the track {places.piste}")
    tl, tsa, season = (_object(top[k], f"/{k}", source) for k in ("trust_layer", "horodatage", "saison"))
    url, keys, fingerprint = tl["url"], tl["cles"], tl["empreinte_cle_challenge"]
    try:
        if url is not None:
            check_url(str(url) if isinstance(url, str) else "", "/trust_layer/url")
        if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
            raise PinsError("/trust_layer/cles: expected a list of ed25519:<base64url> keys")
        for n, key in enumerate(keys):
            public_key(str(key), f"/trust_layer/cles/{n}")
        if fingerprint is not None:
            check_fingerprint(fingerprint if isinstance(fingerprint, str) else "",
                              "/trust_layer/empreinte_cle_challenge")
    except (PinsError, ProofError) as exc:
        raise PinsError(f"{source}: {exc}") from None
    return Pins(tuple(str(k) for k in keys), fingerprint if isinstance(fingerprint, str) else None,
                _pinned_file(root, places, tsa["ca"], "/horodatage/ca", source),
                _pinned_file(root, places, tsa["certificat"], "/horodatage/certificat", source),
                _pinned_file(root, places, top["rekor"], "/rekor", source),
                season_close=_instant(season["cloture"], "/saison/cloture", source),
                season_opening=_instant(season["ouverture"], "/saison/ouverture", source),
                trust_layer_url=str(url) if isinstance(url, str) else None)


def _file_entry(path: Path | None) -> dict[str, str] | None:
    return None if path is None else {"fichier": path.name, "sha256": sha256_hex(path.read_bytes())}


def pins_bytes(piste: str, pins: Pins) -> bytes:
    """The one writer of a pins file."""
    def when(value: datetime | None) -> str | None:
        return instant_text(value) if value is not None else None
    document = {"format": FORMAT, "piste": piste,
                "trust_layer": {"url": pins.trust_layer_url, "cles": list(pins.trust_layer_keys),
                                "empreinte_cle_challenge": pins.fingerprint},
                "horodatage": {"ca": _file_entry(pins.tsa_ca), "certificat": _file_entry(pins.tsa_cert)},
                "rekor": _file_entry(pins.rekor_key),
                "saison": {"ouverture": when(pins.season_opening), "cloture": when(pins.season_close)}}
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _read_pem(path: Path, flag: str) -> bytes:
    try:
        return read_bounded(path, PEM_LIMIT)
    except OSError as exc:
        raise PinsError(f"{flag} {unreadable_text(path, exc)}") from None


def anchor_time(root: Path, places: Places) -> datetime | None:
    """The published anchor's time (a 3.x anchor's token time), which the season cannot open before."""
    path = root / places.anchor
    return anchor_opening(Anchor.read(path), places) if os.path.lexists(path) else None


def write_pins(root: Path, places: Places, given: Pins) -> Pins:
    """The track's pins with every value ``given`` set (the others kept), checked and written: the PEM files
    copied into the freeze folder, then ``pins.json`` (each write atomic). Returns the pins as written."""
    old = read_pins(root, places) or Pins()
    for key in given.trust_layer_keys:
        try:
            public_key(key)
        except ProofError as exc:
            raise PinsError(str(exc)) from None
    if given.fingerprint is not None:
        try:
            check_fingerprint(given.fingerprint, "--challenge-key-fingerprint")
        except ProofError as exc:
            raise PinsError(str(exc)) from None
    url = check_url(given.trust_layer_url) if given.trust_layer_url is not None else old.trust_layer_url
    folder = inside_checkout(root, places.freeze, PinsError)
    copies: dict[str, bytes] = {}
    if given.tsa_ca is not None:
        ca = _read_pem(given.tsa_ca, "--tsa-ca")
        cert = _read_pem(given.tsa_cert, "--tsa-cert") if given.tsa_cert is not None else None
        try:
            check_authority(ca, cert)
        except TokenError as exc:
            raise PinsError(str(exc)) from None
        copies[TSA_CA_FILE] = ca
        if cert is not None:
            copies[TSA_CERT_FILE] = cert
    elif given.tsa_cert is not None:
        raise PinsError("--tsa-cert without --tsa-ca: the authority is pinned whole (its CA bundle, and its "
                        "signing certificate when its tokens do not carry it)")
    if given.rekor_key is not None:
        pem = _read_pem(given.rekor_key, "--rekor-key")
        try:
            load_rekor_key(pem)
        except RekorKeyError as exc:
            raise PinsError(str(exc)) from None
        copies[REKOR_FILE] = pem
    new = Pins(given.trust_layer_keys or old.trust_layer_keys, given.fingerprint or old.fingerprint,
               folder / TSA_CA_FILE if given.tsa_ca is not None else old.tsa_ca,
               (folder / TSA_CERT_FILE if given.tsa_cert is not None else None)
               if given.tsa_ca is not None else old.tsa_cert,
               folder / REKOR_FILE if given.rekor_key is not None else old.rekor_key,
               season_close=given.season_close or old.season_close,
               season_opening=given.season_opening or old.season_opening, trust_layer_url=url)
    _check_window(root, places, new)
    os.makedirs(folder, exist_ok=True)
    for name, data in copies.items():
        write_atomic(folder / name, data)
    if given.tsa_ca is not None and given.tsa_cert is None and os.path.lexists(folder / TSA_CERT_FILE):
        os.unlink(folder / TSA_CERT_FILE)  # another authority, whose tokens carry their certificate
    write_atomic(pins_path(root, places), pins_bytes(places.piste, new))
    return new


def _check_window(root: Path, places: Places, pins: Pins) -> None:
    """The opening before the close, and never before the freeze anchor's time (spec §4.1, §8)."""
    anchored = anchor_time(root, places)
    if pins.season_opening is not None and anchored is not None and pins.season_opening < anchored:
        raise PinsError(f"--season-opening {instant_text(pins.season_opening)} is before the freeze anchor's time "
                        f"{instant_text(anchored)}: the season opens at or after it")
    opening = pins.season_opening or anchored
    if opening is not None and pins.season_close is not None and pins.season_close <= opening:
        raise PinsError(f"--season-close {instant_text(pins.season_close)} is not after the season's opening "
                        f"{instant_text(opening)}")


def with_pins(given: Pins, pinned: Pins | None) -> Pins:
    """The pins a command judges with: each value given on its command line, else the track's pinned one
    (``--tsa-ca`` given: the authority is the command line's whole, its certificate included)."""
    if pinned is None:
        return given
    authority = (given.tsa_ca, given.tsa_cert) if given.tsa_ca is not None else (pinned.tsa_ca, pinned.tsa_cert)
    merged = Pins(**{f.name: getattr(given, f.name) or getattr(pinned, f.name) for f in fields(Pins)})
    return replace(merged, tsa_ca=authority[0], tsa_cert=authority[1])


def key_fingerprint_of(path: Path) -> str:
    """The SHA-256 of an API key kept in ``path`` (its one line, the line end aside), as Trust Layer writes
    ``buyer_fingerprint``; the key itself is never returned nor shown."""
    try:
        data = read_bounded(path, KEY_FILE_LIMIT)
    except OSError as exc:
        raise PinsError(unreadable_text(path, exc)) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise PinsError(f"{shown_path(path)}: not UTF-8 text: an API key file holds the key on one line") from None
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) != 1 or lines[0] != lines[0].strip():
        raise PinsError(f"{shown_path(path)}: expected the API key alone on one line (no blank around it): "
                        f"found {len(lines)} non-blank line(s); nothing is shown")
    return sha256_hex(lines[0].encode("utf-8"))


def proxy_call_lines(url: str, target: str, key_file: str = "CHALLENGE_KEY_FILE") -> list[str]:
    """The proxied call that anchors a freeze record, and the read of its proof, as curl lines (the key read
    from its file, never written on the line): the ceremony's steps 3 and 4 (docs/operating.md)."""
    body = json.dumps({"target": target, "method": "GET", "payload": {}, "currency": "eur"})
    return [f"curl -sS -X POST {url}/v1/proxy -H \"X-Api-Key: $(cat {key_file})\" "
            f"-H 'Content-Type: application/json' -d '{body}'",
            f"curl -sS {url}/v1/proof/PROOF_ID/full -H \"X-Api-Key: $(cat {key_file})\" -o anchor-proof.json"]


def freeze_hints(root: Path, places: Places, target: str) -> list[str]:
    """What ``corpus freeze`` prints next: each step a complete command, for a proof-spec 3.1 anchor."""
    pinned = read_pins(root, places)
    url = pinned.trust_layer_url if pinned is not None and pinned.trust_layer_url else DEFAULT_TRUST_LAYER_URL
    piste = places.piste
    pin = (f"corpus pin --track {piste} --trust-layer-url {url} --trust-layer-key ed25519:KEY "
           "--challenge-key-file CHALLENGE_KEY_FILE --tsa-ca TSA_CA.pem --tsa-cert TSA_CERT.pem "
           "--season-close YYYY-MM-DDTHH:MM:SSZ")
    complete = pinned is not None and pinned.trust_layer_keys and pinned.fingerprint and pinned.tsa_ca
    call, fetch = proxy_call_lines(url, target)
    already = f" (already pinned: corpus pin --track {piste} shows them)" if complete else ""
    return ["corpus freeze: next, for a proof-spec 3.1 anchor (docs/operating.md, the freeze ceremony):",
            f"  1. pins{already}: {pin}   (ed25519:KEY: GET {url}/v1/pubkey; TSA_*: the authority Trust Layer "
            "stamps with)",
            "  2. serve the record (corpus release), then make the one call through the proxy with the "
            f"challenge's key: {call}",
            f"  3. once its batch is anchored (batch_anchor.status anchored), save its /full view: {fetch}",
            f"  4. corpus freeze-anchor --track {piste} anchor-proof.json   (key, fingerprint and authority read "
            "from the pins)",
            f"  5. corpus freeze-check --track {piste} --salt-file SALT_FILE, then corpus publish --opening "
            f"--track {piste} --out OPENING_DIR"]


def season_opening(root: Path, places: Places, pins: Pins) -> datetime | None:
    """The season's opening: the pinned one, else the published freeze anchor's token time."""
    return pins.season_opening or anchor_time(root, places)
