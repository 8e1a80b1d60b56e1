"""Render an nginx role from ``nginx/*.j2``, the build and its settings (``corpus render-nginx``).

Two roles come from the same snippets (see :mod:`generator.serving.rendering.nginx_settings`): the **replica**
vhost serving build/ and the TLS **frontal** in front of the replicas. Everything written into a config is
checked first: the build must agree with the manifest (and, for a replica, the manifest must be the
expected one: :mod:`generator.contract.build_proof`), every ``/_systeme`` body nginx returns must exist, and the
absent template must reproduce the declared absents byte for byte. A render that would serve other
bytes than the manifest fails here. Running nginx is :mod:`generator.serving.instances.nginx_process`'s job.
"""

from __future__ import annotations

import grp
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from generator.base.errors import RenderError
from generator.base.secret_values import (
    nginx_map_entries,
)
from generator.contract.manifest import Manifest
from generator.serving.rendering.host_checks import (
    check_prefix,
    check_tls_files,
    check_world_access,
    secret_values,
    worker_account,
)
from generator.serving.rendering.nginx_settings import Settings, saved_peer
from generator.serving.rendering.nginx_syntax import NginxSyntaxError, quote_path, quote_regex
from generator.serving.rendering.served_build import (
    FRONTAL_REMAPPED,
    FRONTAL_REMAPPED_WHY,
    REMAPPED,
    REMAPPED_WHY,
    Served,
    absent_template,
    error_pages,
    served_tracks,
)
from generator.serving.rendering.templates import environment
from generator.serving.tls.peer_tls import KEY as PEER_KEY
from generator.serving.tls.peer_tls import PeerTLS, check_peer
from generator.serving.tls.tls_roles import REPLICA_NAME, InstanceTLS, check_instance
from generator.tracks.loader import load_tracks
from generator.tracks.model import CANONICAL_PATH

SITE_TEMPLATES = {"replica": "corpus.conf.j2", "frontal": "frontal.conf.j2"}
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



def server_name(settings: Settings, manifest: Manifest) -> str:
    """The name clients ask for: ``--server-name``, else the host of the manifest's base URL."""
    name = settings.server_name or urlsplit(manifest.base_url).hostname or "_"
    if not all(c.isalnum() or c in "-._*" for c in name):
        raise RenderError(f"server name {name!r}: letters, digits, '-', '.', '_' and '*' only")
    return name


def first_track_name(settings: Settings) -> str:
    """:func:`server_name` against the first track's manifest: every track is served under that one name."""
    return server_name(settings, Manifest.load(settings.root, load_tracks(settings.root)[0].places.manifest))


def check_tls(settings: Settings, peer: PeerTLS, name: Callable[[], str | None]) -> list[str]:
    """One instance's TLS files checked for their form, then its link, then what each must do for its role
    (``name()``: the server name its public certificate must carry, asked only once the files are sound);
    the warnings (a certificate ending soon)."""
    check_tls_files(settings)
    check_peer(peer, settings.role, settings.tls)
    return check_instance(InstanceTLS(settings.role, settings.tls_cert, settings.tls_key, peer, name()))


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

    ``peer``: the link between frontals and replicas (:mod:`generator.serving.tls.peer_tls`); None keeps the
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
    secrets = secret_values(s, repo_root)
    account = worker_account(s)
    worker_user = None
    if account is not None:
        worker_user = f"{account.pw_name} {grp.getgrgid(account.pw_gid).gr_name}"
        if account.pw_uid not in (0, os.geteuid()) and s.role == "replica":
            for one in served:  # every track's build/<piste>: any folder on its way can be private
                check_world_access(one.build, f"the build of the track {one.track.piste}")
            check_world_access(s.maintenance_path.parent, "the maintenance flag's folder")
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

