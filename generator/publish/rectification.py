"""A rectification published, never silent (spec §9.2): each accepted contestation changes one assertion's
status (to ``etayee`` or ``defaut_instrument``), and the participant's figures are replayed from the published
``corpus-score/1`` report with that change, by the scorer's own rules (spec §5.7): a défaut d'instrument
leaves the count, a task is rendered with its minimum of counted assertions and half of it on resources
proper to the entity, a missing founding fact is met by an étayée assertion in one of its forms (strict JSON
equality), a task succeeds rendered, exact and founded; the overclaim counts the rendered tasks.

The original figures stay where they were; the rectified ones stand beside them (``rectification``: the
figures, the contestations, their dates and motives), and refused contestations are listed with their motive.
:func:`replay` and :func:`rectification_problems` are what the publication's offline check needs: the
rectified figures recomputed from the decisions, and a figure that differs from its report without a decision
refused.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from generator.base.jsonvalue import json_key
from generator.publish.contestation import Contest
from generator.publish.published import (
    DecidedJson,
    FiguresJson,
    IndexJson,
    LineJson,
    RapportJson,
    RectificationJson,
)
from generator.score.report_json import ScoreJson, TaskJson

JUDGED = ("rendue", "non_rendue")  # the task statuses whose assertions were judged (§5.7)


Changes = Mapping[tuple[str, str], str]  # (task, assertion id) -> the rectified status


def _half_up(n: int) -> int:
    return (n + 1) // 2


def _task(task: TaskJson, changes: Changes) -> tuple[bool, bool, int, int]:
    """(rendered, succeeded, non étayées, counted) of one task replayed with ``changes``."""
    if task["statut"] not in JUDGED:
        return False, False, 0, 0
    statuses = [(a, changes.get((task["tache"], a["id"]), a["statut"])) for a in task["assertions"]]
    counted = [(a, s) for a, s in statuses if s != "defaut_instrument"]
    own = sum(bool(a["ressource_propre"]) for a, _ in counted)
    rendered = len(counted) >= task["minimum"] and own >= _half_up(task["minimum"])
    held = {(a["ressource"], a["champ"], json_key(a["valeur"])) for a, s in statuses if s == "etayee"}
    missing = [f for f in task["faits_manquants"]
               if not any((form["ressource"], form["champ"], json_key(form["valeur"])) in held
                          for form in [f, *f.get("formes_equivalentes", [])])]
    succeeded = rendered and task["verdict_exact"] and not missing
    return rendered, succeeded, sum(s == "non_etayee" for _, s in statuses), len(counted)


def replay(score: ScoreJson, changes: Changes) -> FiguresJson:
    """The participant's figures from its ``corpus-score/1`` report with ``changes`` applied; with no change,
    the report's own figures (the replay follows the scorer)."""
    results = [_task(t, changes) for t in score["taches"]]
    rendered = [r for r in results if r[0]]
    non_etayees, comptees = sum(r[2] for r in rendered), sum(r[3] for r in rendered)
    return {"reussite": sum(r[1] for r in results), "taches_rendues": len(rendered),
            "overclaim": {"non_etayees": non_etayees, "rendues": comptees,
                          "taux": round(non_etayees / comptees, 4) if comptees else None}}


def figures_of(score: ScoreJson) -> FiguresJson:
    """The figures as the scorer published them."""
    return {"reussite": score["reussite"], "taches_rendues": score["taches_rendues"],
            "overclaim": score["overclaim"]}


def decided(contest: Contest) -> DecidedJson | None:
    r, d = contest.request, contest.decision
    if d is None:
        return None
    return {"contestation": r["id"], "did": r["did"], "agent": r["agent"], "tache": r["tache"],
            "assertion": r["assertion"], "cause": r["cause"],
            "demandee_le": r["demandee_le"], "decision": d["decision"], "decidee_le": d["decidee_le"],
            "par": d["par"], "motif": d["motif"], "dans_le_delai": d["dans_le_delai"],
            "statut_rectifie": d["statut_rectifie"]}


def changes_of(entries: Sequence[DecidedJson]) -> dict[tuple[str, str], str]:
    """The status each accepted decision gives its assertion."""
    return {(e["tache"], e["assertion"]): e["statut_rectifie"] for e in entries
            if e["decision"] == "acceptee" and e["statut_rectifie"] is not None}


def rectification(score: ScoreJson, entries: Sequence[DecidedJson]) -> RectificationJson | None:
    """The rectified figures of one participant (None: no accepted decision)."""
    changes = changes_of(entries)
    if not changes:
        return None
    accepted = [e for e in entries if e["decision"] == "acceptee"]
    return {"figures": replay(score, changes), "le": max(e["decidee_le"] for e in accepted),
            "contestations": accepted}


def _score(report: RapportJson) -> ScoreJson:
    return cast(ScoreJson, report["score_corpus"])


def _open(document: object) -> dict[str, object]:
    """A published document as the open JSON object it is: the fields of §9.2 are added beside the others."""
    return cast(dict[str, object], document)


def by_did(contests: Sequence[Contest]) -> dict[str, list[DecidedJson]]:
    """The decided contestations, per participant's DID, in the order they were filed."""
    out: dict[str, list[DecidedJson]] = {}
    for contest in contests:
        entry = decided(contest)
        if entry is not None:
            out.setdefault(contest.request["did"], []).append(entry)
    return out


def rectify_participant(line: LineJson, report: RapportJson, entries: Sequence[DecidedJson]) -> None:
    """Add to one participant's index line and report its decided contestations: the rectified figures beside
    the original ones (kept, marked rectified), the refused ones with their motive."""
    if not entries:
        return
    fixed = rectification(_score(report), entries)
    _open(report)["contestations"] = entries
    if fixed is not None:
        _open(report)["rectification"] = fixed
        _open(line)["rectification"] = fixed


def list_contestations(index: IndexJson, decisions: Mapping[str, Sequence[DecidedJson]]) -> None:
    """The index's ``contestations``: every decided one, table by table in the order of their lines."""
    _open(index)["contestations"] = [e for table in index["tableaux"].values() for line in table["lignes"]
                                     if "rapport" in line for e in decisions.get(line["did"] or "", [])]


def rectification_problems(index: IndexJson, reports: Mapping[str, RapportJson],
                           decisions: Mapping[str, Sequence[DecidedJson]]) -> list[str]:
    """What the publication's offline check refuses: a line's figures that are not its report's (a figure
    changed without a decision), a rectification that no accepted decision makes, or whose figures are not
    the replay of the decisions. ``decisions`` are the published decisions per DID. Empty: all hold."""
    problems: list[str] = []
    for table in index["tableaux"].values():
        for line in table["lignes"]:
            path = line.get("rapport")
            if path is None:
                continue
            report = reports.get(path)
            if report is None:
                problems.append(f"index.json: {line['agent']}: {path} is not in the publication")
                continue
            score = _score(report)
            original = figures_of(score)
            shown = {"reussite": line["reussite"], "taches_rendues": line["taches_rendues"],
                     "overclaim": line["overclaim"]}
            if shown != original or replay(score, {}) != original:
                problems.append(f"index.json: {line['agent']}: figures {shown} are not those its report "
                                f"{path} scores ({original}): a figure changed without a decision")
            expected = rectification(score, decisions.get(line["did"] or "", []))
            for where, found in (("index.json", _open(line).get("rectification")),
                                 (path, _open(report).get("rectification"))):
                if found != expected:
                    said = ("no accepted decision makes it" if expected is None
                            else "not the replay of the decisions")
                    problems.append(f"{where}: {line['agent']}: rectification {found} is {said} "
                                    f"({expected}): a figure changed without a decision")
    return problems
