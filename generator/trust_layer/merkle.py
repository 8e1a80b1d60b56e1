"""RFC 6962 Merkle trees and proof-spec 3.x per-field commitments (CONTRACT §8), written from the RFCs.

A 3.x proof publishes one commitment per chain field instead of the values, so a third party recomputes
``hashes.chain`` from public data alone: the Merkle tree hash of ``leaf(commitment)`` over the fields sorted
by name. The same tree, one level up, is the batch whose root the RFC 3161 token and Rekor anchor. Two
properties are load-bearing and are why this is RFC 6962 and not a naive tree: leaf and node hashes are
domain-separated (``0x00`` / ``0x01``), and an odd node is promoted, never duplicated (a duplicated last
node lets two leaf sets share a root). An inclusion proof is checked with RFC 9162 §2.1.3.2, whose walk
consumes exactly the path that ``tree_size`` implies: an overstated size cannot reach the root.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from generator.contract.hashing import canonical_json

NONCE_BYTES = 32


class MerkleError(ValueError):
    """An inclusion proof that does not describe the tree it claims (index, size or path length)."""


def leaf(data: bytes) -> bytes:
    """RFC 6962 leaf hash: ``sha256(0x00 || data)``."""
    return hashlib.sha256(b"\x00" + data).digest()


def node(left: bytes, right: bytes) -> bytes:
    """RFC 6962 interior node hash: ``sha256(0x01 || left || right)``."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(size: int) -> int:
    """The largest power of two strictly below ``size`` (size >= 2): where RFC 6962 splits a tree."""
    return 1 << ((size - 1).bit_length() - 1)


def tree_hash(leaves: Sequence[bytes]) -> bytes:
    """The Merkle tree hash over already-hashed ``leaves`` (RFC 6962 §2.1); an empty tree has none."""
    if not leaves:
        raise MerkleError("an empty tree has no root")
    if len(leaves) == 1:
        return leaves[0]
    k = _split(len(leaves))
    return node(tree_hash(leaves[:k]), tree_hash(leaves[k:]))


def commitment(field: str, nonce: bytes, value: Any) -> bytes:
    """``sha256(utf8(field) || 0x00 || nonce || utf8(canonical_json(value)))``: the field name in the
    preimage stops a commitment from moving between slots; canonical JSON keeps ``1`` and ``"1"`` apart."""
    if len(nonce) != NONCE_BYTES:
        raise MerkleError(f"a nonce is {NONCE_BYTES} bytes, not {len(nonce)}")
    return hashlib.sha256(field.encode("utf-8") + b"\x00" + nonce + canonical_json(value).encode("utf-8")).digest()


def commitments_root(commitments: Mapping[str, bytes]) -> bytes:
    """``hashes.chain`` of a 3.x proof: the tree hash of ``leaf(commitment)``, fields sorted by name."""
    return tree_hash([leaf(commitments[name]) for name in sorted(commitments)])


def path_length(index: int, size: int) -> int:
    """How many siblings the inclusion proof of leaf ``index`` in a tree of ``size`` leaves carries."""
    if not 0 <= index < size:
        raise MerkleError(f"leaf_index {index} is not in [0, {size})")
    length, last = 0, size - 1
    while last > 0:
        if index % 2 == 1 or index < last:  # a sibling exists at this level; a right-edge node is promoted
            length += 1
        index, last = index // 2, last // 2
    return length


def inclusion_root(leaf_hash: bytes, index: int, size: int, path: Sequence[bytes]) -> bytes:
    """The root the ``path`` from ``leaf_hash`` at ``index`` reaches in a tree of ``size`` leaves (RFC 9162
    §2.1.3.2); :class:`MerkleError` when the path is not exactly the one that shape requires."""
    expected = path_length(index, size)
    if len(path) != expected:
        raise MerkleError(f"audit_path has {len(path)} hash(es), a tree of {size} leaves gives leaf {index} "
                          f"exactly {expected}")
    fn, sn, digest = index, size - 1, leaf_hash
    for sibling in path:
        if fn % 2 == 1 or fn == sn:
            digest = node(sibling, digest)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            digest = node(digest, sibling)
        fn, sn = fn >> 1, sn >> 1
    if sn != 0:  # unreachable once the length matches; kept as RFC 9162 states it
        raise MerkleError("audit_path ends before the root")
    return digest
