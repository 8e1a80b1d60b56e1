"""Commands on one rendered nginx instance, by its prefix alone: ``corpus verify-build`` and ``corpus reload``.

Both read ``PREFIX/conf/settings.json``, which every render and every release rewrites, so that the
systemd units (``corpus render-systemd``) never change when a release or a rotation does:

- ``verify-build`` is a replica's start check: its root still holds exactly the manifest it was rendered
  for (:func:`generator.build_proof.prove_build` with the recorded manifest hash); exit 1 otherwise.
- ``reload`` renders the instance again from its settings (the secret file's current lines, the current
  release), checks it with ``nginx -t`` and reloads, returning only once the new configuration answers.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.build_proof import prove_build
from generator.nginx_process import reload_and_wait
from generator.nginx_render import render_and_write
from generator.nginx_settings import RenderError, read_settings


def verify_prefix(prefix: Path) -> str:
    """Prove the build a rendered replica serves; return its manifest hash."""
    saved = read_settings(prefix)
    if saved.settings.role != "replica":
        raise RenderError(f"{prefix}: a {saved.settings.role} serves no build; verify-build is for replicas")
    return prove_build(saved.settings.root, saved.expected_manifest_hash).hash


def reload_prefix(prefix: Path) -> int:
    """Render again from settings.json, ``nginx -t``, reload and wait; return the master pid."""
    settings = read_settings(prefix).settings.resolved()
    render_and_write(settings, None)
    return reload_and_wait(settings)


def cmd_verify_build(args: argparse.Namespace) -> int:
    digest = verify_prefix(args.prefix.resolve())
    print(f"corpus verify-build: build matches manifest {digest}", file=sys.stderr)
    return 0


def cmd_reload(args: argparse.Namespace) -> int:
    pid = reload_prefix(args.prefix.resolve())
    print(f"corpus reload: nginx (master pid {pid}) reloaded; only the new configuration answers now",
          file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify-build", help="a rendered replica's start check: its build is exactly its manifest",
        description="Read PREFIX/conf/settings.json and prove the replica's root: every manifest entry's bytes, "
                    "no other file in build/, and the manifest hash the prefix was rendered for (or its "
                    "--expect-manifest-hash). Exit 1, naming the first difference, otherwise.")
    p.add_argument("--prefix", type=Path, required=True, help="rendered nginx prefix")
    p.set_defaults(func=cmd_verify_build)

    p = sub.add_parser(
        "reload", help="re-render an instance from its settings and reload it, waiting until it answers",
        description="Render PREFIX again from PREFIX/conf/settings.json (the secret file as it is now, the "
                    "current release), run nginx -t, signal the running nginx, and return only once no worker "
                    "of the previous configuration accepts connections and the port answers.")
    p.add_argument("--prefix", type=Path, required=True, help="rendered nginx prefix")
    p.set_defaults(func=cmd_reload)
