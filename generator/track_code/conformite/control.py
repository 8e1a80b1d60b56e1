"""Careless readings of the conformité control (``generator.proving.control_check``).

A control has no trap: everything is in order and reads at first sight. Each reading below stops where a
hurried reader would; on the control each must still answer the key's verdict.
"""

from __future__ import annotations

from typing import Any

from generator.reading.reader import CorpusReader, resolve_pointer
from generator.reading.task import Task


def _conforme_if(ok: bool) -> str:
    return "conforme" if ok else "non_conforme"


def entity_sheet_only(task: Task, reader: CorpusReader) -> str:
    """The entity's sheet read alone: it exists and its statut is active."""
    sheet = reader.fetch(task.entite)
    if sheet.get("existe") is not True:
        return "indeterminable"
    return _conforme_if(sheet.get("statut") == "active")


def _first_in_force(reader: CorpusReader, sheet: dict[str, Any], field: str, start: str, day: str) -> bool:
    cited = sheet.get(field)
    first = cited[0] if isinstance(cited, list) and cited else None
    doc = reader.fetch(first) if isinstance(first, str) else {}
    begin, end = resolve_pointer(doc, f"/{start}"), resolve_pointer(doc, "/date_fin_validite")
    return isinstance(begin, str) and isinstance(end, str) and begin <= day <= end


def first_documents_at_face_value(task: Task, reader: CorpusReader) -> str:
    """The sheet, its first agrément and its first attestation read at their dates, no list and no avenant."""
    sheet = reader.fetch(task.entite)
    if sheet.get("existe") is not True:
        return "indeterminable"
    day = task.date_examen
    return _conforme_if(sheet.get("statut") == "active"
                        and _first_in_force(reader, sheet, "agrements", "date_debut", day)
                        and _first_in_force(reader, sheet, "attestations", "date_emission", day))


CONTROL_READINGS = {
    "fiche-seule": entity_sheet_only,
    "premiers-documents-a-premiere-vue": first_documents_at_face_value,
}
