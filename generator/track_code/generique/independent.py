"""Honest agents of the générique panel written from the served ``/generique/referentiel`` alone.

Why they exist: the panel's other honest agents assert what the reference evaluator found decisive, the
very code the key is derived from. These read the public statement and the served bytes, nothing else:
not the evaluator (nothing of :mod:`.evaluator` is imported), not the key. They apply the référentiel as
a buyer's checklist: for each catalogue entry, conditions C1 to C7 in order, the first case that fails
writes down its terms; then C8 among the entries left. The facts they assert are the référentiel's
``principes.justification`` read literally, in the forms an agent prefers:

- ``independant-fiches``: every link stated on the product sheet (``/fournisseur``), so that the
  option resources (product sheets) carry as many assertions as they can (barème §6.7);
- ``independant-fournisseurs``: links stated on the supplier sheet (``/references/<n>``), padded with
  product-sheet facts up to the minimum, half of it on product sheets.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from generator.reading.reader import CorpusReader, Fact, resolve_pointer

REFERENTIEL = "/generique/referentiel"


def _doc(reader: CorpusReader, path: str) -> dict[str, Any]:
    found = reader.fetch(path)
    return found if isinstance(found, dict) else {}


def _entries(reader: CorpusReader, categorie: str) -> list[tuple[str, int, dict[str, object]]]:
    """(page, index, entry) of the category's catalogue, page 1 to page_suivante: null."""
    out: list[tuple[str, int, dict[str, object]]] = []
    page: object = f"/generique/catalogues/{categorie}/1"  # then whatever the served page_suivante holds
    seen: set[str] = set()
    while isinstance(page, str) and page not in seen:
        seen.add(page)
        doc = _doc(reader, page)
        if doc.get("existe") is not True:
            break
        out += [(page, k, e) for k, e in enumerate(doc.get("entrees") or []) if isinstance(e, dict)]
        page = doc.get("page_suivante")
    return out


class _Option:
    """One entry judged as the référentiel's checklist words it: None while no case has failed."""

    def __init__(self, page: str, index: int, entry: dict[str, object]) -> None:
        self.page, self.index, self.entry = page, index, entry
        self.product = str(entry.get("produit"))
        self.why: list[tuple[Fact, Fact | None]] | None = None  # (fact, its supplier-side form or None)
        self.price: Decimal | None = None
        self.delay = 0

    def fail(self, *facts: tuple[Fact, Fact | None]) -> bool:
        self.why = list(facts)
        return False


def _judge(reader: CorpusReader, need: Any, option: _Option, params: dict[str, Any]) -> bool:
    sheet = _doc(reader, option.product)

    def f(pointer: str) -> tuple[Fact, None]:
        return Fact(option.product, pointer, resolve_pointer(sheet, pointer)), None

    if sheet.get("existe") is not True:  # C1
        return option.fail(f("/existe"))
    if need.exigence != params["C2"]["sans_exigence"] and need.exigence not in (sheet.get("normes") or []):
        return option.fail(f("/normes"))  # C2
    tarif, day = sheet["tarif"], date.fromisoformat(need.date_commande)
    if day < date.fromisoformat(tarif["debut_validite"]):  # C3
        return option.fail(f("/tarif/debut_validite"))
    if day > date.fromisoformat(tarif["fin_validite"]):
        return option.fail(f("/tarif/fin_validite"))
    if Decimal(tarif["prix_unitaire_ht"]) > Decimal(need.budget_unitaire_ht):
        return option.fail(f("/tarif/prix_unitaire_ht"))
    stock = sheet["disponibilite"]
    read_on = date.fromisoformat(stock["releve_le"])
    if day < read_on:  # C4
        return option.fail(f("/disponibilite/releve_le"))
    if day > read_on + timedelta(days=int(stock["valable_jours"])):
        return option.fail(f("/disponibilite/releve_le"), f("/disponibilite/valable_jours"))
    if int(stock["quantite"]) < int(need.quantite):
        return option.fail(f("/disponibilite/quantite"))
    supplier = str(sheet["fournisseur"])
    card = _doc(reader, supplier)
    listed = card.get("references") or []
    link = (Fact(option.product, "/fournisseur", supplier),
            Fact(supplier, f"/references/{listed.index(option.product)}", option.product)
            if option.product in listed else None)

    def s(pointer: str) -> tuple[Fact, None]:
        return Fact(supplier, pointer, resolve_pointer(card, pointer)), None

    if card.get("existe") is not True:  # C5
        return option.fail(link, s("/existe"))
    if card.get("statut") != params["C5"]["statut_requis"]:
        return option.fail(link, s("/statut"))
    entry_delay = (Fact(option.page, f"/entrees/{option.index}/delai_livraison_jours",
                        option.entry.get("delai_livraison_jours")), None)
    if need.departement not in (card.get("departements_livres") or []):  # C6
        return option.fail(link, s("/departements_livres"))
    if option.entry.get("delai_livraison_jours") != card.get("delai_livraison_jours"):
        return option.fail(link, entry_delay, s("/delai_livraison_jours"))
    option.delay = int(card["delai_livraison_jours"])
    arrival = day + timedelta(days=option.delay)
    if arrival > date.fromisoformat(need.livraison_au_plus_tard):
        return option.fail(entry_delay)
    for n, annex in enumerate(card.get("annexes") or []):  # C7: the first annex absent or blocking
        clause = _doc(reader, annex)
        cited = (Fact(supplier, f"/annexes/{n}", annex), None)
        if clause.get("existe") is not True:
            return option.fail(link, cited, (Fact(annex, "/existe", clause.get("existe")), None))
        names = params["C7"]["objets"].get(clause.get("objet"), [])
        terms = [(Fact(annex, f"/{name}", clause.get(name)), None) for name in names]
        if _blocks(clause, need, arrival):
            return option.fail(link, cited, *terms)
    option.price = Decimal(tarif["prix_unitaire_ht"])
    return True


def _blocks(clause: dict[str, Any], need: Any, arrival: date) -> bool:
    objet = clause.get("objet")
    if objet == "suspension-livraisons":
        return date.fromisoformat(clause["du"]) <= arrival <= date.fromisoformat(clause["au"])
    if objet == "quantite-maximale":
        return int(need.quantite) > int(clause["quantite_maximale"])
    return objet == "departements-exclus" and need.departement in clause.get("departements_exclus", [])


def _price(reader: CorpusReader, product: str) -> Fact:
    """A valid option's fact (C8): the unit price of its tariff."""
    pointer = "/tarif/prix_unitaire_ht"
    return Fact(product, pointer, resolve_pointer(_doc(reader, product), pointer))


def read(reader: CorpusReader, need: Any) -> tuple[str, list[tuple[Fact, Fact | None]]]:
    """The verdict and the founding facts, each with its supplier-side form when it is a link."""
    params = {c["id"]: c.get("parametres") or {} for c in _doc(reader, REFERENTIEL)["criteres"]}
    options = [_Option(*e) for e in _entries(reader, need.categorie)]
    valid = [o for o in options if _judge(reader, need, o, params)]
    best = min(valid, key=lambda o: (o.price, o.delay, options.index(o)), default=None)
    facts: list[tuple[Fact, Fact | None]] = []
    for o in options:
        if o.why is not None:
            facts += o.why
        else:
            facts.append((_price(reader, o.product), None))
    verdict = best.product.rsplit("/", 1)[1] if best else "aucune_option_valide"
    return verdict, facts


def _builder(on_product_sheet: bool) -> Callable[[Any], tuple[str, list[Fact]]]:
    def build(ctx: Any) -> tuple[str, list[Fact]]:
        need, st = ctx.report.statement.task, ctx.report.statement
        verdict, pairs = read(ctx.reader, need)
        claims = [f if on_product_sheet or other is None else other for f, other in pairs]
        sheets = [p for p in sorted(ctx.graph.proper) if _doc(ctx.reader, p).get("existe") is True]
        extra = [*(_price(ctx.reader, p) for p in sheets), *(Fact(p, "/existe", True) for p in sheets)]
        own = sum(c.ressource in ctx.graph.proper for c in claims)
        for fact in extra:  # up to the minimum, and half of it on product sheets (§6.7)
            if len(claims) >= st.minimum and own >= math.ceil(st.minimum / 2):
                break
            if fact not in claims and len(claims) < st.plafond:
                claims.append(fact)
                own += 1
        return verdict, claims
    return build


INDEPENDENT: dict[str, Callable[[Any], tuple[str, list[Fact]]]] = {
    "independant-fiches": _builder(True), "independant-fournisseurs": _builder(False)}
EXCEPTIONS: dict[str, dict[str, str]] = {}
