"""What an author can get wrong in ``tracks/<piste>/track.yaml``: each is one line naming the file, the line and
the field, through the real command, never a traceback or a hang."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from cli_run import Ran, corpus_process, run_corpus
from trackfix import ROOT, copy_tracks

from generator.tracks.model import sample

DEFINITION = "tracks/conformite/track.yaml"


def line_of(text: str, file: str = DEFINITION) -> int:
    """The line of the committed definition that holds ``text`` once: messages name it."""
    lines = [n for n, line in enumerate((ROOT / file).read_text("utf-8").splitlines(), 1) if text in line]
    assert len(lines) == 1, text
    return lines[0]


def corpus(root: Path, *args: str) -> Ran:
    return run_corpus(*args, "--root", str(root), cwd=root)


def checkout(tmp_path: Path, old: str = "", new: str = "") -> Path:
    root = tmp_path / "copy-named-anything"
    shutil.copytree(ROOT / "corpus_src/conformite", root / "corpus_src/conformite")
    copy_tracks(root)
    definition = root / DEFINITION
    text = definition.read_text("utf-8")
    if old:
        assert text.count(old) == 1, old
        definition.write_text(text.replace(old, new), "utf-8")
    return root


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("piste: conformite", "piste: [conformite",
     f"{DEFINITION}:5:6: YAML syntax: while parsing a flow sequence"),
    ('{champ: "agrements[]", vers: agrements, retour: entite}', '{champ: "agrements[]", vers: agremens}',
     f"{DEFINITION}:{line_of('vers: agrements, retour: entite')}:32: collections[0].liens[0].vers: 'agremens' "
     f"is not a collection of this track"),
    ('motifs: {id: "ENT-[0-9]{4,6}"}', 'motifs: {ident: "ENT-[0-9]{4,6}"}',
     "collections[0].chemin: {id} has no pattern under motifs"),
    ("gel_servi: /gel", "gel_servi: /catalogue",
     "gel_servi: referentiel, catalogue and gel_servi must be three different paths"),
    ("gel_servi: /gel", "gel_servi: /entites/ENT-0001",
     "gel_servi: /entites/ENT-0001 has the shape of the collection entites"),
    ("piste: conformite", "piste: autre", "piste: the folder must be named autre after the track"),
    ("bareme:\n", "bareme_:\n", "bareme_: unknown field"),
    ("    schema: entites\n", "    schema: entites\n    egal_au_chemin: {denomination: ident}\n",
     "collections[0].egal_au_chemin.denomination: {ident} is not a placeholder of /entites/{id}"),
    ("memes: [activite]", "memes: [activit]",
     f"{DEFINITION}:{line_of('memes: [activite]')}:72: collections[5].liens[0].memes[0]: 'activit' is not a "
     f"field of the collection "
     "listes-agrees (schemas/listes-agrees.schema.json) nor agrements (schemas/agrements.schema.json)"),
    ("    schema: entites\n", "    schema: entites\n    egal_au_chemin: {denominatio: id}\n",
     f"{DEFINITION}:{line_of('    schema: entites') + 1}:22: collections[0].egal_au_chemin.denominatio: "
     f"'denominatio' is not a field of the "
     "collection entites"),
    ("debut: date_debut, fin: date_fin_validite}", "debut: date_debut.jour, fin: date_fin_validite}",
     "ordres_de_dates[0].debut: 'date_debut.jour' is not a field of the collection agrements"),
    ("debut: date_debut, fin: date_fin_validite}", "debut: Date-Debut, fin: date_fin_validite}",
     "ordres_de_dates[0].debut: 'Date-Debut' is not a field path: write field names joined by points, as "
     '"tarif.debut_validite"'),
    ("cle_du_corpus: corpus\n", "cle_du_corpus: corpus\narbres: {build: build}\n",  # <kind>/<piste>, derived
     "arbres: unknown field"),
    ("principale: true\n", "principale: oui\n", "principale: 'oui' is not of type 'boolean'"),
])
def test_a_broken_definition_is_one_line_naming_its_place(tmp_path: Path, old: str, new: str,
                                                          expected: str) -> None:
    result = corpus(checkout(tmp_path, old, new), "check")
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert any(expected in line and line.startswith(DEFINITION) for line in result.stderr.splitlines()), \
        result.stderr


def test_a_nested_field_the_schema_lacks_is_one_line_and_a_nested_one_it_has_passes(tmp_path: Path) -> None:
    """A dotted date field goes down the schema's nested ``properties``: ``tarif.fin_validite`` is there,
    ``tarif.debut_validit`` is not (a typo that would otherwise check no date order at all)."""
    root = tmp_path / "checkout"
    copy_tracks(root, tracks=("generique",))
    definition = root / "tracks/generique/track.yaml"
    text = definition.read_text("utf-8")
    assert text.count("debut: tarif.debut_validite, fin: tarif.fin_validite") == 1
    definition.write_text(text.replace("debut: tarif.debut_validite", "debut: tarif.debut_validit"), "utf-8")
    result = corpus(root, "check")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    named = [line for line in result.stderr.splitlines() if line.startswith("tracks/")]
    line = line_of("debut: tarif.debut_validite", "tracks/generique/track.yaml")
    assert named == [f"tracks/generique/track.yaml:{line}:28: ordres_de_dates[0].debut: 'tarif.debut_validit' is "
                     "not a field of the collection produits (schemas/produits.schema.json)"], result.stderr


def test_no_tracks_folder_and_an_unknown_track_are_one_line(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    unknown = corpus(root, "check", "--track", "autre")
    assert unknown.returncode == 1
    assert "--track: no track 'autre' in tracks/ (tracks: conformite)" in unknown.stderr
    shutil.rmtree(root / "tracks")
    missing = corpus(root, "check")
    assert missing.returncode == 1 and "tracks/: no track: the checkout needs tracks/<piste>/track.yaml" in \
        missing.stderr and "Traceback" not in missing.stderr


def test_a_fifo_named_track_yaml_does_not_hang(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    (root / DEFINITION).unlink()
    os.mkfifo(root / DEFINITION)
    result = corpus_process("tracks", "--root", str(root), cwd=root, timeout=60)  # a hang would be its timeout
    assert result.returncode == 1
    assert f"{DEFINITION}: cannot read: not a regular file" in result.stderr


@pytest.mark.parametrize(("pattern", "example"), [("[a-z]{1,3}", "abc"), ("REF-[0-9]{1,2}", "REF-01"),
                                                  ("[a-z]+", "abcd"), ("ENT-[0-9]{4,6}", "ENT-0123")])
def test_a_message_example_fits_a_repeat_whose_most_is_below_four(pattern: str, example: str) -> None:
    """A ``{1,n}`` repeat gives min(4, n) characters: four would not match, and the example would fall back
    to the pattern itself."""
    assert sample(pattern) == example


@pytest.mark.parametrize("declared", [(), ("conformite", "generique")])
def test_a_checkout_declares_exactly_one_primary_track(tmp_path: Path, declared: tuple[str, ...]) -> None:
    """The primary track (served at the root with /_systeme, taken without --track) is said in one
    definition: none, or two, is one line naming those that say it, before anything is read."""
    root = tmp_path / "checkout"
    copy_tracks(root, tracks=("conformite", "generique"))
    for piste in ("conformite", "generique"):
        definition = root / "tracks" / piste / "track.yaml"
        text = definition.read_text("utf-8").replace("principale: true\n", "")
        definition.write_text(text + ("principale: true\n" if piste in declared else ""), "utf-8")
    result = corpus(root, "tracks")
    said = f"{len(declared)} do ({', '.join(declared)})" if declared else "none does"
    lines = result.stderr.splitlines()
    assert result.returncode == 1 and len(lines) == 2 and lines[1] == "corpus tracks: 1 error(s)", lines
    assert lines[0].startswith(
        "tracks/: principale: exactly one track must be the primary one") and said in lines[0]
