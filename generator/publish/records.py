"""The season service's records folder as the one input of the close: ``corpus proofs fetch``, ``corpus score``
and ``corpus index`` all read it (``{"recu_le", "soumission"}`` files, sub-folders included), so that nothing is
converted by hand.

``corpus score --records DIR --agent DID`` is given exactly what ``corpus index`` scores for that participant:
the same reader (:func:`read_received`), the same rule (:func:`select`, the last submission of a task received
before the close), the same order.
"""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime
from pathlib import Path

from generator.base.bounded_read import SUBMISSION_LIMIT, read_bounded
from generator.base.errors import unreadable_text
from generator.base.jsonvalue import JsonValue
from generator.publish.files import IndexInputError, read_json
from generator.publish.selection import Selection, select
from generator.publish.submissions import ENVELOPE, Received, read_received, submission_files
from generator.score.entry import FormatDefects
from generator.score.inputs import load_statements
from generator.tracks.model import Track


def participant_selection(root: Path, track: Track, folder: Path, did: str, close: datetime | None) -> Selection:
    """The records of ``did`` below ``folder`` sorted out as ``corpus index`` does: its kept submissions (one a
    task, the last received before ``close``), the replaced ones and those received after the close."""
    saison = load_statements(root, track).saison
    dids: set[str] = set()
    mine: list[Received] = []
    for path in submission_files(folder, None):  # only this participant's submissions are kept in memory
        received = read_received(path, folder, saison, track.piste)
        dids.add(received.did)
        if received.did == did:
            mine.append(received)
    if not mine:
        listed = sorted(dids)
        shown = ", ".join(listed[:5]) + (", …" if len(listed) > 5 else "")
        raise IndexInputError(f"{folder}: no record of {did} below it (the DIDs recorded: {shown or 'none'})")
    return select(mine, close)


def recorded_submissions(folder: Path) -> list[tuple[Path, JsonValue]]:
    """Every record's submission below ``folder``, whatever its participant, season or track (what ``corpus
    proofs fetch`` reads the cited proof ids of); a submission whose JSON has a defect is kept as
    :class:`FormatDefects`, as the scorer keeps it."""
    out: list[tuple[Path, JsonValue]] = []
    for path in submission_files(folder, None):
        value, defects = read_json(path)
        if not isinstance(value, dict) or set(value) != set(ENVELOPE):
            raise IndexInputError(f"{path}: expected the season service's record {{\"recu_le\": \"<UTC time>\", "
                                  "\"soumission\": {the submission, spec §4}}, and nothing else")
        inside = [d.removeprefix("/soumission") for d in defects if d.startswith("/soumission")]
        out.append((path, FormatDefects(inside, None) if inside else value["soumission"]))
    return out


def _digest(path: Path) -> str:
    return hashlib.sha256(read_bounded(path, SUBMISSION_LIMIT)).hexdigest()[:8]


def published_record(slug: str, received: Received) -> str:
    """Where a counted or listed record is in a close publication: ``soumissions/<slug>/<task>_<time>_<h>.json``
    (``<h>``: the start of its bytes' SHA-256, which keeps two names apart), never the season service's own
    storage path; the same name when the publication's own records are read back (verify-publication)."""
    when = received.recu_le.astimezone(UTC)
    stamp = when.strftime("%Y%m%dT%H%M%S") + (f".{when.microsecond:06d}" if when.microsecond else "") + "Z"
    task = re.sub(r"[^A-Za-z0-9-]+", "-", received.task_id)[:40].strip("-") or "tache"
    try:
        digest = _digest(received.path)
    except OSError as exc:
        raise IndexInputError(unreadable_text(received.path, exc)) from None
    return f"soumissions/{slug}/{task}_{stamp}_{digest}.json"
