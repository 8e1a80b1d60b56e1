"""``corpus graph``: draw each task's graph (spec §5.2) with its calls and founding facts, and an index.

Each track's pictures and index go to ``run/graphs/<piste>/``, and ``run/graphs/index.html`` links every
track's index. The pictures reveal the sealed key, so they go under the git-ignored ``run/`` by default; an
``--out`` must be a folder under ``ROOT/run/`` or outside the repository (resolved, symlinks followed).
Anything else in the tracked tree is refused before anything is drawn.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.base.output_places import RUN, key_output_dir
from generator.base.secret_values import write_private
from generator.cli.options import (
    PROBLEM,
    Subparsers,
    UsageError,
    add_root_options,
    add_track_option,
    built_reader,
    named,
    season_or_exit,
    tracks_for_tasks,
)
from generator.drawing.dot_text import DotError, dot_program, render, to_dot
from generator.drawing.graph_index import index_html, top_index_html
from generator.drawing.task_drawing import TaskDrawing, draw_task

DEFAULT_OUT = Path(RUN) / "graphs"
INDEX = "index.html"


def cmd_graph(args: argparse.Namespace) -> int:
    """Every track the task ids name (none: every track; ``--track``: one), each into ``OUT/<piste>/`` with
    its own index; ``OUT/index.html`` links every track's index found there."""
    out = key_output_dir(args.root, args.out, DEFAULT_OUT, "the pictures")  # OutputRefused: exit 2
    every, work = tracks_for_tasks(args.root, args.track, args.tasks)
    planned = []
    for track, ids in work:  # every task id checked before anything is drawn
        season = season_or_exit(args.root, track)
        known = [s.task.id for s in season.statements]
        unknown = [t for t in ids if t not in known]
        if unknown:
            raise UsageError(f"unknown task(s) {', '.join(unknown)}; tasks: {', '.join(known)}")
        planned.append((track, season, [s for s in season.statements if not ids or s.task.id in ids],
                        built_reader(args.root, track)))
    try:
        dot_program()
        for track, season, wanted, reader in planned:
            folder = out / track.piste
            folder.mkdir(parents=True, exist_ok=True)
            drawn: list[tuple[TaskDrawing, str]] = []
            for statement in wanted:
                drawing = draw_task(statement, season.key.get(statement.task.id), reader)
                name = statement.task.id
                text = to_dot(drawing)
                write_private(folder / f"{name}.dot", text)
                render(text, args.format, folder / f"{name}.{args.format}")
                drawn.append((drawing, f"{name}.{args.format}"))
                print(folder / f"{name}.{args.format}", file=sys.stderr)
            write_private(folder / INDEX, index_html(track, season.saison, drawn))
            print(f"corpus graph{named(track, every)}: {len(drawn)} task(s) drawn; open {folder / INDEX}",
                  file=sys.stderr)
        listed = [(t, f"{t.piste}/{INDEX}") for t in every if (out / t.piste / INDEX).is_file()]
        write_private(out / INDEX, top_index_html(listed))
    except (DotError, OSError) as exc:
        print(f"corpus graph: {exc}", file=sys.stderr)
        return PROBLEM
    print(f"corpus graph: open {out / INDEX} (every track drawn there)", file=sys.stderr)
    return 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser("graph", help="draw each task's graph, calls and founding facts (reveals the key)",
                       description="Draw, for each task, its graph as spec §5.2 defines it (the entity's fiche, "
                                   "agréments, attestations and avenants, bénéficiaires pages, the agréés list "
                                   "of the activity and the mesures-restrictives list), the links labelled by "
                                   "their JSON pointer, absent resources dashed, the reference reading's calls "
                                   "numbered, and the key's founding facts highlighted per criterion; plus "
                                   "each track's index.html. Every track without --track (a task id names its "
                                   "own: gen-06 is générique's), each into OUT/<piste>/, and OUT/index.html "
                                   "linking them. OUT is run/graphs/ by default; an --out must be a folder "
                                   "under ROOT/run/ or outside the repository, anything else is refused "
                                   "(exit 2).")
    p.add_argument("tasks", nargs="*", metavar="TASK", help="task ids, e.g. conf-03 gen-06 (default: all tasks of "
                                                            "every track)")
    p.add_argument("--out", default=None,
                   help=f"output folder (default: ROOT/{DEFAULT_OUT.as_posix()}, ignored by git)")
    p.add_argument("--format", choices=("svg", "png"), default="svg", help="picture format (default: svg)")
    add_root_options(p)
    add_track_option(p, "only this track (default: every track; a task id names its own)")
    p.set_defaults(func=cmd_graph)
