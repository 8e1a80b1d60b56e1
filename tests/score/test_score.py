"""``corpus score``: every rule of spec §4, §4.1 and §5.7 with a fixture that breaks it.

The season is the scorer's own (tests/score_fixtures.py): two tasks over the compiler's minimal corpus.
Expected hashes are computed there with hashlib and json (CONTRACT §2), never taken from the scorer.
"""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from score_fixtures import (
    END_DATE,
    HONEST_01,
    HONEST_02,
    LINK,
    NONCE,
    ScoreWorld,
    edited,
    expected_request_hash,
    make_score_world,
    submission,
)
from trackfix import CONFORMITE, ROOT

from generator.base.jsonvalue import json_equal
from generator.reading.reader import MISSING, resolve_pointer
from generator.score import ScoreInputError, ScoreOptions, make_disclosure, make_submission, score_submissions


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> ScoreWorld:
    return make_score_world(tmp_path_factory.mktemp("score"))


def score(world: ScoreWorld, *subs: dict[str, Any], proofs: dict | None = None) -> dict[str, Any]:
    return score_submissions(list(subs), root=world.root, options=ScoreOptions(proofs=proofs), track=CONFORMITE)


def task(report: dict[str, Any], task_id: str) -> dict[str, Any]:
    return next(t for t in report["taches"] if t["tache"] == task_id)


def one(world: ScoreWorld, sub: dict[str, Any], proofs: dict | None = None) -> dict[str, Any]:
    return task(score(world, sub, proofs=proofs), sub["task_id"])


def honest(world: ScoreWorld) -> dict[str, Any]:
    return submission(world, "conf-01", "conforme", HONEST_01)


def single_rejection(result: dict[str, Any], statut: str, prefix: str, fragment: str) -> None:
    assert result["statut"] == statut, result
    assert len(result["rejets"]) == 1, result["rejets"]
    assert result["rejets"][0].startswith(prefix) and fragment in result["rejets"][0], result["rejets"]
    assert result["assertions"] == [] and not result["reussie"]


# --- the honest baseline: everything else is this plus one defect -----------------------------------

def test_honest_submissions_succeed(world: ScoreWorld) -> None:
    report = score(world, honest(world), submission(world, "conf-02", "non_conforme", HONEST_02))
    assert report["format"] == "corpus-score/1"
    assert report["reussite"] == 2 and report["taches_total"] == 2
    assert report["overclaim"] == {"non_etayees": 0, "rendues": 4, "taux": 0.0}
    for t in report["taches"]:
        assert (t["statut"], t["verdict_exact"], t["fonde"], t["reussie"], t["faits_manquants"]) == \
            ("rendue", True, True, True, [])
        assert [a["statut"] for a in t["assertions"]] == ["etayee", "etayee"]
        assert all(a["cause"] is None for a in t["assertions"])


def test_make_disclosure_opens_the_independently_computed_hashes(world: ScoreWorld) -> None:
    _, disclosure = make_disclosure(world.root, "/agrements/AGR-0001")
    assert disclosure["request_hash"]["value"] == expected_request_hash("/agrements/AGR-0001")
    assert disclosure["response_hash"]["value"] == world.response_hash("/agrements/AGR-0001")
    _, defect = make_disclosure(world.root, "/agrements/AGR-0001", response_of="/_systeme/403")
    assert defect["response_hash"]["value"] == world.response_hash("/_systeme/403")
    sub = make_submission(world.root, "conf-01", "conforme", HONEST_01, piste="conformite")
    assert one(world, sub)["reussie"]


def test_contract_vector_request_hash() -> None:
    assert expected_request_hash("/agrements/AGR-4417") == \
        "1378d38cdb14483cdbea18463c2a908158202cc6dfba0195dbad8050d1bbaa9c"


# --- rejected at entry (spec §4) ---------------------------------------------------------------------

@pytest.mark.parametrize(("change", "prefix", "fragment"), [
    ({"verdict": "conforme?"}, "/verdict:", "is not one of"),
    ({"track": "generique"}, "/track:", "conformite"),
    ({"season": "1"}, "/season:", "is not of type 'integer'"),
    ({"surplus": True}, "/:", "Additional properties"),
])
def test_schema_rejects_at_entry(world: ScoreWorld, change: dict, prefix: str, fragment: str) -> None:
    single_rejection(one(world, edited(honest(world), **change)), "rejetee_entree", prefix, fragment)


def test_missing_property_and_bad_pointer_rejected_at_entry(world: ScoreWorld) -> None:
    sub = honest(world)
    del sub["verdict"]
    single_rejection(one(world, sub), "rejetee_entree", "/:", "missing required field: 'verdict'")
    sub = honest(world)
    sub["assertions"][0]["claim"]["field"] = "agrements/0"  # not a JSON Pointer
    single_rejection(one(world, sub), "rejetee_entree", "/assertions/0/claim/field:", "is not a JSON Pointer")
    sub = honest(world)
    sub["assertions"][0]["claim"]["field"] = "/agrements~2"  # '~' must be ~0 or ~1
    single_rejection(one(world, sub), "rejetee_entree", "/assertions/0/claim/field:", "is not a JSON Pointer")


def test_wrong_season_rejected_at_entry(world: ScoreWorld) -> None:
    single_rejection(one(world, edited(honest(world), season=2)), "rejetee_entree", "/season:",
                     "not the season being scored")


def test_unknown_task_reported_apart(world: ScoreWorld) -> None:
    report = score(world, edited(honest(world), task_id="conf-77"))
    assert report["hors_saison"][0]["task_id"] == "conf-77"
    assert "names no task of season 1" in report["hors_saison"][0]["rejets"][0]
    assert task(report, "conf-01")["statut"] == "non_rendue"


def test_duplicate_triplet_rejected_at_entry(world: ScoreWorld) -> None:
    sub = submission(world, "conf-01", "conforme", [*HONEST_01, HONEST_01[0]])
    single_rejection(one(world, sub), "rejetee_entree", "/assertions/2/claim:", "repeats /assertions/0")


def test_same_field_with_values_of_other_types_is_not_a_duplicate(world: ScoreWorld) -> None:
    sub = submission(world, "conf-01", "conforme", [*HONEST_01, ("/agrements/AGR-0001", "/existe", True),
                                                    ("/agrements/AGR-0001", "/existe", "true")])
    result = one(world, sub)
    assert result["statut"] == "rendue"
    assert [a["statut"] for a in result["assertions"]][2:] == ["etayee", "non_etayee"]


def test_duplicate_assertion_id_rejected_at_entry(world: ScoreWorld) -> None:
    sub = honest(world)
    sub["assertions"][1]["id"] = sub["assertions"][0]["id"]
    single_rejection(one(world, sub), "rejetee_entree", "/assertions/1/id:", "already the id of /assertions/0")


def test_disclosure_for_uncited_proof_rejected_at_entry(world: ScoreWorld) -> None:
    sub = honest(world)
    sub["disclosures"]["prf_unused"] = world.disclosure("/agrements/AGR-0001")
    single_rejection(one(world, sub), "rejetee_entree", "/disclosures/prf_unused:", "no assertion cites")


def test_missing_disclosure_for_cited_proof_rejected_at_entry(world: ScoreWorld) -> None:
    sub = honest(world)
    sub["assertions"][1]["proof_ids"].append("prf_9999")
    single_rejection(one(world, sub), "rejetee_entree", "/disclosures:", "no entry for prf_9999, cited by a2")


def test_proof_listed_twice_rejected_at_entry(world: ScoreWorld) -> None:
    sub = honest(world)
    sub["assertions"][0]["proof_ids"] *= 2
    single_rejection(one(world, sub), "rejetee_entree", "/assertions/0/proof_ids:", "listed twice")


@pytest.mark.parametrize("damage", [
    lambda d: d.pop("response_hash"),
    lambda d: d.update(extra={"nonce": NONCE, "value": NONCE}),
    lambda d: d["request_hash"].update(nonce=7),
    lambda d: d["response_hash"].pop("value"),
    lambda d: d["request_hash"].update(value=7),
    lambda d: d["response_hash"].update(nonce="a" * 129),  # a string, but far longer than any hash
])
def test_ill_formed_disclosure_rejected_at_entry(world: ScoreWorld, damage: Any) -> None:
    sub = honest(world)
    damage(sub["disclosures"]["prf_0000"])
    single_rejection(one(world, sub), "rejetee_entree", "/disclosures/prf_0000", "ill-formed disclosure")


@pytest.mark.parametrize(("opening", "value", "cause"), [
    ("request_hash", lambda v: v.upper(), "ressource"),
    ("request_hash", lambda v: v[:63], "ressource"),
    ("request_hash", lambda v: "not hex at all", "ressource"),
    ("response_hash", lambda v: v.upper(), "valeur"),
    ("response_hash", lambda v: v + "0", "valeur"),
    ("response_hash", lambda v: "", "valeur"),
])
def test_well_formed_disclosure_that_fails_verification_is_non_etayee(world: ScoreWorld, opening: str,
                                                                      value: Any, cause: str) -> None:
    """Spec §4: {nonce, value} as strings is well formed; a value that is not the expected hash fails
    condition 3 (request) or 4 (response), it does not reject the submission."""
    sub = honest(world)
    sub["disclosures"]["prf_0001"][opening]["value"] = value(sub["disclosures"]["prf_0001"][opening]["value"])
    sub["disclosures"]["prf_0001"][opening]["nonce"] = "NONCE-of-any-shape"
    result = one(world, sub)
    assert result["statut"] == "rendue" and result["rejets"] == []
    assert statuses(result) == [("etayee", None), ("non_etayee", cause)]


def test_rejected_submission_has_no_exact_verdict_and_no_missing_fact(world: ScoreWorld) -> None:
    """The verdict of a rejected submission is the key's, yet it is not judged: verdict_exact is false
    and no founding fact is listed as missing (the submission is not scored at all, spec §4)."""
    at_entry = edited(honest(world), track="generique")
    at_close = submission(world, "conf-01", "conforme", [HONEST_01[0], ("/referentiel", "/titre", "x")])
    for sub, statut in ((at_entry, "rejetee_entree"), (at_close, "rejetee_cloture")):
        result = one(world, sub)
        assert result["statut"] == statut and result["verdict"] == "conforme" == result["verdict_attendu"]
        assert result["verdict_exact"] is False and result["faits_manquants"] == [] and not result["fonde"]


def _words(*path: str) -> tuple[str, str, str]:
    """The title, how-to and first example the track's submission schema writes beside a pattern."""
    node = json.loads((ROOT / "tracks" / "conformite" / "schemas" / "submission.schema.json").read_text("utf-8"))
    for part in path:
        node = node[part]
    return node["title"], node["description"], json.dumps(node["examples"][0])


def test_pattern_rejection_is_worded_from_the_schema(world: ScoreWorld) -> None:
    """A participant reads what the value must be and an example, from the schema, never a regex."""
    sub = honest(world)
    sub["assertions"][0]["claim"]["field"] = "agrements/0"
    sub["assertions"][1]["claim"]["resource"] = "x" * 5000
    rejets = one(world, sub)["rejets"]
    claim = ("properties", "assertions", "items", "properties", "claim", "properties")
    title, how, example = _words(*claim, "field")
    assert rejets[0] == f"/assertions/0/claim/field: 'agrements/0' is not {title}: {how}, as {example}"
    title, how, example = _words(*claim, "resource")
    assert rejets[1].startswith("/assertions/1/claim/resource: 'xxx") and "(5000 characters)" in rejets[1]
    assert rejets[1].endswith(f"is not {title}: {how}, as {example}") and len(rejets[1]) < 400
    assert not any("\\A" in r or "(?!" in r or "^(" in r for r in rejets), rejets


def test_above_plafond_rejected_at_entry(world: ScoreWorld) -> None:
    claims = [*HONEST_01, ("/agrements/AGR-0001", "/statut", "actif"), ("/agrements/AGR-0001", "/existe", True),
              ("/agrements/AGR-0001", "/activite", "courtage-en-assurance")]
    single_rejection(one(world, submission(world, "conf-01", "conforme", claims)), "rejetee_entree",
                     "/assertions:", "5 assertions, above the plafond of 4")
    assert one(world, submission(world, "conf-01", "conforme", claims[:4]))["statut"] == "rendue"


def test_two_submissions_for_one_task_refused(world: ScoreWorld) -> None:
    with pytest.raises(ScoreInputError, match="2 submissions for conf-01"):
        score(world, honest(world), honest(world))


# --- rejected at the close (spec §5.7) -----------------------------------------------------------------

@pytest.mark.parametrize(("claim", "prefix", "fragment"), [
    (("/entites/ENT-0002", "/statut", "en-liquidation"), "/assertions/1/claim/resource:", "outside the graph"),
    (("/referentiel", "/titre", "x"), "/assertions/1/claim/resource:", "outside the graph of conf-01"),
    (("/listes/agrees/conseil-en-investissements-financiers/1", "/entrees/0/statut", "suspendu"),
     "/assertions/1/claim/resource:", "outside the graph"),
    (("/entites/ENT-0001", "", {}), "/assertions/1/claim/field:", "whole document"),
    (("/entites/ENT-0001", "/denomination", "Société Érable-Test"), "/assertions/1/claim/field:",
     "consumed by no criterion"),
    (("/listes/agrees/courtage-en-assurance/2", "/entrees/0/denomination", "Société Érable-Test"),
     "/assertions/1/claim/field:", "consumed by no criterion"),
    (("/listes/agrees/courtage-en-assurance/2", "/page_suivante", None), "/assertions/1/claim/field:",
     "consumed by no criterion"),
])
def test_rejected_at_close(world: ScoreWorld, claim: tuple, prefix: str, fragment: str) -> None:
    sub = submission(world, "conf-01", "conforme", [HONEST_01[0], claim])
    single_rejection(one(world, sub), "rejetee_cloture", prefix, fragment)


def test_common_list_entry_not_concerning_the_entity_rejected_at_close(world: ScoreWorld) -> None:
    # ENT-0002 has no bénéficiaire: no entry of the mesures restrictives concerns it.
    sub = submission(world, "conf-02", "non_conforme",
                     [HONEST_02[0], ("/mesures-restrictives/1", "/entrees/0/nom", "Érable")])
    single_rejection(one(world, sub), "rejetee_cloture", "/assertions/1/claim:", "does not concern")
    # For ENT-0001 the same entry concerns the entity (same nom and prénoms as its bénéficiaire).
    sub = submission(world, "conf-01", "conforme",
                     [*HONEST_01, ("/mesures-restrictives/1", "/entrees/0/nom", "Érable")])
    assert one(world, sub)["statut"] == "rendue"


# --- per assertion (spec §4.1) -------------------------------------------------------------------------

def statuses(result: dict[str, Any]) -> list[tuple[str, str | None]]:
    return [(a["statut"], a["cause"]) for a in result["assertions"]]


def test_condition_3_proof_of_another_resource(world: ScoreWorld) -> None:
    sub = honest(world)
    sub["disclosures"]["prf_0001"] = world.disclosure("/agrements/AGR-0999")
    result = one(world, sub)
    assert statuses(result) == [("etayee", None), ("non_etayee", "ressource")]
    assert result["faits_manquants"] == [END_DATE] and not result["fonde"] and not result["reussie"]


def test_condition_3_non_canonical_url(world: ScoreWorld) -> None:
    sub = honest(world)
    sub["disclosures"]["prf_0001"]["request_hash"]["value"] = expected_request_hash("/agrements/AGR-0001/")
    assert statuses(one(world, sub))[1] == ("non_etayee", "ressource")


@pytest.mark.parametrize("status", ["403", "503", "400"])
def test_instrument_defect_out_of_overclaim_and_minimum(world: ScoreWorld, status: str) -> None:
    claims = [*HONEST_01, ("/agrements/AGR-0001", "/statut", "actif")]
    report = score(world, submission(world, "conf-01", "conforme", claims, responses={2: f"/_systeme/{status}"}))
    result = task(report, "conf-01")
    assert statuses(result)[2] == ("defaut_instrument", "defaut_instrument")
    assert result["statut"] == "rendue" and result["comptees"] == 2 and result["reussie"]
    assert report["overclaim"] == {"non_etayees": 0, "rendues": 2, "taux": 0.0}
    # Out of the minimum too: with only one other assertion, the task is not rendered.
    sub = submission(world, "conf-01", "conforme", claims[1:], responses={1: f"/_systeme/{status}"})
    result = one(world, sub)
    assert result["statut"] == "non_rendue" and "1 counted assertion(s) for a minimum of 2" in result["motif"]


def test_instrument_defect_tested_after_condition_3(world: ScoreWorld) -> None:
    sub = honest(world)
    sub["disclosures"]["prf_0001"] = world.disclosure("/agrements/AGR-0001/", "/_systeme/403")
    assert statuses(one(world, sub))[1] == ("non_etayee", "ressource")


def test_404_body_is_not_an_instrument_defect(world: ScoreWorld) -> None:
    sub = submission(world, "conf-01", "conforme", HONEST_01, responses={1: "/_systeme/404"})
    assert statuses(one(world, sub))[1] == ("non_etayee", "valeur")


def test_condition_4_response_hash_of_another_body(world: ScoreWorld) -> None:
    sub = submission(world, "conf-01", "conforme", HONEST_01, responses={1: "/agrements/AGR-0999"})
    result = one(world, sub)
    assert statuses(result)[1] == ("non_etayee", "valeur") and "response hash" in result["assertions"][1]["detail"]


@pytest.mark.parametrize(("field", "value"), [
    ("/statut", "suspendu"),  # another value
    ("/existe", "true"),  # a string is not a boolean
    ("/existe", 1),  # a number is not a boolean
    ("/date_fin_validite", ["2026-03-31"]),  # an array is not its element
    ("/date_fin_validite", None),
])
def test_condition_4_value_strict_json_equality(world: ScoreWorld, field: str, value: Any) -> None:
    sub = submission(world, "conf-01", "conforme", [*HONEST_01, ("/agrements/AGR-0001", field, value)])
    result = one(world, sub)
    assert statuses(result)[2] == ("non_etayee", "valeur")
    assert "strict JSON equality" in result["assertions"][2]["detail"]


def test_condition_4_field_absent_from_the_document(world: ScoreWorld) -> None:
    sub = submission(world, "conf-01", "conforme",
                     [*HONEST_01, ("/beneficiaires/ENT-0001/1", "/entrees/7/nom", "Érable")])
    result = one(world, sub)
    assert statuses(result)[2] == ("non_etayee", "valeur") and "has no field" in result["assertions"][2]["detail"]


def test_value_read_from_the_served_bytes(world: ScoreWorld) -> None:
    served = world.doc("/beneficiaires/ENT-0001/1")
    entry = served["entrees"][0]
    sub = submission(world, "conf-01", "conforme",
                     [*HONEST_01, ("/beneficiaires/ENT-0001/1", "/entrees/0/prenoms", entry["prenoms"]),
                      ("/beneficiaires/ENT-0001/1", "/page_suivante", served["page_suivante"])])
    assert statuses(one(world, sub))[2:] == [("etayee", None), ("etayee", None)]


def test_proofs_file_conditions_1_and_2(world: ScoreWorld) -> None:
    sub = submission(world, "conf-01", "conforme",
                     [*HONEST_01, ("/agrements/AGR-0001", "/statut", "actif")])
    sub["disclosures"]["prf_0002"] = world.disclosure("/agrements/AGR-0999")  # would fail condition 3 too
    proofs = {"prf_0000": {"valide": True, "identite_liee": True},
              "prf_0001": {"valide": True, "identite_liee": False},
              "prf_0002": {"valide": False, "identite_liee": True}}
    result = one(world, sub, proofs=proofs)
    assert statuses(result) == [("etayee", None), ("non_etayee", "identite_non_liee"),
                                ("non_etayee", "preuve_invalide")]
    assert {a["conditions_1_2"] for a in result["assertions"]} == {"verifiees"}
    del proofs["prf_0000"]
    assert statuses(one(world, sub, proofs=proofs))[0] == ("non_etayee", "preuve_invalide")


def test_without_proofs_file_every_line_says_not_verified(world: ScoreWorld) -> None:
    report = score(world, honest(world))
    assert report["conditions_1_2"] == "non_verifiees_hors_ligne"
    assert {a["conditions_1_2"] for a in task(report, "conf-01")["assertions"]} == {"non_verifiees_hors_ligne"}


@pytest.mark.parametrize("verdict", [
    {"valide": "yes", "identite_liee": True},
    {"valide": True, "identite_liee": True, "engagements": "x"},
    {"valide": True, "identite_liee": True, "engagements": {"request_hash": 5}},
    {"valide": True, "identite_liee": True, "incidents": 5},
    {"valide": True, "identite_liee": True, "non_verifie": [5]},
], ids=["valide not a bool", "engagements not an object", "an engagement not hex", "incidents not a list",
        "non_verifie not strings"])
def test_malformed_proofs_file_refused(world: ScoreWorld, verdict: dict[str, object]) -> None:
    with pytest.raises(ScoreInputError, match="prf_0000"):
        score(world, honest(world), proofs={"prf_0000": verdict})


def test_every_cited_proof_must_hold(world: ScoreWorld) -> None:
    sub = honest(world)
    sub["assertions"][1]["proof_ids"].append("prf_bad")
    sub["disclosures"]["prf_bad"] = world.disclosure("/agrements/AGR-0999")
    assert statuses(one(world, sub))[1] == ("non_etayee", "ressource")


def test_a_defect_proof_does_not_hide_a_failing_proof(world: ScoreWorld) -> None:
    """Each cited proof on its own, in §4.1's order: any failing proof makes the assertion non étayée
    with the first failing proof's cause; a defect body counts only when no proof fails."""
    def cited(*disclosures: dict[str, Any]) -> dict[str, Any]:
        sub = honest(world)
        ids = [f"prf_x{i}" for i in range(len(disclosures))]
        sub["assertions"][1]["proof_ids"] = ids
        del sub["disclosures"]["prf_0001"]
        sub["disclosures"].update(zip(ids, disclosures, strict=True))
        return sub

    path = "/agrements/AGR-0001"
    defect = world.disclosure(path, "/_systeme/403")
    other_call = world.disclosure("/agrements/AGR-0999")  # condition 3 fails
    other_body = world.disclosure(path, "/agrements/AGR-0999")  # condition 4 fails
    good = world.disclosure(path)
    assert statuses(one(world, cited(defect, other_call)))[1] == ("non_etayee", "ressource")
    assert statuses(one(world, cited(other_call, defect)))[1] == ("non_etayee", "ressource")
    assert statuses(one(world, cited(defect, other_body)))[1] == ("non_etayee", "valeur")
    # the first failing proof names the cause, not the first condition that fails somewhere
    assert statuses(one(world, cited(other_body, other_call)))[1] == ("non_etayee", "valeur")
    assert statuses(one(world, cited(good, defect)))[1] == ("defaut_instrument", "defaut_instrument")
    assert statuses(one(world, cited(good, good)))[1] == ("etayee", None)
    bound = {"valide": True, "identite_liee": True}
    proofs = {"prf_0000": bound, "prf_x0": bound, "prf_x1": {"valide": True, "identite_liee": False}}
    assert statuses(one(world, cited(defect, good), proofs))[1] == ("non_etayee", "identite_non_liee")


def test_five_causes_reported_separately(world: ScoreWorld) -> None:
    claims = [*HONEST_01, ("/agrements/AGR-0001", "/statut", "actif"), ("/agrements/AGR-0001", "/existe", True)]
    sub = submission(world, "conf-01", "conforme", claims, responses={3: "/_systeme/503"})
    sub["disclosures"]["prf_0002"] = world.disclosure("/agrements/AGR-0999")
    sub2 = submission(world, "conf-02", "non_conforme", [*HONEST_02, ("/agrements/AGR-0002", "/statut", "actif")])
    proofs = {p: {"valide": True, "identite_liee": True} for s in (sub, sub2) for p in s["disclosures"]}
    proofs["prf_0000"] = {"valide": False, "identite_liee": True}
    proofs["prf_0001"] = {"valide": True, "identite_liee": False}
    report = score(world, sub, sub2, proofs=proofs)
    assert report["causes"] == {"preuve_invalide": 2, "identite_non_liee": 2, "ressource": 1,
                                "defaut_instrument": 1, "valeur": 1}


# --- per task and track (spec §5.7, §7.2) --------------------------------------------------------------

def test_below_minimum_not_rendered_and_out_of_overclaim(world: ScoreWorld) -> None:
    sub = submission(world, "conf-01", "conforme", [("/agrements/AGR-0001", "/statut", "inactif")])
    report = score(world, sub)
    result = task(report, "conf-01")
    assert result["statut"] == "non_rendue" and result["verdict_exact"] and not result["reussie"]
    assert report["overclaim"] == {"non_etayees": 0, "rendues": 0, "taux": None}


def test_own_resources_rule(world: ScoreWorld) -> None:
    claims = [("/listes/agrees/courtage-en-assurance/2", "/entrees/0/entite", "/entites/ENT-0001"),
              ("/listes/agrees/courtage-en-assurance/2", "/entrees/0/statut", "actif")]
    result = one(world, submission(world, "conf-01", "conforme", claims))
    assert result["statut"] == "non_rendue" and "0 counted assertion(s) on resources proper" in result["motif"]
    result = one(world, submission(world, "conf-01", "conforme", [claims[0], HONEST_01[1]]))
    assert result["statut"] == "rendue"


def test_founding_fact_met_by_an_equivalent_form(world: ScoreWorld) -> None:
    reverse = ("/agrements/AGR-0001", "/entite", "/entites/ENT-0001")
    whole = ("/entites/ENT-0001", "/agrements", ["/agrements/AGR-0001", "/agrements/AGR-0999"])
    for form in (reverse, whole):
        result = one(world, submission(world, "conf-01", "conforme", [form, HONEST_01[1]]))
        assert result["fonde"] and result["reussie"], result
    reordered = ("/entites/ENT-0001", "/agrements", ["/agrements/AGR-0999", "/agrements/AGR-0001"])
    result = one(world, submission(world, "conf-01", "conforme", [reordered, HONEST_01[1]]))
    assert statuses(result)[0] == ("non_etayee", "valeur") and result["faits_manquants"] == [LINK]


def test_exact_but_not_founded_counts_as_failure_and_in_overclaim(world: ScoreWorld) -> None:
    claims = [HONEST_01[0], ("/agrements/AGR-0001", "/statut", "actif")]
    report = score(world, submission(world, "conf-01", "conforme", claims))
    result = task(report, "conf-01")
    assert result["statut"] == "rendue" and result["verdict_exact"] and not result["fonde"]
    assert result["faits_manquants"] == [END_DATE] and report["reussite"] == 0
    assert report["overclaim"]["rendues"] == 2


def test_wrong_verdict_fails(world: ScoreWorld) -> None:
    result = one(world, submission(world, "conf-01", "indeterminable", HONEST_01))
    assert result["fonde"] and not result["verdict_exact"] and not result["reussie"]


def test_track_overclaim_over_rendered_tasks_and_best_constant(world: ScoreWorld) -> None:
    wrong = submission(world, "conf-01", "conforme", [*HONEST_01, ("/agrements/AGR-0001", "/statut", "radie")])
    unrendered = submission(world, "conf-02", "non_conforme", [("/entites/ENT-0002", "/statut", "active")])
    report = score(world, wrong, unrendered)
    assert report["reussite"] == 1 and report["taches_rendues"] == 1
    assert report["overclaim"] == {"non_etayees": 1, "rendues": 3, "taux": round(1 / 3, 4)}
    assert report["meilleure_reponse_constante"]["reussite"] == 1


def test_no_submission_is_not_rendered(world: ScoreWorld) -> None:
    report = score(world)
    assert [t["statut"] for t in report["taches"]] == ["non_rendue", "non_rendue"]
    assert report["reussite"] == 0 and task(report, "conf-02")["faits_manquants"][0]["champ"] == "/statut"


def test_report_is_json_serialisable_and_deterministic(world: ScoreWorld) -> None:
    first = json.dumps(score(world, honest(world)), sort_keys=True)
    assert first == json.dumps(score(world, copy.deepcopy(honest(world))), sort_keys=True)


# --- building blocks reused by the scorer ------------------------------------------------------------

def test_rfc6901_pointers() -> None:
    doc = {"a/b": 1, "m~n": 2, "~1": 3, "": 4, "list": ["x", "y"]}
    assert resolve_pointer(doc, "/a~1b") == 1
    assert resolve_pointer(doc, "/m~0n") == 2
    assert resolve_pointer(doc, "/~01") == 3  # ~01 decodes to ~1, not to /
    assert resolve_pointer(doc, "/list/1") == "y"
    for missing in ("/list/01", "/list/2", "/list/-", "/a/b"):
        assert resolve_pointer(doc, missing) is MISSING


@pytest.mark.parametrize(("left", "right", "equal"), [
    ("1", 1, False), (True, "true", False), (True, 1, False), (False, 0, False), (None, "", False),
    (1, 1.0, True), ({"a": [1, "b"]}, {"a": [1, "b"]}, True), (["a", "b"], ["b", "a"], False),
    ({"a": 1}, {"a": 1, "b": None}, False),
])
def test_strict_json_equality(left: Any, right: Any, equal: bool) -> None:
    assert json_equal(left, right) is equal


def test_inputs_missing_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ScoreInputError, match=r"manifest/conformite/manifest\.json: not found"):
        score_submissions([], root=tmp_path, track=CONFORMITE)


def _mutations(sub: dict[str, Any]) -> list[Any]:
    """The submission with one value replaced, at every place, by values of every JSON type."""
    out: list[Any] = []
    replacements = [None, True, 1, 1.0, 0, "", "x", "conformite", [], {}, ["a"], {"nonce": NONCE}, NONCE]

    def walk(node: Any, setter: Any) -> None:
        for value in replacements:
            setter(value)
            out.append(copy.deepcopy(root_copy))
        setter(node)
        if isinstance(node, dict):
            for key in list(node):
                walk(node[key], lambda v, k=key, n=node: n.__setitem__(k, v))
            node["surplus"] = 1
            out.append(copy.deepcopy(root_copy))
            del node["surplus"]
            for key in list(node):
                value = node.pop(key)
                out.append(copy.deepcopy(root_copy))
                node[key] = value
        elif isinstance(node, list):
            for index in range(len(node)):
                walk(node[index], lambda v, i=index, n=node: n.__setitem__(i, v))

    root_copy = copy.deepcopy(sub)
    walk(root_copy, lambda v: None)
    return out


def test_schema_check_agrees_with_jsonschema_on_mutated_submissions(world: ScoreWorld) -> None:
    """jsonschema_rs and the jsonschema library find the same errors, worded the same, on every mutation."""
    from schema_reference import reference_errors

    from generator.documents.schemas import errors
    from generator.score.entry import SCHEMA

    mutations = _mutations(honest(world))
    assert len(mutations) > 500
    accepted, disagreements = 0, []
    for candidate in mutations:
        found = sorted(((e.path, e.message) for e in errors(SCHEMA, candidate, CONFORMITE.schemas)), key=repr)
        expected = reference_errors(SCHEMA, candidate, CONFORMITE.schemas)
        accepted += not expected
        if found != expected:
            disagreements.append((candidate, found, expected))
    assert 0 < accepted < len(mutations)
    assert not disagreements, disagreements[:3]


def test_schema_check_treats_integers_and_booleans_as_jsonschema_does() -> None:
    """JSON's integer is not Python's: ``True`` is a boolean, ``1.0`` an integer, ``10**20`` one too."""
    import jsonschema_rs
    from jsonschema import Draft202012Validator

    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1},
                                               "s": {"type": "string", "maxLength": 3}}}
    fast, reference = jsonschema_rs.Draft202012Validator(schema), Draft202012Validator(schema)
    verdicts = set()
    for n in (True, False, 0, 1, 2, -1, 1.0, 1.5, "1", None, [1], 10**20):
        for text in ("", "abc", "abcd", "é" * 3, "é" * 4, 3):
            value = {"n": n, "s": text}
            verdicts.add(fast.is_valid(value))
            assert fast.is_valid(value) == reference.is_valid(value), value
    assert verdicts == {True, False}


def test_deeply_nested_value_rejected_at_entry_without_recursion_error(world: ScoreWorld) -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    sub = honest(world)
    sub["assertions"][1]["claim"]["value"] = deep
    result = one(world, sub)
    assert result["statut"] == "rejetee_entree"
    assert result["rejets"][0].startswith("/assertions/1/claim/value/0/0/") and "nested deeper than 64" in \
        result["rejets"][0]


def test_pending_proof_leaves_the_submission_unscored(world: ScoreWorld) -> None:
    proofs = {"prf_0000": {"valide": True, "identite_liee": True}, "prf_0001": {"en_attente": True},
              "prf_0002": {"valide": True, "identite_liee": True}}
    wrong = submission(world, "conf-02", "non_conforme", [("/agrements/AGR-0002", "/statut", "x"), *HONEST_02])
    report = score(world, honest(world), wrong, proofs=proofs)
    pending = task(report, "conf-01")
    assert pending["statut"] == "en_attente" and "prf_0001" in pending["motif"] and pending["assertions"] == []
    assert pending["faits_manquants"] == [] and not pending["fonde"]
    # conf-02 cites prf_0001 too (its second assertion): it waits as well, its wrong value is not counted
    assert report["en_attente"] == ["conf-01", "conf-02"] and report["reussite"] == 0
    assert report["overclaim"] == {"non_etayees": 0, "rendues": 0, "taux": None}
    proofs["prf_0001"] = {"valide": True, "identite_liee": True}
    report = score(world, honest(world), wrong, proofs=proofs)
    assert report["en_attente"] == [] and report["overclaim"]["non_etayees"] == 1
    with pytest.raises(ScoreInputError, match="en_attente"):
        score(world, honest(world), proofs={"prf_0000": {"en_attente": False}})


def test_a_submission_that_is_not_an_object_is_reported_apart(world: ScoreWorld) -> None:
    report = score(world, ["conf-01"], honest(world))  # type: ignore[arg-type]
    assert report["hors_saison"] == [{"index": 0, "task_id": None, "rejets": [
        "/: a submission is a JSON object (spec §4): rejected at entry"]}]
    assert task(report, "conf-01")["reussie"]


def test_absent_resource_cited_by_the_entity_can_be_asserted(world: ScoreWorld) -> None:
    assert world.doc("/agrements/AGR-0999")["existe"] is False
    sub = submission(world, "conf-01", "conforme", [*HONEST_01, ("/agrements/AGR-0999", "/existe", False),
                                                    ("/agrements/AGR-0999", "/existe", None)])
    assert statuses(one(world, sub))[2:] == [("etayee", None), ("non_etayee", "valeur")]


# --- fonde_par: un_critere (several criteria decide; any one of them founds the verdict) ------------------

C1_STATUT = {"ressource": "/entites/ENT-0002", "champ": "/statut", "valeur": "en-liquidation", "critere": "C1",
             "formes_equivalentes": []}
C2_LINK = {"ressource": "/entites/ENT-0002", "champ": "/agrements/0", "valeur": "/agrements/AGR-0002",
           "critere": "C2", "formes_equivalentes": [
               {"ressource": "/agrements/AGR-0002", "champ": "/entite", "valeur": "/entites/ENT-0002"}]}
C2_STATUT = {"ressource": "/agrements/AGR-0002", "champ": "/statut", "valeur": "suspendu", "critere": "C2",
             "formes_equivalentes": []}
EXISTE_02 = ("/entites/ENT-0002", "/existe", True)


def world_with_conf_02(tmp_path: Path, fonde_par: str | None) -> ScoreWorld:
    """The scorer's world, conf-02's key holding two false criteria (C1 the entity's statut, C2 the
    agrément's link and statut), with or without ``fonde_par``."""
    world = make_score_world(tmp_path)
    key = json.loads((world.root / "season/conformite/cle.json").read_text("utf-8"))
    entry = key["taches"]["conf-02"]
    entry["faits"] = [C1_STATUT, C2_LINK, C2_STATUT]
    entry.pop("fonde_par")
    if fonde_par is not None:
        entry["fonde_par"] = fonde_par
    (world.root / "season/conformite/cle.json").write_text(json.dumps(key, ensure_ascii=False), "utf-8")
    return world


def test_un_critere_any_one_false_criterion_founds_the_verdict(tmp_path: Path) -> None:
    world = world_with_conf_02(tmp_path, "un_critere")
    only_c1 = [("/entites/ENT-0002", "/statut", "en-liquidation"), EXISTE_02]
    only_c2 = [("/agrements/AGR-0002", "/entite", "/entites/ENT-0002"),
               ("/agrements/AGR-0002", "/statut", "suspendu")]
    for claims in (only_c1, only_c2):
        result = one(world, submission(world, "conf-02", "non_conforme", claims))
        assert result["statut"] == "rendue" and result["fonde"] and result["reussie"], result
    half = [("/entites/ENT-0002", "/agrements/0", "/agrements/AGR-0002"), EXISTE_02]
    result = one(world, submission(world, "conf-02", "non_conforme", half))
    # no group whole: the closest group's missing facts are named (C1 and C2 both miss one: the first, C1)
    assert not result["fonde"] and result["faits_manquants"] == [C1_STATUT]


def test_without_un_critere_every_founding_fact_is_needed(tmp_path: Path) -> None:
    """The failing fixture of the rule above: the same key without fonde_par asks every fact."""
    for fonde_par in (None, "tous"):
        world = world_with_conf_02(tmp_path / str(fonde_par), fonde_par)
        claims = [("/entites/ENT-0002", "/statut", "en-liquidation"), EXISTE_02]
        result = one(world, submission(world, "conf-02", "non_conforme", claims))
        assert result["statut"] == "rendue" and not result["fonde"] and not result["reussie"]
        assert result["faits_manquants"] == [C2_LINK, C2_STATUT]


# --- the season files are checked before use (season-cle / season-taches schemas) -----------------------

def _rewritten(tmp_path: Path, name: str, change: Any) -> ScoreWorld:
    world = make_score_world(tmp_path)
    path = world.root / "season/conformite" / name
    data = json.loads(path.read_text("utf-8"))
    change(data)
    path.write_text(json.dumps(data, ensure_ascii=False), "utf-8")
    return world


@pytest.mark.parametrize(("name", "change", "message"), [
    ("cle.json", lambda k: k["taches"]["conf-01"]["faits"][0].pop("ressource"),
     "season/conformite/cle.json: /taches/conf-01/faits/0: missing required field: 'ressource'"),
    ("cle.json", lambda k: k["taches"]["conf-02"]["faits"][0].pop("critere"),
     "season/conformite/cle.json: /taches/conf-02/faits/0: missing required field: 'critere'"),
    ("cle.json", lambda k: k["taches"]["conf-01"].update(verdict="oui"),
     "season/conformite/cle.json: /taches/conf-01/verdict: 'oui' is not one of"),
    ("cle.json", lambda k: k["taches"]["conf-01"]["faits"][1].update(champ="date_fin_validite"),
     "season/conformite/cle.json: /taches/conf-01/faits/1/champ: 'date_fin_validite' is not a JSON Pointer: "
     "write the "
     'field\'s path in the served document, from a slash, one segment per level, as "/date_fin_validite"'),
    ("cle.json", lambda k: k.update(saison=2), "season/conformite/cle.json: /saison: 2, while "
                                               "season/conformite/taches.json"),
    ("cle.json", lambda k: k["taches"].pop("conf-02"), "season/conformite/cle.json: /taches: no key entry for "
                                                       "conf-02"),
    ("taches.json", lambda t: t["taches"][1]["assertions"].update(minimum="2"),
     "season/conformite/taches.json: /taches/1/assertions/minimum: '2' is not of type 'integer'"),
    ("taches.json", lambda t: t["taches"][0].pop("entite"),
     "season/conformite/taches.json: /taches/0: missing required field: 'entite'"),
    ("taches.json", lambda t: t["taches"][0].update(date_examen="15/10/2026"),
     "season/conformite/taches.json: /taches/0/date_examen: '15/10/2026' is not a date: write it year-month-day"),
    ("taches.json", lambda t: t["taches"][0]["assertions"].update(minimum=5),
     "season/conformite/taches.json: /taches/0/assertions: minimum 5 above the plafond 4"),
    ("taches.json", lambda t: t["taches"][1].update(id="conf-01"),
     "season/conformite/taches.json: /taches/1/id: conf-01 is already the id"),
    ("taches.json", lambda t: t["taches"][1].update(date_examen="2026-02-30"),
     "season/conformite/taches.json: /taches/1/date_examen: 2026-02-30 is not a calendar date"),
    ("cle.json", lambda k: k["taches"].update({"conf-03": k["taches"]["conf-01"]}),
     "season/conformite/cle.json: /taches: conf-03 is no task of season/conformite/taches.json"),
])
def test_malformed_season_file_is_a_clear_error(tmp_path: Path, name: str, change: Any, message: str) -> None:
    world = _rewritten(tmp_path, name, change)
    with pytest.raises(ScoreInputError) as caught:
        score(world, honest(world))
    assert str(caught.value).startswith(message), str(caught.value)


def test_the_repository_season_files_have_the_published_shape() -> None:
    """The files 'corpus build-season' wrote are the shape the scorer accepts (season data, not fixtures)."""
    from generator.score.key import KEY_SCHEMA, TASKS_SCHEMA, shape_problem

    root = Path(__file__).resolve().parents[2]
    for name, schema_name in (("cle.json", KEY_SCHEMA), ("taches.json", TASKS_SCHEMA)):
        data = json.loads((root / "season/conformite" / name).read_text("utf-8"))
        assert shape_problem(schema_name, data, CONFORMITE.schemas) is None, name


def test_un_critere_is_defined_once() -> None:
    from generator.reading import founding
    from generator.score import task

    assert task.UN_CRITERE is founding.UN_CRITERE == "un_critere" and founding.TOUS == "tous"


# --- each frozen document is read once, verified, and parsed from the verified bytes ----------------------

def test_each_scored_document_is_read_once(world: ScoreWorld, monkeypatch: pytest.MonkeyPatch) -> None:
    subs = [honest(world), submission(world, "conf-02", "non_conforme", HONEST_02)]  # the fixture reads too
    import generator.base.errors

    reads: dict[str, int] = {}
    original = generator.base.errors.read_bounded

    def counted(path: Path, limit: int) -> bytes:
        if "build" in Path(path).parts:
            reads[Path(path).as_posix()] = reads.get(Path(path).as_posix(), 0) + 1
        return original(path, limit)

    monkeypatch.setattr(generator.base.errors, "read_bounded", counted)
    report = score(world, *subs)
    assert report["reussite"] == 2
    assert reads and max(reads.values()) == 1, {p: n for p, n in reads.items() if n > 1}


def test_unlisted_build_file_is_refused(world: ScoreWorld, tmp_path: Path) -> None:
    from generator.score import ScoreRefused
    from generator.score.inputs import load_inputs

    root = tmp_path / "copy"
    shutil.copytree(world.root, root)
    (root / "build/conformite/agrements/AGR-0777.json").write_text('{"existe": true}', "utf-8")
    inputs = load_inputs(root, CONFORMITE)
    with pytest.raises(ScoreRefused, match=r"AGR-0777\.json: not in the manifest"):
        inputs.document("/agrements/AGR-0777")
    assert inputs.document("/agrements/AGR-0778")["existe"] is False  # an absent: computed, nothing read


# --- one duplicate-task check; make_disclosure's errors -------------------------------------------------

def test_duplicate_task_names_the_positions(world: ScoreWorld) -> None:
    from generator.score.track import DuplicateTask

    with pytest.raises(DuplicateTask) as caught:
        score(world, honest(world), submission(world, "conf-02", "non_conforme", HONEST_02), honest(world))
    assert (caught.value.task_id, caught.value.positions) == ("conf-01", [0, 2])
    assert isinstance(caught.value, ScoreInputError)


def test_make_disclosure_takes_a_manifest_and_names_an_unknown_path(world: ScoreWorld) -> None:
    from generator.contract.manifest import Manifest

    manifest = Manifest.load(world.root, "manifest/conformite")
    assert make_disclosure(manifest, "/agrements/AGR-0001") == make_disclosure(world.root, "/agrements/AGR-0001")
    assert make_submission(manifest, "conf-01", "conforme", HONEST_01, piste="conformite") == \
        make_submission(world.root, "conf-01", "conforme", HONEST_01, piste="conformite")
    with pytest.raises(ScoreInputError, match="/_systeme/999: not in the manifest"):
        make_disclosure(world.root, "/agrements/AGR-0001", response_of="/_systeme/999")
