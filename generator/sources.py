"""Read ``corpus_src/`` into records that remember where each value was written.

Layout (see docs/authoring.md): ``corpus.yaml``, ``referentiel.yaml``, ``systeme.yaml``, ``absents.yaml``,
``entites/<ENT-id>.yaml`` (an entity with everything proper to it), ``listes/agrees/<activite>.yaml`` and
``listes/mesures-restrictives.yaml``. Loading does no validation beyond the YAML itself: problems are
collected so that one run reports them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.errors import Location, Problem
from generator.yamlstrict import LocatedDict, YamlProblem, load_text, location_of

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


def _read(root: Path, path: Path, problems: list[Problem]) -> tuple[str, Any] | None:
    name = path.relative_to(root.parent).as_posix()
    try:
        return name, load_text(path.read_bytes(), name)
    except YamlProblem as exc:
        problems.append(exc.problem)
    except OSError as exc:
        problems.append(Problem(Location(name), "", f"cannot read: {exc.strerror}"))
    return None


def read_record(root: Path, relative: str, kind: str, problems: list[Problem],
                required: bool = True) -> Record | None:
    """Load one YAML file holding a mapping (corpus or season source); problems are collected."""
    path = root / relative
    if not path.exists():
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
    for path in sorted((root / "entites").glob("*.yaml")):
        _entity_file(sources, path)
    for path in sorted((root / "listes" / "agrees").glob("*.yaml")):
        record = _single(sources, path.relative_to(root).as_posix(), "listes-agrees")
        if record is not None:
            sources.add(record)
    mesures = _single(sources, "listes/mesures-restrictives.yaml", "mesures-restrictives")
    if mesures is not None:
        sources.add(mesures)
    return sources
