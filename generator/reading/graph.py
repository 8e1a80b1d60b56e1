"""The graph of a task (spec §5.2) and the probant facts it offers, read from the built corpus.

Everything track-specific comes from ``track.yaml`` (``graphe``): the statement field naming the start
document, the link fields followed from it (a paginated target brings its whole ``page_suivante``
chain), and the common lists with the rule saying which of their entries concern the task.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from generator.reading.reader import MISSING, CorpusReader, Fact, resolve_pointer
from generator.reading.task import Task
from generator.tracks.model import CommonList, Link, Track


@dataclass(frozen=True)
class Graph:
    """Resources of a task: those proper to it, those its links reach that other tasks share (a
    supplier sheet), and the pages of the common lists."""

    proper: frozenset[str]
    common: frozenset[str]
    names: frozenset[tuple[str, tuple[object, ...]]]  # (collection, names) of the entries of names_of pages
    shared: frozenset[str] = frozenset()

    def __contains__(self, path: str) -> bool:
        return path in self.proper or path in self.common or path in self.shared

    @property
    def paths(self) -> frozenset[str]:
        return self.proper | self.common | self.shared


def _chain(reader: CorpusReader, first: object) -> list[str]:
    pages: list[str] = []
    while isinstance(first, str) and first not in pages:
        pages.append(first)
        first = reader.fetch(first).get("page_suivante")
    return pages


def _listed(doc: object, key: str) -> list[str]:
    items = doc.get(key) if isinstance(doc, dict) else None
    return [i for i in items if isinstance(i, str)] if isinstance(items, list) else []


def _cited(doc: object, link: Link) -> list[str]:
    """The paths one served document cites through ``link`` (a field, an array, or its entries' field)."""
    if link.entry_field is not None:
        entries = doc.get("entrees") if isinstance(doc, dict) else None
        return [e[link.entry_field] for e in entries or [] if isinstance(e, dict)
                and isinstance(e.get(link.entry_field), str)]
    if link.many:
        return _listed(doc, link.top_field or "")
    value = doc.get(link.top_field) if isinstance(doc, dict) else None
    return [value] if isinstance(value, str) else []


def first_page(track: Track, common: CommonList, task: Task) -> str:
    """The first page of a common list for a task (``=field`` takes the statement's field)."""
    values = {name: task.field(value[1:]) if value.startswith("=") else value for name, value in common.first_page}
    return track.collection(common.collection).path(**values)


def task_graph(reader: CorpusReader, task: Task) -> Graph:
    """The start document and what its followed links reach; the pages of the common lists."""
    track, spec = reader.track, reader.track.graph
    lists = {common.collection: _chain(reader, first_page(track, common, task)) for common in spec.common}
    reached: dict[str, list[str]] = {name: list(pages) for name, pages in lists.items()}
    proper: set[str] = set()
    if spec.start is not None and spec.start_collection is not None:
        start = task.field(spec.start)
        reached.setdefault(spec.start_collection, []).append(start)
        proper.add(start)
    for name in spec.follow:
        link = track.followed[name]
        target = track.collection(link.target)
        found: list[str] = []
        for path in reached.get(link.source, []):
            for value in _cited(reader.fetch(path), link):
                found += _chain(reader, value) if target.paginated else [value]
        known = reached.setdefault(target.name, [])
        known += [p for p in dict.fromkeys(found) if p not in known]
    shared = {p for name in spec.shared for p in reached.get(name, [])}
    proper |= {p for name, paths in reached.items() if name not in lists and name not in spec.shared
               for p in paths}
    names = set()
    for common in spec.common:
        if common.names_of is None:
            continue
        for page in reached.get(common.names_of, []):
            for entry in reader.fetch(page).get("entrees", []):
                if isinstance(entry, dict):
                    names.add((common.collection, tuple(entry.get(n) for n in common.names)))
    pages = {page for chain in lists.values() for page in chain}
    return Graph(frozenset(proper), frozenset(pages), frozenset(names), frozenset(shared - proper))


def _expand(doc: object, pattern: str) -> list[str]:
    """Concrete pointers of a probant pattern in one document (``<n>`` over the indices present)."""
    pointers = [""]
    for part in pattern.lstrip("/").split("/"):
        grown = []
        for pointer in pointers:
            if part == "<n>":
                value = resolve_pointer(doc, pointer)
                grown += [f"{pointer}/{i}" for i in range(len(value))] if isinstance(value, list) else []
            else:
                grown.append(f"{pointer}/{part}")
        pointers = grown
    return [p for p in pointers if resolve_pointer(doc, p) is not MISSING]


def concerns_entity(reader: CorpusReader, task: Task, graph: Graph, fact: Fact) -> bool:
    """Spec §5.2: an assertion on a common list must bear on an entry that concerns the task's start."""
    if fact.ressource in graph.proper or fact.ressource in graph.shared:
        return True
    parts = fact.champ.split("/")
    if len(parts) < 3 or parts[1] != "entrees":
        return False
    entry = resolve_pointer(reader.fetch(fact.ressource), f"/entrees/{parts[2]}")
    found = reader.track.collection_of(fact.ressource)
    if not isinstance(entry, dict) or found is None:
        return False
    for common in reader.track.graph.common:
        if common.collection != found.name:
            continue
        if common.all_entries:
            return True
        if common.entry_field is not None and common.equals is not None:
            return entry.get(common.entry_field) == task.field(common.equals)
        return (common.collection, tuple(entry.get(n) for n in common.names)) in graph.names
    return False


def probant_facts(reader: CorpusReader, task: Task, graph: Graph) -> tuple[set[Fact], set[Fact]]:
    """Distinct probant facts an assertion may bear on: (proper ones, admissible common-list ones)."""
    proper: set[Fact] = set()
    common: set[Fact] = set()
    for path in sorted(graph.paths):
        found = reader.track.collection_of(path)
        if found is None:
            continue
        doc = reader.fetch(path)
        for pattern in found.probant:
            for pointer in _expand(doc, pattern):
                value = resolve_pointer(doc, pointer)
                fact = Fact(path, pointer, value if not isinstance(value, list | dict) else _frozen(value))
                if path in graph.proper:
                    proper.add(fact)
                elif path in graph.shared or concerns_entity(reader, task, graph, fact):
                    common.add(fact)
    return proper, common


def _frozen(value: object) -> object:
    """Hashable stand-in for an array or object value (only its identity as a fact matters here)."""
    return json.dumps(value, sort_keys=True)
