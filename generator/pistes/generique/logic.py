"""The protocol of the générique track, assembled (``tracks/generique/track.yaml``, ``code``).

The protocol is :class:`generator.season.logic.TrackLogic`: the evaluator, its shortcut readings and the
same-rank delays (:mod:`.evaluator`), the agents written from the served référentiel alone
(:mod:`.independent`), and the careless readings its control must survive (:mod:`.control`, optional).
"""

from typing import Any

from generator.pistes.generique.control import CONTROL_READINGS
from generator.pistes.generique.evaluator import (
    ALL_SHORTCUTS,
    FAMILY_SHORTCUTS,
    NAMED_BY_FAMILY,
    NAMED_SHORTCUTS,
    REFERENCE,
    evaluate,
    same_rank_forms,
)
from generator.pistes.generique.independent import EXCEPTIONS, INDEPENDENT

OUTSIDE_RULE: dict[str, Any] = {}

__all__ = ["ALL_SHORTCUTS", "CONTROL_READINGS", "EXCEPTIONS", "FAMILY_SHORTCUTS", "INDEPENDENT", "NAMED_BY_FAMILY",
           "NAMED_SHORTCUTS", "OUTSIDE_RULE", "REFERENCE", "evaluate", "same_rank_forms"]
