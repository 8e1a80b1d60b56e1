"""The conformité evaluator: ``/referentiel`` applied to the built bytes, and the shortcuts beside it.

A :class:`Strategy` with every flag off is the référentiel read correctly. Each shortcut turns on one
flag: the reading a trap is designed to catch (spec §5.4). The same code serves both, so a shortcut
differs from the reference by exactly the step it skips.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from generator.reading.evaluation import FAUX, NON_ETABLI, VRAI, CriterionResult, Evaluation
from generator.reading.evaluation import Strategy as BaseStrategy
from generator.reading.reader import MISSING, CorpusReader, Fact, Session
from generator.reading.task import Task

__all__ = ["FAUX", "NON_ETABLI", "VRAI", "CriterionResult", "Evaluation", "Task"]


@dataclass(frozen=True)
class Strategy(BaseStrategy):
    """How a reader applies the référentiel; all flags off is the reference reading."""

    assume_cited_exist: bool = False  # P1: a cited reference with existe: false is taken as existing
    ignore_dates: bool = False  # P2: statuses read, validity dates ignored
    single_register: bool = False  # P3: the agrément register read, the liste des agréés not
    first_only: bool = False  # P4: first page of each list, first resource of each reference list
    names_only: bool = False  # P5: a homonym matched on nom and prénoms alone
    ignore_avenants: bool = False  # P5: the attestation's end date taken as final
    avenants_any_date: bool = False  # P5: a listed avenant applied before its date_effet
    stop_at_first_problem: bool = False  # the first criterion not established gives the verdict
    bounds_excluded: bool = False  # a document is taken as lapsed on its end date (bounds excluded)
    skip_entity_status: bool = False  # C1 not read: documents in order are taken for a compliant entity


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
# Named readings a task's key may designate (`raccourci`): P5's common-sense readings, and readings
# that a trap of another family also catches (precedence: stopping at the first problem).
NAMED_SHORTCUTS: dict[str, Strategy] = {
    "homonymie-sur-les-noms": Strategy("P5-homonymie-sur-les-noms",
                                       "un homonyme est rapproché sur le nom et les prénoms seuls",
                                       names_only=True),
    "date-de-fin-definitive": Strategy("P5-date-de-fin-definitive",
                                       "la date de fin de l'attestation est prise pour définitive, sans "
                                       "lire les avenants", ignore_avenants=True),
    "avenant-avant-sa-date-d-effet": Strategy("P5-avenant-avant-sa-date-d-effet",
                                              "un avenant listé est appliqué avant sa date d'effet",
                                              avenants_any_date=True),
    "bornes-exclues": Strategy("P5-bornes-exclues", "un document est tenu pour échu le jour de sa date "
                               "de fin", bounds_excluded=True),
    "situation-de-l-entite-non-lue": Strategy("P5-situation-de-l-entite-non-lue",
                                              "des documents en ordre font conclure à la conformité sans "
                                              "lire le statut de l'entité", skip_entity_status=True),
    "arret-au-premier-probleme": Strategy("arret-au-premier-probleme", "le premier critère non établi "
                                          "donne le verdict, sans lire les suivants",
                                          stop_at_first_problem=True),
}
P5_SHORTCUTS = {k: v for k, v in NAMED_SHORTCUTS.items() if v.name.startswith("P5-")}


def _params(referentiel: dict[str, Any], criterion: str) -> dict[str, Any]:
    return next(c["parametres"] for c in referentiel["criteres"] if c["id"] == criterion)


def _end_replacing(referentiel: dict[str, object]) -> set[str]:
    """The avenant objets that replace the end date: C3's ``parametres.avenants`` gives each the field it
    reads, and every objet reading prorogation's field (a remise en vigueur too) sets the date de fin retenue."""
    effets = _params(referentiel, "C3")["avenants"]
    return {objet for objet, champ in effets.items() if objet != "ordre" and champ == effets["prorogation"]}


def _entries(doc_entries: object) -> range:
    return range(len(doc_entries) if isinstance(doc_entries, list) else 0)


class _Run:
    """One evaluation: the task, the strategy, the session (calls, consumption) and the parameters.

    Each criterion returns its state and the facts that found it under the published rule (see
    :mod:`generator.reading.founding`): the links that attach each decisive resource to the entity, and
    the corpus terms of the comparison that decides.
    """

    def __init__(self, task: Task, strategy: Strategy, session: Session, referentiel: dict[str, object]):
        self.task, self.s, self.session, self.ref = task, strategy, session, referentiel

    def read(self, criterion: str, path: str, pointer: str) -> Any:
        return self.session.read(criterion, path, pointer)

    def fact(self, criterion: str, path: str, pointer: str) -> Fact:
        return Fact(path, pointer, self.read(criterion, path, pointer))

    def starts(self, start: object) -> bool:
        return self.s.ignore_dates or (isinstance(start, str) and start <= self.task.date_examen)

    def lasts(self, end: object) -> bool:
        day = self.task.date_examen
        return self.s.ignore_dates or (isinstance(end, str) and (day < end if self.s.bounds_excluded
                                                                  else day <= end))

    def references(self, criterion: str, path: str, key: str) -> list[tuple[str, str]]:
        """The references a document lists under ``key``, as (pointer of the link, target path)."""
        items = self.read(criterion, path, f"/{key}")
        if not isinstance(items, list):
            return []
        chosen = items[:1] if self.s.first_only else items
        return [(f"/{key}/{i}", self.read(criterion, path, f"/{key}/{i}")) for i in range(len(chosen))]

    def pages(self, first: str, next_pointer_consumed: str | None) -> list[str]:
        """Every page of a list from its first one to ``page_suivante: null`` (a literal reader reads
        them all); ``page_suivante`` is consumed only where it is probant (bénéficiaires)."""
        seen: list[str] = []
        path: object = first
        while isinstance(path, str) and path not in seen:
            seen.append(path)
            if self.s.first_only:
                break
            path = (self.session.read(next_pointer_consumed, path, "/page_suivante") if next_pointer_consumed
                    else self.session.navigate(path, "/page_suivante"))
        return seen

    # -- C1 ----------------------------------------------------------------------------------------
    def c1(self) -> CriterionResult:
        entity = self.task.entite
        existe = self.fact("C1", entity, "/existe")
        if existe.valeur is not True:
            return CriterionResult("C1", NON_ETABLI, "la fiche de l'entité est absente du corpus", [existe])
        if self.s.skip_entity_status:
            return CriterionResult("C1", VRAI, "statut non lu", [])
        statut = self.fact("C1", entity, "/statut")
        state = VRAI if statut.valeur in _params(self.ref, "C1")["statuts_conformes"] else FAUX
        return CriterionResult("C1", state, f"statut {statut.valeur}", [statut])

    # -- C2 ----------------------------------------------------------------------------------------
    def liste_pages(self) -> list[str]:
        """The liste des agréés of the activity, every page read (a literal reader of C2 reads it whole,
        whatever the agréments turn out to be)."""
        return self.pages(_params(self.ref, "C2")["liste"].replace("<activite>", self.task.activite), None)

    def absent_pages(self, pages: list[str]) -> list[str]:
        """Pages of a common list that answer existe: false (principes.navigation: C2 and C4 say what
        they leave unknown). Reaching a page is navigation: no fact of a common list's page is asked."""
        return [p for p in pages if self.session.navigate(p, "/existe") is not True]

    def _liste_entry(self, agrement: str) -> tuple[str, int] | None:
        """The entry of the liste des agréés for ``agrement``: (page, index), every page read."""
        found = None
        for page in self.liste_pages():
            entries = self.session.navigate(page, "/entrees")
            for k in _entries(entries):
                if self.read("C2", page, f"/entrees/{k}/agrement") == agrement and found is None:
                    found = (page, k)
        return found

    def cited(self, criterion: str, key: str, unknown: list[tuple[str, list[Fact]]]) \
            -> Iterator[tuple[str, Fact, bool]]:
        """The resources the entity lists under ``key`` with the link fact, and whether the P1 shortcut
        assumed it (it answers existe: false). An absent one is noted in ``unknown`` and skipped."""
        for link, ref in self.references(criterion, self.task.entite, key):
            link_fact = Fact(self.task.entite, link, ref)
            existe = self.fact(criterion, ref, "/existe")
            if existe.valeur is True:
                yield ref, link_fact, False
            elif self.s.assume_cited_exist:
                yield ref, link_fact, True
            else:
                unknown.append((f"{ref} est cité mais absent", [link_fact, existe]))

    def excludes(self, criterion: str, ref: str, link: Fact, kind: str, wanted: str,
                 others: list[Fact]) -> bool:
        """Whether the cited ``ref`` is not retained (another entity, else another ``kind``: /entite is read
        first, and ``kind`` only when it is the task's entity); if so, its link and the one field that
        excludes it go to ``others``, the facts of a false criterion that retains no document."""
        for field, value in (("/entite", self.task.entite), (f"/{kind}", wanted)):
            read = self.fact(criterion, ref, field)
            if read.valeur != value:
                others += [link, read]
                return True
        return False

    def _result(self, criterion: str, key: str, unknown: list[tuple[str, list[Fact]]],
                failed: list[tuple[str, list[Fact]]], others: list[Fact], none_motif: str) -> CriterionResult:
        """Not establishable on the unknown documents; else false on the retained ones that fail, or,
        when none is retained, on each cited document's excluding field (none cited: the whole array)."""
        if unknown:
            return CriterionResult(criterion, NON_ETABLI, "; ".join(m for m, _ in unknown),
                                   [f for _, facts in unknown for f in facts])
        if failed:
            return CriterionResult(criterion, FAUX, "; ".join(m for m, _ in failed),
                                   [f for _, facts in failed for f in facts])
        return CriterionResult(criterion, FAUX, none_motif, others or [self.fact(criterion, self.task.entite,
                                                                                 f"/{key}")])

    def c2(self) -> CriterionResult:
        unknown: list[tuple[str, list[Fact]]] = []
        failed: list[tuple[str, list[Fact]]] = []
        others: list[Fact] = []
        for ref, link, assumed in self.cited("C2", "agrements", unknown):
            if assumed:
                return CriterionResult("C2", VRAI, f"{ref} supposé exister et convenir", [link])
            if self.excludes("C2", ref, link, "activite", self.task.activite, others):
                continue
            start, end = self.fact("C2", ref, "/date_debut"), self.fact("C2", ref, "/date_fin_validite")
            if not self.starts(start.valeur):
                failed.append((f"{ref} ne commence que le {start.valeur}", [link, start]))
                continue
            if not self.lasts(end.valeur):
                failed.append((f"{ref} a pris fin le {end.valeur}", [link, end]))
                continue
            statut = self.fact("C2", ref, "/statut")
            if not self.s.single_register:
                entry = self._liste_entry(ref)
                absent = self.absent_pages(self.liste_pages())
                if entry is None and absent:
                    unknown.append((f"{ref} : la liste des agréés ne porte pas d'entrée sur ses pages lues, "
                                    f"{absent[0]} est absente", [link, statut]))
                    continue
                if entry is None:
                    unknown.append((f"{ref} : la liste des agréés ne porte pas d'entrée", [link, statut]))
                    continue
                page, k = entry
                entite = self.fact("C2", page, f"/entrees/{k}/entite")
                listed = self.fact("C2", page, f"/entrees/{k}/statut")
                if entite.valeur != self.task.entite or listed.valeur != statut.valeur:
                    # An entry of another entity is no assertion's matter (spec §5.2): the registre's
                    # statut alone, as when the list holds no entry for the agrément.
                    entry_facts = [Fact(page, f"/entrees/{k}/agrement", ref), listed] \
                        if entite.valeur == self.task.entite else []
                    unknown.append((f"{ref} : registre au statut {statut.valeur}, liste des agréés : "
                                    f"entité {entite.valeur}, statut {listed.valeur}",
                                    [link, statut, *entry_facts]))
                    continue
            if statut.valeur not in _params(self.ref, "C2")["statuts_conformes"]:
                failed.append((f"{ref} au statut {statut.valeur}", [link, statut]))
                continue
            return CriterionResult("C2", VRAI, f"{ref} actif et en cours de validité jusqu'au {end.valeur}",
                                   [link, end])
        if not self.s.single_register:
            self.liste_pages()  # a literal reader of C2 reads the list whole, whatever the agréments are
        return self._result("C2", "agrements", unknown, failed, others,
                            "aucun agrément cité ne porte sur l'activité")

    # -- C3 ----------------------------------------------------------------------------------------
    def _avenants(self, attestation: str) -> tuple[Fact, list[Fact], list[Fact], list[Fact], list[Fact]]:
        """Apply the avenants of one attestation. Returns the retained end date, the facts it rests on
        (the prorogation's link and date_effet), the facts of an exclusion of the activity in force,
        the facts of avenants not yet in force (links and date_effet), and those of absent avenants."""
        end = self.fact("C3", attestation, "/date_fin_validite")
        end_facts: list[Fact] = []
        if self.s.ignore_avenants:
            return end, end_facts, [], [], []
        applicable: list[tuple[Fact, str, Fact]] = []
        absent: list[Fact] = []
        for link, ref in self.references("C3", attestation, "avenants"):
            link_fact = Fact(attestation, link, ref)
            existe = self.fact("C3", ref, "/existe")
            if existe.valeur is not True:
                if not self.s.assume_cited_exist:
                    absent += [link_fact, existe]
                continue
            if self.read("C3", ref, "/attestation") == attestation:
                applicable.append((self.fact("C3", ref, "/date_effet"), ref, link_fact))
        excluded: list[Fact] = []
        pending: list[Fact] = []
        for effet, ref, link_fact in sorted(applicable, key=lambda item: str(item[0].valeur)):
            if not self.s.avenants_any_date and not self.starts(effet.valeur):
                pending += [link_fact, effet]
                continue
            objet = self.read("C3", ref, "/objet")
            if objet in _end_replacing(self.ref):
                end = self.fact("C3", ref, "/nouvelle_date_fin")
                end_facts = [link_fact, effet]
            elif objet == "exclusion-activite":
                exclue = self.fact("C3", ref, "/activite_exclue")
                if exclue.valeur == self.task.activite:
                    excluded = [link_fact, effet, exclue]
        return end, end_facts, excluded, pending, absent

    def c3(self) -> CriterionResult:
        params = _params(self.ref, "C3")
        unknown: list[tuple[str, list[Fact]]] = []
        failed: list[tuple[str, list[Fact]]] = []
        others: list[Fact] = []
        for ref, link, assumed in self.cited("C3", "attestations", unknown):
            if assumed:
                return CriterionResult("C3", VRAI, f"{ref} supposée exister et convenir", [link])
            if self.excludes("C3", ref, link, "type", params["type_requis"], others):
                continue
            start = self.fact("C3", ref, "/date_emission")
            end, end_facts, excluded, pending, absent = self._avenants(ref)
            if absent:
                unknown.append((f"{ref} liste un avenant absent", [link, *absent]))
            elif not self.starts(start.valeur):
                failed.append((f"{ref} n'est émise que le {start.valeur}", [link, start]))
            elif not self.lasts(end.valeur):
                failed.append((f"{ref} a pris fin le {end.valeur}", [link, *end_facts, end, *pending]))
            elif excluded:
                failed.append((f"{ref} : l'activité est exclue par avenant", [link, *excluded]))
            else:
                return CriterionResult("C3", VRAI, f"{ref} en cours de validité jusqu'au {end.valeur}, "
                                       "activité couverte", [link, *end_facts, end])
        return self._result("C3", "attestations", unknown, failed, others,
                            "aucune attestation du type requis n'est citée")

    # -- C4 ----------------------------------------------------------------------------------------
    def c4(self) -> CriterionResult:
        params = _params(self.ref, "C4")
        first = self.read("C4", self.task.entite, "/beneficiaires")
        if not isinstance(first, str):
            return CriterionResult("C4", NON_ETABLI, "la fiche ne cite aucune page de bénéficiaires",
                                   [Fact(self.task.entite, "/beneficiaires", first)])
        people: list[tuple[str, int, object, object, object]] = []
        declarations: list[Fact] = []
        cited_by = Fact(self.task.entite, "/beneficiaires", first)
        for page in self.pages(first, "C4"):
            statut = self.fact("C4", page, "/statut_declaration")
            if statut.valeur is MISSING:
                # Its /existe is no probant field (spec §5.7): the link that cites it, as served, is the fact.
                return CriterionResult("C4", NON_ETABLI, f"{page} est absente", [cited_by])
            cited_by = Fact(page, "/page_suivante", self.read("C4", page, "/page_suivante"))
            declarations.append(statut)
            entries = self.session.navigate(page, "/entrees")
            for k in _entries(entries):
                people.append((page, k, *(self.read("C4", page, f"/entrees/{k}/{f}")
                                          for f in ("nom", "prenoms", "date_naissance"))))
        homonyms: list[Fact] = []
        list_pages = self.pages(params["liste"], None)
        for page in list_pages:
            entries = self.session.navigate(page, "/entrees")
            for k in _entries(entries):
                nom, prenoms = (self.read("C4", page, f"/entrees/{k}/{f}") for f in ("nom", "prenoms"))
                for bpage, bk, bnom, bprenoms, bnaissance in people:
                    if (bnom, bprenoms) != (nom, prenoms):
                        continue
                    naissance = self.read("C4", page, f"/entrees/{k}/date_naissance")
                    if self.s.names_only or naissance == bnaissance:
                        facts = [Fact(bpage, f"/entrees/{bk}/{f}", v) for f, v in
                                 (("nom", bnom), ("prenoms", bprenoms), ("date_naissance", bnaissance))]
                        facts += [Fact(page, f"/entrees/{k}/{f}", v) for f, v in
                                  (("nom", nom), ("prenoms", prenoms), ("date_naissance", naissance))]
                        return CriterionResult("C4", FAUX, f"{bprenoms} {bnom} figure sur {page}", facts)
                    homonyms += [Fact(bpage, f"/entrees/{bk}/date_naissance", bnaissance),
                                 Fact(page, f"/entrees/{k}/date_naissance", naissance)]
        unread = self.absent_pages(list_pages)
        if unread:
            return CriterionResult("C4", NON_ETABLI, f"{unread[0]} est absente (liste des mesures restrictives)",
                                   homonyms)
        incomplete = [d for d in declarations if d.valeur != params["statut_declaration_requis"]]
        if incomplete:
            return CriterionResult("C4", NON_ETABLI, f"déclaration {incomplete[0].valeur} "
                                   f"({incomplete[0].ressource})", [*incomplete, *homonyms])
        return CriterionResult("C4", VRAI, f"{len(people)} bénéficiaire(s), aucun sur la liste",
                               [*declarations, *homonyms])


def evaluate(task: Task, reader: CorpusReader, strategy: Strategy = REFERENCE) -> Evaluation:
    """Apply the served référentiel to the task: all four criteria, then the precedence.

    The reference reads every criterion even once one is established false, as a literal reader of
    ``/referentiel`` does (the precedence is applied to the four results, and any false criterion founds a
    non_conforme verdict); its calls are the task's call count (spec §5.6), checked by ``check-season``.
    ``/referentiel`` is the first call of every task: a literal reader starting a task reads the rules,
    so the count holds whether or not an agent keeps them from one task to the next. Only the
    ``arret-au-premier-probleme`` shortcut stops at the first criterion not established."""
    session = Session(reader)
    referentiel = session.get(reader.track.referentiel)
    run = _Run(task, strategy, session, referentiel)
    results: list[CriterionResult] = [run.c1()]
    if results[0].etat == NON_ETABLI:
        # Without the entity's file, its agréments, attestations and bénéficiaires are not known
        # (C1's wording): C2, C3 and C4 are not establishable, on the same fact.
        results += [CriterionResult(c, NON_ETABLI, "la fiche de l'entité est absente", list(results[0].faits))
                    for c in ("C2", "C3", "C4")]
    else:
        for criterion in (run.c2, run.c3, run.c4):
            if strategy.stop_at_first_problem and results[-1].etat != VRAI:
                break
            results.append(criterion())
    states = [r.etat for r in results]
    if strategy.stop_at_first_problem:
        first = next((s for s in states if s != VRAI), VRAI)
        verdict = {FAUX: "non_conforme", NON_ETABLI: "indeterminable"}.get(first, "conforme")
    else:
        verdict = "non_conforme" if FAUX in states else "indeterminable" if NON_ETABLI in states else "conforme"
    deciding = {"non_conforme": FAUX, "indeterminable": NON_ETABLI}.get(verdict)
    return Evaluation(task, strategy, verdict, results, session.calls, session.consumed, session.read_facts,
                      deciding)
