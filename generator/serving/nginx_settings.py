"""What one nginx instance of the corpus needs to know: its role, its addresses, its files, never a secret.

Three roles share these settings: the **replica** (the vhost of ``nginx/corpus.conf.j2`` serving
``build/``), the **frontal** (``nginx/frontal.conf.j2``: TLS, the secret, failover over the replicas)
and nothing else. A rendered prefix holds everything the instance needs and writes::

    PREFIX/conf/nginx.conf          main config for a standalone run (serve, tests, benchmarks, systemd)
    PREFIX/conf/corpus.conf         the site (vhost or frontal), includable in a host nginx's http {} block
    PREFIX/conf/corpus-secrets.conf accepted secrets, mode 0600, rewritten on rotation
    PREFIX/conf/settings.json       these settings, without secret values (re-rendered by release/rotation)
    PREFIX/logs/, PREFIX/tmp/       logs, pid file, nginx's temporary folders
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from generator.base.errors import RenderError

DEFAULT_WORKER_USER = "nobody"
ROLES = ("replica", "frontal")


@dataclass(frozen=True)
class Settings:
    """What varies between a local run, the tests and production. Never holds a secret value."""

    root: Path  # folder holding build/ and manifest/ (a release folder for a replica in production)
    prefix: Path  # private nginx prefix (conf/, logs/, tmp/)
    listen: str = "127.0.0.1"
    port: int = 8080
    server_name: str = ""  # default: the host of the manifest's base URL
    tls_cert: Path | None = None
    tls_key: Path | None = None
    secret_file: Path | None = None
    secret_env: str | None = None
    access_log: Path | None = None  # default PREFIX/logs/access.log
    error_log: Path | None = None  # default PREFIX/logs/error.log
    maintenance_flag: Path | None = None  # default PREFIX/maintenance (replica only)
    worker_processes: str = "auto"
    worker_user: str | None = None  # used only when nginx starts as root; default "nobody"
    extra_server_include: Path | None = None  # tests only: an extra file included in the server block
    role: str = "replica"  # "replica" or "frontal"
    upstreams: tuple[str, ...] = ()  # frontal only: the replicas, "host:port" each
    expect_manifest_hash: str | None = None  # replica: refuse to render another build (else the freeze record)
    tls_resumption: bool = True  # False only for benchmarks of clients that never resume (the proxy)

    @property
    def conf_dir(self) -> Path:
        return self.prefix / "conf"

    @property
    def nginx_conf(self) -> Path:
        return self.conf_dir / "nginx.conf"

    @property
    def corpus_conf(self) -> Path:
        return self.conf_dir / "corpus.conf"

    @property
    def secrets_conf(self) -> Path:
        return self.conf_dir / "corpus-secrets.conf"

    @property
    def settings_file(self) -> Path:
        return self.conf_dir / "settings.json"

    @property
    def logs_dir(self) -> Path:
        return self.prefix / "logs"

    @property
    def pid_file(self) -> Path:
        return self.logs_dir / "nginx.pid"

    @property
    def access_log_path(self) -> Path:
        return self.access_log or self.logs_dir / "access.log"

    @property
    def error_log_path(self) -> Path:
        return self.error_log or self.logs_dir / "error.log"

    @property
    def maintenance_path(self) -> Path:
        return self.maintenance_flag or self.prefix / "maintenance"

    @property
    def tls(self) -> bool:
        return self.tls_cert is not None

    @property
    def probe_host(self) -> str:
        """Where to connect to check that the instance answers (a wildcard listen is probed on loopback)."""
        return {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(self.listen, self.listen.strip("[]"))

    def resolved(self) -> Settings:
        """Absolute paths everywhere: nginx resolves relative ones against its prefix, not our cwd."""
        def absolute(path: Path | None) -> Path | None:
            return path.resolve() if path is not None else None

        return replace(self, root=self.root.resolve(), prefix=self.prefix.resolve(),
                       tls_cert=absolute(self.tls_cert), tls_key=absolute(self.tls_key),
                       secret_file=absolute(self.secret_file),
                       access_log=absolute(self.access_log), error_log=absolute(self.error_log),
                       maintenance_flag=absolute(self.maintenance_flag),
                       extra_server_include=absolute(self.extra_server_include))

    def saved(self) -> dict[str, Any]:
        """The settings as JSON values (written as settings.json): paths as strings, no secret value."""
        out: dict[str, Any] = {}
        for key, value in asdict(self).items():
            if isinstance(value, Path):
                value = str(value)
            elif isinstance(value, tuple):
                value = list(value)
            out[key] = value
        return out


_PATH_FIELDS = {f.name for f in fields(Settings) if "Path" in str(f.type)}


def settings_from_saved(saved: dict[str, Any], **changes: Any) -> Settings:
    """Settings back from settings.json (for a re-render: a release, a rotation), with ``changes`` applied."""
    known = {f.name for f in fields(Settings)}
    values: dict[str, Any] = {}
    for key, value in saved.items():
        if key not in known:
            continue
        if key in _PATH_FIELDS and value is not None:
            value = Path(value)
        elif key == "upstreams":
            value = tuple(value)
        values[key] = value
    values.update(changes)
    return Settings(**values)


def read_settings(prefix: Path) -> dict[str, Any]:
    """The non-secret settings of a rendered prefix (written at render time)."""
    path = prefix / "conf" / "settings.json"
    try:
        return json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise RenderError(f"{path} not found: render the prefix first (corpus render-nginx)") from None
