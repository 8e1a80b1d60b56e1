"""Run the corpus locally behind real nginx (``corpus serve``) and flip maintenance (``corpus maintenance``).

``serve`` is what ``make serve`` runs: bring build/ up to date with corpus_src/, render into a private
prefix (default ``run/serve/``, ignored by git), then run in the foreground until Ctrl-C or SIGTERM:
one plain-HTTP replica, or with ``--replicas N`` the production shape (a TLS frontal over N replicas
on 127.0.0.2, 127.0.0.3, ...; :mod:`generator.topology`). nginx runs in its own session so that the
signal reaches it once, from here, and no worker outlives the command. Locally the workers run as the
invoking user, so that a checkout in a private (0700) home is served as is; deployments
(``render-nginx``, the systemd units) keep an unprivileged account.
"""

from __future__ import annotations

import argparse
import os
import pwd
import signal
import sys
import time
from pathlib import Path
from types import FrameType

from generator.errors import CorpusError
from generator.manifest import Manifest
from generator.nginx_process import NginxProcess
from generator.nginx_render import render_and_write
from generator.nginx_settings import (
    RenderError,
    Settings,
    add_render_options,
    read_settings,
    settings_from_args,
)
from generator.output import MANIFEST_FILE
from generator.pipeline import build, compile_build
from generator.secret_values import PRIVATE_RUN_DIR, SecretError, new_secret, read_secret_file, write_private
from generator.tls_local import LocalTLS, make_local_tls
from generator.topology import FRONTAL_PORT, REPLICA_PORT, Topology, replica_hosts

DEFAULT_PREFIX = Path(PRIVATE_RUN_DIR) / "serve"
DEV_SECRET_FILE = "dev-secret"
PLAIN_PORT = 8080


# ------------------------------------------------------------------------------------- build if needed


def ensure_build(root: Path, base_url: str) -> str:
    """Compile corpus_src/ in memory; rebuild build/ and manifest/ only if they differ. Returns what happened.

    Comparing bytes, not mtimes, is exact whatever git or a copy did to the timestamps, and leaves an
    up-to-date build untouched. The rebuild goes through :func:`generator.pipeline.build`, so whatever
    guards a build (atomic swap, a frozen season) guards this one too.
    """
    result = compile_build(root / "corpus_src", base_url)
    if all(_tree_matches(root / name, files) for name, files in result.trees().items()):
        return f"build/ is up to date (manifest hash {result.manifest_hash})"
    result = build(root / "corpus_src", root, base_url)
    return f"built {len(result.built)} files (manifest hash {result.manifest_hash})"


def _tree_matches(folder: Path, files: dict[str, bytes]) -> bool:
    if not folder.is_dir():
        return False
    on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    if on_disk != set(files):
        return False
    return all((folder / name).read_bytes() == data for name, data in files.items())


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


def run_foreground(settings: Settings) -> int:
    """Run one nginx from the prefix until it exits or this process gets SIGINT, SIGTERM or SIGHUP."""
    process = NginxProcess(settings, quiet=False)
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
    return f"{scheme}://{host}:{settings.port}"


def _banner(settings: Settings, secret_note: str, secret_value: str | None, sample: str) -> str:
    base = _base(settings)
    header = f"X-Challenge-Secret: {secret_value}" if secret_value else "X-Challenge-Secret: $(head -1 FILE)"
    return "\n".join([
        f"corpus serve: {base} (prefix {settings.prefix})",
        f"  secret: {secret_note}",
        f"  curl -s -H '{header}' {base}{sample}",
        f"  curl -s {base}{sample}      # no secret: 403 and the way to the proxy",
        f"  logs: {settings.access_log_path} (JSON), {settings.error_log_path}",
        f"  maintenance: corpus maintenance on|off --prefix {settings.prefix}",
        "",
    ])


def _sample_path(root: Path) -> str:
    """An existing agrément for the printed curl line (else the catalogue)."""
    paths = [e.path for e in Manifest.load(root).of_kind("resource") if e.path.startswith("/agrements/")]
    return paths[0] if paths else "/catalogue"


def _secret(args: argparse.Namespace, prefix: Path) -> tuple[str, str | None]:
    """Fill ``args.secret_file`` with the development secret when no source is given; (note, value)."""
    if args.secret_file is None and args.secret_env is None:
        secret_file, value = dev_secret(prefix)
        args.secret_file = secret_file
        return f"development secret {value} (in {secret_file}, mode 0600)", value
    return (f"from {args.secret_file}" if args.secret_file else f"from ${args.secret_env}"), None


def cmd_serve(args: argparse.Namespace) -> int:
    root: Path = args.root.resolve()
    prefix: Path = (args.prefix or root / DEFAULT_PREFIX).resolve()
    if args.worker_user is None:
        args.worker_user = invoking_user()  # a local server: workers read the checkout as you do
    try:
        if not args.no_build:
            print(f"corpus serve: {ensure_build(root, args.base_url.rstrip('/'))}", file=sys.stderr)
        elif not (root / "manifest" / MANIFEST_FILE).exists():
            raise RenderError("--no-build given but there is no build; run 'corpus build'")
        note, secret_value = _secret(args, prefix)
        if args.replicas:
            if args.secret_env is not None:
                raise RenderError("--replicas takes --secret-file (each nginx re-reads it on a rotation)")
            return run_topology(args, root, prefix, note, secret_value)
        settings = settings_from_args(args, prefix, port=args.port or PLAIN_PORT)
        render_and_write(settings, root)
    except CorpusError as exc:
        for problem in exc.problems:
            print(problem, file=sys.stderr)
        print("corpus serve: corpus_src/ does not compile; fix it, or serve the current build with --no-build",
              file=sys.stderr)
        return 1
    print(_banner(settings, note, secret_value, _sample_path(root)), flush=True)
    return run_foreground(settings)


def _topology_tls(args: argparse.Namespace, prefix: Path, host: str) -> LocalTLS:
    """The frontal's certificate: the one given (with --tls-ca for the state file), else the prefix's local CA
    (made at the first start, kept while it names the same address and stays valid)."""
    if args.tls_cert is not None:
        if args.tls_key is None:
            raise RenderError("--tls-cert needs --tls-key")
        return LocalTLS(ca=(args.tls_ca or args.tls_cert).resolve(), cert=args.tls_cert.resolve(),
                        key=args.tls_key.resolve())
    return make_local_tls(prefix / "tls", [host], reuse=True)


def run_topology(args: argparse.Namespace, root: Path, prefix: Path, note: str, secret_value: str | None) -> int:
    """Render and run a TLS frontal over ``--replicas`` replicas in the foreground; Ctrl-C stops them all."""
    host = args.listen
    tls = _topology_tls(args, prefix, host)
    topology = Topology(root=root, base=prefix, secret_file=args.secret_file.resolve(), tls=tls,
                        replica_addresses=[(h, args.replica_port) for h in replica_hosts(args.replicas)],
                        frontal_addresses=[(host, args.port or FRONTAL_PORT)], workers=args.workers,
                        worker_user=args.worker_user, expect_manifest_hash=args.expect_manifest_hash,
                        repo_root=root)
    with _Stop() as stop:
        try:
            topology.start()
            if args.state_file is not None:
                topology.write_state(args.state_file)
            url, sample = topology.frontal_url(), _sample_path(root)
            header = f"X-Challenge-Secret: {secret_value or '$(head -1 FILE)'}"
            print("\n".join([
                f"corpus serve: TLS frontal {url} over {args.replicas} replica(s) "
                + ", ".join(f"{p.settings.listen}:{p.settings.port} (pid {p.pid})" for p in topology.replicas),
                f"  secret: {note}",
                f"  curl -s --cacert {tls.ca} -H '{header}' {url}{sample}",
                f"  logs: {prefix}/*/logs/access.log (JSON, \"role\": frontal or replica)",
                f"  maintenance of one replica (the frontal skips it): corpus maintenance on|off --prefix "
                f"{topology.replicas[0].settings.prefix}",
                f"  state: {args.state_file or '(give --state-file FILE for JSON)'}",
                "  Ctrl-C stops everything", ""]), flush=True)
            died = _wait_until_stopped(stop, [*topology.frontals, *topology.replicas])
        finally:
            topology.stop()
            if args.state_file is not None:
                args.state_file.unlink(missing_ok=True)
    if died is None:
        print(f"corpus serve: stopped ({signal.Signals(stop.signals[0]).name})", file=sys.stderr)
        return 0
    print(f"corpus serve: nginx from {died.settings.prefix} exited; see {died.settings.error_log_path}",
          file=sys.stderr)
    return 1


# ------------------------------------------------------------------------------------- maintenance


def maintenance_flag(prefix: Path) -> Path:
    """The flag file of a rendered prefix (settings.json says where; default PREFIX/maintenance)."""
    return read_settings(prefix).settings.maintenance_path


def cmd_maintenance(args: argparse.Namespace) -> int:
    prefix: Path = (args.prefix or args.root / DEFAULT_PREFIX).resolve()
    flag = maintenance_flag(prefix)
    if args.state == "on":
        flag.parent.mkdir(parents=True, exist_ok=True)
        flag.touch()
        os.chmod(flag, 0o644)
    elif args.state == "off":
        flag.unlink(missing_ok=True)
    state = "on (503 for every request)" if flag.exists() else "off"
    print(f"corpus maintenance: {state}; flag file {flag}", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from generator.cli import add_root_options, base_url_option

    p = sub.add_parser(
        "serve", help="build if needed, then run the vhost in a real nginx in the foreground",
        description="Bring build/ up to date with corpus_src/ (bytes compared, written only if different), "
                    "render the vhost into a private prefix (default run/serve/), and run nginx in the "
                    "foreground on 127.0.0.1. Without --secret-file or --secret-env, a development secret is "
                    "generated once per prefix (PREFIX/dev-secret, mode 0600) and printed. Ctrl-C or SIGTERM "
                    "stops nginx and its workers.")
    add_root_options(p)
    base_url_option(p)
    p.add_argument("--prefix", type=Path, default=None, help="private nginx prefix (default ROOT/run/serve)")
    p.add_argument("--no-build", action="store_true", help="serve build/ as it is, without compiling")
    add_render_options(p)
    p.add_argument("--replicas", type=int, default=0, metavar="N",
                   help="run the production shape: a TLS frontal on --listen:--port (default 8443) over N "
                        "replicas on 127.0.0.2, 127.0.0.3, ... (certificate made at start unless --tls-cert)")
    p.add_argument("--replica-port", type=int, default=REPLICA_PORT,
                   help=f"port of every replica (default {REPLICA_PORT})")
    p.add_argument("--tls-ca", type=Path, default=None,
                   help="with --tls-cert: the CA certificate clients should trust (for --state-file)")
    p.add_argument("--state-file", type=Path, default=None,
                   help="with --replicas: once everything answers, write JSON {frontal, ca, replicas: "
                        "[{address, pid}]} to FILE (removed on exit)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser(
        "maintenance", help="switch the served corpus to 503 maintenance, or back",
        description="Create (on) or remove (off) the maintenance flag file of a rendered prefix. nginx checks "
                    "it on every request: no reload, no restart. 'status' only reports.")
    add_root_options(p)
    p.add_argument("state", choices=("on", "off", "status"))
    p.add_argument("--prefix", type=Path, default=None, help="rendered prefix (default ROOT/run/serve)")
    p.set_defaults(func=cmd_maintenance)
