"""The générique track (spec §6): its world, its season and its scoring, beside conformité in the checkout.

The season check proves the key against the evaluator and the panel (``make test`` runs it); these tests
hold what the issue promises around it, each derived apart from the code under test: the verdict shape
validated at entry, every amount a string in the référentiel's format, counterfactual twins that differ
by one condition, the graph's option resources, two agents that never saw the key scored 10/10, one nginx
serving both tracks with conformité's bytes unchanged, and a freeze of one track that leaves the other
untouched.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from pathlib import Path
from typing import Any

from cli_run import Ran, run_corpus
from nginx_server import NginxServer, private_folder
from trackfix import ROOT, copy_tracks, digests

from generator.contract.manifest import Manifest
from generator.reading.graph import task_graph
from generator.reading.reader import CorpusReader
from generator.reading.task import Task
from generator.score import make_submission
from generator.tracks.loader import track_named

TRACK = track_named(ROOT, "generique")
BUILD = ROOT / TRACK.trees.build
AMOUNT = re.compile(r"(0|[1-9][0-9]*)\.[0-9]{2}")
COUNT = re.compile(r"0|[1-9][0-9]*")


def corpus(root: Path, *args: str) -> Ran:
    return run_corpus(*args, "--root", str(root), cwd=root)


def served(path: str) -> Any:
    return json.loads((BUILD / (path.lstrip("/") + ".json")).read_bytes())


def statements() -> dict[str, dict[str, Any]]:
    data = json.loads((ROOT / TRACK.trees.season / "taches.json").read_bytes())
    return {t["id"]: t for t in data["taches"]}


def test_every_path_of_the_track_is_under_its_prefix_and_never_a_conformite_path() -> None:
    manifest = Manifest.load(ROOT, TRACK.trees.manifest)
    conformite = Manifest.load(ROOT, "manifest/conformite")
    paths = {e.path for e in manifest.of_kind("resource")} | {e.path for e in manifest.of_kind("absent")}
    assert paths and all(p.startswith("/generique/") for p in paths)
    assert not paths & {e.path for e in conformite.entries}


def test_amounts_quantities_and_days_are_strings_in_the_referentiel_format() -> None:
    """No JSON number anywhere in the track's build; prices match d+.dd, counts digits only (§6.2)."""
    seen = {"amount": 0, "count": 0}

    def walk(value: Any, key: str = "") -> None:
        assert not isinstance(value, int | float) or isinstance(value, bool), f"{key}: a JSON number"
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif key in ("prix_unitaire_ht", "prix_catalogue_ht"):
            assert AMOUNT.fullmatch(value), (key, value)
            seen["amount"] += 1
        elif key in ("quantite", "valable_jours", "delai_livraison_jours", "quantite_maximale"):
            assert COUNT.fullmatch(value), (key, value)
            seen["count"] += 1

    for file in BUILD.rglob("*.json"):
        walk(json.loads(file.read_bytes()))
    assert seen["amount"] >= 30 and seen["count"] >= 40


def test_a_product_reference_is_the_end_of_its_url_and_each_supplier_lists_its_products() -> None:
    products = sorted((BUILD / "generique" / "produits").glob("*.json"))
    assert len(products) >= 15
    for file in products:
        doc = json.loads(file.read_bytes())
        if doc["existe"] is False:  # the catalogue's absent reference (P1)
            continue
        assert doc["reference"] == file.stem == doc["ressource"].rsplit("/", 1)[1]
        assert doc["ressource"] in served(doc["fournisseur"])["references"]


def test_the_verdict_shape_is_validated_at_entry(tmp_path: Path) -> None:
    manifest = Manifest.load(ROOT, TRACK.trees.manifest)
    claims = [(f"/generique/produits/{p}", "/tarif/prix_unitaire_ht", price)
              for p, price in (("PRD-31024", "164.00"), ("PRD-31057", "171.00"), ("PRD-31089", "298.00"))]
    folder = tmp_path / "soumissions"
    folder.mkdir()
    for n, verdict in enumerate(("PRD-1", "conforme", "prd-31024", "PRD-31024 ", "aucune_option_valide",
                                 "PRD-31057")):
        submission = make_submission(manifest, f"gen-0{n + 1}", verdict, claims, piste="generique")
        (folder / f"{n}.json").write_text(json.dumps(submission), "utf-8")
    result = corpus(ROOT, "score", "--track", "generique", str(folder))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    on_verdict = {line.split()[0] for line in lines if " rejet: " in line and "/verdict" in line}
    assert on_verdict == {"gen-01", "gen-02", "gen-03", "gen-04"}, result.stdout
    rows = {line.split()[0]: line.split()[1] for line in lines if line.startswith("gen-0")}
    assert rows["gen-05"] != "rejetee_entree" and rows["gen-06"] != "rejetee_entree", result.stdout


def test_counterfactual_twins_differ_by_the_condition_the_barème_says() -> None:
    """Five categories, two tasks each; a twin moves one condition (two for the P4 pair: date and deadline)."""
    tasks = statements()
    twins = {("gen-01", "gen-02"): {"quantite"}, ("gen-03", "gen-04"): {"date_commande"},
             ("gen-05", "gen-06"): {"date_commande", "livraison_au_plus_tard"},
             ("gen-07", "gen-08"): {"budget_unitaire_ht"}, ("gen-09", "gen-10"): {"budget_unitaire_ht"}}
    for (a, b), fields in twins.items():
        differ = {f for f in TRACK.statement_fields if tasks[a][f] != tasks[b][f]}
        assert differ == fields, (a, b, differ)
    key = json.loads((ROOT / TRACK.trees.season / "cle.json").read_bytes())["taches"]
    assert [key[a]["verdict"] != key[b]["verdict"] for a, b in twins] == [True] * 5


def test_the_graph_of_a_task_counts_only_product_sheets_as_its_own() -> None:
    reader = CorpusReader(BUILD, TRACK)
    t = statements()["gen-07"]
    graph = task_graph(reader, Task("gen-07", tuple((f, t[f]) for f in TRACK.statement_fields)))
    assert graph.common == {f"/generique/catalogues/gants-de-protection/{n}" for n in (1, 2)}
    assert graph.proper == {f"/generique/produits/PRD-{n}" for n in (34012, 34038, 34061, 34095)}
    assert graph.shared == {"/generique/fournisseurs/FRN-4306", "/generique/fournisseurs/FRN-4339"}
    assert "/generique/referentiel" not in graph and "/generique/produits/PRD-31024" not in graph


def test_one_nginx_serves_both_tracks_with_conformite_unchanged() -> None:
    with private_folder("corpus-generique-") as folder:  # workers can read it, wherever the checkout lives
        root = folder / "served"
        for name in ("build", "manifest"):  # every track's build and manifest
            shutil.copytree(ROOT / name, root / name)
        copy_tracks(root, tracks=("conformite", "generique"))
        root.chmod(0o755)
        serve_both(root)


def serve_both(root: Path) -> None:
    with NginxServer(build_root=root) as server:
        for path in ("/generique/produits/PRD-33077", "/generique/catalogues/gants-de-protection/2",
                     "/generique/referentiel"):
            answer = server.request(path)
            assert (answer.status, answer.body) == (200, (BUILD / (path.lstrip("/") + ".json")).read_bytes())
        absent = server.request("/generique/produits/PRD-34038")
        assert absent.status == 200 and json.loads(absent.body)["existe"] is False
        entity = server.request("/entites/ENT-1066")
        assert entity.body == (ROOT / "build/conformite/entites/ENT-1066.json").read_bytes()
        assert server.request("/generique/produits/PRD-33077", secret=None).status == 403
        assert server.request("/generique/gel").status == 404
        result = corpus(ROOT, "verify", "--url", server.base_url, "--secret-file", str(server.secret_file))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "corpus verify (conformite): OK" in result.stdout
        assert "corpus verify (generique): OK" in result.stdout


def test_freezing_one_track_leaves_every_byte_of_the_other(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for name in ("corpus_src", "season_src", "build", "manifest", "season"):  # every track's, each kind
        shutil.copytree(ROOT / name, root / name)
    copy_tracks(root, tracks=("conformite", "generique"))
    before = digests(root, "build", "manifest", "season")
    salt = tmp_path / "salt.hex"
    salt.write_text("ab" * 32 + "\n", "utf-8")
    result = corpus(root, "freeze", "--track", "generique", "--salt-file", str(salt))
    assert result.returncode == 0, result.stderr
    assert (root / "freeze/generique/record.json").is_file() and not (root / "freeze/conformite").exists()
    assert digests(root, "build", "manifest", "season") == before
    record = json.loads((root / "freeze/generique/record.json").read_bytes())
    manifest = root / "manifest/generique/manifest.json"
    assert record["manifest_hash"] == hashlib.sha256(manifest.read_bytes()).hexdigest()
    listed = {t["piste"]: t for t in json.loads(corpus(root, "tracks", "--json").stdout)}
    assert listed["generique"]["bareme_sha256"] == hashlib.sha256((
        root / "tracks" / "generique" / "generique-bareme-v1.txt")
                                                                   .read_bytes()).hexdigest()


def test_the_independent_agents_import_nothing_of_the_evaluator() -> None:
    """They are written from the served référentiel: importing the evaluator would make them its copy."""
    source = (ROOT / "generator" / "track_code" / "generique" / "independent.py").read_text("utf-8")
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports and not any("evaluator" in line or "generator.reading.founding" in line for line in imports)


def test_evaluate_and_graph_work_on_the_track(tmp_path: Path) -> None:
    """The author's tools know the track from the task id (no --track): the evaluator's reading of a task,
    and its drawing, into the track's own folder."""
    evaluated = run_corpus("evaluate", "gen-06", "--root", str(ROOT), cwd=ROOT)
    assert evaluated.returncode == 0, evaluated.stderr
    assert "verdict : aucune_option_valide" in evaluated.stdout
    assert "/generique/annexes/ANX-6131 /du" in evaluated.stdout  # the annex that blocks, as a founding fact
    assert "corpus evaluate (generique): 1 task(s)" in evaluated.stderr
    out = tmp_path / "graphs"
    drawn = run_corpus("graph", "gen-06", "--root", str(ROOT), "--out", str(out))
    assert drawn.returncode == 0, drawn.stderr
    assert "corpus graph (generique): 1 task(s) drawn" in drawn.stderr
    assert not (out / "conformite").exists()
    dot = (out / "generique" / "gen-06.dot").read_text("utf-8")
    assert "/generique/annexes/ANX-6131" in dot and "Fiches produit (ressources d'option)" in dot


def test_an_impossible_date_in_the_track_s_sources_or_statements_is_one_line(tmp_path: Path) -> None:
    """A date field of this track is not named date_*: the validator knows a date by its shape."""
    root = tmp_path / "repo"
    for name in ("corpus_src/generique", "season_src/generique"):
        shutil.copytree(ROOT / name, root / name)
    copy_tracks(root, tracks=("generique",))
    sheet = root / "corpus_src/generique/produits/PRD-32011.yaml"
    sheet.write_text(sheet.read_text("utf-8").replace("fin_validite: 2026-11-15", "fin_validite: 2026-11-31"),
                     "utf-8")
    checked = corpus(root, "check")
    assert checked.returncode == 1
    assert "corpus_src/generique/produits/PRD-32011.yaml:13:3: tarif.fin_validite: '2026-11-31' is not a real " \
           "calendar date" in checked.stderr and "Traceback" not in checked.stderr
    tasks = root / "season_src/generique/taches.yaml"
    tasks.write_text(tasks.read_text("utf-8").replace("livraison_au_plus_tard: 2026-11-30",
                                                      "livraison_au_plus_tard: 2026-11-31", 1), "utf-8")
    season = corpus(root, "build-season")
    assert season.returncode != 0 and "Traceback" not in season.stderr
    assert "taches[0].livraison_au_plus_tard: '2026-11-31' is not a real calendar date" in season.stderr
