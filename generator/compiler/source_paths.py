"""Where a source record is served: the canonical paths of records and pages, and the fixed lists.

Shared by the validator (which checks that the paths are unique and cited) and the compiler (which
writes a document at each), so that both derive a path from a record in exactly one way: the track's
path template (``collections[].chemin``), each placeholder filled from the record.
"""

from __future__ import annotations

from generator.documents.records import Record
from generator.tracks.model import Collection, Track


def _value(record: Record, name: str) -> str:
    """A placeholder's value: the record's owner for ``proprietaire``, else the record's own field."""
    if name == "proprietaire":
        return record.owner or "?"
    value = record.data.get(name) if isinstance(record.data, dict) else None
    return str(value)


def record_path(record: Record, track: Track) -> str | None:
    """Canonical path of a one-document record (None if its id is unusable). The validator and the compiler
    ask it of each record several times: it is kept on the record, with the id, the track and the kind it came
    from (a record whose id, track or kind changed gets its path again)."""
    data = record.data
    rid = data.get("id") if isinstance(data, dict) else None
    kept: tuple[str, Track, str, str] | None = record.__dict__.get(_KEPT)
    if kept is not None and kept[0] is rid and kept[1] is track and kept[2] is record.kind:
        return kept[3]
    if not isinstance(rid, str):
        return None
    path = track.collection(record.kind).path(id=rid)
    record.__dict__[_KEPT] = (rid, track, record.kind, path)
    return path


_KEPT = "_source_path"  # where record_path keeps a record's path


def page_paths(record: Record, collection: Collection) -> list[str]:
    """Canonical paths of the pages of a paginated record, in written order."""
    pages = record.data.get("pages") if isinstance(record.data, dict) else None
    if not isinstance(pages, list):
        return []
    values = {name: _value(record, name) for name, _ in collection.parts if name != "page"}
    numbers = [p.get("page") for p in pages if isinstance(p, dict)]
    return [collection.path(**values, page=str(n)) for n in numbers]
