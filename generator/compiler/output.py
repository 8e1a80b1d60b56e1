"""Serialise documents to frozen bytes and describe them in the manifest.

The bytes of a body: orjson with two-space indentation, keys in the compiler's order, non-ASCII kept
as UTF-8, and a trailing newline (identical to ``json.dumps(indent=2, ensure_ascii=False) + "\\n"``,
which a test checks). Writing them is :mod:`generator.base.transaction`'s job.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from generator.base.errors import Location, Problem
from generator.compiler.compile import Document
from generator.contract.hashing import parsed_hash, request_hash, sha256_hex
from generator.contract.manifest import MANIFEST_FILE, MANIFEST_HASH_FILE, Entry, Manifest
from generator.tracks.model import file_for

__all__ = ["MANIFEST_FILE", "MANIFEST_HASH_FILE", "Built", "body_bytes", "build_manifest", "check_bodies",
           "find_numbers"]  # the two file names stay importable from here for nginx_render and serve


def body_bytes(body: dict[str, Any]) -> bytes:
    return orjson.dumps(body, option=orjson.OPT_INDENT_2) + b"\n"


def find_numbers(value: Any, pointer: str = "") -> list[str]:
    """JSON Pointers of every number in ``value``: the corpus serves none (spec §2.5)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, int | float):
        return [pointer or "/"]
    if isinstance(value, dict):
        return [p for key, inner in value.items() for p in find_numbers(inner, f"{pointer}/{key}")]
    if isinstance(value, list):
        return [p for i, inner in enumerate(value) for p in find_numbers(inner, f"{pointer}/{i}")]
    return [f"{pointer or '/'} (unsupported type {type(value).__name__})"]


def _only_strings_and_literals(value: Any) -> bool:
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


def check_bodies(documents: list[Document]) -> list[Problem]:
    """Output rules that hold whatever the sources: no number, never an empty object, ressource first."""
    problems = []
    for doc in documents:
        where = Location(f"build/{file_for(doc.path)}")
        if not _only_strings_and_literals(doc.body):  # cheap test first; pointers only when needed
            problems += [Problem(where, ptr, "a JSON number would be served; write it as a string")
                         for ptr in find_numbers(doc.body)]
        if not doc.body or next(iter(doc.body)) != "ressource" or doc.body["ressource"] != doc.path:
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
        # that value instead of parsing 100,000 files again; tests recompute it from the files.
        common = (doc.path, doc.kind, file_for(doc.path), len(self.data), sha256_hex(self.data),
                  parsed_hash(doc.body))
        if doc.kind == "systeme":
            return Entry(*common, status=doc.status)
        return Entry(*common, request_hash=request_hash(base_url + doc.path))


def build_manifest(corpus_id: str, base_url: str, built: list[Built]) -> Manifest:
    return Manifest.create(corpus_id, base_url, (b.entry(base_url) for b in built))
