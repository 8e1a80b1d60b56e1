"""One reader for a Trust Layer proof as served, whatever its format: the proof says which by its
``spec_version``, so that no caller picks the format itself.

From 3.0 on a proof commits each field and is read by :func:`~generator.trust_layer.proof_v3.read_v3`
(:class:`~generator.trust_layer.proof_v3.ProofV3`); before, it is a 1.2 proof or its opened pair, read by
:func:`~generator.trust_layer.trust_proof.read_proof` (:class:`~generator.trust_layer.trust_proof.TrustProof`).
Both raise :class:`~generator.trust_layer.trust_proof.ProofError` naming the first field at fault.
"""

from __future__ import annotations

from typing import Any

from generator.trust_layer.proof_v3 import ProofV3, is_v3, read_v3
from generator.trust_layer.trust_proof import TrustProof, read_proof

ServedProof = TrustProof | ProofV3


def read_served_proof(value: Any) -> ServedProof:
    """``value`` (a proof parsed from JSON) read in the format its ``spec_version`` names: 3.0 or later a
    :class:`ProofV3`, else a 1.2 :class:`TrustProof` (or an opened pair)."""
    return read_v3(value) if is_v3(value) else read_proof(value)
