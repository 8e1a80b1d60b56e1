"""Write a rendered nginx prefix: ``nginx -t`` on a staged copy first, then conf/'s files replaced whole.

The rendering is :mod:`generator.serving.rendering.nginx_render`'s; a prefix is never left with a config nginx
would refuse.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from secrets import token_hex

from generator.base.atomic_file import write_atomic
from generator.base.errors import RenderError, ServingError
from generator.base.secret_values import (
    write_private,
)
from generator.serving.instances.nginx_process import test_config
from generator.serving.rendering.nginx_render import Rendered, render
from generator.serving.rendering.nginx_settings import Settings
from generator.serving.tls.peer_tls import PeerTLS


def _make_folders(settings: Settings) -> None:
    """The prefix (0755, traversable so that unprivileged workers can stat the maintenance flag), its
    conf/ (0700: read by the master only), logs/ and tmp/."""
    prefix = settings.prefix
    try:
        for folder in (prefix, settings.conf_dir, settings.logs_dir, prefix / "tmp"):
            folder.mkdir(parents=True, exist_ok=True)
        os.chmod(prefix, 0o755)
        os.chmod(settings.conf_dir, 0o700)
    except OSError as exc:
        raise RenderError(f"{exc.filename or prefix}: cannot create the prefix: {exc.strerror}") from None


def write(settings: Settings, rendered: Rendered) -> None:
    """Write the rendered files under the prefix, each replaced whole; the secrets include 0600 from the start.

    The only secret in the prefix is the 0600 include, which only the master reads. The secrets go
    first: the site that includes them is only replaced once they are in place.
    """
    _make_folders(settings)
    write_private(settings.secrets_conf, rendered.secrets_conf)
    for path, text in ((settings.corpus_conf, rendered.corpus_conf), (settings.nginx_conf, rendered.nginx_conf),
                       (settings.settings_file, json.dumps(rendered.settings, indent=2, sort_keys=True) + "\n")):
        write_atomic(path, text)


def render_and_write(settings: Settings, repo_root: Path | None, peer: PeerTLS | None = None) -> Rendered:
    """Render, ``nginx -t`` the staged files, only then replace conf/'s files (see :func:`render_checked`)."""
    rendered = render_checked(settings, repo_root, peer)
    write(settings, rendered)
    return rendered


def render_checked(settings: Settings, repo_root: Path | None, peer: PeerTLS | None = None) -> Rendered:
    """Render into a staging folder inside conf/ and ``nginx -t`` the staged files; conf/ is not touched.

    A prefix is never left with a config nginx would refuse: a refused config (or a render that fails)
    leaves conf/ as it was, and the staging folder is removed whatever happens. :func:`write` then puts
    the checked files in place.
    """
    conf_dir = settings.resolved().conf_dir
    staging = conf_dir / f".staging-{token_hex(6)}"
    rendered = render(settings, repo_root, staging=staging, peer=peer)
    _make_folders(settings)
    try:
        staging.mkdir(mode=0o700)
        write_private(staging / settings.secrets_conf.name, rendered.secrets_conf)
        write_atomic(staging / settings.corpus_conf.name, rendered.staged_corpus_conf)
        write_atomic(staging / settings.nginx_conf.name, rendered.staged_nginx_conf)
        test_config(settings.prefix, staging / settings.nginx_conf.name)
    except ServingError as exc:  # nginx names the staged files (or is missing): name the ones the operator knows
        raise RenderError(f"{str(exc).replace(os.fspath(staging), os.fspath(conf_dir))}\n"
                          f"{conf_dir} left unchanged") from None
    except OSError as exc:
        raise RenderError(f"{exc.filename or staging}: cannot stage the configuration: {exc.strerror}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return rendered
