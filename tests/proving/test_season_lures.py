"""Season 1 read by a professional of each domain: what a careful participant would cite never gets a submission
rejected, and the registers read as real ones (issue 33).

Each test reads the built bodies (or the served référentiel) as a participant would, apart from the code that
writes them, and states one property a domain reader expects; each failed on the bodies before issue 33.
Conformité is read as a compliance analyst screening IAS / IOBSP / CIF intermediaries, générique as a
purchasing manager.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from trackfix import CONFORMITE, GENERIQUE, ROOT, copy_tracks

from generator.base.errors import Location
from generator.contract.freeze import check_freeze, freeze
from generator.proving.checks import check_season, check_trap
from generator.reading.logic import load_logic
from generator.reading.reader import CorpusReader
from generator.reading.season_model import load_season
from generator.serving.instances.serve import banner
from generator.serving.instances.topology import Topology
from generator.serving.rendering.nginx_settings import Settings
from generator.serving.tls.tls_local import make_local_tls
from generator.track_code.generique.evaluator import NAMED_SHORTCUTS, evaluate

CONF = ROOT / CONFORMITE.trees.build
GEN = ROOT / GENERIQUE.trees.build
# The register keeps a lapsed registration actif for the thirty days its renewal may take, and says so in the
# observations of those it retired (conf-01's trap: AGR-5113 still actif 15 days after its end); a month later
# it has recorded the expiry (tests/proving/test_season_lures_2.py holds the practice stated).
REGISTER_LAG = timedelta(days=31)
REJECTED = ("rejeter la soumission",)


def _bodies(build: Path, collection: str) -> list[dict[str, Any]]:
    docs = [json.loads(p.read_bytes()) for p in sorted((build / collection.strip("/")).rglob("*.json"))]
    return [d for d in docs if d.get("existe") is not False]


def _one(build: Path, path: str) -> dict[str, Any]:
    return json.loads((build / (path.lstrip("/") + ".json")).read_bytes())  # type: ignore[no-any-return]


def _sentences(text: str) -> list[str]:
    """Sentences of a référentiel text: cut at '. ' (and ' ; ' kept inside), whitespace folded."""
    return [s.strip() for s in re.split(r"(?<=[.:])\s+(?=[A-ZÉ])", " ".join(text.split())) if s.strip()]


def _texts(referentiel: dict[str, Any]) -> list[str]:
    out = [referentiel["objet"], *referentiel["principes"].values()]
    out += [c["regle"] for c in referentiel["criteres"]]
    return out


CONF_SEASON = load_season(ROOT / CONFORMITE.trees.season_sources, CONFORMITE)
GEN_SEASON = load_season(ROOT / GENERIQUE.trees.season_sources, GENERIQUE)
EXAMEN = min(date.fromisoformat(s.task.date_examen) for s in CONF_SEASON.statements)


# --- 2 and 7 at once: every field a participant reads and may not assert ---------------------------
# Issue 42 made this one positive rule: the référentiel serves the table of what may be asserted and says that
# any other pointer rejects the submission; tests/proving/test_season_lures_2.py holds every served pointer to it.

# --- 1. registrations past their end ------------------------------------------------------------------------

def test_no_registration_is_shown_actif_a_month_after_its_own_end_in_the_register_or_the_list() -> None:
    entries = {e["agrement"]: e for page in _bodies(CONF, "/listes/agrees") for e in page["entrees"]}
    stale = []
    for agr in _bodies(CONF, "/agrements"):
        if date.fromisoformat(agr["date_fin_validite"]) + REGISTER_LAG < EXAMEN:
            listed = entries.get(agr["ressource"], {}).get("statut")
            if "actif" in (agr["statut"], listed):
                stale.append(f"{agr['ressource']} ended {agr['date_fin_validite']}: registre {agr['statut']}, "
                             f"liste {listed}")
    assert stale == []


def test_conf_01_keeps_its_intended_lag_of_a_fortnight() -> None:
    agr = _one(CONF, "/agrements/AGR-5113")
    assert agr["statut"] == "actif" and date.fromisoformat(agr["date_fin_validite"]) == EXAMEN - timedelta(days=15)


# --- 2. the attestations' descriptive fields ----------------------------------------------------------------

def test_c3_says_the_contract_fields_describe_the_contract_and_no_condition_reads_them() -> None:
    regle = " ".join(next(c["regle"] for c in _one(CONF, "/referentiel")["criteres"] if c["id"] == "C3").split())
    clause = next(s for s in regle.split(". ") if "numero_police" in s)
    for word in ("numero_police", "activites_garanties", "montants_garantis", "observations",
                 "aucune condition ne les lit", "avenants en vigueur"):
        assert word in clause, (word, clause)


def _labels() -> dict[str, str]:
    corpus = (ROOT / CONFORMITE.trees.sources / "corpus.yaml").read_text("utf-8")
    return dict(re.findall(r"^  ([a-z-]+): (.+)$", corpus, re.M))


def test_an_attestation_guarantees_the_firms_activities_as_issued_and_its_avenant_says_what_it_excluded() -> None:
    """The activities a policy lists are the firm's at its issue: those of its agréments, and the task's (C3
    reads an attestation as covering it unless an avenant excludes it, so its document must not say
    otherwise); an exclusion agreed later is said by the avenant itself, never written back into the
    attestation (issue 42: ATT-8386 and AVN-7247)."""
    labels = _labels()
    agrements = {a["ressource"]: a for a in _bodies(CONF, "/agrements")}
    avenants = {a["ressource"]: a for a in _bodies(CONF, "/avenants")}
    tasks = {s.task.entite: s.task.activite for s in CONF_SEASON.statements}
    seen = set()
    for att in _bodies(CONF, "/attestations"):
        firm = _one(CONF, att["entite"])
        own = {labels[agrements[a]["activite"]]: agrements[a]["activite"]
               for a in firm["agrements"] if a in agrements}
        if att["entite"] in tasks:
            own[labels[tasks[att["entite"]]]] = tasks[att["entite"]]
            assert labels[tasks[att["entite"]]] in att["activites_garanties"], att["ressource"]
        parts = att["activites_garanties"].split(" ; ")
        assert set(parts) <= set(own), (att["ressource"], parts, sorted(own))
        for ref in att["avenants"]:
            avn = avenants.get(ref)
            if avn and avn["objet"] == "exclusion-activite":
                label = labels[avn["activite_exclue"]]
                assert avn["date_effet"] > att["date_emission"]
                assert label.lower() in avn.get("observations", "").lower(), (ref, label)
        seen.add(att["activites_garanties"])
    assert len(seen) > 3


def test_amounts_vary_by_insurer_and_by_size() -> None:
    attestations = _bodies(CONF, "/attestations")
    insurers = {a["emetteur"] for a in attestations}
    pairs = {(a["emetteur"], a["montants_garantis"]) for a in attestations}
    assert len({a["montants_garantis"] for a in attestations}) >= len(insurers) and len(pairs) > len(insurers)


def test_a_renewal_keeps_its_insurer_and_its_policy_number() -> None:
    by_firm: dict[str, list[dict[str, Any]]] = {}
    for att in _bodies(CONF, "/attestations"):
        by_firm.setdefault(att["entite"], []).append(att)
    renewals = 0
    for atts in by_firm.values():
        for old in atts:
            for new in atts:
                if date.fromisoformat(new["date_emission"]) == date.fromisoformat(old["date_fin_validite"]) + \
                        timedelta(days=1) and new["type"] == old["type"]:
                    renewals += 1
                    assert (new["emetteur"], new["numero_police"]) == (old["emetteur"], old["numero_police"])
    assert renewals >= 1  # conf-08's two attestations


# --- 3. sanctioned persons and beneficial owners ------------------------------------------------------------

def test_no_beneficial_owner_of_another_surname_shares_a_first_name_with_a_sanctioned_person() -> None:
    """A screening analyst documents a partial hit and may not assert it: the one intended homonym (conf-07,
    same nom and prénoms, another date of birth) stays; no other owner half-matches a listed person."""
    listed = [e for page in _bodies(CONF, "/mesures-restrictives") for e in page["entrees"]]
    owners = [e for page in _bodies(CONF, "/beneficiaires") for e in page["entrees"]]
    partial = [f"{o['nom']} {o['prenoms']} {o['date_naissance']} ~ {s['nom']} {s['prenoms']} {s['date_naissance']}"
               for s in listed for o in owners
               if o["nom"] != s["nom"] and set(o["prenoms"].split()) & set(s["prenoms"].split())]
    assert partial == []
    homonyms = [(o["nom"], o["prenoms"]) for s in listed for o in owners
                if (o["nom"], o["prenoms"]) == (s["nom"], s["prenoms"])
                and o["date_naissance"] != s["date_naissance"]]
    assert homonyms == [("Rouvenac", "Théophane")]


# --- 4. the rule of founding facts --------------------------------------------------------------------------

def test_the_definition_of_facts_sends_to_the_cases_and_several_deciding_criteria_are_a_choice() -> None:
    text = " ".join(_one(CONF, "/referentiel")["principes"]["justification"].split())
    definition = text[text.index("Faits d'un critère qui décide"):]
    definition = definition[:definition.index(". ") + 1]
    assert "1° à 8°" in definition and "pas un fait demandé" in definition, definition
    several = text[text.index("Quand plusieurs critères décident"):]
    several = several[:several.index(". ") + 1]
    assert "choisit" in several and "sont acceptés" in several, several


# --- 5. an avenant after a lapse ----------------------------------------------------------------------------

def test_no_prorogation_takes_effect_after_its_attestation_lapsed() -> None:
    """An insurer does not prolong a contract that has ended: after the end it reinstates it."""
    late = []
    for avn in _bodies(CONF, "/avenants"):
        att = _one(CONF, avn["attestation"])
        if avn["objet"] == "prorogation" and avn["date_effet"] > att["date_fin_validite"]:
            late.append(avn["ressource"])
    assert late == []
    conf_09 = _one(CONF, "/avenants/AVN-7520")
    assert (conf_09["objet"], conf_09["date_effet"]) == ("remise-en-vigueur", "2026-11-01")


def test_every_avenant_objet_the_schema_allows_is_a_parameter_of_c3() -> None:
    schema = json.loads((ROOT / "tracks/conformite/schemas/avenants.schema.json").read_bytes())
    c3 = next(c for c in _one(CONF, "/referentiel")["criteres"] if c["id"] == "C3")
    named = set(c3["parametres"]["avenants"]) | {"rectification"}  # "n'a pas d'effet", said in the rule
    assert set(schema["properties"]["objet"]["enum"]) <= named
    assert all(f"objet {o}" in " ".join(c3["regle"].split()) for o in schema["properties"]["objet"]["enum"])


# --- 6. the catalogue and the 404 body ----------------------------------------------------------------------

@pytest.mark.parametrize("track", [CONFORMITE, GENERIQUE], ids=lambda t: t.piste)
def test_the_catalogue_lists_every_path_the_manifest_holds_as_the_404_body_says(track: Any) -> None:
    manifest = json.loads((ROOT / track.trees.manifest / "manifest.json").read_bytes())
    held = {r["path"] for r in manifest["resources"] if r["kind"] != "systeme"}
    assert any(r["kind"] == "absent" for r in manifest["resources"])
    catalogue = _one(ROOT / track.trees.build, track.catalogue)
    base = catalogue["base_url"]
    listed = {r["url"].removeprefix(base) for r in catalogue["ressources"]}
    assert listed == held
    assert any(json.loads((ROOT / track.trees.build / (p.lstrip("/") + ".json")).read_bytes()).get("existe")
               is False for p in listed)  # the absents are there, unmarked
    message = " ".join(_one(ROOT / track.trees.build, "/_systeme/404")["message"].split())
    assert "publie tous les siens" in message


# --- 7. générique: what a buyer cites -----------------------------------------------------------------------

@pytest.mark.parametrize("field", ["conditions_commerciales", "unite_de_vente", "prix_catalogue_ht", "mention",
                                   "designation", "conditionnement", "siret", "numero_tva"])
def test_each_field_a_buyer_cites_is_outside_the_table_and_said_read_by_no_condition(field: str) -> None:
    """Issue 42: no list says what may not be asserted; the table says what may, and the référentiel says of
    each field a buyer would cite first that no condition reads it."""
    ref = _one(GEN, "/generique/referentiel")
    table = ref["assertions"]["champs_qui_s_affirment"]
    assert not any(field in pattern.split("/") for patterns in table.values() for pattern in patterns)
    sentences = [s for text in _texts(ref) for s in _sentences(text) if field in s]
    said = ("aucune condition", "indicatif", "les conditions ne lisent")
    assert any(word in s for s in sentences for word in said), (field, sentences)


# --- 8. gen-10: the catalogue looks within budget -----------------------------------------------------------

def test_gen_10s_obvious_option_looks_within_budget_on_the_catalogue_and_the_catalogue_reading_fails() -> None:
    statement = next(s for s in GEN_SEASON.statements if s.task.id == "gen-10")
    page = _one(GEN, "/generique/catalogues/ecrans-bureautiques/1")
    budget = float(statement.task.budget_unitaire_ht)
    assert any(float(e["prix_catalogue_ht"]) <= budget for e in page["entrees"])
    reader = CorpusReader(GEN, GENERIQUE)
    naive = evaluate(statement.task, reader, NAMED_SHORTCUTS["prix-catalogue-dans-le-budget"]).verdict
    assert naive != GEN_SEASON.key["gen-10"].verdict and GEN_SEASON.key["gen-10"].raccourci == \
        "prix-catalogue-dans-le-budget"


def test_a_generique_p5_trap_must_beat_every_naive_reading_of_the_family_not_only_its_raccourci() -> None:
    """The season check holds each P5 trap against the whole panel of P5 readings: gen-10 keyed with the old
    raccourci (prix-catalogue) is still refused when the catalogue-within-budget reading answers it right."""
    reader = CorpusReader(GEN, GENERIQUE)
    season = check_season(GEN_SEASON, reader, Location(str(ROOT / GENERIQUE.trees.season_sources / "cle.yaml")))
    assert season.problems == []
    report = next(r for r in season.tasks if r.statement.task.id == "gen-10")
    assert report.entry is not None
    naive = "P5-prix-catalogue-dans-le-budget"
    report.entry = replace(report.entry, raccourci="prix-catalogue")
    report.shortcuts = {**report.shortcuts, naive: report.entry.verdict}
    problems = check_trap(load_logic(GENERIQUE), report)
    assert [p.message.split(":")[0] for p in problems] == ["the trap does not trap"]
    assert naive in problems[0].message


# --- 9. gen-05: one delay per option, and a suspension removes it -------------------------------------------

def test_the_supplier_delay_holds_for_each_reference_and_a_suspension_removes_the_option() -> None:
    ref = _one(GEN, "/generique/referentiel")
    same = " ".join(ref["principes"]["sources_de_meme_rang"].split())
    assert "chacune des références qu'elle liste" in same and "se contredisent" in same
    c7 = " ".join(next(c["regle"] for c in ref["criteres"] if c["id"] == "C7").split())
    assert "ne reporte pas la livraison" in c7


# --- 10. the surface a buyer reads --------------------------------------------------------------------------

def test_the_value_convention_says_which_fields_it_covers() -> None:
    valeurs = " ".join(_one(GEN, "/generique/referentiel")["principes"]["valeurs"].split())
    assert "conditions_commerciales" in valeurs and "à la française" in valeurs


def test_one_name_for_each_unit_of_sale() -> None:
    """The unit the sheet names is the one its packaging prices and the statements count."""
    statements = {s.task.categorie: s for s in GEN_SEASON.statements}
    for sheet in _bodies(GEN, "/generique/produits"):
        unit = re.sub(r"^(?:le |la |l')", "", sheet["caracteristiques"]["unite_de_vente"]).split()[0]
        priced = re.search(r"prix (?:à la |à l'|au )(\w+)", sheet["conditionnement"])
        assert priced is None or priced.group(1) == unit, (sheet["ressource"], sheet["conditionnement"], unit)
        question = " ".join(statements[sheet["categorie"]].question.split()) if sheet["categorie"] in statements \
            else ""
        assert not question or f"par {unit}" in question, (sheet["ressource"], unit)


def test_the_key_prose_gives_each_screen_its_own_size() -> None:
    sizes = {m for s in _bodies(GEN, "/generique/produits") for m in re.findall(r"(\d+) pouces", s["designation"])}
    key = (ROOT / GENERIQUE.trees.season_sources / "cle.yaml").read_text("utf-8")
    assert set(re.findall(r"(\d+) pouces", key)) <= sizes


def test_a_delivery_on_a_weekend_is_one_the_referentiel_allows() -> None:
    dates = " ".join(_one(GEN, "/generique/referentiel")["principes"]["dates"].split())
    weekend = []
    for st in GEN_SEASON.statements:
        verdict = GEN_SEASON.key[st.task.id].verdict
        if not verdict.startswith("PRD-"):
            continue
        page = _one(GEN, f"/generique/catalogues/{st.task.categorie}/1")
        while True:
            entry = next((e for e in page["entrees"] if e["produit"].endswith(verdict)), None)
            if entry or page["page_suivante"] is None:
                break
            page = _one(GEN, page["page_suivante"])
        assert entry is not None
        day = date.fromisoformat(st.task.date_commande) + timedelta(days=int(entry["delai_livraison_jours"]))
        if day.weekday() >= 5:
            weekend.append(st.task.id)
    assert weekend == ["gen-03"]  # the recommended dalle arrives on Sunday 2026-11-22
    assert "dimanches" in dates and "livrent tous les jours" in dates


def _luhn(digits: str) -> bool:
    total = 0
    for i, c in enumerate(reversed(digits)):
        d = int(c) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def test_a_supplier_sheet_carries_a_well_formed_fictional_legal_identity() -> None:
    """SIREN starting 0000 (no real SIREN does) with its Luhn key, SIRET with its own, and the VAT number
    FR + (12 + 3 × (SIREN mod 97)) mod 97 + SIREN: a checker accepts each, a professional sees the fiction."""
    sheets = _bodies(GEN, "/generique/fournisseurs")
    assert sheets
    for sheet in sheets:
        siret, tva = sheet["siret"], sheet["numero_tva"]
        siren = siret[:9]
        assert siret.startswith("0000") and len(siret) == 14 and _luhn(siren) and _luhn(siret), siret
        assert tva == f"FR{(12 + 3 * (int(siren) % 97)) % 97:02d}{siren}", (siret, tva)
    assert len({s["siret"] for s in sheets}) == len(sheets)


# --- the freeze and serve wording ---------------------------------------------------------------------------

def test_the_generique_freeze_check_names_its_own_served_path(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    for tree in (GENERIQUE.trees.manifest, GENERIQUE.trees.season):
        shutil.copytree(ROOT / tree, root / tree)
    copy_tracks(root, tracks=("conformite", "generique"))
    places = GENERIQUE.places
    freeze(root, root / GENERIQUE.bareme.file, tmp_path / "salt.hex", places)
    record = root / places.record
    record.write_text(json.dumps(json.loads(record.read_text("utf-8")), ensure_ascii=False), "utf-8")
    problems = check_freeze(root, None, places)
    assert any("what /generique/gel serves changed" in p for p in problems), problems
    assert not any(" /gel " in p for p in problems)


@pytest.mark.parametrize(("port", "url"), [(443, "https://corpus.test"), (8443, "https://corpus.test:8443")])
def test_the_serve_banner_spells_the_canonical_url(tmp_path: Path, port: int, url: str) -> None:
    topology = Topology(root=ROOT, base=tmp_path / "nginx", secret_file=tmp_path / "secrets",
                        tls=make_local_tls(tmp_path / "tls", ["corpus.test"]),
                        replica_addresses=[("127.0.0.2", 18080)], frontal_addresses=[("127.0.0.1", port)])
    assert topology.named_url("corpus.test") == url
    assert topology.resolve("corpus.test") == f"corpus.test:{port}:127.0.0.1"


@pytest.mark.parametrize(("port", "tls", "url"), [(443, True, "https://127.0.0.1/catalogue"),
                                                   (8443, True, "https://127.0.0.1:8443/catalogue"),
                                                   (80, False, "http://127.0.0.1/catalogue")])
def test_the_single_server_banner_spells_the_canonical_url(tmp_path: Path, port: int, tls: bool, url: str) -> None:
    cert = tmp_path / "cert.pem" if tls else None
    settings = Settings(root=ROOT, prefix=tmp_path / "nginx", port=port, tls_cert=cert, tls_key=cert)
    curl = [line for line in banner(settings, "dev", "s3cret", "/catalogue").splitlines() if "curl" in line]
    assert curl and all(url in line for line in curl), curl
