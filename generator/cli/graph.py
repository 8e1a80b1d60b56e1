"""``corpus graph``: draw each task's graph (spec §5.2) with its calls and founding facts, and an index.

The pictures reveal the sealed key, so they go under the git-ignored ``run/graphs/`` by default; an
``--out`` must be a folder under ``ROOT/run/`` or outside the repository (resolved, symlinks followed).
Anything else in the tracked tree is refused before anything is drawn.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.base.output_places import RUN, key_output_dir
from generator.base.secret_values import write_private
from generator.cli.options import PROBLEM, Subparsers, UsageError, add_root_options, add_track_option
from generator.cli.season import built_reader, season_or_exit
from generator.compiler.track_file import track_named
from generator.season.dot_text import DotError, dot_program, render, to_dot
from generator.season.drawing import TaskDrawing, draw_task
from generator.season.graph_index import index_html

DEFAULT_OUT = Path(RUN) / "graphs"
INDEX = "index.html"


def cmd_graph(args: argparse.Namespace) -> int:
    out = key_output_dir(args.root, args.out, DEFAULT_OUT, "the pictures")  # OutputRefused: exit 2
    track = track_named(args.root, args.track)
    season = season_or_exit(args.root, track)
    known = [s.task.id for s in season.statements]
    unknown = [t for t in args.tasks if t not in known]
    if unknown:
        raise UsageError(f"unknown task(s) {', '.join(unknown)}; tasks: {', '.join(known)}")
    wanted = [s for s in season.statements if not args.tasks or s.task.id in args.tasks]
    reader = built_reader(args.root, track)
    try:
        dot_program()
        out.mkdir(parents=True, exist_ok=True)
        drawn: list[tuple[TaskDrawing, str]] = []
        for statement in wanted:
            drawing = draw_task(statement, season.key.get(statement.task.id), reader)
            name = statement.task.id
            text = to_dot(drawing)
            write_private(out / f"{name}.dot", text)
            render(text, args.format, out / f"{name}.{args.format}")
            drawn.append((drawing, f"{name}.{args.format}"))
            print(out / f"{name}.{args.format}", file=sys.stderr)
        write_private(out / INDEX, index_html(season.saison, drawn))
    except (DotError, OSError) as exc:
        print(f"corpus graph: {exc}", file=sys.stderr)
        return PROBLEM
    print(f"corpus graph: {len(drawn)} task(s) drawn; open {out / INDEX}", file=sys.stderr)
    return 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser("graph", help="draw each task's graph, calls and founding facts (reveals the key)",
                       description="Draw, for each task, its graph as spec §5.2 defines it (the entity's fiche, "
                                   "agréments, attestations and avenants, bénéficiaires pages, the agréés list "
                                   "of the activity and the mesures-restrictives list), the links labelled by "
                                   "their JSON pointer, absent resources dashed, the reference reading's calls "
                                   "numbered, and the key's founding facts highlighted per criterion; plus "
                                   "index.html. Written under run/graphs/ by default; an --out must be a folder "
                                   "under ROOT/run/ or outside the repository, anything else is refused "
                                   "(exit 2).")
    p.add_argument("tasks", nargs="*", metavar="TASK", help="task ids, e.g. conf-03 (default: all tasks)")
    p.add_argument("--out", default=None,
                   help=f"output folder (default: ROOT/{DEFAULT_OUT.as_posix()}, ignored by git)")
    p.add_argument("--format", choices=("svg", "png"), default="svg", help="picture format (default: svg)")
    add_root_options(p)
    add_track_option(p)
    p.set_defaults(func=cmd_graph)
