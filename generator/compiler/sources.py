"""Read a track's source folder (``corpus_src/``) into records that remember where each value was written.

The layout is the track's (``track.yaml``, ``collections[].source``; docs/authoring.md for conformité):
four fixed files (``corpus.yaml``, ``referentiel.yaml``, ``systeme.yaml``, ``absents.yaml``), folders of
one file per owner record with a section per collection (``entites/<ENT-id>.yaml``), folders of one file
per named record (``listes/agrees/<activite>.yaml``) and fixed files (``listes/mesures-restrictives.yaml``).
Loading does no validation beyond the YAML itself: problems are collected so that one run reports them all.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from generator.base.errors import Location, Problem, Severity
from generator.documents.records import Record, named_from, read_record, read_yaml
from generator.documents.schemas import schema
from generator.documents.yamlstrict import LocatedDict, location_of
from generator.tracks.model import Collection, Track

TOP_FILES = ("corpus.yaml", "referentiel.yaml", "systeme.yaml", "absents.yaml")


@dataclass
class Sources:
    """Everything read from ``corpus_src/``, in a stable order (files sorted by name)."""

    root: Path
    corpus: Record | None = None
    referentiel: Record | None = None
    systeme: Record | None = None
    absents: Record | None = None
    schemas: Path | None = None  # the track's schemas folder
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


@dataclass(frozen=True)
class Layout:
    """The folders of a track's source folder and what each may hold, derived from its collections."""

    folders: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]  # folder -> (fixed files, sub-folders)
    any_yaml: tuple[str, ...]  # folders of <name>.yaml files (one owner or one named record each)
    owners: dict[str, Collection]  # folder -> the collection of its files' owner records
    sections: dict[str, tuple[Collection, ...]]  # folder -> the collections written as sections of a file

    @classmethod
    def of(cls, track: Track) -> Layout:
        folders: dict[str, tuple[list[str], list[str]]] = {"": (list(TOP_FILES), [])}

        def add_folder(path: str) -> None:
            parts = path.split("/")
            for i in range(len(parts)):
                parent, name = "/".join(parts[:i]), parts[i]
                folders.setdefault(parent, ([], []))
                if name not in folders[parent][1]:
                    folders[parent][1].append(name)
            folders.setdefault(path, ([], []))

        any_yaml: list[str] = []
        owners: dict[str, Collection] = {}
        sections: dict[str, list[Collection]] = {}
        for collection in track.collections:
            source = collection.source
            if source.file is not None:
                folder, _, name = source.file.rpartition("/")
                if folder:
                    add_folder(folder)
                folders[folder][0].append(name)
            elif source.folder is not None:
                add_folder(source.folder)
                if source.folder not in any_yaml:
                    any_yaml.append(source.folder)
                if source.section is not None:
                    sections.setdefault(source.folder, []).append(collection)
                    if collection.owner is None:
                        owners[source.folder] = collection
        return cls({k: (tuple(v[0]), tuple(v[1])) for k, v in folders.items()}, tuple(any_yaml), owners,
                   {k: tuple(v) for k, v in sections.items()})


def ignored_reason(name: str) -> str | None:
    """Why a file name is ignored (an editor's lock or backup, a system file), or None for a real file."""
    if name.startswith(_LOCK_PREFIXES) or (name.startswith("#") and name.endswith("#")):
        return "an editor lock or autosave file"
    if name.endswith(_BACKUP_SUFFIXES):
        return "an editor backup or swap file"
    if name in _SYSTEM_NAMES:
        return "a system file, not a source"
    return None


def survey(root: Path, layout: Layout, problems: list[Problem]) -> dict[str, list[Path]]:
    """The ``*.yaml`` files of the layout's open folders, sorted by name; every other entry named.

    Nothing under the source folder is skipped silently: an editor's lock or backup file is ignored with
    a warning; a ``.yml`` or ``.YAML`` file, an unknown file, a sub-folder, a symbolic link or anything
    that is not a regular file is an error naming it.
    """
    found: dict[str, list[Path]] = {folder: [] for folder in layout.any_yaml}
    for folder, (files, folders) in layout.folders.items():
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
            elif folder in layout.any_yaml and entry.name.endswith(".yaml") and not entry.is_symlink() \
                    and entry.is_file(follow_symlinks=False):
                found[folder].append(path)
            else:
                problems.append(Problem(Location(_shown(root, path)), "",
                                        _unexpected(entry, folder, files, folder in layout.any_yaml)))
    return found


def _prefixes(folder: str) -> list[str]:
    """``listes/agrees`` -> ``["listes", "listes/agrees"]``."""
    parts = folder.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _shown(root: Path, path: Path) -> str:
    return path.relative_to(named_from(root)).as_posix()


def _unexpected(entry: os.DirEntry[str], folder: str, files: tuple[str, ...], any_yaml: bool) -> str:
    """Why an entry of the source folder is not read, worded for the author."""
    if entry.is_symlink():
        return ("a symbolic link: sources must be regular files inside the source folder (copy the file "
                "instead of linking it)")
    if entry.is_dir(follow_symlinks=False):
        return f"sub-folder not read: {folder or 'the source folder'} has no sub-folders (see docs/authoring.md)"
    if not entry.is_file(follow_symlinks=False):
        return "not a regular file (a FIFO, socket or device): remove it"
    stem, dot, extension = entry.name.rpartition(".")
    if dot and extension.lower() in ("yaml", "yml") and (any_yaml or f"{stem}.yaml" in files):
        return f"not read: sources end in '.yaml' (lowercase): rename it {stem}.yaml"
    expected = "<name>.yaml files only" if any_yaml else ", ".join(files)
    return f"unknown file, not read (this folder holds {expected})"


def _single(sources: Sources, relative: str, kind: str, required: bool = True,
            collection: Collection | None = None) -> Record | None:
    record = read_record(sources.root, relative, kind, sources.problems, required)
    if record is not None and collection is not None:
        record.schema, record.schemas = collection.schema, sources.schemas
    elif record is not None and sources.schemas is not None:
        record.schemas = sources.schemas
    return record


def _owner_file(sources: Sources, path: Path, owner: Collection, sections: tuple[Collection, ...],
                keys: tuple[str, ...]) -> None:
    """A file of an owner folder: the owner record under its section, its records under theirs (``keys``: the
    sections' names)."""
    loaded = read_yaml(sources.root, path, sources.problems)
    if loaded is None:
        return
    name, data, days = loaded
    label = owner.label
    if not isinstance(data, LocatedDict):
        sources.problems.append(Problem(location_of(data, None, name), "", f"an {label} file holds a mapping "
                                        f"with the keys {', '.join(keys)}"))
        return
    for key in data:
        if key not in keys:
            sources.problems.append(Problem(location_of(data, key, name), key,
                                            f"unknown section; expected one of {', '.join(keys)}"))
    head = owner.source.section or ""
    record_data = data.get(head)
    if not isinstance(record_data, dict):
        sources.problems.append(Problem(location_of(data, head, name), head,
                                        f"an {label} file needs an '{head}' mapping"))
        return
    owner_id = record_data.get("id") if isinstance(record_data.get("id"), str) else None
    sources.add(Record(owner.name, record_data, name, head, owner_id, owner.schema, sources.schemas, days))
    for collection in sections:
        section = collection.source.section or ""
        if collection is owner or data.get(section) is None:
            continue
        items = data[section]
        if collection.source.many:
            if not isinstance(items, list):
                sources.problems.append(Problem(location_of(data, section, name), section, "must be a list"))
                continue
            add = sources.records.setdefault(collection.name, []).append
            for index, item in enumerate(items):
                record = Record(collection.name, item, name, f"{section}[{index}]", owner_id, collection.schema,
                                sources.schemas, days)
                if not isinstance(item, dict):
                    sources.problems.append(Problem(location_of(items, index, name), record.where,
                                                    "must be a mapping"))
                    continue
                add(record)
        elif isinstance(items, dict):
            sources.add(Record(collection.name, items, name, section, owner_id, collection.schema,
                               sources.schemas, days))
        else:  # the validator reads pages from a mapping: stop here, not crash there
            fields = ", ".join(schema(collection.schema, sources.schemas).get("required", []))
            sources.problems.append(Problem(location_of(data, section, name), section,
                                            f"must be a mapping ({fields})"))


def load_sources(root: Path, track: Track) -> Sources:
    """Load every source file of ``track`` under ``root``; YAML problems are collected, not raised."""
    sources = Sources(root=root, schemas=track.schemas)
    sources.corpus = _single(sources, "corpus.yaml", "corpus")
    sources.referentiel = _single(sources, "referentiel.yaml", "referentiel")
    sources.systeme = _single(sources, "systeme.yaml", "systeme")
    sources.absents = _single(sources, "absents.yaml", "absents", required=False)
    layout = Layout.of(track)
    listed = survey(root, layout, sources.problems)
    for folder, paths in listed.items():
        owner = layout.owners.get(folder)
        sections = layout.sections.get(folder, ())
        keys = tuple(c.source.section or "" for c in sections)
        for path in paths:
            if owner is not None:
                _owner_file(sources, path, owner, sections, keys)
                continue
            for collection in track.collections:
                if collection.source.folder == folder and collection.source.section is None:
                    record = _single(sources, path.relative_to(root).as_posix(), collection.name,
                                     collection=collection)
                    if record is not None:
                        sources.add(record)
    for collection in track.collections:
        if collection.source.file is not None:
            record = _single(sources, collection.source.file, collection.name, collection=collection)
            if record is not None:
                sources.add(record)
    return sources
