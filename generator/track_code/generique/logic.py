"""The code of the générique track, as one object (``tracks/generique/track.yaml``, ``code``).

:class:`generator.reading.logic.TrackLogic` filled in: the evaluator, its shortcut readings and the
same-rank delays (:mod:`.evaluator`), the agents written from the served référentiel alone
(:mod:`.independent`) and the careless readings its control must survive (:mod:`.control`). No reading
outside the rule.
"""

from generator.reading.logic import Agents, Shortcuts, TrackLogic
from generator.track_code.generique.control import CONTROL_READINGS
from generator.track_code.generique.evaluator import (
    FAMILY_SHORTCUTS,
    NAMED_BY_FAMILY,
    NAMED_SHORTCUTS,
    REFERENCE,
    evaluate,
    same_rank_forms,
)
from generator.track_code.generique.independent import EXCEPTIONS, INDEPENDENT

TRACK_LOGIC = TrackLogic(
    evaluate=evaluate,
    reference=REFERENCE,
    shortcuts=Shortcuts(by_family=FAMILY_SHORTCUTS, named=NAMED_SHORTCUTS, named_by_family=NAMED_BY_FAMILY,
                        beaten_together=frozenset({"P5"})),
    same_rank_forms=same_rank_forms,
    agents=Agents(independent=INDEPENDENT, exceptions=EXCEPTIONS),
    control_readings=CONTROL_READINGS,
)
