"""The control task has no trap (barème: failing it is an instrumentation problem, not a reasoning one).

``check_trap`` already asks every shortcut of the panel to answer the control right. A track's code may
name more careless readings in ``TrackLogic.control_readings`` (name -> a function of the task and the corpus that
returns a verdict): what a reader who stops early would answer, e.g. comparing catalogue prices with the
budget. On the control, each must answer the key's verdict too; on any other task they are not asked.
"""

from __future__ import annotations

from typing import Any

from generator.base.errors import Problem
from generator.reading.logic import TrackLogic
from generator.reading.reader import CorpusReader
from generator.reading.season_model import KeyEntry, Statement


def check_control(reader: CorpusReader, logic: TrackLogic[Any], statement: Statement,
                  entry: KeyEntry | None) -> list[Problem]:
    """On the control task, every careless reading of the track answers the key's verdict."""
    if entry is None or entry.famille != "controle":
        return []
    task = statement.task
    problems = []
    for name, reading in sorted(logic.control_readings.items()):
        verdict = reading(task, reader)
        if verdict != entry.verdict:
            problems.append(Problem(entry.location, task.id, f"control task: the careless reading {name} "
                                    f"answers {verdict} instead of {entry.verdict}; a control has no trap, "
                                    "so a reader who stops early must answer it right too"))
    return problems
