"""``corpus score``: the corpus side of the scorer, so that anyone can replay a scoring (spec §4.1).

Public API (stable; the season panel calls it)::

    from generator.score import score_submissions, make_disclosure, make_submission
    report = score_submissions(submissions, root=Path("."), track=track)   # corpus-score/1, a ScoreJson
    report = score_submissions(submissions, root=root, track=track, options=ScoreOptions(proofs=verdicts))

Modules, one job each: :mod:`inputs` (what is read at the close), :mod:`entry` (rejection at entry, §4),
:mod:`close` (rejection at the close, §5.7), :mod:`assertion` (conditions 3 and 4 and the instrument
defect, §4.1), :mod:`task` (rendered, exact, fondé), :mod:`track` (réussite, overclaim, best constant
answer, freeze check), :mod:`close_inputs` (what a participant hands over: submission files, proofs, pins;
the scorer's options), :mod:`verdict` (a proof's verdict), :mod:`report_json` (the report's shape),
:mod:`render` (table and JSON), :mod:`disclosure` (honest proofs for panels),
:mod:`key` (the key's ``fonde_par`` values, ``TOUS`` and ``UN_CRITERE``, and the published shapes of
``season/cle.json`` and ``season/taches.json``).
"""

from generator.score.close_inputs import ScoreOptions
from generator.score.disclosure import make_disclosure, make_submission
from generator.score.inputs import ScoreInputError, ScoreRefused
from generator.score.report_json import ScoreJson
from generator.score.track import FORMAT, score_submissions

__all__ = [
           "FORMAT",
           "ScoreInputError",
           "ScoreJson",
           "ScoreOptions",
           "ScoreRefused",
           "make_disclosure",
           "make_submission",
           "score_submissions",
]
