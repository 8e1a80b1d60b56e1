"""A freeze replaced before the opening, in both publications (issue 41, point 3; bars/replaced-freeze-and-
contestation): ``corpus freeze --replaces`` takes the pinned opening; the opening kit lists every proof_id of
the chain with its motive; the close publication holds every record, anchor and salt of the chain, every
contestation and decision, or the invalidation and no ranking; ``verify-publication`` verifies the whole chain,
replays the rectified figures from the published decisions, and refuses, naming the file, a figure changed
without a decision, a decision removed or altered, a link of the chain removed or altered, a salt changed, an
opening moved before the replacement. The season runs once (``tests/replaced_rehearsal.py``), on the stand-in
of Trust Layer's API; the hashes checked here are computed with hashlib, never with the code under test.
"""

from __future__ import annotations

import hashlib
import html
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_corpus
from replaced_rehearsal import (
    ACCEPTED,
    MOTIF,
    PISTE,
    REFUSED,
    Replaced,
    load,
    overclaimer_line,
    run_replaced_season,
)
from season_rehearsal import Verdict, relist

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command (test authority)")


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Replaced:
    return run_replaced_season(tmp_path_factory.mktemp("replaced"))


def _step(season: Replaced, name: str) -> str:
    [step] = [s for s in season.steps if s.name == name]
    return step.ran.stdout + step.ran.stderr


def test_every_step_holds(season: Replaced) -> None:
    assert not season.failed, "\n".join(f"{s.line()}\n{s.ran.stdout[-2000:]}\n{s.ran.stderr[-2000:]}"
                                        for s in season.failed)
    assert len(season.proof_ids) == 2 and season.proof_ids[0] != season.proof_ids[1]


def test_the_replacement_took_the_pinned_opening_and_after_it_the_season_is_invalidated(season: Replaced) -> None:
    said = _step(season, "freeze --replaces (the pinned opening)")
    assert f"{season.proof_ids[0]} replaced before the opening ({season.opening})" in said, said
    refused = _step(season, "freeze --replaces after the opening: refused").strip().splitlines()
    assert len(refused) == 1 and f"opened at {season.opening} (the pinned opening)" in refused[0], refused
    assert "il invalide la saison" in refused[0] and "corpus season invalidate" in refused[0]


def test_the_opening_kit_lists_every_proof_id_of_the_chain_with_its_motive(season: Replaced) -> None:
    kit = season.kit
    summary = load(kit / "ouverture.json")
    anchors = summary["ancres"]
    assert [a["proof_id"] for a in anchors] == season.proof_ids
    assert [(a["en_vigueur"], a["remplace"], a["motif"]) for a in anchors] == [
        (False, None, None), (True, season.proof_ids[0], MOTIF)]
    assert summary["ouverture"] == season.opening
    kept = kit / "gel/remplaces/1"
    assert (anchors[0]["releve"], anchors[0]["fichier"]) == ("gel/remplaces/1/record.json",
                                                             "gel/remplaces/1/anchor.json")
    assert hashlib.sha256((kept / "record.json").read_bytes()).hexdigest() == anchors[0]["sha256_releve"]
    assert json.loads((kit / "gel/record.json").read_bytes())["remplace"] == {
        "proof_id": season.proof_ids[0], "sha256": anchors[0]["sha256_releve"], "motif": MOTIF}
    assert load(kept / "anchor.json")["proof_id"] == season.proof_ids[0]
    assert not list(kit.rglob("*sel*")) and not (kit / "cle.json").exists()
    page = html.unescape((kit / "LISEZMOI.html").read_text("utf-8"))
    assert "remplacé avant l'ouverture de la saison" in page and MOTIF in page
    assert all(proof_id in page for proof_id in season.proof_ids) and "gel/remplaces/<n>/record.json" in page
    checked = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=kit, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_close_holds_every_record_anchor_and_salt_of_the_chain(season: Replaced) -> None:
    folder = season.publication
    chain = load(folder / "cloture.json")["gel"]["chaine"]
    assert [(c["numero"], c["proof_id"], c["en_vigueur"], c["motif"]) for c in chain] == [
        (1, season.proof_ids[0], False, None), (2, season.proof_ids[1], True, MOTIF)]
    key = (folder / "saison/cle.json").read_bytes()
    for link in chain:  # sha256(sel ‖ clé), recomputed here from the published salt of each record
        record = load(folder / link["releve"])
        salt = bytes.fromhex((folder / link["sel"]).read_text("ascii").strip())
        assert hashlib.sha256(salt + key).hexdigest() == record["cle"]["engagement"], link
        assert load(folder / link["ancre"])["proof_id"] == link["proof_id"]
    assert (folder / "gel/remplaces/1/sel.hex").read_text("ascii").strip() == \
        season.chain_salts[0].read_text("ascii").strip()
    page = html.unescape((folder / "LISEZMOI.html").read_text("utf-8"))
    assert MOTIF in page and "gel/remplaces/<n>/record.json, anchor.json, sel.hex" in page
    assert "gel/contestations/c<NNN>.json" in page and "contestation(s) décidée(s)" in page


def test_verify_publication_holds_on_the_chain_and_the_rectification(season: Replaced) -> None:
    for folder in (season.first_publication, season.publication):
        ran = run_corpus(*season.verify_args(folder))
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert all(line.startswith(("ok  ", "note")) for line in ran.stdout.splitlines()), ran.stdout
        assert f"ok   gel/remplaces/: the chain of 2 records: each replaced record ({season.proof_ids[0]})" \
            in ran.stdout
        assert f"before the opening {season.opening}; each commitment sha256(sel ‖ clé) recomputed" in ran.stdout
    assert "gel/contestations/: 2 contestation(s), 2 decided (1 accepted, 1 refused)" in ran.stdout


def test_the_rectification_is_published_beside_the_original(season: Replaced) -> None:
    before, after = load(season.first_publication / "index.json"), load(season.publication / "index.json")
    original, line = overclaimer_line(before), overclaimer_line(after)
    assert "rectification" not in original and not before.get("contestations")
    figures = ("reussite", "taches_rendues", "overclaim")
    assert {k: line[k] for k in figures} == {k: original[k] for k in figures}  # the original kept
    rect = line["rectification"]
    assert [(c["contestation"], c["motif"]) for c in rect["contestations"]] == [("c001", ACCEPTED)]
    assert rect["figures"]["overclaim"]["non_etayees"] == original["overclaim"]["non_etayees"] - 1
    assert [(c["contestation"], c["decision"], c["motif"]) for c in after["contestations"]] == [
        ("c001", "acceptee", ACCEPTED), ("c002", "refusee", REFUSED)]
    report = load(season.publication / line["rapport"])
    assert report["rectification"] == rect and len(report["contestations"]) == 2
    assert report["score_corpus"] == load(season.first_publication / line["rapport"])["score_corpus"]
    page = html.unescape((season.publication / "index.html").read_text("utf-8"))
    assert f"rectifié le {rect['le']}" in page and "refusée le" in page
    for name in ("c001.json", "c001.decision.json", "c002.json", "c002.decision.json"):
        assert (season.publication / "gel/contestations" / name).read_bytes() == \
            (season.root / "freeze/conformite/contestations" / name).read_bytes()


def test_the_invalidated_season_is_published_with_no_ranking(season: Replaced) -> None:
    folder = season.invalidated
    index = load(folder / "index.json")
    assert index["statut"] == "invalidee" and "tableaux" not in index
    assert index["invalidation"]["motif"] == "le barème a été modifié après l'ouverture de la saison"
    for absent in ("rapports", "scores", "soumissions", "preuves", "inscriptions.json"):
        assert not (folder / absent).exists(), absent
    cloture = load(folder / "cloture.json")
    assert cloture["statut"] == "invalidee" and cloture["invalidation"]["fichier"] == "gel/invalidation.json"
    assert load(folder / "gel/invalidation.json")["gel_en_vigueur"] == season.proof_ids[1]
    assert [c["proof_id"] for c in cloture["gel"]["chaine"]] == season.proof_ids
    assert (folder / "gel/remplaces/1/sel.hex").is_file() and (folder / "saison/sel.hex").is_file()
    page = html.unescape((folder / "LISEZMOI.html").read_text("utf-8"))
    assert "La saison a été invalidée le" in page and "Aucun classement n'est publié" in page
    ran = run_corpus(*season.verify_args(folder))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "ok   index.json: the season invalidated (gel/invalidation.json): no ranking" in ran.stdout


# ------------------------------------------------------------------------------------- tampered variants


def _edit(name: str, change: Callable[[Any], None]) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        value = load(folder / name)
        change(value)
        (folder / name).write_text(json.dumps(value, ensure_ascii=False, indent=2) + "\n", "utf-8")
    return apply


def _figure(index: Any) -> None:
    overclaimer_line(index)["reussite"] += 1


def _rectified(index: Any) -> None:
    overclaimer_line(index)["rectification"]["figures"]["overclaim"]["non_etayees"] += 1


def _motive(decision: Any) -> None:
    decision["motif"] = "une autre raison"


def _removed(name: str) -> Callable[[Path], None]:
    def apply(folder: Path) -> None:
        path = folder / name
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    return apply


def _kept_record(folder: Path) -> None:
    path = folder / "gel/remplaces/1/record.json"
    path.write_bytes(path.read_bytes().replace(b'"corpus": ', b'"corpus":  ', 1))


def _kept_anchor(anchor: Any) -> None:
    anchor["heure"] = "2020-01-01T00:00:00Z"


def _salt(folder: Path) -> None:
    (folder / "gel/remplaces/1/sel.hex").write_text("00" * 32 + "\n", "ascii")


def _opening(first_heure: str) -> Callable[[Any], None]:
    def change(cloture: Any) -> None:
        cloture["ouverture"] = first_heure
    return change


# variant: (which publication, the tampering, what the refusal names)
TAMPERED: dict[str, tuple[str, Callable[[Path], None], str]] = {
    "a figure changed without a decision": ("publication", _edit("index.json", _figure), "index.json"),
    "a rectified figure changed": ("publication", _edit("index.json", _rectified), "index.json"),
    "a decision removed": ("publication", _removed("gel/contestations/c001.decision.json"), "index.json"),
    "a decision altered": ("publication", _edit("gel/contestations/c002.decision.json", _motive), "index.json"),
    "a link of the chain removed": ("publication", _removed("gel/remplaces/1"), "gel/remplaces/1/record.json"),
    "a kept record altered": ("publication", _kept_record, "gel/remplaces/1"),
    "a kept anchor altered": ("publication", _edit("gel/remplaces/1/anchor.json", _kept_anchor),
                              "gel/remplaces/1/anchor.json"),
    "a salt of the chain changed": ("publication", _salt, "gel/remplaces/1/sel.hex"),
    "a salt of the chain removed": ("publication", _removed("gel/remplaces/1/sel.hex"), "gel/remplaces/1/sel.hex"),
    "the invalidation removed": ("invalidated", _removed("gel/invalidation.json"), "gel/invalidation.json"),
}


@pytest.mark.parametrize("variant", sorted(TAMPERED))
def test_each_tampering_is_refused_naming_the_file(season: Replaced, variant: str, tmp_path: Path) -> None:
    which, tamper, named = TAMPERED[variant]
    copy = tmp_path / PISTE
    shutil.copytree(season.invalidated if which == "invalidated" else season.publication, copy)
    tamper(copy)
    relist(copy)  # SHA256SUMS written again over the change, as a forger would: the deeper checks must hold
    verdict = Verdict(variant, named, run_corpus(*season.verify_args(copy)))
    assert verdict.refused, f"{verdict.line()}\n{verdict.ran.stdout[-3000:]}"


def test_an_opening_moved_before_the_replacement_is_refused(season: Replaced, tmp_path: Path) -> None:
    copy = tmp_path / PISTE
    shutil.copytree(season.publication, copy)
    first = load(copy / "cloture.json")["gel"]["chaine"][0]["heure"]
    _edit("cloture.json", _opening(first))(copy)
    relist(copy)
    ran = run_corpus(*season.verify_args(copy))
    assert ran.returncode == 1 and "Traceback" not in ran.stdout + ran.stderr
    assert "FAIL gel/anchor.json: anchored at" in ran.stdout and "after the season's opening" in ran.stdout, \
        ran.stdout
    ran = run_corpus(*season.verify_args(season.publication), "--season-opening", first)
    assert ran.returncode == 1 and "cloture.json: /ouverture" in ran.stdout


def test_the_refusals_name_the_figure(season: Replaced, tmp_path: Path) -> None:
    copy = tmp_path / PISTE
    shutil.copytree(season.publication, copy)
    _edit("index.json", _figure)(copy)
    relist(copy)
    ran = run_corpus(*season.verify_args(copy))
    assert "a figure changed without a decision" in ran.stdout, ran.stdout
    assert any(line.startswith("FAIL index.json: /tableaux/communaute/lignes/") and "/reussite: published" in line
               for line in ran.stdout.splitlines()), ran.stdout
