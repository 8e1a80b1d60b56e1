"""Running the panel: every agent's submissions scored by ``corpus score``, and judged against what the
rules promise each kind of agent (honest 10/10 with 0 overclaim, shortcuts failing their traps, abusers
refused). The agents themselves are :mod:`generator.panel.agents`."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.base.errors import Location, Problem
from generator.panel.agents import (
    HONEST,
    Context,
    constant_filler,
    links_first,
    list_only,
    submissions,
    tampered,
)
from generator.proving.artifacts import KEY_ARTIFACT, TASKS_ARTIFACT, key_artifact, tasks_artifact
from generator.proving.checks import SeasonReport
from generator.reading.evaluation import Strategy
from generator.reading.graph import task_graph
from generator.reading.logic import TrackLogic, load_logic
from generator.reading.reader import CorpusReader
from generator.reading.season_model import Season
from generator.score import score_submissions
from generator.score.report_json import ScoreJson
from generator.tracks.model import Track


@dataclass
class Row:
    """One agent of the panel: its §4 submissions, and the corpus-score/1 report they were given."""

    name: str
    kind: str
    submissions: list[dict[str, object]]
    report: ScoreJson
    problems: list[str] = field(default_factory=list)


def _row(name: str, kind: str, root: Path, submissions: list[dict[str, Any]], reader: CorpusReader) -> Row:
    return Row(name, kind, submissions, score_submissions(submissions, root=root, track=reader.track))


TAMPERS = {
    "preuve-sur-une-autre-ressource": ("ressource", "non_etayee:ressource"),
    "valeur-fausse": ("valeur", "non_etayee:valeur"),
    "corps-403": ("defaut", "defaut_instrument"),
    "doublon": ("doublon", "rejetee_entree"),
    "au-dela-du-plafond": ("plafond", "rejetee_entree"),
    "hors-graphe": ("hors-graphe", "rejetee_cloture"),
    "champ-non-probant": ("non-probant", "rejetee_cloture"),
}


def _trap_tasks(season: Season, logic: TrackLogic[Strategy], strategy: Strategy) -> list[str]:
    """The tasks whose trap catches ``strategy``, found as the season check finds a trap's shortcut."""
    return sorted(task_id for task_id, entry in season.key.items()
                  if logic.shortcuts.of_trap(entry.famille, entry.raccourci) is strategy)


def _expect_tamper(row: Row, expect: str) -> None:
    for task in row.report["taches"]:
        if expect.startswith("rejetee"):
            if task["statut"] != expect:
                row.problems.append(f"{task['tache']}: statut {task['statut']}, expected {expect}")
            continue
        first = task["assertions"][0] if task["assertions"] else None
        got = None if first is None else (first["statut"] if first["cause"] is None or first["statut"] ==
                                          "defaut_instrument" else f"{first['statut']}:{first['cause']}")
        if got != expect:
            row.problems.append(f"{task['tache']}: first assertion {got}, expected {expect}")
    if expect == "defaut_instrument" and row.report["overclaim"]["non_etayees"]:
        row.problems.append("an instrument defect entered the overclaim")


def run_panel(root: Path, season: Season, report: SeasonReport, reader: CorpusReader) -> list[Row]:
    """Score every agent of the panel against ``root``'s build and manifest and the season's key."""
    track = reader.track
    with tempfile.TemporaryDirectory(prefix="panel-") as tmp:
        scoring_root = Path(tmp)
        for name in (track.trees.build, track.trees.manifest):  # build/<piste>: under its kind's folder
            (scoring_root / name).parent.mkdir(parents=True, exist_ok=True)
            (scoring_root / name).symlink_to((root / name).resolve())
        (scoring_root / track.trees.season).mkdir(parents=True)
        (scoring_root / track.trees.season / TASKS_ARTIFACT).write_bytes(tasks_artifact(season, track))
        (scoring_root / track.trees.season / KEY_ARTIFACT).write_bytes(key_artifact(season))
        return _run(scoring_root, season, report, reader)


def _contexts(report: SeasonReport, reader: CorpusReader, strategy: Strategy | None) -> list[Context]:
    logic = load_logic(reader.track)
    out = []
    for t in report.tasks:
        ev = t.evaluation if strategy is None else logic.evaluate(t.statement.task, reader, strategy)
        out.append(Context(t, ev, reader, task_graph(reader, t.statement.task)))
    return out


def constant_verdicts(track: Track, season: Season) -> list[str]:
    """The constant answers the panel tries: every fixed verdict word, then every reference the key expects
    (the best a constant reference can do is the most frequent of them)."""
    return [*track.verdicts, *sorted({e.verdict for e in season.key.values()} - set(track.verdicts))]


def _run(root: Path, season: Season, report: SeasonReport, reader: CorpusReader) -> list[Row]:
    rows: list[Row] = []
    track, logic = reader.track, load_logic(reader.track)
    honest = _contexts(report, reader, None)
    constants = constant_verdicts(track, season)
    best = max((sum(e.verdict == v for e in season.key.values()) for v in constants), default=0)
    for name, build in {**HONEST, **logic.agents.independent}.items():
        row = _row(name, "honnête", root, submissions(root, honest, build), reader)
        excused = logic.agents.exceptions.get(name, {})  # tasks a cited season defect lets it fail
        failing = [t for t in row.report["taches"] if not t["reussie"] and t["tache"] not in excused]
        if failing or row.report["overclaim"]["non_etayees"]:
            row.problems += [f"{t['tache']}: {t['statut']}, verdict_exact {t['verdict_exact']}, fondé {t['fonde']}"
                             f", missing {[(f['ressource'], f['champ']) for f in t['faits_manquants']]}"
                             for t in failing] or ["overclaim is not 0"]
        rows.append(row)
    for strategy in logic.shortcuts.every:
        contexts = _contexts(report, reader, strategy)
        row = _row(strategy.name, "raccourci", root, submissions(root, contexts, links_first), reader)
        reussies = {t["tache"] for t in row.report["taches"] if t["reussie"]}
        wrong = {c.task_id for c in contexts if season.key.get(c.task_id) is not None
                 and c.evaluation.verdict != season.key[c.task_id].verdict}
        row.problems += [f"{task_id}: scored réussie though its reading answers wrong" for task_id in
                         sorted(wrong & reussies)]
        row.problems += [f"{task_id}: its trap task is not failed" for task_id in
                         sorted(set(_trap_tasks(season, logic, strategy)) & reussies)]
        rows.append(row)
    for name, (build, expectation) in logic.agents.outside_rule.items():  # the track's readings outside the rule
        row = _row(name, "hors-règle", root, submissions(root, honest, build), reader)
        row.problems += expectation(row.report, season)
        rows.append(row)
    row = _row("listes-seules", "abus", root, submissions(root, honest, list_only), reader)
    row.problems += [f"{t['tache']}: {t['statut']}, expected non_rendue or rejetee_cloture"
                     for t in row.report["taches"] if t["statut"] not in ("non_rendue", "rejetee_cloture")]
    rows.append(row)
    for verdict in constants:
        row = _row(f"remplissage-constant-{verdict}", "abus", root,
                   submissions(root, honest, constant_filler(verdict)), reader)
        if row.report["reussite"] > best:
            row.problems.append(f"réussite {row.report['reussite']} above the best constant answer {best}")
        rows.append(row)
    for name, (kind, expect) in TAMPERS.items():
        row = _row(name, "abus", root, tampered(root, honest, kind), reader)
        _expect_tamper(row, expect)
        rows.append(row)
    return rows


def panel_problems(rows: list[Row], where: Location) -> list[Problem]:
    return [Problem(where, f"panel {row.name}", message) for row in rows for message in row.problems]
