"""What a track's evaluator returns: criteria with their states and facts, the verdict, the calls.

The engine (season check, founding rule, panel, drawings) reads evaluations only through these types;
how the criteria are decided is the track's logic (:mod:`generator.reading.logic`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.reading.reader import Fact
from generator.reading.task import Task

VRAI, FAUX, NON_ETABLI = "etabli", "faux", "non_etablissable"


@dataclass(frozen=True)
class Strategy:
    """A reading of the référentiel: the reference, or a shortcut a trap is designed to catch.

    A track's logic subclasses it with the flags its shortcuts turn on."""

    name: str
    label: str


@dataclass
class CriterionResult:
    id: str
    etat: str
    motif: str
    faits: list[Fact] = field(default_factory=list)


@dataclass
class Evaluation:
    task: Task
    strategy: Strategy
    verdict: str
    criteres: list[CriterionResult]
    calls: list[str]
    consumed: set[tuple[str, str, str]]
    read: list[tuple[str, Fact]] = field(default_factory=list)  # (criterion, fact) in reading order
    deciding_state: str | None = None  # the state of the criteria that give the verdict; None: all of them

    @property
    def deciding(self) -> list[CriterionResult]:
        """The criteria that give the verdict under the track's precedence rule."""
        return [c for c in self.criteres if self.deciding_state is None or c.etat == self.deciding_state]
