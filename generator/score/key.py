"""The season files as the scorer reads them: the key's vocabulary, and the shape of ``season/cle.json`` and
``season/taches.json`` checked before a byte of them is used.

``TOUS`` and ``UN_CRITERE`` are the two values of the key's ``fonde_par``, defined here once for the scorer
and for the season code that derives the key. The published shapes are ``season-cle.schema.json`` and
``season-taches.schema.json``, which refer to the source schemas (``cle``, ``taches``) part by part: a key or a
statement file the scorer accepts is one the season compiler could have written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from generator.base.jsonvalue import pointer
from generator.compiler.schemas import errors
from generator.compiler.validate import schema_message

KEY_SCHEMA, TASKS_SCHEMA = "season-cle", "season-taches"


def shape_problem(name: str, data: Any, folder: Path) -> str | None:
    """``<JSON Pointer>: <message>`` of the first error of ``data`` against schema ``name`` (in document order,
    with how many more), or None when it conforms. ``folder``: the track's schemas."""
    found = sorted(errors(name, data, folder), key=lambda e: [str(p) for p in e.path])
    if not found:
        return None
    more = f" (and {len(found) - 1} more error(s))" if len(found) > 1 else ""
    return f"{pointer(found[0].path)}: {schema_message(found[0])}{more}"
