"""The published rule that derives a task's founding facts (spec §5.7, "verdict fondé") and their
equivalent forms. The key holds what this rule derives; ``corpus check-season`` fails when they differ.

The rule is written once, in English, in docs/season.md, "Founding facts: the rule"
(docs/season.md#founding-facts-the-rule), and served in French by /referentiel
(``principes.justification``, public at the opening): read it there, not here. The eight cases of a
decisive C2/C3 document are tried in the order of ``_Run.c2`` and ``_Run.c3`` in
:mod:`generator.season.evaluator`, the order the rule states.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator import resource_types as col
from generator.score.jsonvalue import json_key
from generator.score.key import TOUS, UN_CRITERE
from generator.season.evaluator import Evaluation
from generator.season.reader import MISSING, CorpusReader, Fact, is_index, resolve_pointer

# Citing field (on the citing collection) -> the field of the cited document that points back.
LINK_FIELDS: dict[tuple[str, str], str] = {
    (col.ENTITES.prefix, "agrements"): "/entite",
    (col.ENTITES.prefix, "attestations"): "/entite",
    (col.ATTESTATIONS.prefix, "avenants"): "/attestation",
}


@dataclass(frozen=True)
class FoundingFact:
    """One founding fact: the criterion it founds, its primary form and its equivalent forms."""

    critere: str
    fact: Fact
    equivalents: tuple[Fact, ...]

    @property
    def forms(self) -> tuple[Fact, ...]:
        return (self.fact, *self.equivalents)


def _link(fact: Fact) -> str | None:
    """The citing field (``agrements``, ``attestations``, ``avenants``) when ``fact`` is one element of a
    link array of its collection (``LINK_FIELDS``), else None."""
    found = col.collection_of(fact.ressource)
    parts = fact.champ.split("/")
    if found is None or len(parts) != 3 or not is_index(parts[2]):
        return None
    return parts[1] if (found.prefix, parts[1]) in LINK_FIELDS else None


def is_link(fact: Fact) -> bool:
    """Whether ``fact`` is one element of a link array (``/agrements/<n>`` of an entity...)."""
    return _link(fact) is not None


def reverse_form(reader: CorpusReader, fact: Fact) -> Fact | None:
    """The link read from the cited document's side (``/agrements/Y /entite``), when that document
    serves the reverse field pointing back; None for any other fact."""
    key = _link(fact)
    found = col.collection_of(fact.ressource)
    if key is None or found is None or not isinstance(fact.valeur, str):
        return None
    back = LINK_FIELDS[(found.prefix, key)]
    if resolve_pointer(reader.fetch(fact.valeur), back) == fact.ressource:
        return Fact(fact.valeur, back, fact.ressource)
    return None


def whole_array_form(reader: CorpusReader, fact: Fact) -> Fact | None:
    """The whole array of the citing field (``/agrements``) that holds the link; None for any other fact."""
    key = _link(fact)
    if key is None:
        return None
    whole = resolve_pointer(reader.fetch(fact.ressource), f"/{key}")
    return Fact(fact.ressource, f"/{key}", whole) if isinstance(whole, list) else None


def equivalent_forms(reader: CorpusReader, fact: Fact) -> tuple[Fact, ...]:
    """The forms that state the same fact, each served exactly as written."""
    forms: list[Fact] = []
    if isinstance(fact.valeur, str):
        forms += filter(None, (reverse_form(reader, fact), whole_array_form(reader, fact)))
    if col.collection_of(fact.ressource) is col.AGREMENTS and fact.champ == "/statut":
        forms += _listed_statut(reader, fact)
    return tuple(forms)


def _listed_statut(reader: CorpusReader, fact: Fact) -> list[Fact]:
    """The liste des agréés entry that states the same statut for the same agrément (same rank)."""
    activite = resolve_pointer(reader.fetch(fact.ressource), "/activite")
    entite = resolve_pointer(reader.fetch(fact.ressource), "/entite")
    page: Any = col.liste_agrees_page_path(str(activite), "1")
    seen: set[str] = set()
    while isinstance(page, str) and page not in seen:
        seen.add(page)
        doc = reader.fetch(page)
        entries = doc.get("entrees") if isinstance(doc, dict) else None
        for k, entry in enumerate(entries if isinstance(entries, list) else []):
            if isinstance(entry, dict) and entry.get("agrement") == fact.ressource \
                    and entry.get("entite") == entite and entry.get("statut") == fact.valeur:
                return [Fact(page, f"/entrees/{k}/statut", fact.valeur)]
        page = doc.get("page_suivante") if isinstance(doc, dict) else None
    return []



def fonde_par(evaluation: Evaluation, facts: list[FoundingFact]) -> str:
    """``un_critere`` when several criteria decide a non_conforme or indeterminable verdict (any one of
    them founds it), else ``tous``. A conforme verdict needs all four criteria."""
    several = len({f.critere for f in facts}) > 1
    return UN_CRITERE if several and evaluation.verdict != "conforme" else TOUS


def founding_facts(reader: CorpusReader, evaluation: Evaluation) -> list[FoundingFact]:
    """Apply the rule to the reference evaluation of a task: deciding criteria, facts, forms.

    A fact is listed once per criterion, not once per task: under ``un_critere`` each criterion's group
    must found the verdict on its own, so a fact two criteria share belongs to both groups. Equality is
    strict JSON equality (``"1"`` is not ``1``), as the scorer compares values."""
    out: list[FoundingFact] = []
    seen: set[tuple[str, str, str, Any]] = set()
    for criterion in evaluation.deciding:
        for fact in criterion.faits:
            if fact.valeur is MISSING:
                continue
            key = (criterion.id, fact.ressource, fact.champ, json_key(fact.valeur))
            if key in seen:
                continue
            seen.add(key)
            out.append(FoundingFact(criterion.id, fact, equivalent_forms(reader, fact)))
    return out
