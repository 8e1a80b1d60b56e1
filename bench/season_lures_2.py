"""bars/season-lures-2: what may be asserted, said once and positively, shown on the repository's two tracks.

For each track it prints: the table the référentiel serves (``assertions.champs_qui_s_affirment``) and that it
is the scorer's, the criteria's, ``track.yaml``'s and the barème section's; the shapes decided once; every JSON
Pointer into every served body of each task's graph, counted as accepted or rejected, with the scorer and the
statement agreeing on each; the reader's shapes (issue 42) and others of their kinds, each in an otherwise
honest submission scored by ``corpus score``'s code, beside the statement's answer; the barème paragraphs the
référentiel cites, all in the section handed to participants. The realism points are the tests of
``tests/proving/test_season_lures_2.py``, run by ``pytest``.

    .venv/bin/python bench/season_lures_2.py     # prints; exit 0 when everything shown holds
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "proving")]

from test_season_lures_2 import (  # noqa: E402
    READER_SHAPES,
    TRACKS,
    _body,
    _graph_bodies,
    _held,
    _honest,
    _inputs,
    _pointers,
    _section_table,
    _served_table,
    _statement_accepts,
)

from generator.contract.manifest import Manifest  # noqa: E402
from generator.reading.reader import resolve_pointer  # noqa: E402
from generator.score import make_submission, score_submissions  # noqa: E402
from generator.score.close import close_problems  # noqa: E402
from generator.tracks.assertable import consumed_fields, shape_problems  # noqa: E402
from generator.tracks.model import Track  # noqa: E402


def show(track: Track) -> list[str]:
    """Print one track's figures; return what does not hold."""
    problems: list[str] = []
    inputs = _inputs(track)
    served = _served_table(track)
    criteria = consumed_fields(_body(track, track.referentiel))
    tables = {"scorer": {p: set(v) for p, v in inputs.champs.items()},
              "criteres[].champs": {p: set(v) for p, v in criteria.items()},
              "track.yaml probants": {c.prefix: set(c.probant) for c in track.collections if c.probant},
              f"{track.bareme.section} table": _section_table(track)}
    print(f"\n== {track.piste}: {sum(map(len, served.values()))} patterns over {len(served)} collections")
    for prefix, patterns in _body(track, track.referentiel)["assertions"]["champs_qui_s_affirment"].items():
        print(f"   {prefix:<28} {', '.join(patterns)}")
    for name, table in tables.items():
        same = table == served
        print(f"   served table == {name}: {same}")
        if not same:
            problems.append(f"{track.piste}: the served table differs from the {name}")
    shapes = shape_problems(track, {p: frozenset(v) for p, v in served.items()})
    print(f"   shapes decided once: {len(shapes)} departure(s)")
    problems += shapes

    counts = {True: 0, False: 0}
    differ = 0
    bodies = 0
    for task_id, path, body in _graph_bodies(track):
        bodies += 1
        for pointer, value in _pointers(body):
            claim = {"resource": path, "field": pointer, "value": value}
            sub = {"task_id": task_id, "assertions": [{"claim": claim}]}
            says = _statement_accepts(track, task_id, path, pointer)
            counts[says] += 1
            differ += (close_problems(sub, inputs) == []) != says
    print(f"   every pointer into {bodies} (task, served body) pairs of the tasks' graphs: "
          f"{counts[True] + counts[False]} pointers, {counts[True]} accepted, {counts[False]} rejected; "
          f"scorer and statement differ on {differ}")
    if differ:
        problems.append(f"{track.piste}: {differ} pointer(s) where the scorer and the statement differ")

    print("   the reader's shapes, each in an otherwise honest submission (corpus score):")
    manifest = Manifest.load(ROOT, track.trees.manifest)
    for task_id, resource, pointer, accepted in READER_SHAPES[track.piste]:
        verdict, facts = _honest(track, task_id)
        value = resolve_pointer(_body(track, resource), pointer)
        claims = facts if (resource, pointer) in {f[:2] for f in facts} else [*facts, (resource, pointer, value)]
        report = score_submissions([make_submission(manifest, task_id, verdict, claims, piste=track.piste)],
                                   root=ROOT, track=track)
        row = next(t for t in report["taches"] if t["tache"] == task_id)
        got = f"{row['statut']}{', reussie' if row['reussie'] else ''}"
        said = "accepted" if _statement_accepts(track, task_id, resource, pointer) else "rejected"
        shown = json.dumps(value, ensure_ascii=False)[:28]
        print(f"     {task_id} {resource} {pointer or '(empty)':<24} {shown:<30} score: {got:<18} "
              f"statement: {said}")
        if (row["statut"] == "rendue" and row["reussie"]) != accepted or (said == "accepted") != accepted:
            problems.append(f"{track.piste}: {task_id} {resource} {pointer}: {got}, statement {said}")

    cited = set()
    for file in sorted((ROOT / track.trees.build).rglob("*.json")):
        cited |= set(re.findall(r"§\s?(\d+(?:\.\d+)?)", file.read_text("utf-8")))
    held = _held(track)
    print(f"   barème paragraphs cited: {', '.join('§' + c for c in sorted(cited))}; all in {track.bareme.file} "
          f"(handed to participants): {cited <= held}")
    if not cited <= held:
        problems.append(f"{track.piste}: cites {sorted(cited - held)}, not in {track.bareme.file}")
    return problems


def main() -> int:
    print("bars/season-lures-2")
    problems = [p for track in TRACKS for p in show(track)]
    print("\n" + ("everything shown holds" if not problems else "\n".join(["DOES NOT HOLD:", *problems])))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
