"""Honest proofs for a resource, as a panel or a test writes them: the manifest's hashes, opened.

Offline there is no Trust Layer: a disclosure is the pair of openings an agent would copy from
``GET /v1/proof/{id}/full``. Its values are the manifest's ``request_hash`` and ``response_hash``; the
nonces are any 64-hex strings (derived from the resource, so that the output is deterministic).

Both helpers take the project root (the primary track's manifest is read and checked on each call, so a
rebuilt manifest is never served stale) or an already loaded :class:`Manifest` (a caller writing many proofs,
or of another track, loads it once).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from generator.contract.manifest import Manifest
from generator.score.inputs import ScoreInputError, load_manifest
from generator.tracks.loader import track_named


def _hex(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


def _manifest(root: Path | Manifest) -> Manifest:
    return root if isinstance(root, Manifest) else load_manifest(root, track_named(root, None).trees.manifest)


def make_disclosure(root: Path | Manifest, resource: str, *,
                    response_of: str | None = None) -> tuple[str, dict[str, Any]]:
    """``(proof_id, disclosure)`` of a call to ``resource`` whose openings are the manifest's hashes.

    ``response_of`` takes the response hash of another manifest path instead (``"/_systeme/403"``: the proxy
    did not forward the secret), to write an instrument defect or a mismatched proof on purpose.
    """
    manifest = _manifest(root)
    answered = response_of or resource
    response = manifest.response_hash(answered)
    if response is None:
        raise ScoreInputError(f"{answered}: not in the manifest (manifest/<piste>/manifest.json): no response "
                              f"hash to "
                              "open; give a path the corpus serves")
    proof_id = "prf_" + _hex("proof", resource, answered)[:24]
    return proof_id, {
        "request_hash": {"nonce": _hex("nonce-request", proof_id), "value": manifest.request_hash(resource)},
        "response_hash": {"nonce": _hex("nonce-response", proof_id), "value": response},
    }


def make_submission(root: Path | Manifest, task_id: str, verdict: str, claims: list[tuple[str, str, Any]], *,
                    piste: str, season: int = 1, agent_did: str = "did:key:z6MkPanelAgent") -> dict[str, Any]:
    """A §4 submission asserting ``claims`` (resource, field, value), each cited with an honest proof."""
    manifest = _manifest(root)  # read once for every proof of the submission
    assertions, disclosures = [], {}
    for number, (resource, field, value) in enumerate(claims, 1):
        proof_id, disclosure = make_disclosure(manifest, resource)
        disclosures[proof_id] = disclosure
        assertions.append({"id": f"a{number}", "claim": {"resource": resource, "field": field, "value": value},
                           "proof_ids": [proof_id]})
    return {"season": season, "track": piste, "task_id": task_id, "agent_did": agent_did,
            "verdict": verdict, "assertions": assertions, "disclosures": disclosures}
