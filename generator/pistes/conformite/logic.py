"""The protocol of the conformité track, assembled (``tracks/conformite/track.yaml``, ``code``).

The protocol is :class:`generator.season.logic.TrackLogic`: the evaluator and its shortcut readings
(:mod:`.evaluator`), the same-rank sources of the founding rule (:mod:`.same_rank`), the agents
written from the served référentiel alone (:mod:`.independent`), and the careless readings its
control must survive (:mod:`.control`, optional).
"""

from generator.pistes.conformite.control import CONTROL_READINGS
from generator.pistes.conformite.evaluator import (
    ALL_SHORTCUTS,
    FAMILY_SHORTCUTS,
    NAMED_SHORTCUTS,
    P5_SHORTCUTS,
    REFERENCE,
    evaluate,
)
from generator.pistes.conformite.independent import EXCEPTIONS, INDEPENDENT
from generator.pistes.conformite.outside_rule import OUTSIDE_RULE
from generator.pistes.conformite.same_rank import same_rank_forms

NAMED_BY_FAMILY = {"P5": P5_SHORTCUTS}

__all__ = ["ALL_SHORTCUTS", "CONTROL_READINGS", "EXCEPTIONS", "FAMILY_SHORTCUTS", "INDEPENDENT", "NAMED_BY_FAMILY",
           "NAMED_SHORTCUTS", "OUTSIDE_RULE", "REFERENCE", "evaluate", "same_rank_forms"]
