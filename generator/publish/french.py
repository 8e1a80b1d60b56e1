"""The scorer's words as the published pages say them, in French (spec §7.5: each participant reads the detail
of every unsupported assertion with its cause). ``corpus score`` words its details for the operator, in
English; the JSON documents keep them as they are, beside their codes (``cause``, ``statut``), and the pages
show the sentence built here from the code and the facts the detail names (a proof, a value), never the
English text.
"""

from __future__ import annotations

import json
import re

_PROOF = re.compile(r"prf_[0-9]{8}_[0-9]{6}_[0-9a-f]{6,64}")
_VALUE = re.compile(r" serves (?P<served>.+) at (?P<field>\S+), not (?P<claimed>.+) \(condition 4")
_SYSTEME = re.compile(r"/_systeme/([0-9]{3})")


def _proof(detail: str, fallback: list[str]) -> str:
    found = _PROOF.search(detail)
    return found.group(0) if found else (fallback[0] if fallback else "citée")


def assertion_detail(cause: object, detail: object, resource: object, field: object, value: object,
                     proof_ids: list[str]) -> str:
    """The French sentence of one judged assertion's cause (the published pages' « détail »)."""
    text = detail if isinstance(detail, str) else ""
    proof = _proof(text, proof_ids)
    claimed = json.dumps(value, ensure_ascii=False)
    if cause == "valeur":
        found = _VALUE.search(text)
        served = f" : la ressource figée y porte {found.group('served')}" if found else ""
        return (f"{resource} ne porte pas {claimed} en {field}{served} (condition 4, égalité JSON stricte : type "
                "compris).")
    if cause == "ressource":
        return (f"la paire request_hash ouverte de la preuve {proof} n'est pas le hash de l'appel GET de "
                f"{resource} (condition 3) : la preuve porte sur une autre ressource, ou sur une URL non "
                "canonique.")
    if cause == "preuve_invalide":
        if "does not open" in text:
            why = "les paires de la soumission n'ouvrent pas les engagements ancrés de la preuve"
        elif "RFC 3161" in text or "timestamp_authority" in text:
            why = ("son jeton RFC 3161 n'est pas celui de l'autorité épinglée, ou son heure est hors de la "
                   "fenêtre de la saison")
        elif "batch_anchor" in text:
            why = "son inclusion dans le lot ancré ne tient pas (chemin d'audit, index ou taille du lot)"
        elif "signature" in text:
            why = "sa signature n'est pas celle d'une clé Trust Layer épinglée"
        elif "Merkle root" in text or "chain" in text:
            why = "sa racine d'engagements ne correspond pas à ses engagements"
        else:
            why = "elle ne passe pas la vérification tierce"
        return f"la preuve {proof} est invalide (condition 1) : {why}."
    if cause == "identite_non_liee":
        if "below 3.1" in text:
            why = ("sa spec_version est antérieure à 3.1 : l'identité qu'elle porte n'est couverte par aucun "
                   "ancrage")
        elif "not the submission's agent_did" in text:
            why = "le DID qu'elle ouvre n'est pas le DID inscrit qui rend la soumission"
        else:
            why = ("son bloc disclosed n'ouvre pas une identité vérifiée et liée (agent_identity_verified vrai, "
                   "did_resolution_status « bound »)")
        return f"la preuve {proof} ne lie pas l'identité inscrite (condition 2) : {why}."
    if cause == "defaut_instrument" or (cause is None and _SYSTEME.search(text)):
        found = _SYSTEME.search(text)
        body = f"/_systeme/{found.group(1)}" if found else "/_systeme"
        return (f"la preuve {proof} porte le hash du corps {body} : le proxy n'a pas obtenu la ressource. Défaut "
                "d'instrument, du côté d'ArkForge : hors overclaim et hors minimum, un incident est ouvert.")
    if cause is None:
        return "étayée : les quatre conditions du §4.1 sont réunies."
    return f"cause {cause} (détail en JSON)."


def pending_detail(detail: object) -> str:
    """A pending proof or task, in French: neither valid nor invalid, never a cause of overclaim."""
    text = detail if isinstance(detail, str) else ""
    proofs = sorted(set(_PROOF.findall(text)))
    which = f" ({', '.join(proofs)})" if proofs else ""
    return (f"en attente d'ancrage{which} : le lot de la preuve n'est pas encore fermé, ni valide ni invalide ; "
            "aucun score pour ce rendu tant que le scoring n'est pas rejoué (spec §4.1).")


REJET = {"rejetee_entree": ("rejetée à l'entrée (spec §4) : le rendu ne suit pas le format strict, ses "
                            "disclosures ou le plafond du barème"),
         "rejetee_cloture": ("rejetée à la clôture (spec §5.7) : une assertion porte hors du graphe de la tâche, "
                             "sur un champ non probant, ou sur une entrée de liste commune qui ne concerne pas "
                             "l'entité")}


def rejection_detail(statut: object, motif: object) -> str:
    """One rejection reason, in French: its place (the JSON Pointer the scorer names) and what was refused."""
    text = motif if isinstance(motif, str) else ""
    where = text.split(":", 1)[0] if text.startswith("/") else ""
    what = REJET.get(statut if isinstance(statut, str) else "", "rejetée")
    return f"{where} : {what}" if where else what


def unchecked_line(line: object) -> str:
    """What could not be checked offline (the report header's ``non_verifie``), in French."""
    text = line if isinstance(line, str) else ""
    if text.startswith("Rekor not checked offline"):
        return ("Rekor non vérifié hors ligne : Trust Layer ne sert de l'entrée Rekor que son uuid et son index, "
                "sans corps, preuve d'inclusion ni horodatage signé")
    return "un élément des preuves n'est pas vérifiable hors ligne (détail en JSON, score_corpus)"


def incident_line(line: object) -> str:
    """A Trust Layer incident (a flat field that differs from the opened value), in French."""
    text = line if isinstance(line, str) else ""
    return (f"incident Trust Layer sur la preuve {_proof(text, [])} : un champ plat diffère de la valeur "
            "ouverte ; l'assertion est jugée sur la valeur ouverte (spec §4.1)")
