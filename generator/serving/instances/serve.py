"""Run the corpus locally behind real nginx (``corpus serve``) and flip maintenance (``corpus maintenance``).

``serve`` is what ``make serve`` runs: first make sure its ports are free (one line naming the address
otherwise, before anything else is said; the CLI has brought every track's build up to date), render
into a private prefix (default ``run/serve/``, ignored by git), then run in the foreground until Ctrl-C
or SIGTERM: one plain-HTTP replica, or with ``--replicas N`` the production shape (a TLS frontal over N
replicas on 127.0.0.2, 127.0.0.3, ... or the addresses given, mutual TLS between them;
:mod:`generator.serving.instances.topology`), kept up by :mod:`generator.serving.instances.supervise`. The
frontal's certificate names the server name (default: the manifest's host), so that a client verifying it
reaches ``https://<server name>`` with the printed CA (curl's ``--resolve``). nginx runs in its own
session so that the signal reaches it once, from here, and no worker outlives the command. Locally the
workers run as the invoking user, so that a checkout in a private (0700) home is served as is;
deployments (``render-nginx``, the systemd units) keep an unprivileged account.
"""

from __future__ import annotations

import os
import pwd
import signal
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from generator.base.errors import ServeError
from generator.base.secret_values import PRIVATE_RUN_DIR, SecretError, new_secret, read_secret_file, write_private
from generator.contract.manifest import Manifest
from generator.serving.instances.nginx_process import NginxProcess, held_socket, listen_problem
from generator.serving.instances.state_file import check_state_target
from generator.serving.instances.supervise import RESTART_LIMIT, RESTART_WINDOW, Supervisor
from generator.serving.instances.topology import Topology
from generator.serving.rendering.nginx_render import first_track_name
from generator.serving.rendering.nginx_settings import Settings, read_settings
from generator.serving.tls.tls_files import check_tls_file
from generator.serving.tls.tls_local import LocalPeer, LocalTLS, make_local_tls, make_peer_tls
from generator.serving.tls.tls_roles import certificates, chains_to, check_ca
from generator.tracks.loader import load_tracks

DEFAULT_PREFIX = Path(PRIVATE_RUN_DIR) / "serve"
DEV_SECRET_FILE = "dev-secret"
PLAIN_PORT = 8080


# -------------------------------------------------------------------------------------------- ports


def _listen_refusal(host: str, port: int, why: str, fix: str) -> ServeError:
    shown = f"[{host}]" if ":" in host else host
    if "in use" in why:
        return ServeError(f"{shown}:{port} is already in use (another server listens there): stop it, or {fix}")
    return ServeError(f"cannot listen on {shown}:{port}: {why}; {fix}")


def check_ports(addresses: list[tuple[str, int, str]]) -> None:
    """Each ``(host, port, what to do)`` can be listened on, before anything is printed or started; one line
    naming the first that cannot (in use, not an address of this host, a privileged port) otherwise."""
    for host, port, fix in addresses:
        why = listen_problem(host, port)
        if why is not None:
            raise _listen_refusal(host, port, why, fix)


def hold_port(host: str, port: int, fix: str) -> socket.socket:
    """The listening socket of ``corpus serve``, bound here and handed to nginx, so that nginx never meets a
    busy port (its five ``bind() failed`` lines, and stale ones from the error log, are never seen)."""
    check_ports([(host, port, fix)])
    try:
        return held_socket(host, port)
    except ServeError:  # taken in between
        raise _listen_refusal(host, port, "in use", fix) from None


# ------------------------------------------------------------------------------------------ secrets


def dev_secret(prefix: Path) -> tuple[Path, str]:
    """The development secret of a prefix: reused if present, else generated (file mode 0600)."""
    path = prefix / DEV_SECRET_FILE
    if path.exists():
        try:
            return path, read_secret_file(path)[0]
        except SecretError:
            pass
    value = new_secret()
    write_private(path, value + "\n")
    return path, value


# ----------------------------------------------------------------------------------------- running


def invoking_user() -> str:
    """The account running this command: the workers of a local server run as it."""
    return pwd.getpwuid(os.geteuid()).pw_name


class _Stop:
    """SIGINT, SIGTERM and SIGHUP end the foreground run (restored on exit)."""

    def __init__(self) -> None:
        self.signals: list[int] = []
        self.previous: dict[int, object] = {}

    def __enter__(self) -> _Stop:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            self.previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.signals.append(signum)

    def __exit__(self, *exc: object) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]


def _wait_until_stopped(stop: _Stop, processes: list[NginxProcess]) -> NginxProcess | None:
    """Sleep until a signal arrives (None) or one nginx exits (that one)."""
    while not stop.signals:
        for process in processes:
            if not process.running():
                return process
        time.sleep(0.2)
    return None


def run_foreground(settings: Settings, held: socket.socket | None = None) -> int:
    """Run one nginx from the prefix until it exits or this process gets SIGINT, SIGTERM or SIGHUP.

    ``held``: its listening socket (:func:`hold_port`), handed to nginx; the caller owns it and closes it."""
    process = NginxProcess(settings, quiet=False, held=held)
    with _Stop() as stop:
        try:
            process.start()
            print(f"corpus serve: ready on {_base(settings)} (nginx master pid {process.pid}); Ctrl-C stops it",
                  file=sys.stderr, flush=True)
            died = _wait_until_stopped(stop, [process])
        finally:
            process.stop()
    if died is None:
        print(f"corpus serve: stopped ({signal.Signals(stop.signals[0]).name})", file=sys.stderr)
        return 0
    print(f"corpus serve: nginx exited with status {died.process.returncode if died.process else '?'}; see "
          f"{settings.error_log_path}", file=sys.stderr)
    return 1


def _base(settings: Settings) -> str:
    scheme = "https" if settings.tls else "http"
    host = settings.listen if ":" not in settings.listen else f"[{settings.listen}]"
    default = {"https": 443, "http": 80}[scheme]  # a URL spelled canonically, as the manifests do: no default port
    return f"{scheme}://{host}" if settings.port == default else f"{scheme}://{host}:{settings.port}"


def banner(settings: Settings, secret_note: str, secret_value: str | None, sample: str,
           catalogues: tuple[tuple[str, str], ...] = ()) -> str:
    """What ``corpus serve`` prints once rendered: where, the secret, two curl lines, each track's catalogue."""
    base = _base(settings)
    header = f"X-Challenge-Secret: {secret_value}" if secret_value else "X-Challenge-Secret: $(head -1 FILE)"
    listed = " · ".join(f"{piste} {base}{path}" for piste, path in catalogues)
    tracks = [f"  tracks: {listed}"] if catalogues else []
    return "\n".join([
        f"corpus serve: {base} (prefix {settings.prefix})",
        *tracks,
        f"  secret: {secret_note}",
        f"  curl -s -H '{header}' {base}{sample}",
        f"  curl -s {base}{sample}      # no secret: 403 and the way to the proxy",
        f"  logs: {settings.access_log_path} (JSON), {settings.error_log_path}",
        f"  maintenance: corpus maintenance on|off --prefix {settings.prefix}",
        "",
    ])


def sample_path(root: Path) -> str:
    """A served document of the first track's first collection for the printed curl line (else its
    catalogue)."""
    track = load_tracks(root)[0]
    first = track.collections[0]
    served = Manifest.load(root, track.trees.manifest).of_kind("resource")
    paths = [e.path for e in served if first.matches(e.path)]
    return paths[0] if paths else track.catalogue


def served_name(root: Path, prefix: Path, given: str) -> str:
    """The server name clients ask for: ``--server-name``, else the host of the first track's manifest."""
    return first_track_name(Settings(root=root, prefix=prefix, server_name=given))


def topology_tls(prefix: Path, hosts: list[str], cert: Path | None, key: Path | None, ca: Path | None
                 ) -> LocalTLS:
    """The frontal's certificate: the one given (with ``ca``, which must have signed it, for the state file
    and the curl line), else the prefix's local CA and a certificate naming ``hosts`` (the address and the
    server name; made at the first start, kept while it names the same and stays valid)."""
    if cert is not None:
        if key is None:
            raise ServeError("--tls-cert needs --tls-key")
        for option, path, kind in (("--tls-cert", cert, "certificate"), ("--tls-key", key, "key"),
                                   ("--tls-ca", ca, "ca")):
            if path is not None:
                check_tls_file(path, option, kind)
        if ca is not None:  # the printed curl line trusts it: it must be a CA that signed the certificate
            cas = certificates(ca, f"--tls-ca {ca}")
            check_ca(cas, f"--tls-ca {ca}")
            chains_to(certificates(cert, f"--tls-cert {cert}"), cas, f"--tls-cert {cert}", f"--tls-ca {ca}")
        return LocalTLS(ca=(ca or cert).resolve(), cert=cert.resolve(), key=key.resolve())
    if key is not None or ca is not None:
        raise ServeError("--tls-key and --tls-ca go with --tls-cert")
    return make_local_tls(prefix / "tls", hosts, reuse=True)


def topology_peer(prefix: Path, replicas: list[tuple[str, int]], plain: bool) -> LocalPeer | None:
    """The link's private CA and certificates (made at the first start, kept while valid and naming the same
    replicas), or None for ``--plain-replicas`` (development only)."""
    hosts = list(dict.fromkeys(host for host, _port in replicas))
    return None if plain else make_peer_tls(prefix / "tls" / "peer", hosts, reuse=True)


@dataclass(frozen=True)
class TopologyRun:
    """What ``serve --replicas`` runs: a TLS frontal on ``listen:port`` over ``replicas`` replicas."""

    root: Path
    prefix: Path
    listen: str
    port: int
    replicas: list[tuple[str, int]]  # each replica's address and port
    server_name: str  # what the frontal's certificate names and clients ask for
    secret_file: Path
    tls: LocalTLS
    workers: str
    worker_user: str | None
    expect_manifest_hash: str | None
    state_file: Path | None
    peer: LocalPeer | None = None  # None: plain HTTP between frontal and replicas (--plain-replicas)
    access_log: Path | None = None  # the frontal's (default PREFIX/frontal-1/logs/access.log)
    error_log: Path | None = None  # the frontal's
    maintenance_flag: Path | None = None  # every replica's (default: one per replica prefix)


def _say(line: str) -> None:
    print(f"corpus serve: {line}", file=sys.stderr, flush=True)


def run_topology(run: TopologyRun, note: str, secret_value: str | None) -> int:
    """Render and run a TLS frontal over ``run.replicas`` replicas in the foreground, starting again any nginx
    that dies (:class:`~generator.serving.instances.supervise.Supervisor`); Ctrl-C or SIGTERM stops them all."""
    root, prefix, tls = run.root, run.prefix, run.tls
    if run.state_file is not None:
        replaced = check_state_target(run.state_file)
        if replaced:
            _say(replaced)
    topology = Topology(root=root, base=prefix, secret_file=run.secret_file.resolve(), tls=tls,
                        replica_addresses=run.replicas, frontal_addresses=[(run.listen, run.port)],
                        workers=run.workers, worker_user=run.worker_user,
                        expect_manifest_hash=run.expect_manifest_hash, repo_root=root, peer=run.peer,
                        hold_frontal_sockets=True, server_name=run.server_name, access_log=run.access_log,
                        error_log=run.error_log, maintenance_flag=run.maintenance_flag)

    def write_state() -> None:
        if run.state_file is not None:
            topology.write_state(run.state_file)

    reason = None
    with _Stop() as stop:
        try:
            for warning in topology.start():
                _say(warning)
            write_state()
            name, sample = run.server_name, sample_path(root)
            header = f"X-Challenge-Secret: {secret_value or '$(head -1 FILE)'}"
            frontal = topology.frontals[0].settings
            print("\n".join([
                f"corpus serve: TLS frontal {topology.named_url(name)} on {topology.frontal_url()} over "
                f"{len(run.replicas)} replica(s) "
                + ", ".join(f"{p.settings.listen}:{p.settings.port} (pid {p.pid})" for p in topology.replicas),
                f"  secret: {note}",
                f"  curl -s --cacert {tls.ca} --resolve {topology.resolve(name)} -H '{header}' "
                f"{topology.named_url(name)}{sample}",
                f"  logs: frontal {frontal.access_log_path}, replicas {prefix}/replica-*/logs/access.log (JSON, "
                "\"role\": frontal or replica)",
                _maintenance_line(run, topology),
                f"  state: {run.state_file or '(give --state-file FILE for JSON)'}",
                f"  link frontal -> replicas: {_link(run.peer)}",
                f"  an nginx that dies is started again (given up after {RESTART_LIMIT} restarts of one within "
                f"{RESTART_WINDOW:.0f} s); Ctrl-C stops everything", ""]), flush=True)
            reason = Supervisor(topology, _say, write_state).run(lambda: bool(stop.signals))
        finally:
            topology.stop()
            if run.state_file is not None:
                run.state_file.unlink(missing_ok=True)
    if reason is None:
        _say(f"stopped ({signal.Signals(stop.signals[0]).name})")
        return 0
    _say(reason)
    return 1


def _maintenance_line(run: TopologyRun, topology: Topology) -> str:
    if run.maintenance_flag is not None:
        return (f"  maintenance of the whole corpus (every replica's flag): touch {run.maintenance_flag}; "
                f"rm it to end")
    return ("  maintenance of one replica (the frontal skips it): corpus maintenance on|off --prefix "
            f"{topology.replicas[0].settings.prefix}")


def _link(peer: LocalPeer | None) -> str:
    if peer is None:
        return "plain HTTP (--plain-replicas: development only)"
    return f"mutual TLS, private CA {peer.ca}"


# ------------------------------------------------------------------------------------- maintenance


def maintenance_flag(prefix: Path) -> Path:
    """The flag file of a rendered prefix (settings.json says where; default PREFIX/maintenance)."""
    return read_settings(prefix).settings.maintenance_path


def set_maintenance(prefix: Path, state: str) -> tuple[Path, bool]:
    """Switch a rendered prefix's maintenance ``on``, ``off``, or leave it (``status``); (flag file, is on)."""
    flag = maintenance_flag(prefix)
    if state == "on":
        flag.parent.mkdir(parents=True, exist_ok=True)
        flag.touch()
        os.chmod(flag, 0o644)
    elif state == "off":
        flag.unlink(missing_ok=True)
    return flag, flag.exists()
