"""Nothing served changes by accident: each track's manifest against the one served before the checkout moved
to ``<kind>/<piste>`` (issue 38), every difference declared with its reason.

``fixtures/served-before-move/<piste>.manifest.json`` are the manifests the last commit of the old layout
served, copied byte for byte from git (``git show bed23d1:manifest/manifest.json`` and
``...:generique/manifest/manifest.json``), never written by the code under test. A manifest names every
canonical URL and every body's length and SHA-256, so the two being equal means every URL and every byte
served is the same; the build's own test (``test_build.py``) holds the files to their manifest, and the
release name is a function of the manifest hashes alone. A body changed since on purpose (a defect, an issue
that asks) is declared in ``CHANGED`` with why; a declaration that no longer differs is refused too, so the
list says exactly what moved.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from trackfix import ROOT

from generator.tracks.loader import load_tracks

BEFORE = Path(__file__).resolve().parents[1] / "fixtures" / "served-before-move"
# The manifest hashes the old layout published (CONTRACT §3: SHA-256 of manifest.json), as its commit said.
BEFORE_HASHES = {"conformite": "0f2807eb9ad17f9b163a7ab93faec42d00607fc4463c77c26f16b07f487cc68e",
                 "generique": "66f7bc00b760e1f408e05d692b6a6249a54a22cdb55866152ca41bebab3ab1da"}
# Canonical path -> why its body changed since the move, per track. Empty: the move changed nothing served.
_STATES = ("issue 42: the référentiel states what may be asserted (generated from the scorer's table), its "
           "section named")
_REGISTER = "issue 42: the register states its 30-day renewal period before a lapsed registration is withdrawn"
_NOTICE = "issue 42: the catalogue notice states C6 with its precedence clause"
_LAPSED = ("/agrements/AGR-4719", "/agrements/AGR-5245", "/agrements/AGR-6681", "/agrements/AGR-6763")
_NOTICES = tuple(f"/generique/catalogues/{page}" for page in (
    "ecrans-bureautiques/1", "gants-de-protection/1", "gants-de-protection/2", "luminaires-led/1",
    "rayonnages-metalliques/1", "sieges-de-bureau/1"))
CHANGED: dict[str, dict[str, str]] = {
    "conformite": {
        "/referentiel": f"{_STATES}; conf-07's cause of indeterminable glossed",
        **dict.fromkeys(_LAPSED, _REGISTER),
        "/attestations/ATT-8386": "issue 42: the attestation as issued, no date after its issue, no corpus path",
        "/avenants/AVN-7247": "issue 42: the avenant states the exclusion it makes and from when",
    },
    "generique": {
        "/generique/referentiel": f"{_STATES}; §6.7's element patterns",
        **dict.fromkeys(_NOTICES, _NOTICE),
        "/generique/produits/PRD-35054": "issue 42: the tariff's observations explain the low catalogue price",
    },
}


def _entries(data: bytes) -> dict[str, dict[str, object]]:
    return {e["path"]: e for e in json.loads(data)["resources"]}


@pytest.mark.parametrize("piste", sorted(BEFORE_HASHES))
def test_the_reference_is_the_manifest_the_old_layout_published(piste: str) -> None:
    data = (BEFORE / f"{piste}.manifest.json").read_bytes()
    assert hashlib.sha256(data).hexdigest() == BEFORE_HASHES[piste]


@pytest.mark.parametrize("piste", sorted(BEFORE_HASHES))
def test_every_served_url_and_body_is_the_one_before_the_move_or_a_declared_change(piste: str) -> None:
    track = next(t for t in load_tracks(ROOT) if t.piste == piste)
    now = (ROOT / track.places.manifest_file).read_bytes()
    before = (BEFORE / f"{piste}.manifest.json").read_bytes()
    declared = CHANGED[piste]
    if not declared:
        assert now == before, f"{track.places.manifest_file} differs from the manifest served before the move"
        return
    old, new = _entries(before), _entries(now)
    assert sorted(old) == sorted(new), "a canonical URL appeared or disappeared"
    assert {k: v for k, v in json.loads(now).items() if k != "resources"} == \
        {k: v for k, v in json.loads(before).items() if k != "resources"}
    differ = sorted(path for path in new if new[path] != old[path])
    assert differ == sorted(declared), ("bodies changed that are not declared, or declared that did not change: "
                                        f"{sorted(set(differ) ^ set(declared))}")
    for path in differ:  # only the bytes moved: the URL, its kind and its request hash are the same
        assert {k: new[path].get(k) for k in ("kind", "request_hash")} == \
            {k: old[path].get(k) for k in ("kind", "request_hash")}, path
