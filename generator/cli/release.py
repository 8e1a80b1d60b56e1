"""``corpus release``: install the verified build as a release, switch to it and reload the prefixes."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.cli.options import Subparsers, add_root_options
from generator.serving.release import CURRENT, install, link, release, releases_folder, rollback_target


def cmd_release(args: argparse.Namespace) -> int:
    releases = releases_folder(args.releases.resolve())
    prefixes = [p.resolve() for p in args.prefix]
    if args.rollback:
        target, previous = rollback_target(releases)
        pids = release(releases, target, prefixes, rollback=True)
        what = f"rolled back to {target.name} (previous {previous.name})"
    else:
        target = install(args.root.resolve(), releases, args.expect_manifest_hash)
        old = link(releases, CURRENT)
        pids = release(releases, target, prefixes)
        what = f"{target.name} is current (previous {old.name if old else 'none'})"
    reloaded = (f"; reloaded {len(pids)} nginx (master pids {', '.join(map(str, pids))}), each answers with the "
                "new configuration") if pids else "; no --prefix given, nothing reloaded"
    print(f"corpus release: {what}{reloaded}", file=sys.stderr)
    return 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "release", help="install the verified build as releases/<manifest hash>/, switch, reload",
        description="Prove ROOT's build (build/ equals the manifest; the manifest hash is --expect-manifest-hash "
                    "or the freeze record's), copy it into RELEASES/<manifest hash>/, point RELEASES/current at "
                    "it in one atomic rename (RELEASES/previous keeps the one before), then render every --prefix "
                    "again from RELEASES/current (replicas first, then the frontal) and reload it, returning "
                    "once each answers with the new configuration. Every prefix is rendered and checked with "
                    "nginx -t before the switch; a failure after it switches back and restores the prefixes "
                    "already changed. --rollback swaps current and previous.")
    add_root_options(p)
    p.add_argument("--releases", type=Path, required=True, help="folder of the releases (holds current, previous)")
    p.add_argument("--prefix", type=Path, action="append", default=[],
                   help="rendered nginx prefix to re-render and reload (repeat; replicas first, then frontals)")
    p.add_argument("--expect-manifest-hash", default=None, metavar="SHA256",
                   help="refuse a build whose manifest hash differs (default: the freeze record when it exists)")
    p.add_argument("--rollback", action="store_true", help="switch back to RELEASES/previous and reload")
    p.set_defaults(func=cmd_release)
