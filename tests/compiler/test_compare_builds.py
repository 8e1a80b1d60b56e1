"""bench/compare_builds.py, the check of a realism pass: it lets non-probant fields and the prose of /referentiel
change, and names every probant field, consumed field or rule that changed; with the track's season beside the
build, a probant change that no founding fact, trap or rule uses is allowed."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from generator.tracks.loader import track_named
from generator.tracks.model import Track

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "compare_builds.py"


CONFORMITE, GENERIQUE = track_named(ROOT, "conformite"), track_named(ROOT, "generique")
# What each track's check reads: its build and manifest; générique's season and season sources too.
TREES = {"conformite": (CONFORMITE.trees.build, CONFORMITE.trees.manifest),
         "generique": (GENERIQUE.trees.build, GENERIQUE.trees.manifest, GENERIQUE.trees.season,
                       GENERIQUE.trees.season_sources)}


def _copy(target: Path, track: Track = CONFORMITE) -> Path:
    for tree in ("tracks", *TREES[track.piste]):
        shutil.copytree(ROOT / tree, target / tree)
    return target


def _edit(root: Path, path: str, change: Callable[[Any], None], track: Track = CONFORMITE) -> None:
    """Change one built body and keep its manifest entry's sha256 in step, as a rebuild would."""
    manifest_file = root / track.trees.manifest / "manifest.json"
    manifest = json.loads(manifest_file.read_bytes())
    entry = next(e for e in manifest["resources"] if e["path"] == path)
    file = root / track.trees.build / entry["file"]
    body = json.loads(file.read_bytes())
    change(body)
    data = json.dumps(body, ensure_ascii=False, indent=2).encode("utf-8") + b"\n"
    file.write_bytes(data)
    entry["sha256"] = hashlib.sha256(data).hexdigest()
    manifest_file.write_text(json.dumps(manifest), "utf-8")


def _run(before: Path, after: Path, *track: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), "--before", str(before), "--after", str(after), *track],
                          capture_output=True, text=True, timeout=300, check=False)


def _set(pointer: str, value: Any) -> Callable[[Any], None]:
    def change(body: Any) -> None:
        *parents, last = pointer.lstrip("/").split("/")
        node = body
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return change


@pytest.fixture(scope="module")
def before(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _copy(tmp_path_factory.mktemp("before"))


@pytest.fixture
def after(tmp_path: Path) -> Path:
    return _copy(tmp_path / "after")


def test_the_same_build_changes_nothing(before: Path, after: Path) -> None:
    result = _run(before, after)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("0 body(ies) changed, 0 refused change(s)")


@pytest.mark.parametrize(("path", "pointer", "value"), [
    ("/entites/ENT-1066", "/denomination", "Autre Nom Courtage"),
    ("/entites/ENT-1066", "/siege", "1 rue Neuve, 87250 Saint-Ouen-des-Brandes"),
    ("/mesures-restrictives/1", "/entrees/0/motif", "Gel des avoirs — autre décision"),
    ("/referentiel", "/principes/peremption", "Une autre rédaction de la même règle."),
])
def test_a_non_probant_change_is_allowed_and_listed(before: Path, after: Path, path: str, pointer: str,
                                                    value: Any) -> None:
    _edit(after, path, _set(pointer, value))
    result = _run(before, after)
    assert result.returncode == 0, result.stdout
    pattern = "/".join("<n>" if part.isdigit() else part for part in pointer.split("/"))
    assert f"changed {path}: {pattern}\n" in result.stdout
    assert "1 body(ies) changed, 0 refused change(s)" in result.stdout


@pytest.mark.parametrize(("path", "pointer", "value", "refused"), [
    ("/entites/ENT-1066", "/statut", "radiee", "/entites/ENT-1066 /statut: probant field /statut changed"),
    ("/entites/ENT-1066", "/agrements/0", "/agrements/AGR-0001",
     "/entites/ENT-1066 /agrements/0: probant field /agrements changed"),
    ("/mesures-restrictives/1", "/entrees/0/nom", "Autre",
     "/mesures-restrictives/1 /entrees/0/nom: probant field /entrees/<n>/nom changed"),
    ("/referentiel", "/criteres/0/champs", {"/entites/": ["/existe"]},
     "/referentiel /criteres/0/champs/~1entites~1: rule changed"),
    ("/referentiel", "/criteres/1/parametres/statuts_conformes/0", "suspendu",
     "/referentiel /criteres/1/parametres/statuts_conformes/0: rule changed"),
    ("/referentiel", "/principes/dates", None, "/referentiel /principes/dates: not prose changed"),
])
def test_a_probant_or_consumed_change_is_refused(before: Path, after: Path, path: str, pointer: str, value: Any,
                                                 refused: str) -> None:
    _edit(after, path, _set(pointer, value))
    result = _run(before, after)
    assert result.returncode == 1, result.stdout
    assert f"REFUSED {refused}\n" in result.stdout, result.stdout


def test_a_removed_probant_field_and_a_missing_resource_are_refused(before: Path, after: Path) -> None:
    _edit(after, "/agrements/AGR-5454", lambda body: body.pop("date_fin_validite"))
    manifest_file = after / "manifest/conformite/manifest.json"
    manifest = json.loads(manifest_file.read_bytes())
    manifest["resources"] = [e for e in manifest["resources"] if e["path"] != "/avenants/AVN-7520"]
    manifest_file.write_text(json.dumps(manifest), "utf-8")
    result = _run(before, after)
    assert result.returncode == 1
    assert ("REFUSED /agrements/AGR-5454 /date_fin_validite: probant field /date_fin_validite changed"
            in result.stdout)
    assert "REFUSED /avenants/AVN-7520: only in the before build" in result.stdout


# -- a track with its season: a probant change is allowed when nothing uses it -------------------------

@pytest.fixture(scope="module")
def generique_before(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _copy(tmp_path_factory.mktemp("generique-before"), GENERIQUE)


@pytest.fixture
def generique_after(tmp_path: Path) -> Path:
    return _copy(tmp_path / "after", GENERIQUE)


@pytest.mark.parametrize(("path", "pointer", "value"), [
    ("/generique/produits/PRD-33015", "/normes", ["EN 0000-1"]),  # no task of shelving requires a standard
    ("/generique/produits/PRD-33042", "/disponibilite/valable_jours", "10"),  # still holds on gen-05's date
    ("/_systeme/404", "/message", "Une autre rédaction."),
])
def test_a_change_nothing_uses_is_allowed(generique_before: Path, generique_after: Path, path: str, pointer: str,
                                          value: Any) -> None:
    _edit(generique_after, path, _set(pointer, value), GENERIQUE)
    result = _run(generique_before, generique_after, "--track", "generique")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 body(ies) changed, 0 refused change(s)" in result.stdout


@pytest.mark.parametrize(("path", "pointer", "value", "refused"), [
    ("/generique/produits/PRD-31057", "/tarif/prix_unitaire_ht", "172.00",
     "/generique/produits/PRD-31057 /tarif/prix_unitaire_ht: probant field /tarif/prix_unitaire_ht changed: a "
     "founding fact lies on it (/generique/produits/PRD-31057 /tarif/prix_unitaire_ht)"),
    # gen-06: the Ostrale's stock reading would lapse before 2026-12-09, so C4 would set it aside before C7
    ("/generique/produits/PRD-33077", "/disponibilite/valable_jours", "14",
     "task gen-06 is decided otherwise by the reading reference"),
    ("/_systeme/404", "/erreur", "autre", "/_systeme/404 /erreur: error code changed"),
])
def test_a_change_a_fact_or_a_decision_uses_is_refused(generique_before: Path, generique_after: Path, path: str,
                                                       pointer: str, value: Any, refused: str) -> None:
    _edit(generique_after, path, _set(pointer, value), GENERIQUE)
    result = _run(generique_before, generique_after, "--track", "generique")
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"REFUSED {refused}\n" in result.stdout, result.stdout


# arbres key -> (générique's tree today, its name before the trees took the root's names: commit 787620b)
# Where the engine before the one shape <kind>/<piste> kept générique's trees, as its track.yaml's arbres said.
OLD_TREES = {"sources": "generique/corpus_src", "sources_saison": "generique/season_src",
             "build": "generique/build", "manifest": "generique/manifest", "saison": "generique/season",
             "gel": "generique/freeze"}


def test_a_before_checkout_of_an_older_engine_is_read_where_its_track_file_says(tmp_path: Path,
                                                                                generique_after: Path) -> None:
    """Today's loader refuses a track file that lists its trees (``arbres``, before they were derived from
    the kind and the track); the comparison reads them from the before track file as written, and compares
    the bodies there."""
    old = tmp_path / "old"
    shutil.copytree(ROOT / "tracks", old / "tracks")
    track_file = old / "tracks" / "generique" / "track.yaml"
    text = track_file.read_text("utf-8")
    assert "arbres:" not in text, "today's track file lists no trees"
    text += "arbres:\n" + "".join(f"  {key}: {before}\n" for key, before in OLD_TREES.items())
    today = {"build": GENERIQUE.trees.build, "manifest": GENERIQUE.trees.manifest,
        "saison": GENERIQUE.trees.season}
    for key, tree in today.items():
        shutil.copytree(ROOT / tree, old / OLD_TREES[key])
    track_file.write_text(text, "utf-8")
    _edit(generique_after, "/generique/referentiel", _set("/principes/justification", "Reformulé."), GENERIQUE)
    result = _run(old, generique_after, "--track", "generique")
    assert result.returncode == 0, result.stderr
    assert "changed /generique/referentiel: /principes/justification" in result.stdout
    assert result.stdout.strip().endswith("1 body(ies) changed, 0 refused change(s)")
