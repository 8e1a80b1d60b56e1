"""The panel's submissions on disk: ``OUT/<agent>/<task>.json`` (spec §4), for ``corpus score`` to replay.

They reveal the key, so the CLI only lets them under run/ or outside the repository; here a folder is
replaced only when an earlier panel wrote it (:data:`PANEL_MARKER`), and never half-way.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path

from generator.base.atomic_file import FileWriteError, write_new
from generator.base.output_places import OutputRefused
from generator.panel.judge import Row

PANEL_MARKER = ".corpus-panel"  # written in every panel folder: only such a folder is replaced by a new panel


class PanelRefused(OutputRefused):
    """``--write-panel DIR`` names a non-empty folder this command did not write: it is left alone (a refused
    output place, like the others: exit 2)."""


def check_panel_target(out: Path) -> None:
    """Refuse a non-empty ``out`` that holds no :data:`PANEL_MARKER` (it is not an earlier panel)."""
    if out.is_dir() and not (out / PANEL_MARKER).is_file() and any(out.iterdir()):
        raise PanelRefused(f"--write-panel {out}: not empty and not a panel written by 'corpus check-season' "
                           f"(no {PANEL_MARKER} in it): give a new or empty folder")


def write_submissions(rows: list[Row], out: Path) -> int:
    """Write each agent's submissions as ``OUT/<agent>/<task>.json`` (spec §4), for ``corpus score`` to replay.

    The whole panel is written into a temporary sibling folder, then put in place by rename: a failure
    leaves ``out`` as it was, and no file of an earlier panel survives beside the new one (``corpus score
    OUT/<agent>`` would read it). An earlier panel is replaced (renamed aside, then removed); any other
    non-empty folder is refused (:func:`check_panel_target`).
    """
    check_panel_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    stem = f".{out.name}.{secrets.token_hex(6)}"
    staging, old = out.with_name(stem + ".tmp"), out.with_name(stem + ".old")
    written = 0
    try:
        staging.mkdir()
        write_new(staging / PANEL_MARKER, b"corpus check-season --write-panel\n", 0o644)
        for row in rows:
            (staging / row.name).mkdir(exist_ok=True)
            for submission in row.submissions:
                data = (json.dumps(submission, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
                write_new(staging / row.name / f"{submission['task_id']}.json", data, 0o644)
                written += 1
        if out.is_dir() and any(out.iterdir()):
            os.rename(out, old)
            try:
                os.rename(staging, out)
            except OSError:
                os.rename(old, out)
                raise
        else:
            os.replace(staging, out)
    except OSError as exc:
        raise FileWriteError(exc.errno, exc.strerror or str(exc), exc.filename or os.fspath(out)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)
    return written
