"""The season's sources: public task statements (``taches.yaml``) and the sealed key (``cle.yaml``).

Loaded with the corpus's strict YAML loader and checked against their JSON Schemas, so an author's
mistake is reported as ``file:line:column: field: message`` like any corpus error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.base.errors import CorpusError, Location, Problem
from generator.base.text_policy import cut
from generator.documents.records import Record, read_record
from generator.documents.schema_checks import check_dates, check_schema
from generator.documents.yamlstrict import location_of
from generator.reading.reader import Fact
from generator.reading.task import Task
from generator.tracks.model import Track

TASKS_FILE = "taches.yaml"
KEY_FILE = "cle.yaml"


@dataclass(frozen=True)
class Statement:
    """A public task statement (spec §5.5): what participants receive."""

    task: Task
    question: str
    minimum: int
    plafond: int
    location: Location
    index: int = 0  # the task's place in taches, and where each of its fields is written: for messages
    fields_at: tuple[tuple[str, Location], ...] = ()

    def field_location(self, name: str) -> Location:
        return dict(self.fields_at).get(name, self.location)


@dataclass(frozen=True)
class KeyFact:
    """A founding fact of the key and its equivalent forms (any one of them founds the verdict)."""

    fact: Fact
    equivalents: tuple[Fact, ...]
    location: Location
    critere: str = ""

    @property
    def forms(self) -> tuple[Fact, ...]:
        return (self.fact, *self.equivalents)


@dataclass(frozen=True)
class KeyEntry:
    task_id: str
    famille: str
    verdict: str
    piege: str
    raccourci: str | None
    faits: tuple[KeyFact, ...]
    location: Location
    fonde_par: str = "tous"  # "un_critere": the facts of any one deciding criterion found the verdict


@dataclass(frozen=True)
class Season:
    saison: str
    statements: tuple[Statement, ...]
    key: dict[str, KeyEntry]
    raw_tasks: Any
    raw_key: Any


def _load(root: Path, name: str, kind: str, problems: list[Problem], track: Track) -> Record | None:
    record = read_record(root, name, kind, problems)
    if record is None:
        return None
    record.schemas = track.schemas
    found = check_schema(record) + check_dates(record)
    problems += found
    return None if found else record


MAX_COUNT_DIGITS = 4  # an assertion bound is a small count; int() of 5,001 digits would raise, not report


def _check_counts(tasks: Record, problems: list[Problem]) -> None:
    """Assertion bounds are decimal counts of at most :data:`MAX_COUNT_DIGITS` digits (the schema says decimal)."""
    for index, task in enumerate(tasks.data["taches"]):
        for name in ("minimum", "plafond"):
            value = task["assertions"][name]
            if len(value) > MAX_COUNT_DIGITS:
                problems.append(Problem(location_of(task["assertions"], name, tasks.file),
                                        f"taches[{index}].assertions.{name}", f"{cut(value)} is not a count of "
                                        f"at most {MAX_COUNT_DIGITS} digits"))


def _check_starts(tasks: Record, track: Track, problems: list[Problem]) -> None:
    """A task's start (conformité: its ``entite``) is a path of the start collection: known without the
    corpus, so ``build-season`` refuses it too."""
    field, collection = track.graph.start, track.graph.start_collection
    if field is None or collection is None:  # no start document: the common lists open the graph
        return
    for index, task in enumerate(tasks.data["taches"]):
        path = task[field]
        if not track.collection(collection).matches(path):
            problems.append(Problem(location_of(task, field, tasks.file), f"taches[{index}].{field}",
                                    not_a_start(track, path)))


def not_a_start(track: Track, path: str) -> str:
    """The message for a task whose start is outside the start collection (also said by ``check_task``)."""
    assert track.graph.start_collection is not None
    start = track.collection(track.graph.start_collection)
    article = "an" if start.label[:1] in "aeiou" else "a"
    return f"{cut(path)} is not {article} {start.label} path (one is written like {start.example}): write the " \
        f"path of the {start.label} the task is about"


def _fact(data: dict[str, Any]) -> Fact:
    value = data["valeur"]
    # A whole-array form (a link field) is compared with the served JSON array: a plain list.
    return Fact(data["ressource"], data["champ"], list(value) if isinstance(value, list | tuple) else value)


def load_season(root: Path, track: Track) -> Season:
    """Load ``root/taches.yaml`` and ``root/cle.yaml``; raise :class:`CorpusError` listing every problem."""
    problems: list[Problem] = []
    tasks = _load(root, TASKS_FILE, "taches", problems, track)
    key = _load(root, KEY_FILE, "cle", problems, track)
    if tasks is not None:
        _check_counts(tasks, problems)
        _check_starts(tasks, track, problems)
    if tasks is not None and key is not None and tasks.data["saison"] != key.data["saison"]:
        problems.append(Problem(location_of(key.data, "saison", key.file), "saison", f"the key is for season "
                                f"{key.data['saison']} but {tasks.file} states season {tasks.data['saison']}"))
    if tasks is None or key is None or problems:
        raise CorpusError(problems)
    statements = tuple(
        Statement(Task(t["id"], tuple((name, t[name]) for name in track.statement_fields)), t["question"],
                  int(t["assertions"]["minimum"]), int(t["assertions"]["plafond"]),
                  location_of(tasks.data["taches"], i, tasks.file), i,
                  tuple((name, location_of(t, name, tasks.file)) for name in track.statement_fields))
        for i, t in enumerate(tasks.data["taches"]))
    entries = {}
    for task_id, entry in key.data["taches"].items():
        faits = tuple(KeyFact(_fact(f), tuple(_fact(e) for e in f.get("formes_equivalentes", [])),
                              location_of(entry["faits"], i, key.file), f["critere"])
                      for i, f in enumerate(entry["faits"]))
        entries[task_id] = KeyEntry(task_id, entry["famille"], entry["verdict"], entry["piege"],
                                    entry.get("raccourci"), faits, location_of(key.data["taches"], task_id,
                                                                               key.file),
                                    entry.get("fonde_par", "tous"))
    return Season(tasks.data["saison"], statements, entries, tasks.data, key.data)
