"""Published text is text: what a participant wrote reaches a page without a control character in it.

Names and stacks that hold a control character are refused at registration (``registrations.py``). The
rest of what a participant writes is published (spec §4, §7.5): the narrative beside each task's result, an
assertion's field and value, and the scorer's words quoting them. A NUL, a C0 or C1 control, a bidirectional
override or isolate (U+202A-U+202E, U+2066-U+2069: text shown in another order than it is written), a
direction mark, a line or paragraph separator, a byte-order mark or a noncharacter is dropped there, and the
text says so where it stands: ``[caractères de contrôle retirés à la publication : U+202E]``. The line feed
and the tab stay (a narrative has paragraphs). Every string of an index or report document goes through
:func:`published_document` once, before it is written as JSON or rendered as a page, so both say the same.
"""

from __future__ import annotations

import re
from typing import TypeVar, cast

import orjson

from generator.publish.wording import CONTROLES_RETIRES

CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
                      "\ufeff\ufffe\uffff\ud800-\udfff]")
Document = TypeVar("Document")


def published_text(text: str) -> str:
    """``text`` without its control characters, and saying which were dropped (unchanged when none)."""
    found = sorted({ord(c) for c in CONTROLS.findall(text)})
    if not found:
        return text
    return CONTROLS.sub("", text) + CONTROLES_RETIRES.format(", ".join(f"U+{c:04X}" for c in found))


def _published(value: object) -> object:
    if isinstance(value, str):
        return published_text(value)
    if isinstance(value, dict):
        return {published_text(k) if isinstance(k, str) else k: _published(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_published(v) for v in value]
    return value


_ESCAPED_CONTROLS = (b"\\u00", b"\\r", b"\\b", b"\\f")  # how orjson writes a C0 control but LF and tab


def _clean(document: object) -> bool:
    """No string of ``document`` (keys too) holds a character :data:`CONTROLS` drops, told from its JSON in one
    scan: orjson writes every C0 control escaped and every other character as itself, and refuses a lone
    surrogate or a key that is not a string. A backslash written before ``u00``, ``r``, ``b`` or ``f`` looks
    like an escaped control: the document then takes the walk of :func:`_published`, which is exact."""
    try:
        data = orjson.dumps(document)
    except (TypeError, orjson.JSONEncodeError):
        return False
    return not any(escaped in data for escaped in _ESCAPED_CONTROLS) and CONTROLS.search(data.decode()) is None


def published_document(document: Document) -> Document:
    """Every string of a JSON document (keys too) as :func:`published_text` publishes it: the document itself
    when none holds a control character (a close publishes thousands of reports, nearly all clean)."""
    if _clean(document):
        return document
    return cast(Document, _published(document))
