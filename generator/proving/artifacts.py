"""Compile the season's sources into the two artifacts the season service and the freeze use.

``season/taches.json``: the public statements, typed for the season service (counts as integers).
``season/cle.json``: the sealed key, one deterministic file whose bytes the freeze commits to
(``sha256(salt ‖ key bytes)``). Both are pure functions of ``season_src/``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.base.transaction import Transaction
from generator.contract.freeze import guard_season
from generator.reading.reader import Fact
from generator.reading.season_model import Season
from generator.tracks.model import Track

TASKS_ARTIFACT = "taches.json"
KEY_ARTIFACT = "cle.json"


def _bytes(data: Any) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def tasks_artifact(season: Season, track: Track) -> bytes:
    return _bytes({
        "format": "season-taches/1",
        "saison": int(season.saison),
        "piste": track.piste,
        "referentiel": track.referentiel,
        "taches": [{"id": s.task.id, **dict(s.task.fields), "question": s.question,
                    "assertions": {"minimum": s.minimum, "plafond": s.plafond}}
                   for s in sorted(season.statements, key=lambda s: s.task.id)],
    })


def key_artifact(season: Season) -> bytes:
    def fact(f: Fact) -> dict[str, Any]:
        return f.as_dict()

    return _bytes({
        "format": "season-cle/1",
        "saison": int(season.saison),
        "taches": {task_id: {
            "famille": e.famille, "verdict": e.verdict, "piege": e.piege, "raccourci": e.raccourci,
            "fonde_par": e.fonde_par,
            "faits": [{**fact(k.fact), "critere": k.critere,
                       "formes_equivalentes": [fact(f) for f in k.equivalents]} for k in e.faits],
        } for task_id, e in sorted(season.key.items())},
    })


def write_artifacts(season: Season, root: Path, track: Track, *, wait: bool = True) -> dict[str, bytes]:
    """Write the track's season folder as one transaction; under the builder lock, so the freeze guard
    sees the record."""
    files = {TASKS_ARTIFACT: tasks_artifact(season, track), KEY_ARTIFACT: key_artifact(season)}
    with Transaction(root, wait=wait) as transaction:
        guard_season(root, files[TASKS_ARTIFACT], files[KEY_ARTIFACT], track.places)
        transaction.commit({track.trees.season: files})
    return files
