"""Serialise documents to frozen bytes, write ``build/`` and ``manifest/`` atomically.

The bytes of a body: orjson with two-space indentation, keys in the compiler's order, non-ASCII kept
as UTF-8, and a trailing newline (identical to ``json.dumps(indent=2, ensure_ascii=False) + "\\n"``,
which a test checks). A build is written aside, then swapped in, so an interrupted or failed build
leaves the previous one intact.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from generator import collections as col
from generator.compile import Document
from generator.errors import Location, Problem
from generator.hashing import request_hash, response_hash, sha256_hex

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


def check_bodies(documents: list[Document]) -> list[Problem]:
    """Output rules that hold whatever the sources: no number, never an empty object, ressource first."""
    problems = []
    for doc in documents:
        where = Location(f"build/{col.file_for(doc.path)}")
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
        entry["response_hash"] = response_hash(self.data)
        return entry


def manifest_bytes(corpus_id: str, base_url: str, built: list[Built]) -> bytes:
    manifest = {"format": MANIFEST_FORMAT, "corpus": corpus_id, "base_url": base_url,
                "resources": [b.entry(base_url) for b in sorted(built, key=lambda b: b.document.path)]}
    return (json.dumps(manifest, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _write_tree(target: Path, files: dict[str, bytes]) -> None:
    made: set[Path] = set()
    for relative, data in files.items():
        path = target / relative
        if path.parent not in made:
            path.parent.mkdir(parents=True, exist_ok=True)
            made.add(path.parent)
        path.write_bytes(data)


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
