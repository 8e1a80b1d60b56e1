"""The code of a track, behind a small protocol: the engine loads it by the name ``track.yaml`` gives.

Everything else about a track is data (:mod:`generator.tracks.model`); what stays code is what has logic:
how the référentiel decides a task (the evaluator), the shortcut readings behind the traps, the
same-rank sources the founding rule accepts as equivalent, and the independent agents of the panel.
``code`` is a dotted module name (``generator.pistes.conformite``) or a ``.py`` file of the track's folder
(a track kept outside the package, such as the tests' own).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Protocol, cast

from generator.base.errors import GeneratorError
from generator.season.evaluation import Evaluation, Strategy
from generator.season.reader import CorpusReader, Fact
from generator.season.task import Task
from generator.tracks.model import Track


class TrackLogic(Protocol):
    """What a track's module provides (docs/tracks.md, "The code of a track")."""

    REFERENCE: Strategy  # the référentiel applied as written
    FAMILY_SHORTCUTS: Mapping[str, Strategy]  # trap family -> the shortcut its traps catch
    NAMED_SHORTCUTS: Mapping[str, Strategy]  # key 'raccourci' -> a named shortcut
    NAMED_BY_FAMILY: Mapping[str, Mapping[str, Strategy]]  # families whose key must name its raccourci
    ALL_SHORTCUTS: tuple[Strategy, ...]
    INDEPENDENT: Mapping[str, Any]  # name -> an agent written from the served référentiel alone
    EXCEPTIONS: Mapping[str, Any]  # agent name -> the tasks where it is expected to fail, and why
    OUTSIDE_RULE: Mapping[str, Any]  # name -> (agent, expectation): readings against the rule, shown to fail

    def evaluate(self, task: Task, reader: CorpusReader, strategy: Strategy = ...) -> Evaluation: ...

    def same_rank_forms(self, reader: CorpusReader, fact: Fact) -> list[Fact]: ...


class LogicError(GeneratorError):
    """The track's code cannot be loaded, or lacks a name of the protocol."""


_REQUIRED = ("REFERENCE", "FAMILY_SHORTCUTS", "NAMED_SHORTCUTS", "NAMED_BY_FAMILY", "ALL_SHORTCUTS",
             "INDEPENDENT", "EXCEPTIONS", "OUTSIDE_RULE", "evaluate", "same_rank_forms")


@cache
def _load(code: str, folder: Path) -> ModuleType:
    if code.endswith(".py"):
        name = f"proveit_track_{folder.name.replace('-', '_')}"
        spec = importlib.util.spec_from_file_location(name, folder / code)
        if spec is None or spec.loader is None:
            raise LogicError(f"{folder / code}: not a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        return module
    return importlib.import_module(code)


def load_logic(track: Track) -> TrackLogic:
    """The module ``track.code`` names, checked to provide every name of :class:`TrackLogic`."""
    try:
        module = _load(track.code, track.folder)
    except ImportError as exc:
        raise LogicError(f"{track.folder.name}/track.yaml: code: cannot import {track.code} ({exc})") from None
    missing = [name for name in _REQUIRED if not hasattr(module, name)]
    if missing:
        raise LogicError(f"{track.code}: the code of the track {track.piste} lacks {', '.join(missing)} "
                         "(docs/tracks.md)")
    return cast(TrackLogic, module)


