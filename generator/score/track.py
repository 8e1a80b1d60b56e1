"""The track (spec §5.7, §7.2): réussite over the ten tasks, overclaim over the rendered ones, and the best
constant answer beside them. Refuses to score a frozen season whose freeze check fails (spec §8.5)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path

from generator.base.errors import FreezeRecordError, ManifestError
from generator.base.jsonvalue import JsonValue
from generator.contract.freeze import check_freeze, is_frozen, read_salt
from generator.contract.places import Places
from generator.score.assertion import CAUSES, conditions_1_2, incidents_of
from generator.score.close_inputs import NO_OPTIONS, ScoreOptions
from generator.score.entry import DisclosureJson, FormatDefects, is_disclosure
from generator.score.inputs import ScoreInputError, ScoreRefused, ScoringInputs, load_inputs
from generator.score.key import KeyEntry
from generator.score.report_json import ConstantJson, GelJson, ProofsSummaryJson, ScoreJson, StrayJson, TaskJson
from generator.score.task import EN_ATTENTE, RENDUE, score_task
from generator.score.verdict import Proofs, Verdict, check_proofs
from generator.tracks.model import Track
from generator.trust_layer.anchor import AnchorError
from generator.trust_layer.freeze_anchor import check_anchor
from generator.trust_layer.freeze_chain import chain_problems
from generator.trust_layer.proof_v3 import Window

FORMAT = "corpus-score/1"


def freeze_status(root: Path, salt_file: Path | None, places: Places, anchor_file: Path | None = None,
                  proofs: Proofs | None = None, trust_layer_key: str | None = None,
                  fingerprint: str | None = None, window: Window | None = None,
                  replaced_salts: Sequence[Path] = (), opening: datetime | None = None) -> GelJson:
    """``{"statut": "non_gele"}`` before the freeze; after it, the whole check passes or scoring is refused.

    Frozen means the track's freeze folder holds a record or an anchor: a record then missing, a FIFO, a
    folder or a link refuses the score, and so does ``--salt-file`` or ``--anchor`` given for a track with no
    record (a deleted record never turns a frozen season back into an open one). Once frozen, the salt is
    required: spec §8.5 has the scorer recompute ``sha256(sel ‖ clé)`` before any score, and without it a key
    changed after the freeze would be scored without a sound."""
    record = places.record
    refused = "the freeze check fails, no score is rendered (spec §8.5): "
    try:
        frozen = is_frozen(root, places)  # a freeze folder that is a link, unreadable or a loop: refused
    except FreezeRecordError as exc:
        raise ScoreRefused(f"{refused}{exc}") from None
    if not frozen:
        given = [flag for flag, value in (("--salt-file", salt_file), ("--anchor", anchor_file)) if value]
        if given:
            raise ScoreRefused(f"{' and '.join(given)} given, but {record} is not there: the track {places.piste} "
                               "was never frozen, or its record was deleted (restore it from git); no score is "
                               "rendered")
        return {"statut": "non_gele", "detail": f"{record} not found: the season is not frozen yet"}
    if salt_file is None:
        raise ScoreRefused(f"the season is frozen ({record}): give --salt-file, the salt published at the close; "
                           f"the scorer recomputes the key commitment sha256(salt ‖ {places.key_file}) before any "
                           "score (spec §8.5), and without the salt a key changed after the freeze would go "
                           "unnoticed")
    read_salt(salt_file)  # an unusable salt file is named as such, not as a failed freeze
    try:
        problems = check_freeze(root, salt_file, places)
        if problems:
            raise ScoreRefused(refused + "; ".join(problems))
        anchor, problems = check_anchor(root, places, anchor_file, proofs, trust_layer_key, fingerprint, window)
        problems += chain_problems(root, places, replaced_salts, trust_layer_key, fingerprint, window,  # §8
                                   opening)
    except (FreezeRecordError, AnchorError, ManifestError) as exc:
        raise ScoreRefused(f"{refused}{exc}") from None
    if problems:
        raise ScoreRefused(refused + "; ".join(problems))
    if anchor is None:
        raise ScoreRefused(f"the season is frozen ({record}) and {places.anchor} is not published: give --anchor, "
                           f"the proof of the call GET {places.served_record} through the proxy; the scorer "
                           "checks that it opens to this very record before any score (spec §8.5)")
    how = anchor.v3_words() or ("an opened pair: chain and signature not verified offline" if anchor.proof.is_pair
                                else f"made at {anchor.proof.timestamp}, chain and signature verified against the "
                                "pinned Trust Layer key")
    return {"statut": "verifie", "ancre": anchor.proof_id,
            "detail": f"{record}: anchored by {anchor.proof_id} ({how}); manifest hash, task statements hash and "
                      "key commitment match"}


def best_constant_answer(key: Mapping[str, KeyEntry]) -> ConstantJson:
    """The réussite of answering everywhere the most frequent expected verdict (ties: alphabetical)."""
    counts = Counter(entry.verdict for entry in key.values())
    verdict = min(counts, key=lambda v: (-counts[v], v))
    return {"verdict": verdict, "reussite": counts[verdict], "overclaim": "sans objet"}


def submitted_track(submissions: Sequence[JsonValue], tracks: list[str]) -> str | None:
    """The track the submissions name (their ``track`` field) when they all name the same known one; None
    when none names a known track (the caller's default then scores them, and refuses them at entry).
    Submissions of two tracks are refused together: the tracks are never scored, nor ranked, as one (spec
    §6)."""
    named = Counter(t for s in submissions if isinstance(s, dict) and isinstance(t := s.get("track"), str)
                    and t in tracks)
    if len(named) > 1:
        shown = ", ".join(f"{n} of {piste}" for piste, n in sorted(named.items()))
        raise ScoreInputError(f"the submissions name several tracks ({shown}); two tracks are never scored "
                              "together (spec §6): score each track's submissions in a run of their own")
    return next(iter(named), None)


class DuplicateTask(ScoreInputError):
    """Two submissions or more name one task; ``positions`` are their indexes (the CLI names the files)."""

    def __init__(self, task_id: str, positions: list[int]) -> None:
        self.task_id, self.positions = task_id, positions
        super().__init__(f"{len(positions)} submissions for {task_id} (positions {', '.join(map(str, positions))})"
                         ": the season keeps the last one recorded; give one submission per task")


def _check_one_per_task(submissions: Sequence[JsonValue]) -> None:
    """Raise :class:`DuplicateTask` for the first task named by more than one submission."""
    positions: dict[str, list[int]] = {}
    for index, submission in enumerate(submissions):
        task_id = submission.get("task_id") if isinstance(submission, dict) else None
        if isinstance(task_id, str):
            positions.setdefault(task_id, []).append(index)
    for task_id, found in positions.items():
        if len(found) > 1:
            raise DuplicateTask(task_id, found)


def _by_task(submissions: Sequence[JsonValue],
             inputs: ScoringInputs) -> tuple[dict[str, JsonValue], list[StrayJson]]:
    """Submissions keyed by task; those that name no task of the season are reported apart."""
    _check_one_per_task(submissions)
    by_task: dict[str, JsonValue] = {}
    stray: list[StrayJson] = []
    for index, submission in enumerate(submissions):
        task_id = submission.get("task_id") if isinstance(submission, dict) else None
        if isinstance(task_id, str) and task_id in inputs.statements:
            by_task[task_id] = submission
        else:
            if isinstance(submission, FormatDefects):
                problems = submission.problems
            else:
                problems = [f"/task_id: {task_id!r} names no task of season {inputs.saison}"
                            if isinstance(submission, dict) else "/: a submission is a JSON object (spec §4)"]
            stray.append({"index": index, "task_id": task_id,
                          "rejets": [f"{problem}: rejected at entry" for problem in problems]})
    return by_task, stray


def _cited(submissions: Sequence[JsonValue]) -> list[tuple[str, DisclosureJson, JsonValue]]:
    """``(proof_id, its disclosure, the submission's agent_did)`` of every proof a submission cites with a
    well-formed pair (a malformed one is rejected at entry and judged nowhere), once per submission."""
    found: dict[tuple[int, str], tuple[str, DisclosureJson, JsonValue]] = {}
    for index, sub in enumerate(submissions):
        if not isinstance(sub, dict):
            continue
        assertions, disclosures = sub.get("assertions"), sub.get("disclosures")
        if not (isinstance(assertions, list) and isinstance(disclosures, dict)):
            continue
        for a in assertions:
            ids = a.get("proof_ids") if isinstance(a, dict) else None
            for proof_id in ids if isinstance(ids, list) else []:
                pair = disclosures.get(proof_id) if isinstance(proof_id, str) else None
                if isinstance(proof_id, str) and is_disclosure(pair):
                    found[(index, proof_id)] = (proof_id, pair, sub.get("agent_did"))
    return [found[key] for key in sorted(found)]


def proofs_summary(submissions: Sequence[JsonValue], proofs: Proofs) -> ProofsSummaryJson:
    """What was checked of the cited proofs, in counts a reader cannot misread (spec §4.1, §7.5): how many meet
    conditions 1 and 2, fail them, or are en attente; what was not verified offline, and the Trust Layer
    incidents. The registered DID is compared per assertion, not here."""
    cited = _cited(submissions)
    met = failed = pending = 0
    unchecked: set[str] = set()
    incidents: list[str] = []
    for proof_id, disclosure, agent_did in cited:
        verdict: Verdict = proofs.get(proof_id) or {}
        if verdict.get("en_attente") is True:
            pending += 1
            continue
        if conditions_1_2(proof_id, disclosure, proofs.get(proof_id), agent_did) is None:
            met += 1
        else:
            failed += 1
        unchecked.update(n for n in verdict.get("non_verifie", []) if isinstance(n, str))
        incidents += [f"{proof_id}: {n}" for n in incidents_of(proof_id, disclosure, verdict)]
    return {"citees": len(cited), "conditions_1_2_remplies": met, "echouees": failed, "en_attente": pending,
            "non_verifie": sorted(unchecked), "incidents": incidents}


def score_with(inputs: ScoringInputs, submissions: Sequence[JsonValue], proofs: Proofs | None,
               gel: GelJson) -> ScoreJson:
    by_task, stray = _by_task(submissions, inputs)
    taches: list[TaskJson] = [score_task(statement, inputs.key[task_id], by_task.get(task_id), inputs, proofs)
              for task_id, statement in sorted(inputs.statements.items())]
    rendered = [t for t in taches if t["statut"] == RENDUE]
    non_etayees = sum(t["non_etayees"] for t in rendered)
    comptees = sum(t["comptees"] for t in rendered)
    causes = Counter(a["cause"] for t in taches for a in t["assertions"] if a["cause"] is not None)
    report: ScoreJson = {
        "format": FORMAT, "saison": inputs.saison, "piste": inputs.track.piste, "gel": gel,
        "conditions_1_2": "verifiees" if proofs is not None else "non_verifiees_hors_ligne",
        "reussite": sum(t["reussie"] for t in taches), "taches_total": len(taches),
        "overclaim": {"non_etayees": non_etayees, "rendues": comptees,
                      "taux": round(non_etayees / comptees, 4) if comptees else None},
        "taches_rendues": len(rendered),
        "en_attente": [t["tache"] for t in taches if t["statut"] == EN_ATTENTE],
        "meilleure_reponse_constante": best_constant_answer(inputs.key),
        "causes": {cause: causes.get(cause, 0) for cause in CAUSES},
        "taches": taches,
        "hors_saison": stray,
    }
    if proofs is not None:
        report["preuves"] = proofs_summary(submissions, proofs)
    return report


def score_submissions(submissions: Sequence[JsonValue], *, root: Path, track: Track,
                      options: ScoreOptions = NO_OPTIONS) -> ScoreJson:
    """Score a participant's submissions (parsed §4 JSON objects, at most one per task) against ``root``.

    ``root`` is the repository root holding the track's trees (conformité: ``build/``, ``manifest/``,
    ``season/`` and, once frozen, ``freeze/``). ``options.proofs`` is the third-party verification
    ``{"<proof_id>": {"valide": bool, "identite_liee": bool}}``; without it conditions 1 and 2 are taken as met
    and every assertion says they were not verified offline. Returns the ``corpus-score/1`` report (see
    docs/season.md, Scoring).
    Raises :class:`ScoreRefused` when the freeze check fails, :class:`ScoreInputError` on unusable inputs.
    """
    o = options
    checked = None if o.proofs is None else check_proofs(o.proofs)
    gel = freeze_status(root, o.salt_file, track.places, o.anchor_file, checked, o.trust_layer_key, o.fingerprint,
                        o.window, o.replaced_salts, o.opening)
    inputs = load_inputs(root, track)
    return score_with(inputs, submissions, checked, gel)
