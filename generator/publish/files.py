"""What ``corpus index`` reads from the season service, read as a participant's file is: bounded, regular
files only, strict JSON; and its two refusals, each one line (exit 1)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from generator.base import strict_json
from generator.base.bounded_read import SUBMISSION_LIMIT, ReadRefused, read_bounded
from generator.base.errors import GeneratorError, unreadable_text
from generator.base.jsonvalue import JsonValue
from generator.trust_layer.anchor_time import AnchorTimeError, parse_instant


class IndexRefused(GeneratorError):
    """Nothing is published: the track is not frozen and anchored, or the season is not closed (spec §7.4)."""


class IndexInputError(GeneratorError):
    """An input of ``corpus index`` that cannot be used: one line naming the file and the field, exit 1."""


def utc_time(text: object) -> datetime | None:
    """An ISO 8601 UTC instant as the anchor's time rule reads it (:func:`parse_instant`); None for anything
    else, so that the caller names its own field."""
    try:
        return parse_instant(text, "")
    except AnchorTimeError:
        return None


def read_json(path: Path, limit: int = SUBMISSION_LIMIT) -> tuple[JsonValue, list[str]]:
    """A participant-side JSON file read bounded and strictly: its value and its defects
    (:func:`strict_json.loads`); :class:`IndexInputError` when it is no JSON at all."""
    try:
        data = read_bounded(path, limit)
    except ReadRefused as exc:
        raise IndexInputError(str(exc)) from None
    except OSError as exc:
        raise IndexInputError(unreadable_text(path, exc)) from None
    try:
        return strict_json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise IndexInputError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except ValueError as exc:  # JSONDecodeError included
        line = getattr(exc, "lineno", None)
        where = f"{path}:{line}:{getattr(exc, 'colno', 0)}" if line else f"{path}"
        raise IndexInputError(f"{where}: not JSON: {getattr(exc, 'msg', exc)}") from None
    except RecursionError:
        raise IndexInputError(f"{path}: not JSON: nested too deeply") from None
