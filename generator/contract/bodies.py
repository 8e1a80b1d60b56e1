"""The bodies the contract fixes whatever the sources: their bytes, the body of an absent resource, the
``/_systeme`` statuses every track must define, and the rule that a body holds no JSON number (spec §2.5).

The compiler writes them, the server's configuration and the verifier check them, the season's reader reads
an absent resource as the server answers it: each from here, so that there is one definition.
"""

from __future__ import annotations

import orjson

ABSENT_MESSAGE = "Aucune ressource de cette collection ne porte ce chemin dans le corpus."
# Every status the nginx vhost can answer with a body from /_systeme/ (systeme.yaml must define each).
REQUIRED_SYSTEME = ("400", "403", "404", "405", "408", "412", "413", "414", "431", "500", "501", "502",
                    "503", "504", "505")


def body_bytes(body: dict[str, object]) -> bytes:
    """The served bytes: orjson with two-space indentation, keys in the compiler's order, non-ASCII kept as
    UTF-8, and a trailing newline (identical to ``json.dumps(indent=2, ensure_ascii=False) + "\\n"``, which a
    test checks)."""
    return orjson.dumps(body, option=orjson.OPT_INDENT_2) + b"\n"


def absent_body(path: str) -> dict[str, object]:
    """The documented body of a reference that does not exist: a function of the path alone.

    The nginx vhost renders the same template for identifiers nobody declared; keep both in step by
    changing only this function (the template is generated from it).
    """
    return {"ressource": path, "existe": False, "message": ABSENT_MESSAGE}


def find_numbers(value: object, pointer: str = "") -> list[str]:
    """JSON Pointers of every number in ``value``: the corpus serves none (spec §2.5)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return []
    if isinstance(value, int | float):
        return [pointer or "/"]
    if isinstance(value, dict):
        return [p for key, inner in value.items() for p in find_numbers(inner, f"{pointer}/{key}")]
    if isinstance(value, list):
        return [p for i, inner in enumerate(value) for p in find_numbers(inner, f"{pointer}/{i}")]
    return [f"{pointer or '/'} (unsupported type {type(value).__name__})"]
