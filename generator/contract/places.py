"""Where one track's published files live in a checkout: the folders the freeze and the scorer read.

The contract layer knows no track; a :class:`Places` is what a track (``track.yaml``, ``arbres`` and
``bareme``) tells it: its build, manifest, season and freeze folders and its frozen barème section.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Places:
    """One track's published files, relative to the checkout."""

    piste: str
    build: str
    manifest: str
    season: str
    freeze: str
    bareme_section: str  # "conformite-bareme-v3"
    bareme_file: str  # the byte-exact section, checkout-relative
    bareme_sha256: str  # its published SHA-256
    served_record: str = ""  # the canonical path the freeze record is served at, once it exists
    trust_layer_key: str | None = None  # pinned in track.yaml: the key the anchor's signature is checked against

    @property
    def record(self) -> Path:
        """The freeze record."""
        return Path(self.freeze) / "record.json"

    @property
    def anchor(self) -> Path:
        """The published anchor of the record (``corpus freeze-anchor``): the proof, the pinned key."""
        return Path(self.freeze) / "anchor.json"

    @property
    def key_file(self) -> Path:
        return Path(self.season) / "cle.json"

    @property
    def tasks_file(self) -> Path:
        return Path(self.season) / "taches.json"

    @property
    def manifest_file(self) -> Path:
        return Path(self.manifest) / "manifest.json"
