"""The reference evaluator and its shortcuts, against the built corpus read independently by the test.

The evaluator is what proves the key, so these tests do not trust it to describe itself: the expected
calls are derived here by reading the built JSON and following the rules of ``/referentiel`` by hand
(pages through ``page_suivante``, the agrément's entry in the liste des agréés, avenants by date
d'effet), and the shortcuts are checked to do what their names say on the tasks built to catch them.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trackfix as col
from cli_run import run_corpus
from season_fixtures import World, make_world, rebuilt
from trackfix import CONFORMITE

from generator.reading.graph import task_graph
from generator.reading.reader import CorpusReader
from generator.reading.season_model import KeyEntry, Season, Statement
from generator.track_code.conformite.evaluator import (
    FAMILY_SHORTCUTS,
    NAMED_SHORTCUTS,
    P5_SHORTCUTS,
    REFERENCE,
    Evaluation,
    Strategy,
    evaluate,
)
from generator.track_code.conformite.logic import TRACK_LOGIC

TASK_IDS = [f"conf-{n:02d}" for n in range(1, 11)]
SHORTCUTS = TRACK_LOGIC.shortcuts.every  # every shortcut of the track, as the engine runs them
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
    """Spec §5.2: the graph is the task's whole world; neither the reference nor a shortcut leaves it.
    /referentiel, outside the graph, is the first call of every task (counted, never asserted on)."""
    reader = world.reader()
    graph = task_graph(reader, statement_of(season, task_id).task)
    for strategy in (REFERENCE, *SHORTCUTS):
        calls = run(world, season, task_id, strategy, reader).calls
        assert calls[0] == col.REFERENTIEL_PATH
        outside = [c for c in calls[1:] if c not in graph]
        assert outside == [], f"{strategy.name} fetched {outside}"


# -- call order, derived by hand -------------------------------------------------------------------------

CONTROL = "conf-05"


def expected_calls_of_the_control(world: World, st: Statement) -> list[str]:
    """The control is conforme, so every criterion is read to the end: the whole walk of /referentiel,
    every list to page_suivante: null."""
    task = st.task
    entity = world.doc(task.entite)
    assert entity["existe"] is True and entity["statut"] == "active"  # C1
    (agrement,) = entity["agrements"]  # C2: one agrément, for the activity, in force, actif
    agr = world.doc(agrement)
    assert (agr["entite"], agr["activite"], agr["statut"]) == (task.entite, task.activite, "actif")
    assert agr["date_debut"] <= task.date_examen <= agr["date_fin_validite"]
    liste = chain(world, col.liste_agrees_page_path(task.activite, "1"))
    (attestation,) = entity["attestations"]  # C3: no avenant to read
    assert world.doc(attestation)["avenants"] == []
    beneficiaires = chain(world, entity["beneficiaires"])  # C4: all their pages, then the whole list
    mesures = chain(world, col.mesures_page_path("1"))
    assert not people(world, beneficiaires) & people(world, mesures), "nobody matches"
    return [col.REFERENTIEL_PATH, task.entite, agrement, *liste, attestation, *beneficiaires, *mesures]


def test_calls_of_the_control_follow_the_referentiel(world: World, season: Season) -> None:
    st = statement_of(season, CONTROL)
    assert season.key[CONTROL].famille == "controle"
    ev = run(world, season, CONTROL)
    assert ev.calls == expected_calls_of_the_control(world, st)
    assert ev.verdict == "conforme"
    assert [c.id for c in ev.deciding] == ["C1", "C2", "C3", "C4"]


def test_calls_of_conf_09_read_every_criterion(world: World, season: Season) -> None:
    """C3 is established false at the avenant (not yet in force), and the reading goes on: a literal
    reader reads all four criteria, so C4's pages are read too (the call count of spec §5.6). The liste
    des agréés is read to its last page although the agrément's entry comes before."""
    task = statement_of(season, "conf-09").task
    entity = world.doc(task.entite)
    (agrement,) = entity["agrements"]
    found = pages_until(world, col.liste_agrees_page_path(task.activite, "1"),
                        lambda e: e["agrement"] == agrement)
    liste = chain(world, col.liste_agrees_page_path(task.activite, "1"))
    assert len(found) < len(liste), "the entry comes before the last page: reading on is the rule"
    (attestation,) = entity["attestations"]
    att = world.doc(attestation)
    (avenant,) = att["avenants"]
    avn = world.doc(avenant)
    assert avn["attestation"] == attestation and avn["objet"] == "remise-en-vigueur"
    assert att["date_fin_validite"] < task.date_examen < avn["date_effet"]

    beneficiaires = chain(world, entity["beneficiaires"])
    mesures = chain(world, col.mesures_page_path("1"))
    ev = run(world, season, "conf-09")
    assert ev.calls == [col.REFERENTIEL_PATH, task.entite, agrement, *liste, attestation, avenant,
                        *beneficiaires, *mesures]
    assert ev.verdict == "non_conforme"
    assert [(c.id, c.etat) for c in ev.deciding] == [("C3", "faux")]
    stopped = run(world, season, "conf-09", NAMED_SHORTCUTS["arret-au-premier-probleme"])
    assert not any(c.startswith(col.BENEFICIAIRES.prefix) for c in stopped.calls)


def test_c1_decides_over_a_contradiction(world: World, season: Season) -> None:
    """conf-03: the entity is radiée (C1 false); the liste des agréés already gives its agrément retiré
    while the registre keeps it actif (C2 not establishable); C1 decides alone, by precedence."""
    task = statement_of(season, "conf-03").task
    assert world.doc(task.entite)["statut"] == "radiee"
    ev = run(world, season, "conf-03")
    assert {c.id: c.etat for c in ev.criteres} == {"C1": "faux", "C2": "non_etablissable", "C3": "etabli",
                                                   "C4": "etabli"}
    assert [(c.id, c.etat) for c in ev.deciding] == [("C1", "faux")]
    skipped = run(world, season, "conf-03", NAMED_SHORTCUTS["situation-de-l-entite-non-lue"])
    assert skipped.verdict == "indeterminable"


def test_precedence_a_false_criterion_beats_a_non_establishable_one(world: World, season: Season) -> None:
    """conf-10: C2 cannot be established (an absent agrément) and C3 is false: non_conforme, decided by C3;
    a reader that stops at the first problem answers indeterminable."""
    ev = run(world, season, "conf-10")
    assert {c.id: c.etat for c in ev.criteres} == {"C1": "etabli", "C2": "non_etablissable", "C3": "faux",
                                                   "C4": "etabli"}
    assert ev.verdict == "non_conforme"
    assert [(c.id, c.etat) for c in ev.deciding] == [("C3", "faux")]
    assert run(world, season, "conf-10", NAMED_SHORTCUTS["arret-au-premier-probleme"]).verdict == "indeterminable"


def test_a_date_exactly_on_the_bound(world: World, season: Season) -> None:
    """conf-06: the attestation ends on the date of examination; it is still in force that day."""
    task = statement_of(season, "conf-06").task
    (attestation,) = world.doc(task.entite)["attestations"]
    assert world.doc(attestation)["date_fin_validite"] == task.date_examen
    assert run(world, season, "conf-06").verdict == "conforme"
    assert run(world, season, "conf-06", NAMED_SHORTCUTS["bornes-exclues"]).verdict == "non_conforme"


def test_homonym_and_incomplete_declaration(world: World, season: Season) -> None:
    """conf-07: a homonym (same nom and prénoms, other date of birth) is no match, and the declaration is
    incomplete: C4 is not establishable. Every bénéficiaires page and the whole mesures list are read."""
    task = statement_of(season, "conf-07").task
    entity = world.doc(task.entite)
    beneficiaires = chain(world, entity["beneficiaires"])
    assert {world.doc(p)["statut_declaration"] for p in beneficiaires} == {"incomplete"}
    mesures = chain(world, col.mesures_page_path("1"))
    ev = run(world, season, "conf-07")
    assert ev.calls[-len(mesures):] == mesures and set(beneficiaires) <= set(ev.calls)
    assert [(c.id, c.etat) for c in ev.deciding] == [("C4", "non_etablissable")]
    assert ev.verdict == "indeterminable"


def test_a_match_is_false_even_when_the_declaration_is_incomplete(world: World, season: Season,
                                                                  tmp_path: Path) -> None:
    """/referentiel: a declared bénéficiaire on the list makes C4 false, complete declaration or not."""
    listed = next(e for page in chain(world, col.mesures_page_path("1")) for e in world.doc(page)["entrees"]
                  if e["nom"] == "Rouvenac")
    build_dir = rebuilt(world, tmp_path, [("entites/ENT-2264.yaml", "date_naissance: 1977-02-08",
                                           f"date_naissance: {listed['date_naissance']}")])
    ev = evaluate(statement_of(season, "conf-07").task, CorpusReader(build_dir, CONFORMITE))
    assert ev.verdict == "non_conforme"
    (c4,) = ev.deciding
    assert c4.id == "C4" and c4.etat == "faux" and len(c4.faits) == 6


# -- shortcuts -------------------------------------------------------------------------------------------


def trap_shortcut(entry: KeyEntry) -> Strategy:
    if entry.raccourci is not None:
        return NAMED_SHORTCUTS[entry.raccourci]
    assert entry.famille != "P5"
    return FAMILY_SHORTCUTS[entry.famille]


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_each_trap_catches_its_shortcut_and_the_control_catches_none(world: World, season: Season,
                                                                      task_id: str) -> None:
    entry = season.key[task_id]
    if entry.famille == "controle":
        answers = {s.name: run(world, season, task_id, s).verdict for s in SHORTCUTS}
        assert answers == dict.fromkeys(answers, entry.verdict)
    else:
        assert run(world, season, task_id, trap_shortcut(entry)).verdict != entry.verdict


def test_every_family_has_its_shortcut_and_every_raccourci_exists(season: Season) -> None:
    assert sorted(FAMILY_SHORTCUTS) == ["P1", "P2", "P3", "P4"]
    named = {e.raccourci for e in season.key.values() if e.famille == "P5"}
    assert len(named) >= 3 and named <= set(P5_SHORTCUTS)
    assert {e.raccourci for e in season.key.values()} - {None} <= set(NAMED_SHORTCUTS)
    assert len({s.name for s in (REFERENCE, *SHORTCUTS)}) == 1 + len(SHORTCUTS)


def test_p1_takes_an_absent_reference_as_existing(world: World, season: Season) -> None:
    cited = world.doc("/entites/ENT-3388")["agrements"][0]
    assert world.doc(cited)["existe"] is False
    criteria = {c.id: c for c in run(world, season, "conf-10", FAMILY_SHORTCUTS["P1"]).criteres}
    assert criteria["C2"].etat == "etabli" and cited in criteria["C2"].motif
    reference = {c.id: c.etat for c in run(world, season, "conf-10").criteres}
    assert reference["C2"] == "non_etablissable"
    # an absent avenant (conf-02): ignored by the P1 reading, it leaves C3 not establishable for the reference
    assert {c.id: c.etat for c in run(world, season, "conf-02", FAMILY_SHORTCUTS["P1"]).criteres}["C3"] == "etabli"
    assert {c.id: c.etat for c in run(world, season, "conf-02").criteres}["C3"] == "non_etablissable"


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
    ev = run(world, season, "conf-07", P5_SHORTCUTS["homonymie-sur-les-noms"])
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


AGR_5702 = "    date_debut: 2018-05-01\n    date_fin_validite: 2027-09-30\n"
ATT_6745 = "    date_emission: 2026-04-01\n    date_fin_validite: 2027-03-31\n"
CONTROL_FILE = "entites/ENT-1879.yaml"


def test_date_bounds_are_inclusive(world: World, season: Season, tmp_path: Path) -> None:
    """The control's agrément ending, and its attestation issued, on the very date of examination: valid."""
    st = statement_of(season, CONTROL)
    day = st.task.date_examen
    build_dir = rebuilt(world, tmp_path, [
        (CONTROL_FILE, AGR_5702, AGR_5702.replace("2027-09-30", day)),
        (CONTROL_FILE, ATT_6745, ATT_6745.replace("2026-04-01", day)),
    ])
    reader = CorpusReader(build_dir, CONFORMITE)
    assert reader.fetch("/agrements/AGR-5702")["date_fin_validite"] == day
    assert reader.fetch("/attestations/ATT-6745")["date_emission"] == day
    ev = evaluate(st.task, reader)
    assert {c.id: c.etat for c in ev.criteres} == {"C1": "etabli", "C2": "etabli", "C3": "etabli",
                                                   "C4": "etabli"}
    assert ev.verdict == "conforme"


@pytest.mark.parametrize(("old", "field", "days"), [
    (AGR_5702, "2027-09-30", -1),  # ended the day before: expired, the breach is established
    (AGR_5702, "2018-05-01", +1),  # starts the day after: not yet in force
], ids=["ended-the-day-before", "starts-the-day-after"])
def test_one_day_outside_the_bounds_establishes_the_breach(world: World, season: Season, tmp_path: Path,
                                                          old: str, field: str, days: int) -> None:
    st = statement_of(season, CONTROL)
    build_dir = rebuilt(world, tmp_path, [
        (CONTROL_FILE, old, old.replace(field, _shift(st.task.date_examen, days)))])
    ev = evaluate(st.task, CorpusReader(build_dir, CONFORMITE))
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
    reader = CorpusReader(build_dir, CONFORMITE)
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
        for strategy in (REFERENCE, *SHORTCUTS):
            consumed |= run(world, season, task_id, strategy, reader).consumed
    assert {(prefix, pattern) for _, prefix, pattern in consumed} <= probant
    assert {crit for crit, _, _ in consumed} == criteria
    navigation = {(col.LISTES_AGREES.prefix, "/page_suivante"), (col.MESURES.prefix, "/page_suivante")}
    assert not navigation & {(prefix, pattern) for _, prefix, pattern in consumed}
    assert ("C4", col.BENEFICIAIRES.prefix, "/page_suivante") in consumed  # probant there (§5.7)


# -- corpus evaluate ---------------------------------------------------------------------------------------


def test_corpus_evaluate_prints_verdict_criteria_facts_and_numbered_calls(world: World,
                                                                            season: Season) -> None:
    st = statement_of(season, CONTROL)
    result = run_corpus("evaluate", CONTROL, "--root", str(world.root))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"{CONTROL}  {st.task.entite}  {st.task.activite}  au {st.task.date_examen}")
    assert lines[0].endswith("[reference]")
    assert f"  verdict : {season.key[CONTROL].verdict}" in lines
    for criterion in ("C1", "C2", "C3", "C4"):  # conforme: every criterion decides, marked *
        assert any(line.startswith(f"  * {criterion} etabli") for line in lines), criterion
    for kf in season.key[CONTROL].faits:  # the facts it rests on are the key's founding facts
        fact = kf.fact
        shown = f"        {fact.ressource} {fact.champ} = {json.dumps(fact.valeur, ensure_ascii=False)}"
        assert shown in lines
    calls = expected_calls_of_the_control(world, st)
    assert f"  appels ({len(calls)}) :" in lines
    numbered = [line for line in lines if " GET " in line]
    assert numbered == [f"    {n:>2}. GET {path}" for n, path in enumerate(calls, 1)]


def test_corpus_evaluate_with_a_shortcut(world: World, season: Season) -> None:
    """The P4 reading of conf-08 reads the first attestation only and misses the one in force."""
    result = run_corpus("evaluate", "conf-08", "--strategy", "P4-premiere-reponse", "--root", str(world.root))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].endswith("[P4-premiere-reponse]")
    verdicts = [line for line in lines if line.startswith("  verdict : ")]
    assert verdicts and verdicts != [f"  verdict : {season.key['conf-08'].verdict}"]
    first, second = world.doc("/entites/ENT-3917")["attestations"]
    assert any(line.endswith(f"GET {first}") for line in lines)
    assert not any(f"GET {second}" in line for line in lines)


def test_corpus_evaluate_prints_the_founding_facts_as_the_key_writes_them(world: World) -> None:
    """``--faits`` prints what the rule derives, in the key's own YAML: pasted back, it is the key
    (conf-01 has two false criteria, so ``fonde_par: un_critere`` comes first)."""
    result = run_corpus("evaluate", "conf-01", "--faits", "--root", str(world.root))
    assert result.returncode == 0, result.stderr
    key = world.key_text()
    block = key[key.index("    fonde_par: un_critere", key.index("  conf-01:")):key.index("  conf-02:")]
    assert result.stdout == "  conf-01:\n" + block


def test_corpus_evaluate_unknown_task_is_a_usage_error(world: World) -> None:
    result = run_corpus("evaluate", "conf-99", "--root", str(world.root))
    assert result.returncode == 2  # as for corpus graph conf-99
    assert result.stdout == ""
    assert "unknown task 'conf-99'" in result.stderr and "conf-01" in result.stderr


def test_corpus_evaluate_unknown_strategy_is_refused(world: World) -> None:
    result = run_corpus("evaluate", "conf-03", "--strategy", "devinette", "--root", str(world.root))
    assert result.returncode == 2
    assert "--strategy 'devinette': one of " in result.stderr and "P1-reference-supposee" in result.stderr


ATT_6806_FIN = "    date_fin_validite: 2027-01-31\n    avenants: [/avenants/AVN-7690]\n"
ATT_6806_EMISSION = "    date_emission: 2026-02-01\n    date_fin_validite: 2027-01-31\n"


@pytest.mark.parametrize(("old", "new"), [
    (ATT_6806_FIN, ATT_6806_FIN.replace("2027-01-31", "2026-01-31")),  # lapsed on its known dates
    (ATT_6806_EMISSION, ATT_6806_EMISSION.replace("2026-02-01", "2026-11-01")),  # not yet issued
], ids=["lapsed", "not-yet-issued"])
def test_an_absent_avenant_makes_c3_not_establishable_whatever_the_dates(world: World, season: Season,
                                                                       tmp_path: Path, old: str, new: str) -> None:
    """conf-02's attestation lists an absent avenant: C3 is not establishable even when its own dates say
    it is not in force, as principes.peremption and C3's regle say (case 2° comes before 3° and 4°)."""
    st = statement_of(season, "conf-02")
    reader = CorpusReader(rebuilt(world, tmp_path, [("entites/ENT-4481.yaml", old, new)]), CONFORMITE)
    ev = evaluate(st.task, reader)
    c3 = next(c for c in ev.criteres if c.id == "C3")
    assert (c3.etat, ev.verdict) == ("non_etablissable", "indeterminable")
    assert ("/avenants/AVN-7690", "/existe", False) in [(f.ressource, f.champ, f.valeur) for f in c3.faits]
    served = reader.fetch(reader.track.referentiel)
    peremption = served["principes"]["peremption"]
    assert "Le seul fait qu'un document ne soit pas en cours de validité ne rend" in peremption
    assert "quelles que soient ses dates" in served["criteres"][2]["regle"]


AGR_5702_ENTRY = "      - agrement: /agrements/AGR-5702\n        entite: /entites/ENT-1879\n"
AGR_5702_RETIRE = ("      - agrement: /agrements/AGR-5702\n        entite: /entites/ENT-1879\n"
                   "        denomination: Anselmet Finance Patrimoniale\n        statut: retire\n")
CIF_LIST = "listes/agrees/conseil-en-investissements-financiers.yaml"


@pytest.mark.parametrize(("old", "new", "etat"), [
    (AGR_5702_ENTRY, AGR_5702_RETIRE + AGR_5702_ENTRY, "non_etablissable"),  # a retiré entry comes first
    ("      - agrement: /agrements/AGR-5034\n", AGR_5702_RETIRE + "      - agrement: /agrements/AGR-5034\n",
     "etabli"),  # the agreeing entry comes first, a retiré one after it
], ids=["differing-first", "agreeing-first"])
def test_only_the_first_list_entry_of_an_agrement_counts(world: World, season: Season, tmp_path: Path,
                                                         old: str, new: str, etat: str) -> None:
    """The control's agrément given twice by the liste des agréés: only the first entry that bears it, in
    reading order, is compared with the registre (principes.sources_de_meme_rang)."""
    st = statement_of(season, CONTROL)
    reader = CorpusReader(rebuilt(world, tmp_path, [(CIF_LIST, old, new)]), CONFORMITE)
    page = reader.fetch("/listes/agrees/conseil-en-investissements-financiers/1")
    listed = [e["statut"] for e in page["entrees"] if e["agrement"] == "/agrements/AGR-5702"]
    assert sorted(listed) == ["actif", "retire"]
    assert {c.id: c.etat for c in evaluate(st.task, reader).criteres}["C2"] == etat
    served = reader.fetch(reader.track.referentiel)["principes"]["sources_de_meme_rang"]
    assert "seule compte la première entrée qui le porte" in served
