"""``corpus score``: replay the scoring of a participant's submissions against the published season."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from generator.atomic_file import write_atomic
from generator.score.inputs import ScoreInputError, ScoreRefused
from generator.score.render import render_table, report_bytes
from generator.score.track import DuplicateTask, score_submissions


class _BadFile(Exception):
    pass


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _load(path: Path) -> Any:
    """A JSON file, or ``file:line:column: message`` (NaN and Infinity are not JSON)."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise _BadFile(f"{path}: {exc}") from None
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise _BadFile(f"{path}:{exc.lineno}:{exc.colno}: json: {exc.msg}") from None
    except ValueError as exc:
        raise _BadFile(f"{path}: json: {exc}") from None
    except RecursionError:
        raise _BadFile(f"{path}: json: nested too deeply to be a submission") from None


def submission_files(paths: list[Path]) -> list[Path]:
    """The files given, and the ``*.json`` files directly inside each folder given, in name order."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
            if not found:
                raise _BadFile(f"{path}: no *.json submission in this folder")
            files += found
        elif path.is_file():
            files.append(path)
        else:
            raise _BadFile(f"{path}: no such file or folder")
    return files


def cmd_score(args: argparse.Namespace) -> int:
    try:
        files = submission_files(args.submissions)
        submissions = [_load(f) for f in files]
        proofs = _load(args.proofs) if args.proofs else None
    except _BadFile as exc:
        print(f"corpus score: {exc}", file=sys.stderr)
        return 1
    try:
        report = score_submissions(submissions, root=args.root, proofs=proofs, salt_file=args.salt_file)
    except DuplicateTask as exc:
        print(f"corpus score: {exc.task_id} is submitted by {', '.join(str(files[i]) for i in exc.positions)}: "
              "the season keeps the last one recorded; give one file per task", file=sys.stderr)
        return 1
    except ScoreRefused as exc:
        print(f"corpus score: REFUSED: {exc}", file=sys.stderr)
        return 1
    except ScoreInputError as exc:
        message = str(exc)
        if args.proofs and message.startswith("proofs: "):
            message = f"{args.proofs}: {message.removeprefix('proofs: ')}"
        print(f"corpus score: {message}", file=sys.stderr)
        return 1
    by_task = {s.get("task_id"): str(f) for s, f in zip(submissions, files, strict=True) if isinstance(s, dict)}
    for task in report["taches"]:
        if task["tache"] in by_task:
            task["fichier"] = by_task[task["tache"]]
    for stray in report["hors_saison"]:
        stray["fichier"] = str(files[stray["index"]])
    sys.stdout.write(render_table(report))
    if args.json:
        write_atomic(args.json, report_bytes(report))
    return 0


def register(sub: Any) -> None:
    p = sub.add_parser(
        "score", help="score a participant's submissions (spec §4, §4.1, §5.7): the corpus side of the scorer",
        description="Replay the scoring of submissions in the spec §4 format (one JSON file per task, or "
                    "folders of them) against the published season: manifest/, build/, season/taches.json, "
                    "season/cle.json. Rejects at entry (schema, duplicates, disclosures, plafond) and at the "
                    "close (graph, probant fields, common-list entries), checks conditions 3 and 4 and the "
                    "instrument defect, then prints réussite, overclaim and the best constant answer. Conditions "
                    "1 and 2 need Trust Layer: give their result with --proofs, or they are taken as met and "
                    "every line says they were not verified. Once freeze/record.json exists, requires "
                    "--salt-file and refuses to score unless the whole freeze check passes.")
    p.add_argument("submissions", nargs="+", type=Path, help="submission files, or folders of *.json files")
    p.add_argument("--proofs", type=Path, help='third-party proof verification: {"<proof_id>": {"valide": '
                                               'bool, "identite_liee": bool}}')
    p.add_argument("--json", type=Path, help="also write the corpus-score/1 report to this file")
    p.add_argument("--salt-file", type=Path, help="the salt published at the close, to check the key "
                                                  "commitment of the freeze record (required once "
                                                  "freeze/record.json exists, spec §8.5)")
    p.add_argument("--root", type=Path, default=Path.cwd(),
                   help="project folder holding build/, manifest/, season/ and freeze/ (default: .)")
    p.set_defaults(func=cmd_score)
