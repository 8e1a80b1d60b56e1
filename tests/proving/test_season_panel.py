"""The panel of ``corpus check-season``: known agents scored by ``corpus score`` with the real manifest.

On the real season every expectation holds (honest agents 10/10 with no overclaim, shortcuts failing
their traps, abusers getting what §4, §4.1 and §5.7 promise). Each failing fixture changes the key the
smallest way that breaks one promise and asserts the panel says so, on the task concerned.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from season_fixtures import KEY_LOCATION, ROOT, World, make_world

from generator.panel.agents import HONEST
from generator.panel.judge import Row, _expect_tamper, panel_problems, run_panel
from generator.proving.checks import SeasonReport, check_season
from generator.reading.reader import Fact
from generator.reading.season_model import KeyFact, Season


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("season-panel"))


@pytest.fixture(scope="module")
def checked(world: World) -> tuple[Season, SeasonReport]:
    season = world.season()
    report = check_season(season, world.reader(), KEY_LOCATION)
    assert report.problems == []
    return season, report


@pytest.fixture(scope="module")
def rows(world: World, checked: tuple[Season, SeasonReport]) -> dict[str, Row]:
    season, report = checked
    return {row.name: row for row in run_panel(world.root, season, report, world.reader())}


def _with_key(season: Season, task_id: str, **changes: object) -> Season:
    entry = dataclasses.replace(season.key[task_id], **changes)
    return dataclasses.replace(season, key={**season.key, task_id: entry})


def test_every_promise_holds_on_the_real_season(rows: dict[str, Row]) -> None:
    assert {name: row.problems for name, row in rows.items() if row.problems} == {}
    assert panel_problems(list(rows.values()), KEY_LOCATION) == []


def test_honest_agents_score_ten_out_of_ten_with_no_overclaim(rows: dict[str, Row]) -> None:
    assert len(HONEST) >= 3
    for name in HONEST:
        report = rows[name].report
        assert (report["reussite"], report["overclaim"]["non_etayees"]) == (10, 0), name
        assert all(t["statut"] == "rendue" and t["fonde"] for t in report["taches"]), name
    # three ways of asserting, not one: their submissions differ in size and forms
    assert len({rows[name].report["overclaim"]["rendues"] for name in HONEST}) >= 2


def test_shortcuts_fail_their_trap_tasks(rows: dict[str, Row], checked: tuple[Season, SeasonReport]) -> None:
    season, _ = checked
    traps = {"P5-homonymie-sur-les-noms": "conf-07", "P5-bornes-exclues": "conf-06",
             "P5-situation-de-l-entite-non-lue": "conf-03", "P5-avenant-avant-sa-date-d-effet": "conf-09",
             "arret-au-premier-probleme": "conf-10", "P1-reference-supposee": "conf-02",
             "P2-statut-sans-dates": "conf-01", "P3-un-seul-registre": "conf-04", "P4-premiere-reponse": "conf-08"}
    for name, task_id in traps.items():
        task = next(t for t in rows[name].report["taches"] if t["tache"] == task_id)
        assert not task["reussie"] and not task["verdict_exact"], (name, task_id)
        assert season.key[task_id].famille != "controle"


def test_abusers_get_what_the_bareme_promises(rows: dict[str, Row]) -> None:
    assert rows["listes-seules"].report["reussite"] == 0
    assert {t["statut"] for t in rows["listes-seules"].report["taches"]} <= {"non_rendue", "rejetee_cloture"}
    for verdict in ("conforme", "non_conforme", "indeterminable"):
        report = rows[f"remplissage-constant-{verdict}"].report
        assert report["reussite"] <= 4 and report["overclaim"]["non_etayees"] == 0
    for name, cause in (("preuve-sur-une-autre-ressource", "ressource"), ("valeur-fausse", "valeur")):
        report = rows[name].report
        assert report["overclaim"]["non_etayees"] == 10, name
        assert {t["assertions"][0]["cause"] for t in report["taches"]} == {cause}
    defect = rows["corps-403"].report
    assert defect["overclaim"]["non_etayees"] == 0
    assert {t["assertions"][0]["statut"] for t in defect["taches"]} == {"defaut_instrument"}
    for name, statut in (("doublon", "rejetee_entree"), ("au-dela-du-plafond", "rejetee_entree"),
                         ("hors-graphe", "rejetee_cloture"), ("champ-non-probant", "rejetee_cloture")):
        assert {t["statut"] for t in rows[name].report["taches"]} == {statut}, name


def test_statuts_instead_of_dates_is_exact_everywhere_and_non_fonde_on_the_conforme_tasks(
        rows: dict[str, Row], checked: tuple[Season, SeasonReport]) -> None:
    """Season 1's blind audit: right verdicts, but statuts, list entries and start dates asserted for the
    satisfied criteria instead of the links and retained end dates the served rule asks."""
    season, _ = checked
    row = rows["statuts-au-lieu-des-dates"]
    assert row.kind == "hors-règle" and row.problems == []
    report = row.report
    conforme = {t for t, entry in season.key.items() if entry.verdict == "conforme"}
    assert conforme and all(t["statut"] == "rendue" and t["verdict_exact"] for t in report["taches"])
    assert {t["tache"] for t in report["taches"] if not t["fonde"]} == conforme
    assert report["reussite"] == 10 - len(conforme) and report["overclaim"]["non_etayees"] == 0
    for t in report["taches"]:
        if t["tache"] in conforme:
            missing = {(f["ressource"], f["champ"]) for f in t["faits_manquants"]}
            assert any(champ == "/date_fin_validite" for _, champ in missing), t["tache"]
            assert all(a["champ"] not in ("/date_fin_validite", "/agrements", "/attestations")
                       for a in t["assertions"]), t["tache"]


def test_referentiel_serves_the_justification_rule() -> None:
    """The founding-fact rule is public at the opening: served in /referentiel, frozen with the corpus."""
    served = json.loads((ROOT / "build" / "conformite" / "referentiel.json").read_text(encoding="utf-8"))
    text = served["principes"]["justification"]
    for words in ("date de fin retenue", "nouvelle_date_fin", "les faits de l'un", "tableau entier",
                  "statut_declaration", "existe: false"):
        assert words in text, words
    assert "conf-" not in text


def test_referentiel_states_one_case_per_decisive_document_in_the_evaluator_order() -> None:
    """One reading only: each decisive C2/C3 document is decided by one case, the first that applies in
    the order of ``_Run.c2``/``_Run.c3``; what a satisfying document is checked on is not asked; and the
    minimum may exceed the founding facts without extra étayées assertions harming the fondé."""
    served = json.loads((ROOT / "build" / "conformite" / "referentiel.json").read_text(encoding="utf-8"))
    text = served["principes"]["justification"]
    assert "les faits du seul cas qui le décide, le premier qui s'applique dans cet ordre" in text
    cases = ("absent, son existe", "attestation qui liste un avenant absent", "pas encore commencé",
             "périmé, sa date de fin retenue", "se contredisent", "statut autre que actif",
             "activité exclue par un avenant en vigueur", "sinon, le document satisfait le critère")
    positions = [text.find(case) for case in cases]
    assert -1 not in positions and positions == sorted(positions), dict(zip(cases, positions, strict=True))
    assert "mais ne sont pas des faits demandés (seuls son lien et sa date de fin retenue le sont)" in text
    assert "supérieur ou inférieur au nombre de ses faits" in text
    assert "ne nuisent ni au fondement ni au taux d'overclaim" in text


# -- failing fixtures ---------------------------------------------------------------------------------------


def test_a_founding_fact_honest_agents_do_not_assert_fails_them(world: World,
                                                               checked: tuple[Season, SeasonReport]) -> None:
    """conf-01 gains a founding fact the rule does not derive in each of its two alternative groups (the
    agrément's /activite, as the audited key had, and the attestation's /type): honest agents, who justify
    what decides, are 'non fondé' there, and the panel names the closest group's missing fact."""
    season, report = checked
    extra = KeyFact(Fact("/agrements/AGR-5113", "/activite", "courtage-en-assurance"), (), KEY_LOCATION, "C2")
    other = KeyFact(Fact("/attestations/ATT-6120", "/type", "responsabilite-civile-professionnelle"), (),
                    KEY_LOCATION, "C3")
    changed = _with_key(season, "conf-01", faits=(*season.key["conf-01"].faits, extra, other))
    found = run_panel(world.root, changed, report, world.reader())
    failing = {row.name: row.problems for row in found if row.problems}
    assert set(HONEST) <= set(failing)
    for name in HONEST:
        assert failing[name] and all(p.startswith("conf-01: ") for p in failing[name]), failing[name]
        assert "('/agrements/AGR-5113', '/activite')" in failing[name][0]
    lines = [str(p) for p in panel_problems(found, KEY_LOCATION)]
    assert any(line.startswith("season_src/conformite/cle.yaml: panel liens-d-abord: conf-01: ") for line in lines)


def test_a_link_without_its_equivalent_forms_fails_the_agents_that_use_them(
        world: World, checked: tuple[Season, SeasonReport]) -> None:
    """conf-09's link to its attestation stripped of its forms: the agent asserting it from the
    attestation's side, and the one asserting the whole array, are no longer fondé; links-first (both
    directions) still is."""
    season, report = checked
    faits = tuple(dataclasses.replace(k, equivalents=()) if k.fact.champ == "/attestations/0" else k
                  for k in season.key["conf-09"].faits)
    found = {row.name: row for row in run_panel(world.root, _with_key(season, "conf-09", faits=faits), report,
                                                world.reader())}
    assert not found["liens-d-abord"].problems
    for name in ("termes-d-abord", "ressources-propres-d-abord"):
        assert found[name].problems and found[name].problems[0].startswith("conf-09: "), name


def test_a_tamper_expectation_that_does_not_hold_is_reported() -> None:
    """The abuser check itself: an assertion that stayed étayée where 'valeur' was expected."""
    row = Row("valeur-fausse", "abus", [], {"overclaim": {"non_etayees": 0}, "taches": [
        {"tache": "conf-01", "statut": "rendue", "assertions": [{"statut": "etayee", "cause": None}]}]})
    _expect_tamper(row, "non_etayee:valeur")
    assert row.problems == ["conf-01: first assertion etayee, expected non_etayee:valeur"]
    row = Row("doublon", "abus", [], {"overclaim": {"non_etayees": 0}, "taches": [
        {"tache": "conf-02", "statut": "rendue", "assertions": []}]})
    _expect_tamper(row, "rejetee_entree")
    assert row.problems == ["conf-02: statut rendue, expected rejetee_entree"]


def test_check_season_prints_the_panel_table() -> None:
    script = Path(sys.executable).with_name("corpus")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "generator.cli"]
    run = subprocess.run([*command, "check-season", "--root", str(ROOT)], capture_output=True, text=True,
                         timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    table = run.stdout[run.stdout.index("agent du panel"):]
    for name in HONEST:
        line = next(line for line in table.splitlines() if line.startswith(name))
        assert "10/10" in line and line.endswith("tenu") and " 0/" in line
    assert "NON TENU" not in table
