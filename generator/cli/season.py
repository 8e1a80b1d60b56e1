"""``corpus evaluate``, ``check-season`` and ``build-season``: the season against the built corpus."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

from generator.base.errors import FrozenMismatch, Location
from generator.base.output_places import key_output_dir
from generator.cli.options import (
    PROBLEM,
    USAGE,
    Subparsers,
    add_root_options,
    add_track_option,
    built_reader,
    named,
    season_or_exit,
    tracks_for_tasks,
)
from generator.contract.hashing import sha256_hex
from generator.panel.judge import Row, panel_problems, run_panel
from generator.panel.submissions import check_panel_target, write_submissions
from generator.proving.artifacts import write_artifacts
from generator.proving.checks import SeasonReport, check_season
from generator.reading.evaluation import Evaluation, Strategy
from generator.reading.founding import TOUS, fonde_par, founding_facts
from generator.reading.logic import TrackLogic, load_logic
from generator.reading.reader import CorpusReader
from generator.reading.season_model import KEY_FILE
from generator.tracks.model import Track


def strategies(logic: TrackLogic[Strategy]) -> dict[str, Strategy]:
    """The readings ``--strategy`` names: the reference and the track's shortcuts."""
    return {s.name: s for s in (logic.reference, *logic.shortcuts.every)}


def print_evaluation(ev: Evaluation, track: Track, out: TextIO | None = None) -> None:
    """One evaluation as ``corpus evaluate`` prints it (``out``: stdout as it is at the call)."""
    out = out or sys.stdout
    task = ev.task
    print(f"{task.id}  {track.drawing.task.format(id=task.id, **dict(task.fields))}  [{ev.strategy.name}]",
          file=out)
    print(f"  verdict : {ev.verdict}", file=out)
    for result in ev.criteres:
        mark = "*" if result in ev.deciding else " "
        print(f"  {mark} {result.id} {result.etat:<17} {result.motif}", file=out)
        for fact in result.faits:
            print(f"        {fact.ressource} {fact.champ} = {json.dumps(fact.valeur, ensure_ascii=False)}",
                  file=out)
    print(f"  appels ({len(ev.calls)}) :", file=out)
    for n, path in enumerate(ev.calls, 1):
        print(f"    {n:>2}. GET {path}", file=out)


def cmd_evaluate(args: argparse.Namespace) -> int:
    every, work = tracks_for_tasks(args.root, args.track, [args.task] if args.task else [])
    if args.strategy is not None:  # a shortcut is one track's: the tracks that know it
        work = [(t, ids) for t, ids in work if args.strategy in strategies(load_logic(t))]
        if not work:
            known = sorted({n for t in every for n in strategies(load_logic(t))})
            print(f"corpus evaluate: --strategy {args.strategy!r}: one of {', '.join(known)}", file=sys.stderr)
            return USAGE
    for track, ids in work:
        logic = load_logic(track)
        strategy = strategies(logic)[args.strategy or logic.reference.name]
        season = season_or_exit(args.root, track)
        reader = built_reader(args.root, track)
        wanted = [s for s in season.statements if not ids or s.task.id in ids]
        if not wanted:
            print(f"unknown task {args.task!r}; tasks: {', '.join(s.task.id for s in season.statements)}",
                  file=sys.stderr)
            return USAGE
        for statement in wanted:
            evaluation = logic.evaluate(statement.task, reader, strategy)
            if args.faits:
                print_founding_yaml(reader, logic, evaluation)
                continue
            print_evaluation(evaluation, track)
            print()
        print(f"corpus evaluate{named(track, every)}: {len(wanted)} task(s), reading {strategy.name}",
              file=sys.stderr)
    return 0


def _yaml_value(value: object) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_yaml_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


def print_founding_yaml(reader: CorpusReader, logic: TrackLogic[Strategy], evaluation: Evaluation,
                        out: TextIO | None = None) -> None:
    """The founding facts the rule derives, as the `faits:` block of season_src/cle.yaml."""
    out = out or sys.stdout
    facts = founding_facts(reader, logic, evaluation)
    print(f"  {evaluation.task.id}:", file=out)
    if fonde_par(evaluation, facts) != TOUS:
        print(f"    fonde_par: {fonde_par(evaluation, facts)}", file=out)
    print("    faits:", file=out)
    for f in facts:
        print(f"      - ressource: {f.fact.ressource}\n        champ: {f.fact.champ}\n"
              f"        valeur: {_yaml_value(f.fact.valeur)}\n        critere: {f.critere}", file=out)
        if f.equivalents:
            print("        formes_equivalentes:", file=out)
            for e in f.equivalents:
                print(f"          - {{ressource: {e.ressource}, champ: {e.champ}, "
                      f"valeur: {_yaml_value(e.valeur)}}}", file=out)


def print_report(report: SeasonReport, logic: TrackLogic[Strategy], out: TextIO | None = None) -> None:
    """The task table; ``graphe`` is the count of distinct probant facts: proper + on common lists (``out``:
    stdout as it is at the call, so that a caller capturing it sees the table)."""
    out = out or sys.stdout
    print(f"{'tâche':<8} {'famille':<9} {'verdict (clé)':<15} {'évalué':<15} {'appels':>6} {'faits':>5} "
          f"{'bornes':>6} {'graphe':>7}  raccourcis en défaut", file=out)
    for t in report.tasks:
        e = t.entry
        wrong = [name for name, v in t.shortcuts.items() if e is not None and v != e.verdict]
        bounds = f"{t.statement.minimum}-{t.statement.plafond}"
        print(f"{t.statement.task.id:<8} {(e.famille if e else '?'):<9} {(e.verdict if e else '?'):<15} "
              f"{t.evaluation.verdict:<15} {len(t.evaluation.calls):>6} {len(e.faits) if e else 0:>5} "
              f"{bounds:>6} {f'{t.proper_facts}+{t.common_facts}':>7}  {', '.join(wrong) or '-'}", file=out)
    print("\nraccourci → tâches où il se trompe", file=out)
    for strategy in logic.shortcuts.every:
        print(f"  {strategy.name:<36} {', '.join(report.wrong_by(strategy)) or '-'}", file=out)
    verdict, count = report.best_constant
    print(f"\nmeilleure réponse constante : {verdict}, {count}/{len(report.tasks)}", file=out)


def cmd_check_season(args: argparse.Namespace) -> int:
    """Every track in turn (``--track``: one), each ending with its own line naming it."""
    every, work = tracks_for_tasks(args.root, args.track, [])
    panel_dir = None if args.write_panel is None else key_output_dir(
        args.root, args.write_panel, Path(), "the panel's submissions", "--write-panel")
    worst = 0
    for track, _ids in work:
        target = None if panel_dir is None else panel_dir / track.piste if len(work) > 1 else panel_dir
        who = f"corpus check-season{named(track, every)}"
        worst = max(worst, _check_one_season(args.root, track, target, who))
    return worst


def _check_one_season(root: Path, track: Track, panel_dir: Path | None, who: str) -> int:
    season = season_or_exit(root, track)
    reader = built_reader(root, track)
    where = Location(f"{track.trees.season_sources}/{KEY_FILE}")
    if panel_dir is not None:
        check_panel_target(panel_dir)  # before the long run, not after it
    report = check_season(season, reader, where)
    print_report(report, load_logic(track))
    if not report.problems:  # the panel scores against a key the rule has proven
        rows = run_panel(root, season, report, reader)
        print_panel(rows, sys.stdout)
        report.problems += panel_problems(rows, where)
        if panel_dir is not None:
            count = write_submissions(rows, panel_dir)
            print(f"{who}: {count} submissions of {len(rows)} agents written under {panel_dir}; "
                  f"replay one with: corpus score {panel_dir}/<agent>", file=sys.stderr)
    for problem in report.problems:
        print(problem, file=sys.stderr)
    status = "FAILED" if report.problems else "passed"
    print(f"{who}: {status}, {len(report.problems)} problem(s)", file=sys.stderr)
    return PROBLEM if report.problems else 0


def cmd_build_season(args: argparse.Namespace) -> int:
    every, work = tracks_for_tasks(args.root, args.track, [])
    for track, _ids in work:
        season = season_or_exit(args.root, track)
        who = f"corpus build-season{named(track, every)}"
        try:
            files = write_artifacts(season, args.root, track)
        except FrozenMismatch as exc:
            print(f"{who}: {exc}", file=sys.stderr)
            return PROBLEM
        for name, data in files.items():
            print(f"{track.trees.season}/{name}: {len(data)} bytes, sha256 {sha256_hex(data)}", file=sys.stderr)
        print(f"{who}: {len(season.statements)} task(s) compiled into {track.trees.season}/", file=sys.stderr)
    return 0


def print_panel(rows: list[Row], out: TextIO) -> None:
    print(f"\n{'agent du panel':<36} {'genre':<10} {'réussite':>8} {'overclaim':>10}  attendu", file=out)
    for row in rows:
        over = row.report["overclaim"]
        print(f"{row.name:<36} {row.kind:<10} {row.report['reussite']:>5}/{row.report['taches_total']:<2} "
              f"{over['non_etayees']:>4}/{over['rendues']:<5}  {'tenu' if not row.problems else 'NON TENU'}",
              file=out)


def register(sub: Subparsers) -> None:
    p = sub.add_parser("evaluate", help="apply /referentiel to the built corpus for one task or all",
                       description="The reference evaluator: reads the built bytes as an agent through the "
                                   "proxy would, applies the served /referentiel, and prints for each task the "
                                   "verdict, the criteria (* marks those that decide), the facts they rest on, "
                                   "and the resources fetched in order (the call count). --strategy runs one "
                                   "of the trap shortcuts instead.")
    p.add_argument("task", nargs="?", help="task id, e.g. conf-03 (default: all tasks)")
    p.add_argument("--strategy", default=None,
                   help="reading to apply: 'reference' (the default) or one of the track's shortcuts")
    p.add_argument("--faits", action="store_true",
                   help="print the founding facts the published rule derives, as season_src/cle.yaml writes them")
    add_root_options(p)
    add_track_option(p, "only this track (default: every track; a task id names its own)")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("check-season", help="prove the season (verdicts, facts, calls, traps) against build/",
                       description="Check the season against the built corpus: evaluated verdicts equal the "
                                   "key; founding facts served exactly, in the task's graph, on probant fields, "
                                   "within the ceiling; 2 to 12 calls; the published composition; every trap "
                                   "caught by its shortcut and the control answered right by all; best "
                                   "constant answer 4/10; /referentiel consumes exactly the probant fields; "
                                   "the key's founding facts are what the published rule derives; then the "
                                   "panel (honest, shortcut and abusive agents) scored by corpus score with "
                                   "the manifest's hashes. Prints the task and panel tables; exit 1 with one "
                                   "line per problem.")
    add_root_options(p)
    p.add_argument("--write-panel", metavar="DIR",
                   help="also write each panel agent's submissions as DIR/<agent>/<task>.json (spec §4), for "
                        "'corpus score DIR/<agent>' to replay; they reveal the key: DIR must be under run/ or "
                        "outside the repository")
    add_track_option(p, "only this track (default: every track; a task id names its own)")
    p.set_defaults(func=cmd_check_season)

    p = sub.add_parser("build-season", help="compile season_src/ into season/taches.json and season/cle.json",
                       description="Compile the public statements and the sealed key into deterministic "
                                   "JSON under season/ (never under build/).")
    add_root_options(p)
    add_track_option(p, "build only this track's season (default: every track's)")
    p.set_defaults(func=cmd_build_season)
