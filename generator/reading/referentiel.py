"""How a track's référentiel declares what it consumes: each criterion's ``champs`` (collection prefix ->
pointer patterns). The season check holds them against the track's probant fields; the scorer refuses an
assertion on a field no criterion consumes."""

from __future__ import annotations

from typing import Any


def consumed_fields(referentiel: Any) -> dict[str, frozenset[str]]:
    """Collection prefix -> the pointer patterns some criterion of the référentiel consumes (``champs``)."""
    found: dict[str, set[str]] = {}
    for critere in referentiel.get("criteres", []) if isinstance(referentiel, dict) else []:
        for prefix, patterns in (critere.get("champs") or {}).items():
            found.setdefault(prefix, set()).update(patterns)
    return {prefix: frozenset(patterns) for prefix, patterns in found.items()}
