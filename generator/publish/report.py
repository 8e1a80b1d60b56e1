"""Each participant's report (spec §7.5): every task as ``corpus score`` judged it, each assertion linked to
its proofs, and apart: the unsupported assertions with their cause, the rejections (at entry, at the close),
the instrument defects (out of the overclaim), the pending proofs (never a cause of overclaim), the
submissions replaced or received after the close, and the DIDs merged into this participant (§9.1).

The ``corpus-score/1`` report is read generically: a status or a cause this module does not know (a new one
of the scorer's) is published under its own name, never dropped. The negative parts name no agent, model or
vendor (spec §7.3): a task, an assertion, a claim and a cause only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from generator.publish.french import assertion_detail, pending_detail, rejection_detail
from generator.publish.merge import Participant
from generator.publish.publication import Publication
from generator.publish.published import (
    Entry,
    LinkJson,
    MergedJson,
    PublishedAssertion,
    PublishedTask,
    RapportJson,
)
from generator.publish.records import published_record
from generator.publish.selection import Selection
from generator.publish.submissions import Received
from generator.publish.wording import (
    FORMAT_RAPPORT,
    MENTION_STACK,
    RECIT,
    cause_label,
    statut_label,
    without_emoji,
)
from generator.score.report_json import AssertionJson, ScoreJson, TaskJson

ETAYEE, DEFAUT, EN_ATTENTE = "etayee", "defaut_instrument", "en_attente"
REJETS = ("rejetee_entree", "rejetee_cloture")
SCORE_FIELDS = ("reussite", "taches_total", "overclaim", "taches_rendues", "en_attente",
                "meilleure_reponse_constante", "causes", "gel", "conditions_1_2", "preuves")  # those it has


def cited_proofs(received: Received | None) -> dict[str, list[str]]:
    """Each assertion id of a submission and the proofs it cites, as submitted (the scorer keeps no ids)."""
    sub = received.soumission if received is not None else None
    assertions = sub.get("assertions") if isinstance(sub, dict) else None
    out: dict[str, list[str]] = {}
    for a in assertions if isinstance(assertions, list) else []:
        ident, ids = (a.get("id"), a.get("proof_ids")) if isinstance(a, dict) else (None, None)
        if isinstance(ident, str) and isinstance(ids, list):
            out.setdefault(ident, [p for p in ids if isinstance(p, str)])
    return out


def _assertion(pub: Publication, a: AssertionJson, proofs: dict[str, list[str]]) -> PublishedAssertion:
    cited = proofs.get(a["id"], [])
    links: list[LinkJson] = [{"proof_id": p, "lien": pub.proof_link(p)} for p in cited]
    cause = a.get("cause")
    return {**a, "statut_texte": statut_label(a["statut"]),
            "cause_texte": cause_label(cause) if isinstance(cause, str) else None, "preuves": links,
            "detail_texte": assertion_detail(cause, a["detail"], a["ressource"], a["champ"], a["valeur"], cited)}


def _task(pub: Publication, t: TaskJson, received: Received | None, slug: str) -> PublishedTask:
    proofs = cited_proofs(received)
    narrative = received.narrative if received is not None else None
    return {"tache": t["tache"], "statut": t["statut"], "motif": t["motif"], "verdict": t["verdict"],
            "verdict_attendu": t["verdict_attendu"], "verdict_exact": t["verdict_exact"], "fonde": t["fonde"],
            "reussie": t["reussie"], "faits_manquants": t["faits_manquants"], "minimum": t["minimum"],
            "plafond": t["plafond"], "comptees": t["comptees"], "non_etayees": t["non_etayees"],
            "defauts_instrument": t["defauts_instrument"], "rejets": t["rejets"],
            "statut_texte": statut_label(t["statut"]),
            "fichier": published_record(slug, received) if received else None,
            "recu_le": received.recu_le_texte if received else None,
            "recit": without_emoji(narrative) if narrative is not None else None,
            "assertions": [_assertion(pub, a, proofs) for a in t["assertions"]]}


def _negative(tasks: list[PublishedTask], wanted: Callable[[str], bool]) -> list[Entry]:
    return [{"tache": t["tache"], "assertion": a["id"], "cause": a.get("cause"), "cause_texte": a["cause_texte"],
             "ressource": a["ressource"], "champ": a["champ"], "valeur": a["valeur"], "detail": a["detail"],
             "detail_texte": a["detail_texte"], "preuves": a["preuves"]}
            for t in tasks for a in t["assertions"] if wanted(a["statut"])]


def participant_report(pub: Publication, participant: Participant, selection: Selection, score: ScoreJson,
                       merged: list[MergedJson], index_link: str) -> RapportJson:
    """The ``corpus-rapport/1`` document of one ranked participant."""
    r = participant.ranked
    kept = {s.task_id: s for s in selection.kept}
    fields: Mapping[str, object] = score
    slug = r.slug
    tasks = [_task(pub, t, kept.get(t["tache"]), slug) for t in score["taches"]]
    rejets: list[Entry] = [{"tache": t["tache"], "statut": t["statut"], "statut_texte": t["statut_texte"],
                            "fichier": t["fichier"], "motifs": t.get("rejets", []),
                            "motifs_texte": [rejection_detail(t["statut"], m) for m in t.get("rejets", [])]}
                           for t in tasks if t["statut"] in REJETS]
    pending: list[Entry] = [{"tache": t["tache"], "assertion": None, "motif": t.get("motif", ""),
                             "motif_texte": pending_detail(t.get("motif", ""))}
                            for t in tasks if t["statut"] == EN_ATTENTE]
    strays: list[Entry] = [{"tache": s.get("task_id") if isinstance(s.get("task_id"), str) else None,
                            "statut": "rejetee_entree", "statut_texte": statut_label("rejetee_entree"),
                            "fichier": published_record(slug, selection.kept[s["index"]]), "motifs": s["rejets"],
                            "motifs_texte": [rejection_detail("rejetee_entree", m) for m in s["rejets"]]}
                           for s in score["hors_saison"]]
    return {
        **pub.head(FORMAT_RAPPORT),
        "agent": r.agent, "did": r.did, "tableau": r.tableau, "inscrit_le": r.inscrit_le_texte,
        "stack": {"texte": r.stack, "mention": MENTION_STACK[r.tableau]},
        "reference": r.reference.published() if r.reference is not None else None,
        "index": index_link, "recit_note": RECIT,
        "score": {name: fields[name] for name in SCORE_FIELDS if name in fields},
        "taches": tasks,
        "assertions_non_etayees": _negative(tasks, lambda s: s not in (ETAYEE, DEFAUT, EN_ATTENTE)),
        "rejets": rejets + strays,
        "defauts_instrument": _negative(tasks, lambda s: s == DEFAUT),
        "en_attente": pending + [{"tache": p["tache"], "assertion": p["assertion"], "motif": p["detail"],
                                  "motif_texte": pending_detail(p["detail"])}
                                 for p in _negative(tasks, lambda s: s == EN_ATTENTE)],
        "remplacees": [{"tache": old.task_id, "fichier": published_record(slug, old), "recu_le": old.recu_le_texte,
                        "remplacee_par": published_record(slug, new), "remplacee_le": new.recu_le_texte}
                       for old, new in selection.replaced],
        "hors_delai": [{"tache": s.task_id, "fichier": published_record(slug, s), "recu_le": s.recu_le_texte}
                       for s in selection.late],
        "fusionnes": merged,
        "score_corpus": dict(fields),
    }
