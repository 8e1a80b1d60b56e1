"""The score report as a readable table, and as JSON bytes (``--json``)."""

from __future__ import annotations

import json
from typing import Any

_CAUSE_LABELS = {"preuve_invalide": "preuve invalide", "identite_non_liee": "identité non liée",
                 "ressource": "ressource", "defaut_instrument": "défaut d'instrument", "valeur": "valeur"}


def report_bytes(report: dict[str, Any]) -> bytes:
    return (json.dumps(report, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _yes(flag: bool) -> str:
    return "oui" if flag else "non"


def _fact(fact: dict[str, Any]) -> str:
    return (f"{fact['ressource']} {fact['champ']} = {json.dumps(fact['valeur'], ensure_ascii=False)} "
            f"[{fact['critere']}]")


def render_table(report: dict[str, Any]) -> str:
    """Tasks, then the track, then one line per assertion, rejection and missing fact."""
    offline = report["conditions_1_2"] != "verifiees"
    columns = ("tâche", "statut", "verdict", "attendu", "exact", "fondé", "compt./min", "non ét.", "défauts",
               "manquants")
    rows = [columns] + [(t["tache"], t["statut"], t["verdict"] or "-", t["verdict_attendu"],
                         _yes(t["verdict_exact"]), _yes(t["fonde"]), f"{t['comptees']}/{t['minimum']}",
                         str(t["non_etayees"]), str(t["defauts_instrument"]), str(len(t["faits_manquants"])))
                        for t in report["taches"]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    lines = [f"corpus score: saison {report['saison']}, piste {report['piste']}; gel: {report['gel']['detail']}",
             "conditions 1 et 2 (preuve valide, identité liée): "
             + ("non vérifiées hors ligne (sans --proofs)" if offline else "vérifiées (--proofs)")]
    if report["en_attente"]:
        lines.append(f"SCORE PROVISOIRE: {', '.join(report['en_attente'])} en attente d'ancrage (non scorées, "
                     "à rejouer)")
    lines.append("")
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
              for row in rows]
    overclaim = report["overclaim"]
    rate = "sans objet" if overclaim["taux"] is None else f"{100 * overclaim['taux']:.1f} %"
    constant = report["meilleure_reponse_constante"]
    lines += ["", f"réussite {report['reussite']}/{report['taches_total']} · overclaim "
              f"{overclaim['non_etayees']}/{overclaim['rendues']} ({rate}) "
              f"sur {report['taches_rendues']} tâche(s) "
              f"rendue(s) · meilleure réponse constante: {constant['verdict']} {constant['reussite']}/"
              f"{report['taches_total']} (overclaim sans objet)",
              "causes: " + " · ".join(f"{_CAUSE_LABELS[c]} {n}" for c, n in report["causes"].items())]
    detail = []
    marker = " [conditions 1-2 non vérifiées hors ligne]" if offline else ""
    for task in report["taches"]:
        if task["statut"] not in ("rendue",):
            detail.append(f"{task['tache']} {task['statut']}: {task['motif']}")
        source = f"{task['fichier']}: " if task.get("fichier") else ""
        detail += [f"{task['tache']} rejet: {source}{problem}" for problem in task["rejets"]]
        for a in task["assertions"]:
            cause = f" ({a['cause']})" if a["cause"] and a["cause"] != a["statut"] else ""
            detail.append(f"{task['tache']} {a['id']} {a['statut']}{cause}: {a['ressource']} {a['champ']} = "
                          f"{json.dumps(a['valeur'], ensure_ascii=False)}: {a['detail']}{marker}")
        detail += [f"{task['tache']} fait manquant: {_fact(f)}" for f in task["faits_manquants"]]
    detail += [f"soumission {s.get('fichier') or '#' + str(s['index'])} rejet: {p}"
               for s in report["hors_saison"] for p in s["rejets"]]
    return "\n".join([*lines, "", *detail]) + "\n"
