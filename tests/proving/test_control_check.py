"""The control has no trap: a reader who compares catalogue prices, or tariffs, with the budget and
reads nothing else answers gen-01 right, and the season check names a control where one would not."""

from __future__ import annotations

import json
from dataclasses import replace

from trackfix import ROOT

from generator.proving.control_check import check_control
from generator.reading.logic import load_logic
from generator.reading.reader import CorpusReader
from generator.reading.season_model import load_season
from generator.track_code.generique.control import catalogue_prices_within_budget, tariffs_within_budget
from generator.tracks.loader import track_named

TRACK = track_named(ROOT, "generique")
READER = CorpusReader(ROOT / TRACK.trees.build, TRACK)
SEASON = load_season(ROOT / TRACK.trees.season_sources, TRACK)
CONTROL = next(s for s in SEASON.statements if SEASON.key[s.task.id].famille == "controle")


def _with(statement, **fields: str):  # type: ignore[no-untyped-def]
    task = replace(statement.task, fields=tuple((k, fields.get(k, v)) for k, v in statement.task.fields))
    return replace(statement, task=task)


def test_the_control_is_first_and_cheapest_within_the_budget_at_the_catalogue_and_at_the_tariff() -> None:
    """Read from the built bytes, apart from the code under test."""
    budget = float(CONTROL.task.budget_unitaire_ht)
    page = json.loads((ROOT / TRACK.trees.build / "generique/catalogues/sieges-de-bureau/1.json").read_bytes())
    entries = page["entrees"]
    first = entries[0]["produit"]
    tariffs = {e["produit"]: float(json.loads((ROOT / TRACK.trees.build / (e["produit"].lstrip("/") + ".json"))
                                              .read_bytes())["tarif"]["prix_unitaire_ht"]) for e in entries}
    catalogue = {e["produit"]: float(e["prix_catalogue_ht"]) for e in entries}
    assert first.endswith(SEASON.key[CONTROL.task.id].verdict)
    assert min(catalogue, key=catalogue.__getitem__) == first and catalogue[first] <= budget
    assert min(tariffs, key=tariffs.__getitem__) == first and tariffs[first] <= budget


def test_every_careless_reading_answers_the_control_and_none_is_asked_elsewhere() -> None:
    logic = load_logic(TRACK)
    assert check_control(READER, logic, CONTROL, SEASON.key[CONTROL.task.id]) == []
    other = next(s for s in SEASON.statements if s.task.id != CONTROL.task.id)
    assert check_control(READER, logic, other, SEASON.key[other.task.id]) == []


def test_a_control_whose_catalogue_price_exceeds_the_budget_is_named() -> None:
    """At a budget of 170.00 the catalogue (175.00) is above it and the tariff (164.00) within it."""
    cheaper = _with(CONTROL, budget_unitaire_ht="170.00")
    assert catalogue_prices_within_budget(cheaper.task, READER) == "aucune_option_valide"
    assert tariffs_within_budget(cheaper.task, READER) == "PRD-31024"
    problems = check_control(READER, load_logic(TRACK), cheaper, SEASON.key[CONTROL.task.id])
    assert [p.message for p in problems] == [
        "control task: the careless reading prix-catalogue-dans-le-budget answers aucune_option_valide instead of "
        "PRD-31024; a control has no trap, so a reader who stops early must answer it right too"]


def test_the_conformite_control_survives_its_careless_readings_and_its_trap_tasks_do_not() -> None:
    """The entity's sheet alone, or its first documents at face value, answer conf-05 right; on a P4 task
    whose first attestation has ended (conf-08) the second reading is wrong, so the check can fail."""
    track = track_named(ROOT, "conformite")
    reader = CorpusReader(ROOT / track.trees.build, track)
    season = load_season(ROOT / track.trees.season_sources, track)
    logic = load_logic(track)
    control = next(s for s in season.statements if season.key[s.task.id].famille == "controle")
    assert check_control(reader, logic, control, season.key[control.task.id]) == []
    conf_08 = next(s for s in season.statements if s.task.id == "conf-08")
    as_control = replace(season.key["conf-08"], famille="controle")
    assert [p.message.split(";")[0] for p in check_control(reader, logic, conf_08, as_control)] == [
        "control task: the careless reading premiers-documents-a-premiere-vue answers non_conforme instead of "
        "conforme"]
