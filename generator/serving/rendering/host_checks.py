"""The checks of the host and the settings before nginx is rendered: one secret source, a prefix outside
every protected tree, the TLS files, the workers' account and what it may traverse.
"""

from __future__ import annotations

import os
import pwd
import stat
from pathlib import Path

from generator.base.errors import RenderError
from generator.base.output_places import OutputRefused, outside_protected
from generator.base.secret_values import (
    SecretError,
    read_secret_env,
    read_secret_file,
)
from generator.serving.rendering.nginx_settings import DEFAULT_WORKER_USER, Settings
from generator.serving.tls.tls_files import check_tls_file


def secret_values(settings: Settings, repo_root: Path | None) -> list[str]:
    if (settings.secret_file is None) == (settings.secret_env is None):
        raise RenderError("give exactly one secret source: --secret-file FILE or --secret-env NAME")
    try:
        if settings.secret_file is not None:
            return read_secret_file(settings.secret_file, repo_root)
        assert settings.secret_env is not None
        return read_secret_env(settings.secret_env)
    except SecretError as exc:
        raise RenderError(str(exc)) from None


# Folders of the checkout that are served, compiled, hashed or rendered from: a prefix there would put the
# 0600 secrets include (and logs) where nginx serves them or where git and the manifest see them.
def check_prefix(settings: Settings) -> None:
    """Refuse a prefix inside a compiled, served or tracked tree of the checkout, every track's
    (:data:`~generator.base.output_places.PROTECTED`)."""
    try:
        outside_protected(settings.root, settings.prefix, "--prefix", "where the secrets include would land: use "
                          "a folder under run/ or outside the repository")
    except OutputRefused as exc:
        raise RenderError(str(exc)) from None


def check_tls_files(settings: Settings) -> None:
    """The certificate and key, each checked (:func:`check_tls_file`): nginx -t would word it in four lines."""
    for option, path, kind in (("--tls-cert", settings.tls_cert, "certificate"), ("--tls-key", settings.tls_key,
                                                                                  "key")):
        if path is not None:
            check_tls_file(path, option, kind)


def worker_account(settings: Settings) -> pwd.struct_passwd | None:
    """The workers' account when the master runs as root (else None: nginx could not switch anyway)."""
    if os.geteuid() != 0:
        return None
    name = settings.worker_user or DEFAULT_WORKER_USER
    try:
        return pwd.getpwnam(name)
    except KeyError:
        raise RenderError(f"worker user {name!r} does not exist; choose one with --worker-user") from None


def check_world_access(path: Path, what: str) -> None:
    """Workers under another account: every folder up to ``path`` must be traversable by others.

    Without this, nginx would answer 403 for every file (permission denied), and a 403 is the
    "ask the proxy" body: the proxy would be told it is not the proxy.
    """
    current = path.resolve()
    for folder in [*reversed(current.parents), current]:
        if folder.is_dir() and not folder.stat().st_mode & stat.S_IXOTH:
            raise RenderError(f"{folder}: not traversable by the unprivileged nginx workers ({what}); "
                              f"run: chmod o+x {folder}, or move the checkout; for a local run, "
                              "'corpus serve' runs the workers as you")

