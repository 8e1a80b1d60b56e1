"""What a season's close computes once, not once per participant (issue 43): the freeze check and its anchor,
the manifest, the statements, the key, the référentiel's table, every task's graph, the best constant answer,
and the proofs given with ``--proofs``.

``corpus score`` does all of it for one participant (:func:`generator.score.score_submissions`: the freeze
check, :func:`~generator.score.inputs.load_inputs`, then :func:`~generator.score.track.score_with`). The close
does the same steps once and scores each participant with ``score_with`` on them: the same functions on the
same inputs, so each report is the one ``corpus score`` gives, with the same options.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from generator.base.errors import GeneratorError
from generator.base.jsonvalue import JsonValue
from generator.score.close_inputs import ScoreOptions
from generator.score.entry import schema_problems
from generator.score.inputs import ScoringInputs, load_inputs
from generator.score.proof_source import FolderProofs, cited_ids
from generator.score.report_json import GelJson, ScoreJson
from generator.score.track import freeze_status, score_with
from generator.score.verdict import Proofs, check_proofs
from generator.tracks.model import Track
from generator.trust_layer.anchor import Anchor


@dataclass(frozen=True)
class SeasonContext:
    """One track's season as the close scores it: read and checked once."""

    inputs: ScoringInputs
    gel: GelJson
    baseline: ScoreJson  # corpus score's report of no submission: the season, the freeze, the constant answer
    proofs: Proofs | None  # a verification file (--proofs FILE), checked once; None with a folder or none
    folder: FolderProofs | None  # --proofs FOLDER, judged participant by participant

    def participant_proofs(self, submissions: Sequence[JsonValue]) -> Proofs | None:
        """The verdicts the scorer reads for these submissions: those of the proofs they cite (a folder), or
        the verification file's."""
        if self.folder is not None:
            return self.folder.verdicts(cited_ids(submissions))
        return self.proofs

    def score(self, submissions: Sequence[JsonValue], proofs: Proofs | None) -> ScoreJson:
        """``corpus score``'s report of one participant's submissions."""
        return score_with(self.inputs, submissions, proofs, self.gel)


def _anchor_ids(root: Path, track: Track, anchor_file: Path | None) -> list[str]:
    """The proof id of the anchor the freeze check will read, when it is an opened pair (its verdict must be
    in ``--proofs``); nothing when it cannot be read here: the freeze check names why."""
    try:
        path = anchor_file if anchor_file is not None else root / track.places.anchor
        if anchor_file is None and not os.path.lexists(path):
            return []
        anchor = Anchor.read(path)
    except (GeneratorError, OSError):
        return []
    return [anchor.proof_id] if anchor.proof.is_pair else []


def season_context(root: Path, track: Track, options: ScoreOptions, folder: FolderProofs | None) -> SeasonContext:
    """The season read once, as ``score_submissions`` reads it for each participant with ``options``."""
    checked = None if options.proofs is None else check_proofs(options.proofs)
    held = checked if folder is None else folder.verdicts(_anchor_ids(root, track, options.anchor_file))
    gel = freeze_status(root, options.salt_file, track.places, options.anchor_file, held, options.trust_layer_key,
                        options.fingerprint, options.window, options.replaced_salts, options.opening)
    inputs = load_inputs(root, track)
    baseline = score_with(inputs, [], checked if folder is None else {}, gel)
    for task_id in sorted(inputs.statements):  # every task's graph walked once, before the workers start
        try:
            inputs.graph(task_id)
        except Exception:  # refused when a submission needs it, as corpus score refuses it
            continue
    schema_problems({}, track.schemas)  # the submission schema compiled once, before the workers start
    return SeasonContext(inputs, gel, baseline, checked, folder)
