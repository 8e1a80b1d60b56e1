"""A conformité reading outside the published rule, kept in the panel to show that the rule bites.

``statuts-au-lieu-des-dates`` reproduces season 1's third blind audit: the right verdicts, justified for
each satisfied criterion by statuts, list entries and start dates, never by the link that attaches the
document nor its retained end date. The rule makes it non fondé on the conforme tasks exactly.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.panel.agents import Claims, Context, admissible, fill, filler, links_first
from generator.reading.evaluation import VRAI
from generator.reading.founding import is_back_link, is_link
from generator.reading.reader import Fact
from generator.reading.season_model import Season

# What a reader who "shows the document is in order" asserts for a satisfied criterion instead of what
# the published rule (/referentiel, principes.justification) asks: statuts, list entries and start dates,
# never the link that attaches the document nor its retained end date.
NOT_ASSERTED = ("/date_fin_validite", "/nouvelle_date_fin", "/date_effet", "/agrements", "/attestations",
                "/avenants")


def _instead(ctx: Context, fact: Fact) -> bool:
    """Whether the statut-minded reader leaves ``fact`` out: a link (either direction, or the whole array)
    or a term of the retained end date."""
    return is_link(ctx.reader, fact) or is_back_link(ctx.reader, fact) or fact.champ in NOT_ASSERTED


def _in_order_rank(ctx: Context, fact: Fact) -> int | None:
    """What shows a document "in order", most telling first: a statut (the register's, the entity's, a
    declaration's), the list entry's statut, a start date, the rest of the list entry; None otherwise."""
    track = ctx.reader.track
    listed = track.collection_of(fact.ressource) is track.collection("listes-agrees")
    if fact.champ in ("/statut", "/statut_declaration"):
        return 0
    if listed:
        return 1 if fact.champ.endswith("/statut") else 3
    return 2 if fact.champ in ("/date_debut", "/date_emission") else None


def statuts_instead_of_dates(ctx: Context) -> tuple[str, Claims]:
    """The right verdict; for each satisfied criterion that decides it, the register's statut, the list
    entry and the start date the reading met instead of the link and the retained end date (season 1's
    blind audit on its conforme tasks). A verdict that no satisfied criterion decides (non_conforme,
    indeterminable) is justified as ``liens-d-abord`` justifies it."""
    if not any(c.etat == VRAI for c in ctx.evaluation.deciding):
        return links_first(ctx)
    groups: list[list[Fact]] = []
    for criterion in ctx.evaluation.deciding:
        seen = [f for c, f in ctx.evaluation.read if c == criterion.id and admissible(ctx, f)
                and not _instead(ctx, f)]
        ranks = {f: rank for f in dict.fromkeys(seen) if (rank := _in_order_rank(ctx, f)) is not None}
        groups.append(sorted(ranks, key=ranks.__getitem__))
    turns: Claims = []
    for rank in range(max((len(g) for g in groups), default=0)):
        turns += [g[rank] for g in groups if rank < len(g)]
    extra = [f for f in filler(ctx, own_only=True) if not _instead(ctx, f)]
    return ctx.evaluation.verdict, fill(turns, extra, ctx.minimum, ctx.plafond)




def _expected(report: Mapping[str, Any], season: Season) -> list[str]:
    """Rendered with the exact verdict everywhere; non fondé exactly on the conforme tasks; overclaim 0."""
    problems = []
    for t in report["taches"]:
        conforme = season.key[t["tache"]].verdict == "conforme"
        if t["statut"] != "rendue" or not t["verdict_exact"]:
            problems.append(f"{t['tache']}: {t['statut']}, verdict_exact {t['verdict_exact']}, expected "
                            "rendue with the exact verdict")
        elif t["fonde"] == conforme:
            wanted = "non fondé (satisfied criteria without link and end date)" if conforme else "fondé"
            problems.append(f"{t['tache']}: fondé {t['fonde']}, expected {wanted}")
    if report["overclaim"]["non_etayees"]:
        problems.append("overclaim is not 0")
    return problems


OUTSIDE_RULE = {"statuts-au-lieu-des-dates": (statuts_instead_of_dates, _expected)}
