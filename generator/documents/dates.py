"""The one shape of a date in every track's sources, ``YYYY-MM-DD``, and whether a value of that shape is a day
that exists. Read by the strict loader, which notes a false day as it builds a document (each value is at hand
then: a later walk over a 10,000-entity corpus touched 800,000 strings again), and by the date check of
:mod:`generator.documents.schema_checks`, which names each one."""

from __future__ import annotations

import re
from datetime import date

_DATE_SHAPE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_REAL_DAYS: set[str] = set()  # days met that exist: a build meets a few tens of thousands
_KEPT_DAYS = 1 << 17


def is_date_shaped(value: str) -> bool:
    """``YYYY-MM-DD``: the one shape of a date in every track's sources (the length test first, as this runs
    for every string of a build)."""
    return len(value) == 10 and value[4] == "-" and _DATE_SHAPE.fullmatch(value) is not None


def is_false_day(value: str) -> bool:
    """Shaped like a date but no day that exists (``2026-02-30``, ``2026-13-01``)."""
    if value in _REAL_DAYS or not is_date_shaped(value):
        return False
    try:
        date.fromisoformat(value)
    except ValueError:
        return True
    if len(_REAL_DAYS) < _KEPT_DAYS:
        _REAL_DAYS.add(value)
    return False
