"""Every validation rule has a failing fixture, and its complete message is asserted.

Each case is the valid fixture (``tests/fixtures/valid``) plus the smallest edit that breaks one rule.
The test compares the *whole* list printed by ``corpus check`` (file:line:column: field: message), so a
case proves both that the rule fires where it should and that nothing else is reported. A few rules cannot
fire without a consequence elsewhere (a bad id also breaks the reference to it); those cases list the
consequence too, which documents what an author will see.

The seeded fixture ``tests/fixtures/errors`` carries one error of every kind at once: the CLI must report
all of them in a single run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from corpusfix import FIXTURES, Edit, apply, copy_fixture, problem_lines, remove, rename, replace, write
from trackfix import CONFORMITE, copy_tracks

from generator.base.errors import Severity
from generator.compiler.pipeline import check

E1 = "entites/ENT-0001.yaml"
E2 = "entites/ENT-0002.yaml"
E3 = "entites/ENT-0003.yaml"
LC = "listes/agrees/courtage-en-assurance.yaml"
MR = "listes/mesures-restrictives.yaml"
AB = "absents.yaml"
SY = "systeme.yaml"
RF = "referentiel.yaml"
CO = "corpus.yaml"

AGR2_END = "    date_fin_validite: 2029-06-14\n"  # last line of ENT-0002's only agrément
ATT1_AVENANTS = "    avenants: [/avenants/AVN-0001, /avenants/AVN-0002]\n"
AVN2_END = "    activite_exclue: conseil-en-investissements-financiers\n"
NEW_ENTITY = """entite:
  id: ENT-0003
  denomination: Nouvelle
  forme_juridique: SA
  siege: Ici
  statut: active
  agrements: []
  attestations: []
  beneficiaires: null
"""
NEW_AGREMENT = """  - id: {id}
    entite: /entites/{entity}
    activite: courtage-en-assurance
    statut: actif
    date_debut: 2020-01-01
    date_fin_validite: 2030-01-01
"""
NOT_DECLARED = ("does not exist and is not declared absent (add it to corpus_src/conformite/absents.yaml if the "
                "reference "
                "is deliberate)")
NOT_LISTED_AVN = "(mark the record 'incoherence_voulue: true' if this is intended)"
UNKNOWN_ACT = "(declare it under activites in corpus_src/conformite/corpus.yaml)"
# The sections an entity file may hold: read from the track, so that a new collection written in entity files
# changes neither this test nor the seeded fixture (tests/fixtures/errors/expected.txt writes ENTITY_SECTIONS).
SECTIONS = ", ".join(c.source.section or "" for c in CONFORMITE.collections
                     if c.source.folder == CONFORMITE.collection("entites").source.folder and c.source.section)
ENTITY_SECTIONS = "<the sections of an entity file>"
TAG_HINT = "write the value without a tag (a plain string, or exactly true, false or null)"
CIF = "conseil-en-investissements-financiers"
GAP = "the page_suivante chain must run 1, 2, 3... without a gap"


@dataclass(frozen=True)
class Case:
    id: str
    edits: tuple[Edit, ...]
    expected: tuple[str, ...]  # every line `corpus check` prints for the case, in printed order


def case(id_: str, edits: list[Edit], *expected: str) -> Case:
    return Case(id_, tuple(edits), expected)


def unknown(where: str, kind: str) -> str:
    return f"{where}: unknown field (not in the schema of {kind}; check its spelling)"


CASES = [
    # --- YAML: the loader refuses what would silently change a value or lose a key ----------------------
    case("yaml-syntax",
         [write(E3, "entite:\n  id: ENT-0003\n  agrements: [/agrements/AGR-0003\n  statut: active\n")],
         "corpus_src/conformite/entites/ENT-0003.yaml:4:9: YAML syntax: while parsing a flow sequence did not "
         "find expected "
         "',' or ']'"),
    case("yaml-syntax-indentation", [write(E3, "entite:\n  id: ENT-0003\n   statut: active\n")],
         "corpus_src/conformite/entites/ENT-0003.yaml:3:10: YAML syntax: mapping values are not allowed in this "
         "context"),
    case("yaml-two-documents", [write(E3, NEW_ENTITY + "---\nentite: {}\n")],
         "corpus_src/conformite/entites/ENT-0003.yaml:10:1: YAML syntax: expected a single document in the "
         "stream but found "
         "another document"),
    case("yaml-duplicate-key", [write(E3, NEW_ENTITY + "  statut: radiee\n")],
         "corpus_src/conformite/entites/ENT-0003.yaml:10:3: entite.statut: duplicate key (first written at line "
         "6)"),
    case("yaml-explicit-tag-int",
         [write(E3, NEW_ENTITY.replace("forme_juridique: SA", "forme_juridique: !!int 12"))],
         f"corpus_src/conformite/entites/ENT-0003.yaml:4:20: entite.forme_juridique: explicit tag '!!int' is "
         f"not allowed: "
         f"{TAG_HINT}"),
    case("yaml-explicit-tag-str", [write(E3, NEW_ENTITY.replace("statut: active", "statut: !!str active"))],
         f"corpus_src/conformite/entites/ENT-0003.yaml:6:11: entite.statut: explicit tag '!!str' is not "
         f"allowed: {TAG_HINT}"),
    case("yaml-explicit-tag-in-list",
         [write(E3, NEW_ENTITY.replace("agrements: []", "agrements: [/agrements/AGR-0002, !!binary eA==]"))],
         f"corpus_src/conformite/entites/ENT-0003.yaml:7:36: entite.agrements[1]: explicit tag '!!binary' is "
         f"not allowed: "
         f"{TAG_HINT}"),
    case("yaml-merge-key", [write(E3, "defaut: {statut: active}\nentite:\n  <<: d\n  id: ENT-0003\n")],
         "corpus_src/conformite/entites/ENT-0003.yaml:3:3: entite.<<: merge keys ('<<') are not allowed: write "
         "each field "
         "out"),
    case("yaml-non-string-key", [write(E3, "entite:\n  ? [id]\n  : ENT-0003\n")],
         "corpus_src/conformite/entites/ENT-0003.yaml:2:5: entite: a mapping key must be a plain string"),
    # --- file layout ------------------------------------------------------------------------------------
    case("entity-file-not-mapping", [write(E3, "- ENT-0003\n")],
         f"corpus_src/conformite/entites/ENT-0003.yaml:1:1: an entity file holds a mapping with the keys "
         f"{SECTIONS}"),
    case("entity-file-unknown-section", [replace(E2, AGR2_END, AGR2_END + "\nremarques: à revoir\n")],
         f"corpus_src/conformite/entites/ENT-0002.yaml:19:1: remarques: unknown section; expected one of "
         f"{SECTIONS}"),
    case("entity-file-without-entite", [write(E3, "agrements: []\n")],
         "corpus_src/conformite/entites/ENT-0003.yaml:1:1: entite: an entity file needs an 'entite' mapping"),
    case("entity-file-section-not-list", [replace(E2, AGR2_END, AGR2_END + "\nattestations: aucune\n")],
         "corpus_src/conformite/entites/ENT-0002.yaml:19:1: attestations: must be a list"),
    case("entity-file-item-not-mapping",
         [replace(E2, AGR2_END, AGR2_END + "\navenants:\n  - /avenants/AVN-0001\n")],
         "corpus_src/conformite/entites/ENT-0002.yaml:20:5: avenants[0]: must be a mapping"),
    case("entity-file-beneficiaires-not-mapping",
         [replace(E2, AGR2_END, AGR2_END + "\nbeneficiaires: [Dupont]\n")],
         "corpus_src/conformite/entites/ENT-0002.yaml:19:1: beneficiaires: must be a mapping "
         "(statut_declaration, pages)"),
    case("entity-file-named-after-id", [rename(E2, "entites/ENT-0009.yaml")],
         "corpus_src/conformite/entites/ENT-0009.yaml:2:3: entite.id: the file must be named ENT-0002.yaml, "
         "after its "
         "entity id"),
    case("single-file-not-mapping", [write(RF, "- titre\n")],
         "corpus_src/conformite/referentiel.yaml:1:1: the file must hold a mapping"),
    case("required-file-referentiel", [remove(RF)], "corpus_src/conformite/referentiel.yaml: required file is "
                                                    "missing"),
    case("required-file-systeme", [remove(SY)], "corpus_src/conformite/systeme.yaml: required file is missing"),
    case("required-file-corpus", [remove(CO)], "corpus_src/conformite/corpus.yaml: required file is missing"),
    case("required-file-mesures", [remove(MR)],
         "corpus_src/conformite/listes/mesures-restrictives.yaml: required file is missing"),
    case("absents-file-is-optional",
         [remove(AB), replace(E1, "agrements: [/agrements/AGR-0001, /agrements/AGR-0999]",
                              "agrements: [/agrements/AGR-0001]")]),
    # --- JSON Schema, per source kind: missing field, unknown field, wrong type, bad value ----------------
    case("entites-missing", [replace(E2, "  forme_juridique: SARL\n", "")],
         "corpus_src/conformite/entites/ENT-0002.yaml:2:3: entite: missing required field: 'forme_juridique'"),
    case("entites-unknown",
         [replace(E2, "  statut: en-liquidation\n", "  statut: en-liquidation\n  capital: 1000 EUR\n")],
         "corpus_src/conformite/entites/ENT-0002.yaml:7:3: " + unknown("entite.capital", "entites")),
    case("entites-type", [replace(E2, "attestations: []", "attestations: aucune")],
         "corpus_src/conformite/entites/ENT-0002.yaml:8:3: entite.attestations: 'aucune' is not of type 'array'"),
    case("entites-enum", [replace(E2, "statut: en-liquidation", "statut: liquidee")],
         "corpus_src/conformite/entites/ENT-0002.yaml:6:3: entite.statut: 'liquidee' is not one of ['active', "
         "'en-liquidation', 'en-redressement', 'radiee']"),
    case("entites-one-of", [replace(E2, "beneficiaires: null", "beneficiaires: aucun")],
         "corpus_src/conformite/entites/ENT-0002.yaml:9:3: entite.beneficiaires: 'aucun' is not a canonical "
         "path of "
         "/beneficiaires/: write one like /beneficiaires/ENT-0001/1",
         "corpus_src/conformite/entites/ENT-0002.yaml:9:3: entite.beneficiaires: 'aucun' is not valid here (see "
         "schema)"),
    case("agrements-missing", [replace(E2, "    date_debut: 2019-06-15\n", "")],
         "corpus_src/conformite/entites/ENT-0002.yaml:12:5: agrements[0]: missing required field: 'date_debut'"),
    case("agrements-unknown", [replace(E2, AGR2_END, AGR2_END + "    numero: 12\n")],
         "corpus_src/conformite/entites/ENT-0002.yaml:18:5: " + unknown("agrements[0].numero", "agrements")),
    case("agrements-type",
         [replace(E2, "    statut: suspendu\n", "    statut: suspendu\n    denomination: {nom: C}\n")],
         "corpus_src/conformite/entites/ENT-0002.yaml:16:19: agrements[0].denomination: {'nom': 'C'} is not of "
         "type "
         "'string'"),
    case("agrements-enum", [replace(E2, "statut: suspendu", "statut: suspended")],
         "corpus_src/conformite/entites/ENT-0002.yaml:15:5: agrements[0].statut: 'suspended' is not one of "
         "['actif', "
         "'suspendu', 'retire']"),
    case("attestations-missing", [replace(E1, "    type: responsabilite-civile-professionnelle\n", "")],
         "corpus_src/conformite/entites/ENT-0001.yaml:21:5: attestations[0]: missing required field: 'type'"),
    case("attestations-unknown", [replace(E1, ATT1_AVENANTS, ATT1_AVENANTS + "    montant: 1000000\n")],
         "corpus_src/conformite/entites/ENT-0001.yaml:27:5: " + unknown("attestations[0].montant",
             "attestations")),
    case("attestations-type",
         [replace(E1, "    date_emission: 2025-04-01\n", "    date_emission: [2025-04-01]\n")],
         "corpus_src/conformite/entites/ENT-0001.yaml:24:20: attestations[0].date_emission: ['2025-04-01'] is "
         "not of type "
         "'string'"),
    case("attestations-pattern", [replace(E1, "type: responsabilite-civile-professionnelle", "type: RC Pro")],
         "corpus_src/conformite/entites/ENT-0001.yaml:23:5: attestations[0].type: 'RC Pro' is not a code: write "
         "lowercase "
         'letters without accents, words joined by single hyphens, as "responsabilite-civile-professionnelle"'),
    case("avenants-missing", [replace(E1, "    activite_exclue: null\n", "")],
         "corpus_src/conformite/entites/ENT-0001.yaml:29:5: avenants[0]: missing required field: "
         "'activite_exclue'"),
    case("avenants-unknown",
         [replace(E1, "    activite_exclue: null\n", "    activite_exclue: null\n    montant: 12\n")],
         "corpus_src/conformite/entites/ENT-0001.yaml:35:5: " + unknown("avenants[0].montant", "avenants")),
    case("avenants-type", [replace(E1, "nouvelle_date_fin: 2027-03-31", "nouvelle_date_fin: [2027-03-31]")],
         "corpus_src/conformite/entites/ENT-0001.yaml:33:24: avenants[0].nouvelle_date_fin: ['2027-03-31'] is "
         "not valid "
         "under any of the given schemas"),
    case("avenants-enum", [replace(E1, "objet: prorogation", "objet: prolongation")],
         "corpus_src/conformite/entites/ENT-0001.yaml:31:5: avenants[0].objet: 'prolongation' is not one of "
         "['prorogation', "
         "'remise-en-vigueur', 'exclusion-activite', 'rectification']"),
    case("beneficiaires-missing", [replace(E1, "  statut_declaration: complete\n", "")],
         "corpus_src/conformite/entites/ENT-0001.yaml:43:3: beneficiaires: missing required field: "
         "'statut_declaration'"),
    case("beneficiaires-unknown",
         [replace(E1, "          prenoms: Noé\n", "          prenoms: Noé\n          fonction: gérant\n")],
         "corpus_src/conformite/entites/ENT-0001.yaml:54:11: "
         + unknown("beneficiaires.pages[1].entrees[0].fonction", "beneficiaires")),
    case("beneficiaires-type",
         [replace(E1, "    - page: 2\n      entrees:\n        - nom: Tilleul\n          prenoms: Noé\n"
                      "          date_naissance: 1980-12-31\n",
                  "    - page: 2\n      entrees: Tilleul\n")],
         "corpus_src/conformite/entites/ENT-0001.yaml:51:7: beneficiaires.pages[1].entrees: 'Tilleul' is not of "
         "type "
         "'array'"),
    case("beneficiaires-enum", [replace(E1, "statut_declaration: complete", "statut_declaration: partielle")],
         "corpus_src/conformite/entites/ENT-0001.yaml:43:3: beneficiaires.statut_declaration: 'partielle' is "
         "not one of "
         "['complete', 'incomplete', 'en-cours-de-verification']"),
    case("listes-agrees-missing", [replace(LC, "        denomination: Société Érable-Test\n", "")],
         "corpus_src/conformite/listes/agrees/courtage-en-assurance.yaml:7:9: pages[1].entrees[0]: missing "
         "required field: "
         "'denomination'"),
    case("listes-agrees-unknown", [replace(LC, "  - page: 1\n", "  - page: 1\n    titre: Liste\n")],
         "corpus_src/conformite/listes/agrees/courtage-en-assurance.yaml:4:5: " + unknown("pages[0].titre",
             "listes-agrees")),
    case("listes-agrees-type", [replace(LC, "    entrees: []\n", "    entrees: {}\n")],
         "corpus_src/conformite/listes/agrees/courtage-en-assurance.yaml:4:14: pages[0].entrees: {} is not of "
         "type 'array'"),
    case("listes-agrees-enum", [replace(LC, "statut: actif", "statut: valide")],
         "corpus_src/conformite/listes/agrees/courtage-en-assurance.yaml:10:9: pages[1].entrees[0].statut: "
         "'valide' is not "
         "one of ['actif', 'suspendu', 'retire']"),
    case("mesures-missing", [replace(MR, "        motif: Homonyme fictif, date de naissance différente.\n", "")],
         "corpus_src/conformite/listes/mesures-restrictives.yaml:4:9: pages[0].entrees[0]: missing required "
         "field: 'motif'"),
    case("mesures-unknown", [replace(MR, "        nom: Érable\n", "        nom: Érable\n        alias: Zaza\n")],
         "corpus_src/conformite/listes/mesures-restrictives.yaml:6:9: "
         + unknown("pages[0].entrees[0].alias", "mesures-restrictives")),
    case("mesures-type", [replace(MR, "prenoms: Zoé", "prenoms: [Zoé]")],
         "corpus_src/conformite/listes/mesures-restrictives.yaml:6:18: pages[0].entrees[0].prenoms: ['Zoé'] is "
         "not of type "
         "'string'"),
    case("mesures-pattern", [replace(MR, "reference: MR-0001", "reference: MR-1")],
         "corpus_src/conformite/listes/mesures-restrictives.yaml:4:9: pages[0].entrees[0].reference: 'MR-1' is "
         "not a measure "
         'reference: write MR- followed by four to six digits, as "MR-0001"'),
    case("corpus-missing", [replace(CO, "titre: Corpus de test minimal — toutes les collections\n", "")],
         "corpus_src/conformite/corpus.yaml:2:1: missing required field: 'titre'"),
    case("corpus-unknown", [replace(CO, "corpus: fixture-valide\n", "corpus: fixture-valide\nsaison: 1\n")],
         "corpus_src/conformite/corpus.yaml:3:1: " + unknown("saison", "corpus")),
    case("corpus-type",
         [replace(CO, "titre: Corpus de test minimal — toutes les collections\n", "titre: [Corpus]\n")],
         "corpus_src/conformite/corpus.yaml:3:8: titre: ['Corpus'] is not of type 'string'"),
    case("corpus-pattern", [replace(CO, "corpus: fixture-valide", "corpus: Fixture Valide")],
         "corpus_src/conformite/corpus.yaml:2:1: corpus: 'Fixture Valide' is not a corpus name: write lowercase "
         "letters and "
         'digits, words joined by single hyphens, as "conformite-saison-1"'),
    case("corpus-key-pattern", [replace(CO, "  conseil-en-investissements-financiers: Conseil",
                                        "  conseil-en-investissements-financiers: Conseil\n  Gestion: Gestion")],
         "corpus_src/conformite/corpus.yaml:7:3: activites.Gestion: key 'Gestion' is not a code: write "
         "lowercase letters "
         'without accents, words joined by single hyphens, as "courtage-en-assurance"'),
    case("referentiel-missing", [replace(RF, "    regle: La fiche existe et son statut est conforme.\n", "")],
         "corpus_src/conformite/referentiel.yaml:3:5: criteres[0]: missing required field: 'regle'"),
    case("referentiel-type", [replace(RF, "      /entites/: [/existe, /statut]\n", "      /entites/: /existe\n")],
         "corpus_src/conformite/referentiel.yaml:9:7: criteres[0].champs./entites/: '/existe' is not of type "
         "'array'"),
    case("referentiel-pattern", [replace(RF, "id: C1", "id: critere-1")],
         "corpus_src/conformite/referentiel.yaml:3:5: criteres[0].id: 'critere-1' is not a criterion id: write "
         "C followed by "
         'its number, as "C1"'),
    case("referentiel-enum", [replace(RF, "verdict: conforme", "verdict: valide")],
         "corpus_src/conformite/referentiel.yaml:16:5: precedence[2].verdict: 'valide' is not one of ['conforme', "
         "'non_conforme', 'indeterminable']"),
    case("systeme-missing",
         [replace(SY, "{erreur: delai-depasse, message: Délai dépassé.}", "{erreur: delai-depasse}")],
         "corpus_src/conformite/systeme.yaml:10:8: 408: missing required field: 'message'"),
    case("systeme-unknown", [replace(SY, "    method: GET\n", "    method: GET\n    amount: [0]\n"),
                             replace(SY, "  message: Le corpus ne répond qu'au proxy Trust Layer.\n",
                                     "  message: Le corpus ne répond qu'au proxy Trust Layer.\n  code: 403\n")],
         "corpus_src/conformite/systeme.yaml:5:3: " + unknown("403.code", "systeme"),
         "corpus_src/conformite/systeme.yaml:8:13: 403.comment_appeler.amount: ['0'] is not of type 'string'"),
    case("systeme-type",
         [replace(SY, '"404": {erreur: chemin-inconnu, message: Chemin inconnu.}', '"404": chemin-inconnu')],
         "corpus_src/conformite/systeme.yaml:8:1: 404: 'chemin-inconnu' is not of type 'object'"),
    case("systeme-status-key", [replace(SY, '"400": {', '"600": {erreur: autre, message: Autre.}\n"400": {')],
         "corpus_src/conformite/systeme.yaml:1:1: 600: key '600' is not an HTTP error status: write three "
         "digits from 400 to "
         '599, as "404"'),
    case("absents-missing", [replace(AB, "    motif: Agrément cité par l'entité, inconnu du registre.\n", "")],
         "corpus_src/conformite/absents.yaml:2:5: absents[0]: missing required field: 'motif'"),
    case("absents-unknown", [replace(AB, "    motif:", "    depuis: 2026-01-01\n    motif:")],
         "corpus_src/conformite/absents.yaml:3:5: " + unknown("absents[0].depuis", "absents")),
    case("absents-type", [replace(AB, "absents:\n", "absents:\n  - /agrements/AGR-0998\n")],
         "corpus_src/conformite/absents.yaml:2:5: absents[0]: '/agrements/AGR-0998' is not of type 'object'"),
    # --- identifiers and dates ----------------------------------------------------------------------------
    case("id-pattern-entites", [write("entites/ENT-3.yaml", NEW_ENTITY.replace("ENT-0003", "ENT-3"))],
         "corpus_src/conformite/entites/ENT-3.yaml:2:3: entite.id: 'ENT-3' is not an id of /entites/: write one "
         "like "
         "ENT-0001"),
    case("id-pattern-agrements",
         [replace(E2, AGR2_END, AGR2_END + NEW_AGREMENT.format(id="AGR-3", entity="ENT-0002"))],
         "corpus_src/conformite/entites/ENT-0002.yaml:18:5: agrements[1].id: 'AGR-3' is not an id of "
         "/agrements/: write one "
         "like AGR-0001"),  # and no "does not list" about a record whose id is unusable
    case("id-pattern-attestations", [replace(E1, "  - id: ATT-0001\n", "  - id: att-0001\n")],
         f"corpus_src/conformite/entites/ENT-0001.yaml:9:18: entite.attestations[0]: /attestations/ATT-0001 "
         f"{NOT_DECLARED}",
         "corpus_src/conformite/entites/ENT-0001.yaml:21:5: attestations[0].id: 'att-0001' is not an id of "
         "/attestations/: "
         "write one like ATT-0123",  # no attestation left to show: one built from the track's pattern
         f"corpus_src/conformite/entites/ENT-0001.yaml:30:5: avenants[0].attestation: /attestations/ATT-0001 "
         f"{NOT_DECLARED}",
         f"corpus_src/conformite/entites/ENT-0001.yaml:36:5: avenants[1].attestation: /attestations/ATT-0001 "
         f"{NOT_DECLARED}"),
    case("id-pattern-avenants", [replace(E1, "  - id: AVN-0002\n", "  - id: AVN-2\n")],
         f"corpus_src/conformite/entites/ENT-0001.yaml:26:36: attestations[0].avenants[1]: /avenants/AVN-0002 "
         f"{NOT_DECLARED}",
         "corpus_src/conformite/entites/ENT-0001.yaml:35:5: avenants[1].id: 'AVN-2' is not an id of /avenants/: "
         "write one "
         "like AVN-0001"),
    case("date-unreal",
         [replace(E1, "date_fin_validite: 2026-03-31\n\natt", "date_fin_validite: 2026-02-30\n\natt")],
         "corpus_src/conformite/entites/ENT-0001.yaml:18:5: agrements[0].date_fin_validite: '2026-02-30' is not "
         "a real "
         "calendar date"),
    case("date-unreal-nested", [replace(E1, "date_naissance: 1980-12-31", "date_naissance: 1980-13-01")],
         "corpus_src/conformite/entites/ENT-0001.yaml:54:11: beneficiaires.pages[1].entrees[0].date_naissance: "
         "'1980-13-01' "
         "is not a real calendar date"),
    case("date-unreal-nullable", [replace(E1, "nouvelle_date_fin: 2027-03-31", "nouvelle_date_fin: 2027-02-29")],
         "corpus_src/conformite/entites/ENT-0001.yaml:33:5: avenants[0].nouvelle_date_fin: '2027-02-29' is not "
         "a real "
         "calendar date"),
    case("date-shape", [replace(E2, "date_debut: 2019-06-15", "date_debut: 15/06/2019")],
         "corpus_src/conformite/entites/ENT-0002.yaml:16:5: agrements[0].date_debut: '15/06/2019' is not a "
         "date: write it "
         'year-month-day, four digits, two and two, joined by hyphens, as "2026-07-01"'),
    case("duplicate-id", [replace(E2, AGR2_END, AGR2_END + NEW_AGREMENT.format(id="AGR-0002", entity="ENT-0002"))],
         "corpus_src/conformite/entites/ENT-0002.yaml:18:5: agrements[1].id: /agrements/AGR-0002 is defined "
         "twice: in "
         "corpus_src/conformite/entites/ENT-0002.yaml:12:5 and in "
         "corpus_src/conformite/entites/ENT-0002.yaml:18:5"),
    case("duplicate-id-entity", [write(E3, NEW_ENTITY.replace("id: ENT-0003", "id: ENT-0002"))],
         "corpus_src/conformite/entites/ENT-0003.yaml:2:3: entite.id: /entites/ENT-0002 is defined twice: in "
         "corpus_src/conformite/entites/ENT-0002.yaml:2:3 and in corpus_src/conformite/entites/ENT-0003.yaml:2:3",
         "corpus_src/conformite/entites/ENT-0003.yaml:2:3: entite.id: the file must be named ENT-0002.yaml, "
         "after its "
         "entity id"),
    # --- references -------------------------------------------------------------------------------------
    case("dangling-reference",
         [replace(E2, "[/agrements/AGR-0002]", "[/agrements/AGR-0002, /agrements/AGR-0404]")],
         f"corpus_src/conformite/entites/ENT-0002.yaml:7:36: entite.agrements[1]: /agrements/AGR-0404 "
         f"{NOT_DECLARED}"),
    case("dangling-reference-liste", [replace(LC, "entite: /entites/ENT-0001", "entite: /entites/ENT-0404")],
         f"corpus_src/conformite/listes/agrees/courtage-en-assurance.yaml:8:9: pages[1].entrees[0].entite: "
         f"/entites/ENT-0404 "
         f"{NOT_DECLARED}"),
    case("wrong-collection",
         [replace(E2, "[/agrements/AGR-0002]", "[/agrements/AGR-0002, /attestations/ATT-0001]")],
         "corpus_src/conformite/entites/ENT-0002.yaml:7:36: entite.agrements[1]: '/attestations/ATT-0001' is "
         "not a "
         "canonical path of /agrements/: write one like /agrements/AGR-0001"),
    case("wrong-collection-avenant",
         [replace(E1, "    attestation: /attestations/ATT-0001\n    objet: prorogation",
                  "    attestation: /entites/ENT-0001\n    objet: prorogation")],
         "corpus_src/conformite/entites/ENT-0001.yaml:30:5: avenants[0].attestation: '/entites/ENT-0001' is not "
         "a canonical "
         "path of /attestations/: write one like /attestations/ATT-0001"),
    case("non-canonical-reference", [replace(E1, "    attestation: /attestations/ATT-0001\n    objet: prorogation",
                                             "    attestation: /attestations/ATT-0001/\n    objet: prorogation")],
         "corpus_src/conformite/entites/ENT-0001.yaml:30:5: avenants[0].attestation: '/attestations/ATT-0001/' "
         "is not a "
         "canonical path of /attestations/: write one like /attestations/ATT-0001",
         "corpus_src/conformite/entites/ENT-0001.yaml:30:5: avenants[0].attestation: '/attestations/ATT-0001/' "
         "is not a "
         "canonical path: write it exactly as served: segments of letters, digits and hyphens, each after a "
         'slash, no trailing slash, as "/agrements/AGR-4417"'),
    case("agrement-entite-not-the-lister", [replace(E1, "    entite: /entites/ENT-0001\n    activite",
                                                    "    entite: /entites/ENT-0002\n    activite")],
         "corpus_src/conformite/entites/ENT-0001.yaml:14:5: agrements[0].entite: /entites/ENT-0002 is not the "
         "entity of "
         "this file (/entites/ENT-0001): move the record to that entity's file",
         "corpus_src/conformite/entites/ENT-0001.yaml:14:5: agrements[0].entite: entite is /entites/ENT-0002 but "
         "/agrements/AGR-0001 is listed by /entites/ENT-0001 at "
         "corpus_src/conformite/entites/ENT-0001.yaml:8:15, not by "
         "/entites/ENT-0002: make the two agree"),
    case("agrement-listed-by-another-entity",
         [replace(E2, "[/agrements/AGR-0002]", "[/agrements/AGR-0002, /agrements/AGR-0001]")],
         "corpus_src/conformite/entites/ENT-0001.yaml:14:5: agrements[0].entite: /agrements/AGR-0001 is listed "
         "by two "
         "entities, /entites/ENT-0001 at corpus_src/conformite/entites/ENT-0001.yaml:8:15 and /entites/ENT-0002 "
         "at "
         "corpus_src/conformite/entites/ENT-0002.yaml:7:36; its entite is /entites/ENT-0001: remove it from the "
         "other list"),
    case("agrement-not-listed", [replace(E2, "agrements: [/agrements/AGR-0002]", "agrements: []")],
         "corpus_src/conformite/entites/ENT-0002.yaml:13:5: agrements[0].entite: /entites/ENT-0002 does not list "
         "/agrements/AGR-0002 in its agrements"),
    case("agrement-in-another-entity-file",
         [replace(E1, "[/agrements/AGR-0001, /agrements/AGR-0999]", "[/agrements/AGR-0999]"),
          replace(E1, "    entite: /entites/ENT-0001\n    activite",
                  "    entite: /entites/ENT-0002\n    activite"),
          replace(E2, "[/agrements/AGR-0002]", "[/agrements/AGR-0002, /agrements/AGR-0001]")],
         "corpus_src/conformite/entites/ENT-0001.yaml:14:5: agrements[0].entite: /entites/ENT-0002 is not the "
         "entity of "
         "this file (/entites/ENT-0001): move the record to that entity's file"),
    case("attestation-entite-not-the-lister", [replace(E1, "    entite: /entites/ENT-0001\n    type:",
                                                       "    entite: /entites/ENT-0002\n    type:")],
         "corpus_src/conformite/entites/ENT-0001.yaml:22:5: attestations[0].entite: /entites/ENT-0002 is not "
         "the entity of "
         "this file (/entites/ENT-0001): move the record to that entity's file",
         "corpus_src/conformite/entites/ENT-0001.yaml:22:5: attestations[0].entite: entite is /entites/ENT-0002 "
         "but "
         "/attestations/ATT-0001 is listed by /entites/ENT-0001 at "
         "corpus_src/conformite/entites/ENT-0001.yaml:9:18, not by "
         "/entites/ENT-0002: make the two agree"),
    case("attestation-not-listed",
         [replace(E1, "  attestations: [/attestations/ATT-0001]\n", "  attestations: []\n")],
         "corpus_src/conformite/entites/ENT-0001.yaml:22:5: attestations[0].entite: /entites/ENT-0001 does not "
         "list "
         "/attestations/ATT-0001 in its attestations"),
    case("avenant-not-listed-back", [replace(E1, ATT1_AVENANTS, "    avenants: [/avenants/AVN-0001]\n")],
         "corpus_src/conformite/entites/ENT-0001.yaml:36:5: avenants[1].attestation: /attestations/ATT-0001 "
         "does not list "
         f"/avenants/AVN-0002 in its avenants {NOT_LISTED_AVN}"),
    case("avenant-mismatch-intended", [replace(E1, ATT1_AVENANTS, "    avenants: [/avenants/AVN-0001]\n"),
                                       replace(E1, AVN2_END, AVN2_END + "    incoherence_voulue: true\n")]),
    case("avenant-mismatch-intended-but-listed",
         [replace(E1, AVN2_END, AVN2_END + "    incoherence_voulue: true\n")],
         "corpus_src/conformite/entites/ENT-0001.yaml:41:5: avenants[1].incoherence_voulue: marked as an "
         "intended mismatch, "
         "but /attestations/ATT-0001 does list /avenants/AVN-0002"),
    case("avenant-mismatch-marker-not-true", [replace(E1, AVN2_END, AVN2_END + "    incoherence_voulue: false\n")],
         "corpus_src/conformite/entites/ENT-0001.yaml:41:5: avenants[1].incoherence_voulue: True was expected"),
    case("avenant-listed-by-another-attestation",
         [replace(E1, ATT1_AVENANTS, "    avenants: [/avenants/AVN-0001]\n"),
          replace(E1, "  attestations: [/attestations/ATT-0001]\n", "  attestations: [/attestations/ATT-0001, "
                  "/attestations/ATT-0002]\n"),
          replace(E1, "\navenants:\n", "  - id: ATT-0002\n    entite: /entites/ENT-0001\n    type: autre\n"
                  "    date_emission: 2025-01-01\n    date_fin_validite: 2025-12-31\n    avenants: "
                  "[/avenants/AVN-0002]\n"
                  "\navenants:\n")],
         "corpus_src/conformite/entites/ENT-0001.yaml:42:5: avenants[1].attestation: attestation is "
         "/attestations/ATT-0001 "
         "but /avenants/AVN-0002 is listed by /attestations/ATT-0002 at "
         "corpus_src/conformite/entites/ENT-0001.yaml:32:16, "
         "not by /attestations/ATT-0001: make the two agree"),
    case("agrement-of-another-activity-than-its-liste",
         [replace(E1, "    activite: courtage-en-assurance\n", f"    activite: {CIF}\n")],
         f"warning: corpus_src/conformite/entites/ENT-0001.yaml:15:5: agrements[0].activite: '{CIF}' differs "
         f"from the "
         "activite of "
         "every liste des agréés that lists /agrements/AGR-0001 (the liste des agréés of activite "
         "courtage-en-assurance at corpus_src/conformite/listes/agrees/courtage-en-assurance.yaml:7:9): write "
         f"courtage-en-assurance, or list it in the liste des agréés of activite {CIF} (served as written; make "
         "sure the trap is intended)"),
    case("beneficiaires-not-first-page",
         [replace(E1, "beneficiaires: /beneficiaires/ENT-0001/1", "beneficiaires: /beneficiaires/ENT-0001/2")],
         "corpus_src/conformite/entites/ENT-0001.yaml:10:3: entite.beneficiaires: must be "
         "/beneficiaires/ENT-0001/1, the "
         "first page of the bénéficiaires written in this file"),
    case("beneficiaires-null-with-pages",
         [replace(E1, "beneficiaires: /beneficiaires/ENT-0001/1", "beneficiaires: null")],
         "corpus_src/conformite/entites/ENT-0001.yaml:10:3: entite.beneficiaires: must be "
         "/beneficiaires/ENT-0001/1, the "
         "first page of the bénéficiaires written in this file"),
    case("beneficiaires-cited-without-pages",
         [replace(E2, "beneficiaires: null", "beneficiaires: /beneficiaires/ENT-0002/1")],
         f"corpus_src/conformite/entites/ENT-0002.yaml:9:3: entite.beneficiaires: /beneficiaires/ENT-0002/1 "
         f"{NOT_DECLARED}"),
    # --- pagination -------------------------------------------------------------------------------------
    case("pagination-gap", [replace(E1, "    - page: 2\n", "    - page: 3\n")],
         "corpus_src/conformite/entites/ENT-0001.yaml:50:7: beneficiaires.pages[1].page: expected page 2 here, "
         "found page "
         f"3: {GAP}"),
    case("pagination-repeated-page", [replace(E1, "    - page: 2\n", "    - page: 1\n")],
         "corpus_src/conformite/entites/ENT-0001.yaml:50:7: beneficiaires.pages[1].page: page 1 is written "
         "twice (first as "
         "pages[0]): the page_suivante chain would loop"),
    case("pagination-not-starting-at-1", [replace(MR, "  - page: 1\n", "  - page: 2\n")],
         "corpus_src/conformite/listes/mesures-restrictives.yaml:2:5: pages[0].page: expected page 1 here, "
         "found page 2: "
         f"{GAP}"),
    case("pagination-out-of-order", [replace(LC, "  - page: 1\n", "  - page: 2\n"),
                                     replace(LC, "  - page: 2\n    entrees:\n", "  - page: 1\n    entrees:\n")],
         "corpus_src/conformite/listes/agrees/courtage-en-assurance.yaml:3:5: pages[0].page: expected page 1 "
         "here, found "
         f"page 2: {GAP}",
         "corpus_src/conformite/listes/agrees/courtage-en-assurance.yaml:5:5: pages[1].page: expected page 2 "
         "here, found "
         f"page 1: {GAP}"),
    case("pagination-bad-number", [replace(E1, "    - page: 2\n", "    - page: deux\n")],
         "corpus_src/conformite/entites/ENT-0001.yaml:50:7: beneficiaires.pages[1].page: 'deux' is not a page "
         "number: write "
         'a whole number from 1 to 999 in digits, as "2"'),  # and only that: no indirect "expected page 2 here"
    case("pages-defined-in-two-files",
         [rename(LC, "listes/agrees/courtage.yaml"),
          write(LC, "activite: courtage-en-assurance\npages:\n  - page: 1\n    entrees: []\n")],
         "corpus_src/conformite/listes/agrees/courtage.yaml:1:1: activite: the file must be named "
         "courtage-en-assurance.yaml, after its activité",
         "corpus_src/conformite/listes/agrees/courtage.yaml:3:5: pages[0].page: "
         "/listes/agrees/courtage-en-assurance/1 is "
         "defined twice: in corpus_src/conformite/listes/agrees/courtage-en-assurance.yaml:3:5 and in "
         "corpus_src/conformite/listes/agrees/courtage.yaml:3:5"),
    # --- declared absents -------------------------------------------------------------------------------
    case("absent-defined-elsewhere",
         [replace(AB, "absents:\n", "absents:\n  - chemin: /agrements/AGR-0001\n    motif: E.\n")],
         "corpus_src/conformite/absents.yaml:2:5: absents[0].chemin: /agrements/AGR-0001 is declared absent but "
         "is defined "
         "in corpus_src/conformite/entites/ENT-0001.yaml:13:5: existe would be both true and false"),
    case("absent-page-defined-elsewhere",
         [replace(AB, "absents:\n", "absents:\n  - chemin: /mesures-restrictives/1\n    motif: E.\n")],
         "corpus_src/conformite/absents.yaml:2:5: absents[0].chemin: /mesures-restrictives/1 is declared absent "
         "but is "
         "defined in corpus_src/conformite/listes/mesures-restrictives.yaml:2:5: existe would be both true and "
         "false"),
    case("absent-not-a-collection-path",
         [replace(AB, "absents:\n", "absents:\n  - chemin: /registres/REG-0001\n    motif: E.\n")],
         "corpus_src/conformite/absents.yaml:2:5: absents[0].chemin: /registres/REG-0001 is not a canonical "
         "path of any "
         "collection, so it cannot be served as existe: false"),
    case("absent-duplicated",
         [replace(AB, "absents:\n", "absents:\n  - chemin: /agrements/AGR-0999\n    motif: Deux.\n")],
         "corpus_src/conformite/absents.yaml:4:5: absents[1].chemin: /agrements/AGR-0999 is declared absent "
         "twice: in "
         "corpus_src/conformite/absents.yaml:2:5 and in corpus_src/conformite/absents.yaml:4:5"),
    case("absent-uncited-is-a-warning",
         [replace(AB, "absents:\n", "absents:\n  - chemin: /agrements/AGR-0998\n    motif: N.\n")],
         "warning: corpus_src/conformite/absents.yaml:2:5: absents[0].chemin: /agrements/AGR-0998 is declared "
         "absent but "
         "nothing in the corpus cites it"),
    # --- activities, list files, systeme -----------------------------------------------------------------
    case("unknown-activite-agrement",
         [replace(E2, "activite: conseil-en-investissements-financiers", "activite: gestion")],
         "corpus_src/conformite/entites/ENT-0002.yaml:14:5: agrements[0].activite: unknown activité 'gestion' "
         f"{UNKNOWN_ACT}"),
    case("unknown-activite-avenant", [replace(E1, AVN2_END, "    activite_exclue: gestion\n")],
         f"corpus_src/conformite/entites/ENT-0001.yaml:40:5: avenants[1].activite_exclue: unknown activité "
         f"'gestion' "
         f"{UNKNOWN_ACT}"),
    case("unknown-activite-liste", [replace(LC, "activite: courtage-en-assurance", "activite: courtage"),
                                    rename(LC, "listes/agrees/courtage.yaml")],
         f"corpus_src/conformite/listes/agrees/courtage.yaml:1:1: activite: unknown activité 'courtage' "
         f"{UNKNOWN_ACT}"),
    case("liste-file-misnamed", [rename(LC, "listes/agrees/courtage.yaml")],
         "corpus_src/conformite/listes/agrees/courtage.yaml:1:1: activite: the file must be named "
         "courtage-en-assurance.yaml, after its activité"),
    case("systeme-statuses-missing",
         [replace(SY, '"431": {erreur: en-tetes-trop-volumineux, message: En-têtes trop volumineux.}\n', ""),
          replace(SY, '"505": {erreur: version-http-non-prise-en-charge, message: Version HTTP non prise en '
                      'charge.}\n', "")],
         "corpus_src/conformite/systeme.yaml:1:1: missing bodies for statuses the vhost can send: 431, 505"),
]


def test_cases_have_unique_ids() -> None:
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))


def test_valid_fixture_checks_clean(tmp_path: Path) -> None:
    assert problem_lines(copy_fixture(tmp_path)) == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_rule(case: Case, tmp_path: Path) -> None:
    src = apply(copy_fixture(tmp_path), case.edits)
    assert problem_lines(src) == list(case.expected)


def test_every_error_is_located(tmp_path: Path) -> None:
    """Across all cases, every error names its file under corpus_src/, and all but whole-file ones a line."""
    whole_file = ("required file is missing",)
    for c in CASES:
        src = apply(copy_fixture(tmp_path / c.id), c.edits)
        for problem in check(src, CONFORMITE):
            assert problem.location.file.startswith("corpus_src/"), (c.id, str(problem))
            if not problem.message.endswith(whole_file):
                assert problem.location.line >= 1 and problem.location.column >= 1, (c.id, str(problem))


def test_unreadable_source_is_reported(tmp_path: Path) -> None:
    src = copy_fixture(tmp_path)
    (src / MR).unlink()
    (src / MR).mkdir()  # a folder where a file is expected: refused before any read
    lines = problem_lines(src)
    assert lines == [UNREADABLE_EXAMPLE]


def test_uncited_absent_is_only_a_warning(tmp_path: Path) -> None:
    uncited = replace(AB, "absents:\n", "absents:\n  - chemin: /avenants/AVN-0998\n    motif: N.\n")
    src = apply(copy_fixture(tmp_path), [uncited])
    problems = check(src, CONFORMITE)
    assert [p.severity for p in problems] == [Severity.WARNING]
    result = _cli_check(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines() == [
        "warning: corpus_src/conformite/absents.yaml:2:5: absents[0].chemin: /avenants/AVN-0998 is declared "
        "absent but "
        "nothing in the corpus cites it",
        "corpus check: 0 error(s), 1 warning(s)",
    ]


# --- the seeded fixture: every kind of error, all reported by one `corpus check` run ------------------------

ERRORS = FIXTURES / "errors"


def _cli_check(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "generator.cli", "check", "--root", str(root)],
                          capture_output=True, text=True, encoding="utf-8", env=env, timeout=60, check=False)


def expected_error_lines() -> list[str]:
    """The seeded fixture's lines, the sections of an entity file filled in from the track."""
    return (ERRORS / "expected.txt").read_text("utf-8").replace(ENTITY_SECTIONS, SECTIONS).splitlines()


def test_seeded_errors_all_reported_in_one_run(tmp_path: Path) -> None:
    shutil.copytree(ERRORS / "corpus_src", tmp_path / "corpus_src/conformite")
    copy_tracks(tmp_path)
    result = _cli_check(tmp_path)
    assert result.returncode == 1
    assert result.stdout == ""
    got = result.stderr.splitlines()
    expected = expected_error_lines()
    missing = [line for line in expected if line not in got]
    extra = [line for line in got if line not in expected]
    assert not missing and not extra, f"missing: {missing}\nextra: {extra}"
    assert got == expected  # same lines, same (sorted by place) order


def _shape(line: str) -> str:
    """A message with its place, field and variable parts removed: what kind of error it is."""
    text = re.sub(r"^(warning: )?corpus_src/[^:]+(:\d+:\d+)?: ", r"\1", line)
    text = re.sub(r"^(warning: )?[\w.\[\]/<>-]+: ", r"\1", text)  # the field
    if text.startswith("YAML syntax: "):
        return "YAML syntax"  # the parser's own wording varies with the mistake
    variable_parts = (
        (r"'[^']*'", "_"),  # quoted values
        (r"\([^()]*\)", "(_)"),  # hints in parentheses
        (r"found page \S+:", "found page _:"),
        (r"send: .*", "send: _"),  # the list of missing statuses
        (r" is not an? [^:]+: write .*, as \"[^\"]*\"", " is not _: write _"),  # a format, in words
        (r"write one like \S+$", "write one like _"),  # an example path or id
        (r"write \S+, or list it in the (.*) of \w+ \S+$", r"write _, or list it in the \1 of _"),
        (r"in its \w+", "in its _"),  # which list (agrements, attestations, avenants)
        (r"^\w+ is (\S+) but", r"_ is \1 but"),  # which link (entite, attestation)
        (r"/[\w/-]+|\b\d+\b|\[[^\]]*\]|\{[^}]*\}", "_"),  # paths, numbers, lists, mappings
    )
    for pattern, repl in variable_parts:
        text = re.sub(pattern, repl, text)
    return text


def test_seeded_errors_cover_every_rule() -> None:
    """The seeded fixture holds at least one instance of every kind of message of the per-rule cases.

    So adding a rule (a case above) without seeding it in ``tests/fixtures/errors`` fails here, and the
    README's examples, copied from that fixture's run, stay complete.
    """
    seeded = {_shape(line) for line in expected_error_lines()}
    wanted = {_shape(line): c.id for c in CASES for line in c.expected}
    not_seeded = sorted(f"{cid}: {shape}" for shape, cid in wanted.items() if shape not in seeded)
    assert not not_seeded, "seed these in tests/fixtures/errors:\n" + "\n".join(not_seeded)


# --- the README's examples are real ---------------------------------------------------------------------------

README = Path(__file__).resolve().parents[2] / "docs" / "authoring.md"
UNREADABLE_EXAMPLE = ("corpus_src/conformite/listes/mesures-restrictives.yaml: cannot read: not a regular file "
                      "(a folder, "
                      "FIFO, socket or device): remove it")  # test above


def readme_examples() -> list[str]:
    text = README.read_text("utf-8")
    region = text[text.index("<!-- authoring:begin -->"):text.index("<!-- authoring:end -->")]
    examples, fence = [], None
    for line in region.splitlines():
        if line.startswith("```"):
            fence = None if fence is not None else line[3:]  # the opening fence's language, "" for none
        elif fence == "" and re.match(r"(warning: )?corpus_src/\S+: ", line):
            examples.append(line.replace(ENTITY_SECTIONS, SECTIONS))  # the page, like the fixture, says it once
    return examples


def test_readme_examples_are_printed_by_a_real_run() -> None:
    examples = readme_examples()
    real = set(expected_error_lines()) | {UNREADABLE_EXAMPLE}
    assert examples and not [line for line in examples if line not in real]


def test_readme_has_an_example_of_every_message() -> None:
    shown = {_shape(line) for line in readme_examples()}
    missing = sorted({_shape(line) for line in expected_error_lines()[:-1]} - shown)
    assert not missing, "add an example of these to the README's authoring guide:\n" + "\n".join(missing)
