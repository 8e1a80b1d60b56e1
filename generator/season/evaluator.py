"""The reference evaluator: ``/referentiel`` applied to the built bytes, and the shortcuts beside it.

A :class:`Strategy` with every flag off is the référentiel read correctly. Each shortcut turns on one
flag: the reading a trap is designed to catch (spec §5.4). The same code serves both, so a shortcut
differs from the reference by exactly the step it skips.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from generator import resource_types as col
from generator.season.reader import MISSING, CorpusReader, Fact, Session

VRAI, FAUX, NON_ETABLI = "etabli", "faux", "non_etablissable"


@dataclass(frozen=True)
class Strategy:
    """How a reader applies the référentiel; all flags off is the reference reading."""

    name: str
    label: str
    assume_cited_exist: bool = False  # P1: a cited reference with existe: false is taken as existing
    ignore_dates: bool = False  # P2: statuses read, validity dates ignored
    single_register: bool = False  # P3: the agrément register read, the liste des agréés not
    first_only: bool = False  # P4: first page of each list, first resource of each reference list
    names_only: bool = False  # P5: a homonym matched on nom and prénoms alone
    ignore_avenants: bool = False  # P5: the attestation's end date taken as final
    avenants_any_date: bool = False  # P5: a listed avenant applied before its date_effet


REFERENCE = Strategy("reference", "référentiel appliqué tel quel")
FAMILY_SHORTCUTS: dict[str, Strategy] = {
    "P1": Strategy("P1-reference-supposee", "une référence citée est supposée exister",
                   assume_cited_exist=True),
    "P2": Strategy("P2-statut-sans-dates", "les statuts sont lus, les dates de validité ignorées",
                   ignore_dates=True),
    "P3": Strategy("P3-un-seul-registre", "le registre des agréments est lu, la liste des agréés non",
                   single_register=True),
    "P4": Strategy("P4-premiere-reponse", "seules la première page et la première ressource sont lues",
                   first_only=True),
}
P5_SHORTCUTS: dict[str, Strategy] = {
    "homonymie-sur-les-noms": Strategy("P5-homonymie-sur-les-noms",
                                       "un homonyme est rapproché sur le nom et les prénoms seuls",
                                       names_only=True),
    "date-de-fin-definitive": Strategy("P5-date-de-fin-definitive",
                                       "la date de fin de l'attestation est prise pour définitive, sans "
                                       "lire les avenants", ignore_avenants=True),
    "avenant-avant-sa-date-d-effet": Strategy("P5-avenant-avant-sa-date-d-effet",
                                              "un avenant listé est appliqué avant sa date d'effet",
                                              avenants_any_date=True),
}
ALL_SHORTCUTS: tuple[Strategy, ...] = (*FAMILY_SHORTCUTS.values(), *P5_SHORTCUTS.values())


@dataclass(frozen=True)
class Task:
    """What the evaluator needs of a public task statement."""

    id: str
    entite: str
    activite: str
    date_examen: str


@dataclass
class CriterionResult:
    id: str
    etat: str
    motif: str
    faits: list[Fact] = field(default_factory=list)


@dataclass
class Evaluation:
    task: Task
    strategy: Strategy
    verdict: str
    criteres: list[CriterionResult]
    calls: list[str]
    consumed: set[tuple[str, str, str]]

    @property
    def deciding(self) -> list[CriterionResult]:
        """The criteria that give the verdict under the precedence rule."""
        wanted = {"non_conforme": FAUX, "indeterminable": NON_ETABLI}.get(self.verdict)
        return [c for c in self.criteres if wanted is None or c.etat == wanted]


def _params(referentiel: dict[str, Any], criterion: str) -> dict[str, Any]:
    return next(c["parametres"] for c in referentiel["criteres"] if c["id"] == criterion)


class _Run:
    """One evaluation: the task, the strategy, the session (calls, consumption) and the parameters."""

    def __init__(self, task: Task, strategy: Strategy, session: Session, referentiel: dict[str, Any]):
        self.task, self.s, self.session, self.ref = task, strategy, session, referentiel

    def read(self, criterion: str, path: str, pointer: str, facts: list[Fact] | None = None) -> Any:
        value = self.session.read(criterion, path, pointer)
        if facts is not None and value is not MISSING:
            facts.append(Fact(path, pointer, value))
        return value

    def in_force(self, start: Any, end: Any) -> bool:
        day = self.task.date_examen
        return self.s.ignore_dates or (isinstance(start, str) and isinstance(end, str) and start <= day <= end)

    def references(self, criterion: str, path: str, key: str) -> list[tuple[str, str]]:
        """The references a document lists under ``key``, as (pointer of the link, target path)."""
        items = self.read(criterion, path, f"/{key}")
        if not isinstance(items, list):
            return []
        chosen = items[:1] if self.s.first_only else items
        return [(f"/{key}/{i}", self.read(criterion, path, f"/{key}/{i}")) for i in range(len(chosen))]

    def pages(self, first: str, next_pointer_consumed: str | None) -> Iterator[str]:
        """Pages of a list from its first one, fetched as the caller goes (so a search stops early);
        ``page_suivante`` is consumed only where it is probant (bénéficiaires), else navigated."""
        seen: set[str] = set()
        path: Any = first
        while isinstance(path, str) and path not in seen:
            seen.add(path)
            yield path
            if self.s.first_only:
                return
            path = (self.session.read(next_pointer_consumed, path, "/page_suivante") if next_pointer_consumed
                    else self.session.navigate(path, "/page_suivante"))

    # -- C1 ----------------------------------------------------------------------------------------
    def c1(self) -> CriterionResult:
        facts: list[Fact] = []
        entity = self.task.entite
        if self.read("C1", entity, "/existe", facts) is not True:
            return CriterionResult("C1", NON_ETABLI, "la fiche de l'entité est absente du corpus", facts)
        statut = self.read("C1", entity, "/statut", facts)
        if statut in _params(self.ref, "C1")["statuts_conformes"]:
            return CriterionResult("C1", VRAI, f"statut {statut}", facts)
        return CriterionResult("C1", FAUX, f"statut {statut}", facts)

    # -- C2 ----------------------------------------------------------------------------------------
    def _liste_entry(self, agrement: str, facts: list[Fact]) -> tuple[str, Any, Any] | None:
        first = _params(self.ref, "C2")["liste"].replace("<activite>", self.task.activite)
        for page in self.pages(first, None):
            entries = self.session.navigate(page, "/entrees")
            for k in range(len(entries) if isinstance(entries, list) else 0):
                if self.read("C2", page, f"/entrees/{k}/agrement") == agrement:
                    facts.append(Fact(page, f"/entrees/{k}/agrement", agrement))
                    return (page, self.read("C2", page, f"/entrees/{k}/entite", facts),
                            self.read("C2", page, f"/entrees/{k}/statut", facts))
        return None

    def cited(self, criterion: str, key: str, unknown: list[str],
              all_facts: list[Fact]) -> Iterator[tuple[str, list[Fact], bool]]:
        """The resources the entity lists under ``key``, with the facts of the link, and whether the P1
        shortcut assumed it (it exists: False). An absent one is noted in ``unknown`` and skipped."""
        for link, ref in self.references(criterion, self.task.entite, key):
            facts = [Fact(self.task.entite, link, ref)]
            existe = self.read(criterion, ref, "/existe")
            if existe is True:
                yield ref, facts, False
                continue
            facts.append(Fact(ref, "/existe", existe))
            if self.s.assume_cited_exist:
                yield ref, facts, True
                continue
            unknown.append(f"{ref} est cité mais absent")
            all_facts += facts

    def c2(self) -> CriterionResult:
        unknown: list[str] = []
        all_facts: list[Fact] = []
        for ref, facts, assumed in self.cited("C2", "agrements", unknown, all_facts):
            if assumed:
                return CriterionResult("C2", VRAI, f"{ref} supposé exister et convenir", facts)
            if self.read("C2", ref, "/entite", facts) != self.task.entite or \
                    self.read("C2", ref, "/activite", facts) != self.task.activite:
                continue
            start = self.read("C2", ref, "/date_debut", facts)
            end = self.read("C2", ref, "/date_fin_validite", facts)
            if not self.in_force(start, end):
                all_facts += facts
                continue
            statut = self.read("C2", ref, "/statut", facts)
            if not self.s.single_register:
                entry = self._liste_entry(ref, facts)
                if entry is None or entry[1] != self.task.entite or entry[2] != statut:
                    seen = "aucune entrée" if entry is None else f"entité {entry[1]}, statut {entry[2]}"
                    unknown.append(f"{ref} : registre au statut {statut}, liste des agréés : {seen}")
                    all_facts += facts
                    continue
            if statut in _params(self.ref, "C2")["statuts_conformes"]:
                return CriterionResult("C2", VRAI, f"{ref} actif et en cours de validité", facts)
            all_facts += facts
        if unknown:
            return CriterionResult("C2", NON_ETABLI, "; ".join(unknown), all_facts)
        return CriterionResult("C2", FAUX, "aucun agrément actif et en cours de validité pour l'activité",
                               all_facts)

    # -- C3 ----------------------------------------------------------------------------------------
    def _avenants(self, attestation: str, facts: list[Fact]) -> tuple[Any, bool, bool]:
        """Apply the avenants of one attestation: (end date kept, activity excluded, an avenant unknown)."""
        end = self.read("C3", attestation, "/date_fin_validite", facts)
        if self.s.ignore_avenants:
            return end, False, False
        applicable, unknown = [], False
        for link, ref in self.references("C3", attestation, "avenants"):
            facts.append(Fact(attestation, link, ref))
            existe = self.read("C3", ref, "/existe")
            if existe is not True:
                facts.append(Fact(ref, "/existe", existe))
                unknown = unknown or not self.s.assume_cited_exist
                continue
            if self.read("C3", ref, "/attestation") == attestation:
                applicable.append((self.read("C3", ref, "/date_effet"), ref))
        excluded = False
        for effet, ref in sorted(applicable, key=lambda item: item[0]):
            if not self.s.avenants_any_date and effet > self.task.date_examen:
                facts.append(Fact(ref, "/date_effet", effet))  # not in force yet: that is a fact too
                continue
            objet = self.read("C3", ref, "/objet")
            if objet == "prorogation":
                facts.append(Fact(ref, "/date_effet", effet))
                end = self.read("C3", ref, "/nouvelle_date_fin", facts)
            elif objet == "exclusion-activite" and \
                    self.read("C3", ref, "/activite_exclue") == self.task.activite:
                facts += [Fact(ref, "/date_effet", effet), Fact(ref, "/activite_exclue", self.task.activite)]
                excluded = True
        return end, excluded, unknown

    def c3(self) -> CriterionResult:
        params = _params(self.ref, "C3")
        unknown: list[str] = []
        all_facts: list[Fact] = []
        for ref, facts, assumed in self.cited("C3", "attestations", unknown, all_facts):
            if assumed:
                return CriterionResult("C3", VRAI, f"{ref} supposée exister et convenir", facts)
            if self.read("C3", ref, "/entite") != self.task.entite or \
                    self.read("C3", ref, "/type") != params["type_requis"]:
                continue
            start = self.read("C3", ref, "/date_emission", facts)
            end, excluded, avenant_unknown = self._avenants(ref, facts)
            if avenant_unknown:
                unknown.append(f"{ref} liste un avenant absent")
            elif not excluded and self.in_force(start, end):
                return CriterionResult("C3", VRAI, f"{ref} en cours de validité jusqu'au {end}, activité "
                                       "couverte", facts)
            all_facts += facts
        if unknown:
            return CriterionResult("C3", NON_ETABLI, "; ".join(unknown), all_facts)
        return CriterionResult("C3", FAUX, "aucune attestation en cours de validité ne couvre l'activité",
                               all_facts)

    # -- C4 ----------------------------------------------------------------------------------------
    def c4(self) -> CriterionResult:
        params = _params(self.ref, "C4")
        facts: list[Fact] = []
        first = self.read("C4", self.task.entite, "/beneficiaires", facts)
        if not isinstance(first, str):
            return CriterionResult("C4", NON_ETABLI, "la fiche ne cite aucune page de bénéficiaires", facts)
        people: list[tuple[str, int, Any, Any, Any]] = []
        for page in self.pages(first, "C4"):
            statut = self.read("C4", page, "/statut_declaration")
            if statut is MISSING:
                return CriterionResult("C4", NON_ETABLI, f"{page} est absente", facts)
            if statut != params["statut_declaration_requis"]:
                facts.append(Fact(page, "/statut_declaration", statut))
                return CriterionResult("C4", NON_ETABLI, f"déclaration {statut} ({page})", facts)
            entries = self.session.navigate(page, "/entrees")
            for k in range(len(entries) if isinstance(entries, list) else 0):
                people.append((page, k, *(self.read("C4", page, f"/entrees/{k}/{f}")
                                          for f in ("nom", "prenoms", "date_naissance"))))
        for page in self.pages(params["liste"], None):
            entries = self.session.navigate(page, "/entrees")
            for k in range(len(entries) if isinstance(entries, list) else 0):
                nom, prenoms = (self.read("C4", page, f"/entrees/{k}/{f}") for f in ("nom", "prenoms"))
                for bpage, bk, bnom, bprenoms, bnaissance in people:
                    if (bnom, bprenoms) != (nom, prenoms):
                        continue
                    naissance = self.read("C4", page, f"/entrees/{k}/date_naissance")
                    if self.s.names_only or naissance == bnaissance:
                        facts += [Fact(bpage, f"/entrees/{bk}/{f}", v) for f, v in
                                  (("nom", bnom), ("prenoms", bprenoms), ("date_naissance", bnaissance))]
                        facts += [Fact(page, f"/entrees/{k}/{f}", v) for f, v in
                                  (("nom", nom), ("prenoms", prenoms), ("date_naissance", naissance))]
                        return CriterionResult("C4", FAUX, f"{bprenoms} {bnom} figure sur {page}", facts)
        return CriterionResult("C4", VRAI, f"{len(people)} bénéficiaire(s), aucun sur la liste", facts)


def evaluate(task: Task, reader: CorpusReader, strategy: Strategy = REFERENCE) -> Evaluation:
    """Apply the served référentiel to the task; stop at the first criterion established false."""
    referentiel = reader.fetch(col.REFERENTIEL_PATH)  # read once per season: not a call of the task
    session = Session(reader)
    run = _Run(task, strategy, session, referentiel)
    results: list[CriterionResult] = []
    for criterion in (run.c1, run.c2, run.c3, run.c4):
        results.append(criterion())
        if results[-1].etat == FAUX or not results[0].faits or results[0].faits[0].valeur is not True:
            break  # a criterion established false decides; without the entity's file nothing else can
    states = {r.etat for r in results}
    verdict = "non_conforme" if FAUX in states else "indeterminable" if NON_ETABLI in states else "conforme"
    return Evaluation(task, strategy, verdict, results, session.calls, session.consumed)
