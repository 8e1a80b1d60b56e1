"""The panel: agents whose behaviour is known, scored by ``corpus score`` with the real manifest hashes.

``corpus check-season`` runs it so that the key is proven through the scoring rules (spec §4, §4.1,
§5.7), not only against the evaluator. Every agent reads the corpus through its own evaluation (the
reference reading, or a shortcut) and never reads the key:

- **honest** agents justify the verdict their reading gives with the facts that reading found decisive,
  each in its own way — links first and in both directions; comparison terms first, links as whole
  arrays, filled up to the plafond; own resources first, one fact per decided criterion in turn, then
  filler — and must score 10/10 réussite with 0 overclaim;
- **shortcut** agents (one per shortcut of the evaluator) must fail every task their reading gets wrong;
- **hors-règle** agents, the track's own (``agents.outside_rule`` of its ``TrackLogic``; conformité's
  ``statuts-au-lieu-des-dates`` asserts statuts and start dates instead of the link and the retained end
  date): each with the expectation that shows the published rule bites;
- **abusers** must get what §4, §4.1 and §5.7 promise them: list-only assertions not rendered or
  rejected; true filler at the plafond with a constant verdict at most the best constant answer; a proof
  cited on the wrong resource non étayée (ressource); a wrong value non étayée (valeur); a 403 body an
  instrument defect, out of the overclaim; duplicates, above-plafond, out-of-graph and non-probant
  assertions rejected.

This module is the agents: what each one submits. :mod:`generator.panel.judge` runs them through the scorer
and judges what they got; :mod:`generator.panel.submissions` writes their submissions to disk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.base.jsonvalue import JsonObject
from generator.contract.manifest import Manifest
from generator.proving.checks import TaskReport
from generator.reading.evaluation import Evaluation
from generator.reading.founding import is_link, reverse_form, whole_array_form
from generator.reading.graph import Graph, concerns_entity, probant_facts
from generator.reading.reader import MISSING, CorpusReader, Fact, resolve_pointer
from generator.score import make_disclosure, make_submission
from generator.score.inputs import load_manifest
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
}  # then the track's independent agents (TrackLogic.agents), from the served référentiel alone, before the key


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


def own_resource(ctx: Context) -> str:
    """The task's start document (its entity), or, for a track without one, its first proper resource."""
    start = ctx.reader.track.graph.start
    return ctx.report.statement.task.field(start) if start is not None else sorted(ctx.graph.proper)[0]


def foreign_resource(ctx: Context) -> str:
    """A document of the start collection (another entity), or of the first proper resource's collection,
    outside the task's graph."""
    found = ctx.reader.track.collection_of(own_resource(ctx))
    assert found is not None
    prefix = found.prefix
    return next(f"{prefix}{p.stem}" for p in sorted((ctx.reader.build_dir / prefix.strip("/")).glob("*.json"))
                if f"{prefix}{p.stem}" not in ctx.graph)


def probant_field(ctx: Context, path: str) -> str:
    """A probant field ``path`` serves, other than ``/existe`` when it has one (an entity's /statut)."""
    found = ctx.reader.track.collection_of(path)
    plain = [p for p in (found.probant if found else ()) if "<n>" not in p]
    doc = ctx.reader.fetch(path)
    return next((p for p in plain if p != "/existe" and resolve_pointer(doc, p) is not MISSING), "/existe")


def non_probant_field(ctx: Context, path: str) -> str:
    """The first served text field of ``path`` that no criterion consumes (an entity's /denomination)."""
    doc = ctx.reader.fetch(path)
    return next(f"/{key}" for key, value in doc.items() if key not in ("ressource", "existe")
                and isinstance(value, str) and not ctx.reader.is_probant(path, f"/{key}"))


def wrong_value(value: object) -> object:
    if isinstance(value, bool) or value is None:
        return not value
    if isinstance(value, list):
        return [*value, value[0]] if value else ["?"]
    return f"{value}-bis"


# -- what each agent submits ----------------------------------------------------------------------------

def _manifest(root: Path, contexts: list[Context]) -> Manifest | None:
    """The scoring root's manifest of the contexts' track, read once for all their proofs."""
    return load_manifest(root, contexts[0].reader.track.trees.manifest) if contexts else None


def submissions(root: Path, contexts: list[Context], build: Builder) -> list[dict[str, Any]]:
    manifest = _manifest(root, contexts)
    out = []
    for ctx in contexts:
        assert manifest is not None
        verdict, claims = build(ctx)
        stated = [(f.ressource, f.champ, f.valeur) for f in claims]
        out.append(make_submission(manifest, ctx.task_id, verdict, stated, piste=ctx.reader.track.piste))
    return out


def tampered(root: Path, contexts: list[Context], kind: str) -> list[JsonObject]:
    """Honest submissions (links first), each altered once in the way ``kind`` names."""
    subs = submissions(root, contexts, links_first)
    manifest = _manifest(root, contexts)
    for ctx, sub in zip(contexts, subs, strict=True):
        assert manifest is not None
        first = sub["assertions"][0]
        claim = first["claim"]
        if kind == "ressource":
            other = other_resource(ctx, Fact(claim["resource"], "", None))
            _cite_first(sub, *make_disclosure(manifest, other))
        elif kind == "valeur":
            claim["value"] = wrong_value(claim["value"])
        elif kind == "defaut":
            _cite_first(sub, *make_disclosure(manifest, claim["resource"], response_of=systeme_path("403")))
        elif kind == "doublon":
            sub["assertions"].append({**first, "id": "a-doublon"})
        elif kind == "plafond":
            extra = [f for f in filler(ctx, own_only=True)
                     if (f.ressource, f.champ) not in {(a["claim"]["resource"], a["claim"]["field"])
                                                       for a in sub["assertions"]}]
            room = ctx.plafond + 1 - len(sub["assertions"])
            def past_plafond(c: Context, extra: Claims = extra, room: int = room) -> tuple[str, Claims]:
                return c.evaluation.verdict, extra[:room]

            more = submissions(root, [ctx], past_plafond)[0]
            for n, assertion in enumerate(more["assertions"]):
                sub["assertions"].append({**assertion, "id": f"a-plus-{n}"})
            sub["disclosures"].update(more["disclosures"])
        elif kind == "hors-graphe":
            foreign = foreign_resource(ctx)
            _state_first(sub, ctx, manifest, foreign, probant_field(ctx, foreign))
        elif kind == "non-probant":
            own = own_resource(ctx)
            _state_first(sub, ctx, manifest, own, non_probant_field(ctx, own))
    return subs


def _cite_first(sub: dict[str, Any], proof_id: str, disclosure: dict[str, Any]) -> None:
    """The first assertion cites this proof instead of its own (kept if a later assertion cites it too)."""
    first = sub["assertions"][0]
    sub["disclosures"] = {k: v for k, v in sub["disclosures"].items() if k not in first["proof_ids"]
                          or any(k in a["proof_ids"] for a in sub["assertions"][1:])}
    sub["disclosures"][proof_id] = disclosure
    first["proof_ids"] = [proof_id]


def _state_first(sub: dict[str, Any], ctx: Context, manifest: Manifest, resource: str, pointer: str) -> None:
    """The first assertion states ``resource``'s served value at ``pointer``, with an honest proof of it."""
    proof_id, disclosure = make_disclosure(manifest, resource)
    value = resolve_pointer(ctx.reader.fetch(resource), pointer)
    sub["assertions"][0] = {"id": sub["assertions"][0]["id"],
                            "claim": {"resource": resource, "field": pointer, "value": value},
                            "proof_ids": [proof_id]}
    sub["disclosures"][proof_id] = disclosure
    _prune(sub)


def _prune(sub: dict[str, Any]) -> None:
    cited = {p for a in sub["assertions"] for p in a["proof_ids"]}
    sub["disclosures"] = {k: v for k, v in sub["disclosures"].items() if k in cited}
