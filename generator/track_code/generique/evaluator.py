"""The générique evaluator: ``/generique/referentiel`` applied to the built bytes, and the shortcuts beside it.

A task names a need (category, quantity, département, order date, latest delivery date, unit budget, a
required standard). Its options are the entries of the category's catalogue, every page, in order. An
option is valid when its product sheet, its supplier sheet and that sheet's annexes meet the seven
conditions C1 to C7; the recommendation is the valid option ranked first by C8 (unit price, then delay,
then catalogue order), else ``aucune_option_valide``.

A :class:`Reading` with every flag off is the référentiel read correctly; each shortcut turns on one flag,
the reading a trap is designed to catch (spec §6.4). The same code serves both, so a shortcut differs from
the reference by exactly the step it skips.

Founding facts (the published rule, ``principes.justification``): every option gives facts. A valid one
gives its unit price (C8; with a tie, what breaks it); an invalid one gives the facts of the first case,
in the référentiel's order, that makes it fail.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from generator.reading.evaluation import FAUX, VRAI, CriterionResult, Evaluation, Strategy
from generator.reading.reader import CorpusReader, Fact, Session, resolve_pointer
from generator.reading.task import Task

NONE_VALID = "aucune_option_valide"


@dataclass(frozen=True)
class Reading(Strategy):
    """How a reader applies the référentiel; all flags off is the reference reading."""

    absent_presumed: bool = False  # P1: an absent product sheet is taken for an option, at its catalogue price
    no_dates: bool = False  # P2: tariff and stock read without their validity dates
    catalogue_delay: bool = False  # P3: the catalogue's delay believed, the supplier sheet's not compared
    no_annexes: bool = False  # P4: the supplier's annexes not read
    first_page: bool = False  # P4: the first page of the catalogue only
    cheapest_listed: bool = False  # P5: the lowest catalogue price, nothing else read
    catalogue_budget: bool = False  # P5: the lowest catalogue price within the budget, no product sheet read
    first_listed: bool = False  # P5: the first entry of the catalogue, nothing else read


REFERENCE = Reading("reference", "référentiel appliqué tel quel")
FAMILY_SHORTCUTS: dict[str, Reading] = {
    "P1": Reading("P1-fiche-absente-presumee", "une fiche produit absente est prise pour une option, au prix "
                  "du catalogue", absent_presumed=True),
    "P2": Reading("P2-sans-dates", "tarif et disponibilité lus sans leurs dates de validité", no_dates=True),
    "P3": Reading("P3-catalogue-cru", "le délai du catalogue est cru, sans le comparer à la fiche fournisseur",
                  catalogue_delay=True),
}
# Named readings a task's key designates (`raccourci`): the two P4 readings and the P5 "obvious" options.
NAMED_SHORTCUTS: dict[str, Reading] = {
    "annexes-ignorees": Reading("P4-annexes-ignorees", "les annexes des conditions de livraison ne sont pas "
                                "lues", no_annexes=True),
    "premiere-page": Reading("P4-premiere-page", "seule la première page du catalogue est lue",
                             first_page=True),
    "prix-catalogue": Reading("P5-prix-catalogue", "l'option au prix catalogue le plus bas, sans rien vérifier",
                              cheapest_listed=True),
    "premier-du-catalogue": Reading("P5-premier-du-catalogue", "la première option du catalogue, sans rien "
                                    "vérifier", first_listed=True),
    "prix-catalogue-dans-le-budget": Reading("P5-prix-catalogue-dans-le-budget", "l'option au prix catalogue le "
                                             "plus bas qui tient dans le budget, sans ouvrir de fiche",
                                             cheapest_listed=True, catalogue_budget=True),
}
NAMED_BY_FAMILY = {family: {k: v for k, v in NAMED_SHORTCUTS.items() if v.name.startswith(f"{family}-")}
                   for family in ("P4", "P5")}


@dataclass
class Option:
    """One catalogue entry as the reading found it."""

    page: str
    index: int
    product: str | None
    facts: list[Fact] = field(default_factory=list)  # what founds its state (empty until decided)
    failed: str | None = None  # the criterion of its first failing case; None: valid
    price: Decimal | None = None
    delay: int | None = None
    delay_fact: Fact | None = None

    @property
    def entry(self) -> str:
        return f"/entrees/{self.index}"


def _params(referentiel: dict[str, Any], criterion: str) -> dict[str, Any]:
    return next(c.get("parametres") or {} for c in referentiel["criteres"] if c["id"] == criterion)


def _day(value: object) -> date | None:
    try:
        return date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def _amount(value: object) -> Decimal | None:
    """A price as the référentiel writes it (digits, a point, two decimals), compared as a decimal number."""
    return Decimal(value) if isinstance(value, str) and value.replace(".", "", 1).isdigit() else None


def _count(value: object) -> int | None:
    return int(value) if isinstance(value, str) and value.isdigit() else None


class _Reader:
    """One task's reading: the session, the statement's values and the référentiel's parameters."""

    def __init__(self, task: Task, reader: CorpusReader, strategy: Reading) -> None:
        self.task, self.strategy = task, strategy
        self.session = Session(reader)
        self.referentiel = self.session.get(reader.track.referentiel)
        self.day = date.fromisoformat(task.date_commande)
        self.deadline = date.fromisoformat(task.livraison_au_plus_tard)
        self.quantity = int(task.quantite)
        self.budget = Decimal(task.budget_unitaire_ht)

    def read(self, criterion: str, path: str, pointer: str) -> Fact:
        return Fact(path, pointer, self.session.read(criterion, path, pointer))

    def entries(self) -> list[Option]:
        """Every entry of the category's catalogue, reading page after page to page_suivante: null."""
        track = self.session.reader.track
        page: object = track.collection("catalogues").path(categorie=self.task.categorie, page="1")
        options: list[Option] = []
        seen: set[str] = set()
        while isinstance(page, str) and page not in seen:
            seen.add(page)
            doc = self.session.get(page)
            if doc.get("existe") is not True:
                break
            entries = self.session.navigate(page, "/entrees")
            options += [Option(page, k, None) for k in range(len(entries) if isinstance(entries, list) else 0)]
            page = None if self.strategy.first_page else self.session.navigate(page, "/page_suivante")
        return options

    # -- the conditions, each returning the facts of its first failing case (None: met) -----------------

    def c1_sheet(self, option: Option) -> list[Fact] | None:
        link = self.read("C1", option.page, f"{option.entry}/produit")
        option.product = link.valeur if isinstance(link.valeur, str) else None
        if option.product is None:
            return [link]
        exists = self.read("C1", option.product, "/existe")
        return None if exists.valeur is True else [exists]

    def c2_standard(self, option: Option) -> list[Fact] | None:
        if self.task.exigence == _params(self.referentiel, "C2")["sans_exigence"]:
            return None
        normes = self.read("C2", str(option.product), "/normes")
        return None if isinstance(normes.valeur, list) and self.task.exigence in normes.valeur else [normes]

    def c3_tariff(self, option: Option) -> list[Fact] | None:
        product = str(option.product)
        price = self.read("C3", product, "/tarif/prix_unitaire_ht")
        start = self.read("C3", product, "/tarif/debut_validite")
        end = self.read("C3", product, "/tarif/fin_validite")
        option.price = _amount(price.valeur)
        if not self.strategy.no_dates:
            first, last = _day(start.valeur), _day(end.valeur)
            if first is None or self.day < first:
                return [start]
            if last is None or self.day > last:
                return [end]
        if option.price is None or option.price > self.budget:
            return [price]
        return None

    def c4_stock(self, option: Option) -> list[Fact] | None:
        product = str(option.product)
        quantity = self.read("C4", product, "/disponibilite/quantite")
        read_on = self.read("C4", product, "/disponibilite/releve_le")
        holds = self.read("C4", product, "/disponibilite/valable_jours")
        if not self.strategy.no_dates:
            first, days = _day(read_on.valeur), _count(holds.valeur)
            if first is None or self.day < first:
                return [read_on]
            if days is None or self.day > first + timedelta(days=days):
                return [read_on, holds]
        count = _count(quantity.valeur)
        return None if count is not None and count >= self.quantity else [quantity]

    def supplier_link(self, option: Option) -> tuple[str | None, Fact]:
        """The product's supplier, and the link as the supplier sheet lists it (references/<n>)."""
        product = str(option.product)
        supplier = self.session.read("C5", product, "/fournisseur")
        if not isinstance(supplier, str):
            return None, Fact(product, "/fournisseur", supplier)
        listed = self.session.read("C5", supplier, "/references")
        if isinstance(listed, list) and product in listed:
            return supplier, Fact(supplier, f"/references/{listed.index(product)}", product)
        return supplier, Fact(product, "/fournisseur", supplier)

    def c5_supplier(self, option: Option, supplier: str | None, link: Fact) -> list[Fact] | None:
        if supplier is None:
            return [link]
        exists = self.read("C5", supplier, "/existe")
        if exists.valeur is not True:
            return [link, exists]
        status = self.read("C5", supplier, "/statut")
        return None if status.valeur == _params(self.referentiel, "C5")["statut_requis"] else [link, status]

    def c6_delivery(self, option: Option, supplier: str, link: Fact) -> list[Fact] | None:
        zones = self.read("C6", supplier, "/departements_livres")
        listed = self.read("C6", option.page, f"{option.entry}/delai_livraison_jours")
        own = self.read("C6", supplier, "/delai_livraison_jours")
        if not (isinstance(zones.valeur, list) and self.task.departement in zones.valeur):
            return [link, zones]
        if not self.strategy.catalogue_delay and listed.valeur != own.valeur:
            return [link, listed, own]
        option.delay, option.delay_fact = _count(listed.valeur), listed
        if option.delay is None or self.day + timedelta(days=option.delay) > self.deadline:
            return [listed]
        return None

    def c7_annexes(self, option: Option, supplier: str, link: Fact) -> list[Fact] | None:
        if self.strategy.no_annexes:
            return None
        annexes = self.session.read("C7", supplier, "/annexes")
        fields = _params(self.referentiel, "C7")["objets"]
        found: list[Fact] | None = None
        for n, annex in enumerate(annexes if isinstance(annexes, list) else []):
            cited = Fact(supplier, f"/annexes/{n}", annex)
            exists = self.read("C7", annex, "/existe")
            if exists.valeur is not True:
                found = found or [link, cited, exists]
                continue
            objet = self.read("C7", annex, "/objet").valeur
            names = fields.get(objet, []) if isinstance(objet, str) else []
            terms = [self.read("C7", annex, f"/{name}") for name in names]
            if found is None and self.blocks(objet, terms, option):
                found = [link, cited, *terms]
        return found

    def blocks(self, objet: object, terms: list[Fact], option: Option) -> bool:
        """Whether an annex's clause forbids this order (suspension, maximum quantity, excluded départements)."""
        values = [t.valeur for t in terms]
        if objet == "suspension-livraisons" and option.delay is not None:
            first, last = _day(values[0]), _day(values[1])
            arrival = self.day + timedelta(days=option.delay)
            return first is not None and last is not None and first <= arrival <= last
        if objet == "quantite-maximale":
            most = _count(values[0])
            return most is None or self.quantity > most
        if objet == "departements-exclus":
            return isinstance(values[0], list) and self.task.departement in values[0]
        return False

    # -- one option, read whole ----------------------------------------------------------------------

    def judge(self, option: Option) -> None:
        """Read every condition of the option (a literal reader reads them all), keep the first failure."""
        failures: list[tuple[str, list[Fact]]] = []

        def met(criterion: str, facts: list[Fact] | None) -> None:
            if facts is not None:
                failures.append((criterion, facts))

        met("C1", self.c1_sheet(option))
        if option.product is None or failures:
            if self.strategy.absent_presumed and option.product is not None:
                return self.presume(option)
            option.failed, option.facts = failures[0]
            return None
        met("C2", self.c2_standard(option))
        met("C3", self.c3_tariff(option))
        met("C4", self.c4_stock(option))
        supplier, link = self.supplier_link(option)
        met("C5", self.c5_supplier(option, supplier, link))
        if supplier is not None and not any(c == "C5" for c, _ in failures):
            met("C6", self.c6_delivery(option, supplier, link))
            met("C7", self.c7_annexes(option, supplier, link))
        if failures:
            option.failed, option.facts = failures[0]
        return None

    def presume(self, option: Option) -> None:
        """P1's shortcut: the catalogue entry stands for the absent sheet (price and delay as listed)."""
        option.price = _amount(self.session.navigate(option.page, f"{option.entry}/prix_catalogue_ht"))
        option.delay = _count(self.session.navigate(option.page, f"{option.entry}/delai_livraison_jours"))
        if option.price is None or option.price > self.budget:
            option.failed = "C3"


def _reference(product: str | None) -> str:
    return product.rsplit("/", 1)[-1] if product else NONE_VALID


def _listed_choice(r: _Reader, options: list[Option]) -> str:
    """P5's readings: the first entry, or the lowest catalogue price (within the budget for
    ``catalogue_budget``), taken without reading anything else."""
    if not options:
        return NONE_VALID
    if r.strategy.first_listed:
        chosen = options[0]
    else:
        prices = [(p, i) for i, o in enumerate(options)
                  if (p := _amount(r.session.navigate(o.page, f"{o.entry}/prix_catalogue_ht"))) is not None
                  and not (r.strategy.catalogue_budget and p > r.budget)]
        if not prices:
            return NONE_VALID
        chosen = options[min(prices)[1]]
    return _reference(r.session.navigate(chosen.page, f"{chosen.entry}/produit"))


def _ranking_facts(valid: list[Option]) -> dict[int, list[Fact]]:
    """C8's facts per valid option: its price; with a tie for the lowest price, the tied options' delays;
    with a tie on both, their catalogue entries (the catalogue order decides)."""
    out = {id(o): [Fact(str(o.product), "/tarif/prix_unitaire_ht", _price_text(o))] for o in valid}
    if not valid:
        return out
    best = min(o.price for o in valid if o.price is not None)
    tied = [o for o in valid if o.price == best]
    if len(tied) > 1:
        quickest = min(o.delay for o in tied if o.delay is not None)
        for o in tied:
            if o.delay_fact is not None:
                out[id(o)].append(o.delay_fact)
        still = [o for o in tied if o.delay == quickest]
        if len(still) > 1:
            for o in still:
                out[id(o)].append(Fact(o.page, f"{o.entry}/produit", o.product))
    return out


def _price_text(option: Option) -> str:
    return f"{option.price:.2f}" if option.price is not None else ""


def evaluate(task: Task, reader: CorpusReader, strategy: Strategy = REFERENCE) -> Evaluation:
    """Read the task's options as the référentiel says and recommend one, or ``aucune_option_valide``."""
    reading = strategy if isinstance(strategy, Reading) else REFERENCE
    r = _Reader(task, reader, reading)
    options = r.entries()
    if reading.cheapest_listed or reading.first_listed:
        verdict = _listed_choice(r, options)
        return Evaluation(task, strategy, verdict, [], r.session.calls, r.session.consumed, r.session.read_facts)
    for option in options:
        r.judge(option)
    valid = [o for o in options if o.failed is None]
    ranked = sorted(valid, key=lambda o: (o.price if o.price is not None else Decimal("Infinity"),
                                          o.delay if o.delay is not None else 10**9, options.index(o)))
    verdict = _reference(ranked[0].product) if ranked else NONE_VALID
    ranking = _ranking_facts(valid)
    results = []
    for option in options:
        if option.failed is None:
            chosen = " (recommandée)" if ranked and option is ranked[0] else ""
            results.append(CriterionResult("C8", VRAI, f"{_reference(option.product)} valide{chosen}",
                                           ranking[id(option)]))
        else:
            label = _reference(option.product) if option.product else f"{option.page} {option.entry}"
            results.append(CriterionResult(option.failed, FAUX, f"{label} écartée", option.facts))
    return Evaluation(task, strategy, verdict, results, r.session.calls, r.session.consumed, r.session.read_facts)


def same_rank_forms(reader: CorpusReader, fact: Fact) -> list[Fact]:
    """A delay the catalogue entry and the supplier sheet state alike is one fact: the entry's delay may be
    asserted on the supplier sheet its product cites."""
    track = reader.track
    parts = fact.champ.split("/")
    if track.collection_of(fact.ressource) is not track.collection("catalogues") or len(parts) != 4 \
            or parts[3] != "delai_livraison_jours":
        return []
    product = resolve_pointer(reader.fetch(fact.ressource), f"/entrees/{parts[2]}/produit")
    if not isinstance(product, str):
        return []
    supplier = resolve_pointer(reader.fetch(product), "/fournisseur")
    if not isinstance(supplier, str) or resolve_pointer(reader.fetch(supplier), "/delai_livraison_jours") \
            != fact.valeur:
        return []
    return [Fact(supplier, "/delai_livraison_jours", fact.valeur)]
