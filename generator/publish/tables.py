"""The index of one track (spec §7.1-7.2): two tables, reference runs and community, never merged; in each,
the fixed line of the best constant answer first, then one line per ranked participant in registration
order (no global mark, no sort on a composite: there is none). Every figure is ``corpus score``'s."""

from __future__ import annotations

from generator.publish.merge import Participant
from generator.publish.publication import Publication
from generator.publish.published import IndexJson, LineJson, MergedJson
from generator.publish.wording import (
    CONSTANTE,
    CONSTANTE_NOTE,
    DID_NOTE,
    ETIQUETTES,
    FORMAT_INDEX,
    FUSION,
    LECTURE,
    MENTION_STACK,
    ORDRE,
    ORDRE_TEXTE,
    RECIT_INDEX,
    SANS_OBJET,
    TABLEAUX,
    TITRES,
)
from generator.score.report_json import ConstantJson, ScoreJson


def constant_line(constant: ConstantJson) -> LineJson:
    """The fixed line: the réussite of the most frequent verdict of the published distribution (§7.2)."""
    return {"agent": CONSTANTE, "did": None, "overclaim": SANS_OBJET, "reussite": constant["reussite"],
            "taches_rendues": None, "stack": None, "preuves": None, "verdict": constant["verdict"]}


def participant_line(participant: Participant, score: ScoreJson, report: str) -> LineJson:
    """One ranked participant: the two columns side by side, never combined (§5.7)."""
    r = participant.ranked
    line: LineJson = {"agent": r.agent, "did": r.did, "overclaim": score["overclaim"],
                      "reussite": score["reussite"], "taches_rendues": score["taches_rendues"],
                      "stack": {"texte": r.stack, "mention": MENTION_STACK[r.tableau]},
                      "preuves": f"{report}.html", "rapport": f"{report}.json", "inscrit_le": r.inscrit_le_texte,
                      "en_attente": score["en_attente"]}
    if r.reference is not None:
        line["reference"] = r.reference.published()
    return line


def index_document(pub: Publication, constant: ConstantJson, taches_total: int,
                   lines: list[tuple[str, LineJson]], fusionnes: list[MergedJson]) -> IndexJson:
    """``index.json``: ``lines`` are (table, line) in registration order."""
    return {
        **pub.head(FORMAT_INDEX),
        "titre": pub.titre, "ouverture": pub.ouverture, "cloture": pub.cloture,
        "gel": {"statut": pub.gel["statut"], **({"ancre": pub.gel["ancre"]} if "ancre" in pub.gel else {})},
        "conditions_1_2": pub.conditions_1_2,
        "taches_total": taches_total, "ordre": ORDRE, "ordre_texte": ORDRE_TEXTE,
        "notes": {"constante": CONSTANTE_NOTE, "lecture": LECTURE, "did": DID_NOTE, "recit": RECIT_INDEX,
                  "fusion": FUSION},
        "tableaux": {table: {"titre": TITRES[table], "etiquette": ETIQUETTES[table],
                             "lignes": [constant_line(constant), *(line for t, line in lines if t == table)]}
                     for table in TABLEAUX},
        "fusionnes": fusionnes,
    }
