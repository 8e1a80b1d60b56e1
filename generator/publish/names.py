"""Names that a reader cannot tell apart are one name: participants' names and stacks compared as read.

Two registrations whose names differ only by letters of another script that look the same (a Cyrillic "А"
for a Latin "A"), by compatibility forms (a full-width "Ａ"), by case, accents or punctuation, would be
published side by side and read as one participant. So names are compared by a key: Unicode NFKC, then the
*skeleton* of UTS #39 (Unicode Security Mechanisms, section 4: every character replaced by the prototype of
its confusable class, between two NFD), case folded, marks and everything but letters and digits dropped.

The confusable classes are Unicode's own ``confusables.txt``, as the PyPI package ``confusable_homoglyphs``
(3.3.1, "Update unicode data", January 2024; used by django-registration, packaged by Debian and openSUSE)
ships it in ``confusables.json``: each pair of the file, both ways. The package offers no skeleton, so it is
computed here from that data: every pair joins a source character to its prototype, so the classes are the
connected pairs, and a class with a prototype of several characters ("rn" for "m") maps to it. The data is
read from the package's file, never through its module (which honours an environment variable that points
elsewhere).

Stacks may be shared (two participants on one declared stack is no fault), but two stacks that read alike
and differ in their characters are one imitating the other: refused too, naming both registrations.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import unicodedata
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from generator.publish.files import IndexInputError

DATA_PACKAGE = "confusable_homoglyphs"
_DIRECTION_MARKS = str.maketrans("", "", "\u200e\u200f")  # the data file shows right-to-left text between them


class Named(Protocol):
    """What is compared of a registration: its place in the file, its name and its stack."""

    @property
    def where(self) -> str: ...

    @property
    def agent(self) -> str: ...

    @property
    def stack(self) -> str: ...


def _pairs() -> list[tuple[str, str]]:
    text = importlib.resources.files(DATA_PACKAGE).joinpath("confusables.json").read_text(encoding="utf-8")
    data: object = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError(f"{DATA_PACKAGE}/confusables.json: not an object")
    pairs = []
    for source, homoglyphs in data.items():
        for entry in homoglyphs if isinstance(homoglyphs, list) else []:
            other = entry.get("c") if isinstance(entry, dict) else None
            if isinstance(source, str) and isinstance(other, str):
                pairs.append((source.translate(_DIRECTION_MARKS), other.translate(_DIRECTION_MARKS)))
    return [(a, b) for a, b in pairs if a and b and a != b]


@functools.cache
def prototypes() -> dict[str, str]:
    """Each confusable character and the prototype of its class (UTS #39 ``confusables.txt``)."""
    parent: dict[str, str] = {}

    def find(node: str) -> str:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    degree: Counter[str] = Counter()
    for a, b in _pairs():
        degree[a] += 1
        degree[b] += 1
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
    classes: dict[str, list[str]] = {}
    for node in list(parent):
        classes.setdefault(find(node), []).append(node)
    single: dict[str, str] = {}
    longer: dict[str, str] = {}
    for members in classes.values():
        several = sorted(m for m in members if len(m) > 1)  # only a prototype has several code points
        # else the class is a star around its prototype: the member paired with all the others
        prototype = several[0] if several else max(members, key=lambda m: (degree[m], -ord(m)))
        for member in (m for m in members if len(m) == 1):
            (longer if len(prototype) > 1 else single)[member] = prototype
    mapped = dict(single)
    for member, prototype in longer.items():  # its characters have prototypes too: the mapping is idempotent
        mapped[member] = _nfd("".join(single.get(c, c) for c in _nfd(prototype)))
    return mapped


def _nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def skeleton(text: str) -> str:
    """UTS #39 ``skeleton(X)``: NFD, each character replaced by its confusable prototype, NFD again. Two
    strings are confusable when their skeletons are equal."""
    table = prototypes()
    return _nfd("".join(table.get(c, c) for c in _nfd(text)))


def name_key(name: str) -> str:
    """What a reader reads of a name: NFKC, skeleton, case folded, skeleton again (a lower-case letter has
    its own prototype), marks, spaces and punctuation dropped."""
    folded = skeleton(skeleton(unicodedata.normalize("NFKC", name)).casefold())
    return "".join(c for c in unicodedata.normalize("NFKD", folded)
                   if unicodedata.category(c)[0] in "LN")


def stack_key(stack: str) -> str:
    """What a reader reads of a stack: NFKC, skeleton, spaces collapsed (case is seen: kept)."""
    return " ".join(skeleton(unicodedata.normalize("NFKC", stack)).split())


def _written(stack: str) -> str:
    return " ".join(unicodedata.normalize("NFC", stack).split())


def refuse_lookalikes(path: Path, registrations: Sequence[Named]) -> None:
    """One line naming both registrations when two names read the same, or two stacks read the same but are
    written otherwise (:class:`IndexInputError`: nothing is published)."""
    names: dict[str, Named] = {}
    stacks: dict[str, Named] = {}
    for r in registrations:
        key = name_key(r.agent)
        first = names.setdefault(key, r)
        if first is not r:
            raise IndexInputError(f"{path}: {r.where}/agent: {r.agent!r} reads as the name of {first.where} "
                                  f"({first.agent!r}): two participants a reader cannot tell apart (names are "
                                  "compared after Unicode normalisation and confusable folding, UTS #39, case, "
                                  "accents and punctuation aside)")
        seen = stacks.setdefault(stack_key(r.stack), r)
        if seen is not r and _written(seen.stack) != _written(r.stack):
            raise IndexInputError(f"{path}: {r.where}/stack: {r.stack!r} reads as the stack of {seen.where} "
                                  f"({seen.stack!r}) but is written with other characters: one imitates the "
                                  "other (stacks are compared after Unicode normalisation and confusable "
                                  "folding, UTS #39); declare the same stack in the same characters")
