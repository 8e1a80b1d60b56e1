"""What ``corpus tracks --json`` prints for one track: where freeze and scorer scripts find its files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.tracks.model import Track


def track_listing(track: Track) -> dict[str, Any]:
    """Paths relative to the checkout (the track folder's parent's parent), served paths as served."""
    places = track.places
    folder = Path("tracks") / track.folder.name
    return {
        "piste": track.piste,
        "titre": track.title,
        "principale": track.primary,  # served at the root with /_systeme, taken without --track
        "definition": (folder / "track.yaml").as_posix(),
        "sources": track.trees.sources,
        "sources_saison": track.trees.season_sources,
        "build": track.trees.build,
        "manifest": places.manifest_file.as_posix(),
        "cle": places.key_file.as_posix(),
        "taches": places.tasks_file.as_posix(),
        "gel": places.record.as_posix(),
        "referentiel": track.referentiel,
        "catalogue": track.catalogue,
        "gel_servi": track.record_path,
        "bareme": track.bareme.file,
        "bareme_section": track.bareme.section,
        "bareme_sha256": track.bareme.sha256,
        "collections": [c.name for c in track.collections],
        # the six folders, each <kind>/<piste>: derived from the track's name, never written in track.yaml
        "arbres": {"sources": track.trees.sources, "sources_saison": track.trees.season_sources,
                   "build": track.trees.build, "manifest": track.trees.manifest, "saison": track.trees.season,
                   "gel": track.trees.freeze},
    }
