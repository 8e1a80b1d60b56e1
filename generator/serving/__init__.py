"""Serving the frozen bytes: nginx rendering, processes, local TLS, topology, releases, systemd units."""
