"""Check compiled documents against the output rules and describe them in the manifest.

Their bytes are :func:`generator.contract.bodies.body_bytes`; writing them is
:mod:`generator.base.transaction`'s job. A build does all three for one body before the next
(:func:`serialise`): each body is then read from memory once and from the processor's cache twice, where three
passes over 100,000 bodies read them from memory three times.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from generator.base.errors import Location, Problem
from generator.compiler.compile import Document
from generator.contract.bodies import body_bytes, find_numbers
from generator.contract.hashing import canonical_bytes, request_hash, sha256_hex
from generator.contract.manifest import Entry, Manifest
from generator.tracks.model import file_for


def _only_strings_and_literals(value: object) -> bool:
    """True when ``value`` holds nothing but objects, arrays, strings, booleans and null (no recursion)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = item.__class__
        if kind is str or kind is bool or item is None:  # most values: tested first, by identity
            continue
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif not isinstance(item, str):  # a str subclass is still a string; anything else is not
            return False
    return True


def check_bodies(documents: list[Document], build_dir: str) -> list[Problem]:
    """Output rules that hold whatever the sources: no number, never an empty object, ressource first; each
    problem names the file it would be in the track's ``build_dir`` (``build/<piste>``)."""
    return [problem for doc in documents for problem in _body_problems(doc, build_dir)]


def _body_problems(doc: Document, build_dir: str) -> list[Problem]:
    """:func:`check_bodies` of one document."""
    body = doc.body
    numbers = not _only_strings_and_literals(body)  # cheap test first; pointers only when needed
    misplaced = not body or next(iter(body)) != "ressource" or body["ressource"] != doc.path
    if not (numbers or misplaced):  # every body of a valid build: no place is named
        return []
    where = Location(f"{build_dir}/{file_for(doc.path)}")
    problems = []
    if numbers:
        problems += [Problem(where, ptr, "a JSON number would be served; write it as a string")
                     for ptr in find_numbers(body)]
    if misplaced:
        problems.append(Problem(where, "ressource", "every body starts with its canonical path"))
    return problems


@dataclass(frozen=True)
class Built:
    """One served file: its document, its bytes and the manifest entry that describes them."""

    document: Document
    data: bytes

    def entry(self, base_url: str) -> Entry:
        doc = self.document
        # The proxy parses the bytes back into exactly doc.body (they were serialised from it), so hash
        # that value instead of parsing 100,000 files again; tests recompute it from the files. A body holds
        # no number (check_bodies), so orjson writes its canonical JSON (canonical_bytes), as parsed_hash does.
        common = (doc.path, doc.kind, file_for(doc.path), len(self.data), sha256_hex(self.data),
                  sha256_hex(canonical_bytes(doc.body or {"error": None})))
        if doc.kind == "systeme":
            return Entry(*common, status=doc.status)
        return Entry(*common, request_hash=request_hash(base_url + doc.path))


def build_manifest(corpus_id: str, base_url: str, built: list[Built]) -> Manifest:
    return Manifest.create(corpus_id, base_url, (b.entry(base_url) for b in built))


@dataclass
class Serialised:
    """Every document of a build written and described (:func:`serialise`), or the problems of its bodies."""

    built: list[Built] = field(default_factory=list)
    entries: list[Entry] = field(default_factory=list)  # the manifest entry of each, in the same order
    problems: list[Problem] = field(default_factory=list)  # check_bodies' of the documents


def serialise(documents: list[Document], build_dir: str, base_url: str) -> Serialised:
    """:func:`check_bodies`, the bytes and :meth:`Built.entry` of each document before the next one. A body
    with a problem is neither written nor described; the problems of all of them are kept."""
    out = Serialised()
    for doc in documents:
        found = _body_problems(doc, build_dir)
        if found:
            out.problems += found
        elif not out.problems:  # once a body is refused nothing is served: only the checks go on
            built = Built(doc, body_bytes(doc.body))
            out.built.append(built)
            out.entries.append(built.entry(base_url))
    return out
