"""The checkout's tracks for the tests: the conformité track loaded once, and a copy for scratch roots.

A scratch root (a copied build, a fixture corpus) is a checkout too: its commands read the tracks from
``ROOT/tracks/``, so :func:`copy_tracks` puts them beside what a test copies.
"""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from generator.tracks.loader import TRACK_FILE, TRACKS_DIR, track_named

ROOT = Path(__file__).resolve().parent.parent
CONFORMITE = track_named(ROOT, "conformite")
GENERIQUE = track_named(ROOT, "generique")
ESSAI = ROOT / "tests" / "fixtures" / "essai"  # a small third track of the tests only


def copy_tracks(dest: Path, source: Path = ROOT, tracks: tuple[str, ...] = ("conformite",), *,
                bareme: bool = True) -> None:
    """Copy the named tracks of ``source/tracks`` to ``dest/tracks`` (a no-op when already there), each with
    its barème section (``tracks/<piste>/<section>.txt``); ``bareme=False`` leaves the section out, for a
    test of a missing one.

    A scratch root holds the sources of the tracks a test works on, conformité's by default; a track
    copied without its sources would make ``corpus build`` (every track) fail on what the test left out.
    A checkout declares one primary track (``principale``): when the tracks copied leave ``dest`` with none
    (générique alone), the first one copied says it, as its checkout's own definition would."""
    for name in tracks:
        if not (dest / TRACKS_DIR / name).exists():
            shutil.copytree(source / TRACKS_DIR / name, dest / TRACKS_DIR / name)
            if not bareme:
                (dest / track_named(source, name).bareme.file).unlink()
    definitions = sorted((dest / TRACKS_DIR).glob(f"*/{TRACK_FILE}"))
    if definitions and not any(_declares_primary(file) for file in definitions):
        first = dest / TRACKS_DIR / tracks[0] / TRACK_FILE
        first.write_text(first.read_text("utf-8") + "principale: true\n", "utf-8")


def _declares_primary(file: Path) -> bool:
    return any(line.strip() == "principale: true" for line in file.read_text("utf-8").splitlines())


def scratch_checkout(dest: Path, trees: Iterable[str], tracks: tuple[str, ...] = ("conformite",)) -> Path:
    """A scratch checkout at ``dest``: the checkout's ``trees`` that exist (sources, builds...) and the
    definitions of ``tracks`` (:func:`copy_tracks`), for a test that edits them as an author would."""
    for tree in trees:
        if (ROOT / tree).is_dir():
            shutil.copytree(ROOT / tree, dest / tree)
    copy_tracks(dest, tracks=tracks)
    return dest


def essai_checkout(root: Path) -> Path:
    """The repository's conformité track and its sources, plus the essai track, in one scratch checkout."""
    for name in ("corpus_src/conformite", "season_src/conformite"):
        shutil.copytree(ROOT / name, root / name)
    copy_tracks(root)
    for name in ("tracks/essai", "corpus_src/essai", "season_src/essai"):
        shutil.copytree(ESSAI / name, root / name)
    return root


def collection_schema(name: str, title: str, fields: dict[str, Any]) -> dict[str, Any]:
    """A new collection's JSON Schema as docs/tracks.md writes one: an object of exactly ``fields``, every one
    required, after its ``id`` (read from the sources, never served)."""
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"urn:proveit-corpus:{name}",
            "title": title, "type": "object", "required": ["id", *fields], "additionalProperties": False,
            "properties": {"id": {"type": "string", "x-source-only": True}, **fields}}


def digests(root: Path, *folders: str) -> dict[str, str]:
    """Every file below ``root/<folder>``, by its path from ``root`` and its SHA-256."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for folder in folders for p in sorted((root / folder).rglob("*")) if p.is_file()}


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The paths of :func:`digests` added, removed or changed between two readings."""
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))


# The conformité track's shapes, by the names the tests read (``import trackfix as col``).
ENTITES, AGREMENTS, ATTESTATIONS, AVENANTS, BENEFICIAIRES, LISTES_AGREES, MESURES = (
    CONFORMITE.collection(name) for name in ("entites", "agrements", "attestations", "avenants", "beneficiaires",
                                             "listes-agrees", "mesures-restrictives"))
COLLECTIONS = CONFORMITE.collections
REFERENTIEL_PATH, CATALOGUE_PATH = CONFORMITE.referentiel, CONFORMITE.catalogue
collection_of = CONFORMITE.collection_of


def liste_agrees_page_path(activite: str, page: str) -> str:
    return LISTES_AGREES.path(activite=activite, page=page)


def mesures_page_path(page: str) -> str:
    return MESURES.path(page=page)


def beneficiaires_page_path(entity_id: str, page: str) -> str:
    return BENEFICIAIRES.path(proprietaire=entity_id, page=page)
