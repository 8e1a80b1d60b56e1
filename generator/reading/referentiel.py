"""How a track's référentiel declares what it consumes: each criterion's ``champs`` (collection prefix ->
pointer patterns). The season check holds them against the track's probant fields; the compiler serves
their union as the table of what may be asserted (:mod:`generator.tracks.assertable`), which the scorer
applies."""

from __future__ import annotations

from generator.tracks.assertable import consumed_fields

__all__ = ["consumed_fields"]
