"""An invalidated season (spec §8): "Un changement en cours de saison n'est pas une correction : il invalide la
saison. La seule réponse est de le publier, de clore la saison, et de repartir."

``corpus season invalidate`` writes ``<freeze folder>/invalidation.json`` once (``corpus-invalidation/1``:
the track, the instant, the motive, the proof_id in force and the chain's length); ``corpus index`` then
publishes the invalidation and no ranking. The next season starts afresh: its freeze folder emptied in a
commit that says so, like any new season.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from generator.base import strict_json
from generator.base.bounded_read import PUBLISHED_LIMIT, read_bounded
from generator.base.errors import FreezeRecordError, FrozenMismatch, unreadable_text
from generator.base.path_checks import inside_checkout
from generator.base.transaction import write_file
from generator.contract.places import Places

FORMAT = "corpus-invalidation/1"
FIELDS = ("format", "piste", "invalidee_le", "motif", "gel_en_vigueur", "gels")


def invalidation_path(places: Places) -> Path:
    """``<freeze folder>/invalidation.json``, checkout-relative."""
    return Path(places.freeze) / "invalidation.json"


@dataclass(frozen=True)
class Invalidation:
    """The season invalidated: when (``le``, ISO 8601 UTC), why, and the freeze in force then."""

    path: Path
    piste: str
    le: str
    motif: str
    gel_en_vigueur: str | None  # the proof_id of the record in force; None: it was not anchored
    gels: int  # how many records the chain held

    def to_bytes(self) -> bytes:
        document = {"format": FORMAT, "piste": self.piste, "invalidee_le": self.le, "motif": self.motif,
                    "gel_en_vigueur": self.gel_en_vigueur, "gels": self.gels}
        return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def read_invalidation(root: Path, places: Places) -> Invalidation | None:
    """The track's invalidation, or None; a file that is not one is a :class:`FreezeRecordError` naming it."""
    path = invalidation_path(places)
    inside_checkout(root, path, FreezeRecordError)
    if not os.path.lexists(root / path):
        return None
    fix = "restore it from git (it is committed and published)"
    try:
        value = strict_json.document(read_bounded(root / path, PUBLISHED_LIMIT, follow_symlinks=False))
    except strict_json.NotJson as exc:
        raise FreezeRecordError(f"{exc.text(str(path))}; {fix}") from None
    except OSError as exc:
        raise FreezeRecordError(unreadable_text(root / path, exc, fix)) from None
    if not isinstance(value, dict) or value.get("format") != FORMAT or sorted(value) != sorted(FIELDS):
        raise FreezeRecordError(f"{path}: not a {FORMAT} document holding {', '.join(FIELDS)}; {fix}")
    piste, le, motif, gel, gels = (value[name] for name in FIELDS[1:])
    if not (isinstance(piste, str) and isinstance(le, str) and isinstance(motif, str) and motif.strip()
            and (gel is None or isinstance(gel, str)) and isinstance(gels, int) and not isinstance(gels, bool)):
        raise FreezeRecordError(f"{path}: a field has the wrong type (piste, invalidee_le, motif: text; "
                                f"gel_en_vigueur: a proof_id or null; gels: a count); {fix}")
    return Invalidation(path, piste, le, motif, gel, gels)


def write_invalidation(root: Path, places: Places, motif: str, now: datetime, proof_id: str | None,
                       records: int) -> Invalidation:
    """Write the invalidation once (the caller holds the builder lock); a second one is refused."""
    existing = read_invalidation(root, places)
    if existing is not None:
        raise FrozenMismatch(f"{existing.path}: the season of {places.piste} is already invalidated "
                             f"({existing.le}: {existing.motif}); nothing written")
    when = now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    made = Invalidation(invalidation_path(places), places.piste, when, motif, proof_id, records)
    try:
        write_file(root / made.path, made.to_bytes())
    except OSError as exc:
        raise FreezeRecordError(f"{made.path}: cannot write: {exc.strerror}; nothing invalidated") from None
    return made
