"""Render an nginx role from ``nginx/*.j2``, the build and its settings (``corpus render-nginx``).

Two roles come from the same snippets (see :mod:`generator.serving.nginx_settings`): the **replica** vhost
serving build/ and the TLS **frontal** in front of the replicas. Everything written into a config is
checked first: the build must agree with the manifest (and, for a replica, the manifest must be the
expected one: :mod:`generator.contract.build_proof`), every ``/_systeme`` body nginx returns must exist, and the
absent template must reproduce the declared absents byte for byte. A render that would serve other
bytes than the manifest fails here. Running nginx is :mod:`generator.serving.nginx_process`'s job.
"""

from __future__ import annotations

import grp
import json
import os
import pwd
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from secrets import token_hex
from typing import Any
from urllib.parse import urlsplit

import jinja2

from generator.base.atomic_file import write_atomic
from generator.base.output_places import OutputRefused, outside_protected
from generator.base.secret_values import (
    SecretError,
    nginx_map_entries,
    read_secret_env,
    read_secret_file,
    write_private,
)
from generator.compiler.compile import absent_body
from generator.compiler.output import body_bytes
from generator.compiler.track_file import load_tracks, protected_trees
from generator.compiler.validate import REQUIRED_SYSTEME
from generator.contract.build_proof import prove_release
from generator.contract.manifest import BUILD_DIR, Manifest
from generator.serving.nginx_process import test_config
from generator.serving.nginx_settings import DEFAULT_WORKER_USER, RenderError, Settings, saved_peer
from generator.serving.nginx_syntax import NginxSyntaxError, needs_dollar, quote_path, quote_regex, quote_text
from generator.serving.peer_tls import KEY as PEER_KEY
from generator.serving.peer_tls import PeerTLS, check_peer
from generator.serving.tls_files import check_tls_file
from generator.serving.tls_local import REPLICA_NAME
from generator.serving.tls_roles import InstanceTLS, check_instance
from generator.tracks.model import CANONICAL_PATH, Track

# Package data: generator/templates/nginx is a link to the checkout's nginx/ that the wheel stores as files,
# so an installed corpus renders the templates of its own version, whatever --root it is given.
TEMPLATES = Path(__file__).resolve().parents[1] / "templates" / "nginx"
SITE_TEMPLATES = {"replica": "corpus.conf.j2", "frontal": "frontal.conf.j2"}
# Statuses nginx produces under its own numbers, answered with the body of the standard status.
REMAPPED = {494: 431, 497: 400}
REMAPPED_WHY = {494: "request header too large: nginx's private code for 431",
                497: "plain HTTP sent to the TLS port"}
# The frontal's own 502/504 mean "no replica answered": spec §4.1 names the 503 body for that.
FRONTAL_REMAPPED = {502: 503, 504: 503}
FRONTAL_REMAPPED_WHY = {502: "no replica could be reached: the corpus is unavailable",
                        504: "no replica answered in time: the corpus is unavailable"}
ABSENT_PLACEHOLDER = "/corpus-absent-path-placeholder"
# Access log lines are written by 32k blocks, at least every second: one write() per ~100 requests.
ACCESS_LOG_BUFFER = " buffer=32k flush=1s"
WORKER_CONNECTIONS = 1024
# A frontal holds two descriptors per request (client, replica), plus files and logs: gixy asks for at
# least twice worker_connections; four times leaves room for the open_file_cache of a replica.
WORKER_RLIMIT_NOFILE = 4 * WORKER_CONNECTIONS
# TLS sessions kept for resumption (about 4,000 per megabyte), shared by the workers.
TLS_SESSION_CACHE = "shared:corpus_tls:1m"
# Connections kept open from each frontal worker to the replicas: spares a TCP handshake per request.
UPSTREAM_KEEPALIVE = 32


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
    # the same two files including each other from a staging folder instead of conf/, for nginx -t
    staged_nginx_conf: str = ""
    staged_corpus_conf: str = ""
    warnings: tuple[str, ...] = ()  # TLS certificates ending soon (tls_roles), said by the command


# ---------------------------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Served:
    """One track as the vhost serves it: its definition, its proven manifest, its build folder."""

    track: Track
    manifest: Manifest
    build: Path


def served_tracks(root: Path, role: str, expect: str | None) -> list[Served]:
    """Every track of ``root``, its manifest proven against its build (a replica) or read (a frontal).

    The first track owns the ``/_systeme`` bodies; the others must serve the very same bytes there, since
    an error answer cannot know which track a broken request was meant for."""
    tracks = load_tracks(root)
    every = [track.places for track in tracks]
    manifests = prove_release(root, expect, every) if role == "replica" \
        else [Manifest.load(root, places.manifest) for places in every]
    served = [Served(track, manifest, root / track.places.build)
              for track, manifest in zip(tracks, manifests, strict=True)]
    first = {e.path: e.sha256 for e in served[0].manifest.of_kind("systeme")}
    for other in served[1:]:
        for entry in other.manifest.of_kind("systeme"):
            if first.get(entry.path) != entry.sha256:
                raise RenderError(f"{other.track.trees.manifest}: {entry.path} of the track {other.track.piste} "
                                  f"differs from the track {served[0].track.piste}'s: tracks served by one vhost "
                                  "share the /_systeme bodies (give them the same systeme.yaml)")
    return served


def error_pages(root: Path, manifest: Manifest, skip: tuple[int, ...] = (), build: str = BUILD_DIR
                ) -> list[ErrorPage]:
    """One error location per ``/_systeme`` body, each checked against the manifest."""
    entries = {e.status: e for e in manifest.of_kind("systeme") if e.status is not None}
    missing = sorted(int(s) for s in REQUIRED_SYSTEME if int(s) not in entries)
    if missing:
        raise RenderError(f"the manifest has no /_systeme body for status {missing}; the vhost answers them")
    return [ErrorPage(status, quote_text(entries[status].read_checked(root / build)))
            for status in sorted(entries) if status not in skip]


def absent_template(served: list[Served]) -> tuple[str, bool]:
    """The quoted return text of the existe:false body, with ``${uri}`` in place of the path.

    Also proves that the template reproduces every declared absent of every track byte for byte, so that
    an identifier nobody declared and one the corpus cites are answered by the same documented function.
    """
    for one in served:
        for entry in one.manifest.of_kind("absent"):
            if body_bytes(absent_body(entry.path)) != entry.read_checked(one.build):
                raise RenderError(f"declared absent {entry.path}: its file differs from the absent "
                                  "template (generator.compiler.compile.absent_body); rebuild")
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


# Folders of the checkout that are served, compiled, hashed or rendered from: a prefix there would put the
# 0600 secrets include (and logs) where nginx serves them or where git and the manifest see them.
def check_prefix(settings: Settings) -> None:
    """Refuse a prefix inside a compiled, served or tracked tree of the checkout, every track's
    (:func:`~generator.compiler.track_file.protected_trees`)."""
    try:
        outside_protected(settings.root, settings.prefix, "--prefix", "where the secrets include would land: "
                          "use a folder under run/ or outside the repository", protected_trees(settings.root))
    except OutputRefused as exc:
        raise RenderError(str(exc)) from None


def check_tls_files(settings: Settings) -> None:
    """The certificate and key, each checked (:func:`check_tls_file`): nginx -t would word it in four lines."""
    for option, path, kind in (("--tls-cert", settings.tls_cert, "certificate"), ("--tls-key", settings.tls_key,
                                                                                  "key")):
        if path is not None:
            check_tls_file(path, option, kind)


def _worker_account(settings: Settings) -> pwd.struct_passwd | None:
    """The workers' account when the master runs as root (else None: nginx could not switch anyway)."""
    if os.geteuid() != 0:
        return None
    name = settings.worker_user or DEFAULT_WORKER_USER
    try:
        return pwd.getpwnam(name)
    except KeyError:
        raise RenderError(f"worker user {name!r} does not exist; choose one with --worker-user") from None


def _check_world_access(path: Path, what: str) -> None:
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


def server_name(settings: Settings, manifest: Manifest) -> str:
    """The name clients ask for: ``--server-name``, else the host of the manifest's base URL."""
    name = settings.server_name or urlsplit(manifest.base_url).hostname or "_"
    if not all(c.isalnum() or c in "-._*" for c in name):
        raise RenderError(f"server name {name!r}: letters, digits, '-', '.', '_' and '*' only")
    return name


def host_port(host: str, port: int) -> str:
    """``host:port`` for nginx (IPv6 in brackets), refused unless it is plainly an address and a port."""
    if not host or not all(c.isalnum() or c in ".:[]-" for c in host) or not 0 < port < 65536:
        raise RenderError(f"address {host!r} port {port}: not an address and port")
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{port}"


def _upstreams(settings: Settings) -> list[str]:
    if settings.role != "frontal":
        return []
    if not settings.upstreams:
        raise RenderError("a frontal needs at least one replica address (host:port)")
    found = []
    for item in settings.upstreams:
        host, sep, port = item.rpartition(":")
        if not sep or not port.isdigit():
            raise RenderError(f"replica address {item!r}: expected host:port")
        found.append(host_port(host, int(port)))
    return found


def environment() -> jinja2.Environment:
    """Jinja2 for config text: undefined names fail, no HTML escaping, newlines kept as written."""
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), undefined=jinja2.StrictUndefined,
                              autoescape=False, keep_trailing_newline=True, trim_blocks=True,
                              lstrip_blocks=True)


def _context(s: Settings, served: list[Served], worker_user: str | None, peer: PeerTLS) -> dict[str, Any]:
    """Every value the templates use, already quoted or validated for nginx."""
    frontal = s.role == "frontal"
    verify_clients = not frontal and not peer.plain
    remapped = {**REMAPPED, **(FRONTAL_REMAPPED if frontal else {})}
    if verify_clients:  # plain HTTP to a replica gets no answer at all (see error-pages)
        del remapped[497]
    manifest = served[0].manifest
    pages = error_pages(s.root, manifest, skip=tuple(FRONTAL_REMAPPED) if frontal else (),
                        build=served[0].track.trees.build)
    absent_text, absent_dollar = absent_template(served)
    return {
        "role": s.role,
        "corpus_id": manifest.corpus,
        "manifest_hash": manifest.hash,
        "worker_user": worker_user,
        "worker_processes": _worker_processes(s.worker_processes),
        "worker_connections": WORKER_CONNECTIONS,
        "worker_rlimit_nofile": WORKER_RLIMIT_NOFILE,
        "pid_file": quote_path(s.pid_file),
        "error_log": quote_path(s.error_log_path),
        "error_log_level": "warn",
        "access_log": quote_path(s.access_log_path),
        "access_log_buffer": ACCESS_LOG_BUFFER,
        "temp_paths": [(f"{name}_temp_path", quote_path(s.prefix / "tmp" / name))
                       for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")],
        "corpus_conf": quote_path(s.corpus_conf),
        "secrets_conf": quote_path(s.secrets_conf),
        "canonical_regex": quote_regex(CANONICAL_PATH),
        "collections": [{"name": c.name, "regex": quote_regex(c.path_pattern)}
                        for one in served for c in one.track.collections],
        "need_dollar": (absent_dollar and not frontal) or any("${corpus_dollar}" in p.text for p in pages),
        "tls": s.tls,
        "tls_cert": quote_path(s.tls_cert) if s.tls_cert else "",
        "tls_key": quote_path(s.tls_key) if s.tls_key else "",
        "tls_session_cache": TLS_SESSION_CACHE if s.tls_resumption else "off",
        "listen": host_port(s.listen, s.port),
        "server_name": server_name(s, manifest),
        "maintenance_flag": quote_path(s.maintenance_path),
        "error_pages": pages,
        "remapped": sorted(remapped.items()),
        "remapped_why": {**REMAPPED_WHY, **FRONTAL_REMAPPED_WHY},
        "build_root": quote_path(served[0].build),
        "build_root_display": str(served[0].build),
        "other_tracks": [{"piste": one.track.piste, "root": quote_path(one.build),
                          "prefixes": [quote_path(c.prefix) for c in one.track.collections],
                          "documents": [quote_path(p) for p in (one.track.referentiel, one.track.catalogue)]}
                         for one in served[1:]],
        "records": [{"piste": one.track.piste, "path": quote_path(one.track.record_path),
                     "file": quote_path(s.root / one.track.places.record)} for one in served],
        "absent_text": absent_text,
        "extra_server_include": quote_path(s.extra_server_include) if s.extra_server_include else "",
        "upstreams": _upstreams(s),
        "upstream_keepalive": UPSTREAM_KEEPALIVE,
        "peer_tls": not peer.plain,
        "verify_clients": verify_clients,
        "peer_ca": quote_path(peer.ca) if peer.ca else "",
        "peer_cert": quote_path(peer.cert) if peer.cert else "",
        "peer_key": quote_path(peer.key) if peer.key else "",
        "peer_name": REPLICA_NAME,
    }


def render(settings: Settings, repo_root: Path | None = None, *, staging: Path | None = None,
           peer: PeerTLS | None = None) -> Rendered:
    """Render the three config files of ``settings.role`` from the build, the manifest and the settings.

    ``peer``: the link between frontals and replicas (:mod:`generator.serving.peer_tls`); None keeps the
    one the prefix was rendered with (a re-render from settings.json: reload, release).

    ``repo_root``: the checkout a secret file must stay out of (None: no such check). ``staging``: also
    render the main config and the site as they read when placed in that folder (their includes point
    into it), so that ``nginx -t`` can judge them before conf/ is touched. A replica first proves its
    builds (:func:`generator.contract.build_proof.prove_release`); a frontal serves no file, it only
    checks the ``/_systeme`` bodies it returns itself.
    """
    s = settings.resolved()
    if s.role not in SITE_TEMPLATES:
        raise RenderError(f"role {s.role!r}: 'replica' or 'frontal'")
    if (s.tls_cert is None) != (s.tls_key is None):
        raise RenderError("TLS needs both --tls-cert and --tls-key (or neither, for plain HTTP)")
    if s.role == "frontal" and not s.tls:
        raise RenderError("the frontal terminates TLS: give --tls-cert and --tls-key")
    check_prefix(s)
    check_tls_files(s)
    peer = (peer or saved_peer(s.prefix)).resolved()
    check_peer(peer, s.role, s.tls)
    served = served_tracks(s.root, s.role, s.expect_manifest_hash)
    manifest = served[0].manifest
    warnings = check_instance(InstanceTLS(s.role, s.tls_cert, s.tls_key, peer, server_name(s, manifest)))
    secrets = _secret_values(s, repo_root)
    account = _worker_account(s)
    worker_user = None
    if account is not None:
        worker_user = f"{account.pw_name} {grp.getgrgid(account.pw_gid).gr_name}"
        if account.pw_uid not in (0, os.geteuid()) and s.role == "replica":
            _check_world_access(s.root / "build", "the build")
            _check_world_access(s.maintenance_path.parent, "the maintenance flag's folder")
    try:
        context = _context(s, served, worker_user, peer)
    except NginxSyntaxError as exc:
        raise RenderError(str(exc)) from None
    env = environment()
    secrets_text = ("# Accepted X-Challenge-Secret values, rendered by `corpus render-nginx`.\n"
                    "# Private (mode 0600): never copy, commit or log this file.\n"
                    + "".join(line + "\n" for line in nginx_map_entries(secrets)))
    saved = s.saved()
    saved.update(maintenance_flag=str(s.maintenance_path), access_log=str(s.access_log_path),
                 error_log=str(s.error_log_path), secrets_accepted=len(secrets), manifest_hash=manifest.hash)
    saved[PEER_KEY] = None if peer.plain else peer.saved()
    main, site = env.get_template("nginx.conf.j2"), env.get_template(SITE_TEMPLATES[s.role])
    staged: dict[str, str] = {}
    if staging is not None:
        moved = {**context, "corpus_conf": quote_path(staging / s.corpus_conf.name),
                 "secrets_conf": quote_path(staging / s.secrets_conf.name)}
        staged = {"staged_nginx_conf": main.render(moved), "staged_corpus_conf": site.render(moved)}
    return Rendered(main.render(context), site.render(context), secrets_text, saved, **staged,
                    warnings=tuple(warnings))


def _worker_processes(value: str) -> str:
    if value != "auto" and not (value.isdigit() and 0 < int(value) <= 64):
        raise RenderError(f"worker processes {value!r}: 'auto' or a number from 1 to 64")
    return value


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
    except RenderError as exc:  # nginx names the staged files: name the ones the operator knows
        raise RenderError(f"{str(exc).replace(os.fspath(staging), os.fspath(conf_dir))}\n"
                          f"{conf_dir} left unchanged") from None
    except OSError as exc:
        raise RenderError(f"{exc.filename or staging}: cannot stage the configuration: {exc.strerror}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return rendered
