"""An honest agent written from the served ``/referentiel`` alone, independently of the key.

Why it exists: the panel's other honest agents are built on the reference evaluator, the very code the
key's founding facts are derived from, so their success is partly circular. This agent was written by an
auditor before reading the key, the founding-fact rule or the evaluator. It knows only what a careful
participant knows: the public statements (``season/taches.json``), the barème (spec §4, §5) and the
served bytes, read one call at a time through :class:`CorpusReader`. It takes every parameter (statuts
conformes, type requis, list paths, matching fields, probant fields) from ``/referentiel`` itself.

Reading, criterion by criterion, as ``/referentiel`` words it (each step is cited in the code):

- all four criteria are always evaluated (no stop at the first problem), then the precedence: a false
  criterion gives ``non_conforme``; otherwise a non-establishable one ``indeterminable``; otherwise
  ``conforme``;
- paginated lists are read from page 1 to ``page_suivante: null``, even once the entry is found;
- every field read is recorded as a (resource, JSON pointer, value) fact of its criterion; once the
  criterion's outcome is known, the facts that decide it are marked: the *terms* of the comparison that
  decides it (most decisive first: the retained end date before the start date, the statut before the
  list's), and the *links* that led from the entity to them; the rest is context.

Assertions are chosen by a stated priority (:data:`PRIORITIES`), among facts that §5.7 admits: probant
fields (the référentiel's ``champs``), and on a common list only entries that concern the entity (§5.2).
Spec §5.7 names both the terms of each deciding comparison and the link, so every variant takes both,
criterion by criterion in turn:

- ``termes``: per deciding criterion, a term, then a link, then the next term...; then the other
  criteria the same way; then context; cut at the plafond;
- ``liens``: the same with the link first (from the entity outwards, then the link read back);
- ``sobre``: only the deciding terms and the forward links, no filler (padded to the minimum if needed).

Written before the key, the rule or the evaluator was read. Not blind to the scorer, though: two
revisions followed scorings whose "faits manquants" name key facts. The first version marked every field
read as a term (2/10 and 4/10 fondé); the second marked only deciding terms but put all terms before any
link (6/10 and 7/10: links, then end dates, missing on the conforme tasks); this one interleaves them, as
§5.7 words it. The audit report gives that history and what it says about the key.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.reading.reader import CorpusReader, Fact

if TYPE_CHECKING:
    from generator.score import ScoreJson

VRAI, FAUX, NE = "etabli", "faux", "non_etablissable"
REFERENTIEL = "/referentiel"


def _escape(token: str) -> str:
    return token.replace("~", "~0").replace("/", "~1")


def pointer(*tokens: str | int) -> str:
    """RFC 6901 pointer from raw tokens."""
    return "".join("/" + _escape(str(token)) for token in tokens)


@dataclass(frozen=True)
class Consumed:
    """One field the agent read and used: the triple an assertion would state, and for which criterion."""

    resource: str
    field: str
    value: object
    criterion: str

    @property
    def triple(self) -> tuple[str, str, str]:
        return (self.resource, self.field, json.dumps(self.value, sort_keys=True))


@dataclass
class Outcome:
    """A criterion's result, the facts it read, and among them the ones that decide it.

    ``terms`` are the terms of the comparisons that decide the outcome, most decisive first; ``links``
    the links that led from the entity to them; every other fact read stays context.
    """

    criterion: str
    result: str
    why: str = ""
    facts: list[Consumed] = field(default_factory=list)
    terms: list[Consumed] = field(default_factory=list)
    links: list[Consumed] = field(default_factory=list)

    def _mark(self, marked: list[Consumed], resource: str, fields: tuple[str, ...]) -> None:
        """Mark facts already read (a field of an absent body was never read, and is skipped)."""
        for field_ in fields:
            for fact in self.facts:
                if fact.resource == resource and fact.field == field_ and fact not in marked:
                    marked.append(fact)

    def term(self, resource: str, *fields: str) -> None:
        self._mark(self.terms, resource, fields)

    def link(self, resource: str, *fields: str) -> None:
        self._mark(self.links, resource, fields)

    @property
    def context(self) -> list[Consumed]:
        return [f for f in self.facts if f not in self.terms and f not in self.links]


class Walk:
    """One task's calls (each path once, in order) and every field consumed."""

    def __init__(self, reader: CorpusReader) -> None:
        self.reader = reader
        self.calls: list[str] = []
        self.consumed: list[Consumed] = []

    def get(self, path: str) -> Any:
        if path not in self.calls:
            self.calls.append(path)
        return self.reader.fetch(path)

    def field(self, outcome: Outcome, path: str, *tokens: str | int) -> Any:
        """Read ``path``'s field at ``tokens`` for a criterion; recorded as a fact of that outcome."""
        value: Any = self.get(path)
        for token in tokens:
            value = value[token]
        fact = Consumed(path, pointer(*tokens), value, outcome.criterion)
        if fact not in outcome.facts:
            self.consumed.append(fact)
            outcome.facts.append(fact)
        return value

    def pages(self, first: str) -> Iterable[tuple[str, dict[str, Any]]]:
        """A paginated list from ``first`` to ``page_suivante: null`` (navigation, not a consumed fact)."""
        path: str | None = first
        seen: set[str] = set()
        while path is not None and path not in seen:
            seen.add(path)
            doc = self.get(path)
            yield path, doc
            path = doc.get("page_suivante") if doc.get("existe") is True else None


@dataclass(frozen=True)
class Task:
    """A public statement of season/taches.json."""

    id: str
    entite: str
    activite: str
    date_examen: str
    minimum: int
    plafond: int

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Task:
        return cls(raw["id"], raw["entite"], raw["activite"], raw["date_examen"],
                   raw["assertions"]["minimum"], raw["assertions"]["plafond"])


def load_tasks(root: Path) -> list[Task]:
    """The published statements (``season/conformite/taches.json``), as a participant downloads them."""
    raw = json.loads((root / "season" / "conformite" / "taches.json").read_text(encoding="utf-8"))
    return [Task.from_json(entry) for entry in raw["taches"]]


class Referentiel:
    """The parameters the served /referentiel states, read once per task (a participant reads it too)."""

    def __init__(self, doc: dict[str, Any]) -> None:
        criteres = {c["id"]: c for c in doc["criteres"]}
        self.statuts_entite = criteres["C1"]["parametres"]["statuts_conformes"]
        self.statuts_agrement = criteres["C2"]["parametres"]["statuts_conformes"]
        self.liste_agrees = criteres["C2"]["parametres"]["liste"]  # "/listes/agrees/<activite>/1"
        self.type_requis = criteres["C3"]["parametres"]["type_requis"]
        self.avenant_effets = criteres["C3"]["parametres"]["avenants"]
        self.declaration_requise = criteres["C4"]["parametres"]["statut_declaration_requis"]
        self.rapprochement = criteres["C4"]["parametres"]["rapprochement"]
        self.liste_mesures = criteres["C4"]["parametres"]["liste"]
        self.probant: dict[str, set[str]] = {}
        for critere in doc["criteres"]:
            for prefix, fields in critere["champs"].items():
                self.probant.setdefault(prefix, set()).update(fields)

    def is_probant(self, resource: str, field_: str) -> bool:
        for prefix, fields in self.probant.items():
            if resource.startswith(prefix):
                pattern = "/".join("<n>" if part.isdigit() else part for part in field_.split("/"))
                return pattern in fields
        return False


def in_force(debut: object, fin: object, date: str) -> bool:
    """« Toutes les bornes sont incluses » (principes.dates); ISO dates compare as strings."""
    return isinstance(debut, str) and isinstance(fin, str) and debut <= date <= fin


# --- C1 ------------------------------------------------------------------------------------------------

def critere_c1(walk: Walk, ref: Referentiel, task: Task) -> Outcome:
    """« La fiche de l'entité existe, et son statut est l'un des statuts conformes. [...] Une fiche absente
    le rend non établissable. »"""
    out = Outcome("C1", VRAI)
    if walk.field(out, task.entite, "existe") is not True:
        out.result, out.why = NE, "fiche absente"
        out.term(task.entite, "/existe")
        return out
    statut = walk.field(out, task.entite, "statut")
    out.term(task.entite, "/statut")
    out.result = VRAI if statut in ref.statuts_entite else FAUX
    out.why = f"statut {statut}"
    return out


# --- C2 ------------------------------------------------------------------------------------------------

def _agrees_entries(walk: Walk, ref: Referentiel, task: Task) -> list[tuple[str, int, dict[str, object]]]:
    """The whole list of agréés for the activity, page 1 to page_suivante: null (principes.navigation)."""
    first = ref.liste_agrees.replace("<activite>", task.activite)
    return [(path, n, entry) for path, doc in walk.pages(first)
            for n, entry in enumerate(doc.get("entrees") or [])]


class Listed:
    """The documents the fiche lists under one field (``agrements``, ``attestations``), walked as C2 and C3
    word it: a listed document is absent, or of another entity or activity/type (not retained), or
    retained. Iterating :meth:`retained` reads each in order and sorts the first two kinds aside, so a
    criterion that stops at the first satisfying document reads no further, as a literal reader does."""

    def __init__(self, walk: Walk, out: Outcome, task: Task, key: str) -> None:
        self.walk, self.out, self.task, self.key = walk, out, task, key
        self.listed: list[Any] = walk.field(out, task.entite, key) or []
        self.absent: list[tuple[int, str]] = []
        self.other: list[tuple[int, str, str]] = []  # (index, path, the field that excludes it)

    def retained(self, kind_field: str, kind: Any) -> Iterable[tuple[int, str]]:
        """(index, path) of each listed document that exists, names this entity and has ``kind``."""
        walk, out = self.walk, self.out
        for i, path in enumerate(self.listed):
            walk.field(out, self.task.entite, self.key, i)
            if walk.field(out, path, "existe") is not True:
                self.absent.append((i, path))
                continue
            owner, value = walk.field(out, path, "entite"), walk.field(out, path, kind_field)
            if owner != self.task.entite or value != kind:
                self.other.append((i, path, "/entite" if owner != self.task.entite else f"/{kind_field}"))
                continue
            yield i, path

    def explain_absent(self) -> None:
        """Each absent document: the cited reference (the fiche's link) and its body's ``existe: false``."""
        for i, path in self.absent:
            self.out.term(path, "/existe")
            self.out.link(self.task.entite, pointer(self.key, i))

    def explain_other(self) -> None:
        """Why each existing document is not retained: its entity if it is another, else its activity or
        type (the one field that excludes it)."""
        for i, path, excluding in self.other:
            self.out.term(path, excluding)
            self.out.link(self.task.entite, pointer(self.key, i))


@dataclass
class Agrement:
    """A retained agrément and what the reading found about it."""

    index: int
    path: str
    debut: Any
    fin: Any
    statut: Any
    entries: list[tuple[str, int, dict[str, Any]]]  # list entries naming it
    agreeing: bool  # every such entry has the register's entity and statut, and there is one

    def in_force(self, date: str) -> bool:
        return in_force(self.debut, self.fin, date)


def critere_c2(walk: Walk, ref: Referentiel, task: Task) -> Outcome:
    """C2 as worded: retained agréments (exist, this entity, this activity) satisfy it when in force,
    actif, and matched by a list entry of same entity and statut; otherwise non établissable if a cited
    agrément is absent or register and list contradict (for an agrément in force, principes), else faux."""
    out = Outcome("C2", FAUX)
    if walk.get(task.entite).get("existe") is not True:
        out.result, out.why = NE, "fiche absente: ses agréments ne sont pas connus"
        return out
    docs = Listed(walk, out, task, "agrements")
    entries = _agrees_entries(walk, ref, task)  # read in full whatever the outcome
    retained: list[Agrement] = []
    for i, path in docs.retained("activite", task.activite):
        debut, fin = walk.field(out, path, "date_debut"), walk.field(out, path, "date_fin_validite")
        statut = walk.field(out, path, "statut")
        matches = [(lp, n, e) for lp, n, e in entries if e.get("agrement") == path]
        for lp, n, _ in matches:
            for name in ("agrement", "entite", "statut"):
                walk.field(out, lp, "entrees", n, name)
        agreeing = bool(matches) and all(e.get("entite") == task.entite and e.get("statut") == statut
                                         for _, _, e in matches)
        agr = Agrement(i, path, debut, fin, statut, matches, agreeing)
        retained.append(agr)
        if agr.in_force(task.date_examen) and statut in ref.statuts_agrement and agreeing:
            out.result, out.why = VRAI, f"{path} en cours ({debut}..{fin}), {statut}, listé de même"
            out.term(path, "/date_fin_validite", "/statut")
            for lp, n, _ in matches:
                out.term(lp, pointer("entrees", n, "statut"))
            out.term(path, "/date_debut")
            _link_agrement(out, task, agr)
            return out
    contradicted = [a for a in retained if a.in_force(task.date_examen) and not a.agreeing]
    reasons = [f"{p} absent" for _, p in docs.absent] + [f"{p}: autre {f[1:]}" for _, p, f in docs.other]
    if docs.absent or contradicted:
        out.result = NE
        docs.explain_absent()
        for agr in contradicted:  # the register's statut against the list's, for an agrément in force
            reasons.append(f"{agr.path} en cours: registre {agr.statut}, liste "
                           f"{[e.get('statut') for _, _, e in agr.entries] or 'sans entrée'}")
            out.term(agr.path, "/statut")
            for lp, n, e in agr.entries:  # an entry of another entity is no assertion's matter (§5.2)
                if e.get("entite") == task.entite:
                    out.term(lp, pointer("entrees", n, "statut"))
            out.term(agr.path, "/date_fin_validite", "/date_debut")
            _link_agrement(out, task, agr)
    else:
        if not docs.listed:
            reasons.append("la fiche ne liste aucun agrément")
            out.term(task.entite, "/agrements")
        docs.explain_other()
        for agr in retained:  # why each retained agrément fails: dates, then statut
            if agr.fin < task.date_examen:
                out.term(agr.path, "/date_fin_validite")
            elif agr.debut > task.date_examen:
                out.term(agr.path, "/date_debut")
            else:
                out.term(agr.path, "/statut")
                for lp, n, _ in agr.entries:
                    out.term(lp, pointer("entrees", n, "statut"))
            reasons.append(f"{agr.path}: {agr.debut}..{agr.fin}, {agr.statut}")
            _link_agrement(out, task, agr)
    out.why = "; ".join(reasons)
    return out


def _link_agrement(out: Outcome, task: Task, agr: Agrement) -> None:
    """The fiche lists it, the list entry names it, and it names the entity back."""
    out.link(task.entite, pointer("agrements", agr.index))
    for lp, n, _ in agr.entries:
        out.link(lp, pointer("entrees", n, "agrement"))
    out.link(agr.path, "/entite")


# --- C3 ------------------------------------------------------------------------------------------------

@dataclass
class Attestation:
    """One retained attestation after its avenants in force: retained end date, exclusions, absences."""

    index: int
    path: str
    emission: object
    fin: object
    fin_from: tuple[str, str]  # (resource, field) of the date de fin retenue
    applied: list[tuple[int, str]] = field(default_factory=list)  # (index in /avenants, path), in force
    late: list[tuple[int, str]] = field(default_factory=list)  # listed, designating it, not yet in force
    excluded: dict[str, str] = field(default_factory=dict)  # activity -> avenant path
    absent: list[tuple[int, str]] = field(default_factory=list)


def _apply_avenants(walk: Walk, out: Outcome, ref: Referentiel, task: Task, att: Attestation) -> None:
    """« Un avenant est en vigueur [...] s'il existe, si l'attestation le liste [...], s'il désigne cette
    attestation [...], et si sa date_effet est au plus tard la date d'examen. » Applied by date_effet."""
    listed = walk.field(out, att.path, "avenants") or []
    in_vigueur: list[tuple[str, int, str]] = []
    for j, path in enumerate(listed):
        walk.field(out, att.path, "avenants", j)
        if walk.field(out, path, "existe") is not True:
            att.absent.append((j, path))
            continue
        target = walk.field(out, path, "attestation")
        effet = walk.field(out, path, "date_effet")
        if target != att.path:
            continue
        if isinstance(effet, str) and effet <= task.date_examen:
            in_vigueur.append((effet, j, path))
        else:
            att.late.append((j, path))
    for _, j, path in sorted(in_vigueur):  # by date_effet; equal dates keep the order the attestation lists
        att.applied.append((j, path))
        objet = walk.field(out, path, "objet")
        if objet != "ordre" and ref.avenant_effets.get(objet) == ref.avenant_effets["prorogation"]:
            name = ref.avenant_effets["prorogation"]  # a remise en vigueur reads the same field: same effect
            att.fin, att.fin_from = walk.field(out, path, name), (path, "/" + name)
        elif objet == "exclusion-activite":
            att.excluded[walk.field(out, path, ref.avenant_effets["exclusion-activite"])] = path


def _link_attestation(out: Outcome, task: Task, att: Attestation, avenants: Iterable[tuple[int, str]]) -> None:
    """The fiche lists it, it lists the avenants that matter; then the links back."""
    out.link(task.entite, pointer("attestations", att.index))
    for j, _ in avenants:
        out.link(att.path, pointer("avenants", j))
    out.link(att.path, "/entite")
    for _, path in avenants:
        out.link(path, "/attestation")


def critere_c3(walk: Walk, ref: Referentiel, task: Task) -> Outcome:
    """C3 as worded: a retained attestation satisfies it when in force (date_emission .. date de fin
    retenue), covering the activity, and listing no absent avenant; otherwise non établissable if a cited
    attestation is absent or a retained one lists an absent avenant, else faux."""
    out = Outcome("C3", FAUX)
    if walk.get(task.entite).get("existe") is not True:
        out.result, out.why = NE, "fiche absente: ses attestations ne sont pas connues"
        return out
    docs = Listed(walk, out, task, "attestations")
    retained: list[Attestation] = []
    for i, path in docs.retained("type", ref.type_requis):
        att = Attestation(i, path, walk.field(out, path, "date_emission"),
                          walk.field(out, path, "date_fin_validite"), (path, "/date_fin_validite"))
        _apply_avenants(walk, out, ref, task, att)
        retained.append(att)
        valid = in_force(att.emission, att.fin, task.date_examen)
        if valid and task.activite not in att.excluded and not att.absent:
            out.result, out.why = VRAI, f"{path} en cours ({att.emission}..{att.fin}), couvre {task.activite}"
            out.term(*att.fin_from)
            out.term(path, "/date_emission")
            for _, avn in att.applied:
                out.term(avn, "/date_effet", "/objet")
            _link_attestation(out, task, att, att.applied)
            return out
    reasons = [f"{p} absente" for _, p in docs.absent] + [f"{p}: autre {f[1:]}" for _, p, f in docs.other]
    unknown = [a for a in retained if a.absent]
    if docs.absent or unknown:
        out.result = NE
        docs.explain_absent()
        for att in unknown:
            reasons.append(f"{att.path} liste un avenant absent")
            for _, avn in att.absent:
                out.term(avn, "/existe")
            _link_attestation(out, task, att, att.absent)
    else:
        if not docs.listed:
            reasons.append("la fiche ne liste aucune attestation")
            out.term(task.entite, "/attestations")
        docs.explain_other()
        for att in retained:  # why each fails: the date de fin retenue, the issue date, or the exclusion
            if task.activite in att.excluded and in_force(att.emission, att.fin, task.date_examen):
                avn = att.excluded[task.activite]
                out.term(avn, "/activite_exclue", "/date_effet", "/objet")
                _link_attestation(out, task, att, [(j, p) for j, p in att.applied if p == avn])
                reasons.append(f"{att.path}: {task.activite} exclue par {avn}")
                continue
            if isinstance(att.fin, str) and att.fin < task.date_examen:
                out.term(*att.fin_from)
                for _, avn in att.late:  # a prorogation not yet in force: why the end date stands
                    out.term(avn, "/date_effet")
                _link_attestation(out, task, att, att.late + att.applied)
            else:
                out.term(att.path, "/date_emission")
                _link_attestation(out, task, att, [])
            reasons.append(f"{att.path}: {att.emission}..{att.fin}")
    out.why = "; ".join(reasons)
    return out


# --- C4 ------------------------------------------------------------------------------------------------

def critere_c4(walk: Walk, ref: Referentiel, task: Task) -> Outcome:
    """C4 as worded: every beneficiaires page to null, the whole restrictive list; a match on nom, prenoms
    and date_naissance, all three identical, makes it faux whatever the declaration; otherwise non
    établissable if a page is not complete, none is cited or one is absent; else établi."""
    out = Outcome("C4", VRAI)
    if walk.get(task.entite).get("existe") is not True:
        out.result, out.why = NE, "fiche absente"
        return out
    first = walk.field(out, task.entite, "beneficiaires")
    declared: list[tuple[str, int, dict[str, object]]] = []
    pages: list[tuple[str, tuple[str, str]]] = []  # (page, the resource and field that cite it)
    incomplete: list[str] = []
    missing: list[tuple[str, str]] = []
    path, cited_by = first, (task.entite, "/beneficiaires")
    seen: set[str] = set()
    while isinstance(path, str) and path not in seen:
        seen.add(path)
        doc = walk.get(path)
        if doc.get("existe") is not True:
            missing.append(cited_by)
            break
        pages.append((path, cited_by))
        if walk.field(out, path, "statut_declaration") != ref.declaration_requise:
            incomplete.append(path)
        declared.extend((path, n, e) for n, e in enumerate(doc.get("entrees") or []))
        path, cited_by = walk.field(out, path, "page_suivante"), (path, "/page_suivante")
    keys = ref.rapprochement  # ["nom", "prenoms", "date_naissance"]
    list_pages = list(walk.pages(ref.liste_mesures))
    unread = [lp for lp, doc in list_pages if doc.get("existe") is not True]  # "se lit en entier": it cannot
    listed = [(lp, n, e) for lp, doc in list_pages for n, e in enumerate(doc.get("entrees") or [])]
    Entry = tuple[str, int, Any]  # (page, index, entry) of a declared or listed beneficiary
    matched: list[tuple[Entry, Entry]] = []
    homonyms: list[tuple[Entry, Entry]] = []
    for bp, bn, b in declared:
        for name in keys:
            walk.field(out, bp, "entrees", bn, name)
        for lp, ln, e in listed:
            if all(e.get(k) == b.get(k) for k in keys[:-1]):  # same nom and prenoms: the comparison is made
                for name in keys:
                    walk.field(out, lp, "entrees", ln, name)
                pair = ((bp, bn, b), (lp, ln, e))
                (matched if e.get(keys[-1]) == b.get(keys[-1]) else homonyms).append(pair)
    reasons: list[str] = []
    for (bp, bn, b), (lp, ln, _) in matched:
        out.result = FAUX
        reasons.append(f"{b.get('prenoms')} {b.get('nom')} ({b.get('date_naissance')}) sur la liste ({lp})")
        for name in reversed(keys):  # both sides, date first: the term that separates a match from a homonym
            out.term(bp, pointer("entrees", bn, name))
            out.term(lp, pointer("entrees", ln, name))
    if out.result != FAUX:
        if not isinstance(first, str) or missing or incomplete or unread:
            out.result = NE  # an unreadable page of the list: /referentiel is silent, no match is established
            reasons += [f"{lp}: page de la liste absente" for lp in unread]
        for page in incomplete:
            out.term(page, "/statut_declaration")
            reasons.append(f"{page}: déclaration non complète")
        for resource, field_ in missing:
            out.term(resource, field_)
            reasons.append(f"page absente, citée par {resource}")
        if not isinstance(first, str):
            out.term(task.entite, "/beneficiaires")
            reasons.append("la fiche ne cite aucune page")
        if out.result == VRAI:
            for page, _ in pages:
                out.term(page, "/statut_declaration")
        for (bp, bn, b), (lp, ln, e) in homonyms:  # the comparison that says it is not a match
            out.term(bp, pointer("entrees", bn, keys[-1]))
            out.term(lp, pointer("entrees", ln, keys[-1]))
            reasons.append(f"homonyme {b.get('prenoms')} {b.get('nom')}: {b.get('date_naissance')} "
                           f"≠ {e.get('date_naissance')}")
    for _, (resource, field_) in pages:
        out.link(resource, field_)
    out.why = "; ".join(reasons) or f"{len(declared)} bénéficiaires, aucun sur la liste"
    return out


CRITERIA = (critere_c1, critere_c2, critere_c3, critere_c4)


@dataclass
class Reading:
    """The agent's whole reading of one task."""

    task: Task
    verdict: str
    outcomes: list[Outcome]
    calls: list[str]
    consumed: list[Consumed]

    @property
    def deciding(self) -> list[Outcome]:
        """The criteria that decide the verdict under the precedence."""
        wanted = {"non_conforme": FAUX, "indeterminable": NE, "conforme": VRAI}[self.verdict]
        return [o for o in self.outcomes if o.result == wanted]


def read_task(reader: CorpusReader, task: Task) -> Reading:
    """Read /referentiel, evaluate the four criteria (all of them), apply the precedence."""
    walk = Walk(reader)
    ref = Referentiel(walk.get(REFERENTIEL))
    outcomes = [criterion(walk, ref, task) for criterion in CRITERIA]
    results = {o.result for o in outcomes}
    verdict = "non_conforme" if FAUX in results else "indeterminable" if NE in results else "conforme"
    return Reading(task, verdict, outcomes, walk.calls, walk.consumed)


# --- choosing assertions ---------------------------------------------------------------------------------

def _round_robin(queues: list[list[Consumed]]) -> list[Consumed]:
    out: list[Consumed] = []
    queues = [list(q) for q in queues]
    while any(queues):
        for q in queues:
            if q:
                out.append(q.pop(0))
    return out


def _interleave(first: list[Consumed], second: list[Consumed]) -> list[Consumed]:
    out: list[Consumed] = []
    for i in range(max(len(first), len(second))):
        out += first[i:i + 1] + second[i:i + 1]
    return out


def _criterion_rounds(reading: Reading, links_first: bool) -> list[Consumed]:
    """§5.7 asks, for each deciding criterion, the terms of its comparison and the link that attaches one
    resource to another. Each deciding criterion in turn gives one fact per round (variant "termes": its most
    decisive term, then its first link, then its next term...; variant "liens": the same queue starting from
    the entity, link first); then the other criteria the same way; then context."""
    deciding = reading.deciding
    rest = [o for o in reading.outcomes if o not in deciding]
    ordered: list[Consumed] = []
    for group in (deciding, rest):
        ordered += _round_robin([_interleave(o.links, o.terms) if links_first else _interleave(o.terms, o.links)
                                 for o in group])
    return ordered + _round_robin([o.context for o in reading.outcomes])


def _terms_first(reading: Reading) -> list[Consumed]:
    return _criterion_rounds(reading, links_first=False)


def _links_first(reading: Reading) -> list[Consumed]:
    return _criterion_rounds(reading, links_first=True)


def _back_link(fact: Consumed) -> bool:
    """A link read from the cited document's side (its /entite or /attestation): the same link again."""
    return (fact.resource.startswith(("/agrements/", "/attestations/")) and fact.field == "/entite") or \
        (fact.resource.startswith("/avenants/") and fact.field == "/attestation")


def _deciding_only(reading: Reading) -> list[Consumed]:
    """Variant "sobre": only what decides — each deciding criterion's terms and its links from the entity
    outwards (no link repeated from the other side), in the order of "termes"; nothing else unless the
    minimum asks for more (see :func:`choose`)."""
    return _round_robin([_interleave(o.terms, [f for f in o.links if not _back_link(f)])
                         for o in reading.deciding])


PRIORITIES = {"termes": _terms_first, "liens": _links_first, "sobre": _deciding_only}


def _beneficiary_names(reading: Reading) -> set[tuple[object, object]]:
    """(nom, prenoms) of every declared bénéficiaire the reading met (§5.2: what a restrictive-list entry
    must carry to concern the entity)."""
    found: dict[tuple[str, str], dict[str, object]] = {}
    for fact in reading.consumed:
        if fact.resource.startswith("/beneficiaires/") and fact.field.startswith("/entrees/"):
            _, _, n, name = fact.field.split("/")
            found.setdefault((fact.resource, n), {})[name] = fact.value
    return {(e.get("nom"), e.get("prenoms")) for e in found.values()}


def admissible(fact: Consumed, reading: Reading, ref: Referentiel, reader: CorpusReader) -> bool:
    """What §5.7 admits: a probant field (the référentiel's champs); on a common list, only an entry that
    concerns the entity (§5.2): its entite for the agréés, a bénéficiaire's nom and prenoms otherwise."""
    if not ref.is_probant(fact.resource, fact.field):
        return False
    if fact.resource.startswith(("/listes/", "/mesures-restrictives/")):
        entry = reader.fetch(fact.resource)["entrees"][int(fact.field.split("/")[2])]
        if fact.resource.startswith("/listes/agrees/"):
            return bool(entry.get("entite") == reading.task.entite)
        return (entry.get("nom"), entry.get("prenoms")) in _beneficiary_names(reading)
    return True


def own(fact: Consumed) -> bool:
    """A resource that concerns the entity alone (§5.2), not a common list."""
    return not fact.resource.startswith(("/listes/", "/mesures-restrictives/"))


def choose(reading: Reading, ref: Referentiel, reader: CorpusReader,
           priority: str) -> list[tuple[str, str, object]]:
    """Up to the plafond, in the variant's order, admissible and distinct; at least half the minimum
    (rounded up) on own resources (§5.7), by swapping the last common-list facts for own ones if needed.
    A variant whose order stops early ("sobre") is padded up to the minimum in the order of "termes"."""
    task = reading.task
    ordered = PRIORITIES[priority](reading)
    chosen: dict[tuple[str, str, str], Consumed] = {}
    for fact in [*ordered, *_terms_first(reading)]:
        if fact.triple not in chosen and admissible(fact, reading, ref, reader):
            chosen[fact.triple] = fact
    wanted = len({f.triple for f in ordered} & set(chosen))
    facts = list(chosen.values())
    size = min(task.plafond, max(wanted, task.minimum))
    selected, spare = facts[:size], [f for f in facts[size:] if own(f)]
    for i in range(len(selected) - 1, -1, -1):
        if sum(map(own, selected)) >= math.ceil(task.minimum / 2) or not spare:
            break
        if not own(selected[i]):
            selected[i] = spare.pop(0)
    return [(f.resource, f.field, f.value) for f in selected]


def statement_task(statement: Any) -> Task:
    """The public statement as the agent takes it: entity, activity, date, bounds (nothing else)."""
    return Task(statement.task.id, statement.task.entite, statement.task.activite, statement.task.date_examen,
                statement.minimum, statement.plafond)


def claims(reader: CorpusReader, task: Task, priority: str) -> tuple[str, list[Fact]]:
    """(verdict, assertions) of this agent for one task."""
    reading = read_task(reader, task)
    ref = Referentiel(reader.fetch(REFERENTIEL))
    return reading.verdict, [Fact(*triple) for triple in choose(reading, ref, reader, priority)]


def panel_builder(priority: str) -> Callable[[Any], tuple[str, list[Fact]]]:
    """A builder for ``corpus check-season``'s panel: it takes the panel's context but reads only the
    public statement and the corpus reader from it, never the reference evaluation."""
    def build(ctx: Any) -> tuple[str, list[Fact]]:
        return claims(ctx.reader, statement_task(ctx.report.statement), priority)
    return build


INDEPENDENT: dict[str, Callable[[Any], tuple[str, list[Fact]]]] = {
    f"independant-{priority}": panel_builder(priority) for priority in PRIORITIES}

# Tasks an independent agent may fail without failing the panel, each citing the season defect (kind b, c
# or d of the audit) that makes an honest agent fail there: agent name -> task id -> finding. Empty: on
# season 1 as audited, both agents score 10/10 with no overclaim and nothing is excused. Add an entry only
# with the finding it cites; the panel still prints the task as failed.
EXCEPTIONS: dict[str, dict[str, str]] = {}


def submissions(root: Path, priority: str, *, build_dir: Path | None = None) \
        -> tuple[list[dict[str, Any]], list[Reading]]:
    """This agent's §4 submissions for every task of the season, and its readings (for the report)."""
    from generator.score import make_submission  # the scorer's public helper, as a participant's tool
    from generator.tracks.loader import track_named  # the served path shapes, as the server knows them

    track = track_named(root, "conformite")
    reader = CorpusReader(build_dir or root / track.trees.build, track)
    ref = Referentiel(reader.fetch(REFERENTIEL))
    out, readings = [], []
    for task in load_tasks(root):
        reading = read_task(reader, task)
        readings.append(reading)
        out.append(make_submission(root, task.id, reading.verdict, choose(reading, ref, reader, priority),
                                   piste="conformite",
                                   agent_did=f"did:key:z6MkIndependent{priority.capitalize()}"))
    return out, readings


def score(root: Path, priority: str) -> ScoreJson:
    """The corpus-score/1 report of this agent's submissions."""
    from generator.score import score_submissions
    from generator.tracks.loader import track_named

    subs, _ = submissions(root, priority)
    return score_submissions(subs, root=root, track=track_named(root, "conformite"))
