"""What ``corpus verify-build`` and ``corpus reload`` do to one rendered nginx instance, by its prefix alone.

Both read ``PREFIX/conf/settings.json``, which every render and every release rewrites, so that the
systemd units (``corpus render-systemd``) never change when a release or a rotation does:

- ``verify-build`` is a replica's start check: its root still holds exactly the manifests it was rendered
  for (:func:`generator.contract.build_proof.prove_release` with the recorded release or manifest hash);
  exit 1 otherwise.
- ``reload`` renders the instance again from its settings (the secret file's current lines, the current
  release), checks it with ``nginx -t`` and reloads, returning only once the new configuration answers.
"""

from __future__ import annotations

from pathlib import Path

from generator.base.errors import DeployError
from generator.contract.build_proof import prove_release
from generator.contract.manifest import release_hash
from generator.serving.instances.nginx_process import reload_and_wait
from generator.serving.instances.nginx_write import render_and_write
from generator.serving.rendering.nginx_settings import read_settings
from generator.tracks.loader import load_tracks


def verify_prefix(prefix: Path) -> str:
    """Prove every track's build a rendered replica serves; return what it serves: the release hash, then
    each track's manifest hash (``release <hash> (conformite <hash>, generique <hash>)``)."""
    saved = read_settings(prefix)
    if saved.settings.role != "replica":
        raise DeployError(f"{prefix}: a {saved.settings.role} serves no build; verify-build is for replicas")
    root = saved.settings.root
    every = [track.places for track in load_tracks(root)]
    hashes = {places.piste: m.hash for places, m in zip(every, prove_release(root, saved.expected_manifest_hash,
                                                                             every), strict=True)}
    return f"release {release_hash(hashes)} ({', '.join(f'{p} {h}' for p, h in hashes.items())})"


def reload_prefix(prefix: Path) -> tuple[int, tuple[str, ...]]:
    """Render again from settings.json, ``nginx -t``, reload and wait; return the master pid and what the
    render warned of (a TLS certificate ending soon: a reload is when a renewed one is taken)."""
    settings = read_settings(prefix).settings.resolved()
    rendered = render_and_write(settings, None)
    return reload_and_wait(settings), rendered.warnings
