"""Careless readings of the générique control (``generator.proving.control_check``).

A control has no trap: its right option comes first in the catalogue, is the cheapest there and at the
tariff, and is within the budget at both. Each reading below stops at one of those shortcuts; on the
control each must still answer the key's verdict (``corpus check-season`` says which does not).
"""

from __future__ import annotations

from decimal import Decimal

from generator.reading.reader import MISSING, CorpusReader, resolve_pointer
from generator.reading.task import Task
from generator.track_code.generique.evaluator import NAMED_SHORTCUTS, NONE_VALID, _amount, evaluate


def _entries(task: Task, reader: CorpusReader) -> list[dict[str, object]]:
    """Every entry of the task's catalogue, page after page to page_suivante: null."""
    page: object = reader.track.collection("catalogues").path(categorie=task.categorie, page="1")
    found: list[dict[str, object]] = []
    seen: set[str] = set()
    while isinstance(page, str) and page not in seen:
        seen.add(page)
        doc = reader.fetch(page)
        if doc.get("existe") is not True:
            break
        found += [e for e in doc.get("entrees", []) if isinstance(e, dict)]
        page = doc.get("page_suivante")
    return found


def _cheapest_within(priced: list[tuple[Decimal | None, object]], budget: Decimal) -> str:
    """The product of the lowest price within the budget (the first on a tie), else no valid option."""
    within = [(price, n, product) for n, (price, product) in enumerate(priced)
              if price is not None and price <= budget and isinstance(product, str)]
    return min(within)[2].rsplit("/", 1)[-1] if within else NONE_VALID


def catalogue_prices_within_budget(task: Task, reader: CorpusReader) -> str:
    """A reader who compares the catalogue's prix_catalogue_ht with the budget, and reads nothing else: the
    P5 shortcut of that name (a trap, gen-10, must beat it), asked here of the control as well."""
    return evaluate(task, reader, NAMED_SHORTCUTS["prix-catalogue-dans-le-budget"]).verdict


def tariffs_within_budget(task: Task, reader: CorpusReader) -> str:
    """A reader who compares each product sheet's tariff with the budget (no date, stock or supplier)."""
    priced = []
    for entry in _entries(task, reader):
        product = entry.get("produit")
        price = resolve_pointer(reader.fetch(product), "/tarif/prix_unitaire_ht") if isinstance(product, str) \
            else MISSING
        priced.append((_amount(price) if price is not MISSING else None, product))
    return _cheapest_within(priced, Decimal(task.budget_unitaire_ht))


CONTROL_READINGS = {
    "prix-catalogue-dans-le-budget": catalogue_prices_within_budget,
    "tarif-dans-le-budget": tariffs_within_budget,
}
