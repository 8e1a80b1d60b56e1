"""Rejection at the close (spec §5.7): what only the scorer sees, with the corpus in hand.

A resource outside the task's graph (§5.2), a field that no criterion of ``/referentiel`` consumes or the
whole document (empty field): a pointer whose pattern is not in the table the référentiel serves
(``assertions.champs_qui_s_affirment``, :mod:`generator.tracks.assertable`), and an assertion on a common
list whose entry does not concern the entity.
The graph and "concerns the entity" are the season's own definitions (:mod:`generator.reading.graph`).
"""

from __future__ import annotations

from generator.reading.graph import concerns_entity
from generator.reading.reader import Fact, pointer_pattern
from generator.score.entry import ClaimJson, SubmissionJson
from generator.score.inputs import ScoringInputs


def _claim_problem(index: int, claim: ClaimJson, task_id: str, inputs: ScoringInputs) -> str | None:
    statement = inputs.statements[task_id]
    graph = inputs.graph(task_id)
    spec = inputs.track.graph
    resource, field = claim["resource"], claim["field"]
    where = f"/assertions/{index}/claim"
    if resource not in graph:
        described = spec.description.format(**dict(statement.task.fields))
        return f"{where}/resource: {resource} is outside the graph of {task_id} (spec §5.2: {described})"
    if field == "":
        return (f"{where}/field: the empty pointer designates the whole document of {resource}: assert one "
                "probant field (spec §5.7)")
    prefix = inputs.reader.collection_prefix(resource)
    allowed = inputs.champs.get(prefix, frozenset())
    if pointer_pattern(field) not in allowed:
        return (f"{where}/field: {field} of {resource} is consumed by no criterion of {inputs.track.referentiel} "
                f"(spec §5.7): it is not among the champs_qui_s_affirment the référentiel serves for {prefix}: "
                f"{', '.join(sorted(allowed)) or 'none'}")
    if resource in graph.common and not concerns_entity(inputs.reader, statement.task, graph,
                                                        Fact(resource, field, claim["value"])):
        subject = statement.task.field(spec.start) if spec.start else statement.task.id
        return (f"{where}: {resource} {field} bears on an entry that does not concern {subject} "
                f"(spec §5.2: {spec.concerns_text})")
    return None


def close_problems(submission: SubmissionJson, inputs: ScoringInputs) -> list[str]:
    """Every reason to reject an entry-valid submission at the close; empty when it is scored."""
    task_id = submission["task_id"]
    found = (_claim_problem(i, a["claim"], task_id, inputs) for i, a in enumerate(submission["assertions"]))
    return [problem for problem in found if problem is not None]
