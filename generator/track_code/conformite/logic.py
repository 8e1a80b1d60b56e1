"""The code of the conformité track, as one object (``tracks/conformite/track.yaml``, ``code``).

:class:`generator.reading.logic.TrackLogic` filled in: the evaluator and its shortcut readings
(:mod:`.evaluator`), the same-rank sources of the founding rule (:mod:`.same_rank`), the agents written
from the served référentiel alone (:mod:`.independent`), the reading outside the rule
(:mod:`.outside_rule`) and the careless readings its control must survive (:mod:`.control`).
"""

from generator.reading.logic import Agents, Shortcuts, TrackLogic
from generator.track_code.conformite.control import CONTROL_READINGS
from generator.track_code.conformite.evaluator import (
    FAMILY_SHORTCUTS,
    NAMED_SHORTCUTS,
    P5_SHORTCUTS,
    REFERENCE,
    evaluate,
)
from generator.track_code.conformite.independent import EXCEPTIONS, INDEPENDENT
from generator.track_code.conformite.outside_rule import OUTSIDE_RULE
from generator.track_code.conformite.same_rank import same_rank_forms

TRACK_LOGIC = TrackLogic(
    evaluate=evaluate,
    reference=REFERENCE,
    shortcuts=Shortcuts(by_family=FAMILY_SHORTCUTS, named=NAMED_SHORTCUTS, named_by_family={"P5": P5_SHORTCUTS}),
    same_rank_forms=same_rank_forms,
    agents=Agents(independent=INDEPENDENT, exceptions=EXCEPTIONS, outside_rule=OUTSIDE_RULE),
    control_readings=CONTROL_READINGS,
)
