"""What the scorer reads, all published at the close (spec §8): manifest, frozen bytes, statements, key.

One :class:`ScoringInputs` per scoring run: the manifest indexed by path, the tasks of
``season/taches.json``, the key of ``season/cle.json``, the fields each criterion of the served
``/referentiel`` consumes, and a :class:`CorpusReader` over ``build/`` whose documents are checked against
the manifest's SHA-256 before the scorer trusts them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator import resource_types as col
from generator.errors import GeneratorError, ManifestError, read_file
from generator.manifest import Manifest
from generator.season.evaluator import Task
from generator.season.graph import Graph, task_graph
from generator.season.reader import CorpusReader

TASKS_FILE = Path("season") / "taches.json"
KEY_FILE = Path("season") / "cle.json"
# §4.1: a response hash equal to one of these bodies is an instrument defect (ArkForge's, not the agent's).
DEFECT_STATUSES = (403, 503, 400)


class ScoreInputError(GeneratorError):
    """The inputs cannot be scored (missing or malformed file, two submissions for one task...)."""


class ScoreRefused(GeneratorError):
    """Scoring is refused: the freeze check failed, or a frozen file differs from the manifest."""


@dataclass(frozen=True)
class Statement:
    """A public task statement: the task and its assertion bounds (spec §5.5)."""

    task: Task
    minimum: int
    plafond: int


def _read_json(root: Path, relative: Path) -> Any:
    path = root / relative
    try:
        return json.loads(path.read_bytes())
    except FileNotFoundError:
        raise ScoreInputError(f"{relative}: not found under {root} (run 'corpus build' and "
                              "'corpus build-season', or pass --root)") from None
    except ValueError as exc:
        raise ScoreInputError(f"{relative}: not JSON: {exc}") from None


def defect_hashes(manifest: Manifest) -> dict[str, int]:
    """Response hash -> status of the /_systeme bodies that make an instrument defect (§4.1)."""
    return {e.response_hash: e.status for e in manifest.of_kind("systeme") if e.status in DEFECT_STATUSES}


def load_manifest(root: Path) -> Manifest:
    """The published manifest, checked against ``manifest.sha256``."""
    try:
        return Manifest.load(root)
    except ManifestError as exc:
        raise ScoreInputError(str(exc)) from None


def load_statements(root: Path) -> tuple[int, dict[str, Statement]]:
    data = _read_json(root, TASKS_FILE)
    try:
        statements = {t["id"]: Statement(Task(t["id"], t["entite"], t["activite"], t["date_examen"]),
                                         int(t["assertions"]["minimum"]), int(t["assertions"]["plafond"]))
                      for t in data["taches"]}
        return int(data["saison"]), statements
    except (KeyError, TypeError, ValueError) as exc:
        raise ScoreInputError(f"{TASKS_FILE}: not a season statement file ({exc!r})") from None


def load_key(root: Path) -> dict[str, dict[str, Any]]:
    data = _read_json(root, KEY_FILE)
    taches = data.get("taches") if isinstance(data, dict) else None
    if not isinstance(taches, dict) or not all(
            isinstance(e, dict) and isinstance(e.get("verdict"), str) and isinstance(e.get("faits"), list)
            for e in taches.values()):
        raise ScoreInputError(f"{KEY_FILE}: not an answer key (taches: {{id: {{verdict, faits}}}})")
    return taches


def consumed_fields(referentiel: Any) -> dict[str, frozenset[str]]:
    """Collection prefix -> the pointer patterns some criterion of ``/referentiel`` consumes (``champs``)."""
    found: dict[str, set[str]] = {}
    for critere in referentiel.get("criteres", []) if isinstance(referentiel, dict) else []:
        for prefix, patterns in (critere.get("champs") or {}).items():
            found.setdefault(prefix, set()).update(patterns)
    return {prefix: frozenset(patterns) for prefix, patterns in found.items()}


@dataclass
class ScoringInputs:
    """Everything one scoring run reads, loaded once; graphs and verified documents are cached."""

    root: Path
    manifest: Manifest
    saison: int
    statements: dict[str, Statement]
    key: dict[str, dict[str, Any]]
    reader: CorpusReader
    champs: dict[str, frozenset[str]]
    defects: dict[str, int]
    _graphs: dict[str, Graph] = field(default_factory=dict)
    _verified: set[str] = field(default_factory=set)

    def graph(self, task_id: str) -> Graph:
        if task_id not in self._graphs:
            graph = task_graph(self.reader, self.statements[task_id].task)
            for path in sorted(graph.proper | graph.common):
                self.document(path)  # every document the close rules read is checked against the manifest
            self._graphs[task_id] = graph
        return self._graphs[task_id]

    def document(self, path: str) -> Any:
        """The parsed frozen bytes of ``path``, once their SHA-256 is checked against the manifest."""
        if path not in self._verified:
            entry = self.manifest.by_path(path)
            if entry is not None:
                data = read_file(self.root / "build" / entry.file, ScoreRefused,
                                 f"missing: the frozen bytes of {path} are needed to check condition 4")
                problem = entry.difference(data)
                if problem is not None:
                    raise ScoreRefused(f"build/{entry.file}: {problem}: the frozen bytes were altered")
            self._verified.add(path)
        return self.reader.fetch(path)


def load_inputs(root: Path) -> ScoringInputs:
    """Load the published files of ``root``; :class:`ScoreInputError` names the first unusable one."""
    manifest = load_manifest(root)
    saison, statements = load_statements(root)
    key = load_key(root)
    missing = sorted(set(statements) - set(key))
    if missing:
        raise ScoreInputError(f"{KEY_FILE}: no key entry for {', '.join(missing)}")
    reader = CorpusReader(root / "build")
    inputs = ScoringInputs(root, manifest, saison, statements, key, reader, {}, defect_hashes(manifest))
    inputs.champs = consumed_fields(inputs.document(col.REFERENTIEL_PATH))
    if not inputs.champs:
        raise ScoreInputError(f"build/{col.file_for(col.REFERENTIEL_PATH)}: no criterion declares the fields it "
                              "consumes (criteres[].champs): the probant-field rule cannot be applied")
    return inputs
