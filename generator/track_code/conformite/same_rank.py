"""Same-rank sources of the conformité track: what the founding rule accepts on either of two registers.

A statut that the registre des agréments and the liste des agréés state alike is one fact: asserted on
the agrément (``/statut``) or on its entry of the liste (``/entrees/<k>/statut``), it founds the same.
"""

from __future__ import annotations

from typing import Any

from generator.reading.reader import CorpusReader, Fact, resolve_pointer


def same_rank_forms(reader: CorpusReader, fact: Fact) -> list[Fact]:
    """The liste des agréés entry that states the same statut for the same agrément (same rank)."""
    track = reader.track
    if track.collection_of(fact.ressource) is not track.collection("agrements") or fact.champ != "/statut":
        return []
    activite = resolve_pointer(reader.fetch(fact.ressource), "/activite")
    entite = resolve_pointer(reader.fetch(fact.ressource), "/entite")
    page: Any = track.collection("listes-agrees").path(activite=str(activite), page="1")
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
