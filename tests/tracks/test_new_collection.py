"""Adding a collection to a track touches its definition only: one schema file and one entry of track.yaml.

The new register (``/controles/CTL-<n>``, inspection reports written in the entity's file, each naming its
entity) is validated, compiled, served and cited by the same engine, with no line of code changed. The
test copies the checkout, adds the collection, and compares what changed in ``tracks/`` file by file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import Ran, run_corpus
from trackfix import CONFORMITE, ROOT, changed, collection_schema, digests, scratch_checkout

CONTROLES_SCHEMA = collection_schema(
    "controles", "An inspection report (rapport de contrôle) of an entity, served at /controles/<id>",
    {"entite": {"$ref": "urn:proveit-corpus:common#/$defs/path"},
     "date_controle": {"$ref": "urn:proveit-corpus:common#/$defs/date"},
     "conclusion": {"enum": ["sans-observation", "observations", "injonction"]}})
ENTRY = """  - nom: controles
    chemin: /controles/{id}
    motifs: {id: "CTL-[0-9]{4,6}"}
    schema: controles
    source: {dossier: entites, section: controles, plusieurs: true}
    proprietaire: entites
    liens:
      - {champ: entite, vers: entites, appartient: true}
"""
SECTION = """controles:
  - id: CTL-0410
    entite: /entites/ENT-4102
    date_controle: 2026-03-12
    conclusion: observations
"""


def corpus(root: Path, *args: str) -> Ran:
    return run_corpus(*args, "--root", str(root), cwd=root)


@pytest.fixture()
def checkout(tmp_path: Path) -> Path:
    return scratch_checkout(tmp_path, [CONFORMITE.trees.sources])


def add_collection(root: Path) -> None:
    definition = root / "tracks" / "conformite" / "track.yaml"
    text = definition.read_text("utf-8")
    anchor = "\n# (start, end) date fields"
    definition.write_text(text.replace(anchor, ENTRY.rstrip("\n") + "\n" + anchor, 1), "utf-8")
    schema = root / "tracks" / "conformite" / "schemas" / "controles.schema.json"
    schema.write_text(json.dumps(CONTROLES_SCHEMA, indent=2) + "\n", "utf-8")


def test_a_new_collection_is_one_schema_and_one_entry(checkout: Path) -> None:
    before = digests(checkout, "tracks")
    add_collection(checkout)
    assert changed(before, digests(checkout, "tracks")) == ["tracks/conformite/schemas/controles.schema.json",
                                                            "tracks/conformite/track.yaml"]
    entity = checkout / CONFORMITE.trees.sources / "entites" / "ENT-4102.yaml"
    entity.write_text(entity.read_text("utf-8") + SECTION, "utf-8")

    result = corpus(checkout, "build")
    assert result.returncode == 0, result.stderr
    built = checkout / CONFORMITE.trees.build
    served = json.loads((built / "controles" / "CTL-0410.json").read_text("utf-8"))
    assert served == {"ressource": "/controles/CTL-0410", "existe": True, "entite": "/entites/ENT-4102",
                      "date_controle": "2026-03-12", "conclusion": "observations"}
    catalogue = json.loads((built / "catalogue.json").read_text("utf-8"))
    assert any(r["url"].endswith("/controles/CTL-0410") for r in catalogue["ressources"])
    listed = json.loads(corpus(checkout, "tracks", "--json").stdout)[0]
    assert "controles" in listed["collections"]
    # every other served byte is the committed one: the catalogue alone lists the new document
    rebuilt = digests(checkout, CONFORMITE.trees.build)
    for name, digest in digests(ROOT, CONFORMITE.trees.build).items():
        if name != f"{CONFORMITE.trees.build}/catalogue.json":
            assert rebuilt[name] == digest, name


def test_the_new_collection_is_validated_by_the_same_rules(checkout: Path) -> None:
    add_collection(checkout)
    entity = checkout / CONFORMITE.trees.sources / "entites" / "ENT-4102.yaml"
    wrong = SECTION.replace("entite: /entites/ENT-4102", "entite: /entites/ENT-2751") \
        .replace("conclusion: observations", "conclusion: sans-suite").replace("CTL-0410", "CTL-41")
    entity.write_text(entity.read_text("utf-8") + wrong, "utf-8")
    result = corpus(checkout, "check")
    assert result.returncode == 1
    problems = result.stderr.splitlines()
    assert any("controles[0].id: 'CTL-41' is not an id of /controles/: write one like CTL-0123" in line
               for line in problems), problems  # no report left to show: an example built from the pattern
    assert any("controles[0].conclusion: 'sans-suite' is not one of" in line for line in problems), problems
    assert any("controles[0].entite: /entites/ENT-2751 is not the entity of this file (/entites/ENT-4102)" in line
               for line in problems), problems
