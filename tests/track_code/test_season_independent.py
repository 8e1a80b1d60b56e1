"""The independent honest agent (generator/track_code/conformite/independent.py): written from the served
/referentiel alone, it must score 10/10 with no overclaim through ``corpus score``, read as /referentiel
says, and be wired into the panel of ``corpus check-season``.

Expectations here are derived by hand from the served documents and the référentiel's wording (the
dates, the match rule, the bounds), never from the reference evaluator or the founding-fact rule.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest
from season_fixtures import KEY_LOCATION, ROOT, World, make_world, rebuilt
from trackfix import CONFORMITE

from generator.panel.agents import HONEST
from generator.panel.judge import run_panel
from generator.proving.artifacts import KEY_ARTIFACT, TASKS_ARTIFACT, key_artifact, tasks_artifact
from generator.proving.checks import check_season
from generator.reading.reader import Fact
from generator.reading.season_model import KeyFact
from generator.track_code.conformite import independent
from generator.track_code.conformite.evaluator import Task as EvalTask
from generator.track_code.conformite.evaluator import evaluate
from generator.track_code.conformite.independent import (
    EXCEPTIONS,
    INDEPENDENT,
    PRIORITIES,
    CorpusReader,
    Task,
    load_tasks,
    read_task,
    submissions,
)

MODULE = Path(independent.__file__)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """A copy of the season, built, with the public statements and the key compiled beside it."""
    made = make_world(tmp_path_factory.mktemp("season-independent"))
    season = made.season()
    (made.root / "season" / "conformite").mkdir(parents=True)
    (made.root / "season" / "conformite" / TASKS_ARTIFACT).write_bytes(tasks_artifact(season, CONFORMITE))
    (made.root / "season" / "conformite" / KEY_ARTIFACT).write_bytes(key_artifact(season))
    return made


def _task(world: World, task_id: str) -> Task:
    return next(t for t in load_tasks(world.root) if t.id == task_id)


def _pages(world: World, first: str) -> list[str]:
    """A paginated list's pages, followed by hand in the built files."""
    out, path = [], first
    while path is not None:
        out.append(path)
        path = world.doc(path).get("page_suivante")
    return out


@pytest.mark.parametrize("priority", sorted(PRIORITIES))
def test_scores_ten_out_of_ten_with_no_overclaim(world: World, priority: str) -> None:
    report = independent.score(world.root, priority)
    assert (report["reussite"], report["overclaim"]["non_etayees"]) == (10, 0), [
        (t["tache"], t["statut"], t["fonde"], t["faits_manquants"]) for t in report["taches"] if not t["reussie"]]
    assert report["overclaim"]["rendues"] >= sum(t.minimum for t in load_tasks(world.root))
    assert all(t["statut"] == "rendue" and t["verdict_exact"] and t["fonde"] for t in report["taches"])


def test_the_priorities_assert_differently(world: World) -> None:
    """Three strategies, not one under three names: each pair differs on some task, and "sobre" asserts
    fewer facts than the plafond where the deciding facts allow it (the key is not met by filling)."""
    subs = {p: {s["task_id"]: {json.dumps(a["claim"], sort_keys=True) for a in s["assertions"]}
                for s in submissions(world.root, p)[0]} for p in PRIORITIES}
    names = sorted(subs)
    for i, first in enumerate(names):
        for second in names[i + 1:]:
            assert any(subs[first][t] != subs[second][t] for t in subs[first]), (first, second)
    plafonds = {t.id: t.plafond for t in load_tasks(world.root)}
    assert sum(len(a) for a in subs["sobre"].values()) < sum(plafonds.values())
    assert all(len(subs["sobre"][t]) >= m.minimum for t in subs["sobre"] for m in load_tasks(world.root)
               if m.id == t)


def test_verdicts_are_the_published_distribution(world: World) -> None:
    _, readings = submissions(world.root, "termes")
    verdicts = sorted(r.verdict for r in readings)
    assert verdicts.count("conforme") == 3 and verdicts.count("non_conforme") == 4
    assert verdicts.count("indeterminable") == 3


def test_lists_are_read_to_page_suivante_null_within_twelve_calls(world: World) -> None:
    """Spec §5.6 for a reader that evaluates all four criteria (no stop at a false one): /referentiel
    first, every page of the agréés list of the activity, of the bénéficiaires and of the mesures
    restrictives list, each path once, and 2 to 12 calls."""
    reader = CorpusReader(world.build, CONFORMITE)
    for task in load_tasks(world.root):
        reading = read_task(reader, task)
        entity = world.doc(task.entite)
        expected = [*_pages(world, f"/listes/agrees/{task.activite}/1"), *_pages(world, "/mesures-restrictives/1"),
                    *_pages(world, entity["beneficiaires"])]
        assert reading.calls[0] == "/referentiel", task.id
        assert set(expected) <= set(reading.calls), (task.id, sorted(set(expected) - set(reading.calls)))
        assert len(reading.calls) == len(set(reading.calls))
        assert 2 <= len(reading.calls) <= 12, (task.id, reading.calls)


def test_the_season_check_counts_what_this_literal_reader_fetches(world: World) -> None:
    """check-season bounds the reference evaluator's calls (spec §5.6); that count must be the full
    literal reading, the same resources this agent, written apart, fetches reading all four criteria."""
    reader = CorpusReader(world.build, CONFORMITE)
    season = world.season()
    for task in load_tasks(world.root):
        statement = next(s for s in season.statements if s.task.id == task.id)
        reference = evaluate(statement.task, reader)
        assert sorted(reference.calls) == sorted(read_task(reader, task).calls), task.id


def test_common_list_navigation_is_not_a_consumed_fact(world: World) -> None:
    reading = read_task(CorpusReader(world.build, CONFORMITE), _task(world, "conf-05"))
    assert not [f for f in reading.consumed if f.resource.startswith(("/listes/", "/mesures-restrictives/"))
                and f.field == "/page_suivante"]
    assert any(f.resource.startswith("/beneficiaires/") and f.field == "/page_suivante" for f in reading.consumed)


def test_the_agent_reads_neither_the_key_nor_the_evaluator() -> None:
    """Independence, checked twice: the module's imports, and what importing it loads."""
    tree = ast.parse(MODULE.read_text("utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)} \
        | {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert imported <= {"__future__", "json", "math", "collections.abc", "dataclasses", "pathlib", "typing",
                        "generator.reading.reader", "generator.score", "generator.tracks.loader"}, imported
    text = MODULE.read_text("utf-8")
    assert "cle.json" not in text and "cle.yaml" not in text
    probe = ("import sys, generator.track_code.conformite.independent as m; "
             "print(sorted(n for n in sys.modules if n.endswith(('.evaluator', '.founding', 'panel.agents', "
             "'panel.judge', 'reading.season_model', '.logic'))))")
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=60,
                         check=True)
    assert run.stdout.strip() == "[]"


# -- readings on edited corpora: the expected verdicts are worked out by hand from /referentiel ------------

def _reading(world: World, tmp_path: Path, task_id: str, edits: list[tuple[str, str, str]]) -> independent.Reading:
    build = rebuilt(world, tmp_path, edits)
    return read_task(CorpusReader(build, CONFORMITE), _task(world, task_id))


def test_an_attestation_ending_the_day_before_is_lapsed(world: World, tmp_path: Path) -> None:
    """conf-06 ends on the date of examination (bound included: conforme); a day earlier, C3 is false."""
    reading = _reading(world, tmp_path, "conf-06", [(
        "entites/ENT-3045.yaml", "date_fin_validite: 2026-10-15", "date_fin_validite: 2026-10-14")])
    assert reading.verdict == "non_conforme"
    c3 = reading.outcomes[2]
    first = c3.terms[0]
    assert c3.result == independent.FAUX
    assert (first.resource, first.field, first.value) == \
        ("/attestations/ATT-6382", "/date_fin_validite", "2026-10-14")


def test_a_prorogation_in_force_on_the_date_applies(world: World, tmp_path: Path) -> None:
    """conf-09's prorogation takes effect after the date (non_conforme); effective on the date itself
    ('au plus tard la date d'examen'), it replaces the end date and the attestation is in force."""
    reading = _reading(world, tmp_path, "conf-09", [(
        "entites/ENT-1530.yaml", "date_effet: 2026-11-01", "date_effet: 2026-10-15")])
    assert reading.verdict == "conforme"
    assert ("/avenants/AVN-7520", "/nouvelle_date_fin", "2027-09-30") in \
        [(f.resource, f.field, f.value) for f in reading.outcomes[2].terms]


def test_a_match_beats_an_incomplete_declaration(world: World, tmp_path: Path) -> None:
    """conf-07's homonym given the listed date of birth becomes a match: C4 is false 'que la déclaration
    soit complète ou non', and non_conforme wins over the incomplete declaration."""
    reading = _reading(world, tmp_path, "conf-07", [(
        "entites/ENT-2264.yaml", "date_naissance: 1977-02-08", "date_naissance: 1971-11-23")])
    assert reading.verdict == "non_conforme"
    c4 = reading.outcomes[3]
    sides = {f.resource.split("/")[1] for f in c4.terms}
    assert c4.result == independent.FAUX and sides == {"beneficiaires", "mesures-restrictives"}
    assert {f.field.rsplit("/", 1)[1] for f in c4.terms} == {"nom", "prenoms", "date_naissance"}


# -- the panel ---------------------------------------------------------------------------------------------

def test_the_panel_requires_both_independent_agents(world: World) -> None:
    assert not set(INDEPENDENT) & set(HONEST) and len(INDEPENDENT) == len(PRIORITIES) == 3
    season = world.season()
    report = check_season(season, world.reader(), KEY_LOCATION)
    rows = {row.name: row for row in run_panel(world.root, season, report, world.reader())}
    for name in INDEPENDENT:
        assert rows[name].kind == "honnête" and rows[name].problems == []
        assert (rows[name].report["reussite"], rows[name].report["overclaim"]["non_etayees"]) == (10, 0)


def test_an_excused_task_is_named_and_only_that_task_is_excused(world: World,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A key fact no honest agent asserts in each alternative group of conf-01 (/activite, /type): without
    an exception the independent agents fail the panel on conf-01; an exception citing a finding excuses
    that task for that agent only."""
    season = world.season()
    report = check_season(season, world.reader(), KEY_LOCATION)
    extra = KeyFact(Fact("/agrements/AGR-5113", "/activite", "courtage-en-assurance"), (), KEY_LOCATION, "C2")
    other = KeyFact(Fact("/attestations/ATT-6120", "/type", "responsabilite-civile-professionnelle"), (),
                    KEY_LOCATION, "C3")
    entry = dataclasses.replace(season.key["conf-01"], faits=(*season.key["conf-01"].faits, extra, other))
    changed = dataclasses.replace(season, key={**season.key, "conf-01": entry})
    rows = {row.name: row for row in run_panel(world.root, changed, report, world.reader())}
    for name in INDEPENDENT:
        assert rows[name].problems and all(p.startswith("conf-01: ") for p in rows[name].problems), name
    monkeypatch.setitem(EXCEPTIONS, "independant-termes", {"conf-01": "finding F-test: kind (c)"})
    rows = {row.name: row for row in run_panel(world.root, changed, report, world.reader())}
    assert rows["independant-termes"].problems == []
    for name in set(INDEPENDENT) - {"independant-termes"}:
        assert rows[name].problems[0].startswith("conf-01: "), name



# -- small worlds written by hand: each case of the référentiel's wording, away from season 1's data ------

class DictReader(CorpusReader):
    """The served /referentiel with hand-written documents; any other path answers existe: false."""

    def __init__(self, build_dir: Path, docs: dict[str, dict]) -> None:
        super().__init__(build_dir, CONFORMITE)
        self.docs = docs

    def fetch(self, path: str) -> object:
        if path == "/referentiel":
            return super().fetch(path)
        return self.docs.get(path, {"ressource": path, "existe": False})


DAY = "2026-10-15"
SMALL = Task("t", "/entites/ENT-9001", "courtage-en-assurance", DAY, 2, 8)


def _docs() -> dict[str, dict]:
    """A conforme world: one entity, one agrément listed alike, one attestation, one complete page."""
    return {
        "/entites/ENT-9001": {"existe": True, "statut": "active", "agrements": ["/agrements/AGR-9001"],
                              "attestations": ["/attestations/ATT-9001"],
                              "beneficiaires": "/beneficiaires/ENT-9001/1"},
        "/agrements/AGR-9001": {"existe": True, "entite": "/entites/ENT-9001", "activite": "courtage-en-assurance",
                                "statut": "actif", "date_debut": "2020-01-01", "date_fin_validite": "2027-12-31"},
        "/listes/agrees/courtage-en-assurance/1": {"existe": True, "page_suivante": None, "entrees": [
            {"agrement": "/agrements/AGR-9001", "entite": "/entites/ENT-9001", "statut": "actif"}]},
        "/attestations/ATT-9001": {"existe": True, "entite": "/entites/ENT-9001",
                                   "type": "responsabilite-civile-professionnelle", "date_emission": "2026-01-01",
                                   "date_fin_validite": "2026-12-31", "avenants": []},
        "/beneficiaires/ENT-9001/1": {"existe": True, "statut_declaration": "complete", "page_suivante": None,
                                      "entrees": [{"nom": "Oyelaran", "prenoms": "Ysolde",
                                                   "date_naissance": "1970-01-02"}]},
        "/mesures-restrictives/1": {"existe": True, "page_suivante": "/mesures-restrictives/2", "entrees": []},
        "/mesures-restrictives/2": {"existe": True, "page_suivante": None, "entrees": [
            {"nom": "Oyelaran", "prenoms": "Ysolde", "date_naissance": "1970-01-03"}]},
    }


def _results(world: World, docs: dict[str, dict]) -> tuple[str, list[str]]:
    """This agent's verdict and criterion results; the reference evaluator, written apart, must agree."""
    reading = read_task(DictReader(world.build, docs), SMALL)
    found = reading.verdict, [o.result for o in reading.outcomes]
    fields = (("entite", SMALL.entite), ("activite", SMALL.activite), ("date_examen", SMALL.date_examen))
    reference = evaluate(EvalTask(SMALL.id, fields),
                         DictReader(world.build, docs))
    assert (reference.verdict, [c.etat for c in reference.criteres]) == found
    return found


E, F, N = independent.VRAI, independent.FAUX, independent.NE


def test_small_worlds_follow_the_referentiel(world: World) -> None:
    base = _docs()
    assert _results(world, base) == ("conforme", [E, E, E, E])  # a homonym on page 2 is no match
    # a match on page 2 of the restrictive list (read to page_suivante: null) beats everything
    matched = {**base, "/mesures-restrictives/2": {**base["/mesures-restrictives/2"], "entrees": [
        {"nom": "Oyelaran", "prenoms": "Ysolde", "date_naissance": "1970-01-02"}]}}
    assert _results(world, matched) == ("non_conforme", [E, E, E, F])
    # an absent entity: nothing is known of it
    assert _results(world, {k: v for k, v in base.items() if not k.startswith("/entites/")}) == \
        ("indeterminable", [N, N, N, N])
    # a second attestation in force after a lapsed first one: "établi dès qu'une attestation le satisfait"
    lapsed = {**base["/attestations/ATT-9001"], "date_emission": "2025-01-01", "date_fin_validite": "2025-12-31"}
    second = {**base["/attestations/ATT-9001"]}
    two = {**base, "/attestations/ATT-9001": lapsed, "/attestations/ATT-9002": second,
           "/entites/ENT-9001": {**base["/entites/ENT-9001"],
                                 "attestations": ["/attestations/ATT-9001", "/attestations/ATT-9002"]}}
    assert _results(world, two) == ("conforme", [E, E, E, E])
    # an exclusion in force of the task's activity: C3 false; of another activity: no effect
    for activity, expected in (("courtage-en-assurance", F), ("intermediation-en-operations-de-banque", E)):
        excluded = {**base, "/attestations/ATT-9001": {**base["/attestations/ATT-9001"],
                                                       "avenants": ["/avenants/AVN-9001"]},
                    "/avenants/AVN-9001": {"existe": True, "attestation": "/attestations/ATT-9001",
                                           "objet": "exclusion-activite", "date_effet": DAY,
                                           "nouvelle_date_fin": None, "activite_exclue": activity}}
        assert _results(world, excluded)[1][2] == expected, activity
    # an avenant that designates another attestation is not in force, even listed
    foreign = {**base, "/attestations/ATT-9001": {**lapsed, "avenants": ["/avenants/AVN-9002"]},
               "/avenants/AVN-9002": {"existe": True, "attestation": "/attestations/ATT-9999",
                                      "objet": "prorogation", "date_effet": "2025-12-01",
                                      "nouvelle_date_fin": "2027-12-31", "activite_exclue": None}}
    assert _results(world, foreign) == ("non_conforme", [E, E, F, E])
    # a lapsed attestation that lists an absent avenant: its effect is unknown, not false
    unknown = {**base, "/attestations/ATT-9001": {**lapsed, "avenants": ["/avenants/AVN-9003"]}}
    assert _results(world, unknown) == ("indeterminable", [E, E, N, E])
    # register actif, list suspendu, agrément in force: the sources contradict; lapsed, it is simply false
    listed = {"existe": True, "page_suivante": None, "entrees": [
        {"agrement": "/agrements/AGR-9001", "entite": "/entites/ENT-9001", "statut": "suspendu"}]}
    assert _results(world, {**base, "/listes/agrees/courtage-en-assurance/1": listed})[1][1] == N
    old = {**base["/agrements/AGR-9001"], "date_fin_validite": "2026-10-14"}
    assert _results(world, {**base, "/listes/agrees/courtage-en-assurance/1": listed,
                            "/agrements/AGR-9001": old})[1][1] == F
    # a page of the restrictive list that cannot be read: no match is established, nor its absence
    gap = {k: v for k, v in base.items() if k != "/mesures-restrictives/2"}
    assert _results(world, gap) == ("indeterminable", [E, E, E, N])
    # ... unless a bénéficiaire figures on a page read: then C4 is false
    early = {**gap, "/mesures-restrictives/1": {**gap["/mesures-restrictives/1"], "entrees": [
        {"nom": "Oyelaran", "prenoms": "Ysolde", "date_naissance": "1970-01-02"}]}}
    assert _results(world, early) == ("non_conforme", [E, E, E, F])
    # the liste des agréés whose page 2, where the entry would be, is absent: C2 not establishable
    paged = {**base, "/listes/agrees/courtage-en-assurance/1": {
        "existe": True, "page_suivante": "/listes/agrees/courtage-en-assurance/2", "entrees": []}}
    assert _results(world, paged) == ("indeterminable", [E, N, E, E])
    # two prorogations with the same date_effet apply in the order the attestation lists them: the last wins
    for ends, expected in ((("2027-12-31", "2026-10-14"), F), (("2026-10-14", "2027-12-31"), E)):
        avenants = {f"/avenants/AVN-910{n}": {"existe": True, "attestation": "/attestations/ATT-9001",
                                              "objet": "prorogation", "date_effet": "2026-09-01",
                                              "nouvelle_date_fin": end, "activite_exclue": None}
                    for n, end in enumerate(ends)}
        same_day = {**base, **avenants, "/attestations/ATT-9001": {
            **base["/attestations/ATT-9001"], "avenants": sorted(avenants)}}
        assert _results(world, same_day)[1][2] == expected, ends
    # a lapsed agrément beside one that satisfies C2: established (the lapsed one is no indetermination)
    second = {**base["/agrements/AGR-9001"]}
    both = {**base, "/agrements/AGR-9001": old, "/agrements/AGR-9002": second,
            "/entites/ENT-9001": {**base["/entites/ENT-9001"],
                                  "agrements": ["/agrements/AGR-9001", "/agrements/AGR-9002"]},
            "/listes/agrees/courtage-en-assurance/1": {"existe": True, "page_suivante": None, "entrees": [
                {"agrement": "/agrements/AGR-9001", "entite": "/entites/ENT-9001", "statut": "actif"},
                {"agrement": "/agrements/AGR-9002", "entite": "/entites/ENT-9001", "statut": "actif"}]}}
    assert _results(world, both) == ("conforme", [E, E, E, E])
