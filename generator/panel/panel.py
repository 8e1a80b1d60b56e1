"""The panel: agents whose behaviour is known, scored by ``corpus score`` with the real manifest hashes.

``corpus check-season`` runs it so that the key is proven through the scoring rules (spec §4, §4.1,
§5.7), not only against the evaluator. Every agent reads the corpus through its own evaluation (the
reference reading, or a shortcut) and never reads the key:

- **honest** agents justify the verdict their reading gives with the facts that reading found decisive,
  each in its own way — links first and in both directions; comparison terms first, links as whole
  arrays, filled up to the plafond; own resources first, one fact per decided criterion in turn, then
  filler — and must score 10/10 réussite with 0 overclaim;
- **shortcut** agents (one per shortcut of the evaluator) must fail every task their reading gets wrong;
- one **hors-règle** agent, ``statuts-au-lieu-des-dates``, reaches the right verdict everywhere but, for a
  satisfied criterion, asserts the register's statut, the list entry and the start date instead of the
  link and the retained end date that ``/referentiel`` (``principes.justification``) asks: it must be
  non fondé exactly on the conforme tasks and fondé elsewhere, with 0 overclaim (the published rule bites);
- **abusers** must get what §4, §4.1 and §5.7 promise them: list-only assertions not rendered or
  rejected; true filler at the plafond with a constant verdict at most the best constant answer; a proof
  cited on the wrong resource non étayée (ressource); a wrong value non étayée (valeur); a 403 body an
  instrument defect, out of the overclaim; duplicates, above-plafond, out-of-graph and non-probant
  assertions rejected.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.base.atomic_file import FileWriteError, write_new
from generator.base.errors import GeneratorError, Location, Problem
from generator.season.artifacts import KEY_ARTIFACT, TASKS_ARTIFACT, key_artifact, tasks_artifact
from generator.season.checks import SeasonReport, TaskReport
from generator.season.evaluation import Evaluation, Strategy
from generator.season.founding import is_link, reverse_form, whole_array_form
from generator.season.graph import Graph, concerns_entity, probant_facts, task_graph
from generator.season.logic import TrackLogic, load_logic
from generator.season.model import Season
from generator.season.reader import CorpusReader, Fact, resolve_pointer
from generator.tracks.model import systeme_path


@dataclass
class Context:
    """What an agent has for one task: the statement, its own reading, the graph, the corpus."""

    report: TaskReport
    evaluation: Evaluation
    reader: CorpusReader
    graph: Graph

    @property
    def task_id(self) -> str:
        return self.report.statement.task.id

    @property
    def minimum(self) -> int:
        return self.report.statement.minimum

    @property
    def plafond(self) -> int:
        return self.report.statement.plafond


Claims = list[Fact]
Builder = Callable[[Context], tuple[str, Claims]]


@dataclass
class Row:
    """One agent of the panel: its §4 submissions, and the corpus-score/1 report they were given."""

    name: str
    kind: str
    submissions: list[dict[str, Any]]
    report: dict[str, Any]
    problems: list[str] = field(default_factory=list)


# -- what an agent's own reading gives ------------------------------------------------------------------

def decided(ctx: Context) -> list[list[Fact]]:
    """The facts the agent's reading found decisive, per criterion that decides its verdict."""
    return [list(c.faits) for c in ctx.evaluation.deciding if c.faits]


def admissible(ctx: Context, fact: Fact) -> bool:
    return fact.ressource in ctx.graph and ctx.reader.is_probant(fact.ressource, fact.champ) \
        and concerns_entity(ctx.reader, ctx.report.statement.task, ctx.graph, fact)


def filler(ctx: Context, own_only: bool = False) -> list[Fact]:
    """True probant facts the agent read, in reading order (then the rest of its own resources)."""
    read = [f for _, f in ctx.evaluation.read if admissible(ctx, f)]
    proper, _ = probant_facts(ctx.reader, ctx.report.statement.task, ctx.graph)
    rest = sorted(proper, key=lambda f: (f.ressource, f.champ))
    facts = [*read, *(Fact(f.ressource, f.champ, resolve_pointer(ctx.reader.fetch(f.ressource), f.champ))
                      for f in rest)]
    return [f for f in facts if not own_only or f.ressource in ctx.graph.proper]


def fill(chosen: Iterable[Fact], extra: Iterable[Fact], upto: int, limit: int) -> Claims:
    """``chosen`` (deduplicated, cut at ``limit``), then ``extra`` until ``upto`` claims."""
    out: Claims = []
    for fact in [*chosen, *extra]:
        if len(out) >= limit or (len(out) >= upto and fact not in chosen):
            break
        if fact not in out:
            out.append(fact)
    return out


# -- honest strategies ----------------------------------------------------------------------------------

def links_first(ctx: Context) -> tuple[str, Claims]:
    """Per deciding criterion in turn, every link of its decisive facts in both directions, then its
    comparison terms."""
    chosen: Claims = []
    for group in decided(ctx):
        for f in group:
            if is_link(ctx.reader, f):
                chosen += [f, *filter(None, [reverse_form(ctx.reader, f)])]
        chosen += [f for f in group if not is_link(ctx.reader, f)]
    return ctx.evaluation.verdict, fill(chosen, filler(ctx), ctx.minimum, ctx.plafond)


def terms_first(ctx: Context) -> tuple[str, Claims]:
    """Comparison terms first, links as the whole array of the citing field, then filler to the plafond."""
    facts = [f for group in decided(ctx) for f in group]
    terms = [f for f in facts if not is_link(ctx.reader, f)]
    links = [w for f in facts if (w := whole_array_form(ctx.reader, f)) is not None]
    return ctx.evaluation.verdict, fill([*terms, *links], filler(ctx), ctx.plafond, ctx.plafond)


def own_first(ctx: Context) -> tuple[str, Claims]:
    """Own resources first (links from the cited document's side), one fact per decided criterion in
    turn, then filler from own resources."""
    groups = []
    for group in decided(ctx):
        stated = [reverse_form(ctx.reader, f) or f for f in group]
        groups.append(sorted(stated, key=lambda f: f.ressource not in ctx.graph.proper))
    turns: Claims = []
    for rank in range(max((len(g) for g in groups), default=0)):
        turns += [g[rank] for g in groups if rank < len(g)]
    return ctx.evaluation.verdict, fill(turns, filler(ctx, own_only=True), ctx.plafond, ctx.plafond)


HONEST: dict[str, Builder] = {
    "liens-d-abord": links_first,
    "termes-d-abord": terms_first,
    "ressources-propres-d-abord": own_first,
}  # then the track's INDEPENDENT agents, written from the served référentiel alone, before the key


# -- abusers --------------------------------------------------------------------------------------------

def list_only(ctx: Context) -> tuple[str, Claims]:
    """Only common-list entries, the minimum exactly: nothing on the entity's own resources."""
    pages = sorted(ctx.graph.common)
    facts = [Fact(p, f"/entrees/{k}/{name}", v) for p in pages
             for k, entry in enumerate(ctx.reader.fetch(p).get("entrees", []))
             for name, v in entry.items() if ctx.reader.is_probant(p, f"/entrees/{k}/{name}")]
    return ctx.evaluation.verdict, facts[:ctx.minimum]


def constant_filler(verdict: str) -> Builder:
    def build(ctx: Context) -> tuple[str, Claims]:
        return verdict, fill([], filler(ctx, own_only=True), ctx.plafond, ctx.plafond)
    return build


@dataclass(frozen=True)
class Tamper:
    """An honest submission (links first) with its first assertion altered one way."""

    name: str
    expect: str  # what the first assertion must become


def other_resource(ctx: Context, fact: Fact) -> str:
    return next(p for p in sorted(ctx.graph.proper) if p != fact.ressource)


def foreign_resource(ctx: Context) -> str:
    """A document of the start collection (another entity) outside the task's graph."""
    prefix = ctx.reader.track.collection(ctx.reader.track.graph.start_collection).prefix
    return next(f"{prefix}{p.stem}" for p in sorted((ctx.reader.build_dir / prefix.strip("/")).glob("*.json"))
                if f"{prefix}{p.stem}" not in ctx.graph)


def non_probant_field(ctx: Context, path: str) -> str:
    """The first served text field of ``path`` that no criterion consumes (an entity's /denomination)."""
    doc = ctx.reader.fetch(path)
    return next(f"/{key}" for key, value in doc.items() if key not in ("ressource", "existe")
                and isinstance(value, str) and not ctx.reader.is_probant(path, f"/{key}"))


def wrong_value(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return not value
    if isinstance(value, list):
        return [*value, value[0]] if value else ["?"]
    return f"{value}-bis"


# -- running it -----------------------------------------------------------------------------------------

def _row(name: str, kind: str, root: Path, submissions: list[dict[str, Any]], reader: CorpusReader) -> Row:
    from generator.score import score_submissions

    return Row(name, kind, submissions, score_submissions(submissions, root=root, track=reader.track))


def _submissions(root: Path, contexts: list[Context], build: Builder) -> list[dict[str, Any]]:
    from generator.score import make_submission
    from generator.score.inputs import load_manifest

    out = []
    for ctx in contexts:
        verdict, claims = build(ctx)
        manifest = load_manifest(root, ctx.reader.track.trees.manifest)
        stated = [(f.ressource, f.champ, f.valeur) for f in claims]
        out.append(make_submission(manifest, ctx.task_id, verdict, stated, piste=ctx.reader.track.piste))
    return out


def _tampered(root: Path, contexts: list[Context], kind: str) -> list[dict[str, Any]]:
    """Honest submissions (links first), each altered once in the way ``kind`` names."""
    from generator.score import make_disclosure
    from generator.score.inputs import load_manifest

    subs = _submissions(root, contexts, links_first)
    for ctx, sub in zip(contexts, subs, strict=True):
        manifest = load_manifest(root, ctx.reader.track.trees.manifest)
        first = sub["assertions"][0]
        claim = first["claim"]
        if kind == "ressource":
            other = other_resource(ctx, Fact(claim["resource"], "", None))
            proof_id, disclosure = make_disclosure(manifest, other)
            sub["disclosures"] = {k: v for k, v in sub["disclosures"].items() if k not in first["proof_ids"]
                                  or any(k in a["proof_ids"] for a in sub["assertions"][1:])}
            sub["disclosures"][proof_id] = disclosure
            first["proof_ids"] = [proof_id]
        elif kind == "valeur":
            claim["value"] = wrong_value(claim["value"])
        elif kind == "defaut":
            proof_id, disclosure = make_disclosure(manifest, claim["resource"], response_of=systeme_path("403"))
            sub["disclosures"] = {k: v for k, v in sub["disclosures"].items() if k not in first["proof_ids"]
                                  or any(k in a["proof_ids"] for a in sub["assertions"][1:])}
            sub["disclosures"][proof_id] = disclosure
            first["proof_ids"] = [proof_id]
        elif kind == "doublon":
            sub["assertions"].append({**first, "id": "a-doublon"})
        elif kind == "plafond":
            extra = [f for f in filler(ctx, own_only=True)
                     if (f.ressource, f.champ) not in {(a["claim"]["resource"], a["claim"]["field"])
                                                       for a in sub["assertions"]}]
            room = ctx.plafond + 1 - len(sub["assertions"])
            more = _submissions(root, [ctx], lambda c, extra=extra, room=room:
                                (c.evaluation.verdict, extra[:room]))[0]
            for n, assertion in enumerate(more["assertions"]):
                sub["assertions"].append({**assertion, "id": f"a-plus-{n}"})
            sub["disclosures"].update(more["disclosures"])
        elif kind == "hors-graphe":
            proof_id, disclosure = make_disclosure(manifest, foreign_resource(ctx))
            sub["assertions"][0] = {"id": first["id"], "claim": {"resource": foreign_resource(ctx),
                                                                 "field": "/statut", "value": resolve_pointer(
                                                                     ctx.reader.fetch(foreign_resource(ctx)),
                                                                     "/statut")}, "proof_ids": [proof_id]}
            sub["disclosures"][proof_id] = disclosure
            _prune(sub)
        elif kind == "non-probant":
            entity = ctx.report.statement.task.field(ctx.reader.track.graph.start)
            proof_id, disclosure = make_disclosure(manifest, entity)
            pointer = non_probant_field(ctx, entity)
            sub["assertions"][0] = {"id": first["id"], "claim": {"resource": entity, "field": pointer,
                                                                 "value": resolve_pointer(ctx.reader.fetch(entity),
                                                                                          pointer)},
                                    "proof_ids": [proof_id]}
            sub["disclosures"][proof_id] = disclosure
            _prune(sub)
    return subs


def _prune(sub: dict[str, Any]) -> None:
    cited = {p for a in sub["assertions"] for p in a["proof_ids"]}
    sub["disclosures"] = {k: v for k, v in sub["disclosures"].items() if k in cited}


TAMPERS = {
    "preuve-sur-une-autre-ressource": ("ressource", "non_etayee:ressource"),
    "valeur-fausse": ("valeur", "non_etayee:valeur"),
    "corps-403": ("defaut", "defaut_instrument"),
    "doublon": ("doublon", "rejetee_entree"),
    "au-dela-du-plafond": ("plafond", "rejetee_entree"),
    "hors-graphe": ("hors-graphe", "rejetee_cloture"),
    "champ-non-probant": ("non-probant", "rejetee_cloture"),
}


def _trap_tasks(season: Season, logic: TrackLogic, strategy: Strategy) -> list[str]:
    out = []
    for task_id, entry in season.key.items():
        named = logic.NAMED_SHORTCUTS.get(entry.raccourci or "")
        if (named or logic.FAMILY_SHORTCUTS.get(entry.famille)) is strategy:
            out.append(task_id)
    return sorted(out)


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
        for name in (track.trees.build, track.trees.manifest):
            (scoring_root / name).symlink_to((root / name).resolve())
        (scoring_root / track.trees.season).mkdir()
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


def _run(root: Path, season: Season, report: SeasonReport, reader: CorpusReader) -> list[Row]:
    rows: list[Row] = []
    track, logic = reader.track, load_logic(reader.track)
    honest = _contexts(report, reader, None)
    best = max((sum(e.verdict == v for e in season.key.values()) for v in track.verdicts), default=0)
    for name, build in {**HONEST, **logic.INDEPENDENT}.items():
        row = _row(name, "honnête", root, _submissions(root, honest, build), reader)
        excused = logic.EXCEPTIONS.get(name, {})  # tasks a cited season defect lets it fail (independent.py)
        failing = [t for t in row.report["taches"] if not t["reussie"] and t["tache"] not in excused]
        if failing or row.report["overclaim"]["non_etayees"]:
            row.problems += [f"{t['tache']}: {t['statut']}, verdict_exact {t['verdict_exact']}, fondé {t['fonde']}"
                             f", missing {[(f['ressource'], f['champ']) for f in t['faits_manquants']]}"
                             for t in failing] or ["overclaim is not 0"]
        rows.append(row)
    for strategy in logic.ALL_SHORTCUTS:
        contexts = _contexts(report, reader, strategy)
        row = _row(strategy.name, "raccourci", root, _submissions(root, contexts, links_first), reader)
        reussies = {t["tache"] for t in row.report["taches"] if t["reussie"]}
        wrong = {c.task_id for c in contexts if season.key.get(c.task_id) is not None
                 and c.evaluation.verdict != season.key[c.task_id].verdict}
        row.problems += [f"{task_id}: scored réussie though its reading answers wrong" for task_id in
                         sorted(wrong & reussies)]
        row.problems += [f"{task_id}: its trap task is not failed" for task_id in
                         sorted(set(_trap_tasks(season, logic, strategy)) & reussies)]
        rows.append(row)
    for name, (build, expect) in logic.OUTSIDE_RULE.items():  # the track's readings outside the rule
        row = _row(name, "hors-règle", root, _submissions(root, honest, build), reader)
        row.problems += expect(row.report, season)
        rows.append(row)
    row = _row("listes-seules", "abus", root, _submissions(root, honest, list_only), reader)
    row.problems += [f"{t['tache']}: {t['statut']}, expected non_rendue or rejetee_cloture"
                     for t in row.report["taches"] if t["statut"] not in ("non_rendue", "rejetee_cloture")]
    rows.append(row)
    for verdict in track.verdicts:
        row = _row(f"remplissage-constant-{verdict}", "abus", root,
                   _submissions(root, honest, constant_filler(verdict)), reader)
        if row.report["reussite"] > best:
            row.problems.append(f"réussite {row.report['reussite']} above the best constant answer {best}")
        rows.append(row)
    for name, (kind, expect) in TAMPERS.items():
        row = _row(name, "abus", root, _tampered(root, honest, kind), reader)
        _expect_tamper(row, expect)
        rows.append(row)
    return rows


PANEL_MARKER = ".corpus-panel"  # written in every panel folder: only such a folder is replaced by a new panel


class PanelRefused(GeneratorError):
    """``--write-panel DIR`` names a non-empty folder this command did not write: it is left alone."""


def check_panel_target(out: Path) -> None:
    """Refuse a non-empty ``out`` that holds no :data:`PANEL_MARKER` (it is not an earlier panel)."""
    if out.is_dir() and not (out / PANEL_MARKER).is_file() and any(out.iterdir()):
        raise PanelRefused(f"--write-panel {out}: not empty and not a panel written by 'corpus check-season' "
                           f"(no {PANEL_MARKER} in it): give a new or empty folder")


def write_submissions(rows: list[Row], out: Path) -> int:
    """Write each agent's submissions as ``OUT/<agent>/<task>.json`` (spec §4), for ``corpus score`` to replay.

    The whole panel is written into a temporary sibling folder, then put in place by rename: a failure
    leaves ``out`` as it was, and no file of an earlier panel survives beside the new one (``corpus score
    OUT/<agent>`` would read it). An earlier panel is replaced (renamed aside, then removed); any other
    non-empty folder is refused (:func:`check_panel_target`).
    """
    check_panel_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stem = f".{out.name}.{secrets.token_hex(6)}"
    staging, old = out.with_name(stem + ".tmp"), out.with_name(stem + ".old")
    written = 0
    try:
        staging.mkdir()
        write_new(staging / PANEL_MARKER, b"corpus check-season --write-panel\n", 0o644)
        for row in rows:
            (staging / row.name).mkdir(exist_ok=True)
            for submission in row.submissions:
                data = (json.dumps(submission, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
                write_new(staging / row.name / f"{submission['task_id']}.json", data, 0o644)
                written += 1
        if out.is_dir() and any(out.iterdir()):
            os.rename(out, old)
            try:
                os.rename(staging, out)
            except OSError:
                os.rename(old, out)
                raise
        else:
            os.replace(staging, out)
    except OSError as exc:
        raise FileWriteError(exc.errno, exc.strerror or str(exc), exc.filename or os.fspath(out)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
    return written


def panel_problems(rows: list[Row], where: Location) -> list[Problem]:
    return [Problem(where, f"panel {row.name}", message) for row in rows for message in row.problems]


def print_panel(rows: list[Row], out: Any) -> None:
    print(f"\n{'agent du panel':<36} {'genre':<10} {'réussite':>8} {'overclaim':>10}  attendu", file=out)
    for row in rows:
        over = row.report["overclaim"]
        print(f"{row.name:<36} {row.kind:<10} {row.report['reussite']:>5}/{row.report['taches_total']:<2} "
              f"{over['non_etayees']:>4}/{over['rendues']:<5}  {'tenu' if not row.problems else 'NON TENU'}",
              file=out)
