"""Render the nginx vhost from ``nginx/*.j2``, the build and a few settings (``corpus render-nginx``).

A rendered prefix holds everything one nginx instance needs and writes::

    PREFIX/conf/nginx.conf          main config for a standalone run (serve, tests, benchmark)
    PREFIX/conf/corpus.conf         the vhost, includable in a host nginx's http {} block
    PREFIX/conf/corpus-secrets.conf accepted secrets, mode 0600, rewritten on rotation
    PREFIX/conf/settings.json       the non-secret settings (where the flag file and logs are)
    PREFIX/logs/, PREFIX/tmp/       logs, pid file, nginx's temporary folders

Everything written into the config is checked first: the build must agree with the manifest, every
``/_systeme`` body the vhost returns must exist, and the absent template must reproduce the declared
absents byte for byte. A render that would serve other bytes than the manifest fails here.
"""

from __future__ import annotations

import argparse
import grp
import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import jinja2

from generator import resource_types as col
from generator.compile import absent_body
from generator.hashing import sha256_hex
from generator.nginx_syntax import NginxSyntaxError, needs_dollar, quote_path, quote_regex, quote_text
from generator.output import MANIFEST_FILE, MANIFEST_HASH_FILE, body_bytes
from generator.secret_values import (
    SecretError,
    nginx_map_entries,
    read_secret_env,
    read_secret_file,
    write_private,
)
from generator.validate import REQUIRED_SYSTEME

TEMPLATES = Path(__file__).resolve().parent.parent / "nginx"
# Statuses nginx produces under its own numbers, answered with the body of the standard status.
REMAPPED = {494: 431, 497: 400}
REMAPPED_WHY = {494: "request header too large: nginx's private code for 431",
                497: "plain HTTP sent to the TLS port"}
ABSENT_PLACEHOLDER = "/corpus-absent-path-placeholder"
DEFAULT_WORKER_USER = "nobody"
# Access log lines are written by 32k blocks, at least every second: one write() per ~100 requests.
ACCESS_LOG_BUFFER = " buffer=32k flush=1s"


class RenderError(Exception):
    """The config cannot be rendered safely; the message says what to fix."""


@dataclass(frozen=True)
class Settings:
    """What varies between a local run, the tests and production. Never holds a secret value."""

    root: Path  # folder holding build/ and manifest/
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
    maintenance_flag: Path | None = None  # default PREFIX/maintenance
    worker_processes: str = "auto"
    worker_user: str | None = None  # used only when nginx starts as root; default "nobody"
    extra_server_include: Path | None = None  # tests only: an extra file included in the server block

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


@dataclass(frozen=True)
class ErrorPage:
    status: int
    text: str  # quoted nginx return text


@dataclass(frozen=True)
class Rendered:
    """The rendered files, before they are written."""

    nginx_conf: str
    corpus_conf: str
    secrets_conf: str
    settings: dict[str, Any]  # written as settings.json: never a secret value


# ---------------------------------------------------------------------------------------------- inputs


def load_manifest(root: Path) -> dict[str, Any]:
    path = root / "manifest" / MANIFEST_FILE
    try:
        return json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise RenderError(f"{path} not found: run 'corpus build' first") from None


def _checked_bytes(root: Path, entry: dict[str, Any]) -> bytes:
    """The bytes of a manifest entry's file, refused if they differ from what the manifest says."""
    path = root / "build" / entry["file"]
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise RenderError(f"{path}: listed in the manifest but missing; run 'corpus build'") from None
    if len(data) != entry["length"] or sha256_hex(data) != entry["sha256"]:
        raise RenderError(f"{path}: bytes differ from the manifest entry of {entry['path']}; run "
                          "'corpus build' (build/ and manifest/ must come from the same build)")
    return data


def error_pages(root: Path, manifest: dict[str, Any]) -> list[ErrorPage]:
    """One error location per ``/_systeme`` body, each checked against the manifest."""
    entries = {e["status"]: e for e in manifest["resources"] if e["kind"] == "systeme"}
    missing = sorted(int(s) for s in REQUIRED_SYSTEME if int(s) not in entries)
    if missing:
        raise RenderError(f"the manifest has no /_systeme body for status {missing}; the vhost answers them")
    pages = []
    for status in sorted(entries):
        data = _checked_bytes(root, entries[status])
        pages.append(ErrorPage(status, quote_text(data)))
    return pages


def absent_template(root: Path, manifest: dict[str, Any]) -> tuple[str, bool]:
    """The quoted return text of the existe:false body, with ``${uri}`` in place of the path.

    Also proves that the template reproduces every declared absent byte for byte, so that an identifier
    nobody declared and one the corpus cites are answered by the same documented function.
    """
    for entry in manifest["resources"]:
        if entry["kind"] == "absent":
            data = _checked_bytes(root, entry)
            if body_bytes(absent_body(entry["path"])) != data:
                raise RenderError(f"declared absent {entry['path']}: its file differs from the absent "
                                  "template (generator.compile.absent_body); rebuild")
    data = body_bytes(absent_body(ABSENT_PLACEHOLDER))
    return quote_text(data, ABSENT_PLACEHOLDER, "uri"), needs_dollar(data)


def _secret_values(settings: Settings, repo_root: Path | None) -> list[str]:
    if (settings.secret_file is None) == (settings.secret_env is None):
        raise RenderError("give exactly one secret source: --secret-file FILE or --secret-env NAME")
    try:
        if settings.secret_file is not None:
            return read_secret_file(settings.secret_file, repo_root)
        assert settings.secret_env is not None
        return read_secret_env(settings.secret_env)
    except SecretError as exc:
        raise RenderError(str(exc)) from None


def _worker_user(settings: Settings) -> str | None:
    """``user name group;`` when the master runs as root, else None (nginx would only warn)."""
    if os.geteuid() != 0:
        return None
    name = settings.worker_user or DEFAULT_WORKER_USER
    try:
        account = pwd.getpwnam(name)
    except KeyError:
        raise RenderError(f"worker user {name!r} does not exist; choose one with --worker-user") from None
    group = grp.getgrgid(account.pw_gid).gr_name
    return f"{name} {group}"


def _check_world_access(path: Path, what: str) -> None:
    """Workers run unprivileged when started as root: every folder up to ``path`` must be traversable.

    Without this, nginx would answer 403 for every file (permission denied), and a 403 is the
    "ask the proxy" body: the proxy would be told it is not the proxy.
    """
    current = path.resolve()
    for folder in [*reversed(current.parents), current]:
        if folder.is_dir() and not folder.stat().st_mode & stat.S_IXOTH:
            raise RenderError(f"{folder}: not traversable by the unprivileged nginx workers ({what}); "
                              f"run: chmod o+x {folder}")


def _server_name(settings: Settings, manifest: dict[str, Any]) -> str:
    name = settings.server_name or urlsplit(manifest.get("base_url", col.DEFAULT_BASE_URL)).hostname or "_"
    if not all(c.isalnum() or c in "-._*" for c in name):
        raise RenderError(f"server name {name!r}: letters, digits, '-', '.', '_' and '*' only")
    return name


def _listen(settings: Settings) -> str:
    host = settings.listen
    if not all(c.isalnum() or c in ".:[]" for c in host) or not 0 < settings.port < 65536:
        raise RenderError(f"listen address {host!r} port {settings.port}: not an address and port")
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{settings.port}"


def environment() -> jinja2.Environment:
    """Jinja2 for config text: undefined names fail, no HTML escaping, newlines kept as written."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                              autoescape=False, keep_trailing_newline=True, trim_blocks=True,
                              lstrip_blocks=True)


def _resolved(settings: Settings) -> Settings:
    """Absolute paths everywhere: nginx resolves relative ones against its prefix, not our cwd."""
    def absolute(path: Path | None) -> Path | None:
        return path.resolve() if path is not None else None

    return replace(settings, root=settings.root.resolve(), prefix=settings.prefix.resolve(),
                   tls_cert=absolute(settings.tls_cert), tls_key=absolute(settings.tls_key),
                   access_log=absolute(settings.access_log), error_log=absolute(settings.error_log),
                   maintenance_flag=absolute(settings.maintenance_flag),
                   extra_server_include=absolute(settings.extra_server_include))


def _context(s: Settings, manifest: dict[str, Any], worker_user: str | None) -> dict[str, Any]:
    """Every value the templates use, already quoted or validated for nginx."""
    pages = error_pages(s.root, manifest)
    absent_text, absent_dollar = absent_template(s.root, manifest)
    return {
        "corpus_id": manifest.get("corpus", "?"),
        "manifest_hash": (s.root / "manifest" / MANIFEST_HASH_FILE).read_text("ascii").strip(),
        "worker_user": worker_user,
        "worker_processes": _worker_processes(s.worker_processes),
        "worker_connections": 1024,
        "pid_file": quote_path(s.pid_file),
        "error_log": quote_path(s.error_log_path),
        "error_log_level": "warn",
        "access_log": quote_path(s.access_log_path),
        "access_log_buffer": ACCESS_LOG_BUFFER,
        "temp_paths": [(f"{name}_temp_path", quote_path(s.prefix / "tmp" / name))
                       for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")],
        "corpus_conf": quote_path(s.corpus_conf),
        "secrets_conf": quote_path(s.secrets_conf),
        "canonical_regex": quote_regex(col.CANONICAL_PATH),
        "collections": [{"name": c.name, "regex": quote_regex(c.path_pattern)} for c in col.COLLECTIONS],
        "need_dollar": absent_dollar or any("${corpus_dollar}" in p.text for p in pages),
        "tls": s.tls,
        "tls_cert": quote_path(s.tls_cert) if s.tls_cert else "",
        "tls_key": quote_path(s.tls_key) if s.tls_key else "",
        "listen": _listen(s),
        "server_name": _server_name(s, manifest),
        "maintenance_flag": quote_path(s.maintenance_path),
        "error_pages": pages,
        "remapped": sorted(REMAPPED.items()),
        "remapped_why": REMAPPED_WHY,
        "build_root": quote_path(s.root / "build"),
        "build_root_display": str(s.root / "build"),
        "absent_text": absent_text,
        "extra_server_include": quote_path(s.extra_server_include) if s.extra_server_include else "",
    }


def render(settings: Settings, repo_root: Path | None = None) -> Rendered:
    """Render the three config files from the build, the manifest and the settings.

    ``repo_root``: the checkout a secret file must stay out of (None: no such check).
    """
    s = _resolved(settings)
    manifest = load_manifest(s.root)
    if (s.tls_cert is None) != (s.tls_key is None):
        raise RenderError("TLS needs both --tls-cert and --tls-key (or neither, for plain HTTP)")
    secrets = _secret_values(s, repo_root)
    worker_user = _worker_user(s)
    if worker_user:
        _check_world_access(s.root / "build", "the build")
        _check_world_access(s.maintenance_path.parent, "the maintenance flag's folder")
    try:
        context = _context(s, manifest, worker_user)
    except NginxSyntaxError as exc:
        raise RenderError(str(exc)) from None
    env = environment()
    secrets_text = ("# Accepted X-Challenge-Secret values, rendered by `corpus render-nginx`.\n"
                    "# Private (mode 0600): never copy, commit or log this file.\n"
                    + "".join(line + "\n" for line in nginx_map_entries(secrets)))
    saved = {key: (str(value) if isinstance(value, Path) else value) for key, value in asdict(s).items()}
    saved.update(maintenance_flag=str(s.maintenance_path), access_log=str(s.access_log_path),
                 error_log=str(s.error_log_path), secrets_accepted=len(secrets))
    return Rendered(env.get_template("nginx.conf.j2").render(context),
                    env.get_template("corpus.conf.j2").render(context), secrets_text, saved)


def _worker_processes(value: str) -> str:
    if value != "auto" and not (value.isdigit() and 0 < int(value) <= 64):
        raise RenderError(f"worker processes {value!r}: 'auto' or a number from 1 to 64")
    return value


def write(settings: Settings, rendered: Rendered) -> None:
    """Write the rendered files under the prefix; the secrets include with mode 0600 from the start.

    The prefix is left traversable (0755) so that unprivileged workers can stat the maintenance flag;
    the only secret in it is the 0600 include, which only the master reads.
    """
    prefix = settings.prefix
    for folder in (prefix, settings.conf_dir, settings.logs_dir, prefix / "tmp"):
        folder.mkdir(parents=True, exist_ok=True)
    os.chmod(prefix, 0o755)
    os.chmod(settings.conf_dir, 0o700)  # read by the master only
    write_private(settings.secrets_conf, rendered.secrets_conf)
    for path, text in ((settings.corpus_conf, rendered.corpus_conf), (settings.nginx_conf, rendered.nginx_conf),
                       (settings.settings_file, json.dumps(rendered.settings, indent=2, sort_keys=True) + "\n")):
        tmp = path.with_name(f".{path.name}.tmp")
        tmp.write_text(text, "utf-8")
        os.replace(tmp, path)


def read_settings(prefix: Path) -> dict[str, Any]:
    """The non-secret settings of a rendered prefix (written by :func:`write`)."""
    path = prefix / "conf" / "settings.json"
    try:
        return json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise RenderError(f"{path} not found: render the prefix first (corpus render-nginx)") from None


# ------------------------------------------------------------------------------------ running nginx


def nginx_binary() -> str:
    """The nginx executable (PATH, then Debian's /usr/sbin)."""
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if found is None:
        raise RenderError("nginx not found; run 'make setup' (installs it from the Debian packages)")
    return found


def nginx_command(prefix: Path, *extra: str) -> list[str]:
    """``nginx -p PREFIX -c conf/nginx.conf -e logs/error.log ...``: never the compiled-in paths."""
    prefix = prefix.resolve()
    return [nginx_binary(), "-p", f"{prefix}/", "-c", str(prefix / "conf" / "nginx.conf"),
            "-e", str(prefix / "logs" / "error.log"), *extra]


def test_config(prefix: Path) -> None:
    """Run ``nginx -t`` on a rendered prefix; raise with nginx's own message when it fails."""
    result = subprocess.run(nginx_command(prefix, "-t", "-q"), capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RenderError(f"nginx -t failed:\n{result.stderr.strip()}")


def running_pid(prefix: Path) -> int | None:
    """The master pid of the nginx running from ``prefix``, or None."""
    try:
        pid = int((prefix / "logs" / "nginx.pid").read_text("ascii").strip())
    except (FileNotFoundError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid


def reload(prefix: Path) -> int:
    """Ask the running master to load the rendered config (SIGHUP); workers finish their requests.

    Returns the master pid. A config that fails ``nginx -t`` is never signalled: the running
    configuration stays in place.
    """
    test_config(prefix)
    pid = running_pid(prefix)
    if pid is None:
        raise RenderError(f"no nginx running from {prefix} (no live pid in logs/nginx.pid)")
    os.kill(pid, signal.SIGHUP)
    return pid


# ----------------------------------------------------------------------------------------------- CLI


def add_render_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``render-nginx`` and ``serve``."""
    parser.add_argument("--listen", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8080, help="port to listen on (default 8080)")
    parser.add_argument("--server-name", default="",
                        help="server_name (default: host of the manifest's base URL)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--secret-file", type=Path,
                        help="file of accepted secrets, one per line, mode 0600, outside the repository")
    source.add_argument("--secret-env", metavar="NAME",
                        help="environment variable holding the accepted secrets (space or comma separated)")
    parser.add_argument("--tls-cert", type=Path, help="TLS certificate chain (PEM); with --tls-key")
    parser.add_argument("--tls-key", type=Path, help="TLS private key (PEM); plain HTTP when omitted")
    parser.add_argument("--access-log", type=Path, help="access log (default PREFIX/logs/access.log)")
    parser.add_argument("--error-log", type=Path, help="error log (default PREFIX/logs/error.log)")
    parser.add_argument("--maintenance-flag", type=Path,
                        help="file whose existence switches the corpus to 503 (default PREFIX/maintenance)")
    parser.add_argument("--workers", default="auto", help="worker_processes (default auto)")
    parser.add_argument("--worker-user", default=None,
                        help=f"account of the workers when started as root (default {DEFAULT_WORKER_USER})")


def settings_from_args(args: argparse.Namespace, prefix: Path) -> Settings:
    return Settings(root=args.root, prefix=prefix, listen=args.listen, port=args.port,
                    server_name=args.server_name, tls_cert=args.tls_cert, tls_key=args.tls_key,
                    secret_file=args.secret_file, secret_env=args.secret_env, access_log=args.access_log,
                    error_log=args.error_log, maintenance_flag=args.maintenance_flag,
                    worker_processes=args.workers, worker_user=args.worker_user)


def render_and_write(settings: Settings, repo_root: Path | None) -> None:
    """Render, write, then ``nginx -t``: a prefix is never left with a config nginx would refuse."""
    write(settings, render(settings, repo_root))
    test_config(settings.prefix)


def cmd_render_nginx(args: argparse.Namespace) -> int:
    settings = settings_from_args(args, args.prefix)
    try:
        render_and_write(settings, args.root)
        if args.reload:
            pid = reload(settings.prefix)
            print(f"corpus render-nginx: reloaded nginx (master pid {pid})", file=sys.stderr)
    except RenderError as exc:
        print(f"corpus render-nginx: {exc}", file=sys.stderr)
        return 1
    print(f"corpus render-nginx: {settings.nginx_conf} (vhost {settings.corpus_conf}, secrets "
          f"{settings.secrets_conf}, mode 0600); nginx -t passed", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from generator.cli import add_root_options

    p = sub.add_parser(
        "render-nginx", help="render the nginx vhost into a private prefix (and reload it)",
        description="Render nginx/*.j2 with the build and the settings into PREFIX/conf/ (nginx.conf, the "
                    "includable vhost corpus.conf, the 0600 secrets include), check it with nginx -t, and "
                    "with --reload signal the nginx running from PREFIX to load it. Rotation: add the new "
                    "secret to the secret file, render with --reload, switch the proxy, remove the old "
                    "secret, render with --reload again.")
    add_root_options(p)
    p.add_argument("--prefix", type=Path, required=True, help="private nginx prefix folder")
    add_render_options(p)
    p.add_argument("--reload", action="store_true",
                   help="after rendering, make the nginx running from PREFIX load the new config")
    p.set_defaults(func=cmd_render_nginx)
