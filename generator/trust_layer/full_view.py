"""What a published 3.x freeze anchor keeps of the owner's ``/full`` view: what is signed or opened.

A 3.x proof signs its chain, the Merkle root of one commitment per field; nothing else of the view is
signed. The ``/full`` view adds, beside the commitments, unsigned copies of the committed values
(``parties.buyer_fingerprint``, ``parties.seller``, ``hashes.request``...) and fields no commitment covers
(``certification_fee``, ``views_count``, ``batch_anchor.batch_id``...). An anchor that kept them as served
would publish, under Trust Layer's signature, values nobody checked: a ``parties.buyer_fingerprint`` that
is not the committed one reads as the challenge's key to whoever opens ``anchor.json``.

So every owner pair (``commitment_nonces`` + ``chain_data``) and every ``disclosed`` pair must open its
commitment; every copy of a committed value that is kept (``parties.<field>``, ``hashes.request``,
``hashes.response``) must equal the opened value; and the anchor keeps only :data:`KEPT`: the signed and
verified parts, the openings, and those checked copies. The rest is left out of the anchor.
"""

from __future__ import annotations

from typing import Any

from generator.trust_layer.proof_v3 import Opening, ProofV3, opening_problem

KEPT = ("proof_id", "spec_version", "hashes", "commitments", "arkforge_signature", "arkforge_pubkey",
        "batch_anchor", "timestamp_authority", "disclosed", "commitment_nonces", "chain_data", "parties")
BATCH_KEPT = ("status", "leaf_index", "tree_size", "audit_path", "root")  # each used by the inclusion check
TOKEN_KEPT = ("status", "tsr_base64")  # the token, verified against the pinned authority
HASH_COPIES = {"request": "request_hash", "response": "response_hash"}  # hashes.<key> copies commitments.<field>


def _opened(proof: ProofV3) -> dict[str, Opening]:
    """Every opening of the view, the owner's first (they open every field), then ``disclosed``."""
    return {**proof.disclosed, **proof.owner}


def _copies(document: dict[str, Any]) -> list[tuple[str, str, Any]]:
    """``(where, committed field, value)`` of every copy of a committed value the view holds."""
    parties = document.get("parties")
    hashes = document.get("hashes")
    found = [(f"parties.{name}", name, value) for name, value in parties.items()] \
        if isinstance(parties, dict) else []
    if isinstance(hashes, dict):
        found += [(f"hashes.{key}", field, hashes[key]) for key, field in HASH_COPIES.items() if key in hashes]
    return found


def _same(where: str, copy: Any, opened: Any) -> bool:
    if where.startswith("hashes.") and isinstance(copy, str):
        return bool(copy.removeprefix("sha256:") == opened)
    return bool(type(copy) is type(opened) and copy == opened)


def view_problems(proof: ProofV3, document: Any) -> list[str]:
    """Why the view cannot be kept in an anchor (empty: it can): a pair that opens nothing, or a copy that
    contradicts the value its commitment opens to."""
    problems = [problem for name, opening in proof.owner.items()
                if (problem := opening_problem(proof, name, opening, "chain_data"))]
    problems += [problem for name, opening in proof.disclosed.items()
                 if (problem := opening_problem(proof, name, opening, "disclosed"))]
    opened = _opened(proof)
    for where, name, value in _copies(document if isinstance(document, dict) else {}):
        if name in opened and name in proof.commitments and not _same(where, value, opened[name].value):
            problems.append(f"{where}: {value!r} is not the value commitments.{name} opens to "
                            f"({opened[name].value!r}): an unsigned copy that contradicts the signed proof")
    return problems


def kept_view(proof: ProofV3, document: dict[str, Any]) -> dict[str, Any]:
    """The view as an anchor keeps it: :data:`KEPT` only, a copy only when its commitment is opened (and so
    checked by :func:`view_problems`), the batch anchor and the token as verified."""
    opened = _opened(proof)
    kept = {key: document[key] for key in KEPT if key in document}
    if isinstance(kept.get("parties"), dict):
        kept["parties"] = {name: value for name, value in kept["parties"].items()
                           if name in opened and name in proof.commitments}
        if not kept["parties"]:
            del kept["parties"]
    if isinstance(kept.get("hashes"), dict):
        kept["hashes"] = {key: value for key, value in kept["hashes"].items()
                          if key == "chain" or (HASH_COPIES.get(key) in opened)}
    for key, wanted in (("batch_anchor", BATCH_KEPT), ("timestamp_authority", TOKEN_KEPT)):
        if isinstance(kept.get(key), dict):
            kept[key] = {name: value for name, value in kept[key].items() if name in wanted}
    return kept
