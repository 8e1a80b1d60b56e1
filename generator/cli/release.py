"""``corpus release``: install the verified build as a release, switch to it and reload the prefixes;
``corpus release pack`` and ``corpus release install``: the same release as one artifact, packed once and
installed host by host."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from generator.base.output_places import outside_protected
from generator.cli.options import Subparsers, UsageError, add_root_options
from generator.serving.releases.artifact import install_artifact, pack
from generator.serving.releases.release import (
    CURRENT,
    Reloaded,
    install,
    link,
    release,
    releases_folder,
    rollback_target,
)


def _switch(releases: Path, target: Path, prefixes: list[Path], command: str) -> str:
    """Switch ``releases/current`` to ``target`` and reload the prefixes; what to print."""
    old = link(releases, CURRENT)
    done = release(releases, target, prefixes)
    return f"{target.name} is current (previous {old.name if old else 'none'}){_reloaded(done, command)}"


def _reloaded(done: Reloaded, command: str) -> str:
    """What to print of the reloads (the masters' pids), once each warning is said on a line of its own."""
    for warning in done.warnings:
        print(f"corpus {command}: {warning}", file=sys.stderr)
    pids = done.pids
    if not pids:
        return "; no --prefix given, nothing reloaded"
    return (f"; reloaded {len(pids)} nginx (master pids {', '.join(map(str, pids))}), each answers with the new "
            "configuration")


def cmd_release(args: argparse.Namespace) -> int:
    if args.releases is None:
        raise UsageError("--releases is required (or: release pack --out DIR, release install ARTIFACT)")
    releases = releases_folder(args.releases.resolve())
    prefixes = [p.resolve() for p in args.prefix]
    if args.rollback:
        target, previous = rollback_target(releases)
        done = release(releases, target, prefixes, rollback=True)
        what = f"rolled back to {target.name} (previous {previous.name}){_reloaded(done, 'release')}"
    else:
        what = _switch(releases, install(args.root.resolve(), releases, args.expect_manifest_hash), prefixes,
                       "release")
    print(f"corpus release: {what}", file=sys.stderr)
    return 0


def cmd_pack(args: argparse.Namespace) -> int:
    root = args.root.resolve()
    out = outside_protected(root, args.out, "--out", "which the generator compiles or serves: write the artifact "
                                                     "elsewhere")
    start = time.monotonic()
    packed = pack(root, out.resolve(), args.expect_manifest_hash)
    print(f"corpus release pack: {packed.path} ({packed.size} bytes, {packed.files} files, sha256 {packed.sha256} "
          f"in {packed.digest_path.name}) in {time.monotonic() - start:.2f} s; copy both to each host, then "
          f"corpus release install {packed.path.name} --releases DIR --prefix ...", file=sys.stderr)
    return 0


def cmd_install(args: argparse.Namespace) -> int:
    releases = releases_folder(args.releases.resolve())
    target = install_artifact(args.artifact.absolute(), releases, args.expect_manifest_hash)
    what = _switch(releases, target, [p.resolve() for p in args.prefix], "release install")
    print(f"corpus release install: {what}", file=sys.stderr)
    return 0


def _prefix_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--prefix", type=Path, action="append", default=[],
                   help="rendered nginx prefix to re-render and reload (repeat; replicas first, then frontals)")


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "release", help="install the verified build as releases/<release hash>/, switch, reload; pack, install",
        description="Prove ROOT's build, every track (each build equals its manifest; --expect-manifest-hash is "
                    "the release hash or the first track's manifest hash, else each track's freeze record holds), "
                    "copy it into RELEASES/<release hash>/ (the release hash: SHA-256 of the sorted lines "
                    "'<piste> <manifest hash>', docs/operating.md), point RELEASES/current at "
                    "it in one atomic rename (RELEASES/previous keeps the one before), then render every --prefix "
                    "again from RELEASES/current (replicas first, then the frontal) and reload it, returning "
                    "once each answers with the new configuration. Every prefix is rendered and checked with "
                    "nginx -t before the switch; a failure after it switches back and restores the prefixes "
                    "already changed. --rollback swaps current and previous. 'release pack' writes the same "
                    "release as one deterministic artifact, 'release install' installs one on a host.")
    add_root_options(p)
    p.add_argument("--releases", type=Path, default=None, help="folder of the releases (holds current, previous)")
    _prefix_option(p)
    p.add_argument("--expect-manifest-hash", default=None, metavar="SHA256",
                   help="refuse another release: its release hash, or the first track's manifest hash (default: "
                        "each track's freeze record when it exists)")
    p.add_argument("--rollback", action="store_true", help="switch back to RELEASES/previous and reload")
    p.set_defaults(func=cmd_release)
    actions = p.add_subparsers(dest="release_action", metavar="{pack,install}")

    packing = actions.add_parser(
        "pack", help="write the verified build as OUT/<release hash>.tar and its .sha256",
        description="Prove every track of ROOT as 'corpus release' does, then write what a release holds (each "
                    "track's build/ and manifest/, its freeze record, tracks/) as OUT/<release hash>.tar, one "
                    "deterministic uncompressed tar (same sources, same bytes on any machine, path, umask, "
                    "timezone or locale) whose first member, release.json, gives every file's length and SHA-256, "
                    "and OUT/<release hash>.sha256 beside it (sha256sum -c reads it). "
                    "The name is the release hash over every track's manifest hash, the release folder it "
                    "installs to.")
    add_root_options(packing)
    packing.add_argument("--out", type=Path, required=True, help="folder to write the artifact into (created)")
    packing.add_argument("--expect-manifest-hash", default=None, metavar="SHA256",
                         help="refuse another release: its release hash, or the first track's manifest hash "
                              "(default: each track's freeze record)")
    packing.set_defaults(func=cmd_pack)

    installing = actions.add_parser(
        "install", help="check an artifact, install it as releases/<release hash>/, switch, reload",
        description="Check ARTIFACT's SHA-256 against the .sha256 beside it, every member's header before any "
                    "of its bytes (plain files and folders only, no sparse member, each no larger than the "
                    "artifact), every member against the artifact's index and the index against the manifests, "
                    "unpack it into a private folder in bounded chunks (each file's SHA-256 checked), prove every "
                    "track against its manifest inside (their release hash is the artifact's name) and every "
                    "freeze record against its track, then install it as RELEASES/<release hash>/ and switch "
                    "and reload the prefixes as 'corpus release' does, rolling back on a failure. A refused "
                    "artifact is one line, exit 1, nothing installed or switched.")
    installing.add_argument("artifact", type=Path, metavar="ARTIFACT", help="DIR/<release hash>.tar")
    installing.add_argument("--releases", type=Path, required=True,
                            help="folder of the releases (holds current, previous)")
    _prefix_option(installing)
    installing.add_argument("--expect-manifest-hash", default=None, metavar="SHA256",
                            help="refuse an artifact of another release")
    installing.set_defaults(func=cmd_install)
