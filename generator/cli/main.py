"""The ``corpus`` command: one sub-command per job of authors, operators and freeze scripts.

This package is the only one that parses a command line, and nothing imports it (docs/architecture.md).
Each module of it registers one group of sub-commands; :func:`parser` lists them in the order
``corpus --help`` shows, so that this file stays a table of contents. The domain modules raise typed
errors (:class:`GeneratorError` subclasses); :func:`main` turns each into one line and an exit code.
"""

from __future__ import annotations

import argparse
import sys

from generator.base.errors import CorpusError, GeneratorError, os_error_text
from generator.base.output_places import OutputRefused
from generator.cli import (
    build,
    contest,
    graph,
    index,
    observe,
    pin,
    proofs,
    publish,
    release,
    score,
    season,
    season_state,
    serving,
)
from generator.cli.options import (
    EXIT_CODES,
    INTERRUPTED,
    PROBLEM,
    USAGE,
    OneLineParser,
    Reported,
    UsageError,
    print_problems,
)

# Each group's registrations, in the order of ``corpus --help``.
REGISTRATIONS = (
    build.register,
    pin.register,
    serving.register_render_nginx,
    serving.register_serve,
    release.register,
    serving.register_instance,
    observe.register_verify,
    season.register,
    graph.register,
    score.register,
    proofs.register,
    index.register,
    season_state.register,
    contest.register,
    publish.register,
    observe.register_log_report,
    serving.register_systemd,
)


def parser() -> argparse.ArgumentParser:
    top = OneLineParser(
        prog="corpus",
        description="Compile, check and serve the frozen PROVE IT corpora, every track of tracks/ (each track's "
                    "trees are <kind>/<piste>: build/conformite, build/generique...; 'corpus tracks' lists them). "
                    "Authors edit each track's sources (corpus_src/<piste>/ and season_src/<piste>/), run 'corpus "
                    "check', then 'corpus build' "
                    "and 'corpus build-season', prove the season with 'corpus check-season', and commit the built "
                    "trees with their sources (docs/authoring.md). Without --track a command works on every "
                    "track, one line each.",
        epilog=EXIT_CODES)
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in REGISTRATIONS:
        register(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    """Run one sub-command; every error the project raises on purpose is one message and an exit code.

    A refused output place or a value of the command line a command refuses is exit 2, like argparse's
    own errors; any other error of the project is exit 1. An OSError that a command did not turn into a
    message of its own (a file it could not read or write) is still one line ``corpus CMD: FILE: reason``,
    exit 1: every error a user can cause is a message with its place. Any other exception is a bug of ours
    and keeps its traceback.
    """
    args = parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except Reported as done:
        return done.code
    except CorpusError as exc:
        print_problems(exc.problems)
        print(f"corpus {args.command}: {len(exc.problems)} error(s)", file=sys.stderr)
    except (UsageError, OutputRefused) as exc:
        print(f"corpus {args.command}: {exc}", file=sys.stderr)
        return USAGE
    except GeneratorError as exc:
        print(f"corpus {args.command}: {exc}", file=sys.stderr)
    except OSError as exc:  # last resort: a file the user named or a disk that failed, never a bug of ours
        print(f"corpus {args.command}: {os_error_text(exc)}", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"corpus {args.command}: interrupted", file=sys.stderr)
        return INTERRUPTED
    return PROBLEM


if __name__ == "__main__":
    raise SystemExit(main())
