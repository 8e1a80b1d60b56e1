"""Where a source record is served: the canonical paths of records and pages, and the fixed lists.

Shared by the validator (which checks that the paths are unique and cited) and the compiler (which
writes a document at each), so that both derive a path from a record in exactly one way.
"""

from __future__ import annotations

from generator.compiler.sources import Record
from generator.tracks import resource_types as col

# Every status the nginx vhost can answer with a body from /_systeme/ (systeme.yaml must define each).
REQUIRED_SYSTEME = ("400", "403", "404", "405", "408", "412", "413", "414", "431", "500", "501", "502",
                    "503", "504", "505")

# Record kinds that are one document each, served under their collection's prefix + their id.
ID_COLLECTION = {"entites": col.ENTITES, "agrements": col.AGREMENTS, "attestations": col.ATTESTATIONS,
                 "avenants": col.AVENANTS}


def record_path(record: Record) -> str | None:
    """Canonical path of an entity, agrément, attestation or avenant record (None if its id is unusable)."""
    rid = record.data.get("id") if isinstance(record.data, dict) else None
    if not isinstance(rid, str):
        return None
    return ID_COLLECTION[record.kind].prefix + rid


def page_paths(record: Record) -> list[str]:
    """Canonical paths of the pages of a paginated record, in written order."""
    pages = record.data.get("pages") if isinstance(record.data, dict) else None
    if not isinstance(pages, list):
        return []
    numbers = [p.get("page") for p in pages if isinstance(p, dict)]
    if record.kind == "beneficiaires":
        return [col.beneficiaires_page_path(record.owner or "?", str(n)) for n in numbers]
    if record.kind == "listes-agrees":
        return [col.liste_agrees_page_path(str(record.data.get("activite")), str(n)) for n in numbers]
    return [col.mesures_page_path(str(n)) for n in numbers]
