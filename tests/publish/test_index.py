"""``corpus index``: a season's close published (spec §7, §9.1), on a frozen, anchored scratch checkout of
both tracks and a community made from blind answers (``tests/index_community.py``, issue 32's
bars/index-public): the index of each track, the constant line first, every figure ``corpus score``'s (run
here on its own on the submissions that must count), the overclaimer's cause, the merged DID, the labels of
§7.3, the refusals of §7.4, and bad inputs as one line with nothing written.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cli_run import Ran, run_corpus
from index_community import CLOSE, VENDOR_WORDS, Community, constant_verdict, frozen_checkout, write_community
from trackfix import ROOT

from generator.publish.merge import participants
from generator.publish.published import DocumentError, document_bytes, read_document
from generator.publish.registrations import Registration, read_registrations, registrations_bytes
from generator.publish.wording import AI_ACT, BROUILLON_TEXTE, CALIBRATION, RECIT, STACK_DECLAREE

PISTES = ("conformite", "generique")
FUTURE = "2099-01-01T00:00:00Z"
NEGATIVE = ("assertions_non_etayees", "rejets", "defauts_instrument")


@dataclass
class Season:
    root: Path
    keys: dict[str, tuple[Path, Path]]  # piste -> (salt, anchor)
    communities: dict[str, Community]
    tmp: Path

    def args(self, piste: str, out: Path, *more: str, community: Community | None = None) -> list[str]:
        c = community or self.communities[piste]
        salt, anchor = self.keys[piste]
        return ["index", "--track", piste, "--submissions", str(c.submissions), "--registrations",
                str(c.registrations), "--out", str(out), "--salt-file", str(salt), "--anchor", str(anchor),
                "--root", str(self.root), *more]


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Season:
    tmp = tmp_path_factory.mktemp("close")
    keys = frozen_checkout(tmp / "checkout")
    communities = {p: write_community(tmp / "checkout", p, tmp / "service" / p) for p in PISTES}
    return Season(tmp / "checkout", keys, communities, tmp)


@pytest.fixture(scope="module")
def published(season: Season) -> dict[str, Path]:
    """Each track's index, published at the close: piste -> OUT/<piste>/."""
    out = season.tmp / "publie"
    for piste in PISTES:
        ran = run_corpus(*season.args(piste, out, "--season-close", CLOSE))
        assert ran.returncode == 0, ran.stderr
        assert "publié" in ran.stdout
    return {p: out / p for p in PISTES}


def load(path: Path) -> Any:
    return json.loads(path.read_bytes())


def listing(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def one_line(ran: Ran, *words: str) -> None:
    assert ran.returncode == 1, (ran.returncode, ran.stdout, ran.stderr)
    lines = ran.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("corpus index: "), ran.stderr
    assert "Traceback" not in ran.stderr
    for word in words:
        assert word in lines[0], (word, lines[0])


# ------------------------------------------------------------------------------------------ what is published


def _score_alone(season: Season, piste: str, name: str, tmp: Path) -> dict[str, Any]:
    """``corpus score`` on the submissions that must count for ``name``: its own, the last received before the
    close for each task, chosen here from the files' envelopes."""
    c = season.communities[piste]
    last: dict[str, tuple[str, dict[str, Any]]] = {}
    for file in c.submissions.rglob("*.json"):
        record = load(file)
        sub = record["soumission"]
        if sub["agent_did"] == c.did(name) and record["recu_le"] <= CLOSE and \
                record["recu_le"] > last.get(sub["task_id"], ("", {}))[0]:
            last[sub["task_id"]] = (record["recu_le"], sub)
    folder = tmp / name.replace(" ", "_")
    folder.mkdir()
    for task, (_, sub) in last.items():
        (folder / f"{task}.json").write_text(json.dumps(sub), "utf-8")
    salt, anchor = season.keys[piste]
    ran = run_corpus("score", str(folder), "--json", str(tmp / f"{folder.name}.json"), "--salt-file", str(salt),
                     "--anchor", str(anchor), "--root", str(season.root))
    assert ran.returncode == 0, ran.stderr
    return load(tmp / f"{folder.name}.json")


@pytest.mark.parametrize("piste", PISTES)
def test_each_track_publishes_its_index_and_reports(season: Season, published: dict[str, Path], piste: str,
                                                    tmp_path: Path) -> None:
    c = season.communities[piste]
    folder = published[piste]
    ranked = [n for n in c.names if n != "Agent Lié"]
    slugs = {"Run de référence Orfeo": "run-de-reference-orfeo", "Agent Honnête 1": "agent-honnete-1",
             "Agent Honnête 2": "agent-honnete-2", "Agent Honnête 3": "agent-honnete-3",
             "Agent Constant": "agent-constant", "Agent Surconfiant": "agent-surconfiant",
             "Agent Remplaçant": "agent-remplacant"}
    assert listing(folder) == sorted(["index.html", "index.json",
                                      *(f"rapports/{slugs[n]}.{ext}" for n in ranked for ext in ("html", "json"))])
    index = load(folder / "index.json")
    assert (index["format"], index["piste"], index["saison"], index["statut"]) == ("corpus-index/1", piste, 1,
                                                                                    "publie")
    assert "brouillon" not in index and index["gel"]["statut"] == "verifie"
    assert index["conditions_1_2"] == "non_verifiees_hors_ligne"  # no --proofs: said, never implied verified
    assert set(index["tableaux"]) == {"reference", "communaute"}
    expected_constant = sum(e["verdict"] == constant_verdict(season.root, piste)
                            for e in load(season.root / "season" / piste / "cle.json")["taches"].values())
    if piste == "conformite":
        assert expected_constant == 4  # spec §7.2: 4/10 in season 1 conformité
    for table in index["tableaux"].values():
        first = table["lignes"][0]
        assert (first["agent"], first["overclaim"], first["reussite"]) == ("meilleure réponse constante",
                                                                           "sans objet", expected_constant)
    reference = [line["agent"] for line in index["tableaux"]["reference"]["lignes"][1:]]
    community = [line["agent"] for line in index["tableaux"]["communaute"]["lignes"][1:]]
    assert reference == ["Run de référence Orfeo"]
    assert community == ranked[1:]  # registration order, never merged with the reference table
    lines = {line["agent"]: line for t in index["tableaux"].values() for line in t["lignes"][1:]}
    for name in ranked:  # every figure is corpus score's, run alone on what must count
        alone = _score_alone(season, piste, name, tmp_path)
        line = lines[name]
        assert (line["reussite"], line["overclaim"], line["taches_rendues"]) == (
            alone["reussite"], alone["overclaim"], alone["taches_rendues"]), name
        report = load(folder / f"rapports/{slugs[name]}.json")
        assert report["score_corpus"]["taches"] == [{k: v for k, v in t.items() if k != "fichier"}
                                                    for t in alone["taches"]]  # the CLI names the files
    for name in ("Run de référence Orfeo", "Agent Honnête 1", "Agent Honnête 2", "Agent Honnête 3",
                 "Agent Remplaçant"):
        assert (lines[name]["reussite"], lines[name]["overclaim"]["non_etayees"]) == (10, 0), name
    assert lines["Agent Constant"]["reussite"] <= expected_constant
    assert lines["Agent Surconfiant"]["overclaim"]["non_etayees"] == 1


@pytest.mark.parametrize("piste", PISTES)
def test_the_overclaimer_report_names_the_cause(published: dict[str, Path], piste: str) -> None:
    report = load(published[piste] / "rapports/agent-surconfiant.json")
    assert report["format"] == "corpus-rapport/1" and report["agent"] == "Agent Surconfiant"
    [unsupported] = report["assertions_non_etayees"]
    first_task = report["taches"][0]["tache"]
    assert (unsupported["tache"], unsupported["assertion"], unsupported["cause"]) == (first_task, "a1", "valeur")
    assert unsupported["preuves"] and all(p["lien"].endswith(f"/v1/proof/{p['proof_id']}")
                                          for p in unsupported["preuves"])
    assert report["rejets"] == report["defauts_instrument"] == report["en_attente"] == []
    page = (published[piste] / "rapports/agent-surconfiant.html").read_text("utf-8")
    assert "valeur ne correspondant pas" in page


@pytest.mark.parametrize("piste", PISTES)
def test_replaced_and_late_submissions_are_listed_apart(published: dict[str, Path], piste: str) -> None:
    report = load(published[piste] / "rapports/agent-remplacant.json")
    first_task = report["taches"][0]["tache"]
    [replaced] = report["remplacees"]
    [late] = report["hors_delai"]
    assert replaced["tache"] == late["tache"] == first_task
    assert replaced["recu_le"] < replaced["remplacee_le"] <= CLOSE < late["recu_le"]
    assert report["taches"][0]["fichier"] == replaced["remplacee_par"]
    assert "Première lecture" not in json.dumps(report["taches"][0])  # the replaced narrative is not published


@pytest.mark.parametrize("piste", PISTES)
def test_a_did_linked_to_another_key_is_merged_not_ranked(season: Season, published: dict[str, Path],
                                                          piste: str) -> None:
    index = load(published[piste] / "index.json")
    [merged] = index["fusionnes"]
    assert (merged["agent"], merged["did"]) == ("Agent Lié", season.communities[piste].did("Agent Lié"))
    assert merged["classe_sous"]["agent"] == "Agent Honnête 1" and "§9.1" in merged["motif"]
    assert merged["soumissions_ecartees"] == 1
    assert "Agent Lié" not in {line["agent"] for t in index["tableaux"].values() for line in t["lignes"]}
    assert load(published[piste] / "rapports/agent-honnete-1.json")["fusionnes"] == [merged]
    assert "Agent Lié" in (published[piste] / "index.html").read_text("utf-8")


# ------------------------------------------------------------------------------------------ the rules of §7.3


def _documents(folder: Path) -> list[tuple[str, Any]]:
    return [(name, load(folder / name)) for name in listing(folder) if name.endswith(".json")]


def _pages(folder: Path) -> list[tuple[str, str]]:
    return [(name, (folder / name).read_text("utf-8")) for name in listing(folder) if name.endswith(".html")]


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'").replace("&amp;", "&")


@pytest.mark.parametrize("piste", PISTES)
def test_labels_on_every_page_and_document(published: dict[str, Path], piste: str) -> None:
    folder = published[piste]
    for name, doc in _documents(folder):
        assert doc["etiquetage_ai_act"] == AI_ACT, name
    for name, page in _pages(folder):
        assert AI_ACT in _text(page), name
    index = load(folder / "index.json")
    assert index["tableaux"]["reference"]["etiquette"] == CALIBRATION
    assert f"Runs de référence : {CALIBRATION}" in _text((folder / "index.html").read_text("utf-8"))
    for line in index["tableaux"]["communaute"]["lignes"][1:]:
        assert line["stack"]["mention"] == STACK_DECLAREE
    rows = re.findall(r'<tr class="participant">(.*?)</tr>',
                      (folder / "index.html").read_text("utf-8").split('id="communaute"')[1].split("</table>")[0],
                      re.S)
    assert len(rows) == 6 and all(STACK_DECLAREE in _text(row) for row in rows)  # each line, not a legend


@pytest.mark.parametrize("piste", PISTES)
def test_no_vendor_in_a_negative_category_no_emoji_no_global_mark(published: dict[str, Path], piste: str) -> None:
    folder = published[piste]
    for name, doc in _documents(folder):
        if doc["format"] == "corpus-rapport/1":
            negative = json.dumps([doc[part] for part in NEGATIVE], ensure_ascii=False)
            assert not [w for w in (*VENDOR_WORDS, doc["agent"]) if w in negative], name
    for name, page in _pages(folder):
        for section in re.findall(r'<section[^>]*data-categorie="negative"[^>]*>(.*?)</section>', page, re.S):
            assert not [w for w in VENDOR_WORDS if w in section], name
    for name in listing(folder):
        text = (folder / name).read_text("utf-8")
        assert not [c for c in text if ord(c) >= 0x1F000 or unicodedata.category(c) == "So"], name
        assert "!" not in text.replace("<!DOCTYPE", ""), name
    index = load(folder / "index.json")
    keys = {"agent", "did", "overclaim", "reussite", "taches_rendues", "stack", "preuves"}
    for table in index["tableaux"].values():
        for line in table["lignes"]:
            assert keys <= set(line) and not {"note", "rang", "score", "classement"} & set(line)
    assert index["ordre"] == "inscription" and "aucun tri" in index["ordre_texte"]
    inscrits = [line["inscrit_le"] for line in index["tableaux"]["communaute"]["lignes"][1:]]
    assert inscrits == sorted(inscrits)


@pytest.mark.parametrize("piste", PISTES)
def test_the_narrative_is_published_beside_the_result_and_said_unscored(season: Season,
                                                                        published: dict[str, Path],
                                                                        piste: str) -> None:
    report = load(published[piste] / "rapports/agent-honnete-2.json")
    assert report["recit_note"] == RECIT and "non scoré" in RECIT
    assert all(t["recit"] and t["recit"].startswith("Verdict ") for t in report["taches"])
    page = _text((published[piste] / "rapports/agent-honnete-2.html").read_text("utf-8"))
    assert page.count(RECIT) == 10 and report["taches"][0]["recit"] in page
    assert "non scoré" in load(published[piste] / "index.json")["notes"]["recit"]


@pytest.mark.parametrize("piste", PISTES)
def test_each_document_reads_back_to_its_own_bytes(season: Season, published: dict[str, Path], piste: str,
                                                    tmp_path: Path) -> None:
    """index.json and every report: the one reader, then the one writer, give the bytes published; the
    registrations likewise, once written by their writer."""
    index = published[piste] / "index.json"
    assert document_bytes(read_document(index.read_bytes(), "corpus-index/1", str(index))) == index.read_bytes()
    reports = sorted((published[piste] / "rapports").glob("*.json"))
    assert reports
    for report in reports:
        data = report.read_bytes()
        assert document_bytes(read_document(data, "corpus-rapport/1", str(report))) == data
    written = registrations_bytes(read_registrations(season.communities[piste].registrations))
    again = tmp_path / "inscriptions.json"
    again.write_bytes(written)
    assert registrations_bytes(read_registrations(again)) == written
    assert json.loads(written) == load(season.communities[piste].registrations)


def test_a_document_of_another_kind_is_refused(published: dict[str, Path]) -> None:
    index = published[PISTES[0]] / "index.json"
    with pytest.raises(DocumentError, match=r"index.json: /format: expected 'corpus-rapport/1'"):
        read_document(index.read_bytes(), "corpus-rapport/1", str(index))


def test_the_same_close_gives_the_same_bytes(season: Season, published: dict[str, Path]) -> None:
    again = season.tmp / "encore"
    moved = season.tmp / "ailleurs"
    shutil.copytree(season.communities["conformite"].folder, moved)
    community = Community("conformite", moved, moved / "inscriptions.json", moved / "soumissions")
    ran = run_corpus(*season.args("conformite", again, "--season-close", CLOSE, community=community))
    assert ran.returncode == 0, ran.stderr
    first, second = published["conformite"], again / "conformite"
    assert listing(first) == listing(second)
    assert all((first / n).read_bytes() == (second / n).read_bytes() for n in listing(first))


# ------------------------------------------------------------------------------ §7.4: at the close, or a draft


def test_refused_on_an_unfrozen_track_without_brouillon(season: Season, tmp_path: Path) -> None:
    c = season.communities["conformite"]
    out = tmp_path / "out"
    args = ["index", "--track", "conformite", "--submissions", str(c.submissions), "--registrations",
            str(c.registrations), "--out", str(out), "--season-close", CLOSE, "--root", str(ROOT)]
    one_line(run_corpus(*args), "not frozen and anchored", "freeze/conformite/record.json", "--brouillon")
    assert not out.exists()
    ran = run_corpus(*args, "--brouillon")
    assert ran.returncode == 0, ran.stderr
    folder = out / "conformite"
    for name, doc in _documents(folder):
        assert (doc["statut"], doc["brouillon"]) == ("brouillon", BROUILLON_TEXTE), name
    for name, page in _pages(folder):
        assert BROUILLON_TEXTE in _text(page), name
    assert load(folder / "index.json")["gel"] == {"statut": "non_gele"}


def test_refused_before_the_close_or_without_it(season: Season, tmp_path: Path) -> None:
    out = tmp_path / "out"
    one_line(run_corpus(*season.args("conformite", out, "--season-close", FUTURE)), "closes at", FUTURE,
             "--brouillon")
    one_line(run_corpus(*season.args("conformite", out)), "--season-close")
    assert not out.exists()
    ran = run_corpus(*season.args("conformite", out, "--season-close", FUTURE, "--brouillon"))
    assert ran.returncode == 0, ran.stderr
    assert load(out / "conformite" / "index.json")["brouillon"] == BROUILLON_TEXTE


def test_a_frozen_track_without_its_salt_is_refused_by_the_scorer(season: Season, tmp_path: Path) -> None:
    args = season.args("conformite", tmp_path / "out", "--season-close", CLOSE)
    cut = args.index("--salt-file")
    one_line(run_corpus(*args[:cut], *args[cut + 2:]), "--salt-file", "spec §8.5")
    assert not (tmp_path / "out").exists()


# -------------------------------------------------------------------------------------------- bad input


def _copy_service(season: Season, tmp: Path, piste: str = "conformite") -> Community:
    folder = tmp / "service"
    shutil.copytree(season.communities[piste].folder, folder)
    return Community(piste, folder, folder / "inscriptions.json", folder / "soumissions",
                     list(season.communities[piste].names))


def _edit_registrations(c: Community, edit: Any) -> None:
    data = load(c.registrations)
    edit(data)
    c.registrations.write_text(json.dumps(data, ensure_ascii=False), "utf-8")


def _one_submission(c: Community) -> Path:
    return sorted(c.submissions.rglob("*.json"))[0]


def _rewrite(path: Path, edit: Any) -> None:
    record = load(path)
    edit(record)
    path.write_text(json.dumps(record, ensure_ascii=False), "utf-8")


BAD = {
    "a submission of the other track": (
        lambda s, c: shutil.copy(_one_submission(s.communities["generique"]), c.submissions / "egaree.json"),
        "egaree.json", "/soumission/track"),
    "a submission of another season": (
        lambda s, c: _rewrite(_one_submission(c), lambda r: r["soumission"].update(season=2)),
        "soumissions/", "/soumission/season"),
    "a submission of a DID nobody registered": (
        lambda s, c: _rewrite(_one_submission(c),
                              lambda r: r["soumission"].update(agent_did="did:key:z6MkInconnu")),
        "soumissions/", "not registered"),
    "a submission without its envelope": (
        lambda s, c: _rewrite(_one_submission(c), lambda r: r.pop("recu_le")),
        "soumissions/", "recu_le"),
    "a registration file that is no JSON": (
        lambda s, c: c.registrations.write_text("{\"format\": ", "utf-8"), "inscriptions.json", "not JSON"),
    "a registration without its DID": (
        lambda s, c: _edit_registrations(c, lambda d: d["participants"][2].pop("did")), "inscriptions.json",
        "/participants/2", "'did'"),
    "a registration of an unknown table": (
        lambda s, c: _edit_registrations(c, lambda d: d["participants"][1].update(tableau="pro")),
        "inscriptions.json", "/participants/1/tableau"),
    "a registration file with a key written twice": (
        lambda s, c: c.registrations.write_text(c.registrations.read_text("utf-8").replace(
            '"format": "corpus-inscriptions/1"', '"format": "corpus-inscriptions/1", "format": "x"', 1), "utf-8"),
        "inscriptions.json", "more than once"),
    "two participants with one name": (
        lambda s, c: _edit_registrations(c, lambda d: d["participants"][5].update(agent="agent  constant")),
        "inscriptions.json", "/participants/5/agent", "two participants with one name"),
    "a DID registered twice": (
        lambda s, c: _edit_registrations(c, lambda d: d["participants"][3].update(
            did=d["participants"][1]["did"])),
        "inscriptions.json", "/participants/3/did", "already registered"),
    "an emoji in a name": (
        lambda s, c: _edit_registrations(c, lambda d: d["participants"][3].update(agent="Agent \U0001f600")),
        "inscriptions.json", "/participants/3/agent", "emoji"),
    "two submissions for one task at one instant": (
        lambda s, c: shutil.copy(_one_submission(c), c.submissions / "copie.json"), "copie.json",
        "same instant"),
    "a link among the submissions": (
        lambda s, c: (c.submissions / "lien.json").symlink_to(_one_submission(c)), "lien.json", "symbolic link"),
    "a stray file in the folder": (
        lambda s, c: (c.submissions / "notes.txt").write_text("x", "utf-8"), "notes.txt", "not a *.json file"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_is_one_line_naming_the_file_and_nothing_is_written(season: Season, tmp_path: Path,
                                                                      case: str) -> None:
    make, *words = BAD[case]
    c = _copy_service(season, tmp_path)
    make(season, c)
    out = tmp_path / "out"
    one_line(run_corpus(*season.args("conformite", out, "--season-close", CLOSE, community=c)), *words)
    assert not out.exists()


def test_a_fifo_below_the_submissions_is_named(season: Season, tmp_path: Path) -> None:
    c = _copy_service(season, tmp_path)
    os.mkfifo(c.submissions / "attente.json")
    one_line(run_corpus(*season.args("conformite", tmp_path / "out", "--season-close", CLOSE, community=c)),
             "attente.json", "FIFO")


def test_out_is_refused_in_the_repository_and_over_a_folder_it_did_not_write(season: Season,
                                                                               tmp_path: Path) -> None:
    inside = run_corpus(*season.args("conformite", season.root / "docs-index", "--season-close", CLOSE))
    assert inside.returncode == 2 and "--out" in inside.stderr, inside.stderr
    foreign = tmp_path / "out" / "conformite"
    foreign.mkdir(parents=True)
    (foreign / "mien.txt").write_text("à moi", "utf-8")
    ran = run_corpus(*season.args("conformite", tmp_path / "out", "--season-close", CLOSE))
    assert ran.returncode == 2 and "holds no index" in ran.stderr and (foreign / "mien.txt").exists()


def test_an_earlier_index_is_replaced_whole(season: Season, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert run_corpus(*season.args("conformite", out, "--season-close", CLOSE, "--brouillon")).returncode == 0
    (out / "conformite" / "rapports" / "ancien.json").write_text("{}", "utf-8")
    assert run_corpus(*season.args("conformite", out, "--season-close", CLOSE)).returncode == 0
    assert not (out / "conformite" / "rapports" / "ancien.json").exists()
    assert load(out / "conformite" / "index.json")["statut"] == "publie"
    assert sorted(p.name for p in out.iterdir()) == ["conformite"]  # no lock nor staging left beside it


# ------------------------------------------------------------------------------- proofs passed to the scorer


def test_proofs_are_passed_to_the_scorer_and_pending_ones_kept_apart(season: Season, tmp_path: Path) -> None:
    c = season.communities["conformite"]
    cited: dict[str, set[str]] = {}
    for file in c.submissions.rglob("*.json"):
        sub = load(file)["soumission"]
        cited.setdefault(sub["agent_did"], set()).update(sub["disclosures"])
    verdicts = {p: {"valide": True, "identite_liee": True} for ids in cited.values() for p in ids}
    invalid = sorted(cited[c.did("Agent Honnête 2")])[0]
    pending = sorted(cited[c.did("Agent Honnête 3")])[0]
    verdicts[invalid] = {"valide": False, "identite_liee": True}
    verdicts[pending] = {"en_attente": True, "motif": "lot non fermé"}
    verdicts["prf_20261002_090000_4e1c2a"] = {"valide": True, "identite_liee": True}  # the freeze's anchor
    proofs = tmp_path / "preuves.json"
    proofs.write_text(json.dumps(verdicts), "utf-8")
    out = tmp_path / "out"
    ran = run_corpus(*season.args("conformite", out, "--season-close", CLOSE, "--proofs", str(proofs)))
    assert ran.returncode == 0, ran.stderr
    second = load(out / "conformite/rapports/agent-honnete-2.json")
    assert [a["cause"] for a in second["assertions_non_etayees"]] and \
        {a["cause"] for a in second["assertions_non_etayees"]} == {"preuve_invalide"}
    third = load(out / "conformite/rapports/agent-honnete-3.json")
    assert third["en_attente"] and third["assertions_non_etayees"] == []
    assert third["score"]["en_attente"] == [t["tache"] for t in third["en_attente"]]
    line = next(line for line in load(out / "conformite/index.json")["tableaux"]["communaute"]["lignes"]
                if line["agent"] == "Agent Honnête 3")
    assert line["en_attente"] == third["score"]["en_attente"]
    assert "en attente d'ancrage" in (out / "conformite/index.html").read_text("utf-8")
    assert load(out / "conformite/index.json")["conditions_1_2"] == "verifiees"


# ------------------------------------------------------------------------------------------- §9.1 by itself


def _reg(n: int, did: str, key: str, history: tuple[str, ...] = (), day: int = 1) -> Registration:
    from datetime import UTC, datetime
    when = datetime(2026, 10, day, 9, tzinfo=UTC)
    return Registration(n, f"Agent {n}", did, key * 64, "pile", "communaute", when, when.isoformat(), history)


def test_dids_meet_through_a_key_history_and_two_keys_without_a_common_did_stay_two() -> None:
    regs = [_reg(0, "did:key:a", "1", ("did:key:old",), day=3), _reg(1, "did:key:old", "2", day=2),
            _reg(2, "did:key:b", "2", day=5), _reg(3, "did:key:c", "3", day=1), _reg(4, "did:key:d", "4", day=4)]
    found = participants(regs)
    assert [p.ranked.did for p in found] == ["did:key:c", "did:key:old", "did:key:d"]
    linked = found[1]
    assert sorted(m.registration.did for m in linked.merged) == ["did:key:a", "did:key:b"]
    assert all(m.keys for m in linked.merged)


def test_a_refused_submission_is_rejected_at_entry_and_a_narrative_loses_its_emoji(season: Season,
                                                                                  tmp_path: Path) -> None:
    c = _copy_service(season, tmp_path)
    did = c.did("Agent Honnête 2")
    file = next(f for f in sorted(c.submissions.rglob("*.json")) if load(f)["soumission"]["agent_did"] == did)

    def edit(record: dict[str, Any]) -> None:
        record["soumission"].update(verdict="peut-etre", narrative="Lu et relu \U0001f44d, fin.")

    _rewrite(file, edit)
    out = tmp_path / "out"
    ran = run_corpus(*season.args("conformite", out, "--season-close", CLOSE, community=c))
    assert ran.returncode == 0, ran.stderr
    report = load(out / "conformite/rapports/agent-honnete-2.json")
    [rejet] = report["rejets"]
    assert rejet["statut"] == "rejetee_entree"
    assert rejet["fichier"].startswith("soumissions/agent-honnete-2/conf-01_")
    assert file.relative_to(c.submissions).as_posix() not in json.dumps(report)  # no storage path of the service
    assert "/verdict" in rejet["motifs"][0]
    task = next(t for t in report["taches"] if t["tache"] == rejet["tache"])
    assert task["recit"] == "Lu et relu , fin. [emoji retirés à la publication, spec §7.3]"


@pytest.mark.parametrize("url", ["javascript:alert(1)", "https://user:pw@trust.example/", "ftp://trust.example",
                                 "https://trust.example/?q=1"])
def test_a_proof_link_is_an_http_url_only(season: Season, tmp_path: Path, url: str) -> None:
    ran = run_corpus(*season.args("conformite", tmp_path / "out", "--season-close", CLOSE, "--trust-layer-url",
                                  url))
    assert ran.returncode == 2 and "--trust-layer-url" in ran.stderr and len(ran.stderr.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_the_proof_links_follow_the_trust_layer_url(season: Season, tmp_path: Path) -> None:
    out = tmp_path / "out"
    ran = run_corpus(*season.args("conformite", out, "--season-close", CLOSE, "--trust-layer-url",
                                  "https://preuves.example:8443/tl/"))
    assert ran.returncode == 0, ran.stderr
    report = load(out / "conformite/rapports/agent-constant.json")
    links = [p["lien"] for t in report["taches"] for a in t["assertions"] for p in a["preuves"]]
    assert links and all(re.fullmatch(r"https://preuves\.example:8443/tl/v1/proof/prf_[0-9a-f]{8}_[0-9a-f]+", x)
                         for x in links)


def test_the_index_public_harness_shows_every_point() -> None:
    """bars/index-public (bench/index_public.py): both tracks published from the blind community, the constant
    line first, the overclaimer's cause, the merged DID, the labels, and the refusal on an unfrozen track."""
    import subprocess
    import sys
    result = subprocess.run([sys.executable, str(ROOT / "bench" / "index_public.py")], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    out = result.stdout
    assert out.count("meilleure réponse constante  réussite  4/10") == 4  # two tables, two tracks
    assert out.count("Agent Surconfiant, non étayée:") == 2 and out.count("cause valeur") == 2
    assert out.count("fusionné: Agent Lié") == 2 and out.count("AI Act art. 50 label on 8 of 8 pages") == 2
    assert "exit 1; written: False" in out and out.rstrip().endswith("index-public: every point shown holds")


def test_a_participant_without_any_submission_is_a_line_of_its_own(season: Season, tmp_path: Path) -> None:
    c = _copy_service(season, tmp_path)
    _edit_registrations(c, lambda d: d["participants"].append(
        {"agent": "Agent Muet", "did": "did:key:z6MkMuet", "cle_empreinte": "ab" * 32, "stack": "pile",
         "tableau": "communaute", "inscrit_le": "2026-10-20T09:00:00Z", "verified_did_history": []}))
    out = tmp_path / "out"
    assert run_corpus(*season.args("conformite", out, "--season-close", CLOSE, community=c)).returncode == 0
    line = load(out / "conformite/index.json")["tableaux"]["communaute"]["lignes"][-1]
    assert (line["agent"], line["reussite"], line["taches_rendues"]) == ("Agent Muet", 0, 0)
    assert line["overclaim"] == {"non_etayees": 0, "rendues": 0, "taux": None}
    assert "sans objet (aucune assertion rendue)" in (out / "conformite/index.html").read_text("utf-8")
