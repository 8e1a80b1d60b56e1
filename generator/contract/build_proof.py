"""A replica proves its build before it serves: build/ is exactly the manifest, the manifest the expected one.

The corpus's promise is that every answer is byte-equal to the manifest (spec §8): a replica that
served a half-copied release, a hand-edited file or last week's build would break it silently, and
each wrong answer would be hashed into a participant's proof. So a replica refuses to start (clear
message, non-zero exit) unless every manifest entry's file has its length and SHA-256, build/ holds no
other file, and the manifest's hash is the expected one: ``--expect-manifest-hash``, else the freeze
record ``freeze/record.json`` when the root has one.
"""

from __future__ import annotations

from pathlib import Path

from generator.base.errors import RenderError
from generator.contract.freeze import read_record
from generator.contract.manifest import Manifest
from generator.contract.places import Places


def expected_hash(root: Path, given: str | None, places: Places) -> tuple[str | None, str]:
    """The manifest hash a replica must serve, and where that expectation comes from."""
    if given:
        return given.strip().lower(), "--expect-manifest-hash"
    record = read_record(root, places)  # a corrupt record is a FreezeRecordError naming it
    if record is not None:
        return record.manifest_hash, str(root / places.record)
    return None, "nothing (no --expect-manifest-hash, no freeze record)"


def prove_build(root: Path, expect: str | None, places: Places) -> Manifest:
    """Check a track's build against its manifest and the manifest against the expectation; return it."""
    manifest = Manifest.load(root, places.manifest)
    wanted, source = expected_hash(root, expect, places)
    if wanted is not None and manifest.hash != wanted:
        raise RenderError(f"{root / places.manifest}: manifest hash {manifest.hash} differs from {wanted} "
                          f"expected by {source}; refusing to serve another corpus")
    problems = manifest.check_tree(root / places.build)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise RenderError(f"{problems[0]}{more}; {places.build}/ must be exactly the manifest")
    return manifest
