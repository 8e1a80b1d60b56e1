"""The fixed texts of the publication (spec §4, §7.1-7.4, §10), in French: the index is for the public.

One place for them, so that every page and every JSON document says the same words, and the tests hold
each rule of §7.3 to these very strings. No humour, no emoji, no exclamation (§7.3): the texts state.
"""

from __future__ import annotations

import re

FORMAT_INDEX = "corpus-index/1"
FORMAT_RAPPORT = "corpus-rapport/1"
FORMAT_INSCRIPTIONS = "corpus-inscriptions/1"

PUBLIE, BROUILLON = "publie", "brouillon"
BROUILLON_TEXTE = "brouillon : saison non close, rien n'est publié"
INVALIDEE = "invalidee"  # an invalidated season (spec §8): published, with no ranking
INVALIDEE_TEXTE = ("Saison invalidée : un changement en cours de saison n'est pas une correction, il invalide "
                   "la saison (§8). Aucun classement n'est publié ; la saison est close et la suivante repart de "
                   "zéro.")
CONTESTATION_TEXTE = ("Contestation (§9.2) : dans les 14 jours suivant la publication du score, sur une "
                      "assertion précise et la cause affichée, jamais sur le barème (gelé) ni sur le corpus "
                      "(figé) ; décision humaine motivée sous 30 jours. Une rectification est publiée à côté "
                      "du chiffre d'origine, qui reste affiché.")
DECISIONS = {"acceptee": "acceptée", "refusee": "refusée"}

AI_ACT = ("Étiquetage AI Act (règlement (UE) 2024/1689, article 50) : les verdicts, les assertions et les récits "
          "publiés ici ont été produits par des systèmes d'intelligence artificielle, les agents évalués. Les "
          "scores sont calculés par un programme déterministe, sans modèle de langage, à partir du corpus figé "
          "et des preuves Trust Layer.")

REFERENCE, COMMUNAUTE = "reference", "communaute"
TABLEAUX = (REFERENCE, COMMUNAUTE)
TITRES = {REFERENCE: "Runs de référence", COMMUNAUTE: "Communauté"}
CALIBRATION = "Calibration, pas classement"
STACK_DECLAREE = "Stack déclarée, non vérifiée"
STACK_REFERENCE = "Stack publiée par ArkForge, rejouable"
REJOUABLE_NOTE = ("Run de référence rejouable : le modèle, sa version, le framework et le prompt sont publiés, et "
                  "le corpus est figé ; quiconque rejoue ce run obtient des preuves qu'il peut scorer à son tour "
                  "(spec §7.1).")
ETIQUETTES = {REFERENCE: CALIBRATION, COMMUNAUTE: STACK_DECLAREE}
MENTION_STACK = {REFERENCE: STACK_REFERENCE, COMMUNAUTE: STACK_DECLAREE}

CONSTANTE = "meilleure réponse constante"
SANS_OBJET = "sans objet"
CONSTANTE_NOTE = ("Ligne fixe en tête de chaque tableau : la réussite obtenue en rendant partout le verdict le "
                  "plus fréquent de la répartition publiée, overclaim sans objet. Une réussite à ce niveau avec "
                  "0 % d'overclaim ne montre rien de plus qu'un verdict deviné (spec §7.2, §10).")

ORDRE = "inscription"
ORDRE_TEXTE = ("Ordre des lignes : l'ordre d'inscription à la saison, après la ligne fixe. Aucune note globale, "
               "aucun tri par défaut sur une note composite : il n'y en a pas (spec §7.2).")
LECTURE = ("L'overclaim se lit à réussite égale : les deux valeurs sont sur la même ligne et ne se combinent "
           "jamais (spec §5.7). Les valeurs d'une piste ne se comparent pas à celles d'une autre (spec §6.6).")
DID_NOTE = ("DID : ArkForge a constaté un binding DID, s'y est engagé avant l'ancrage, et ne peut plus se dédire "
            "(spec §10).")
RECIT = "Récit de l'agent : publié à côté du résultat, non scoré (spec §4)."
RECIT_INDEX = ("Le récit (narrative) de chaque rendu est publié dans le rapport du participant, à côté du "
               "résultat, non scoré : il ne pèse sur aucune valeur (spec §4).")
LIEN_PREUVES = "lien vers les preuves"
FUSION = ("Des DID liés à une même clé, à l'inscription ou dans l'historique de liaison de la clé, forment un "
          "seul participant : seule la première inscription est classée (spec §9.1).")

CAUSES = {"preuve_invalide": "preuve invalide", "identite_non_liee": "identité non liée",
          "ressource": "ressource ne correspondant pas", "valeur": "valeur ne correspondant pas",
          "defaut_instrument": "défaut d'instrument"}
STATUTS = {"rendue": "rendue", "non_rendue": "non rendue", "rejetee_entree": "rejetée à l'entrée",
           "rejetee_cloture": "rejetée à la clôture", "en_attente": "en attente d'ancrage",
           "etayee": "étayée", "non_etayee": "non étayée", "defaut_instrument": "défaut d'instrument"}
CONDITIONS_1_2 = {"verifiees": "vérifiées (preuve valide, identité liée, spec §4.1)",
                  "non_verifiees_hors_ligne": "non vérifiées hors ligne : aucune vérification tierce des preuves "
                                              "n'a été fournie au scorer"}
GEL = {"non_gele": "non gelée", "verifie": "gel et ancrage vérifiés par corpus score"}


def cause_label(cause: str) -> str:
    """A cause in words; a cause the scorer names and this table does not know yet is shown by its name."""
    return CAUSES.get(cause, cause.replace("_", " "))


def statut_label(statut: str) -> str:
    return STATUTS.get(statut, statut.replace("_", " "))


# Pictographs, dingbats, symbols and their joiners and variation selectors: what §7.3 calls emoji (arrows and
# letters in circles are text, kept).
_EMOJI = re.compile("[\u2300-\u23ff\u25a0-\u27bf\u2b00-\u2bff\u3030\u303d\u3297\u3299\ufe0e\ufe0f\u200d\u20e3"
                    "\U0001f000-\U0001faff\U000e0020-\U000e007f]")
EMOJI_RETIRES = " [emoji retirés à la publication, spec §7.3]"
CONTROLES_RETIRES = " [caractères de contrôle retirés à la publication : {}]"  # the code points, U+XXXX


def has_emoji(text: str) -> bool:
    return _EMOJI.search(text) is not None


def without_emoji(text: str) -> str:
    """A participant's free text as published: emoji taken out, and said so (spec §7.3: none on a result)."""
    cleaned = _EMOJI.sub("", text)
    return cleaned if cleaned == text else cleaned + EMOJI_RETIRES


def percent(rate: float) -> str:
    """``0.0488`` -> ``4,9 %``: French decimal comma, one decimal."""
    return f"{100 * rate:.1f}".replace(".", ",") + " %"
