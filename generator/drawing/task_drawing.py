"""What a task's picture shows, as plain data: the graph of spec §5.2, its links, calls and founding facts.

Built from the season's public APIs only (:func:`task_graph`, :func:`evaluate`, the loaded key), so the
writers (:mod:`generator.drawing.dot_text`, :mod:`generator.drawing.graph_index`) never read the corpus
and the model can be tested on its own. Everything is sorted: the same build and season give the same
drawing, hence the same DOT bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from generator.reading.evaluation import FAUX, NON_ETABLI, VRAI, Evaluation
from generator.reading.graph import Graph, task_graph
from generator.reading.logic import load_logic
from generator.reading.reader import CorpusReader, Fact
from generator.reading.season_model import KeyEntry, KeyFact, Statement
from generator.tracks.model import Summary, Track

NOT_EVALUATED = "non_evalue"  # the criterion comes after one established false (precedence)
GROUP_PROPER = "propre"  # a common list's group is its collection's name
STATE_LABELS = {VRAI: "établi", FAUX: "faux", NON_ETABLI: "non établissable", NOT_EVALUATED: "non évalué"}
_DIGITS = re.compile(r"([0-9]+)")
_FIELD = re.compile(r"\{([a-z_]+)\}")


@dataclass(frozen=True)
class Highlight:
    """One criterion a founding fact serves, with the state the reference evaluation gave it."""

    critere: str
    etat: str
    decisif: bool

    @property
    def text(self) -> str:
        return f"{self.critere} {STATE_LABELS[self.etat]}"


@dataclass(frozen=True)
class Mark:
    """A founding fact of the key drawn on a resource (a field) or on a link (an edge)."""

    champ: str
    valeur: Any
    highlight: Highlight  # the criterion the key names for this fact
    equivalentes: tuple[str, ...]  # "resource pointer = value" of the other forms

    @property
    def text(self) -> str:
        return f"{self.champ} = {json.dumps(self.valeur, ensure_ascii=False)}"


@dataclass(frozen=True)
class Node:
    path: str
    collection: str  # name of the collection (track.yaml), "" for a path of no collection
    group: str  # GROUP_PROPER, GROUP_AGREES or GROUP_MESURES
    existe: bool
    summary: tuple[str, ...]  # a few served fields, to recognise the resource
    call: int | None  # rank of its GET in the reference reading, None if never fetched
    marks: tuple[Mark, ...]


@dataclass(frozen=True)
class Edge:
    """A link between two resources of the graph, drawn once from the end nearer the entity."""

    source: str
    pointer: str
    target: str
    reverse: tuple[str, ...]  # "resource pointer" of the same link read from the other end
    marks: tuple[Mark, ...]

    @property
    def id(self) -> str:
        return f"{self.source}#{self.pointer}"


@dataclass(frozen=True)
class TaskDrawing:
    statement: Statement
    famille: str
    verdict_cle: str
    verdict_evalue: str
    piege: str
    criteres: tuple[Highlight, ...]  # every criterion evaluated, in order
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]
    calls: tuple[str, ...]
    calls_outside: tuple[str, ...]  # fetched by the reading yet outside the graph (check-season flags it)
    stray: tuple[str, ...]  # founding facts on no resource of the graph (check-season flags it)
    heading: str = ""  # the task's fields as the track's drawing titles them (``dessin.tache``)
    clusters: tuple[tuple[str, str], ...] = ()  # (group, label): the proper resources, then each common list


def natural_key(path: str) -> tuple[Any, ...]:
    """``/mesures-restrictives/2`` before ``/mesures-restrictives/10``."""
    return tuple(int(p) if p.isdigit() else p for p in _DIGITS.split(path))


def _group(track: Track, graph: Graph, path: str) -> str:
    if path in graph.proper:
        return GROUP_PROPER
    found = track.collection_of(path)
    return found.name if found else ""


def _node_order(track: Track, graph: Graph, path: str) -> tuple[Any, ...]:
    found = track.collection_of(path)
    rank = track.collection_order.get(found.name, 99) if found else 99
    return (0 if path in graph.proper else 1, rank, natural_key(path))


def _leaves(value: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    """Every (pointer, scalar) of a document, in document order."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, f"{pointer}/{index}")
    else:
        yield pointer, value


def links(reader: CorpusReader, graph: Graph, paths: list[str]) -> list[tuple[str, str, str]]:
    """(source, pointer, target) for every probant field or ``/page_suivante`` naming another resource
    of the graph: the fields an agent follows or cites as a link (§5.7)."""
    found = []
    for source in paths:
        for pointer, value in _leaves(reader.fetch(source)):
            if isinstance(value, str) and value != source and value in graph and \
                    (pointer == "/page_suivante" or reader.is_probant(source, pointer)):
                found.append((source, pointer, value))
    return found


def _fold(raw: list[tuple[str, str, str]], order: dict[str, int]) -> list[tuple[str, str, str, tuple[str, ...]]]:
    """One edge per link: a pair A→B, B→A (``/agrements/0`` and ``/entite``) is drawn from the resource
    listed first (the entity before its agrément), the other end kept as the reverse reading."""
    by_pair: dict[tuple[str, str], list[str]] = {}
    for source, pointer, target in raw:
        by_pair.setdefault((source, target), []).append(pointer)
    edges = []
    for source, pointer, target in raw:
        back = by_pair.get((target, source), [])
        if back and order[target] < order[source]:
            continue  # drawn from the other end
        edges.append((source, pointer, target, tuple(f"{target} {p}" for p in back)))
    return edges


def _matches(fact: Fact, path: str, pointer: str) -> bool:
    """Whether a key fact names this field: same pointer, or the whole array that holds it."""
    return fact.ressource == path and (fact.champ == pointer or (isinstance(fact.valeur, list) and
                                                                 pointer.startswith(fact.champ + "/")))


def attribute(key_fact: KeyFact, evaluation: Evaluation) -> Highlight:
    """The criterion a founding fact serves, as the key names it (every key fact names one), with that
    criterion's evaluated state (``non_evalue`` when precedence stopped before it)."""
    states = {r.id: r.etat for r in evaluation.criteres}
    deciding = {r.id for r in evaluation.deciding}
    return Highlight(key_fact.critere, states.get(key_fact.critere, NOT_EVALUATED), key_fact.critere in deciding)


def _form(fact: Fact) -> str:
    return f"{fact.ressource} {fact.champ} = {json.dumps(fact.valeur, ensure_ascii=False)}"


def _filled(template: str, values: Any) -> str | None:
    """``template`` with each ``{field}`` of ``values``; None when a field is absent or null."""
    wanted = _FIELD.findall(template)
    if not isinstance(values, dict) or any(values.get(name) is None for name in wanted):
        return None
    return _FIELD.sub(lambda m: str(values[m.group(1)]), template)


def summary_lines(summary: Summary, doc: Any) -> tuple[str, ...]:
    """The track's summary of a served resource (``dessin.resumes``): its lines, then one per entry."""
    lines = [" · ".join(item for item in (_filled(t, doc) for t in line) if item is not None)
             for line in summary.lines]
    entries = doc.get("entrees") if isinstance(doc.get("entrees"), list) else []
    if summary.entries:
        lines += [line for line in (_filled(summary.entries, e) for e in entries) if line is not None]
    elif not summary.lines:
        lines.append(f"{len(entries)} entrée(s)")
    return tuple(lines)


def _summary(track: Track, path: str, doc: Any) -> tuple[str, ...]:
    """A line or two of served fields that say what the resource is (never used to decide anything)."""
    if not isinstance(doc, dict) or doc.get("existe") is not True:
        return ("existe: false",)
    found = track.collection_of(path)
    summary = track.drawing.summaries.get(found.name if found else "", Summary())
    return summary_lines(summary, doc)


def draw_task(statement: Statement, entry: KeyEntry | None, reader: CorpusReader) -> TaskDrawing:
    """The drawing of one task: its graph, the links between its resources, the reference reading's
    calls, and the key's founding facts placed on the fields and links that carry them."""
    task, track = statement.task, reader.track
    graph = task_graph(reader, task)
    evaluation = load_logic(track).evaluate(task, reader)
    paths = sorted(graph.paths, key=lambda p: _node_order(track, graph, p))
    order = {p: i for i, p in enumerate(paths)}
    folded = _fold(links(reader, graph, paths), order)
    facts = entry.faits if entry is not None else ()

    def on_edge(kf: KeyFact, source: str, pointer: str, target: str, reverse: tuple[str, ...]) -> bool:
        return any(_matches(f, source, pointer) or
                   (f.ressource == target and f"{target} {f.champ}" in reverse) for f in kf.forms)

    def mark(kf: KeyFact, shown: Fact) -> Mark:
        return Mark(shown.champ, shown.valeur, attribute(kf, evaluation),
                    tuple(_form(f) for f in kf.forms if f is not shown))

    edges, placed = [], set()
    for source, pointer, target, reverse in folded:
        marks = []
        for i, kf in enumerate(facts):
            if on_edge(kf, source, pointer, target, reverse):
                marks.append(mark(kf, kf.fact))
                placed.add(i)
        edges.append(Edge(source, pointer, target, reverse, tuple(marks)))
    calls = {p: n for n, p in enumerate(evaluation.calls, 1)}
    nodes = []
    for path in paths:
        doc = reader.fetch(path)
        marks = []
        for i, kf in enumerate(facts):
            shown = next((f for f in kf.forms if f.ressource == path), None)
            if i not in placed and shown is not None:
                marks.append(mark(kf, shown))
        found = track.collection_of(path)
        nodes.append(Node(path, found.name if found else "", _group(track, graph, path),
                          isinstance(doc, dict) and doc.get("existe") is True, _summary(track, path, doc),
                          calls.get(path), tuple(marks)))
    stray = tuple(_form(kf.fact) for i, kf in enumerate(facts)
                  if i not in placed and not any(f.ressource in graph for f in kf.forms))
    deciding = {r.id for r in evaluation.deciding}
    return TaskDrawing(
        statement, entry.famille if entry else "?", entry.verdict if entry else "?", evaluation.verdict,
        entry.piege if entry else "", tuple(Highlight(r.id, r.etat, r.id in deciding)
                                            for r in evaluation.criteres),
        tuple(nodes), tuple(edges), tuple(evaluation.calls),
        tuple(p for p in evaluation.calls if p not in graph and p != track.referentiel), stray,
        track.drawing.task.format(id=task.id, **dict(task.fields)),
        ((GROUP_PROPER, track.drawing.proper),
         *((c.collection, c.title.format(**dict(task.fields))) for c in track.graph.common),
         *((name, track.drawing.groups.get(name) or track.collection(name).label) for name in track.graph.shared)))
