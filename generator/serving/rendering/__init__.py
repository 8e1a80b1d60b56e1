"""An instance's settings rendered: nginx configuration (safe syntax, the served build proven, the host
checked) and systemd units, from the one Jinja2 environment. Imports :mod:`generator.serving.tls` only."""
