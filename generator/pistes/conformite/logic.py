"""The code of the conformité track, as one object (``tracks/conformite/track.yaml``, ``code``).

:class:`generator.season.logic.TrackLogic` filled in: the evaluator and its shortcut readings
(:mod:`.evaluator`), the same-rank sources of the founding rule (:mod:`.same_rank`), the agents written
from the served référentiel alone (:mod:`.independent`), the reading outside the rule
(:mod:`.outside_rule`) and the careless readings its control must survive (:mod:`.control`).
"""

from generator.pistes.conformite.control import CONTROL_READINGS
from generator.pistes.conformite.evaluator import (
    FAMILY_SHORTCUTS,
    NAMED_SHORTCUTS,
    P5_SHORTCUTS,
    REFERENCE,
    evaluate,
)
from generator.pistes.conformite.independent import EXCEPTIONS, INDEPENDENT
from generator.pistes.conformite.outside_rule import OUTSIDE_RULE
from generator.pistes.conformite.same_rank import same_rank_forms
from generator.season.logic import Agents, Shortcuts, TrackLogic

TRACK_LOGIC = TrackLogic(
    evaluate=evaluate,
    reference=REFERENCE,
    shortcuts=Shortcuts(by_family=FAMILY_SHORTCUTS, named=NAMED_SHORTCUTS, named_by_family={"P5": P5_SHORTCUTS}),
    same_rank_forms=same_rank_forms,
    agents=Agents(independent=INDEPENDENT, exceptions=EXCEPTIONS, outside_rule=OUTSIDE_RULE),
    control_readings=CONTROL_READINGS,
)
