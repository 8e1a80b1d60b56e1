"""``corpus check-season`` passes on the real season and fails, with the right message, on every rule.

A season cannot be patched once frozen, so the check is the last line of defence: each rule of the season
gets a failing fixture made of the real season plus the smallest edit that breaks it, and the test
asserts where the problem points (``file:line:column: task:``) and a fragment that pins the rule. Unless
stated, the list of problems is asserted whole, so an edit that breaks a second rule (a flipped verdict
also breaks the published distribution) is documented by the test rather than hidden.
"""

from __future__ import annotations

import dataclasses
import math
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from cli_run import run_corpus
from season_fixtures import (
    KEY,
    KEY_LOCATION,
    ROOT,
    TASKS,
    World,
    assert_problems,
    edit,
    edit_in_block,
    load_problem_lines,
    make_world,
    position,
    problem_lines,
    rebuilt,
    season_report,
    write_season,
)
from trackfix import CONFORMITE, copy_tracks

from generator.proving.checks import TaskReport, check_referentiel, check_season, check_task
from generator.reading.graph import probant_facts, task_graph
from generator.reading.reader import CorpusReader
from generator.track_code.conformite.evaluator import evaluate
from generator.track_code.conformite.logic import TRACK_LOGIC as LOGIC

REFERENTIEL = "referentiel.yaml"
REF_WHERE = "build/conformite/referentiel.json: criteres: "
VERDICTS = f"{KEY}: verdicts: "
FAMILLES = f"{KEY}: familles: "


def _corpus_command() -> list[str]:
    """The installed ``corpus`` script of this interpreter's environment (``-m`` when not installed)."""
    script = Path(sys.executable).with_name("corpus")
    return [str(script)] if script.exists() else [sys.executable, "-m", "generator.cli"]


CORPUS = _corpus_command()


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("season-check"))


def key_entry(key: str, task: str) -> str:
    """Prefix of a problem located at the task's entry in cle.yaml."""
    return f"{KEY}:{position(key, f'{task}:')}: {task}: "


def key_fact(key: str, task: str, needle: str) -> str:
    """Prefix of a problem located at one founding fact of the task's entry in cle.yaml."""
    return f"{KEY}:{position(key, needle, after=f'  {task}:')}: {task}: "


def statement(tasks: str, task: str) -> str:
    """Prefix of a problem located at the task's statement in taches.yaml."""
    return f"{TASKS}:{position(tasks, f'id: {task}')}: {task}: "


# -- the real season ------------------------------------------------------------------------------------


def test_check_season_passes_on_the_committed_season() -> None:
    """What ``make test`` runs: the committed build/ and season_src/ of the repository, through the CLI."""
    run = subprocess.run([*CORPUS, "check-season", "--root", str(ROOT)], capture_output=True, text=True,
                         timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    # every track of the checkout in turn, each line naming its track
    assert [line for line in run.stderr.splitlines() if "passed" in line] == [
        "corpus check-season (conformite): passed, 0 problem(s)",
        "corpus check-season (generique): passed, 0 problem(s)"]
    table = run.stdout
    for n in range(1, 11):
        assert f"\nconf-{n:02d} " in table
    assert "meilleure réponse constante : non_conforme, 4/10" in table


def test_check_season_passes_on_the_sources_built_aside(world: World) -> None:
    """The same proof from the sources rebuilt in a temporary root (not the committed build/)."""
    season = world.season()
    report = check_season(season, world.reader(), KEY_LOCATION)
    assert [str(p) for p in report.problems] == []
    assert [t.statement.task.id for t in report.tasks] == [f"conf-{n:02d}" for n in range(1, 11)]
    counts = Counter(e.verdict for e in season.key.values())
    assert report.best_constant == ("non_conforme", counts["non_conforme"]) == ("non_conforme", 4)
    for task in report.tasks:
        assert task.entry is not None and task.evaluation.verdict == task.entry.verdict
        assert 2 <= len(task.evaluation.calls) <= 12
        assert task.proper_facts >= math.ceil(task.statement.minimum / 2)


def test_check_season_cli_fails_with_one_line_per_problem(world: World, tmp_path: Path) -> None:
    """The CLI exits 1 and prints the problem where an author will look for it (stderr)."""
    shutil.copytree(world.build, tmp_path / "build/conformite")
    copy_tracks(tmp_path)
    key = edit_in_block(world.key_text(), "  conf-01:", "verdict: non_conforme", "verdict: indeterminable")
    write_season(world, tmp_path, key=key)
    run = run_corpus("check-season", "--root", str(tmp_path))  # its problems go to stderr, looked up per call
    assert run.returncode == 1
    assert f"{key_entry(key, 'conf-01')}the evaluator gives non_conforme, the key says indeterminable" \
        in run.stderr.splitlines()
    assert run.stderr.strip().endswith("corpus check-season: FAILED, 2 problem(s)")


# -- verdicts and composition ------------------------------------------------------------------------------


def test_flipped_verdict_differs_from_the_evaluator_and_breaks_the_distribution(world: World,
                                                                                 tmp_path: Path) -> None:
    key = edit_in_block(world.key_text(), "  conf-01:", "verdict: non_conforme", "verdict: indeterminable")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (key_entry(key, "conf-01"), "the evaluator gives non_conforme, the key says indeterminable"),
        (VERDICTS, "must be 3 conforme, 4 non_conforme, 3 indeterminable; the key has 3 conforme, "
                   "3 non_conforme, 4 indeterminable"),
    )


def test_best_constant_answer_not_four_out_of_ten(world: World, tmp_path: Path) -> None:
    """Five ``non_conforme`` in the key: answering it everywhere would score 5/10."""
    key = edit_in_block(world.key_text(), "  conf-06:", "verdict: conforme", "verdict: non_conforme")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (VERDICTS, "the best constant answer (non_conforme) scores 5/10; it must be 4/10"),
        (VERDICTS, "the key has 2 conforme, 5 non_conforme, 3 indeterminable"),
        (key_entry(key, "conf-06"), "the evaluator gives conforme, the key says non_conforme"),
        # conf-06 is P4: the first-page reading answers indeterminable, so its trap still traps
    )


def test_family_missing(world: World, tmp_path: Path) -> None:
    key = world.key_text()
    for task in ("conf-02", "conf-10"):  # the two P1 tasks
        key = edit_in_block(key, f"  {task}:", "famille: P1", "famille: P4")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (FAMILLES, "family P1 has no task"),
        # first-page reading does not miss an absent avenant: relabelled, the trap no longer traps (conf-10's
        # trap is a named reading, arret-au-premier-probleme, which still catches it)
        (key_entry(key, "conf-02"), "the trap does not trap: the P4 shortcut P4-premiere-reponse"),
    )


def test_p5_on_fewer_than_three_tasks(world: World, tmp_path: Path) -> None:
    """conf-03 relabelled P2 (its named reading, the entity's statut unread, still catches it): two P5
    tasks left."""
    key = world.key_text()
    for task in ("conf-03",):
        key = edit_in_block(key, f"  {task}:", "famille: P5", "famille: P2")
    assert_problems(problem_lines(world, tmp_path, key=key),
                    (FAMILLES, "P5 must be on at least 3 tasks (found 2)"))


def test_two_control_tasks(world: World, tmp_path: Path) -> None:
    key = edit_in_block(world.key_text(), "  conf-08:", "famille: P4", "famille: controle")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (FAMILLES, "exactly one control task without a trap is required (found 2)"),
        (key_entry(key, "conf-08"), "control task: the shortcut P4-premiere-reponse answers non_conforme "
                                    "instead of conforme"),
        (key_entry(key, "conf-08"), "control task: the careless reading premiers-documents-a-premiere-vue "
                                    "answers non_conforme instead of conforme"),
    )


def test_no_control_task(world: World, tmp_path: Path) -> None:
    key = edit_in_block(world.key_text(), "  conf-05:", "famille: controle", "famille: P4")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (FAMILLES, "exactly one control task without a trap is required (found 0)"),
        (key_entry(key, "conf-05"), "the trap does not trap: the P4 shortcut P4-premiere-reponse"),
    )


def test_key_entry_without_statement(world: World, tmp_path: Path) -> None:
    tasks = world.tasks_text()
    tasks = tasks[:tasks.index("  - id: conf-10")]
    key = world.key_text()
    assert_problems(problem_lines(world, tmp_path, tasks=tasks),
                    (key_entry(key, "conf-10"), "key entry without a task statement"),
                    ("season_src/conformite/cle.yaml: conf-10:",
                     "task of the barème (conformite-bareme-v3) without a statement"))


def test_task_without_key_entry(world: World, tmp_path: Path) -> None:
    key = world.key_text()
    key = key[:key.index("  conf-10:")]
    tasks = world.tasks_text()
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (statement(tasks, "conf-10"), "the key has no entry for this task"),
        (VERDICTS, "the key has 3 conforme, 3 non_conforme, 3 indeterminable"),
        (VERDICTS, "the best constant answer (conforme) scores 3/9; it must be 4/10"),
    )


# -- founding facts --------------------------------------------------------------------------------------

AGR_5113_END = 'ressource: /agrements/AGR-5113\n        champ: /date_fin_validite\n        valeur: "2026-09-30"'
AVN_7690_EXISTE = "ressource: /avenants/AVN-7690\n        champ: /existe\n        valeur: false"
RULE_DERIVES = "the rule derives the founding fact "
RULE_EXTRA = "which the rule does not derive"


def test_fact_with_a_wrong_value(world: World, tmp_path: Path) -> None:
    """A value the corpus does not serve where the rule derives the fact: one line, with the value to write
    (not three: not served, derived but not held, held but not derived)."""
    key = edit(world.key_text(), AGR_5113_END, AGR_5113_END.replace("2026-09-30", "2026-09-29"))
    where = key_fact(key, "conf-01", "ressource: /agrements/AGR-5113\n        champ: /date_fin")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (where, "the key holds the founding fact (/agrements/AGR-5113, /date_fin_validite) = \"2026-09-29\" for "
                "C2, but the corpus serves \"2026-09-30\" there and the rule derives the fact with that value: "
                "write \"2026-09-30\" here (when a served value changes, the key changes with it), then run "
                "corpus build-season"),
    )


def test_fact_with_a_wrong_type(world: World, tmp_path: Path) -> None:
    """The string "false" is not the boolean false: values compare by strict JSON equality (spec §5.2)."""
    key = edit(world.key_text(), AVN_7690_EXISTE, AVN_7690_EXISTE.replace("false", '"false"'))
    where = key_fact(key, "conf-02", "ressource: /avenants/AVN-7690\n        champ: /existe")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (where, "the key holds the founding fact (/avenants/AVN-7690, /existe) = \"false\" for C3, but the corpus "
                "serves false there and the rule derives the fact with that value: write false here (when a "
                "served value changes, the key changes with it), then run corpus build-season"),
    )


def test_fact_at_a_pointer_that_names_nothing(world: World, tmp_path: Path) -> None:
    """A probant pattern whose index is past the end of the array: nothing is served there."""
    old = "ressource: /entites/ENT-3388\n        champ: /attestations/0"
    key = edit(world.key_text(), old, old.replace("/attestations/0", "/attestations/7"))
    where = key_fact(key, "conf-10", "ressource: /entites/ENT-3388")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (where, "founding fact (/entites/ENT-3388, /attestations/7) = \"/attestations/ATT-6233\" is not served "
                "exactly: the corpus serves nothing"),
        (key_entry(key, "conf-10"), RULE_DERIVES + "(/entites/ENT-3388, /attestations/0)"),
        (where, RULE_EXTRA),
    )


def test_fact_outside_the_task_graph(world: World, tmp_path: Path) -> None:
    """AGR-4417 is another entity's agrément: same field, a served value, wrong graph."""
    key = edit(world.key_text(), AGR_5113_END, AGR_5113_END.replace("AGR-5113", "AGR-4417").replace(
        "2026-09-30", world.doc("/agrements/AGR-4417")["date_fin_validite"]))
    where = key_fact(key, "conf-01", "ressource: /agrements/AGR-4417")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (where, "founding fact (/agrements/AGR-4417, /date_fin_validite) = "
                f"\"{world.doc('/agrements/AGR-4417')['date_fin_validite']}\" lies outside the task's graph "
                "(spec §5.2)"),
        (key_entry(key, "conf-01"), RULE_DERIVES + "(/agrements/AGR-5113, /date_fin_validite)"),
        (where, RULE_EXTRA),
    )


def test_fact_on_a_non_probant_field(world: World, tmp_path: Path) -> None:
    """The entity's dénomination is served exactly, in the graph, but no criterion consumes it."""
    old = "ressource: /entites/ENT-2751\n        champ: /statut\n        valeur: \"radiee\""
    key = edit(world.key_text(), old, "ressource: /entites/ENT-2751\n        champ: /denomination\n"
                                      "        valeur: Cabinet Morvellec Conseil")
    assert world.doc("/entites/ENT-2751")["denomination"] == "Cabinet Morvellec Conseil"
    where = key_fact(key, "conf-03", "ressource: /entites/ENT-2751")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (where, "founding fact (/entites/ENT-2751, /denomination) = \"Cabinet Morvellec Conseil\" is not on a "
                "probant field of /entites/ (spec §5.7)"),
        (key_entry(key, "conf-03"), RULE_DERIVES + "(/entites/ENT-2751, /statut) = \"radiee\" for C1"),
        (where, RULE_EXTRA),
    )


def test_equivalent_form_not_served(world: World, tmp_path: Path) -> None:
    """The founding fact is right; one of its equivalent forms names the wrong entity."""
    old = "{ressource: /agrements/AGR-5113, champ: /entite, valeur: \"/entites/ENT-4102\"}"
    key = edit(world.key_text(), old, old.replace("ENT-4102\"}", "ENT-1204\"}"))
    where = key_fact(key, "conf-01", "ressource: /entites/ENT-4102")  # located at the fact it belongs to
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (where, "equivalent form (/agrements/AGR-5113, /entite) = \"/entites/ENT-1204\" is not served exactly: "
                "the corpus serves \"/entites/ENT-4102\""),
        (key_entry(key, "conf-01"), RULE_DERIVES + "(/entites/ENT-4102, /agrements/0)"),
        (where, RULE_EXTRA),
    )


def test_equivalent_form_missing(world: World, tmp_path: Path) -> None:
    """The whole-array form of a link is derived by the rule: a key that drops it differs from the rule."""
    old = "          - {ressource: /entites/ENT-4102, champ: /agrements, valeur: [\"/agrements/AGR-5113\"]}\n"
    key = edit(world.key_text(), old, "")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (key_entry(key, "conf-01"), RULE_DERIVES + "(/entites/ENT-4102, /agrements/0) = \"/agrements/AGR-5113\" "
                                    "for C2 (equivalent forms: (/agrements/AGR-5113, /entite) = "
                                    "\"/entites/ENT-4102\"; (/entites/ENT-4102, /agrements) = "
                                    "[\"/agrements/AGR-5113\"])"),
        (key_fact(key, "conf-01", "ressource: /entites/ENT-4102"), "with 1 equivalent form(s), " + RULE_EXTRA),
    )


def test_fact_for_the_wrong_criterion(world: World, tmp_path: Path) -> None:
    """The same triple credited to another criterion is not what the rule derives."""
    old = "ressource: /entites/ENT-2751\n        champ: /statut\n        valeur: \"radiee\"\n        critere: C1"
    key = edit(world.key_text(), old, old.replace("critere: C1", "critere: C2"))
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (key_entry(key, "conf-03"), RULE_DERIVES + "(/entites/ENT-2751, /statut) = \"radiee\" for C1"),
        (key_fact(key, "conf-03", "ressource: /entites/ENT-2751"),
         "for C2 with 0 equivalent form(s), " + RULE_EXTRA),
    )


def test_agrees_list_fact_on_another_entitys_entry(world: World, tmp_path: Path) -> None:
    """conf-04's list entry moved to the next entry of the page: served, but another entity's."""
    page = "/listes/agrees/courtage-en-assurance/2"
    entries = world.doc(page)["entrees"]
    k = next(i for i, e in enumerate(entries) if e["entite"] == "/entites/ENT-4620")
    other = k + 1
    assert entries[other]["entite"] != "/entites/ENT-4620"
    old = f"        champ: /entrees/{k}/agrement\n        valeur: \"/agrements/AGR-5466\""
    new = f"        champ: /entrees/{other}/agrement\n        valeur: \"{entries[other]['agrement']}\""
    key = edit(world.key_text(), old, new)
    where = key_fact(key, "conf-04", f"ressource: {page}\n        champ: /entrees/{other}/agrement")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (where, f"founding fact ({page}, /entrees/{other}/agrement) = \"{entries[other]['agrement']}\" is on a "
                "common-list entry that does not concern the entity (spec §5.2)"),
        (key_entry(key, "conf-04"), RULE_DERIVES + f"({page}, /entrees/{k}/agrement)"),
        (where, RULE_EXTRA),
    )


def test_mesures_list_fact_on_a_person_who_is_not_a_beneficiary(world: World, tmp_path: Path) -> None:
    """Entry 0 of mesures page 1 is served exactly, but nobody of that name is a bénéficiaire of ENT-2264."""
    first = world.doc("/mesures-restrictives/1")["entrees"][0]
    old = ("ressource: /mesures-restrictives/3\n        champ: /entrees/2/date_naissance\n"
           "        valeur: \"1971-11-23\"")
    new = f"ressource: /mesures-restrictives/1\n        champ: /entrees/0/date_naissance\n        valeur: " \
          f"\"{first['date_naissance']}\""
    key = edit(world.key_text(), old, new)
    where = key_fact(key, "conf-07", "ressource: /mesures-restrictives/1\n        champ: /entrees/0")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (where, f"(/mesures-restrictives/1, /entrees/0/date_naissance) = \"{first['date_naissance']}\" is on a "
                "common-list entry that does not concern the entity"),
        (key_entry(key, "conf-07"), RULE_DERIVES + "(/mesures-restrictives/3, /entrees/2/date_naissance)"),
        (where, RULE_EXTRA),
    )


def test_founding_facts_exceeding_the_ceiling(world: World, tmp_path: Path) -> None:
    """conf-09 (ceiling 6) gets three more facts, true and probant: seven facts cannot all be asserted."""
    extra = "".join(f"      - {{ressource: /entites/ENT-1530, champ: {c}, valeur: {v}, critere: C1}}\n"
                    for c, v in (("/existe", "true"), ("/statut", "active"), ("/beneficiaires",
                                                                              "/beneficiaires/ENT-1530/1")))
    key = edit_in_block(world.key_text(), "  conf-09:", "    faits:\n", "    faits:\n" + extra)
    lines = problem_lines(world, tmp_path, key=key)
    assert_problems(lines, (key_entry(key, "conf-09"), "7 founding facts exceed the ceiling of 6 assertions"),
                    exhaustive=False)
    assert sum(RULE_EXTRA in line for line in lines) == 3 and len(lines) == 4


# -- calls, bounds, assertion minimum ------------------------------------------------------------------


def test_task_needing_more_than_12_calls(world: World, tmp_path: Path) -> None:
    """ENT-2999 (three agréments, two attestations, three bénéficiaires pages) costs more than 12 calls for
    the CIF activity, lists read to page_suivante: null. The key's facts, written for ENT-2751, fall
    outside the new graph too."""
    tasks = edit_in_block(world.tasks_text(), "  - id: conf-03", "entite: /entites/ENT-2751",
                          "entite: /entites/ENT-2999")
    lines = problem_lines(world, tmp_path, tasks=tasks)
    task = next(s.task for s in world.season().statements if s.task.id == "conf-03")
    moved = dataclasses.replace(task, fields=tuple((k, "/entites/ENT-2999" if k == "entite" else v)
                                                   for k, v in task.fields))
    calls = len(evaluate(moved, world.reader()).calls)
    assert calls > 12
    assert_problems(
        lines,
        (statement(tasks, "conf-03"), f"decided in {calls} corpus calls; a task must be decidable in 2 to 12"),
        (key_fact(world.key_text(), "conf-03", "ressource: /entites/ENT-2751"), "lies outside the task's graph"),
        exhaustive=False,
    )
    assert not any("corpus calls" in line for line in lines if "conf-03" not in line)


def test_calls_below_two_are_refused(world: World) -> None:
    """check_task on a task whose evaluation made a single call (forced): the bound is checked."""
    season = world.season()
    reader = world.reader()
    st = next(s for s in season.statements if s.task.id == "conf-03")
    ev = evaluate(st.task, reader)
    ev = dataclasses.replace(ev, calls=ev.calls[:1])
    report = TaskReport(st, season.key["conf-03"], ev, {s.name: evaluate(st.task, reader, s).verdict
                                                        for s in LOGIC.shortcuts.every})
    assert "decided in 1 corpus calls; a task must be decidable in 2 to 12" in \
        [p.message for p in check_task(reader, LOGIC, report)]


def test_task_naming_an_absent_entity_is_one_problem(world: World, tmp_path: Path) -> None:
    """An entity missing from the build is said once, by name, instead of by its consequences."""
    tasks = edit_in_block(world.tasks_text(), "  - id: conf-03", "entite: /entites/ENT-2751",
                          "entite: /entites/ENT-9999")
    lines = [line for line in problem_lines(world, tmp_path, tasks=tasks)
             if "taches[2]" in line or "conf-03" in line]
    where = f"{TASKS}:{position(tasks, 'entite: /entites/ENT-9999')}"
    assert_problems(lines, (f"{where}: taches[2].entite: ", "names /entites/ENT-9999, which the built corpus does "
                            "not serve"))


@pytest.mark.parametrize(("old", "new", "shown"), [
    ('minimum: "4"', 'minimum: "3"', "assertions minimum 3, plafond 8"),
    ('plafond: "8"', 'plafond: "7"', "assertions minimum 4, plafond 7"),
], ids=["minimum", "plafond"])
def test_assertion_bounds_differing_from_the_bareme(world: World, tmp_path: Path, old: str, new: str,
                                                   shown: str) -> None:
    tasks = edit_in_block(world.tasks_text(), "  - id: conf-05", old, new)
    assert_problems(problem_lines(world, tmp_path, tasks=tasks),
                    (statement(tasks, "conf-05"), f"{shown}; the barème (conformite-bareme-v3, bareme.bornes of "
                                                       "tracks/conformite/track.yaml) fixes 4 and 8"))


def test_assertion_minimum_unreachable(world: World, tmp_path: Path) -> None:
    """A minimum of 200 is beyond any graph of the corpus (the bounds then also differ from §5.5)."""
    tasks = edit_in_block(world.tasks_text(), "  - id: conf-03", 'minimum: "2"', 'minimum: "200"')
    tasks = edit_in_block(tasks, "  - id: conf-03", 'plafond: "4"', 'plafond: "400"')
    lines = problem_lines(world, tmp_path, tasks=tasks)
    assert_problems(
        lines,
        (statement(tasks, "conf-03"), "cannot reach its assertion minimum of 200: the graph offers"),
        (statement(tasks, "conf-03"),
         "assertions minimum 200, plafond 400; the barème (conformite-bareme-v3, bareme.bornes of "
         "tracks/conformite/track.yaml) fixes 2 and 4"),
    )
    assert any("proper resources (at least 100 needed)" in line for line in lines)  # half, rounded up


def test_assertion_minimum_boundary_is_exact(world: World) -> None:
    """check_task on conf-03 with the minimum at what the graph offers (reachable), then one more (not).

    The offer is counted here from the graph, so the test fails if the rule is off by one either way.
    """
    season = world.season()
    reader = world.reader()
    st = next(s for s in season.statements if s.task.id == "conf-03")
    proper, common = probant_facts(reader, st.task, task_graph(reader, st.task))
    offered = len(proper) + len(common)
    base = TaskReport(st, season.key["conf-03"], evaluate(st.task, reader),
                      {s.name: evaluate(st.task, reader, s).verdict for s in LOGIC.shortcuts.every})

    def messages(minimum: int) -> list[str]:
        report = dataclasses.replace(base, statement=dataclasses.replace(st, minimum=minimum))
        return [p.message for p in check_task(reader, LOGIC, report) if "cannot reach" in p.message]

    assert CONFORMITE.bareme.bounds["conf-03"][0] <= offered
    assert messages(offered) == []
    assert messages(offered + 1) == [
        f"cannot reach its assertion minimum of {offered + 1}: the graph offers {len(proper)} distinct probant "
        f"facts on proper resources (at least {math.ceil((offered + 1) / 2)} needed) and {len(common)} "
        "admissible on common lists"]


# -- traps ---------------------------------------------------------------------------------------------------


def test_trap_that_does_not_trap(world: World, tmp_path: Path) -> None:
    """conf-04 relabelled P2: reading statuses without dates still finds the contradiction."""
    key = edit_in_block(world.key_text(), "  conf-04:", "famille: P3", "famille: P2")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (key_entry(key, "conf-04"), "the trap does not trap: the P2 shortcut P2-statut-sans-dates (les statuts "
                                    "sont lus, les dates de validité ignorées) also reaches indeterminable"),
        (FAMILLES, "family P3 has no task"),
    )


def test_control_answered_wrong_by_a_shortcut(world: World, tmp_path: Path) -> None:
    """conf-01 (a P2 trap) marked as the control: the P2 shortcut answers it wrong."""
    key = edit_in_block(world.key_text(), "  conf-01:", "famille: P2", "famille: controle")
    assert_problems(
        problem_lines(world, tmp_path, key=key),
        (key_entry(key, "conf-01"), "control task: the shortcut P2-statut-sans-dates answers conforme instead "
                                    "of non_conforme; a control must be answered right by every shortcut"),
        (key_entry(key, "conf-01"), "control task: the careless reading fiche-seule answers conforme instead of "
                                    "non_conforme; a control has no trap"),
        (FAMILLES, "exactly one control task without a trap is required (found 2)"),
        (FAMILLES, "family P2 has no task"),
    )


@pytest.mark.parametrize(("new", "message"), [
    ("", "P5 task needs 'raccourci', one of avenant-avant-sa-date-d-effet, bornes-exclues, "
         "date-de-fin-definitive, homonymie-sur-les-noms, situation-de-l-entite-non-lue (found None)"),
    ("    raccourci: devinette\n", "unknown 'raccourci' 'devinette'; one of arret-au-premier-probleme, "
                                  "avenant-avant-sa-date-d-effet, bornes-exclues"),
], ids=["missing", "unknown"])
def test_p5_without_a_known_raccourci(world: World, tmp_path: Path, new: str, message: str) -> None:
    key = edit(world.key_text(), "    raccourci: homonymie-sur-les-noms\n", new)
    assert_problems(problem_lines(world, tmp_path, key=key), (key_entry(key, "conf-07"), message))


def test_raccourci_of_a_non_p5_task_must_trap(world: World, tmp_path: Path) -> None:
    """A named reading may stand for another family's trap, but it must trap: ignoring avenants does not
    change conf-01 (its agrément lapsed)."""
    key = edit_in_block(world.key_text(), "  conf-01:", "    faits:\n",
                        "    raccourci: date-de-fin-definitive\n    faits:\n")
    assert_problems(problem_lines(world, tmp_path, key=key),
                    (key_entry(key, "conf-01"),
                     "the trap does not trap: the P2 shortcut P5-date-de-fin-definitive"))


def test_raccourci_on_the_control_task(world: World, tmp_path: Path) -> None:
    key = edit_in_block(world.key_text(), "  conf-05:", "    faits:\n",
                        "    raccourci: date-de-fin-definitive\n    faits:\n")
    assert_problems(problem_lines(world, tmp_path, key=key),
                    (key_entry(key, "conf-05"), "the control task has no trap, so no 'raccourci'"))


def test_duplicate_task_statement(world: World, tmp_path: Path) -> None:
    tasks = world.tasks_text()
    block = tasks[tasks.index("  - id: conf-03"):tasks.index("  - id: conf-04")]
    lines = problem_lines(world, tmp_path, tasks=tasks + block)
    assert any("conf-03" in line and "duplicate" in line for line in lines), lines


# -- the référentiel ---------------------------------------------------------------------------------------

C1_CHAMPS = "      /entites/: [/existe, /statut]\n"


def test_referentiel_declaring_a_non_probant_field(world: World, tmp_path: Path) -> None:
    build_dir = rebuilt(world, tmp_path / "corpus",
                        [(REFERENTIEL, C1_CHAMPS, C1_CHAMPS.replace("/statut]", "/statut, /denomination]"))])
    assert_problems(problem_lines(world, tmp_path, build_dir=build_dir),
                    (REF_WHERE, "/entites/denomination is declared but is not a probant field of spec §5.7"))


def test_referentiel_leaving_a_probant_field_unconsumed(world: World, tmp_path: Path) -> None:
    """C3 no longer declares /activite_exclue: no criterion consumes it (no task of the season has an
    exclusion avenant, so the evaluator's consumption rule has nothing to add)."""
    build_dir = rebuilt(world, tmp_path / "corpus", [(REFERENTIEL, ", /nouvelle_date_fin, /activite_exclue]",
                                                      ", /nouvelle_date_fin]")])
    assert_problems(
        problem_lines(world, tmp_path, build_dir=build_dir),
        (REF_WHERE, "probant field /activite_exclue of /avenants/ is consumed by no criterion"),
    )
    # the declaration rule alone, without any evaluation (so without the consumption rule)
    alone = [p.message for p in check_referentiel(CorpusReader(build_dir, CONFORMITE), [])]
    assert alone == ["probant field /activite_exclue of /avenants/ is consumed by no criterion"]


def test_evaluator_consuming_a_field_its_criterion_does_not_declare(world: World, tmp_path: Path) -> None:
    """/page_suivante of the bénéficiaires moves from C4 to C1: still declared by some criterion (so no
    'consumed by no criterion'), but the evaluator's C4 consumes it without C4 declaring it."""
    build_dir = rebuilt(world, tmp_path / "corpus", [
        (REFERENTIEL, C1_CHAMPS, C1_CHAMPS + "      /beneficiaires/: [/page_suivante]\n"),
        (REFERENTIEL, "/entrees/<n>/date_naissance, /page_suivante]", "/entrees/<n>/date_naissance]"),
    ])
    assert_problems(
        problem_lines(world, tmp_path, build_dir=build_dir),
        (REF_WHERE, "the evaluator's C4 consumes /page_suivante of /beneficiaires/, which C4's champs do not "
                    "list"),
    )


# -- loading: YAML and schema errors as file:line:column ---------------------------------------------


def test_schema_error_number_like_task_id(world: World, tmp_path: Path) -> None:
    tasks = edit(world.tasks_text(), "  - id: conf-03", "  - id: 3")
    assert load_problem_lines(world, tmp_path, tasks=tasks) == [
        f"{TASKS}:{position(tasks, 'id: 3')}: taches[2].id: '3' is not a task id: write conf- followed by "
        'two digits, as "conf-01"']


def test_schema_error_unknown_family(world: World, tmp_path: Path) -> None:
    key = edit_in_block(world.key_text(), "  conf-04:", "famille: P3", "famille: P6")
    lines = load_problem_lines(world, tmp_path, key=key)
    assert len(lines) == 1
    assert lines[0].startswith(f"{KEY}:{position(key, 'famille: P6')}: taches.conf-04.famille: 'P6' is not one "
                               "of ['P1', 'P2', 'P3', 'P4', 'P5', 'controle']")


def test_schema_error_duplicate_key(world: World, tmp_path: Path) -> None:
    key = edit_in_block(world.key_text(), "  conf-04:", "    verdict: indeterminable\n",
                        "    verdict: indeterminable\n    verdict: conforme\n")
    first = position(key, "verdict: indeterminable", after="  conf-04:").split(":")[0]
    assert load_problem_lines(world, tmp_path, key=key) == [
        f"{KEY}:{position(key, 'verdict: conforme', after='  conf-04:')}: taches.conf-04.verdict: duplicate "
        f"key (first written at line {first})"]


def test_schema_error_task_id_of_the_key(world: World, tmp_path: Path) -> None:
    key = edit(world.key_text(), "  conf-04:", "  conf-4:")
    lines = load_problem_lines(world, tmp_path, key=key)
    assert lines == [f"{KEY}:{position(key, 'conf-4:')}: taches.conf-4: key 'conf-4' is not a task id: "
                     'write conf- followed by two digits, as "conf-01"']


def test_schema_error_count_written_as_a_word(world: World, tmp_path: Path) -> None:
    tasks = edit_in_block(world.tasks_text(), "  - id: conf-03", 'minimum: "2"', "minimum: deux")
    assert load_problem_lines(world, tmp_path, tasks=tasks) == [
        f"{TASKS}:{position(tasks, 'minimum: deux')}: taches[2].assertions.minimum: 'deux' is not a positive "
        'whole number: write it in digits, from 1, without sign or leading zero, as "3"']


def test_schema_errors_of_both_files_reported_at_once(world: World, tmp_path: Path) -> None:
    """An author fixes everything in one pass: the tasks' and the key's errors come together, in order."""
    tasks = edit(world.tasks_text(), "  - id: conf-03", "  - id: 3")
    key = edit_in_block(world.key_text(), "  conf-04:", "famille: P3", "famille: P6")
    lines = load_problem_lines(world, tmp_path, tasks=tasks, key=key)
    assert [line.split(": ")[0] for line in lines] == [f"{KEY}:{position(key, 'famille: P6')}",
                                                       f"{TASKS}:{position(tasks, 'id: 3')}"]


def test_schema_error_through_the_cli(world: World, tmp_path: Path) -> None:
    """``corpus check-season`` prints the loading error as file:line:column and exits 1, no table."""
    key = edit_in_block(world.key_text(), "  conf-04:", "famille: P3", "famille: P6")
    write_season(world, tmp_path, key=key)
    shutil.copytree(world.build, tmp_path / "build/conformite")
    copy_tracks(tmp_path)
    run = run_corpus("check-season", "--root", str(tmp_path))
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.startswith(f"{KEY}:{position(key, 'famille: P6')}: taches.conf-04.famille: 'P6'")


def test_season_report_of_a_fixture_keeps_the_table(world: World, tmp_path: Path) -> None:
    """A failing season still reports every task (the author sees the whole table, not the first error)."""
    key = edit_in_block(world.key_text(), "  conf-04:", "famille: P3", "famille: P2")
    report = season_report(world, tmp_path, key=key)
    assert len(report.tasks) == 10 and report.problems


def test_statement_with_an_activite_the_corpus_does_not_list(world: World, tmp_path: Path) -> None:
    """A misspelt activité must be named, not only caught by accident through the trap check."""
    tasks = edit_in_block(world.tasks_text(), "  - id: conf-03", "activite: conseil-en-investissements-financiers",
                          "activite: conseil-en-investissement")
    lines = problem_lines(world, tmp_path, tasks=tasks)
    where = f"{TASKS}:{position(tasks, 'activite: conseil-en-investissement', after='  - id: conf-03')}"
    assert_problems(lines, (f"{where}: taches[2].activite: ", "names activité 'conseil-en-investissement', which "
                            "has no liste des agréés in the built corpus"), exhaustive=False)


def test_key_and_statements_of_different_seasons(world: World, tmp_path: Path) -> None:
    key = edit(world.key_text(), "\nsaison: 1\n", "\nsaison: 2\n")
    lines = load_problem_lines(world, tmp_path, key=key)
    where = f"season_src/conformite/cle.yaml:{position(key, 'saison: 2')}"
    assert_problems(lines, (where, "the key is for season 2 but season_src/conformite/taches.yaml states season "
                                   "1"))
