"""Read the corpus as an agent through the proxy would: the built bytes, parsed, one call per path."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.contract.bodies import absent_body
from generator.tracks.model import Track, file_for, systeme_path

_INDEX = re.compile(r"[0-9]{1,9}")  # whole-string (fullmatch): "3\n" or a 5,001-digit index is no index
MISSING = object()


def is_index(token: str) -> bool:
    """Whether a pointer token is an array index as the reader resolves it: 1 to 9 ASCII digits, no
    leading zero (``isdigit`` would take Unicode digits such as ``"٣"``, which no JSON array serves)."""
    return _INDEX.fullmatch(token) is not None and (token == "0" or not token.startswith("0"))


class CorpusReader:
    """Parsed documents of a track's build folder; a canonical-shaped unknown path gives the absent body."""

    def __init__(self, build_dir: Path, track: Track) -> None:
        self.build_dir = build_dir
        self.track = track
        self._cache: dict[str, Any] = {}

    def fetch(self, path: str) -> Any:
        if path not in self._cache:
            file = self.build_dir / file_for(path)
            if file.is_file():
                self._cache[path] = json.loads(file.read_bytes())
            elif self.track.collection_of(path) is not None:
                self._cache[path] = absent_body(path)
            else:
                self._cache[path] = json.loads((self.build_dir / file_for(systeme_path("404"))).read_bytes())
        return self._cache[path]

    def collection_prefix(self, path: str) -> str:
        found = self.track.collection_of(path)
        return found.prefix if found is not None else path

    def is_probant(self, path: str, pointer: str) -> bool:
        return self.track.is_probant(path, pointer_pattern(pointer))


def resolve_pointer(doc: Any, pointer: str) -> Any:
    """RFC 6901 lookup; MISSING when the pointer names nothing."""
    if pointer == "":
        return doc
    value = doc
    for raw in pointer.lstrip("/").split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(value, dict) and token in value:
            value = value[token]
        elif isinstance(value, list) and is_index(token) and int(token) < len(value):
            value = value[int(token)]
        else:
            return MISSING
    return value


def pointer_pattern(pointer: str) -> str:
    """``/entrees/3/nom`` -> ``/entrees/<n>/nom``: the form of spec §5.7's probant table."""
    return "/".join("<n>" if _INDEX.fullmatch(part) else part for part in pointer.split("/"))


@dataclass(frozen=True)
class Fact:
    """A (resource, JSON Pointer, value) triple, as an assertion states it."""

    ressource: str
    champ: str
    valeur: Any

    def as_dict(self) -> dict[str, Any]:
        return {"ressource": self.ressource, "champ": self.champ, "valeur": self.valeur}


@dataclass
class Session:
    """One task's walk through the corpus: calls in order (each path once) and every field consumed."""

    reader: CorpusReader
    calls: list[str] = field(default_factory=list)
    consumed: set[tuple[str, str, str]] = field(default_factory=set)  # (criterion, prefix, pattern)
    read_facts: list[tuple[str, Fact]] = field(default_factory=list)  # (criterion, fact), reading order

    def get(self, path: str) -> Any:
        if path not in self.calls:
            self.calls.append(path)
        return self.reader.fetch(path)

    def read(self, criterion: str, path: str, pointer: str) -> Any:
        """Consume one field for a criterion (logged, so the season check can compare with /referentiel)."""
        value = resolve_pointer(self.get(path), pointer)
        self.consumed.add((criterion, self.reader.collection_prefix(path), pointer_pattern(pointer)))
        if value is not MISSING and (criterion, Fact(path, pointer, value)) not in self.read_facts:
            self.read_facts.append((criterion, Fact(path, pointer, value)))
        return value

    def navigate(self, path: str, pointer: str) -> Any:
        """Read a field only to move on (array length, page_suivante of a common list): not consumed."""
        return resolve_pointer(self.get(path), pointer)
