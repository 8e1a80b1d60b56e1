"""Serialise documents to frozen bytes, write ``build/`` and ``manifest/`` atomically.

The bytes of a body: orjson with two-space indentation, keys in the compiler's order, non-ASCII kept
as UTF-8, and a trailing newline (identical to ``json.dumps(indent=2, ensure_ascii=False) + "\\n"``,
which a test checks). A build is written aside, then swapped in, so an interrupted or failed build
leaves the previous one intact.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from generator import resource_types as col
from generator.compile import Document
from generator.errors import Location, Problem
from generator.hashing import parsed_hash, request_hash, sha256_hex

MANIFEST_FORMAT = "corpus-manifest/1"
MANIFEST_FILE = "manifest.json"
MANIFEST_HASH_FILE = "manifest.sha256"


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
        where = Location(f"build/{col.file_for(doc.path)}")
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

    def entry(self, base_url: str) -> dict[str, Any]:
        doc = self.document
        entry: dict[str, Any] = {"path": doc.path, "kind": doc.kind, "file": col.file_for(doc.path),
                                 "length": len(self.data), "sha256": sha256_hex(self.data)}
        if doc.kind == "systeme":
            entry["status"] = doc.status
        else:
            entry["request_hash"] = request_hash(base_url + doc.path)
        # The proxy parses the bytes back into exactly doc.body (they were serialised from it), so hash
        # that value instead of parsing 100,000 files again; tests recompute it from the files.
        entry["response_hash"] = parsed_hash(doc.body)
        return entry


def manifest_bytes(corpus_id: str, base_url: str, built: list[Built]) -> bytes:
    manifest = {"format": MANIFEST_FORMAT, "corpus": corpus_id, "base_url": base_url,
                "resources": [b.entry(base_url) for b in sorted(built, key=lambda b: b.document.path)]}
    # orjson: the same bytes as json.dumps(indent=2, ensure_ascii=False) + "\n" (a test checks it), without
    # the pure-Python encoder that json.dumps falls back to when indenting (seconds on 100,000 entries).
    return orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n"


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0)


def _write_tree(target: Path, files: dict[str, bytes]) -> None:
    # Plain strings and os-level calls: at 100,000 files, pathlib objects and buffered file objects cost
    # about as much as the system calls themselves (open, write, close is all a file needs).
    base = os.fspath(target)
    made: set[str] = set()
    for relative, data in files.items():
        folder, _, _ = relative.rpartition("/")
        if folder not in made:
            os.makedirs(os.path.join(base, folder), exist_ok=True)
            made.add(folder)
        fd = os.open(os.path.join(base, relative), _CREATE, 0o666)  # as open() does; the umask applies
        try:
            view = memoryview(data)
            while view:  # a regular file takes everything at once; loop in case a write is ever partial
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)


def write_atomically(root: Path, trees: dict[str, dict[str, bytes]]) -> None:
    """Write each ``{folder: {relative file: bytes}}`` aside under ``root``, then swap them in.

    Every tree is complete on disk before the first swap, so a failure while writing leaves the
    previous build untouched; the swaps are renames, undone if one of them fails.
    """
    stage = root / f".build-stage-{os.getpid()}"
    old = root / f".build-old-{os.getpid()}"
    for leftover in (stage, old):
        shutil.rmtree(leftover, ignore_errors=True)
    swapped: list[str] = []
    try:
        for name, files in trees.items():
            _write_tree(stage / name, files)
        old.mkdir()
        for name in trees:
            current = root / name
            if current.exists():
                current.rename(old / name)
            (stage / name).rename(current)
            swapped.append(name)
    except BaseException:
        for name in trees:
            if (old / name).exists():
                if name in swapped:
                    shutil.rmtree(root / name)
                (old / name).rename(root / name)
        raise
    finally:
        shutil.rmtree(stage, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
