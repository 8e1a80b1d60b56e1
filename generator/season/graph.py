"""The graph of a task (spec §5.2) and the probant facts it offers, read from the built corpus."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from generator.season.evaluator import Task
from generator.season.reader import MISSING, CorpusReader, Fact, resolve_pointer
from generator.tracks import resource_types as col


@dataclass(frozen=True)
class Graph:
    """Resources of a task: those proper to the entity, and the pages of the common lists."""

    proper: frozenset[str]
    common: frozenset[str]
    beneficiaires: frozenset[tuple[Any, Any]]  # (nom, prénoms) of the entity's bénéficiaires effectifs

    def __contains__(self, path: str) -> bool:
        return path in self.proper or path in self.common


def _chain(reader: CorpusReader, first: Any) -> list[str]:
    pages: list[str] = []
    while isinstance(first, str) and first not in pages:
        pages.append(first)
        first = reader.fetch(first).get("page_suivante")
    return pages


def _listed(doc: Any, key: str) -> list[str]:
    items = doc.get(key) if isinstance(doc, dict) else None
    return [i for i in items if isinstance(i, str)] if isinstance(items, list) else []


def task_graph(reader: CorpusReader, task: Task) -> Graph:
    """The entity, its agréments, attestations and their avenants, its bénéficiaires pages; the pages of
    the liste des agréés of the activity and of the mesures restrictives list."""
    entity = reader.fetch(task.entite)
    pages = _chain(reader, entity.get("beneficiaires"))
    proper = {task.entite, *_listed(entity, "agrements"), *pages}
    names = frozenset((e.get("nom"), e.get("prenoms")) for page in pages
                      for e in reader.fetch(page).get("entrees", []) if isinstance(e, dict))
    for attestation in _listed(entity, "attestations"):
        proper.add(attestation)
        proper.update(_listed(reader.fetch(attestation), "avenants"))
    common = {*_chain(reader, col.liste_agrees_page_path(task.activite, "1")),
              *_chain(reader, col.mesures_page_path("1"))}
    return Graph(frozenset(proper), frozenset(common), names)


def _expand(doc: Any, pattern: str) -> list[str]:
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
    """Spec §5.2: an assertion on a common list must bear on an entry that concerns the entity."""
    if fact.ressource in graph.proper:
        return True
    parts = fact.champ.split("/")
    if len(parts) < 3 or parts[1] != "entrees":
        return False
    entry = resolve_pointer(reader.fetch(fact.ressource), f"/entrees/{parts[2]}")
    if not isinstance(entry, dict):
        return False
    if fact.ressource.startswith(col.LISTES_AGREES.prefix):
        return entry.get("entite") == task.entite
    return (entry.get("nom"), entry.get("prenoms")) in graph.beneficiaires


def probant_facts(reader: CorpusReader, task: Task, graph: Graph) -> tuple[set[Fact], set[Fact]]:
    """Distinct probant facts an assertion may bear on: (proper ones, admissible common-list ones)."""
    proper: set[Fact] = set()
    common: set[Fact] = set()
    for path in sorted(graph.proper | graph.common):
        found = col.collection_of(path)
        if found is None:
            continue
        doc = reader.fetch(path)
        for pattern in found.probant:
            for pointer in _expand(doc, pattern):
                value = resolve_pointer(doc, pointer)
                fact = Fact(path, pointer, value if not isinstance(value, list | dict) else _frozen(value))
                if path in graph.proper:
                    proper.add(fact)
                elif concerns_entity(reader, task, graph, fact):
                    common.add(fact)
    return proper, common


def _frozen(value: Any) -> Any:
    """Hashable stand-in for an array or object value (only its identity as a fact matters here)."""
    return json.dumps(value, sort_keys=True)
