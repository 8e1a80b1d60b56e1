"""The ``corpus`` command: one sub-command per job of authors, operators and freeze scripts.

Each tool module that adds sub-commands exposes ``register(subparsers)``; they are listed in
``_TOOL_MODULES`` so that this file stays a table of contents.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import stat
import sys
from pathlib import Path
from typing import NoReturn, TextIO

from generator.base.errors import CorpusError, FrozenMismatch, GeneratorError, Severity, os_error_text
from generator.base.path_checks import path_mode
from generator.base.transaction import reading
from generator.compiler.pipeline import build, check
from generator.compiler.track_file import load_tracks, track_named
from generator.contract.freeze import check_freeze, freeze
from generator.contract.manifest import Manifest
from generator.tracks.listing import track_listing
from generator.tracks.model import DEFAULT_BASE_URL, Track

_TOOL_MODULES: tuple[str, ...] = (
    "generator.serving.nginx_render", "generator.serving.serve", "generator.serving.release",
    "generator.serving.instance_commands", "generator.observe.verify", "generator.cli.season",
    "generator.cli.score", "generator.observe.log_report", "generator.serving.systemd_units",
)


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the command and the argument (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message} (--help for usage)\n")


def root_folder(value: str) -> Path:
    """``--root``'s type: an existing folder, so that a file given by mistake is named as such."""
    path = Path(value)
    mode = path_mode(path, lambda why: argparse.ArgumentTypeError(f"{value}: {why}"), "no such folder")
    if not stat.S_ISDIR(mode):
        raise argparse.ArgumentTypeError(f"{value}: not a folder")
    return path


def add_root_options(parser: argparse.ArgumentParser) -> None:
    """``--root``: the checkout holding corpus_src/, build/ and manifest/ (default: current directory)."""
    parser.add_argument("--root", type=root_folder, default=Path.cwd(),
                        help="project folder holding corpus_src/, build/ and manifest/ (default: .)")


def add_track_option(parser: argparse.ArgumentParser, what: str = "the track (default: the checkout's first, "
                     "conformite)") -> None:
    parser.add_argument("--track", metavar="PISTE", default=None, help=what)


def base_url_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base-url", default=os.environ.get("CORPUS_BASE_URL", DEFAULT_BASE_URL),
                        help="base URL the canonical URLs and request hashes are built on "
                             f"(default: $CORPUS_BASE_URL or {DEFAULT_BASE_URL})")


def _print_problems(problems: list, stream: TextIO | None = None) -> None:
    # sys.stderr is looked up at call time, so that redirect_stderr (and pytest's capsys) see the problems.
    for problem in problems:
        print(problem, file=stream or sys.stderr)


def _tracks(args: argparse.Namespace) -> list[Track]:
    """The tracks a command works on: ``--track``'s, else every track of the checkout."""
    if args.track is not None:
        return [track_named(args.root, args.track)]
    return load_tracks(args.root)


def _track(args: argparse.Namespace) -> Track:
    """The one track a command works on: ``--track``'s, else the checkout's first (conformité here)."""
    return track_named(args.root, args.track)


def _named(track: Track, tracks: list[Track]) -> str:
    return f" ({track.piste})" if len(tracks) > 1 else ""


def cmd_check(args: argparse.Namespace) -> int:
    tracks, failed = _tracks(args), False
    for track in tracks:
        problems = check(args.root / track.trees.sources, track)
        _print_problems(problems)
        errors = sum(p.severity is Severity.ERROR for p in problems)
        warnings = len(problems) - errors
        print(f"corpus check{_named(track, tracks)}: {errors} error(s), {warnings} warning(s)", file=sys.stderr)
        failed = failed or bool(errors)
    return 1 if failed else 0


def cmd_build(args: argparse.Namespace) -> int:
    tracks = _tracks(args)
    for track in tracks:
        trees = f"{track.trees.build}/ and {track.trees.manifest}/"
        try:
            result = build(args.root / track.trees.sources, args.root, args.base_url.rstrip("/"), track,
                           wait=not args.no_wait)
        except CorpusError as exc:
            _print_problems(exc.problems)
            print(f"corpus build{_named(track, tracks)}: {len(exc.problems)} error(s); {trees} left unchanged",
                  file=sys.stderr)
            return 1
        except FrozenMismatch as exc:
            print(f"corpus build{_named(track, tracks)}: REFUSED: {exc}; {trees} left unchanged", file=sys.stderr)
            return 1
        _print_problems(result.warnings)
        kinds: dict[str, int] = {}
        for item in result.built:
            kinds[item.document.kind] = kinds.get(item.document.kind, 0) + 1
        summary = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
        print(f"corpus build{_named(track, tracks)}: {len(result.built)} files ({summary}); manifest hash "
              f"{result.manifest_hash}", file=sys.stderr)
    return 0


def cmd_manifest_hash(args: argparse.Namespace) -> int:
    """The hash of manifest.json's bytes, checked against manifest.sha256 (they come from one build)."""
    print(Manifest.load(args.root, _track(args).trees.manifest).hash)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    path = args.path if args.path.startswith("/") else "/" + args.path
    with reading(args.root):  # the entry and the bytes from the same build
        for track in _tracks(args):
            entry = Manifest.load(args.root, track.trees.manifest).by_path(path)
            if entry is not None:
                body = entry.read_checked(args.root / track.trees.build)
                break
        else:
            print(f"corpus show: {path} is not in the manifest (canonical paths are exact: no trailing slash, "
                  "no '?', no '.json')", file=sys.stderr)
            return 1
    sys.stdout.write(body.decode("utf-8"))
    print("--- manifest entry ---")
    print(json.dumps(entry.to_json(), indent=2, ensure_ascii=False))
    return 0


def cmd_freeze(args: argparse.Namespace) -> int:
    track = _track(args)
    data = freeze(args.root, args.bareme or args.root / track.bareme.file, args.salt_file, track.places)
    sys.stdout.write(data.decode("utf-8"))
    print(f"corpus freeze: wrote {track.places.record}; keep {args.salt_file} secret until the close, and anchor "
          "the record through Trust Layer", file=sys.stderr)
    return 0


def cmd_tracks(args: argparse.Namespace) -> int:
    """The tracks of the checkout, and where each one's files are (what freeze and scorer scripts read)."""
    tracks = load_tracks(args.root)
    listing = [track_listing(track) for track in tracks]
    if args.json:
        print(json.dumps(listing, indent=2, ensure_ascii=False))
        return 0
    for item in listing:
        print(f"{item['piste']}: {item['titre']}")
        for key in ("sources", "build", "manifest", "taches", "cle", "bareme", "gel"):
            print(f"  {key:<9} {item[key]}")
        print(f"  served   {item['referentiel']}, {item['catalogue']}, {len(item['collections'])} collections")
    return 0


def cmd_freeze_check(args: argparse.Namespace) -> int:
    problems = check_freeze(args.root, args.salt_file, _track(args).places)
    for problem in problems:
        print(f"corpus freeze-check: {problem}", file=sys.stderr)
    print(f"corpus freeze-check: {'FAILED' if problems else 'passed'}", file=sys.stderr)
    return 1 if problems else 0


def parser() -> argparse.ArgumentParser:
    top = OneLineParser(
        prog="corpus",
        description="Compile, check and serve the frozen PROVE IT conformité corpus. Authors edit "
                    "corpus_src/, run 'corpus check', then 'corpus build', and commit build/ and manifest/ "
                    "with their sources.")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("check", help="validate corpus_src/ and list every error at once",
                       description="Load corpus_src/ strictly and run every validation rule (schemas, IDs, "
                                   "dates, references, pagination). Prints each problem as "
                                   "file:line:column: field: message. Exit 1 if any error (warnings alone "
                                   "exit 0). Writes nothing.")
    add_root_options(p)
    add_track_option(p, "check only this track (default: every track of the checkout)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("build", help="compile corpus_src/ into build/ and manifest/",
                       description="Validate, then compile corpus_src/ into one JSON file per served "
                                   "resource under build/ and the SHA-256 manifest under manifest/. One "
                                   "transaction: build/ and manifest/ change together or not at all, even if "
                                   "the command is killed; a second build waits for the first (.corpus.lock); "
                                   "leftovers of a killed build are repaired first, and said so. Files are "
                                   "0644 and folders 0755 whatever the umask. Same sources give the same "
                                   "bytes, on any machine.")
    add_root_options(p)
    base_url_option(p)
    p.add_argument("--no-wait", action="store_true",
                   help="refuse (exit 1) instead of waiting when another build holds the lock")
    add_track_option(p, "build only this track (default: every track of the checkout, each its own "
                        "transaction)")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("manifest-hash", help="print the manifest hash (SHA-256 of manifest/manifest.json)",
                       description="Print the manifest hash that the freeze anchors, as read from "
                                   "manifest/manifest.sha256.")
    add_root_options(p)
    add_track_option(p)
    p.set_defaults(func=cmd_manifest_hash)

    p = sub.add_parser("show", help="pretty-print a built resource and its manifest entry",
                       description="Print the frozen bytes of a served path (e.g. /agrements/AGR-4417) and "
                                   "its manifest entry: length, sha256, request_hash, response_hash.")
    p.add_argument("path", help="canonical path, e.g. /entites/ENT-1001")
    add_root_options(p)
    add_track_option(p, "look in this track only (default: every track)")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("freeze", help="write freeze/record.json: manifest hash, barème hash, key commitment",
                       description="Pre-registration (spec §8): record the manifest hash, the SHA-256 of the "
                                   "frozen barème section (must be the published one) and sha256(salt ‖ "
                                   "season/cle.json) with a 32-byte salt read from, or created in, --salt-file "
                                   "(mode 0600, outside the repository). From then on, a build that would change "
                                   "a byte of the manifest or of the key fails.")
    p.add_argument("--bareme", type=Path, default=None,
                   help="the frozen barème section (default: ROOT/spec/conformite-bareme-v3.section-5.txt, a "
                        "byte-exact copy of the published section)")
    p.add_argument("--salt-file", type=Path, required=True, help="hex salt file outside the repository")
    add_root_options(p)
    add_track_option(p)
    p.set_defaults(func=cmd_freeze)

    p = sub.add_parser("freeze-check", help="check freeze/record.json against manifest/ and the key",
                       description="What the scorer checks before scoring (spec §8.5): the manifest hash and, "
                                   "with --salt-file, the key commitment. Exit 1 on any difference.")
    p.add_argument("--salt-file", type=Path, help="the salt, to check the key commitment too")
    add_root_options(p)
    add_track_option(p)
    p.set_defaults(func=cmd_freeze_check)

    p = sub.add_parser("tracks", help="list the tracks of the checkout and where their files are",
                       description="Every track of ROOT/tracks/ (one folder each, with its track.yaml): its "
                                   "sources, build, manifest, statements, key, barème section and freeze "
                                   "folders (relative to the checkout) and the paths of its référentiel and "
                                   "catalogue. --json prints a list that freeze and scorer scripts read.")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    add_root_options(p)
    p.set_defaults(func=cmd_tracks)

    for module in _TOOL_MODULES:
        importlib.import_module(module).register(sub)
    return top


def main(argv: list[str] | None = None) -> int:
    """Run one sub-command; every error the project raises on purpose is one message and exit 1.

    An OSError that a command did not turn into a message of its own (a file it could not read or
    write) is still one line ``corpus CMD: FILE: reason``, exit 1: every error a user can cause is a
    message with its place. Any other exception is a bug of ours and keeps its traceback.
    """
    args = parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CorpusError as exc:
        _print_problems(exc.problems)
        print(f"corpus {args.command}: {len(exc.problems)} error(s)", file=sys.stderr)
    except GeneratorError as exc:
        print(f"corpus {args.command}: {exc}", file=sys.stderr)
    except OSError as exc:  # last resort: a file the user named or a disk that failed, never a bug of ours
        print(f"corpus {args.command}: {os_error_text(exc)}", file=sys.stderr)
    except KeyboardInterrupt:
        print(f"corpus {args.command}: interrupted", file=sys.stderr)
        return 130
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
