"""The served collections: their canonical path shapes and probant fields (spec §5.7).

One table, read by the validator (ID patterns), the compiler (paths), the nginx template (which
canonical-shaped paths answer ``existe: false``) and the season tools (probant fields). Patterns are
written once here, in the subset of regular-expression syntax that Python and nginx's PCRE agree on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_BASE_URL = "https://corpus.arkforge.tech"

# Any canonical path: no trailing slash, no '?', '%', '.', '_' or '//' (CONTRACT §3). The source schema
# common.schema.json#/$defs/path spells the same shape for references written by authors.
CANONICAL_PATH = r"(?:/[A-Za-z0-9-]+)+"
PAGE = r"[1-9][0-9]{0,2}"
SLUG = r"[a-z]+(-[a-z]+)*"


@dataclass(frozen=True)
class Collection:
    """A family of served documents sharing one canonical path shape."""

    name: str
    prefix: str  # e.g. "/agrements/"
    path_pattern: str  # full canonical path, anchored by users of the pattern
    probant: tuple[str, ...]  # JSON Pointers of spec §5.7; "<n>" stands for an array index

    @property
    def regex(self) -> re.Pattern[str]:
        return _compiled(self.path_pattern)

    def matches(self, path: str) -> bool:
        return self.regex.fullmatch(path) is not None


def _id_pattern(prefix: str, letters: str) -> str:
    return f"{prefix}{letters}-[0-9]{{4,6}}"


ENTITES = Collection(
    "entites", "/entites/", _id_pattern("/entites/", "ENT"),
    ("/existe", "/statut", "/agrements", "/agrements/<n>", "/attestations", "/attestations/<n>",
     "/beneficiaires"),
)
AGREMENTS = Collection(
    "agrements", "/agrements/", _id_pattern("/agrements/", "AGR"),
    ("/existe", "/entite", "/activite", "/statut", "/date_debut", "/date_fin_validite"),
)
ATTESTATIONS = Collection(
    "attestations", "/attestations/", _id_pattern("/attestations/", "ATT"),
    ("/existe", "/entite", "/type", "/date_emission", "/date_fin_validite", "/avenants", "/avenants/<n>"),
)
AVENANTS = Collection(
    "avenants", "/avenants/", _id_pattern("/avenants/", "AVN"),
    ("/existe", "/attestation", "/objet", "/date_effet", "/nouvelle_date_fin", "/activite_exclue"),
)
BENEFICIAIRES = Collection(
    "beneficiaires", "/beneficiaires/", f"/beneficiaires/ENT-[0-9]{{4,6}}/{PAGE}",
    ("/statut_declaration", "/entrees/<n>/nom", "/entrees/<n>/prenoms", "/entrees/<n>/date_naissance",
     "/page_suivante"),
)
LISTES_AGREES = Collection(
    "listes-agrees", "/listes/agrees/", f"/listes/agrees/{SLUG}/{PAGE}",
    ("/entrees/<n>/agrement", "/entrees/<n>/entite", "/entrees/<n>/statut"),
)
MESURES = Collection(
    "mesures-restrictives", "/mesures-restrictives/", f"/mesures-restrictives/{PAGE}",
    ("/entrees/<n>/nom", "/entrees/<n>/prenoms", "/entrees/<n>/date_naissance"),
)

COLLECTIONS: tuple[Collection, ...] = (
    ENTITES, AGREMENTS, ATTESTATIONS, AVENANTS, BENEFICIAIRES, LISTES_AGREES, MESURES,
)

REFERENTIEL_PATH = "/referentiel"
CATALOGUE_PATH = "/catalogue"
SYSTEME_PREFIX = "/_systeme/"


def _compiled(pattern: str, _cache: dict[str, re.Pattern[str]] = {}) -> re.Pattern[str]:  # noqa: B006
    if pattern not in _cache:
        _cache[pattern] = re.compile(pattern)
    return _cache[pattern]


def collection_of(path: str) -> Collection | None:
    """The collection whose canonical shape ``path`` has, or None."""
    for collection in COLLECTIONS:
        if collection.matches(path):
            return collection
    return None


def entity_path(entity_id: str) -> str:
    return f"{ENTITES.prefix}{entity_id}"


def beneficiaires_page_path(entity_id: str, page: str) -> str:
    return f"{BENEFICIAIRES.prefix}{entity_id}/{page}"


def liste_agrees_page_path(activite: str, page: str) -> str:
    return f"{LISTES_AGREES.prefix}{activite}/{page}"


def mesures_page_path(page: str) -> str:
    return f"{MESURES.prefix}{page}"


def systeme_path(status: str) -> str:
    return f"{SYSTEME_PREFIX}{status}"


def file_for(path: str) -> str:
    """The file under ``build/`` that holds the bytes of a canonical path (nginx: ``$uri.json``)."""
    return path.lstrip("/") + ".json"
