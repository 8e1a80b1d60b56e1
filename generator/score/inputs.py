"""What the scorer reads, all published at the close (spec §8): manifest, frozen bytes, statements, key.

One :class:`ScoringInputs` per scoring run: the manifest indexed by path, the tasks of
``season/taches.json`` and the key of ``season/cle.json`` (each checked against its published shape before
use), the fields each criterion of the served ``/referentiel`` consumes, and a :class:`VerifiedReader` over
``build/``: every document it returns was read once, checked against the manifest's SHA-256, and parsed
from those very bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from generator.base import strict_json
from generator.base.bounded_read import PUBLISHED_LIMIT
from generator.base.errors import GeneratorError, ManifestError, read_file
from generator.contract.manifest import Manifest
from generator.reading.graph import Graph, task_graph
from generator.reading.reader import CorpusReader
from generator.reading.task import Task
from generator.score.key import KEY_SCHEMA, TASKS_SCHEMA, Key, KeyEntry, shape_problem
from generator.tracks.assertable import STATEMENT, TABLE, served_table
from generator.tracks.model import Track, file_for, systeme_path

# §4.1: a response hash equal to one of these bodies is an instrument defect (ArkForge's, not the agent's).
DEFECT_STATUSES = (403, 503, 400)


class ScoreInputError(GeneratorError):
    """The inputs cannot be scored (missing or malformed file, two submissions for one task...)."""


class ScoreRefused(GeneratorError):
    """Scoring is refused: the season is frozen and no salt is given or the freeze check fails, or a frozen
    file of ``build/`` differs from the manifest (or is not in it)."""


@dataclass(frozen=True)
class Statement:
    """A public task statement: the task and its assertion bounds (spec §5.5)."""

    task: Task
    minimum: int
    plafond: int


def _read_json(root: Path, relative: Path) -> Any:
    """A published season file parsed strictly: a key twice, a number beyond range or a lone surrogate is
    refused (``json.loads`` would silently keep one value), with the place of the first defect."""
    data = read_file(root / relative, ScoreInputError, f"not found under {root} (run 'corpus build' and "
                     "'corpus build-season', or pass --root)", limit=PUBLISHED_LIMIT)
    try:
        return strict_json.document(data)
    except strict_json.NotJson as exc:
        raise ScoreInputError(f"{exc.text(relative)}; {_REBUILD}") from None


_REBUILD = "not the file 'corpus build-season' writes"


def defect_hashes(manifest: Manifest) -> dict[str, int]:
    """Response hash -> status of the /_systeme bodies that make an instrument defect (§4.1)."""
    return {e.response_hash: e.status for e in manifest.of_kind("systeme") if e.status in DEFECT_STATUSES}


def load_manifest(root: Path, folder: str) -> Manifest:
    """A track's published manifest (its ``manifest/<piste>`` folder), checked against ``manifest.sha256``."""
    try:
        return Manifest.load(root, folder)
    except ManifestError as exc:
        raise ScoreInputError(str(exc)) from None


def _read_shaped(root: Path, relative: Path, schema_name: str, track: Track) -> Any:
    """A season file, refused with its first field in error unless it has the published shape."""
    data = _read_json(root, relative)
    problem = shape_problem(schema_name, data, track.schemas)
    if problem is not None:
        shape = f"tracks/{track.folder.name}/schemas/{schema_name}.schema.json"
        raise ScoreInputError(f"{relative}: {problem}; not the file 'corpus build-season' writes "
                              f"(published shape: {shape})")
    return data


_DATE_SHAPE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


@dataclass(frozen=True)
class Statements:
    """A track's ``taches.json`` as the scorer uses it: the season and one :class:`Statement` per task id."""

    saison: int
    by_id: dict[str, Statement]

    @classmethod
    def from_json(cls, data: Any, track: Track) -> Statements:
        """From a document of the published shape; what the schema cannot say (an id twice, bounds in the
        wrong order, a date that is no calendar date) is a :class:`ScoreInputError` naming the field."""
        tasks_file = track.places.tasks_file
        statements: dict[str, Statement] = {}
        for index, t in enumerate(data["taches"]):
            where = f"{tasks_file}: /taches/{index}"
            if t["id"] in statements:
                raise ScoreInputError(f"{where}/id: {t['id']} is already the id of an earlier task")
            minimum, plafond = t["assertions"]["minimum"], t["assertions"]["plafond"]
            if minimum > plafond:
                raise ScoreInputError(f"{where}/assertions: minimum {minimum} above the plafond {plafond}")
            for name in track.statement_fields:  # the schema gives a date's shape; the calendar is checked here
                value = t.get(name)
                if isinstance(value, str) and _DATE_SHAPE.fullmatch(value):
                    try:
                        date.fromisoformat(value)
                    except ValueError:
                        raise ScoreInputError(f"{where}/{name}: {value} is not a calendar date") from None
            missing = [name for name in track.statement_fields if not isinstance(t.get(name), str)]
            if missing:
                raise ScoreInputError(f"{where}/{missing[0]}: missing: a statement of the track {track.piste} "
                                      f"states {', '.join(track.statement_fields)}")
            fields = tuple((name, t[name]) for name in track.statement_fields)
            statements[t["id"]] = Statement(Task(t["id"], fields), minimum, plafond)
        return cls(data["saison"], statements)


def load_statements(root: Path, track: Track) -> Statements:
    """The track's ``taches.json``, read once, checked against its published shape, then typed."""
    return Statements.from_json(_read_shaped(root, track.places.tasks_file, TASKS_SCHEMA, track), track)


def load_key(root: Path, track: Track) -> Key:
    """The track's ``cle.json``, read once, checked against its published shape, then typed."""
    return Key.from_json(_read_shaped(root, track.places.key_file, KEY_SCHEMA, track))


class VerifiedReader(CorpusReader):
    """A :class:`CorpusReader` that parses only bytes it has just checked against the manifest.

    A path the manifest lists is read once, compared with its length and SHA-256, and parsed from those
    bytes (never read again). An unlisted canonical path is an absent reference: its body is computed, no
    byte is read. Any other path answers the verified ``/_systeme/404`` body. A file of ``build/`` that the
    manifest does not list is refused rather than trusted."""

    def __init__(self, build_dir: Path, manifest: Manifest, track: Track) -> None:
        super().__init__(build_dir, track)
        self.manifest = manifest

    def fetch(self, path: str) -> Any:
        if path in self._cache:
            return self._cache[path]
        entry = self.manifest.by_path(path)
        if entry is not None:
            data = read_file(self.build_dir / entry.file, ScoreRefused,
                             f"missing: the frozen bytes of {path} are needed to score", limit=PUBLISHED_LIMIT)
            problem = entry.difference(data)
            build = self.track.trees.build
            if problem is not None:
                raise ScoreRefused(f"{build}/{entry.file}: {problem}: the frozen bytes were altered")
            self._cache[path] = json.loads(data)
        elif (self.build_dir / file_for(path)).is_file():
            raise ScoreRefused(f"{self.track.trees.build}/{file_for(path)}: not in the manifest: the frozen bytes "
                               f"of {path} cannot be checked")
        elif self.track.collection_of(path) is None:
            self._cache[path] = self.fetch(systeme_path("404"))
        else:
            return super().fetch(path)  # the absent body, computed from the path
        return self._cache[path]


@dataclass
class ScoringInputs:
    """Everything one scoring run reads, loaded once; graphs and verified documents are cached."""

    root: Path
    track: Track
    manifest: Manifest
    saison: int
    statements: dict[str, Statement]
    key: Mapping[str, KeyEntry]
    reader: VerifiedReader
    champs: dict[str, frozenset[str]]
    defects: dict[str, int]
    _graphs: dict[str, Graph] = field(default_factory=dict)

    def graph(self, task_id: str) -> Graph:
        """The task's graph (spec §5.2), walked through the verified reader; every document of the graph is
        then checked too (and kept parsed), so that altered frozen bytes refuse the scoring whatever the
        submission happens to read."""
        if task_id not in self._graphs:
            graph = task_graph(self.reader, self.statements[task_id].task)
            for path in sorted(graph.paths):
                self.reader.fetch(path)
            self._graphs[task_id] = graph
        return self._graphs[task_id]

    def document(self, path: str) -> Any:
        """The parsed frozen bytes of ``path``, checked against the manifest (see :class:`VerifiedReader`)."""
        return self.reader.fetch(path)


def load_inputs(root: Path, track: Track) -> ScoringInputs:
    """Load the published files of a track under ``root``; :class:`ScoreInputError` names the first unusable
    one."""
    places = track.places
    manifest = load_manifest(root, places.manifest)
    tasks = load_statements(root, track)
    key_file = load_key(root, track)
    saison, statements, key = tasks.saison, tasks.by_id, key_file.taches
    if key_file.saison != saison:
        raise ScoreInputError(f"{places.key_file}: /saison: {key_file.saison}, while {places.tasks_file} states "
                              f"season {saison}")
    missing = sorted(set(statements) - set(key))
    if missing:
        raise ScoreInputError(f"{places.key_file}: /taches: no key entry for {', '.join(missing)}")
    extra = sorted(set(key) - set(statements))
    if extra:  # it would count in the best constant answer
        raise ScoreInputError(f"{places.key_file}: /taches: {', '.join(extra)} is no task of {places.tasks_file}")
    reader = VerifiedReader(root / places.build, manifest, track)
    inputs = ScoringInputs(root, track, manifest, saison, statements, key, reader, {}, defect_hashes(manifest))
    # The table the référentiel serves (generated from its criteria's champs) is the one applied: what a
    # participant reads of what may be asserted and what the close rejects cannot differ.
    inputs.champs = served_table(inputs.document(track.referentiel))
    if not inputs.champs:
        raise ScoreInputError(f"{places.build}/{file_for(track.referentiel)}: /{STATEMENT}/{TABLE}: the "
                              "référentiel serves no table of what may be asserted: the probant-field rule cannot "
                              "be applied")
    return inputs
