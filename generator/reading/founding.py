"""The published rule that derives a task's founding facts (spec §5.7, "verdict fondé") and their
equivalent forms. The key holds what this rule derives; ``corpus check-season`` fails when they differ.

The rule is written once, in docs/season.md#founding-facts-the-rule; ``/referentiel`` serves it in French
as ``principes.justification``. The facts of each criterion come from the track's evaluator (its
``CriterionResult.faits``); this module chooses the deciding criteria and derives the equivalent forms:
a link in either direction and the whole array of the citing field, from the track's back-links
(``track.yaml``, a collection's ``liens[].retour``), and the same-rank sources the track's code names
(``same_rank_forms``).
"""

from __future__ import annotations

from dataclasses import dataclass

from generator.base.jsonvalue import json_key
from generator.reading.evaluation import Evaluation, Strategy
from generator.reading.logic import TrackLogic
from generator.reading.reader import MISSING, CorpusReader, Fact, is_index, resolve_pointer

# The two values of a key's ``fonde_par``: every founding fact is needed, or those of any one criterion.
TOUS, UN_CRITERE = "tous", "un_critere"


@dataclass(frozen=True)
class FoundingFact:
    """One founding fact: the criterion it founds, its primary form and its equivalent forms."""

    critere: str
    fact: Fact
    equivalents: tuple[Fact, ...]

    @property
    def forms(self) -> tuple[Fact, ...]:
        return (self.fact, *self.equivalents)


def _link(reader: CorpusReader, fact: Fact) -> str | None:
    """The citing field (``agrements``...) when ``fact`` is one element of a link array with a back-link
    (``track.back_links``), else None."""
    found = reader.track.collection_of(fact.ressource)
    parts = fact.champ.split("/")
    if found is None or len(parts) != 3 or not is_index(parts[2]):
        return None
    return parts[1] if (found.prefix, parts[1]) in reader.track.back_links else None


def is_link(reader: CorpusReader, fact: Fact) -> bool:
    """Whether ``fact`` is one element of a link array (``/agrements/<n>`` of an entity...)."""
    return _link(reader, fact) is not None


def is_back_link(reader: CorpusReader, fact: Fact) -> bool:
    """Whether ``fact`` is the reverse field of a link (``/agrements/Y /entite``)."""
    found = reader.track.collection_of(fact.ressource)
    return found is not None and reader.track.back_fields.get(found.name) == fact.champ


def reverse_form(reader: CorpusReader, fact: Fact) -> Fact | None:
    """The link read from the cited document's side (``/agrements/Y /entite``), when that document
    serves the reverse field pointing back; None for any other fact."""
    key = _link(reader, fact)
    found = reader.track.collection_of(fact.ressource)
    if key is None or found is None or not isinstance(fact.valeur, str):
        return None
    back = reader.track.back_links[(found.prefix, key)]
    if resolve_pointer(reader.fetch(fact.valeur), back) == fact.ressource:
        return Fact(fact.valeur, back, fact.ressource)
    return None


def whole_array_form(reader: CorpusReader, fact: Fact) -> Fact | None:
    """The whole array of the citing field (``/agrements``) that holds the link; None for any other fact."""
    key = _link(reader, fact)
    if key is None:
        return None
    whole = resolve_pointer(reader.fetch(fact.ressource), f"/{key}")
    return Fact(fact.ressource, f"/{key}", whole) if isinstance(whole, list) else None


def equivalent_forms(reader: CorpusReader, logic: TrackLogic[Strategy], fact: Fact) -> tuple[Fact, ...]:
    """The forms that state the same fact, each served exactly as written."""
    forms: list[Fact] = []
    if isinstance(fact.valeur, str):
        forms += filter(None, (reverse_form(reader, fact), whole_array_form(reader, fact)))
    forms += logic.same_rank_forms(reader, fact)
    return tuple(forms)


def fonde_par(evaluation: Evaluation, facts: list[FoundingFact]) -> str:
    """``un_critere`` when several criteria decide a verdict that one criterion decides on its own (a
    ``non_conforme`` or ``indeterminable`` one: any one of them founds it), else ``tous`` (a ``conforme``
    verdict needs every criterion)."""
    several = len({f.critere for f in facts}) > 1
    return UN_CRITERE if several and evaluation.deciding_state is not None else TOUS


def founding_facts(reader: CorpusReader, logic: TrackLogic[Strategy],
                   evaluation: Evaluation) -> list[FoundingFact]:
    """Apply the rule to the reference evaluation of a task: deciding criteria, facts, forms.

    A fact is listed once per criterion, not once per task: under ``un_critere`` each criterion's group
    must found the verdict on its own, so a fact two criteria share belongs to both groups. Equality is
    strict JSON equality (``"1"`` is not ``1``), as the scorer compares values."""
    out: list[FoundingFact] = []
    seen: set[tuple[str, str, str, object]] = set()
    for criterion in evaluation.deciding:
        for fact in criterion.faits:
            if fact.valeur is MISSING:
                continue
            key = (criterion.id, fact.ressource, fact.champ, json_key(fact.valeur))
            if key in seen:
                continue
            seen.add(key)
            out.append(FoundingFact(criterion.id, fact, equivalent_forms(reader, logic, fact)))
    return out
