"""An honest proof-spec 3.1 proof recognised and verified in one pass, near the cryptographic floor (issue 43).

A season's close judges hundreds of thousands of proofs, nearly all honest. The reader and the checks of
:mod:`.proof_v3` name the first field at fault of any proof, through typed objects built field by field; their
cost, beside the one Ed25519 verification each proof needs, was most of the proof work. :func:`honest_v3`
makes every check of :func:`~.proof_v3.read_v3`, :func:`~.proof_v3.condition_1` and
:func:`~.proof_v3.identity_problem` on the parsed view directly, in one pass, and returns what an honest
proof's verdict holds. It never judges a proof: at the first thing that is not the honest case (a field of
another shape, a check that fails, a pending batch, a view with the owner's pairs, a Rekor entry carried, no
pinned authority, another spec_version than 3.1, a flat field that differs), it returns None and the caller
reads the proof with :mod:`.proof_v3`, which says why. So a verdict made from it is the one the full path
makes (``tests/trust_layer/test_honest_v3.py`` compares them on every kind of proof the scorer names).
"""

from __future__ import annotations

import binascii
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from json.encoder import encode_basestring_ascii
from typing import Any, cast

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from generator.base import strict_json
from generator.contract.hashing import canonical_json
from generator.trust_layer.proof_v3 import CONSISTENCY, IDENTITY_FIELDS, ProofV3, Window, rekor_check
from generator.trust_layer.trust_proof import HASH_PREFIX, KEY_PREFIX, public_key
from generator.trust_layer.tsa_token import TokenError, verified_time

SPEC = "3.1"
_HEX = re.compile(r"[0-9a-f]*")
_SIDES = ("request_hash", "response_hash")
_FLAT = (("request_hash", "request"), ("response_hash", "response"))
_OPENED_WITH = (*IDENTITY_FIELDS, CONSISTENCY)  # the identity opened, and its consistency when committed
_OPENS = {name: name.encode() + b"\x00" for name in _OPENED_WITH}  # a commitment's preimage: field, 0x00, ...
_SIGNATURE = re.compile(KEY_PREFIX + r"[A-Za-z0-9_-]{86}")  # an Ed25519 signature, 64 bytes, no padding
_URLSAFE = bytes.maketrans(b"-_", b"+/")  # base64url to base64, as urlsafe_b64decode translates it
_sha256 = hashlib.sha256


@dataclass(slots=True)
class Honest:
    """What the verdict of an honest 3.x proof holds (``score/proofs.py`` words it as ``verdict_v3`` does)."""

    spec_version: str
    time: datetime  # the token's, to the second
    unchecked: list[str]
    flat: dict[str, str | None]  # hashes.request / hashes.response, bare, when served (never None)
    engagements: dict[str, str | None]
    agent_identity: str


@dataclass
class _LogOnly:
    """What :func:`~.proof_v3.rekor_check` reads of a proof that carries no Rekor entry: its log."""

    rekor: dict[str, Any] | None


class PinnedKeys:
    """The pinned Trust Layer keys, each parsed once (``ed25519:<base64url>``), with what one judge's proofs
    share: the inclusion walks already verified, by batch (:func:`_included`), and each batch token's time. A
    judge's window is fixed, so a token's time, once verified in it, is the one it has for every proof."""

    def __init__(self, keys: Sequence[str]) -> None:
        self.texts = list(keys)
        self.objects: list[Ed25519PublicKey] = [public_key(k) for k in self.texts]
        self.walks: dict[tuple[bytes, int, int, bytes], list[str]] = {}
        self.times: dict[tuple[str, bytes], datetime] = {}  # a batch token's time (its outcome: tsa_token's)
        self.logs: dict[str, tuple[str, str]] = {}  # rekor_check of a log with no entry, by its status


def _bare(value: object) -> str | None:
    """``bare_hash``'s text before its hex check: the hash without ``sha256:``, when it is a string of 64."""
    if type(value) is not str:
        return None
    text = value[7:] if value.startswith(HASH_PREFIX) else value
    return text if len(text) == 64 else None


def _leaf_text(values: list[Any]) -> str | None:
    """The commitments ``values`` as one hex text, ``00`` (RFC 6962's leaf prefix) before each: the bytes it
    decodes to are the leaves' preimages, 33 bytes each; None when one is no ``_bare`` hash (its hex digits
    are checked by the caller). Written as Trust Layer writes them, ``sha256:`` and 64 digits, in one pass."""
    bare = [v[7:] for v in values if type(v) is str and len(v) == 71 and v.startswith(HASH_PREFIX)]
    if len(bare) != len(values):
        found = [_bare(v) for v in values]
        if None in found:
            return None
        bare = cast(list[str], found)
    return "00" + "00".join(bare)


def _canonical(value: object) -> bytes:
    """``canonical_json(value)`` as a commitment hashes it (UTF-8): a string, true, or None in one step."""
    if type(value) is str:
        return encode_basestring_ascii(value).encode("ascii")
    if value is True:
        return b"true"
    if value is None:
        return b"null"
    return canonical_json(value).encode("utf-8")


def _root(leaves: list[bytes]) -> bytes:
    """RFC 6962's tree hash of already hashed leaves: pairs from the left, an odd last node promoted (the
    same tree as :func:`~.merkle.tree_hash`'s split at the largest power of two)."""
    sha = _sha256
    while len(leaves) > 1:
        paired = [sha(b"\x01" + leaves[i] + leaves[i + 1]).digest() for i in range(0, len(leaves) - 1, 2)]
        if len(leaves) % 2:
            paired.append(leaves[-1])
        leaves = paired
    return leaves[0]


def _included(chain: bytes, index: int, size: int, path: list[str], siblings: bytes, root: bytes,
              walks: dict[tuple[bytes, int, int, bytes], list[str]]) -> bool:
    """RFC 9162 §2.1.3.2, as :func:`~.merkle.inclusion_root` walks it: ``path`` (hex; ``siblings``, its bytes)
    must be exactly as long as the tree's shape gives the leaf, no step past the root (``sn`` 0), none missing.
    The walk is a function of where it stands (the two indexes and the digest) and of the rest of the path: a
    state from which a walk of the same batch already reached the root reaches it again along the same rest,
    so the siblings of a batch are hashed once (a leaf's own state is not kept: no other proof starts there)."""
    sha = _sha256
    fn, sn, digest = index, size - 1, sha(b"\x00" + chain).digest()
    states = []
    for step in range(len(path)):
        if sn == 0:  # a path longer than the leaf's: no walk of it reaches the root
            return False
        if step:
            key = (root, fn, sn, digest)
            known = walks.get(key)
            if known is not None and known == path[step:]:
                break
            states.append((key, step))
        sibling = siblings[32 * step:32 * step + 32]
        if fn % 2 == 1 or fn == sn:
            digest = sha(b"\x01" + sibling + digest).digest()
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            digest = sha(b"\x01" + digest + sibling).digest()
        fn, sn = fn >> 1, sn >> 1
    else:
        if sn != 0 or digest != root:
            return False
    if len(walks) > 1 << 16:
        walks.clear()
    for key, step in states:
        walks[key] = path[step:]  # a copy: the walk's rest, as verified
    return True


def _rekor_notes(log: dict[str, Any] | None, keys: PinnedKeys, window: Window) -> tuple[str, str]:
    """:func:`~.proof_v3.rekor_check` of a log that carries no entry: a function of its status alone, worded
    once per status."""
    status = log.get("status") if log is not None else None
    if type(status) is not str:
        return rekor_check(cast(ProofV3, _LogOnly(log)), window)
    found = keys.logs.get(status)
    if found is None:
        found = rekor_check(cast(ProofV3, _LogOnly(log)), window)
        if len(keys.logs) < 64:
            keys.logs[status] = found
    return found


def honest_v3(data: bytes, proof_id: str, keys: PinnedKeys, window: Window) -> Honest | None:
    """The verdict's content when ``data`` (a proof file's bytes, named ``proof_id``) is an honest 3.1 proof
    in every respect the full path checks; None when anything is otherwise (the full path then judges it)."""
    parsed = strict_json.fast_loads(data)
    if parsed is None or type(parsed[0]) is not dict:
        return None
    doc = cast(dict[str, Any], parsed[0])
    get = doc.get
    if get("proof_id") != proof_id or get("spec_version") != SPEC or window.ca_pem is None \
            or get("commitment_nonces") is not None or get("chain_data") is not None:
        return None
    hashes, raw, batch, authority = get("hashes"), get("commitments"), get("batch_anchor"), \
        get("timestamp_authority")
    log, disclosed, stamp = get("transparency_log"), get("disclosed"), get("timestamp")
    if type(hashes) is not dict or type(raw) is not dict or not raw or type(batch) is not dict \
            or type(authority) is not dict or type(disclosed) is not dict or batch.get("status") != "anchored" \
            or (log is not None and type(log) is not dict) or (stamp is not None and type(stamp) is not str):
        return None
    tsr, status = authority.get("tsr_base64"), authority.get("status")
    index, size, path = batch.get("leaf_index"), batch.get("tree_size"), batch.get("audit_path")
    if type(tsr) is not str or (status is not None and type(status) is not str) or type(index) is not int \
            or type(size) is not int or not 0 <= index < size or type(path) is not list or len(path) > 64:
        return None
    chain, root = _bare(hashes.get("chain")), _bare(batch.get("root"))
    flat = {side: _bare(hashes[key]) for side, key in _FLAT if hashes.get(key) is not None}
    for pair in disclosed.values():
        if type(pair) is not dict or len(pair) != 2 or type(pair.get("nonce")) is not str or "value" not in pair:
            return None
    opened = _OPENED_WITH if CONSISTENCY in raw else IDENTITY_FIELDS
    for name in opened:
        if name not in disclosed or name not in raw or len(disclosed[name]["nonce"]) != 64:
            return None
    names = sorted(raw)
    leaves = _leaf_text([raw[name] for name in names])
    if chain is None or root is None or leaves is None or None in flat.values():
        return None
    for entry in path:
        if type(entry) is not str or len(entry) != 64:
            return None
    # every hash and nonce, each of exactly 64 lowercase hex digits, as bytes in one step
    every = "".join((chain, root, *cast(dict[str, str], flat).values(),
                     *[disclosed[name]["nonce"] for name in opened], *path, leaves))
    try:
        packed = bytes.fromhex(every)
    except ValueError:
        return None
    if packed.hex() != every:  # fromhex takes spaces and capitals too
        return None
    nonces = 64 + 32 * len(flat)
    siblings = nonces + 32 * len(opened)
    start = siblings + 32 * len(path)
    # condition 1: the chain is the Merkle root of the commitments, signed by a pinned key
    sha = _sha256
    if _root([sha(packed[n:n + 33]).digest() for n in range(start, len(packed), 33)]) != packed[:32]:
        return None
    signature = get("arkforge_signature")
    if type(signature) is not str or not _SIGNATURE.fullmatch(signature):
        return None
    signed = binascii.a2b_base64(signature[len(KEY_PREFIX):].encode("ascii").translate(_URLSAFE) + b"==")
    message = chain.encode("ascii")
    for verifier in keys.objects:
        try:
            verifier.verify(signed, message)
            break
        except InvalidSignature:
            continue
    else:
        return None
    pubkey = get("arkforge_pubkey")
    if pubkey is not None and pubkey not in keys.texts:
        return None
    # the batch: the chain included at its leaf, the root's token by the pinned authority within the season
    root_bytes = packed[32:64]
    if not _included(packed[:32], index, size, path, packed[siblings:start], root_bytes, keys.walks):
        return None
    when = keys.times.get((tsr, root_bytes))
    if when is None:
        try:
            when = verified_time(tsr, root_bytes, window.ca_pem, window.cert_pem).replace(microsecond=0)
        except TokenError:
            return None
        if len(keys.times) > 1 << 12:
            keys.times.clear()
        keys.times[(tsr, root_bytes)] = when
    if (window.opening is not None and when < window.opening) or (window.closing is not None
                                                                    and when > window.closing):
        return None
    if log is not None and log.get("entry") is not None:
        return None
    logged, not_logged = _rekor_notes(log, keys, window)
    if logged:
        return None
    # condition 2: disclosed opens a verified identity, bound, a DID; no flat field says otherwise
    for n, name in enumerate(opened):
        at = start + 33 * names.index(name) + 1
        if sha(_OPENS[name] + packed[nonces + 32 * n:nonces + 32 * n + 32]
               + _canonical(disclosed[name]["value"])).digest() != packed[at:at + 32]:
            return None
    identity = disclosed["agent_identity"]["value"]
    if disclosed["agent_identity_verified"]["value"] is not True or \
            disclosed["did_resolution_status"]["value"] != "bound" or type(identity) is not str or not identity:
        return None
    for name in _OPENED_WITH:
        if name in doc and name in disclosed and doc[name] != disclosed[name]["value"]:
            return None
    close = "" if window.closing is not None else "the close not checked (no --season-close)"
    return Honest(SPEC, when, [n for n in (close, not_logged) if n], flat,
                  {side: raw[side][-64:] if side in raw else None for side in _SIDES}, identity)  # bare, as read
