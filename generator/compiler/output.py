"""Check compiled documents against the output rules and describe them in the manifest.

Their bytes are :func:`generator.contract.bodies.body_bytes`; writing them is
:mod:`generator.base.transaction`'s job.
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.base.errors import Location, Problem
from generator.compiler.compile import Document
from generator.contract.bodies import find_numbers
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
    problems = []
    for doc in documents:
        body = doc.body
        numbers = not _only_strings_and_literals(body)  # cheap test first; pointers only when needed
        misplaced = not body or next(iter(body)) != "ressource" or body["ressource"] != doc.path
        if not (numbers or misplaced):  # every body of a valid build: no place is named
            continue
        where = Location(f"{build_dir}/{file_for(doc.path)}")
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
