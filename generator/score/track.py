"""The track (spec §5.7, §7.2): réussite over the ten tasks, overclaim over the rendered ones, and the best
constant answer beside them. Refuses to score a frozen season whose freeze check fails (spec §8.5)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from generator.base.errors import FreezeRecordError, ManifestError, shown_path
from generator.contract.freeze import check_freeze, is_frozen, read_salt
from generator.contract.places import Places
from generator.score.assertion import CAUSES, Proofs, conditions_1_2, incidents_of
from generator.score.entry import FormatDefects
from generator.score.inputs import ScoreInputError, ScoreRefused, ScoringInputs, load_inputs
from generator.score.key import KeyEntry
from generator.score.task import EN_ATTENTE, RENDUE, score_task
from generator.tracks.model import Track
from generator.trust_layer.anchor import AnchorError
from generator.trust_layer.freeze_anchor import check_anchor
from generator.trust_layer.proof_v3 import Window

FORMAT = "corpus-score/1"


def freeze_status(root: Path, salt_file: Path | None, places: Places, anchor_file: Path | None = None,
                  proofs: dict[str, Any] | None = None, trust_layer_key: str | None = None,
                  fingerprint: str | None = None, window: Window | None = None) -> dict[str, Any]:
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


def best_constant_answer(key: Mapping[str, KeyEntry]) -> dict[str, Any]:
    """The réussite of answering everywhere the most frequent expected verdict (ties: alphabetical)."""
    counts = Counter(entry.verdict for entry in key.values())
    verdict = min(counts, key=lambda v: (-counts[v], v))
    return {"verdict": verdict, "reussite": counts[verdict], "overclaim": "sans objet"}


def _optional_fields_fit(verdict: dict[str, Any]) -> bool:
    """What a 3.x verdict adds beside ``valide`` and ``identite_liee``, when present, has its shape (a
    hand-written verification file must fail in one line here, not as a traceback while scoring)."""
    engagements = verdict.get("engagements", {})
    lists = (verdict.get(name, []) for name in ("incidents", "non_verifie"))
    return isinstance(engagements, dict) and all(isinstance(v, str | None) for v in engagements.values()) \
        and all(isinstance(items, list) and all(isinstance(i, str) for i in items) for items in lists)


def check_proofs(proofs: Any) -> Proofs:
    """The third-party verification: ``{"<proof_id>": {"valide": bool, "identite_liee": bool}}``, or
    ``{"en_attente": true}`` (and why, a ``motif``) for a proof whose batch is not anchored yet."""
    if not isinstance(proofs, dict):
        raise ScoreInputError('proofs: expected an object {"<proof_id>": {"valide": bool, "identite_liee": bool}}')
    for proof_id, verdict in proofs.items():
        verified = isinstance(verdict, dict) and isinstance(verdict.get("valide"), bool) \
            and isinstance(verdict.get("identite_liee"), bool)
        pending = isinstance(verdict, dict) and verdict.get("en_attente") is True \
            and set(verdict) <= {"en_attente", "motif"} and isinstance(verdict.get("motif", ""), str)
        if verified and not _optional_fields_fit(verdict):
            raise ScoreInputError(f"proofs: {shown_path(proof_id)}: \"engagements\" must be an object of hex "
                                  "strings (or null), \"incidents\" and \"non_verifie\" lists of strings, got "
                                  f"{shown_path(json.dumps(verdict))}")
        if not (verified or pending):
            raise ScoreInputError(f"proofs: {shown_path(proof_id)}: expected {{\"valide\": true|false, "
                                  f"\"identite_liee\": true|false}} or {{\"en_attente\": true}} (and, if given, a "
                                  f"\"motif\" string), got {shown_path(json.dumps(verdict))}")
    return proofs


def submitted_track(submissions: list[Any], tracks: list[str]) -> str | None:
    """The track the submissions name (their ``track`` field) when they all name the same known one; None
    when none names a known track (the caller's default then scores them, and refuses them at entry).
    Submissions of two tracks are refused together: the tracks are never scored, nor ranked, as one (spec
    §6)."""
    named = Counter(s["track"] for s in submissions if isinstance(s, dict) and s.get("track") in tracks)
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


def _check_one_per_task(submissions: list[Any]) -> None:
    """Raise :class:`DuplicateTask` for the first task named by more than one submission."""
    positions: dict[str, list[int]] = {}
    for index, submission in enumerate(submissions):
        task_id = submission.get("task_id") if isinstance(submission, dict) else None
        if isinstance(task_id, str):
            positions.setdefault(task_id, []).append(index)
    for task_id, found in positions.items():
        if len(found) > 1:
            raise DuplicateTask(task_id, found)


def _by_task(submissions: list[Any], inputs: ScoringInputs) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Submissions keyed by task; those that name no task of the season are reported apart."""
    _check_one_per_task(submissions)
    by_task: dict[str, Any] = {}
    stray = []
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


def _pair_shape(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(value.get(side), dict) and isinstance(
        value[side].get("nonce"), str) and isinstance(value[side].get("value"), str)
        for side in ("request_hash", "response_hash"))


def _cited(submissions: list[Any]) -> list[tuple[str, dict[str, Any], Any]]:
    """``(proof_id, its disclosure, the submission's agent_did)`` of every proof a submission cites with a
    well-formed pair (a malformed one is rejected at entry and judged nowhere), once per submission."""
    found: dict[tuple[int, str], tuple[str, dict[str, Any], Any]] = {}
    for index, sub in enumerate(submissions):
        if not (isinstance(sub, dict) and isinstance(sub.get("assertions"), list)
                and isinstance(sub.get("disclosures"), dict)):
            continue
        for a in sub["assertions"]:
            ids = a.get("proof_ids") if isinstance(a, dict) else None
            for proof_id in ids if isinstance(ids, list) else []:
                pair = sub["disclosures"].get(proof_id) if isinstance(proof_id, str) else None
                if isinstance(proof_id, str) and isinstance(pair, dict) and _pair_shape(pair):
                    found[(index, proof_id)] = (proof_id, pair, sub.get("agent_did"))
    return [found[key] for key in sorted(found)]


def proofs_summary(submissions: list[Any], proofs: Proofs) -> dict[str, Any]:
    """What was checked of the cited proofs, in counts a reader cannot misread (spec §4.1, §7.5): how many meet
    conditions 1 and 2, fail them, or are en attente; what was not verified offline, and the Trust Layer
    incidents. The registered DID is compared per assertion, not here."""
    cited = _cited(submissions)
    met = failed = pending = 0
    unchecked: set[str] = set()
    incidents: list[str] = []
    for proof_id, disclosure, agent_did in cited:
        verdict = proofs.get(proof_id) or {}
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


def score_with(inputs: ScoringInputs, submissions: list[Any], proofs: Proofs | None,
               gel: dict[str, Any]) -> dict[str, Any]:
    by_task, stray = _by_task(submissions, inputs)
    taches = [score_task(statement, inputs.key[task_id], by_task.get(task_id), inputs, proofs)
              for task_id, statement in sorted(inputs.statements.items())]
    rendered = [t for t in taches if t["statut"] == RENDUE]
    non_etayees = sum(t["non_etayees"] for t in rendered)
    comptees = sum(t["comptees"] for t in rendered)
    causes = Counter(a["cause"] for t in taches for a in t["assertions"] if a["cause"] is not None)
    return {
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
        **({"preuves": proofs_summary(submissions, proofs)} if proofs is not None else {}),
    }


def score_submissions(submissions: list[dict[str, Any]], *, root: Path, track: Track,
                      proofs: dict[str, Any] | None = None,
                      salt_file: Path | None = None, anchor_file: Path | None = None,
                      trust_layer_key: str | None = None, fingerprint: str | None = None,
                      window: Window | None = None) -> dict[str, Any]:
    """Score a participant's submissions (parsed §4 JSON objects, at most one per task) against ``root``.

    ``root`` is the repository root holding the track's trees (conformité: ``build/``, ``manifest/``,
    ``season/`` and, once frozen, ``freeze/``). ``proofs`` is the third-party verification
    ``{"<proof_id>": {"valide": bool,
    "identite_liee": bool}}``; without it conditions 1 and 2 are taken as met and every assertion says
    they were not verified offline. Returns the ``corpus-score/1`` report (see docs/season.md, Scoring).
    Raises :class:`ScoreRefused` when the freeze check fails, :class:`ScoreInputError` on unusable inputs.
    """
    checked = None if proofs is None else check_proofs(proofs)
    gel = freeze_status(root, salt_file, track.places, anchor_file, checked, trust_layer_key, fingerprint, window)
    inputs = load_inputs(root, track)
    return score_with(inputs, submissions, checked, gel)
