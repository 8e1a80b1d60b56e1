"""Trust Layer's proofs, above :mod:`generator.contract`: a served proof read in the format its spec version
says (:mod:`~generator.trust_layer.served_proof`, the one reader of 1.2 and 3.x alike) and verified offline
(chain or commitments, signature, RFC 3161 token, Merkle inclusion, Rekor entry), the one time rule of an
anchoring proof, and the anchoring of a track's freeze record (its published ``anchor.json``)."""
