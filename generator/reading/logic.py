"""The code of a track as one typed object, and its loading by the name ``track.yaml`` gives.

Everything else about a track is data (:mod:`generator.tracks.model`); what stays code is what has logic:
how the référentiel decides a task (the evaluator), the shortcut readings behind the traps, the
same-rank sources the founding rule accepts as equivalent, and the agents of the panel. A track's module
fills in one :class:`TrackLogic` (docs/tracks.md, "The code of a track"); the engine finds it by its type.
``code`` is a dotted module name (``generator.track_code.conformite.logic``) or a ``.py`` file of the track's
folder (a track kept outside the package, such as the tests' own).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Generic, Protocol, TypeVar

from generator.base.errors import GeneratorError
from generator.reading.evaluation import Evaluation, Strategy
from generator.reading.reader import CorpusReader, Fact
from generator.reading.season_model import Season
from generator.reading.task import Task
from generator.tracks.model import Track

S = TypeVar("S", bound=Strategy)  # a track's own readings: its evaluator reads no other track's
S_contra = TypeVar("S_contra", bound=Strategy, contravariant=True)


class Evaluator(Protocol[S_contra]):
    """The référentiel applied to a task, as ``strategy`` reads it (the track's reference by default)."""

    def __call__(self, task: Task, reader: CorpusReader, strategy: S_contra = ...) -> Evaluation: ...


SameRankForms = Callable[[CorpusReader, Fact], list[Fact]]  # a fact -> its forms on registers of its rank
ControlReading = Callable[[Task, CorpusReader], str]  # a careless reading of the control -> its verdict
# An agent: the panel's context of one task (generator.panel.agents.Context, a layer above this one) ->
# (verdict, claims).
Agent = Callable[[Any], tuple[str, list[Fact]]]
# What a reading outside the rule must score (the score report, the season) -> the problems; none: it bites.
Expectation = Callable[[Mapping[str, Any], Season], list[str]]  # a corpus-score/1 report


@dataclass(frozen=True)
class Shortcuts(Generic[S]):
    """The shortcut readings the traps catch: by trap family, or named by the key's ``raccourci``."""

    by_family: Mapping[str, S] = field(default_factory=dict)  # family -> the shortcut its traps catch
    named: Mapping[str, S] = field(default_factory=dict)  # key 'raccourci' -> a named shortcut
    # families whose key must name its raccourci -> the named shortcuts allowed there
    named_by_family: Mapping[str, Mapping[str, S]] = field(default_factory=dict)
    # families whose every trap must beat every named shortcut of the family, not only its raccourci: the
    # panel of naive readings of an obvious option (générique's P5: cheapest listed, first listed, cheapest
    # listed within the budget), each of which a common-sense trap must catch
    beaten_together: frozenset[str] = frozenset()

    @property
    def every(self) -> tuple[S, ...]:
        """Every shortcut once: the families' in their order, then the named ones."""
        return (*self.by_family.values(), *self.named.values())

    def of_trap(self, famille: str, raccourci: str | None) -> S | None:
        """The shortcut a trap of ``famille`` catches: the one its key names, else its family's."""
        if raccourci is not None:
            return self.named.get(raccourci)
        return self.by_family.get(famille)


@dataclass(frozen=True)
class Agents:
    """The track's own agents of the panel (the honest and the abusive ones are the engine's)."""

    independent: Mapping[str, Agent] = field(default_factory=dict)  # written from the served référentiel alone
    # agent name -> {task id: why it may fail there}: each cites a season defect
    exceptions: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # name -> (agent, expectation): readings against the published rule, each shown to fail
    outside_rule: Mapping[str, tuple[Agent, Expectation]] = field(default_factory=dict)


@dataclass(frozen=True)
class TrackLogic(Generic[S]):
    """All the code of a track: the one thing a track's ``logic.py`` exports (as ``TRACK_LOGIC``).

    ``S`` is the track's class of readings (a :class:`Strategy` with the flags its shortcuts turn on): its
    evaluator is only ever given its own reference and shortcuts."""

    evaluate: Evaluator[S]
    reference: S  # the référentiel applied as written: the default of ``evaluate``
    shortcuts: Shortcuts[S]
    same_rank_forms: SameRankForms
    agents: Agents = Agents()
    # name -> a reader who stops early; each must answer the control right (generator.proving.control_check)
    control_readings: Mapping[str, ControlReading] = field(default_factory=dict)


class LogicError(GeneratorError):
    """The track's code cannot be loaded, or does not hold one :class:`TrackLogic`."""


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


def load_logic(track: Track) -> TrackLogic[Strategy]:
    """The one :class:`TrackLogic` of the module ``track.code`` names."""
    try:
        module = _load(track.code, track.folder)
    except ImportError as exc:
        raise LogicError(f"{track.folder.name}/track.yaml: code: cannot import {track.code} ({exc})") from None
    found = list({id(value): value for value in vars(module).values() if isinstance(value, TrackLogic)}.values())
    if len(found) != 1:
        raise LogicError(f"{track.code}: the code of the track {track.piste} holds {len(found)} TrackLogic "
                         "objects, not one: export TRACK_LOGIC = TrackLogic(...) (docs/tracks.md)")
    return found[0]
