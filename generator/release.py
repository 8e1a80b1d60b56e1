"""Releases: a verified build installed as ``releases/<manifest hash>/``, switched in atomically.

A release folder holds ``build/`` and ``manifest/`` exactly as proven (:func:`prove_build`), named by the
manifest hash so that two releases can never be confused and an installed one is never rewritten.
``releases/current`` is a symbolic link, replaced with one ``rename`` (atomic on POSIX): a reader sees
the old target or the new one, never a mix. ``releases/previous`` keeps the one before, for
``--rollback``. Each ``--prefix`` (a rendered replica or frontal) is then rendered again from
``releases/current`` and reloaded; the command returns once every nginx answers with the new
configuration. Old workers finish their requests from the old folder, which stays on disk: a request
gets the old release's bytes or the new one's, never a mix.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from generator.build_proof import prove_build
from generator.nginx_process import reload_and_wait
from generator.nginx_render import render_and_write
from generator.nginx_settings import RenderError, read_settings, settings_from_saved

CURRENT = "current"
PREVIOUS = "previous"


def install(root: Path, releases: Path, expect: str | None = None) -> Path:
    """Copy ``root``'s proven build into ``releases/<hash>/`` (kept if already there and still intact)."""
    digest = prove_build(root, expect).hash
    target = releases / digest
    if target.is_dir():
        prove_build(target, digest)
        return target
    releases.mkdir(parents=True, exist_ok=True)
    staging = releases / f".install-{digest}-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        for name in ("build", "manifest"):
            shutil.copytree(root / name, staging / name)
        prove_build(staging, digest)  # the copy, not only the source
        os.chmod(staging, 0o755)
        staging.rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _link(releases: Path, name: str) -> Path | None:
    path = releases / name
    return releases / os.readlink(path) if path.is_symlink() else None


def _point(releases: Path, name: str, target: Path) -> None:
    """Make ``releases/name`` point at ``target`` in one rename (relative link: the folder can move)."""
    tmp = releases / f".{name}.{os.getpid()}.tmp"
    tmp.unlink(missing_ok=True)
    os.symlink(target.name, tmp)
    os.replace(tmp, releases / name)


def switch(releases: Path, target: Path) -> Path | None:
    """``current`` -> target, ``previous`` -> the old current; return the old current."""
    old = _link(releases, CURRENT)
    if old is not None and old.name != target.name:
        _point(releases, PREVIOUS, old)
    _point(releases, CURRENT, target)
    return old


def rollback(releases: Path) -> tuple[Path, Path]:
    """Swap ``current`` and ``previous``; return (now current, now previous)."""
    old, back = _link(releases, CURRENT), _link(releases, PREVIOUS)
    if old is None or back is None or not back.is_dir():
        raise RenderError(f"{releases}: nothing to roll back to (no '{PREVIOUS}' release)")
    prove_build(back, back.name)
    _point(releases, CURRENT, back)
    _point(releases, PREVIOUS, old)
    return back, old


def reload_prefixes(releases: Path, prefixes: list[Path], digest: str) -> list[int]:
    """Render each prefix again from ``releases/current`` and reload it; return the master pids."""
    pids = []
    for prefix in prefixes:
        saved = read_settings(prefix)
        expect = digest if saved.get("role", "replica") == "replica" else None
        settings = settings_from_saved(saved, root=releases / CURRENT, expect_manifest_hash=expect).resolved()
        render_and_write(settings, None)
        pids.append(reload_and_wait(settings))
    return pids


def cmd_release(args: argparse.Namespace) -> int:
    releases: Path = args.releases.resolve()
    if args.rollback:
        current, previous = rollback(releases)
        what = f"rolled back to {current.name} (previous {previous.name})"
    else:
        target = install(args.root.resolve(), releases, args.expect_manifest_hash)
        old = switch(releases, target)
        current = target
        what = f"{target.name} is current (previous {old.name if old else 'none'})"
    pids = reload_prefixes(releases, [p.resolve() for p in args.prefix], current.name)
    reloaded = (f"; reloaded {len(pids)} nginx (master pids {', '.join(map(str, pids))}), each answers with the "
                "new configuration") if pids else "; no --prefix given, nothing reloaded"
    print(f"corpus release: {what}{reloaded}", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from generator.cli import add_root_options

    p = sub.add_parser(
        "release", help="install the verified build as releases/<manifest hash>/, switch, reload",
        description="Prove ROOT's build (build/ equals the manifest; the manifest hash is --expect-manifest-hash "
                    "or the freeze record's), copy it into RELEASES/<manifest hash>/, point RELEASES/current at "
                    "it in one atomic rename (RELEASES/previous keeps the one before), then render every --prefix "
                    "again from RELEASES/current (replicas first, then the frontal) and reload it, returning "
                    "once each answers with the new configuration. --rollback swaps current and previous.")
    add_root_options(p)
    p.add_argument("--releases", type=Path, required=True, help="folder of the releases (holds current, previous)")
    p.add_argument("--prefix", type=Path, action="append", default=[],
                   help="rendered nginx prefix to re-render and reload (repeat; replicas first, then frontals)")
    p.add_argument("--expect-manifest-hash", default=None, metavar="SHA256",
                   help="refuse a build whose manifest hash differs (default: the freeze record when it exists)")
    p.add_argument("--rollback", action="store_true", help="switch back to RELEASES/previous and reload")
    p.set_defaults(func=cmd_release)
