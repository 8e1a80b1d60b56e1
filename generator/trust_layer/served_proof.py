"""One reader for a Trust Layer proof as served, whatever its format: the proof says which by its
``spec_version``, so that no caller picks the format itself.

From 3.0 on a proof commits each field and is read by :func:`~generator.trust_layer.proof_v3.read_v3`
(:class:`~generator.trust_layer.proof_v3.ProofV3`); before, it is a 1.2 proof or its opened pair, read by
:func:`~generator.trust_layer.trust_proof.read_proof` (:class:`~generator.trust_layer.trust_proof.TrustProof`).
Both raise :class:`~generator.trust_layer.trust_proof.ProofError` naming the first field at fault.
"""

from __future__ import annotations

from typing import Any

from generator.trust_layer.proof_v3 import ProofV3, is_v3, read_v3, version_of
from generator.trust_layer.trust_proof import ProofError, TrustProof, _shown, read_proof

ServedProof = TrustProof | ProofV3
KNOWN_MAJORS = (1, 2, 3)  # 1.x and 2.x: a chain over the values; 3.x: a commitment per field


def read_served_proof(value: Any) -> ServedProof:
    """``value`` (a proof parsed from JSON) read in the format its ``spec_version`` names: 3.x a
    :class:`ProofV3`, 1.x and 2.x (or none) a :class:`TrustProof` (or an opened pair). A version of another
    major (``9.9``) is named as unknown, never read as the nearest format and refused for a missing field."""
    version = value.get("spec_version") if isinstance(value, dict) else None
    if isinstance(version, str) and (version_of(version) or (0, 0))[0] not in KNOWN_MAJORS:
        raise ProofError(f"spec_version: {_shown(version)} is a proof-spec version this verifier does not know: "
                         "it reads 1.x and 2.x (a chain hash over the values) and 3.x (a commitment per field); a "
                         "newer format is verified once its rules are known here")
    return read_v3(value) if is_v3(value) else read_proof(value)
