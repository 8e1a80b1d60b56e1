"""A batch's RFC 3161 token verified once for a whole pool of processes (issue 43).

Every proof of a batch (up to 250) carries the batch root's token. In one process, ``trust_layer/tsa_token.py``
keeps each token's outcome (its time, or why it fails) and verifies it once. When a season's participants are
scored by several processes, the proofs of one batch are spread among them; :class:`SharedOutcomes` lets them
share the outcomes through a folder, under one lock: the first process that meets a token verifies it and
writes its outcome, the others read it. The outcome is a pure function of the token, the bytes it anchors and
the pinned authority, so who verifies it changes nothing but the work.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime
from pathlib import Path

from generator.trust_layer.tsa_token import Outcome, Outcomes, TokenKey

_TIME, _PROBLEM = "T", "E"


def _name(key: TokenKey) -> str:
    """A file name for a token's outcome: the SHA-256 of everything the outcome depends on."""
    digest = hashlib.sha256()
    for part in key:
        data = part.encode("utf-8") if isinstance(part, str) else (b"\x00" if part is None else b"\x01" + part)
        digest.update(len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def _write(path: Path, found: Outcome) -> None:
    text = _TIME + found.isoformat() if isinstance(found, datetime) else _PROBLEM + found
    staged = path.with_suffix(f".{os.getpid()}")
    staged.write_text(text, "utf-8")
    os.replace(staged, path)


def _read(path: Path) -> Outcome:
    text = path.read_text("utf-8")
    return datetime.fromisoformat(text[1:]) if text[0] == _TIME else text[1:]


class SharedOutcomes(Outcomes):
    """The tokens' outcomes of a pool of processes, kept in ``folder`` (one file per token), each computed
    by the first process that needs it, under ``lock``; each process also keeps those it has met."""

    def __init__(self, folder: Path, lock: AbstractContextManager[object]) -> None:
        super().__init__()
        self.folder, self.lock = folder, lock

    def outcome(self, key: TokenKey, verify: Callable[[], Outcome]) -> Outcome:
        found = self.kept.get(key)
        if found is not None:
            return found
        path = self.folder / _name(key)
        with self.lock:
            if path.exists():
                found = _read(path)
            else:
                found = verify()
                self.verified += 1
                _write(path, found)
        if len(self.kept) >= self.LIMIT:
            self.kept.clear()
        self.kept[key] = found
        return found


def verified_count(folder: Path) -> int:
    """How many tokens the pool verified (each once)."""
    return sum(1 for _ in folder.iterdir())
