"""The reference evaluator and its shortcuts, against the built corpus read independently by the test.

The evaluator is what proves the key, so these tests do not trust it to describe itself: the expected
calls are derived here by reading the built JSON and following the rules of ``/referentiel`` by hand
(pages through ``page_suivante``, the agrément's entry in the liste des agréés, avenants by date
d'effet), and the shortcuts are checked to do what their names say on the tasks built to catch them.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from season_fixtures import World, make_world, rebuilt

from generator import resource_types as col
from generator.season.evaluator import (
    ALL_SHORTCUTS,
    FAMILY_SHORTCUTS,
    P5_SHORTCUTS,
    REFERENCE,
    Evaluation,
    Strategy,
    evaluate,
)
from generator.season.graph import task_graph
from generator.season.model import KeyEntry, Season, Statement
from generator.season.reader import CorpusReader

TASK_IDS = [f"conf-{n:02d}" for n in range(1, 11)]
LIST_COLLECTIONS = (col.LISTES_AGREES, col.MESURES, col.BENEFICIAIRES)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("season-evaluator"))


@pytest.fixture(scope="module")
def season(world: World) -> Season:
    return world.season()


def statement_of(season: Season, task_id: str) -> Statement:
    return next(s for s in season.statements if s.task.id == task_id)


def run(world: World, season: Season, task_id: str, strategy: Strategy = REFERENCE,
        reader: CorpusReader | None = None) -> Evaluation:
    return evaluate(statement_of(season, task_id).task, reader or world.reader(), strategy)


# -- reading the built corpus by hand ------------------------------------------------------------------


def chain(world: World, first: str) -> list[str]:
    """Every page of a list, from ``first`` through ``page_suivante`` until null (as /referentiel says)."""
    pages: list[str] = []
    page: str | None = first
    while page is not None:
        assert page not in pages, f"page loop at {page}"
        pages.append(page)
        page = world.doc(page)["page_suivante"]
    return pages


def pages_until(world: World, first: str, found: Callable[[dict[str, Any]], bool]) -> list[str]:
    """The pages a reader fetches to find the first entry satisfying ``found`` (and stops there)."""
    walked: list[str] = []
    for page in chain(world, first):
        walked.append(page)
        if any(found(entry) for entry in world.doc(page)["entrees"]):
            return walked
    raise AssertionError(f"no entry found from {first}")


def people(world: World, pages: list[str]) -> set[tuple[str, str, str]]:
    """(nom, prénoms, date de naissance) of every entry of the pages: the matching key of /referentiel."""
    return {(e["nom"], e["prenoms"], e["date_naissance"]) for p in pages for e in world.doc(p)["entrees"]}


# -- the key, ten out of ten ---------------------------------------------------------------------------


def test_the_season_has_exactly_the_ten_tasks_of_the_bareme(season: Season) -> None:
    assert [s.task.id for s in season.statements] == TASK_IDS
    assert sorted(season.key) == TASK_IDS


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_evaluator_reproduces_the_key(world: World, season: Season, task_id: str) -> None:
    ev = run(world, season, task_id)
    assert ev.verdict == season.key[task_id].verdict
    assert 2 <= len(ev.calls) <= 12
    assert len(ev.calls) == len(set(ev.calls)), "each resource is fetched once"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_evaluator_reads_only_the_task_graph(world: World, season: Season, task_id: str) -> None:
    """Spec §5.2: the graph is the task's whole world; neither the reference nor a shortcut leaves it."""
    reader = world.reader()
    graph = task_graph(reader, statement_of(season, task_id).task)
    for strategy in (REFERENCE, *ALL_SHORTCUTS):
        outside = [c for c in run(world, season, task_id, strategy, reader).calls if c not in graph]
        assert outside == [], f"{strategy.name} fetched {outside}"


# -- call order, derived by hand -------------------------------------------------------------------------


def expected_calls_conf_03(world: World, st: Statement) -> list[str]:
    """conf-03 is conforme, so every criterion is read to the end: the whole walk of /referentiel."""
    task = st.task
    entity = world.doc(task.entite)
    assert entity["existe"] is True and entity["statut"] == "active"  # C1
    (agrement,) = entity["agrements"]  # C2: one agrément, for the activity, in force, actif
    agr = world.doc(agrement)
    assert (agr["entite"], agr["activite"], agr["statut"]) == (task.entite, task.activite, "actif")
    assert agr["date_debut"] <= task.date_examen <= agr["date_fin_validite"]
    liste = pages_until(world, col.liste_agrees_page_path(task.activite, "1"),
                        lambda e: e["agrement"] == agrement)
    (attestation,) = entity["attestations"]  # C3: no avenant to read
    assert world.doc(attestation)["avenants"] == []
    beneficiaires = chain(world, entity["beneficiaires"])  # C4: all their pages, then the whole list
    mesures = chain(world, col.mesures_page_path("1"))
    assert not people(world, beneficiaires) & people(world, mesures), "nobody matches: every page is read"
    return [task.entite, agrement, *liste, attestation, *beneficiaires, *mesures]


def test_calls_of_conf_03_follow_the_referentiel(world: World, season: Season) -> None:
    st = statement_of(season, "conf-03")
    ev = run(world, season, "conf-03")
    assert ev.calls == expected_calls_conf_03(world, st)
    assert ev.verdict == "conforme"
    assert [c.id for c in ev.deciding] == ["C1", "C2", "C3", "C4"]


def test_calls_of_conf_09_stop_at_the_avenant(world: World, season: Season) -> None:
    """C3 is established false at the avenant (not yet in force): by precedence nothing else is read."""
    task = statement_of(season, "conf-09").task
    entity = world.doc(task.entite)
    (agrement,) = entity["agrements"]
    liste = pages_until(world, col.liste_agrees_page_path(task.activite, "1"),
                        lambda e: e["agrement"] == agrement)
    assert len(liste) > 1, "the agrément's entry is past page 1: the chain must be followed"
    (attestation,) = entity["attestations"]
    att = world.doc(attestation)
    (avenant,) = att["avenants"]
    avn = world.doc(avenant)
    assert avn["attestation"] == attestation and avn["objet"] == "prorogation"
    assert att["date_fin_validite"] < task.date_examen < avn["date_effet"]

    ev = run(world, season, "conf-09")
    assert ev.calls == [task.entite, agrement, *liste, attestation, avenant]
    assert ev.verdict == "non_conforme"
    assert [(c.id, c.etat) for c in ev.deciding] == [("C3", "faux")]
    assert not any(c.startswith(col.BENEFICIAIRES.prefix) for c in ev.calls)


def test_page_chains_are_followed_to_the_buried_match(world: World, season: Season) -> None:
    """conf-05: every bénéficiaires page is read, then the mesures list up to the page that matches."""
    task = statement_of(season, "conf-05").task
    entity = world.doc(task.entite)
    beneficiaires = chain(world, entity["beneficiaires"])
    assert len(beneficiaires) >= 2
    owners = people(world, beneficiaires)
    mesures = pages_until(world, col.mesures_page_path("1"),
                          lambda e: (e["nom"], e["prenoms"], e["date_naissance"]) in owners)
    assert len(mesures) >= 2
    assert not people(world, beneficiaires[:1]) & people(world, mesures), "the match is not on page 1"

    ev = run(world, season, "conf-05")
    tail = [*beneficiaires, *mesures]
    assert ev.calls[-len(tail):] == tail
    assert ev.verdict == "non_conforme"
    assert [(c.id, c.etat) for c in ev.deciding] == [("C4", "faux")]


# -- shortcuts -------------------------------------------------------------------------------------------


def trap_shortcut(entry: KeyEntry) -> Strategy:
    if entry.famille == "P5":
        assert entry.raccourci is not None
        return P5_SHORTCUTS[entry.raccourci]
    return FAMILY_SHORTCUTS[entry.famille]


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_each_trap_catches_its_shortcut_and_the_control_catches_none(world: World, season: Season,
                                                                      task_id: str) -> None:
    entry = season.key[task_id]
    if entry.famille == "controle":
        answers = {s.name: run(world, season, task_id, s).verdict for s in ALL_SHORTCUTS}
        assert answers == dict.fromkeys(answers, entry.verdict)
    else:
        assert run(world, season, task_id, trap_shortcut(entry)).verdict != entry.verdict


def test_every_family_has_its_shortcut_and_every_raccourci_exists(season: Season) -> None:
    assert sorted(FAMILY_SHORTCUTS) == ["P1", "P2", "P3", "P4"]
    named = {e.raccourci for e in season.key.values() if e.famille == "P5"}
    assert named and named <= set(P5_SHORTCUTS)
    assert len({s.name for s in (REFERENCE, *ALL_SHORTCUTS)}) == 1 + len(ALL_SHORTCUTS)


def test_p1_takes_an_absent_reference_as_existing(world: World, season: Season) -> None:
    cited = world.doc("/entites/ENT-3388")["agrements"][0]
    assert world.doc(cited)["existe"] is False
    criteria = {c.id: c for c in run(world, season, "conf-02", FAMILY_SHORTCUTS["P1"]).criteres}
    assert criteria["C2"].etat == "etabli" and cited in criteria["C2"].motif
    reference = {c.id: c.etat for c in run(world, season, "conf-02").criteres}
    assert reference["C2"] == "non_etablissable"


def test_p2_reads_the_status_and_not_the_dates(world: World, season: Season) -> None:
    task = statement_of(season, "conf-01").task
    (agrement,) = world.doc(task.entite)["agrements"]
    agr = world.doc(agrement)
    assert agr["statut"] == "actif" and agr["date_fin_validite"] < task.date_examen
    assert {c.id: c.etat for c in run(world, season, "conf-01", FAMILY_SHORTCUTS["P2"]).criteres}["C2"] \
        == "etabli"
    assert {c.id: c.etat for c in run(world, season, "conf-01").criteres}["C2"] == "faux"


def test_p3_never_reads_the_liste_des_agrees(world: World, season: Season) -> None:
    reader = world.reader()
    for task_id in TASK_IDS:
        calls = run(world, season, task_id, FAMILY_SHORTCUTS["P3"], reader).calls
        assert not any(c.startswith(col.LISTES_AGREES.prefix) for c in calls), task_id
    assert run(world, season, "conf-04", FAMILY_SHORTCUTS["P3"]).verdict == "conforme"


def test_p4_reads_first_pages_and_first_references_only(world: World, season: Season) -> None:
    reader = world.reader()
    for task_id in TASK_IDS:
        calls = run(world, season, task_id, FAMILY_SHORTCUTS["P4"], reader).calls
        pages = [c for c in calls if any(c.startswith(k.prefix) for k in LIST_COLLECTIONS)]
        assert all(p.endswith("/1") for p in pages), (task_id, pages)
        for kind in (col.AGREMENTS, col.ATTESTATIONS, col.AVENANTS):
            assert sum(c.startswith(kind.prefix) for c in calls) <= 1, (task_id, kind.prefix, calls)


def test_p5_homonym_matched_on_names_alone(world: World, season: Season) -> None:
    ev = run(world, season, "conf-06", P5_SHORTCUTS["homonymie-sur-les-noms"])
    (c4,) = [c for c in ev.criteres if c.id == "C4"]
    assert (ev.verdict, c4.etat) == ("non_conforme", "faux")
    by_field: dict[str, set[Any]] = {}
    for fact in c4.faits:
        by_field.setdefault(fact.champ.rsplit("/", 1)[-1], set()).add(fact.valeur)
    assert len(by_field["nom"]) == len(by_field["prenoms"]) == 1  # same names on both sides…
    assert len(by_field["date_naissance"]) == 2  # …two different dates of birth


def test_p5_end_date_taken_as_final_reads_no_avenant(world: World, season: Season) -> None:
    reader = world.reader()
    strategy = P5_SHORTCUTS["date-de-fin-definitive"]
    for task_id in TASK_IDS:
        calls = run(world, season, task_id, strategy, reader).calls
        assert not any(c.startswith(col.AVENANTS.prefix) for c in calls), task_id
    assert run(world, season, "conf-07", strategy).verdict == "non_conforme"


def test_p5_avenant_applied_before_its_date_d_effet(world: World, season: Season) -> None:
    avn = world.doc("/avenants/AVN-7520")
    ev = run(world, season, "conf-09", P5_SHORTCUTS["avenant-avant-sa-date-d-effet"])
    (c3,) = [c for c in ev.criteres if c.id == "C3"]
    assert c3.etat == "etabli" and avn["nouvelle_date_fin"] in c3.motif


# -- dates, consumption --------------------------------------------------------------------------------


def _shift(day: str, days: int) -> str:
    return (datetime.date.fromisoformat(day) + datetime.timedelta(days=days)).isoformat()


AGR_5034 = "    date_debut: 2022-03-01\n    date_fin_validite: 2027-02-28\n"
ATT_6007 = "    date_emission: 2026-03-01\n    date_fin_validite: 2027-02-28\n"


def test_date_bounds_are_inclusive(world: World, season: Season, tmp_path: Path) -> None:
    """conf-03's agrément ending, and its attestation issued, on the very date of examination: valid."""
    st = statement_of(season, "conf-03")
    day = st.task.date_examen
    build_dir = rebuilt(world, tmp_path, [
        ("entites/ENT-2751.yaml", AGR_5034, AGR_5034.replace("2027-02-28", day)),
        ("entites/ENT-2751.yaml", ATT_6007, ATT_6007.replace("2026-03-01", day)),
    ])
    reader = CorpusReader(build_dir)
    assert reader.fetch("/agrements/AGR-5034")["date_fin_validite"] == day
    assert reader.fetch("/attestations/ATT-6007")["date_emission"] == day
    ev = evaluate(st.task, reader)
    assert {c.id: c.etat for c in ev.criteres} == {"C1": "etabli", "C2": "etabli", "C3": "etabli",
                                                   "C4": "etabli"}
    assert ev.verdict == "conforme"


@pytest.mark.parametrize(("old", "field", "days"), [
    (AGR_5034, "2027-02-28", -1),  # ended the day before: expired, the breach is established
    (AGR_5034, "2022-03-01", +1),  # starts the day after: not yet in force
], ids=["ended-the-day-before", "starts-the-day-after"])
def test_one_day_outside_the_bounds_establishes_the_breach(world: World, season: Season, tmp_path: Path,
                                                          old: str, field: str, days: int) -> None:
    st = statement_of(season, "conf-03")
    build_dir = rebuilt(world, tmp_path, [
        ("entites/ENT-2751.yaml", old, old.replace(field, _shift(st.task.date_examen, days)))])
    ev = evaluate(st.task, CorpusReader(build_dir))
    assert ev.verdict == "non_conforme"
    assert [(c.id, c.etat) for c in ev.deciding] == [("C2", "faux")]


AVN_7520 = "    date_effet: 2026-11-01\n"


@pytest.mark.parametrize(("days", "etat"), [(0, "etabli"), (1, "faux")], ids=["on-the-day", "the-day-after"])
def test_avenant_applies_from_its_date_d_effet_inclusive(world: World, season: Season, tmp_path: Path,
                                                         days: int, etat: str) -> None:
    """conf-09's prorogation taking effect on the date of examination applies (bounds included); the
    day after, it does not, and the attestation's own end date has passed."""
    st = statement_of(season, "conf-09")
    effet = _shift(st.task.date_examen, days)
    build_dir = rebuilt(world, tmp_path, [
        ("entites/ENT-1530.yaml", AVN_7520, AVN_7520.replace("2026-11-01", effet))])
    reader = CorpusReader(build_dir)
    assert reader.fetch("/avenants/AVN-7520")["date_effet"] == effet
    assert reader.fetch("/attestations/ATT-6298")["date_fin_validite"] < st.task.date_examen
    assert st.task.date_examen <= reader.fetch("/avenants/AVN-7520")["nouvelle_date_fin"]
    ev = evaluate(st.task, reader)
    assert {c.id: c.etat for c in ev.criteres}["C3"] == etat


def test_consumption_log_lists_only_probant_patterns(world: World, season: Season) -> None:
    """Spec §5.7: the evaluator consumes probant fields only; following a common list is navigation."""
    reader = world.reader()
    probant = {(c.prefix, pattern) for c in col.COLLECTIONS for pattern in c.probant}
    criteria = {c["id"] for c in reader.fetch(col.REFERENTIEL_PATH)["criteres"]}
    consumed: set[tuple[str, str, str]] = set()
    for task_id in TASK_IDS:
        for strategy in (REFERENCE, *ALL_SHORTCUTS):
            consumed |= run(world, season, task_id, strategy, reader).consumed
    assert {(prefix, pattern) for _, prefix, pattern in consumed} <= probant
    assert {crit for crit, _, _ in consumed} == criteria
    navigation = {(col.LISTES_AGREES.prefix, "/page_suivante"), (col.MESURES.prefix, "/page_suivante")}
    assert not navigation & {(prefix, pattern) for _, prefix, pattern in consumed}
    assert ("C4", col.BENEFICIAIRES.prefix, "/page_suivante") in consumed  # probant there (§5.7)


# -- corpus evaluate ---------------------------------------------------------------------------------------


def _corpus(*args: str) -> subprocess.CompletedProcess[str]:
    script = Path(sys.executable).with_name("corpus")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "generator.cli"]
    return subprocess.run([*command, *args], capture_output=True, text=True, timeout=60, check=False)


def test_corpus_evaluate_prints_verdict_criteria_facts_and_numbered_calls(world: World,
                                                                            season: Season) -> None:
    st = statement_of(season, "conf-03")
    result = _corpus("evaluate", "conf-03", "--root", str(world.root))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"conf-03  {st.task.entite}  {st.task.activite}  au {st.task.date_examen}")
    assert lines[0].endswith("[reference]")
    assert f"  verdict : {season.key['conf-03'].verdict}" in lines
    for criterion in ("C1", "C2", "C3", "C4"):  # conforme: every criterion decides, marked *
        assert any(line.startswith(f"  * {criterion} etabli") for line in lines), criterion
    for kf in season.key["conf-03"].faits:  # the facts it rests on include the key's founding facts
        fact = kf.fact
        shown = f"        {fact.ressource} {fact.champ} = {json.dumps(fact.valeur, ensure_ascii=False)}"
        assert shown in lines
    calls = expected_calls_conf_03(world, st)
    assert f"  appels ({len(calls)}) :" in lines
    numbered = [line for line in lines if " GET " in line]
    assert numbered == [f"    {n:>2}. GET {path}" for n, path in enumerate(calls, 1)]


def test_corpus_evaluate_with_a_shortcut(world: World, season: Season) -> None:
    """The P4 reading of conf-05 stops at page 1 of the bénéficiaires and misses the match."""
    result = _corpus("evaluate", "conf-05", "--strategy", "P4-premiere-reponse", "--root", str(world.root))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith("[P4-premiere-reponse]")
    verdicts = [line for line in lines if line.startswith("  verdict : ")]
    assert verdicts and verdicts != [f"  verdict : {season.key['conf-05'].verdict}"]
    assert not any("GET /beneficiaires/ENT-1879/2" in line for line in lines)
    assert any(line.endswith("GET /beneficiaires/ENT-1879/1") for line in lines)


def test_corpus_evaluate_unknown_task_exits_1(world: World) -> None:
    result = _corpus("evaluate", "conf-99", "--root", str(world.root))
    assert result.returncode == 1
    assert result.stdout == ""
    assert "unknown task 'conf-99'" in result.stderr and "conf-01" in result.stderr


def test_corpus_evaluate_unknown_strategy_is_refused(world: World) -> None:
    result = _corpus("evaluate", "conf-03", "--strategy", "devinette", "--root", str(world.root))
    assert result.returncode == 2
    assert "invalid choice: 'devinette'" in result.stderr
