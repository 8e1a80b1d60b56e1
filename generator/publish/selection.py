"""Which submission counts (spec §7.4): one per task, replaceable until the close, the last one received
before the close counts. A replaced one and one received after the close are kept aside for the report."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise

from generator.publish.files import IndexInputError
from generator.publish.submissions import Received


@dataclass(frozen=True)
class Selection:
    kept: tuple[Received, ...]  # in task order: what the scorer is given
    replaced: tuple[tuple[Received, Received], ...]  # (the replaced one, the one that replaced it)
    late: tuple[Received, ...]  # received after the close: not counted


def select(received: list[Received], close: datetime | None) -> Selection:
    """One participant's submissions sorted out; two for one task at the same instant cannot be ordered, so
    they are refused (one line naming both files): the season service records each with its own time."""
    by_task: dict[str, list[Received]] = defaultdict(list)
    late = []
    for r in received:
        if close is not None and r.recu_le > close:
            late.append(r)
        else:
            by_task[r.task_id].append(r)
    kept, replaced = [], []
    for task_id in sorted(by_task):
        ordered = sorted(by_task[task_id], key=lambda r: (r.recu_le, r.fichier))
        for before, after in pairwise(ordered):
            if before.recu_le == after.recu_le:
                raise IndexInputError(f"{before.path} and {after.path}: two submissions of {after.did} for "
                                      f"{task_id} received at the same instant {after.recu_le_texte}: which one "
                                      "counts cannot be told (spec §7.4)")
        kept.append(ordered[-1])
        replaced += [(r, ordered[i + 1]) for i, r in enumerate(ordered[:-1])]
    return Selection(tuple(kept), tuple(replaced), tuple(sorted(late, key=lambda r: (r.task_id, r.recu_le))))
