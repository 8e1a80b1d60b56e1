"""The four recipes of docs/tracks.md, each run as an author would on a scratch copy of the checkout.

Add a collection, make its owner list it back, add an option to a catalogue, add a task: each recipe edits
only the files it names (the test compares every source and definition file before and after), then
``corpus check``, ``build``, ``build-season`` and ``check-season`` pass and a real nginx serves the new build,
which ``corpus verify`` crawls as the proxy does. Every folder comes from the Track (``arbres``), so the
recipes follow the trees wherever they move.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_run import Ran, run_corpus
from nginx_server import NginxServer, private_folder
from trackfix import ROOT, changed, collection_schema, digests, scratch_checkout

from generator.tracks.loader import TRACKS_DIR, track_named

GENERIQUE = track_named(ROOT, "generique")
CONFORMITE = track_named(ROOT, "conformite")
DEFINITION = f"{TRACKS_DIR}/generique/track.yaml"
SCHEMAS = f"{TRACKS_DIR}/generique/schemas"


def corpus(root: Path, *args: str) -> Ran:
    return run_corpus(*args, "--root", str(root), cwd=root)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert text.count(old) == 1, (path, old)
    path.write_text(text.replace(old, new, 1), "utf-8")


def authored(root: Path) -> dict[str, str]:
    """Every file an author writes (definitions, sources, season sources, barème), by SHA-256."""
    return digests(root, TRACKS_DIR, GENERIQUE.trees.sources, GENERIQUE.trees.season_sources,
                   str(Path(GENERIQUE.bareme.file).parent))


@pytest.fixture()
def checkout() -> Iterator[Path]:
    """Both tracks' definitions, générique's sources and trees, conformité's served trees (one nginx serves
    both); 0755 folders, for nginx's workers."""
    with private_folder("corpus-recipe-") as folder:
        trees = [*vars(GENERIQUE.trees).values(), CONFORMITE.trees.build, CONFORMITE.trees.manifest]
        root = scratch_checkout(folder / "root", trees, ("conformite", "generique"))
        for path in [root, *root.rglob("*")]:
            if path.is_dir():
                path.chmod(0o755)
        yield root


def prove(root: Path) -> str:
    """check, build, build-season, check-season, then a real nginx crawled by verify; build's own words."""
    said = ""
    for command in ("check", "build", "build-season", "check-season"):
        result = corpus(root, command, "--track", "generique")
        assert result.returncode == 0, f"corpus {command}:\n{result.stdout}\n{result.stderr}"
        said = result.stderr if command == "build" else said
    with NginxServer(build_root=root) as server:
        result = corpus(root, "verify", "--track", "generique", "--url", server.base_url, "--secret-file",
                        str(server.secret_file))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "corpus verify (generique): OK" in result.stdout or "corpus verify: OK" in result.stdout, \
            result.stdout
    return said


def served(root: Path, path: str) -> dict:
    return json.loads((root / GENERIQUE.trees.build / (path.lstrip("/") + ".json")).read_bytes())


# -- recipe 1: add a collection ----------------------------------------------------------------------------------

CERTIFICATS_SCHEMA = collection_schema(
    "certificats", "A supplier's quality certificate, served at /generique/certificats/<id>",
    {"fournisseur": {"$ref": "urn:proveit-corpus:common#/$defs/path"},
     "norme": {"$ref": "urn:proveit-corpus:common#/$defs/text"},
     "valable_jusqu_au": {"$ref": "urn:proveit-corpus:common#/$defs/date"}})
CERTIFICATS_ENTRY = """  - nom: certificats
    libelle: certificate
    chemin: /generique/certificats/{id}
    motifs: {id: "CRT-[0-9]{4}"}
    schema: certificats
    source: {dossier: fournisseurs, section: certificats, plusieurs: true}
    proprietaire: fournisseurs
    liens:
      - {champ: fournisseur, vers: fournisseurs, appartient: true}
"""


def supplier_file(root: Path) -> tuple[str, str]:
    """The first supplier sheet's source file and its id."""
    folder = GENERIQUE.collection("fournisseurs").source.folder or ""
    first = sorted((root / GENERIQUE.trees.sources / folder).glob("*.yaml"))[0]
    return f"{GENERIQUE.trees.sources}/{folder}/{first.name}", first.stem


def add_collection(root: Path) -> tuple[str, str]:
    """The recipe: one schema file, one entry of ``collections``, the records in their owner's file."""
    lines = (root / DEFINITION).read_text("utf-8").splitlines(keepends=True)
    end = lines.index("ordres_de_dates:\n")  # the end of collections: before the next key and its comments
    while lines[end - 1].startswith("#") or not lines[end - 1].strip():
        end -= 1
    (root / DEFINITION).write_text("".join([*lines[:end], CERTIFICATS_ENTRY, *lines[end:]]), "utf-8")
    schema = json.dumps(CERTIFICATS_SCHEMA, indent=2) + "\n"
    (root / SCHEMAS / "certificats.schema.json").write_text(schema, "utf-8")
    relative, supplier = supplier_file(root)
    with (root / relative).open("a", encoding="utf-8") as file:
        file.write(f"certificats:\n  - id: CRT-0001\n    fournisseur: /generique/fournisseurs/{supplier}\n"
                   "    norme: ISO 9001\n    valable_jusqu_au: 2027-06-30\n")
    return relative, supplier


def test_recipe_add_a_collection(checkout: Path) -> None:
    before = authored(checkout)
    relative, supplier = add_collection(checkout)
    after = authored(checkout)
    assert changed(before, after) == sorted(
        [DEFINITION, f"{SCHEMAS}/certificats.schema.json", relative])
    said = prove(checkout)
    assert served(checkout, "/generique/certificats/CRT-0001") == {
        "ressource": "/generique/certificats/CRT-0001", "existe": True,
        "fournisseur": f"/generique/fournisseurs/{supplier}", "norme": "ISO 9001",
        "valable_jusqu_au": "2027-06-30"}
    assert "served bodies differ from the previous build (1 changed, 1 added): /generique/catalogue, " \
           "/generique/certificats/CRT-0001" in said, said


# -- recipe 2: make its owner list it back ------------------------------------------------------------------------

def test_recipe_make_its_owner_list_it_back(checkout: Path) -> None:
    relative, supplier = add_collection(checkout)
    before = authored(checkout)
    # the link, with its back-link field: the owner lists the record, the record names its owner
    edit(checkout / DEFINITION, '      - {champ: "annexes[]", vers: annexes, retour: fournisseur}\n',
         '      - {champ: "annexes[]", vers: annexes, retour: fournisseur}\n'
         '      - {champ: "certificats[]", vers: certificats, retour: fournisseur}\n')
    # the owner's schema gains the list (not required: the other sheets are served unchanged)
    schema_file = checkout / SCHEMAS / "fournisseurs.schema.json"
    schema = json.loads(schema_file.read_text("utf-8"))
    path = {"$ref": "urn:proveit-corpus:common#/$defs/path"}
    schema["properties"]["certificats"] = {"type": "array", "items": path}
    schema_file.write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n", "utf-8")
    # the owner lists it
    text = (checkout / relative).read_text("utf-8")
    annexes_line = next(line for line in text.splitlines() if line.startswith("  annexes: "))
    listed = "  certificats: [/generique/certificats/CRT-0001]\n"
    edit(checkout / relative, annexes_line + "\n", annexes_line + "\n" + listed)
    after = authored(checkout)
    assert changed(before, after) == sorted(
        [DEFINITION, f"{SCHEMAS}/fournisseurs.schema.json", relative])
    said = prove(checkout)
    sheet = served(checkout, f"/generique/fournisseurs/{supplier}")
    assert sheet["certificats"] == ["/generique/certificats/CRT-0001"]
    assert f"/generique/fournisseurs/{supplier}" in said, said
    # and the back-link is held: a certificate its owner does not list is one error at its fournisseur
    edit(checkout / relative, "  certificats: [/generique/certificats/CRT-0001]\n", "  certificats: []\n")
    result = corpus(checkout, "check", "--track", "generique")
    assert result.returncode == 1
    assert f"certificats[0].fournisseur: /generique/fournisseurs/{supplier} does not list " \
           "/generique/certificats/CRT-0001 in its certificats" in result.stderr, result.stderr


# -- recipe 3: add an option to a catalogue -----------------------------------------------------------------------

def test_recipe_add_an_option_to_a_catalogue(checkout: Path) -> None:
    """A new product sheet at the end of the catalogue of the tasks gen-01 and gen-02, dearer than the others
    (no shortcut picks it) and whose tariff has lapsed: the rule sets it aside (C3), so check-season names
    the founding fact each task's key must now hold."""
    sources, season = checkout / GENERIQUE.trees.sources, checkout / GENERIQUE.trees.season_sources
    products = GENERIQUE.collection("produits")
    catalogues = GENERIQUE.collection("catalogues")
    catalogue = f"{catalogues.source.folder}/sieges-de-bureau.yaml"
    supplier_relative, supplier = supplier_file(checkout)
    before = authored(checkout)
    (sources / (products.source.folder or "") / "PRD-31099.yaml").write_text(
        "id: PRD-31099\nreference: PRD-31099\ndesignation: Siège de bureau à dossier résille\nmarque: Tournelle\n"
        f"categorie: sieges-de-bureau\nfournisseur: /generique/fournisseurs/{supplier}\nnormes: [EN 1335-1]\n"
        "conditionnement: À l'unité\ntarif:\n  prix_unitaire_ht: \"350.00\"\n  devise: EUR\n"
        "  debut_validite: 2026-01-01\n  fin_validite: 2026-06-30\ndisponibilite:\n  quantite: \"500\"\n"
        "  releve_le: 2026-11-02\n  valable_jours: \"30\"\n", "utf-8")
    pages = (sources / catalogue).read_text("utf-8")
    assert pages.count("  - page: ") == 1 and pages.endswith("\n")  # one page: its entries end the file
    (sources / catalogue).write_text(pages + "      - produit: /generique/produits/PRD-31099\n"
                                     "        designation: Siège de bureau à dossier résille\n"
                                     "        marque: Tournelle\n        prix_catalogue_ht: \"350.00\"\n"
                                     "        delai_livraison_jours: \"7\"\n", "utf-8")
    text = (checkout / supplier_relative).read_text("utf-8")
    references = next(line for line in text.splitlines() if line.startswith("  references: ["))
    edit(checkout / supplier_relative, references, references.replace("[", "[/generique/produits/PRD-31099, ", 1))
    # the key: check-season says which fact the rule now derives; each task of the category holds it
    result = corpus(checkout, "check", "--track", "generique")
    assert result.returncode == 0, result.stderr
    assert corpus(checkout, "build", "--track", "generique").returncode == 0
    told = corpus(checkout, "check-season", "--track", "generique")
    assert told.returncode == 1
    assert "the rule derives the founding fact (/generique/produits/PRD-31099, /tarif/fin_validite) = " \
           "\"2026-06-30\" for C3" in told.stderr, told.stderr
    for task in ("gen-01", "gen-02"):
        edit(season / "cle.yaml", f"  {task}:\n", f"  {task}:\n")  # the task is in the key, once
        key = (season / "cle.yaml").read_text("utf-8")
        start = key.index(f"  {task}:\n")
        anchor = key.index("    faits:\n", start) + len("    faits:\n")
        (season / "cle.yaml").write_text(key[:anchor] + "      - ressource: /generique/produits/PRD-31099\n"
                                         "        champ: /tarif/fin_validite\n        valeur: \"2026-06-30\"\n"
                                         "        critere: C3\n" + key[anchor:], "utf-8")
    after = authored(checkout)
    products_file = f"{GENERIQUE.trees.sources}/{products.source.folder}/PRD-31099.yaml"
    assert changed(before, after) == sorted(
        [products_file, f"{GENERIQUE.trees.sources}/{catalogue}", supplier_relative,
         f"{GENERIQUE.trees.season_sources}/cle.yaml"])
    prove(checkout)
    assert served(checkout, "/generique/catalogues/sieges-de-bureau/1")["entrees"][-1]["produit"] == \
        "/generique/produits/PRD-31099"


# -- recipe 4: add a task ----------------------------------------------------------------------------------------

def _block(text: str, start: str, stop: Callable[[str], bool]) -> str:
    """The lines of ``text`` from the line ``start`` to the next line for which ``stop`` holds."""
    lines = text.splitlines(keepends=True)
    first = lines.index(start)
    end = next((i for i in range(first + 1, len(lines)) if stop(lines[i])), len(lines))
    return "".join(lines[first:end])


def test_recipe_add_a_task(checkout: Path) -> None:
    """gen-11, a twin of gen-10 stated on another day: its statement, its key entry, its row in the barème
    section, and track.yaml's copy of the section (SHA-256, bounds, distribution, best constant answer)."""
    season = checkout / GENERIQUE.trees.season_sources
    section = checkout / GENERIQUE.bareme.file
    before = authored(checkout)
    tasks = (season / "taches.yaml").read_text("utf-8")
    statement = _block(tasks, "  - id: gen-10\n", lambda line: line.startswith("  - id: "))
    (season / "taches.yaml").write_text(tasks.rstrip("\n") + "\n" + statement.replace("gen-10", "gen-11"), "utf-8")
    key = (season / "cle.yaml").read_text("utf-8")
    entry = _block(key, "  gen-10:\n", lambda line: line.startswith("  gen-") or not line.startswith(" "))
    assert "verdict: aucune_option_valide" in entry  # a twin of a task without a valid option: a fifth one
    (season / "cle.yaml").write_text(key.replace(entry, entry + entry.replace("  gen-10:", "  gen-11:", 1), 1),
                                     "utf-8")
    edit(section, "| gen-10 | 3 | 6 |\n", "| gen-10 | 3 | 6 |\n| gen-11 | 3 | 6 |\n")
    digest = hashlib.sha256(section.read_bytes()).hexdigest()
    definition = checkout / DEFINITION
    edit(definition, f"sha256: {GENERIQUE.bareme.sha256}", f"sha256: {digest}")
    edit(definition, "    gen-10: [3, 6]\n", "    gen-10: [3, 6]\n    gen-11: [3, 6]\n")
    edit(definition, "repartition: {aucune_option_valide: 4,", "repartition: {aucune_option_valide: 5,")
    edit(definition, "meilleure_constante: [4, 10]", "meilleure_constante: [5, 11]")
    after = authored(checkout)
    assert changed(before, after) == sorted(
        [DEFINITION, GENERIQUE.bareme.file, f"{GENERIQUE.trees.season_sources}/taches.yaml",
         f"{GENERIQUE.trees.season_sources}/cle.yaml"])
    prove(checkout)
    published = json.loads((checkout / GENERIQUE.trees.season / "taches.json").read_bytes())
    assert [t["id"] for t in published["taches"]][-1] == "gen-11"
