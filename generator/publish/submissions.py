"""The season service's submissions: ``{"recu_le": "<UTC time>", "soumission": {spec §4}}`` files anywhere
below one folder, each routed to its participant by its ``agent_did``.

Only what routing needs is checked here: the envelope, the time it was received, and the submission's
``season``, ``track``, ``task_id`` and ``agent_did``. Everything else is the scorer's to judge: a
submission the schema refuses is rejected at entry by ``corpus score`` (spec §4), and so is one whose JSON
has a defect (a key written twice...), kept as :class:`FormatDefects` exactly as ``corpus score`` keeps it.
A submission of another season or track, or of a DID nobody registered, is one line naming its file.

How many files the folder may hold follows the registrations (:class:`FileBound`): each registration may
submit each task :data:`SUBMISSIONS_PER_TASK` times (the first and its replacements), and a folder holding
more is refused before any is read, its message saying the bound and why. A season's close reads each file
twice: once to route it (:func:`route_submissions`, on every core), and the kept ones again when their
participant is scored, so that no submission is held in memory longer than its participant's turn.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import NoReturn

from generator.base.bounded_read import kind_of
from generator.base.jsonvalue import JsonValue
from generator.base.text_policy import cut
from generator.publish.files import IndexInputError, read_json, utc_time
from generator.score.entry import FormatDefects

ENVELOPE = ("recu_le", "soumission")
ROUTING = ("season", "track", "task_id", "agent_did")
SUBMISSIONS_PER_TASK = 20  # a registration's submissions of one task: the first and 19 replacements


@dataclass(frozen=True)
class FileBound:
    """How many files below the submissions folder a season may hold: every registration submitting every task
    :data:`SUBMISSIONS_PER_TASK` times (the registrations merged into another included: they submitted too)."""

    registrations: int
    tasks: int
    per_task: int = SUBMISSIONS_PER_TASK

    @property
    def limit(self) -> int:
        return self.registrations * self.tasks * self.per_task

    def refusal(self, folder: Path) -> str:
        return (f"{folder}: more than {self.limit:,} files below it: the season's {self.registrations:,} "
                f"registration(s) × {self.tasks} task(s) × {self.per_task} submissions of a task at most (the "
                "first and its replacements); a file beyond that is none of the season service's records")


@dataclass(frozen=True)
class Received:
    """One submission as the season service recorded it."""

    path: Path
    fichier: str  # relative to the submissions folder, POSIX: what the pages show
    recu_le: datetime
    recu_le_texte: str
    soumission: JsonValue  # the §4 object, or FormatDefects; None when read to route it only
    did: str
    task_id: str

    @property
    def narrative(self) -> str | None:
        text = self.soumission.get("narrative") if isinstance(self.soumission, dict) else None
        return text if isinstance(text, str) else None


def submission_files(folder: Path, bound: FileBound | None) -> list[Path]:
    """Every ``*.json`` file below ``folder``, in path order; any other entry (a FIFO, a link, ``x.txt``) is
    named as an error, never skipped: skipping it would drop a participant's answer without a word. More files
    than ``bound`` allows are refused as soon as they are counted (None: a command given no registrations, which
    reads the records one at a time, lists them all)."""
    if not folder.is_dir():
        raise IndexInputError(f"{folder}: not a folder (--submissions: the folder of the season's submissions)")
    files: list[Path] = []
    pending = [os.fspath(folder)]  # folders still to list, the next on top: path order, as os.walk goes
    while pending:
        top = pending.pop()
        try:
            with os.scandir(top) as found:
                entries = sorted(found, key=lambda entry: entry.name)
        except OSError as exc:
            _walk_error(exc)
        folders = []
        for entry in entries:  # the kind from the folder's listing: no system call per record (120,000 at 10^4)
            if entry.is_dir(follow_symlinks=False):
                folders.append(entry.path)
                continue
            if not (entry.name.endswith(".json") and entry.is_file(follow_symlinks=False)):
                mode = entry.stat(follow_symlinks=False).st_mode
                what = "not a *.json file" if stat.S_ISREG(mode) else kind_of(mode)
                raise IndexInputError(f"{Path(entry.path)}: {what}: the submissions folder holds the season "
                                      "service's *.json records only, and sub-folders of them")
            files.append(Path(entry.path))
            if bound is not None and len(files) > bound.limit:
                raise IndexInputError(bound.refusal(folder))
        pending += reversed(folders)
    return files


def _walk_error(exc: OSError) -> NoReturn:
    raise IndexInputError(f"{exc.filename}: cannot read the folder: {exc.strerror}")


def _soumission(path: Path, value: dict[str, JsonValue], defects: list[str]) -> JsonValue:
    """The submission, or FormatDefects for defects inside it; a defect elsewhere is the envelope's."""
    inside = [d.removeprefix("/soumission") for d in defects if d.startswith("/soumission/")]
    if len(inside) < len(defects):
        raise IndexInputError(f"{path}: {next(d for d in defects if not d.startswith('/soumission/'))}")
    soumission = value["soumission"]
    if not inside:
        return soumission
    if any(d.startswith(f"/{name}:") for d in inside for name in ROUTING) \
            or set(ROUTING) & set(getattr(soumission, "repeated", ())):
        raise IndexInputError(f"{path}: /soumission{inside[0]}")
    task_id = soumission.get("task_id") if isinstance(soumission, dict) else None
    return FormatDefects(inside, task_id if isinstance(task_id, str) else None)


def read_received(path: Path, folder: Path, saison: int, piste: str) -> Received:
    value, defects = read_json(path)
    if not isinstance(value, dict) or set(value) != set(ENVELOPE):
        raise IndexInputError(f"{path}: expected the season service's record {{\"recu_le\": \"<UTC time>\", "
                              "\"soumission\": {the submission, spec §4}}, and nothing else")
    recu_le = value["recu_le"]
    when = utc_time(recu_le)
    if when is None or not isinstance(recu_le, str):
        raise IndexInputError(f"{path}: /recu_le: expected a UTC time YYYY-MM-DDTHH:MM:SSZ, got "
                              f"{cut(value['recu_le'])}")
    sub = value["soumission"]
    if not isinstance(sub, dict):
        raise IndexInputError(f"{path}: /soumission: expected the submission, a JSON object (spec §4)")
    for name in ROUTING:
        wanted = int if name == "season" else str
        if type(sub.get(name)) is not wanted:
            raise IndexInputError(f"{path}: /soumission/{name}: missing or not a "
                                  f"{'number' if wanted is int else 'string'}: the season service records no "
                                  "submission without it")
    if sub["season"] != saison:
        raise IndexInputError(f"{path}: /soumission/season: {sub['season']}, not season {saison} being published")
    if sub["track"] != piste:
        raise IndexInputError(f"{path}: /soumission/track: {cut(sub['track'])}, not the track {piste} being "
                              "published: each track has an index of its own (spec §6.6)")
    did, task_id = sub["agent_did"], sub["task_id"]  # strings: ROUTING's types are checked above
    return Received(path, path.relative_to(folder).as_posix(), when, recu_le, _soumission(path, value, defects),
                    str(did), str(task_id))


def _registered(received: Received, registered: set[str] | frozenset[str]) -> Received:
    if received.did not in registered:
        raise IndexInputError(f"{received.path}: /soumission/agent_did: {received.did} is not registered for the "
                              "season: the season service records no submission of an unregistered DID")
    return received


Route = tuple[str, datetime, str, str, str]  # fichier, recu_le, its text, did, task_id: what crosses processes
Mapper = Callable[[Callable[[int], Route], int], Iterator[Route]]


def route_submissions(folder: Path, saison: int, piste: str, registered: frozenset[str], bound: FileBound,
                      mapped: Mapper) -> list[Received]:
    """Every submission below ``folder``, each of a registered DID, of this season and track, then let go
    (``soumission`` None): what routing needs, every check made. ``mapped(work, count)`` runs
    ``work(0..count-1)`` in order (on several processes: :func:`generator.publish.parallel.ordered_map`)."""
    files = submission_files(folder, bound)

    def route(position: int) -> Route:
        r = _registered(read_received(files[position], folder, saison, piste), registered)
        return r.fichier, r.recu_le, r.recu_le_texte, r.did, r.task_id

    return [Received(files[n], fichier, recu_le, texte, None, did, task_id)
            for n, (fichier, recu_le, texte, did, task_id) in enumerate(mapped(route, len(files)))]
