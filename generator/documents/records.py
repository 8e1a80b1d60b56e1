"""A document an author writes, read strictly: one YAML file holding a mapping, kept as a :class:`Record`
that remembers where each value was written, so that every later check names file, line and field.

Shared by whatever reads an author's YAML: a track's sources (:mod:`generator.compiler.sources`), its
``track.yaml`` (:mod:`generator.tracks.loader`) and its season's sources (:mod:`generator.reading.season_model`).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from generator.base import bounded_read
from generator.base.errors import Location, Problem, Severity
from generator.base.output_places import SOURCE_KINDS
from generator.base.text_policy import MAX_FILE_BYTES
from generator.documents.yamlstrict import YamlProblem, load_noting_days, location_of


@dataclass
class Record:
    """One source object: its data, the file it lives in, and what it is."""

    kind: str  # a collection name ("entites", "agrements"...) or a fixed file's ("corpus", "systeme")
    data: Any
    file: str
    where: str = ""  # field prefix inside the file, e.g. "agrements[2]"
    owner: str | None = None  # id of the owner record of the file (an entity file), for its records
    schema: str = ""  # the schema name, when it is not the kind
    schemas: Path | None = None  # the track's schemas folder (None: the engine's schemas)
    # The loader met no false day in the record's file (every mapping value shaped like a date is a day that
    # exists): the date check has nothing to look for (False: it looks).
    days_checked: bool = False

    @property
    def schema_name(self) -> str:
        return self.schema or self.kind

    def location(self, key: str | int | None = None) -> Location:
        return location_of(self.data, key, self.file)

    def field_name(self, suffix: str = "") -> str:
        return ".".join(part for part in (self.where, suffix) if part)


def read_bounded(path: Path) -> bytes:
    """The bytes of a source file, at most one byte past the loader's limit (the loader words the size).

    :func:`generator.base.bounded_read.read_bounded` without following a symbolic link: a source is a regular
    file inside the source folder. Raises :class:`OSError` with a message fit for an author.
    """
    try:
        return bounded_read.read_bounded(path, MAX_FILE_BYTES, follow_symlinks=False, refuse_larger=False)
    except bounded_read.ReadRefused:
        raise OSError(0, "not a regular file (a folder, FIFO, socket or device): remove it") from None
    except OSError as exc:
        if path.is_symlink():
            raise OSError(exc.errno, "a symbolic link: sources must be regular files inside the source "
                          "folder (copy the file instead of linking it)") from None
        raise


@functools.lru_cache(maxsize=64)
def named_from(root: Path) -> Path:
    """The folder messages name a source file from: the checkout, so that a file is named as the author
    finds it (``corpus_src/generique/...``: ROOT/<kind>/<piste>, docs/tracks.md); a lone source folder
    from its parent."""
    if root.parent.name in SOURCE_KINDS:
        return root.parent.parent
    return root.parent


class Loaded(NamedTuple):
    """One source file as :func:`read_yaml` reads it."""

    name: str  # as messages name it (from the checkout)
    data: object
    days_checked: bool  # no false day in it (:attr:`Record.days_checked`)


def shown_name(root: Path, path: Path) -> str:
    """How messages name a file under ``root`` (:func:`named_from`): by string when ``path`` is written under it,
    as a folder's listing gives it (pathlib's ``relative_to`` costs more than reading a small file)."""
    base = os.fspath(named_from(root))
    text = os.fspath(path)
    if os.sep == "/" and text.startswith(base) and text[len(base):len(base) + 1] == "/" and base != "/":
        return text[len(base) + 1:]
    return path.relative_to(named_from(root)).as_posix()


def read_yaml(root: Path, path: Path, problems: list[Problem]) -> Loaded | None:
    name = shown_name(root, path)
    try:
        data, false_day = load_noting_days(read_bounded(path), name)
        return Loaded(name, data, not false_day)
    except YamlProblem as exc:
        problems.append(exc.problem)
    except OSError as exc:
        problems.append(Problem(Location(name), "", f"cannot read: {exc.strerror}"))
    return None


def read_record(root: Path, relative: str, kind: str, problems: list[Problem],
                required: bool = True) -> Record | None:
    """Load one YAML file holding a mapping (corpus or season source); problems are collected."""
    path = root / relative
    if not os.path.lexists(path):
        if required:
            name = (root / relative).relative_to(named_from(root)).as_posix()
            problems.append(Problem(Location(name), "", "required file is missing"))
        return None
    loaded = read_yaml(root, path, problems)
    if loaded is None:
        return None
    name, data, days_checked = loaded
    if not isinstance(data, dict):
        problems.append(Problem(location_of(data, None, name), "", "the file must hold a mapping"))
        return None
    return Record(kind, data, name, days_checked=days_checked)


def error_at(record: Record, key: str | int | None, fieldname: str, message: str,
                 container: object = None, severity: Severity = Severity.ERROR) -> Problem:
    """A problem at ``key`` of ``container`` (the record's mapping by default), named by the record's field."""
    location = location_of(record.data if container is None else container, key, record.file)
    return Problem(location, record.field_name(fieldname), message, severity)
