"""Rejection at entry (spec §4): what the season service refuses before recording, without the corpus.

The schema, the season and the task, unique assertion ids, unique ``(resource, field, value)`` triplets,
one disclosure per cited proof and none for an uncited one, and the plafond of §5.5. Every message names
the place in the submission (a JSON Pointer) and says what to change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, NotRequired, TypedDict, TypeGuard, cast

from generator.base.jsonvalue import MAX_DEPTH, JsonValue, json_key, pointer, too_deep
from generator.documents.schema_checks import schema_message
from generator.documents.schemas import SchemaError, errors
from generator.score.inputs import ScoringInputs

SCHEMA = "submission"


class ClaimJson(TypedDict):
    resource: str
    field: str
    value: JsonValue


class SubmittedAssertion(TypedDict):
    id: str
    claim: ClaimJson
    proof_ids: list[str]


class PairJson(TypedDict):
    """One opened side of a proof, as ``GET /v1/proof/{id}/full`` returns it."""

    nonce: str
    value: str


Side = Literal["request_hash", "response_hash"]
SIDES: tuple[Side, Side] = ("request_hash", "response_hash")


class DisclosureJson(TypedDict):
    request_hash: PairJson
    response_hash: PairJson


class SubmissionJson(TypedDict):
    """A spec §4 submission of the published shape (the track's ``submission.schema.json``)."""

    season: int
    track: str
    task_id: str
    agent_did: str
    verdict: str
    assertions: list[SubmittedAssertion]
    disclosures: dict[str, DisclosureJson]
    narrative: NotRequired[str]


def is_disclosure(value: JsonValue) -> TypeGuard[DisclosureJson]:
    """Both sides of a pair present, each with a string ``nonce`` and ``value``."""
    if not isinstance(value, dict):
        return False
    sides = [value.get(side) for side in SIDES]
    return all(isinstance(side, dict) and isinstance(side.get("nonce"), str) and isinstance(side.get("value"), str)
               for side in sides)


def admitted(submission: JsonValue) -> SubmissionJson:
    """A submission :func:`entry_problems` found nothing against, read as the schema it passed guarantees."""
    return cast(SubmissionJson, submission)


class FormatDefects(dict[str, JsonValue]):
    """A submission whose JSON the service would not read as written (a key twice, a number beyond range,
    a lone surrogate): rejected at entry with ``problems``, its content never scored.

    As a mapping it holds only ``task_id`` when that one is unambiguous, so the rejection lands on its task.
    """

    def __init__(self, problems: list[str], task_id: str | None) -> None:
        super().__init__({} if task_id is None else {"task_id": task_id})
        self.problems = problems


def _schema_message(error: SchemaError) -> str:
    """The schema's message, a pattern worded from the submission schema's title, how-to and example
    (:func:`schema_message`)."""
    where = pointer(error.path)
    if error.path and error.path[0] == "disclosures":
        return (f"{where}: ill-formed disclosure: {schema_message(error)} (each entry holds exactly request_hash "
                "and response_hash, each {\"nonce\": <string>, \"value\": <string>}, as GET /v1/proof/{id}/full "
                "returns them)")
    return f"{where}: {schema_message(error)}"


def schema_problems(submission: JsonValue, folder: Path) -> list[str]:
    """The submission against the track's ``submission.schema.json`` (Draft 2020-12), every error, in
    document order."""
    found = sorted(errors(SCHEMA, submission, folder), key=lambda e: [str(p) for p in e.path])
    return [_schema_message(e) for e in found]


def _season_problems(submission: SubmissionJson, inputs: ScoringInputs) -> list[str]:
    problems = []
    if submission["season"] != inputs.saison:
        problems.append(f"/season: {submission['season']} is not the season being scored ({inputs.saison})")
    if submission["task_id"] not in inputs.statements:
        problems.append(f"/task_id: {submission['task_id']} is not a task of season {inputs.saison} "
                        f"({', '.join(sorted(inputs.statements))})")
    return problems


def _assertion_problems(assertions: list[SubmittedAssertion]) -> list[str]:
    problems = []
    ids: dict[str, int] = {}
    triplets: dict[tuple[str, str, object], int] = {}
    for index, assertion in enumerate(assertions):
        first = ids.setdefault(assertion["id"], index)
        if first != index:
            problems.append(f"/assertions/{index}/id: {assertion['id']!r} is already the id of "
                            f"/assertions/{first}: give each assertion its own id")
        claim = assertion["claim"]
        triplet = (claim["resource"], claim["field"], json_key(claim["value"]))
        first = triplets.setdefault(triplet, index)
        if first != index:
            problems.append(f"/assertions/{index}/claim: the triplet (resource, field, value) repeats "
                            f"/assertions/{first}: a triplet counts once, repeating it does not reach the "
                            "minimum (spec §4); remove the repetition")
        seen: set[str] = set()
        for proof_id in assertion["proof_ids"]:
            if proof_id in seen:
                problems.append(f"/assertions/{index}/proof_ids: {proof_id} is listed twice: list it once")
            seen.add(proof_id)
    return problems


def _disclosure_problems(submission: SubmissionJson) -> list[str]:
    cited: dict[str, list[str]] = {}
    for assertion in submission["assertions"]:
        for proof_id in assertion["proof_ids"]:
            cited.setdefault(proof_id, []).append(assertion["id"])
    disclosed = submission["disclosures"]
    problems = [f"/disclosures: no entry for {proof_id}, cited by {', '.join(sorted(set(by)))}: add its "
                "request_hash and response_hash pairs as GET /v1/proof/{id}/full returns them"
                for proof_id, by in sorted(cited.items()) if proof_id not in disclosed]
    problems += [f"/disclosures/{proof_id}: no assertion cites {proof_id}: remove this entry, or cite the proof"
                 for proof_id in sorted(disclosed) if proof_id not in cited]
    return problems


def _plafond_problems(submission: SubmissionJson, inputs: ScoringInputs) -> list[str]:
    statement = inputs.statements.get(submission["task_id"])
    count = len(submission["assertions"])
    if statement is None or count <= statement.plafond:
        return []
    return [f"/assertions: {count} assertions, above the plafond of {statement.plafond} for {statement.task.id} "
            f"(spec §5.5, §5.7): remove {count - statement.plafond}"]


def entry_problems(submission: JsonValue, inputs: ScoringInputs) -> list[str]:
    """Every reason to reject ``submission`` at entry; empty when the service would record it."""
    if isinstance(submission, FormatDefects):
        return list(submission.problems)
    deep = too_deep(submission)
    if deep is not None:
        return [f"{deep}: nested deeper than {MAX_DEPTH} levels: no corpus value is; assert a field nearer "
                "the top of the document"]
    problems = schema_problems(submission, inputs.track.schemas)
    if problems:
        return problems  # the checks below read the structure the schema guarantees
    shaped = admitted(submission)
    return (_season_problems(shaped, inputs) + _assertion_problems(shaped["assertions"])
            + _disclosure_problems(shaped) + _plafond_problems(shaped, inputs))
