"""Read ``corpus_src/`` into records that remember where each value was written.

Layout (see docs/authoring.md): ``corpus.yaml``, ``referentiel.yaml``, ``systeme.yaml``, ``absents.yaml``,
``entites/<ENT-id>.yaml`` (an entity with everything proper to it), ``listes/agrees/<activite>.yaml`` and
``listes/mesures-restrictives.yaml``. Loading does no validation beyond the YAML itself: problems are
collected so that one run reports them all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.base import bounded_read
from generator.base.errors import Location, Problem, Severity
from generator.base.text_policy import MAX_FILE_BYTES
from generator.compiler.yamlstrict import LocatedDict, YamlProblem, load_text, location_of

ENTITY_FILE_KEYS = ("entite", "agrements", "attestations", "avenants", "beneficiaires")


@dataclass
class Record:
    """One source object: its data, the file it lives in, and what it is."""

    kind: str  # a schema name: "entites", "agrements", ..., "corpus", "systeme"
    data: Any
    file: str
    where: str = ""  # field prefix inside the file, e.g. "agrements[2]"
    owner: str | None = None  # entity id of an entity file, for proper records

    def location(self, key: str | int | None = None) -> Location:
        return location_of(self.data, key, self.file)

    def field_name(self, suffix: str = "") -> str:
        return ".".join(part for part in (self.where, suffix) if part)


@dataclass
class Sources:
    """Everything read from ``corpus_src/``, in a stable order (files sorted by name)."""

    root: Path
    corpus: Record | None = None
    referentiel: Record | None = None
    systeme: Record | None = None
    absents: Record | None = None
    records: dict[str, list[Record]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def of(self, kind: str) -> list[Record]:
        return self.records.get(kind, [])

    def add(self, record: Record) -> None:
        self.records.setdefault(record.kind, []).append(record)


# Files an editor or the system leaves beside sources: ignored by name, with a warning saying so.
_LOCK_PREFIXES = (".#",)  # Emacs lock files (.#ENT-1066.yaml), often dangling symbolic links
_BACKUP_SUFFIXES = ("~", ".swp", ".swo", ".swx", ".bak", ".orig", ".rej", ".tmp")
_SYSTEM_NAMES = (".DS_Store", "Thumbs.db", "desktop.ini", ".gitkeep", ".gitignore")

# The layout of corpus_src/ (docs/authoring.md): the files and folders each folder may hold.
_TOP_FILES = ("corpus.yaml", "referentiel.yaml", "systeme.yaml", "absents.yaml")
_LAYOUT: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {  # folder -> (fixed files, sub-folders)
    "": (_TOP_FILES, ("entites", "listes")),
    "listes": (("mesures-restrictives.yaml",), ("agrees",)),
    "entites": ((), ()),  # any <ENT-id>.yaml
    "listes/agrees": ((), ()),  # any <activite>.yaml
}
_ANY_YAML = ("entites", "listes/agrees")


def ignored_reason(name: str) -> str | None:
    """Why a file name is ignored (an editor's lock or backup, a system file), or None for a real file."""
    if name.startswith(_LOCK_PREFIXES) or (name.startswith("#") and name.endswith("#")):
        return "an editor lock or autosave file"
    if name.endswith(_BACKUP_SUFFIXES):
        return "an editor backup or swap file"
    if name in _SYSTEM_NAMES:
        return "a system file, not a source"
    return None


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


def _read(root: Path, path: Path, problems: list[Problem]) -> tuple[str, Any] | None:
    name = path.relative_to(root.parent).as_posix()
    try:
        return name, load_text(read_bounded(path), name)
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
            name = (Path(root.name) / relative).as_posix()
            problems.append(Problem(Location(name), "", "required file is missing"))
        return None
    loaded = _read(root, path, problems)
    if loaded is None:
        return None
    name, data = loaded
    if not isinstance(data, dict):
        problems.append(Problem(location_of(data, None, name), "", "the file must hold a mapping"))
        return None
    return Record(kind, data, name)


def survey(root: Path, problems: list[Problem]) -> dict[str, list[Path]]:
    """The ``*.yaml`` files of ``entites/`` and ``listes/agrees/``, sorted by name; every other entry named.

    Nothing under the source folder is skipped silently: an editor's lock or backup file is ignored with
    a warning; a ``.yml`` or ``.YAML`` file, an unknown file, a sub-folder, a symbolic link or anything
    that is not a regular file is an error naming it.
    """
    found: dict[str, list[Path]] = {folder: [] for folder in _ANY_YAML}
    for folder, (files, folders) in _LAYOUT.items():
        where = root / folder if folder else root
        if folder and any((root / part).is_symlink() for part in _prefixes(folder)):
            continue  # a linked folder: its parent's survey names the link, nothing is read through it
        try:
            entries = sorted(os.scandir(where), key=lambda entry: entry.name)
        except FileNotFoundError:
            continue
        except OSError as exc:
            problems.append(Problem(Location(_shown(root, where)), "", f"cannot read: {exc.strerror}"))
            continue
        for entry in entries:
            path = Path(entry.path)
            reason = ignored_reason(entry.name)
            if reason is not None:
                problems.append(Problem(Location(_shown(root, path)), "", f"ignored: {reason}",
                                        Severity.WARNING))
            elif entry.name in files or (entry.name in folders and entry.is_dir(follow_symlinks=False)):
                continue  # read where the layout says (a symbolic link there is refused by read_bounded)
            elif folder in _ANY_YAML and entry.name.endswith(".yaml") and not entry.is_symlink() \
                    and entry.is_file(follow_symlinks=False):
                found[folder].append(path)
            else:
                problems.append(Problem(Location(_shown(root, path)), "", _unexpected(entry, folder, files)))
    return found


def _prefixes(folder: str) -> list[str]:
    """``listes/agrees`` -> ``["listes", "listes/agrees"]``."""
    parts = folder.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _shown(root: Path, path: Path) -> str:
    return path.relative_to(root.parent).as_posix()


def _unexpected(entry: os.DirEntry, folder: str, files: tuple[str, ...]) -> str:
    """Why an entry of the source folder is not read, worded for the author."""
    if entry.is_symlink():
        return ("a symbolic link: sources must be regular files inside the source folder (copy the file "
                "instead of linking it)")
    if entry.is_dir(follow_symlinks=False):
        return f"sub-folder not read: {folder or 'the source folder'} has no sub-folders (see docs/authoring.md)"
    if not entry.is_file(follow_symlinks=False):
        return "not a regular file (a FIFO, socket or device): remove it"
    stem, dot, extension = entry.name.rpartition(".")
    if dot and extension.lower() in ("yaml", "yml") and (folder in _ANY_YAML or f"{stem}.yaml" in files):
        return f"not read: sources end in '.yaml' (lowercase): rename it {stem}.yaml"
    expected = "<name>.yaml files only" if folder in _ANY_YAML else ", ".join(files)
    return f"unknown file, not read (this folder holds {expected})"


def _single(sources: Sources, relative: str, kind: str, required: bool = True) -> Record | None:
    return read_record(sources.root, relative, kind, sources.problems, required)


def _entity_file(sources: Sources, path: Path) -> None:
    loaded = _read(sources.root, path, sources.problems)
    if loaded is None:
        return
    name, data = loaded
    if not isinstance(data, LocatedDict):
        sources.problems.append(Problem(location_of(data, None, name), "", "an entity file holds a mapping "
                                        f"with the keys {', '.join(ENTITY_FILE_KEYS)}"))
        return
    for key in data:
        if key not in ENTITY_FILE_KEYS:
            sources.problems.append(Problem(location_of(data, key, name), key,
                                            f"unknown section; expected one of {', '.join(ENTITY_FILE_KEYS)}"))
    entite = data.get("entite")
    if not isinstance(entite, dict):
        sources.problems.append(Problem(location_of(data, "entite", name), "entite",
                                        "an entity file needs an 'entite' mapping"))
        return
    owner = entite.get("id") if isinstance(entite.get("id"), str) else None
    sources.add(Record("entites", entite, name, "entite", owner))
    for section in ("agrements", "attestations", "avenants"):
        items = data.get(section)
        if items is None:
            continue
        if not isinstance(items, list):
            sources.problems.append(Problem(location_of(data, section, name), section, "must be a list"))
            continue
        for index, item in enumerate(items):
            record = Record(section, item, name, f"{section}[{index}]", owner)
            if not isinstance(item, dict):
                sources.problems.append(Problem(location_of(items, index, name), record.where,
                                                "must be a mapping"))
                continue
            sources.add(record)
    beneficiaires = data.get("beneficiaires")
    if isinstance(beneficiaires, dict):
        sources.add(Record("beneficiaires", beneficiaires, name, "beneficiaires", owner))
    elif beneficiaires is not None:  # the validator reads pages from a mapping: stop here, not crash there
        sources.problems.append(Problem(location_of(data, "beneficiaires", name), "beneficiaires",
                                        "must be a mapping (statut_declaration, pages)"))


def load_sources(root: Path) -> Sources:
    """Load every source file under ``root``; YAML problems are collected, not raised."""
    sources = Sources(root=root)
    sources.corpus = _single(sources, "corpus.yaml", "corpus")
    sources.referentiel = _single(sources, "referentiel.yaml", "referentiel")
    sources.systeme = _single(sources, "systeme.yaml", "systeme")
    sources.absents = _single(sources, "absents.yaml", "absents", required=False)
    listed = survey(root, sources.problems)
    for path in listed["entites"]:
        _entity_file(sources, path)
    for path in listed["listes/agrees"]:
        record = _single(sources, path.relative_to(root).as_posix(), "listes-agrees")
        if record is not None:
            sources.add(record)
    mesures = _single(sources, "listes/mesures-restrictives.yaml", "mesures-restrictives")
    if mesures is not None:
        sources.add(mesures)
    return sources
