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

import os
from collections.abc import Callable
from dataclasses import MISSING, asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from generator.base import strict_json
from generator.base.bounded_read import MIB
from generator.base.errors import RenderError, read_file
from generator.serving.tls.peer_tls import KEY as PEER_KEY
from generator.serving.tls.peer_tls import PLAIN, PeerTLS

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

        # the secret file is read by us, never named to nginx: kept as the operator wrote it (links not
        # followed), so that a message about it names the file they gave
        secret_file = Path(os.path.abspath(self.secret_file)) if self.secret_file is not None else None
        return replace(self, root=self.root.resolve(), prefix=self.prefix.resolve(),
                       tls_cert=absolute(self.tls_cert), tls_key=absolute(self.tls_key),
                       secret_file=secret_file,
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


SETTINGS_LIMIT = MIB  # a settings.json is a few hundred bytes; anything larger is not one


class SettingsFileError(RenderError):
    """``PREFIX/conf/settings.json`` is not the file a render writes: not JSON, not an object, a field missing
    or of the wrong type. The message names the file and the field."""


# How settings.json writes each annotation of Settings: (check of the JSON value, what it is, to Python).
_FIELD_TYPES: dict[str, tuple[Callable[[Any], bool], str, Callable[[Any], Any]]] = {
    "Path": (lambda v: isinstance(v, str) and v != "", "a path", Path),
    "Path | None": (lambda v: v is None or (isinstance(v, str) and v != ""), "a path or null",
                    lambda v: None if v is None else Path(v)),
    "str": (lambda v: isinstance(v, str), "a string", str),
    "str | None": (lambda v: v is None or isinstance(v, str), "a string or null", lambda v: v),
    "int": (lambda v: type(v) is int, "an integer", int),
    "bool": (lambda v: type(v) is bool, "true or false", bool),
    "tuple[str, ...]": (lambda v: isinstance(v, list) and all(isinstance(i, str) for i in v),
                        "a list of strings", tuple),
}
_SETTINGS_FIELDS = {f.name: (_FIELD_TYPES[str(f.type)], f.default is MISSING) for f in fields(Settings)}


@dataclass(frozen=True)
class SettingsFile:
    """``PREFIX/conf/settings.json`` parsed once and checked field by field: what a re-render, a release, a
    start check or a unit reads of a rendered prefix.

    ``settings`` are the rendered instance's settings; ``manifest_hash`` the hash of the manifest it was
    rendered with (a replica), ``secrets_accepted`` how many secrets its include held, ``peer`` the link
    between frontals and replicas (``peer_tls``; plain when absent, as a prefix rendered before it). Keys
    this version does not know are ignored (a later version may add some); a known key of the wrong type,
    or a missing ``root`` or ``prefix``, is a :class:`SettingsFileError`."""

    path: Path
    settings: Settings
    manifest_hash: str | None = None
    secrets_accepted: int | None = None
    peer: PeerTLS = PLAIN

    @classmethod
    def from_bytes(cls, data: bytes, path: Path) -> SettingsFile:
        """Parse and check every field; :class:`SettingsFileError` names the file and the field otherwise."""
        try:
            document = strict_json.document(data)
        except strict_json.NotJson as exc:
            raise SettingsFileError(f"{exc.text(path)}; {_AGAIN}") from None
        if not isinstance(document, dict):
            raise SettingsFileError(f"{path}: expected a JSON object of settings, got {_json_type(document)}; "
                                    f"{_AGAIN}")
        values: dict[str, Any] = {}
        for name, ((check, wanted, convert), required) in _SETTINGS_FIELDS.items():
            if name not in document:
                if required:
                    raise SettingsFileError(f"{path}: {name}: missing; {_AGAIN}")
                continue
            value = document[name]
            if not check(value):
                raise SettingsFileError(f"{path}: {name}: expected {wanted}, got {_json_type(value)}; {_AGAIN}")
            values[name] = convert(value)
        if values.get("role", "replica") not in ROLES:
            raise SettingsFileError(f"{path}: role: expected one of {', '.join(ROLES)}, got {values['role']!r}; "
                                    f"{_AGAIN}")
        if not 0 < values.get("port", 8080) < 65536:
            raise SettingsFileError(f"{path}: port: expected a port from 1 to 65535, got {values['port']}; "
                                    f"{_AGAIN}")
        extra: dict[str, Any] = {}
        for name, check, wanted in (("manifest_hash", _is_str_or_none, "a string or null"),
                                    ("secrets_accepted", _is_count_or_none, "a count or null")):
            value = document.get(name)
            if not check(value):
                raise SettingsFileError(f"{path}: {name}: expected {wanted}, got {_json_type(value)}; {_AGAIN}")
            extra[name] = value
        return cls(path, Settings(**values), **extra, peer=_peer(document.get(PEER_KEY), path))

    @classmethod
    def read(cls, prefix: Path) -> SettingsFile:
        """The settings file of a rendered prefix, read bounded (a FIFO or a folder is refused, not waited on;
        a dangling link or a mode that forbids reading is named as such)."""
        path = prefix / "conf" / "settings.json"
        # absent or unreadable here is a RenderError (a unit may be rendered for a prefix of another host);
        # there but no regular file, or too large, is a SettingsFileError like a corrupt one
        data = read_file(path, RenderError, "not found: render the prefix first (corpus render-nginx)",
                         limit=SETTINGS_LIMIT, fix=_AGAIN, refused=SettingsFileError)
        return cls.from_bytes(data, path)

    @property
    def expected_manifest_hash(self) -> str | None:
        """The manifest a replica must serve: ``--expect-manifest-hash`` if it was given, else the rendered one."""
        return self.settings.expect_manifest_hash or self.manifest_hash


_AGAIN = "render the prefix again (corpus render-nginx)"


def _peer(value: Any, path: Path) -> PeerTLS:
    """The ``peer_tls`` key: null or absent (plain), or an object of paths ``ca``, ``cert``, ``key``."""
    if value is None:
        return PLAIN
    wanted = "expected an object of paths (ca, cert, key; each a string or null)"
    if not isinstance(value, dict):
        raise SettingsFileError(f"{path}: {PEER_KEY}: {wanted}, got {_json_type(value)}; {_AGAIN}")
    for name, item in value.items():
        if name not in ("ca", "cert", "key"):
            raise SettingsFileError(f"{path}: {PEER_KEY}.{name}: not a key of the link; {wanted}; {_AGAIN}")
        if not (item is None or (isinstance(item, str) and item)):
            raise SettingsFileError(f"{path}: {PEER_KEY}.{name}: expected a path or null, got "
                                    f"{_json_type(item)}; {_AGAIN}")
    return PeerTLS(*(Path(value[name]) if value.get(name) else None for name in ("ca", "cert", "key")))


def saved_peer(prefix: Path) -> PeerTLS:
    """The link as ``PREFIX/conf/settings.json`` recorded it: plain when the prefix was never rendered."""
    path = prefix / "conf" / "settings.json"
    if not path.exists() and not path.is_symlink():
        return PLAIN
    return SettingsFile.read(prefix).peer


def _is_str_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _is_count_or_none(value: Any) -> bool:
    return value is None or (type(value) is int and value >= 0)


def _json_type(value: Any) -> str:
    """What a JSON value is, for a message (``a list``, ``null``, ``a string``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    for kind, name in ((dict, "an object"), (list, "a list"), (str, "a string"), (int, "an integer"),
                       (float, "a number")):  # isinstance: the strict reader's objects are dict subclasses
        if isinstance(value, kind):
            return name
    return type(value).__name__


def read_settings(prefix: Path) -> SettingsFile:
    """The non-secret settings of a rendered prefix (written at render time), checked field by field."""
    return SettingsFile.read(prefix)
