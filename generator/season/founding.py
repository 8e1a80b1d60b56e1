"""The published rule that derives a task's founding facts (spec §5.7, "verdict fondé") and their
equivalent forms. The key holds what this rule derives; ``corpus check-season`` fails when they differ.

The rule, as /referentiel serves it in French (``principes.justification``, public at the opening), and
as the key's header and docs/season.md state it:

1. **Deciding criteria.** All four criteria are read. ``non_conforme``: every criterion established
   false (precedence: a false criterion decides whatever the others are). ``indeterminable``: every
   criterion not establishable. ``conforme``: all four criteria. When a ``non_conforme`` or an
   ``indeterminable`` verdict has several deciding criteria, each decides on its own: the facts of any
   ONE of them found the verdict (the key says ``fonde_par: un_critere`` and groups the facts by
   ``critere``); otherwise every fact is needed (``fonde_par: tous``).
2. **Facts of a deciding criterion**: the link that attaches each decisive resource to the one that
   cites it (the entity's ``/agrements/<n>`` or ``/attestations/<n>``, the attestation's
   ``/avenants/<n>``), and the corpus terms of the comparison that decides it. The other term is the
   task's date of examination, activity or entity, or a value of ``/referentiel``, which are no corpus facts.
   - C1: ``/existe`` when the file is absent, else ``/statut``.
   - C2, C3: the decisive documents are, when the criterion is established, the first document that
     satisfies it in the order the entity's file cites them, and it alone; when it is false, each
     retained document; when it is not establishable, each cited document that is absent and each
     retained document that makes it not establishable (a retained document that fails then gives no
     fact). Each decisive document gives its link and the facts of the one case that decides it, the
     first that applies in this order: absent → its ``/existe``; an attestation listing an absent
     avenant → the link and ``/existe`` of each absent avenant it lists; not started → ``/date_debut``
     or ``/date_emission``; lapsed → the retained end date and, for an attestation, the link and
     ``/date_effet`` of each avenant it lists that designates it and whose ``/date_effet`` is after the
     date of examination; an agrément whose registre and liste des agréés contradict each other → the
     registre's ``/statut`` and, when the list holds an entry for it, that entry's ``/agrement`` and its
     differing field (``/entite`` if it differs, else ``/statut``); statut other than actif →
     ``/statut``; the activity excluded by an avenant in force → that avenant's link, ``/date_effet``
     and ``/activite_exclue`` (the last one applied); otherwise the document satisfies the criterion →
     the retained end date (its statut, list entry, start date and other avenants are checked, not
     asked). The retained end date is the document's ``/date_fin_validite``, or, when a prorogation in
     force replaces it, the link, ``/date_effet`` and ``/nouvelle_date_fin`` of the last one applied.
     This is the order of ``_Run.c2`` and ``_Run.c3`` in :mod:`generator.season.evaluator`.
   - C4: a match gives the nom, prénoms and date de naissance on both sides; a declaration not
     complete gives each such page's ``/statut_declaration``; an established C4 gives every page's
     ``/statut_declaration``; and each homonym (same nom and prénoms) gives the two dates of birth.
     Bénéficiaires pages are attached to the entity by their own path, so no link is asked.
   - A page of a common list answering ``existe: false`` gives no fact: reaching it is navigation, and
     no field of such a page is probant.
3. **Equivalent forms**, generated, never hand-written: a link may be asserted in either direction
   (``/agrements/Y /entite``, ``/avenants/Z /attestation``) when the target serves the reverse field,
   or as the whole array of the citing field (``/agrements``, ``/attestations``, ``/avenants``); a fact
   that the registre des agréments and the liste des agréés state alike (same ``/statut``) may be
   asserted on either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.base.jsonvalue import json_key
from generator.season.evaluator import Evaluation
from generator.season.reader import MISSING, CorpusReader, Fact, is_index, resolve_pointer
from generator.tracks import resource_types as col

# The key's fonde_par: every founding fact is needed (tous), or the facts of any one deciding criterion,
# grouped by critere, found the verdict (un_critere). Defined here, below the scorer, which reads them.
TOUS, UN_CRITERE = "tous", "un_critere"

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
