"""A task as the engine knows it: an id and the fields of its public statement (``track.yaml``, ``enonce``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Task:
    """What the evaluator needs of a public task statement: its id and its fields, by name.

    A field reads as an attribute too (``task.entite``), so a track's logic reads its statements in its
    own words; the engine itself only reads the fields ``track.yaml`` names.
    """

    id: str
    fields: tuple[tuple[str, str], ...]

    def field(self, name: str) -> str:
        for key, value in self.fields:
            if key == name:
                return value
        raise KeyError(name)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("id", "fields"):
            raise AttributeError(name)
        try:
            return self.field(name)
        except KeyError:
            raise AttributeError(name) from None
