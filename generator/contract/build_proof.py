"""A replica proves its build before it serves: build/ is exactly the manifest, the manifest the expected one.

The corpus's promise is that every answer is byte-equal to the manifest (spec §8): a replica that
served a half-copied release, a hand-edited file or last week's build would break it silently, and
each wrong answer would be hashed into a participant's proof. So a replica refuses to start (clear
message, non-zero exit) unless every manifest entry's file has its length and SHA-256, build/ holds no
other file, and the manifest's hash is the expected one: ``--expect-manifest-hash``, else the freeze
record ``freeze/record.json`` when the root has one. A release (every track of a root) is proven at once
by :func:`prove_release`, its expectation being the release hash over every track's manifest.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from generator.base.errors import DeployError
from generator.contract.freeze import read_record
from generator.contract.manifest import Manifest, release_hash
from generator.contract.places import Places


def expected_hash(root: Path, given: str | None, places: Places) -> tuple[str | None, str]:
    """The manifest hash a replica must serve, and where that expectation comes from."""
    if given:
        return given.strip().lower(), "--expect-manifest-hash"
    record = read_record(root, places)  # a corrupt record is a FreezeRecordError naming it
    if record is not None:
        return record.manifest_hash, str(root / places.record)
    return None, "nothing (no --expect-manifest-hash, no freeze record)"


def prove_build(root: Path, expect: str | None, places: Places, manifest: Manifest | None = None) -> Manifest:
    """Check a track's build against its manifest and the manifest against the expectation; return it."""
    manifest = manifest or Manifest.load(root, places.manifest)
    wanted, source = expected_hash(root, expect, places)
    if wanted is not None and manifest.hash != wanted:
        raise DeployError(f"{root / places.manifest}: manifest hash {manifest.hash} differs from {wanted} "
                          f"expected by {source}; refusing to serve another corpus")
    problems = manifest.check_tree(root / places.build)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise DeployError(f"{problems[0]}{more}; {places.build}/ must be exactly the manifest")
    return manifest


def prove_release(root: Path, expect: str | None, every: Sequence[Places], by: str = "--expect-manifest-hash"
                  ) -> list[Manifest]:
    """Every track's build proven against its manifest (in ``every``'s order), and ``expect`` against them.

    ``expect`` (``--expect-manifest-hash``, a replica's settings, a release folder's name) is the release
    hash over every track's manifest (:func:`~generator.contract.manifest.release_hash`), or the first
    track's manifest hash alone (what its freeze anchors; the names of releases made before releases named
    every track). A track with a freeze record is held to it, unless ``expect`` is its own manifest hash.
    ``by`` says where ``expect`` comes from, for the message.
    """
    wanted = expect.strip().lower() if expect else None
    manifests = [Manifest.load(root, places.manifest) for places in every]
    name = release_hash({places.piste: m.hash for places, m in zip(every, manifests, strict=True)})
    first = manifests[0].hash if manifests else None
    if wanted is not None and wanted not in (name, first):
        raise DeployError(f"{root}: release {name} (manifest hash {first} of the track {every[0].piste}) differs "
                          f"from {wanted} expected by {by}; refusing to serve another corpus")
    return [prove_build(root, wanted if i == 0 and wanted == first else None, places, manifest)
            for i, (places, manifest) in enumerate(zip(every, manifests, strict=True))]
