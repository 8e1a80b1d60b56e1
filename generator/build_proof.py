"""A replica proves its build before it serves: build/ is exactly the manifest, the manifest the expected one.

The corpus's promise is that every answer is byte-equal to the manifest (spec §8): a replica that
served a half-copied release, a hand-edited file or last week's build would break it silently, and
each wrong answer would be hashed into a participant's proof. So a replica refuses to start (clear
message, non-zero exit) unless every manifest entry's file has its length and SHA-256, build/ holds no
other file, and the manifest's hash is the expected one: ``--expect-manifest-hash``, else the freeze
record ``freeze/record.json`` when the root has one.

:func:`read_manifest` is the one place that reads ``manifest/manifest.json`` for serving; a typed
manifest model can replace its body without touching its callers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.hashing import sha256_hex
from generator.nginx_settings import RenderError
from generator.output import MANIFEST_FILE

FREEZE_RECORD = Path("freeze") / "record.json"


def read_manifest(root: Path) -> dict[str, Any]:
    """``root/manifest/manifest.json``, parsed (the single reading point for nginx roles and releases)."""
    path = root / "manifest" / MANIFEST_FILE
    try:
        return json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise RenderError(f"{path} not found: run 'corpus build' first") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise RenderError(f"{path}: not a JSON manifest ({exc})") from None


def manifest_hash(root: Path) -> str:
    """SHA-256 of the manifest file's bytes, computed here (never trusted from manifest.sha256)."""
    path = root / "manifest" / MANIFEST_FILE
    try:
        return sha256_hex(path.read_bytes())
    except FileNotFoundError:
        raise RenderError(f"{path} not found: run 'corpus build' first") from None


def entry_bytes(root: Path, entry: dict[str, Any]) -> bytes:
    """The bytes of a manifest entry's file, refused if they differ from what the manifest says."""
    path = root / "build" / entry["file"]
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise RenderError(f"{path}: listed in the manifest but missing; run 'corpus build'") from None
    if len(data) != entry["length"] or sha256_hex(data) != entry["sha256"]:
        raise RenderError(f"{path}: bytes differ from the manifest entry of {entry['path']}; run "
                          "'corpus build' (build/ and manifest/ must come from the same build)")
    return data


def expected_hash(root: Path, given: str | None) -> tuple[str | None, str]:
    """The manifest hash a replica must serve, and where that expectation comes from."""
    if given:
        return given.strip().lower(), "--expect-manifest-hash"
    record = root / FREEZE_RECORD
    if record.is_file():
        try:
            return json.loads(record.read_text("utf-8"))["manifest_hash"], str(record)
        except (ValueError, KeyError, TypeError):
            raise RenderError(f"{record}: unreadable freeze record (no manifest_hash)") from None
    return None, "nothing (no --expect-manifest-hash, no freeze record)"


def prove_build(root: Path, expect: str | None = None) -> str:
    """Check build/ against the manifest and the manifest against the expectation; return the manifest hash."""
    digest = manifest_hash(root)
    wanted, source = expected_hash(root, expect)
    if wanted is not None and digest != wanted:
        raise RenderError(f"{root / 'manifest' / MANIFEST_FILE}: manifest hash {digest} differs from "
                          f"{wanted} expected by {source}; refusing to serve another corpus")
    manifest = read_manifest(root)
    listed = set()
    for entry in manifest["resources"]:
        entry_bytes(root, entry)
        listed.add(entry["file"])
    build = root / "build"
    extra = sorted(p.relative_to(build).as_posix() for p in build.rglob("*")
                   if p.is_file() and p.relative_to(build).as_posix() not in listed)
    if extra:
        raise RenderError(f"{build}: {len(extra)} file(s) the manifest does not list, e.g. {extra[0]}; "
                          "build/ must be exactly the manifest")
    return digest
