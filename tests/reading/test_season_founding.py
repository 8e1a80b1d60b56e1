"""The published rule of the founding facts, checked against the built corpus read by hand.

The expected facts are written here from the rule's prose (docs/season.md, "Founding facts: the rule") and the
built JSON, never copied from what ``generator.reading.founding`` returns.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from season_fixtures import World, make_world

from generator.reading.founding import equivalent_forms, fonde_par, founding_facts
from generator.reading.reader import Fact
from generator.reading.season_model import Season
from generator.track_code.conformite import logic as LOGIC
from generator.track_code.conformite.evaluator import evaluate


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("season-founding"))


@pytest.fixture(scope="module")
def season(world: World) -> Season:
    return world.season()


def derived(world: World, season: Season, task_id: str) -> list[tuple[str, Fact]]:
    task = next(s.task for s in season.statements if s.task.id == task_id)
    reader = world.reader()
    return [(f.critere, f.fact) for f in founding_facts(reader, LOGIC, evaluate(task, reader))]


def test_lapsed_attestation_and_an_avenant_not_yet_in_force(world: World, season: Season) -> None:
    """conf-09 (C3 false): the link, the retained end date, and the avenant not in force (link, date_effet)."""
    entity = "/entites/ENT-1530"
    (attestation,) = world.doc(entity)["attestations"]
    (avenant,) = world.doc(attestation)["avenants"]
    assert derived(world, season, "conf-09") == [
        ("C3", Fact(entity, "/attestations/0", attestation)),
        ("C3", Fact(attestation, "/date_fin_validite", world.doc(attestation)["date_fin_validite"])),
        ("C3", Fact(attestation, "/avenants/0", avenant)),
        ("C3", Fact(avenant, "/date_effet", world.doc(avenant)["date_effet"])),
    ]


def test_conforme_has_one_comparison_per_criterion(world: World, season: Season) -> None:
    """The control: C1 statut, the agrément's and the attestation's links and end dates, C4's declaration."""
    entity = "/entites/ENT-1879"
    doc = world.doc(entity)
    (agrement,), (attestation,) = doc["agrements"], doc["attestations"]
    assert derived(world, season, "conf-05") == [
        ("C1", Fact(entity, "/statut", "active")),
        ("C2", Fact(entity, "/agrements/0", agrement)),
        ("C2", Fact(agrement, "/date_fin_validite", world.doc(agrement)["date_fin_validite"])),
        ("C3", Fact(entity, "/attestations/0", attestation)),
        ("C3", Fact(attestation, "/date_fin_validite", world.doc(attestation)["date_fin_validite"])),
        ("C4", Fact(doc["beneficiaires"], "/statut_declaration", "complete")),
    ]


def test_precedence_keeps_only_the_false_criterion(world: World, season: Season) -> None:
    """conf-10: the absent agrément (C2 not establishable) founds nothing; the lapsed attestation does."""
    facts = derived(world, season, "conf-10")
    assert {c for c, _ in facts} == {"C3"}
    assert not any(f.ressource.startswith("/agrements/") for _, f in facts)


def test_homonym_gives_both_dates_of_birth(world: World, season: Season) -> None:
    facts = [f for c, f in derived(world, season, "conf-07") if c == "C4"]
    page = "/beneficiaires/ENT-2264/1"
    assert facts[0] == Fact(page, "/statut_declaration", "incomplete")
    dates = {f.valeur for f in facts[1:]}
    assert len(facts) == 3 and {f.champ.rsplit("/", 1)[1] for f in facts[1:]} == {"date_naissance"}
    assert len(dates) == 2  # the two terms differ: a homonym, no match


def test_forms_of_a_link_both_directions_and_the_whole_array(world: World) -> None:
    entity = "/entites/ENT-3917"
    first, second = world.doc(entity)["attestations"]
    assert equivalent_forms(world.reader(), LOGIC, Fact(entity, "/attestations/1", second)) == (
        Fact(second, "/entite", entity), Fact(entity, "/attestations", [first, second]))


def test_a_link_to_an_absent_resource_has_only_the_array_form(world: World) -> None:
    """An absent avenant serves no /attestation: the reverse direction cannot be asserted."""
    attestation = "/attestations/ATT-6806"
    (avenant,) = world.doc(attestation)["avenants"]
    assert world.doc(avenant)["existe"] is False
    assert equivalent_forms(world.reader(), LOGIC, Fact(attestation, "/avenants/0", avenant)) == (
        Fact(attestation, "/avenants", [avenant]),)


def test_same_rank_sources_stating_the_same_statut(world: World) -> None:
    """The control's agrément is 'actif' in the registre and in the liste des agréés: either may be asserted;
    conf-04's registre and list disagree, so neither stands for the other."""
    agrement = "/agrements/AGR-5702"
    page = "/listes/agrees/conseil-en-investissements-financiers/1"
    k = next(i for i, e in enumerate(world.doc(page)["entrees"]) if e["agrement"] == agrement)
    assert equivalent_forms(world.reader(), LOGIC, Fact(agrement, "/statut", "actif")) == (
        Fact(page, f"/entrees/{k}/statut", "actif"),)
    assert equivalent_forms(world.reader(), LOGIC, Fact("/agrements/AGR-5466", "/statut", "actif")) == ()


def _deciding(verdict: str, *criteria: tuple[str, list[Fact]]) -> SimpleNamespace:
    """An evaluation reduced to what the rule reads: the verdict and each deciding criterion's facts."""
    return SimpleNamespace(verdict=verdict, deciding=[SimpleNamespace(id=c, faits=f) for c, f in criteria],
                           deciding_state=None if verdict == "conforme" else "faux")


def test_a_fact_two_false_criteria_share_founds_both_groups(world: World) -> None:
    """Under un_critere each criterion's group must found the verdict alone: a fact C2 and C3 both read
    (here the entity's statut) is listed under each, not dropped from the second."""
    entity = "/entites/ENT-1530"
    shared = Fact(entity, "/statut", world.doc(entity)["statut"])
    (attestation,) = world.doc(entity)["attestations"]
    own = Fact(entity, "/attestations/0", attestation)
    evaluation = _deciding("non_conforme", ("C2", [shared]), ("C3", [own, shared, shared]))
    facts = founding_facts(world.reader(), LOGIC, evaluation)  # type: ignore[arg-type]
    assert [(f.critere, f.fact) for f in facts] == [("C2", shared), ("C3", own), ("C3", shared)]
    assert fonde_par(evaluation, facts) == "un_critere"  # type: ignore[arg-type]


def test_facts_are_told_apart_by_strict_json_equality(world: World) -> None:
    """"1", 1 and true are three facts; 1 and 1.0 are one JSON number (the scorer's equality)."""
    entity = "/entites/ENT-1530"
    values = ["1", 1, True, 1.0, None, "null"]
    evaluation = _deciding("non_conforme", ("C1", [Fact(entity, "/x", v) for v in values]))
    kept = [f.fact.valeur for f in founding_facts(world.reader(), LOGIC, evaluation)]  # type: ignore[arg-type]
    assert kept == ["1", 1, True, None, "null"] and type(kept[1]) is int


@pytest.mark.parametrize("index", ["٣", "０", "01", "1 ", "+1", "1234567890"])
def test_a_link_index_is_the_readers_index(world: World, index: str) -> None:
    """A token isdigit() accepts but no JSON array serves (Unicode digits, leading zero) is no link."""
    entity = "/entites/ENT-3917"
    _, second = world.doc(entity)["attestations"]
    assert equivalent_forms(world.reader(), LOGIC, Fact(entity, f"/attestations/{index}", second)) == ()
