"""The one Jinja2 environment of the configuration text the project writes: nginx's files, systemd's units.

Package data: generator/templates/nginx is a link to the checkout's nginx/, generator/templates/systemd to
deploy/systemd/, which the wheel stores as files, so an installed corpus renders the templates of its own
version, whatever --root it is given. One loader searches both folders; their template names differ.
"""

from __future__ import annotations

from pathlib import Path

import jinja2

NGINX_TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "nginx"
SYSTEMD_TEMPLATES = Path(__file__).resolve().parents[2] / "templates" / "systemd"


def environment() -> jinja2.Environment:
    """Jinja2 for config text: undefined names fail, nothing escaped, newlines kept as written."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader([NGINX_TEMPLATES, SYSTEMD_TEMPLATES]),
                              undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True,
                              trim_blocks=True, lstrip_blocks=True)
