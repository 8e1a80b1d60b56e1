"""A track is data: a second, small track (tests/fixtures/essai) lives beside conformité in one checkout.

Its definition is a track.yaml, its schemas and a short logic.py (one TrackLogic); nothing of the engine knows it.
It is listed by ``corpus tracks``, built and season-checked by the same commands, served by the same
real nginx beside conformité (which keeps its bytes), crawled by ``corpus verify``, evaluated, and its
submissions scored by ``corpus score``. Hashes are the proxy's, computed here from the bytes
(:mod:`generator.contract.hashing` is checked against CONTRACT.md's vectors elsewhere).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_run import Ran, run_corpus
from nginx_server import NginxServer, private_folder
from trackfix import ROOT, essai_checkout

from generator.contract.manifest import Manifest
from generator.score import make_submission
from generator.tracks.loader import load_tracks


def corpus(root: Path, *args: str) -> Ran:
    return run_corpus(*args, "--root", str(root), cwd=root)




@pytest.fixture(scope="module")
def checkout() -> Iterator[Path]:
    """Built, both tracks (0755 folders: nginx's unprivileged workers serve from it)."""
    with private_folder("corpus-two-tracks-") as folder:
        root = essai_checkout(folder / "root")
        for command in (("build",), ("build-season",)):
            result = corpus(root, *command)
            assert result.returncode == 0, result.stderr
        yield root


def test_corpus_tracks_lists_both_tracks_with_their_files(checkout: Path) -> None:
    result = corpus(checkout, "tracks", "--json")
    assert result.returncode == 0, result.stderr
    listed = {item["piste"]: item for item in json.loads(result.stdout)}
    assert sorted(listed) == ["conformite", "essai"]
    essai = listed["essai"]
    assert (essai["build"], essai["manifest"], essai["cle"], essai["taches"]) == \
        ("build/essai", "manifest/essai/manifest.json", "season/essai/cle.json", "season/essai/taches.json")
    kinds = ("corpus_src", "season_src", "build", "manifest", "season", "freeze")  # one shape for every track
    keys = ("sources", "sources_saison", "build", "manifest", "saison", "gel")
    for piste in ("essai", "conformite"):  # <kind>/<piste>, never written in track.yaml
        assert listed[piste]["arbres"] == {k: f"{n}/{piste}" for k, n in zip(keys, kinds, strict=True)}
    assert (listed["conformite"]["principale"], essai["principale"]) == (True, False)
    assert (essai["referentiel"], essai["catalogue"], essai["bareme"]) == \
        ("/essai/referentiel", "/essai/catalogue", "tracks/essai/essai-bareme-v1.txt")
    for item in listed.values():  # every path it names is a file of the checkout
        for key in ("manifest", "cle", "taches", "bareme", "definition"):
            assert (checkout / item[key]).is_file(), (item["piste"], key)
    assert hashlib.sha256((checkout / essai["bareme"]).read_bytes()).hexdigest() == essai["bareme_sha256"]


def test_conformite_is_byte_identical_beside_a_second_track(checkout: Path) -> None:
    committed = (ROOT / "manifest/conformite/manifest.json").read_bytes()
    assert (checkout / "manifest/conformite/manifest.json").read_bytes() == committed
    assert (checkout / "season/conformite/cle.json").read_bytes() == (
        ROOT / "season/conformite/cle.json").read_bytes()
    essai = Manifest.load(checkout, "manifest/essai")
    assert essai.corpus == "essai-s1" and essai.hash != Manifest.load(checkout, "manifest/conformite").hash
    served = {e.path for e in essai.of_kind("resource")}
    assert {"/essai/referentiel", "/essai/catalogue", "/essai/produits/PRD-0001",
            "/essai/catalogues/visserie/2"} <= served
    assert all(p.startswith("/essai/") for p in served)


def test_the_essai_season_is_proven_by_the_same_check(checkout: Path) -> None:
    result = run_corpus("check-season", "--track", "essai", "--root", str(checkout), cwd=checkout)
    assert result.returncode == 0, result.stderr
    assert "corpus check-season (essai): passed, 0 problem(s)" in result.stderr
    assert "E1-fiche-produit-seule" in result.stdout  # the track's own shortcut, caught on its trap
    evaluated = run_corpus("evaluate", "--track", "essai", "--root", str(checkout), cwd=checkout)
    assert evaluated.returncode == 0, evaluated.stderr
    assert "essai-01  /essai/produits/PRD-0001  visserie" in evaluated.stdout
    verdicts = [line.split(":")[1].strip() for line in evaluated.stdout.splitlines() if "verdict :" in line]
    assert verdicts == ["disponible", "indisponible"]


def test_one_nginx_serves_both_tracks_and_verify_crawls_each(checkout: Path) -> None:
    with NginxServer(build_root=checkout) as server:
        produit = server.request("/essai/produits/PRD-0001")
        assert produit.status == 200
        assert produit.body == (checkout / "build/essai/essai/produits/PRD-0001.json").read_bytes()
        entite = server.request("/entites/ENT-4102")
        assert entite.status == 200 and entite.body == (
            ROOT / "build/conformite/entites/ENT-4102.json").read_bytes()
        absent = server.request("/essai/produits/PRD-9999")
        assert absent.status == 200 and json.loads(absent.body)["existe"] is False
        assert server.request("/essai/produits/PRD-0001", secret=None).status == 403
        assert server.request("/essai/inconnu").status == 404
        for piste in ("conformite", "essai"):
            result = corpus(checkout, "verify", "--track", piste, "--url", server.base_url,
                            "--secret-file", str(server.secret_file))
            assert result.returncode == 0, result.stdout + result.stderr
            assert "corpus verify: OK" in result.stdout


def test_essai_submissions_are_scored_by_corpus_score(checkout: Path, tmp_path: Path) -> None:
    essai = next(t for t in load_tracks(checkout) if t.piste == "essai")
    manifest = Manifest.load(checkout, essai.trees.manifest)
    key = json.loads((checkout / "season/essai/cle.json").read_text("utf-8"))
    folder = tmp_path / "soumissions"
    folder.mkdir()
    for task_id, entry in key["taches"].items():  # an honest agent: exactly the key's founding facts
        claims = [(f["ressource"], f["champ"], f["valeur"]) for f in entry["faits"]]
        submission = make_submission(manifest, task_id, entry["verdict"], claims, piste="essai")
        (folder / f"{task_id}.json").write_text(json.dumps(submission, ensure_ascii=False), "utf-8")
    report_file = tmp_path / "report.json"
    result = corpus(checkout, "score", str(folder), "--track", "essai", "--json", str(report_file))
    assert result.returncode == 0, result.stderr
    report = json.loads(report_file.read_text("utf-8"))
    assert (report["piste"], report["reussite"], report["taches_total"]) == ("essai", 2, 2)
    assert report["overclaim"]["non_etayees"] == 0
    wrong = json.loads((folder / "essai-02.json").read_text("utf-8"))
    wrong["verdict"] = "disponible"  # the trap's answer: scored, but not réussie
    (folder / "essai-02.json").write_text(json.dumps(wrong), "utf-8")
    result = corpus(checkout, "score", str(folder), "--track", "essai", "--json", str(report_file))
    assert result.returncode == 0, result.stderr
    assert json.loads(report_file.read_text("utf-8"))["reussite"] == 1
    named = corpus(checkout, "score", str(folder), "--json", str(report_file))  # the submissions' track decides
    assert named.returncode == 0, named.stderr
    assert json.loads(report_file.read_text("utf-8"))["piste"] == "essai"
    conformite = corpus(checkout, "score", str(folder), "--track", "conformite")  # another track's: refused
    assert conformite.returncode == 0
    assert "essai-02' names no task of season 1: rejected at entry" in conformite.stdout
    mixed = tmp_path / "mixte"
    shutil.copytree(folder, mixed)
    other = make_submission(Manifest.load(checkout, "manifest/conformite"), "conf-01", "conforme", [],
        piste="conformite")
    (mixed / "conf-01.json").write_text(json.dumps(other), "utf-8")
    refused = corpus(checkout, "score", str(mixed))
    assert refused.returncode != 0 and "1 of conformite, 2 of essai" in refused.stderr
    assert "never scored together" in refused.stderr
