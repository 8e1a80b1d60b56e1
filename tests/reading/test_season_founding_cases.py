"""Founding facts of the cases season 1 does not exercise: each must be admissible under the barème.

A key fact that no assertion may state (outside the graph, on a field that is not probant, on a
common-list entry of another entity) makes its task impossible to found; a deciding criterion that gives
no fact lets a guessed verdict count as founded. Each case here is the real season plus the smallest edit
that produces it: the test derives the founding facts by the published rule (``principes.justification``),
states which they must be, checks every form with ``check_fact`` (what ``corpus check-season`` applies to
the key), and checks that the independent honest agents, written from ``/referentiel``, found them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from season_fixtures import KEY_LOCATION, World, make_world, rebuilt
from trackfix import CONFORMITE

from generator.proving.checks import TaskReport, check_fact
from generator.reading.founding import founding_facts
from generator.reading.graph import task_graph
from generator.reading.logic import load_logic
from generator.reading.reader import CorpusReader
from generator.reading.season_model import Season, Statement
from generator.track_code.conformite import independent
from generator.track_code.conformite.evaluator import evaluate
from generator.tracks.model import file_for

CONTROL, ENTITY = "conf-05", "entites/ENT-1879.yaml"
AGR_5702 = ("agrements:\n  - id: AGR-5702\n    entite: /entites/ENT-1879\n    denomination: Anselmet Finance "
            "Patrimoniale\n    activite: conseil-en-investissements-financiers\n    statut: actif\n"
            "    date_debut: 2018-05-01\n    date_fin_validite: 2027-09-30\n"
            "    autorite: Autorité fictive de contrôle des intermédiaires\n")
AGR_5702_ENTRY = ("      - agrement: /agrements/AGR-5702\n        entite: /entites/ENT-1879\n"
                  "        denomination: Anselmet Finance Patrimoniale\n        statut: actif\n")
ATT_6745 = ("attestations:\n  - id: ATT-6745\n    entite: /entites/ENT-1879\n"
            "    type: responsabilite-civile-professionnelle\n    emetteur: Assurances fictives du Val-Quérandel\n"
            '    numero_police: "AVQ-RCP-2026-413655"\n'
            '    activites_garanties: "Conseil en investissements financiers"\n'
            '    montants_garantis: "2 300 000 € par sinistre et 3 400 000 € par année d\'assurance"\n'
            "    date_emission: 2026-04-01\n    date_fin_validite: 2027-03-31\n    avenants: []\n")
BENEFICIAIRES = ("beneficiaires:\n  statut_declaration: complete\n  pages:\n    - page: 1\n      entrees:\n"
                 "        - nom: Sarrazac\n          prenoms: Hélène Maëlle\n"
                 "          date_naissance: 1985-08-22\n"
                 "          nationalite: française\n        - nom: Guillemaud\n          prenoms: Inès Ondine\n"
                 "          date_naissance: 1961-07-07\n          nationalite: française\n")
ABSENT_PAGE = ("absents:\n", "absents:\n  - chemin: /beneficiaires/ENT-1879/1\n"
               "    motif: La fiche cite une page de bénéficiaires absente.\n")
CIF = "listes/agrees/conseil-en-investissements-financiers.yaml"

# case id -> (task, corpus edits, verdict, the deciding criterion's state, its founding facts)
CASES = {
    # C2, 5°: the list's first entry for the agrément is of another entity: §5.2 admits no assertion on it,
    # so the facts are the link and the registre's statut, as when the list holds no entry.
    "c2-list-entry-of-another-entity": ("conf-04", [
        ("listes/agrees/courtage-en-assurance.yaml",
         "      - agrement: /agrements/AGR-5466\n        entite: /entites/ENT-4620\n",
         "      - agrement: /agrements/AGR-5466\n        entite: /entites/ENT-1204\n")],
        "indeterminable", ("C2", "non_etablissable"),
        [("/entites/ENT-4620", "/agrements/0", "/agrements/AGR-5466"),
         ("/agrements/AGR-5466", "/statut", "actif")]),
    # C2 and C3 false with no document retained: each cited one's link and the field that excludes it,
    # or, none cited, the whole empty array as served.
    "c2-agrement-of-another-activity": (CONTROL, [
        (ENTITY, "activite: conseil-en-investissements-financiers", "activite: courtage-en-assurance")],
        "non_conforme", ("C2", "faux"),
        [("/entites/ENT-1879", "/agrements/0", "/agrements/AGR-5702"),
         ("/agrements/AGR-5702", "/activite", "courtage-en-assurance")]),
    "c2-no-agrement-cited": (CONTROL, [
        (ENTITY, "agrements: [/agrements/AGR-5702]", "agrements: []"), (ENTITY, AGR_5702, ""),
        (CIF, AGR_5702_ENTRY, "")],
        "non_conforme", ("C2", "faux"), [("/entites/ENT-1879", "/agrements", [])]),
    "c3-attestation-of-another-type": (CONTROL, [
        (ENTITY, "type: responsabilite-civile-professionnelle", "type: multirisque-professionnelle")],
        "non_conforme", ("C3", "faux"),
        [("/entites/ENT-1879", "/attestations/0", "/attestations/ATT-6745"),
         ("/attestations/ATT-6745", "/type", "multirisque-professionnelle")]),
    "c3-no-attestation-cited": (CONTROL, [
        (ENTITY, "attestations: [/attestations/ATT-6745]", "attestations: []"), (ENTITY, ATT_6745, "")],
        "non_conforme", ("C3", "faux"), [("/entites/ENT-1879", "/attestations", [])]),
    # C4, an absent bénéficiaires page: its /existe is not probant; the link that cites it, as served.
    "c4-absent-beneficiaires-page": (CONTROL, [(ENTITY, BENEFICIAIRES, ""), ("absents.yaml", *ABSENT_PAGE)],
                                     "indeterminable", ("C4", "non_etablissable"),
                                     [("/entites/ENT-1879", "/beneficiaires", "/beneficiaires/ENT-1879/1")]),
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("founding-cases"))


@pytest.fixture(scope="module")
def season(world: World) -> Season:
    return world.season()


def _statement(season: Season, task_id: str) -> Statement:
    return next(s for s in season.statements if s.task.id == task_id)


def _assert_founded_and_admissible(reader: CorpusReader, st: Statement, verdict: str, deciding: tuple[str, str],
                                   expected: list[tuple[str, str, object]]) -> None:
    """The reference decides as stated, on exactly these facts, every form of which the key may hold; and
    each independent agent gives the verdict, asserts only admissible served facts, and meets them all."""
    ev = evaluate(st.task, reader)
    assert (ev.verdict, [(c.id, c.etat) for c in ev.deciding]) == (verdict, [deciding])
    facts = founding_facts(reader, load_logic(reader.track), ev)
    assert [(f.critere, f.fact.ressource, f.fact.champ, f.fact.valeur) for f in facts] == \
        [(deciding[0], *fact) for fact in expected]
    graph, report = task_graph(reader, st.task), TaskReport(st, None, ev, {})
    for fact in facts:
        for form in fact.forms:
            assert check_fact(reader, graph, report, form, KEY_LOCATION, "founding fact") == [], form
    task = independent.statement_task(st)
    for priority in independent.PRIORITIES:
        said, claims = independent.claims(reader, task, priority)
        assert said == verdict, priority
        for claim in claims:
            assert check_fact(reader, graph, report, claim, KEY_LOCATION, "claim") == [], (priority, claim)
        held = {(c.ressource, c.champ, json.dumps(c.valeur)) for c in claims}
        for fact in facts:
            assert any((f.ressource, f.champ, json.dumps(f.valeur)) in held for f in fact.forms), (priority, fact)


@pytest.mark.parametrize("case", list(CASES))
def test_the_founding_facts_of_a_case_season_1_lacks_are_admissible(world: World, season: Season,
                                                                    tmp_path: Path, case: str) -> None:
    task_id, edits, verdict, deciding, expected = CASES[case]
    reader = CorpusReader(rebuilt(world, tmp_path, edits), CONFORMITE)
    _assert_founded_and_admissible(reader, _statement(season, task_id), verdict, deciding, expected)


def test_an_agrement_of_another_entity_gives_its_entite(world: World, season: Season, tmp_path: Path) -> None:
    """The compiler refuses a fiche citing another entity's agrément (each record sits in its entity's
    file, listed by it alone), so the served bytes are edited after the build: C2's rule still reads
    them, the agrément's /entite excludes it, and that field (not /activite) is the fact."""
    build = rebuilt(world, tmp_path, [])
    served = build / file_for("/agrements/AGR-5702")
    body = json.loads(served.read_bytes())
    body["entite"] = "/entites/ENT-1204"
    served.write_text(json.dumps(body, ensure_ascii=False), "utf-8")
    _assert_founded_and_admissible(CorpusReader(build, CONFORMITE), _statement(season, CONTROL), "non_conforme",
                                   ("C2", "faux"), [("/entites/ENT-1879", "/agrements/0", "/agrements/AGR-5702"),
                                                    ("/agrements/AGR-5702", "/entite", "/entites/ENT-1204")])


def test_the_served_rule_words_the_three_cases(world: World) -> None:
    """/referentiel says what the evaluator derives: no fact on an entry of another entity, the excluding
    field or the empty array when no document is retained, the citing link of an absent page."""
    text = json.loads((world.build / "referentiel.json").read_text("utf-8"))["principes"]["justification"]
    for words in ("une entrée d'une autre entité ne donne aucun fait",
                  "chaque document que la fiche cite donne son lien et le seul champ qui l'écarte",
                  "son champ agrements ou attestations, tableau vide",
                  "le seul fait de C4 est le lien qui la cite"):
        assert words in text, words
    for gone in ("l'existe de cette page", "le critère faux ne donne aucun fait", "son champ qui diffère"):
        assert gone not in text, gone
