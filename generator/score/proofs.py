"""Submissions' proofs as Trust Layer serves them, judged offline for conditions 1 and 2 (spec §4.1).

``--proofs`` may be a folder of proof JSONs, one per ``proof_id``. Each becomes the verdict the scorer reads
(``{"valide", "identite_liee"}``, as a third-party verification file gives it) with the reasons in words:
condition 1 from the chain hash and the Ed25519 signature against the pinned Trust Layer key; condition 2
as §4.1 words it, so below ``spec_version`` 3.1 the identity a proof carries is covered by no anchor and is
not receivable. The proof's time (the RFC 3161 token's, never Trust Layer's ``timestamp``) is not verified
offline here, and every verdict says so. The flat hashes are kept: one that differs from the opened pair of
the submission is a Trust Layer incident (``generator/score/assertion.py``).
"""

from __future__ import annotations

import re
from typing import Any

from generator.contract.trust_proof import TrustProof, verification_problems

IDENTITY_FROM = (3, 1)  # spec §4.1 condition 2: the identity triplet is anchored from 3.1 on
_VERSION = re.compile(r"([0-9]+)\.([0-9]+)")


def _version(text: str | None) -> tuple[int, int] | None:
    found = _VERSION.fullmatch(text or "")
    return (int(found[1]), int(found[2])) if found else None


def verdict_of(proof: TrustProof, pinned_key: str) -> dict[str, Any]:
    """The verdict on one proof: conditions 1 and 2, each with why in one sentence."""
    problems = verification_problems(proof, pinned_key)  # no fingerprint: a participant calls with their key
    version = _version(proof.spec_version)
    shown = proof.spec_version or "absent"
    if version is None or version < IDENTITY_FROM:
        identity = (f"spec_version {shown} is below 3.1: the identity it carries is covered by no anchor, not "
                    "receivable for condition 2 (spec §4.1)")
    else:
        identity = (f"spec_version {shown}: its disclosed identity block is not opened offline by this scorer "
                    "(condition 2 not established)")
    time = ("its RFC 3161 token is not verified offline here" if proof.tsr_base64 else
            "it carries no RFC 3161 token") + ": the proof's time within the season is not verified offline"
    return {"valide": not problems, "identite_liee": False,
            "motif_1": problems[0].removeprefix(f"proof {proof.proof_id}: ") if problems else "",
            "motif_2": identity, "heure": time,
            "hashes_plats": {"request_hash": proof.request_hash, "response_hash": proof.response_hash}}


def verdicts(proofs: dict[str, TrustProof], pinned_key: str) -> dict[str, dict[str, Any]]:
    """Each proof of a ``--proofs`` folder judged (:func:`verdict_of`), by ``proof_id``."""
    return {proof_id: verdict_of(proof, pinned_key) for proof_id, proof in sorted(proofs.items())}
