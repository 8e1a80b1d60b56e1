"""A whole folder of proofs judged once, on every core: what ``corpus verify-publication`` checks of a close
publication's ``preuves/`` and then scores every participant with (issue 43).

The judge is the close's (:class:`~generator.score.proof_source.FolderProofs`): an honest 3.1 proof in one
pass, any other read and judged as ``corpus score`` does, each batch's token verified once for all the
processes. The proofs are judged in name order, in chunks spread over ``jobs`` forked processes
(:func:`~generator.publish.parallel.ordered_map`), so the verdicts, and the first file refused, are those one
process gives.
"""

from __future__ import annotations

from pathlib import Path

from generator.contract.places import Places
from generator.publish.parallel import ordered_map
from generator.score.close_inputs import Pins, proof_judge
from generator.score.proof_source import FolderProofs
from generator.score.verdict import Proofs, check_proofs

CHUNK = 128  # proofs a process judges at a time: a few batches' worth, so each token is met early


def judged_folder(folder: Path, pins: Pins, root: Path, places: Places, jobs: int) -> Proofs:
    """Every proof of ``folder`` judged against ``pins``, by proof_id; a file that cannot be used is refused
    (:class:`BadFile`), the first in name order named, as ``corpus score`` names it."""
    proofs = FolderProofs(folder, proof_judge(folder, pins, root, places))
    proofs.judge.window  # noqa: B018  # an unusable pin is one line before any proof is judged (and any fork)
    ids = [name[:-5] for name in sorted(proofs.names)]
    verdicts: dict[str, object] = {}
    with proofs.refusals_in_name_order():
        for part in ordered_map(lambda n: proofs.verdicts(ids[n * CHUNK:(n + 1) * CHUNK]), -(-len(ids) // CHUNK),
                                jobs, 1):
            verdicts.update(part)
    return check_proofs(verdicts)
