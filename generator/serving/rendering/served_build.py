"""What one nginx serves, proven before a line of configuration is written: every track's manifest against
its build (a replica), the ``/_systeme`` bodies nginx returns, and the absent template that must reproduce
every declared absent byte for byte (:mod:`generator.serving.rendering.nginx_render` renders from them).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from generator.base.errors import RenderError
from generator.contract.bodies import REQUIRED_SYSTEME, absent_body, body_bytes
from generator.contract.build_proof import prove_release
from generator.contract.manifest import Manifest
from generator.serving.rendering.nginx_syntax import needs_dollar, quote_text
from generator.tracks.loader import load_tracks
from generator.tracks.model import Track

# Statuses nginx produces under its own numbers, answered with the body of the standard status.
REMAPPED = {494: 431, 497: 400}
REMAPPED_WHY = {494: "request header too large: nginx's private code for 431",
                497: "plain HTTP sent to the TLS port"}
# The frontal's own 502/504 mean "no replica answered": spec §4.1 names the 503 body for that.
FRONTAL_REMAPPED = {502: 503, 504: 503}
FRONTAL_REMAPPED_WHY = {502: "no replica could be reached: the corpus is unavailable",
                        504: "no replica answered in time: the corpus is unavailable"}
ABSENT_PLACEHOLDER = "/corpus-absent-path-placeholder"


@dataclass(frozen=True)
class ErrorPage:
    status: int
    text: str  # quoted nginx return text




@dataclass(frozen=True)
class Served:
    """One track as the vhost serves it: its definition, its proven manifest, its build folder."""

    track: Track
    manifest: Manifest
    build: Path


def served_tracks(root: Path, role: str, expect: str | None) -> list[Served]:
    """Every track of ``root``, its manifest proven against its build (a replica) or read (a frontal).

    The first track owns the ``/_systeme`` bodies; the others must serve the very same bytes there, since
    an error answer cannot know which track a broken request was meant for."""
    tracks = load_tracks(root)
    every = [track.places for track in tracks]
    manifests = prove_release(root, expect, every) if role == "replica" \
        else [Manifest.load(root, places.manifest) for places in every]
    served = [Served(track, manifest, root / track.places.build)
              for track, manifest in zip(tracks, manifests, strict=True)]
    first = {e.path: e.sha256 for e in served[0].manifest.of_kind("systeme")}
    for other in served[1:]:
        for entry in other.manifest.of_kind("systeme"):
            if first.get(entry.path) != entry.sha256:
                raise RenderError(f"{other.track.trees.manifest}: {entry.path} of the track {other.track.piste} "
                                  f"differs from the track {served[0].track.piste}'s: tracks served by one vhost "
                                  "share the /_systeme bodies (give them the same systeme.yaml)")
    return served


def error_pages(root: Path, manifest: Manifest, skip: tuple[int, ...], build: str) -> list[ErrorPage]:
    """One error location per ``/_systeme`` body but those in ``skip``, each checked against the manifest and
    read from ``root/build``, the build of the track whose manifest it is."""
    entries = {e.status: e for e in manifest.of_kind("systeme") if e.status is not None}
    missing = sorted(int(s) for s in REQUIRED_SYSTEME if int(s) not in entries)
    if missing:
        raise RenderError(f"the manifest has no /_systeme body for status {missing}; the vhost answers them")
    return [ErrorPage(status, quote_text(entries[status].read_checked(root / build)))
            for status in sorted(entries) if status not in skip]


def absent_template(served: list[Served]) -> tuple[str, bool]:
    """The quoted return text of the existe:false body, with ``${uri}`` in place of the path.

    Also proves that the template reproduces every declared absent of every track byte for byte, so that
    an identifier nobody declared and one the corpus cites are answered by the same documented function.
    """
    for one in served:
        for entry in one.manifest.of_kind("absent"):
            if body_bytes(absent_body(entry.path)) != entry.read_checked(one.build):
                raise RenderError(f"declared absent {entry.path}: its file differs from the absent "
                                  "template (generator.contract.bodies.absent_body); rebuild")
    data = body_bytes(absent_body(ABSENT_PLACEHOLDER))
    return quote_text(data, ABSENT_PLACEHOLDER, "uri"), needs_dollar(data)

