"""``corpus render-nginx``, ``serve``, ``maintenance``, ``verify-build``, ``reload`` and ``render-systemd``:
the nginx instances that serve build/ (:mod:`generator.serving`)."""

from __future__ import annotations

import argparse
import socket
import sys
from pathlib import Path

from generator.base.atomic_file import write_atomic
from generator.base.errors import CorpusError, ServeError
from generator.base.output_places import outside_protected
from generator.cli.options import (
    PROBLEM,
    Subparsers,
    UsageError,
    add_render_options,
    add_root_options,
    base_url_option,
    print_problems,
    render_settings,
)
from generator.compiler.pipeline import ensure_build
from generator.serving.instances.instance_commands import reload_prefix, verify_prefix
from generator.serving.instances.nginx_process import reload_and_wait
from generator.serving.instances.nginx_write import render_and_write
from generator.serving.instances.serve import (
    DEFAULT_PREFIX,
    PLAIN_PORT,
    TopologyRun,
    banner,
    check_ports,
    dev_secret,
    hold_port,
    invoking_user,
    run_foreground,
    run_topology,
    sample_path,
    served_name,
    set_maintenance,
    topology_peer,
    topology_tls,
)
from generator.serving.instances.topology import FRONTAL_PORT, REPLICA_PORT, replica_addresses
from generator.serving.rendering.systemd_units import (
    DEFAULT_USER,
    ROLES,
    UnitError,
    account_exists,
    check_prefix_tls,
    render_unit,
    unit_settings,
)
from generator.serving.tls.peer_tls import PLAIN, PeerTLS
from generator.tracks.loader import load_tracks

# serve's options that only the topology (--replicas) uses: refused without it, never silently ignored
TOPOLOGY_ONLY = (("--replica", "replica"), ("--replica-port", "replica_port"), ("--tls-ca", "tls_ca"),
                 ("--state-file", "state_file"), ("--plain-replicas", "plain_replicas"))


def link_options(args: argparse.Namespace) -> PeerTLS:
    """The link between frontals and replicas that ``--peer-*`` or ``--plain-replica`` describe: one of the
    two must be given, so that plain HTTP is always a choice made on purpose."""
    given = [o for o, v in (("--peer-ca", args.peer_ca), ("--peer-cert", args.peer_cert),
                            ("--peer-key", args.peer_key)) if v is not None]
    if args.plain_replica:
        if given:
            raise ServeError(f"--plain-replica (no TLS between frontal and replicas) and {given[0]} contradict "
                              "each other: give one or the other")
        return PLAIN
    if args.peer_ca is None:
        wanted = "--peer-ca CA --tls-cert CERT --tls-key KEY" if args.role == "replica" else \
            "--peer-ca CA --peer-cert CERT --peer-key KEY"
        raise ServeError(f"--role {args.role}: the link between frontals and replicas is mutual TLS: give "
                          f"{wanted} (docs/operating.md, the private CA), or --plain-replica (development only)")
    return PeerTLS(args.peer_ca, args.peer_cert, args.peer_key)


def _replicas_given(args: argparse.Namespace) -> list[str]:
    """Every address of ``--replica``, repeated or comma-separated (``--replica A,B --replica C``)."""
    return [u for item in args.replica for u in item.split(",") if u]


def cmd_render_nginx(args: argparse.Namespace) -> int:
    upstreams = tuple(_replicas_given(args))
    settings = render_settings(args, args.prefix, role=args.role, upstreams=upstreams)
    rendered = render_and_write(settings, args.root, link_options(args))
    for warning in rendered.warnings:
        print(f"corpus render-nginx: {warning}", file=sys.stderr)
    if args.reload:
        pid = reload_and_wait(settings.resolved())
        print(f"corpus render-nginx: reloaded nginx (master pid {pid}); only the new configuration "
              "answers now", file=sys.stderr)
    print(f"corpus render-nginx: {settings.nginx_conf} ({settings.role} {settings.corpus_conf}, secrets "
          f"{settings.secrets_conf}, mode 0600); nginx -t passed", file=sys.stderr)
    return 0


def _secret(args: argparse.Namespace, prefix: Path) -> tuple[str, str | None]:
    """Fill ``args.secret_file`` with the development secret when no source is given; (note, value)."""
    if args.secret_file is None and args.secret_env is None:
        secret_file, value = dev_secret(prefix)
        args.secret_file = secret_file
        return f"development secret {value} (in {secret_file}, mode 0600)", value
    return (f"from {args.secret_file}" if args.secret_file else f"from ${args.secret_env}"), None


def _topology_ports(args: argparse.Namespace, replicas: list[tuple[str, int]]) -> None:
    """The frontal's and every replica's address free, before anything is printed (one line otherwise)."""
    port = args.port or FRONTAL_PORT
    if (args.listen, port) in replicas:
        raise ServeError(f"--replica {args.listen}:{port} is the frontal's own address (--listen, --port): give "
                          "the replicas other addresses or ports")
    check_ports([(args.listen, port, "choose another port: --port P (make serve-topology FRONTAL_PORT=P)"),
                 *((host, p, "choose another: --replica-port P, or --replica HOST:PORT") for host, p in replicas)])


def cmd_serve(args: argparse.Namespace) -> int:
    root: Path = args.root.resolve()
    prefix: Path = (args.prefix or root / DEFAULT_PREFIX).resolve()
    if args.worker_user is None:
        args.worker_user = invoking_user()  # a local server: workers read the checkout as you do
    given = _replicas_given(args)
    held, replicas = None, None
    if args.replicas or given:  # checked before anything is printed: options, the state file, the ports
        if args.secret_env is not None:
            raise ServeError("--replicas takes --secret-file (each nginx re-reads it on a rotation)")
        replicas = replica_addresses(given, args.replicas, args.replica_port or REPLICA_PORT)
        if args.state_file is not None:
            outside_protected(root, args.state_file, "--state-file", "which corpus serve would write into: give a "
                              "file under run/ or outside the checkout")
        _topology_ports(args, replicas)
    else:
        wrong = [option for option, name in TOPOLOGY_ONLY if getattr(args, name) not in (None, False, [])]
        if wrong:
            raise UsageError(f"{wrong[0]} goes with --replicas N (a TLS frontal over replicas); without it, serve "
                             "runs one replica")
        held = hold_port(args.listen, args.port or PLAIN_PORT, "choose another port: --port P (make serve PORT=P)")
    try:
        return _serve(args, root, prefix, held, replicas)
    finally:
        if held is not None:
            held.close()


def _serve(args: argparse.Namespace, root: Path, prefix: Path, held: socket.socket | None,
           replicas: list[tuple[str, int]] | None) -> int:
    """Build if needed, render, run: the topology over ``replicas``, else one replica on ``held``."""
    if not args.no_build:
        try:
            built = ensure_build(root, args.base_url.rstrip('/'))
        except CorpusError as exc:
            print_problems(exc.problems)
            print("corpus serve: the sources do not compile; fix them, or serve the current build with --no-build",
                  file=sys.stderr)
            return PROBLEM
        print(f"corpus serve: {built}", file=sys.stderr)
    else:
        missing = [t.places.manifest_file for t in load_tracks(root)
                   if not (root / t.places.manifest_file).exists()]
        if missing:
            raise ServeError(f"--no-build given but there is no build ({missing[0]} missing); run 'corpus build'")
    note, secret_value = _secret(args, prefix)
    if replicas is not None:
        name = served_name(root, prefix, args.server_name or "")
        tls = topology_tls(prefix, [args.listen, name], args.tls_cert, args.tls_key, args.tls_ca)
        peer = topology_peer(prefix, replicas, args.plain_replicas)
        return run_topology(TopologyRun(
            root=root, prefix=prefix, listen=args.listen, port=args.port or FRONTAL_PORT, replicas=replicas,
            server_name=name, secret_file=args.secret_file, tls=tls, workers=args.workers,
            worker_user=args.worker_user, expect_manifest_hash=args.expect_manifest_hash,
            state_file=args.state_file, peer=peer, access_log=args.access_log, error_log=args.error_log,
            maintenance_flag=args.maintenance_flag), note, secret_value)
    settings = render_settings(args, prefix, port=args.port or PLAIN_PORT)
    rendered = render_and_write(settings, root)
    for warning in rendered.warnings:
        print(f"corpus serve: {warning}", file=sys.stderr)
    catalogues = tuple((t.piste, t.catalogue) for t in load_tracks(root))
    print(banner(settings, note, secret_value, sample_path(root), catalogues), flush=True)
    return run_foreground(settings, held)


def cmd_maintenance(args: argparse.Namespace) -> int:
    prefix: Path = (args.prefix or args.root / DEFAULT_PREFIX).resolve()
    flag, on = set_maintenance(prefix, args.state)
    state = "on (503 for every request)" if on else "off"
    print(f"corpus maintenance: {state}; flag file {flag}", file=sys.stderr)
    return 0


def cmd_verify_build(args: argparse.Namespace) -> int:
    served = verify_prefix(args.prefix.resolve())
    print(f"corpus verify-build: every track's build matches its manifest: {served}", file=sys.stderr)
    return 0


def cmd_reload(args: argparse.Namespace) -> int:
    pid, warnings = reload_prefix(args.prefix.resolve())
    for warning in warnings:
        print(f"corpus reload: {warning}", file=sys.stderr)
    print(f"corpus reload: nginx (master pid {pid}) reloaded; only the new configuration answers now",
          file=sys.stderr)
    return 0


def cmd_render_systemd(args: argparse.Namespace) -> int:
    for warning in check_prefix_tls(args.prefix):
        print(f"corpus render-systemd: {warning}", file=sys.stderr)
    try:
        settings = unit_settings(args.prefix, args.role, args.root, user=args.user, group=args.group,
                                 nginx=args.nginx, corpus=args.corpus, read_write=tuple(args.read_write),
                                 tls_files=tuple(args.tls_file))
        text = render_unit(settings)
    except UnitError as exc:
        print(f"corpus render-systemd: {exc}", file=sys.stderr)
        return PROBLEM
    if not account_exists(settings.user):
        print(f"corpus render-systemd: note: user {settings.user!r} does not exist here; create it on the host "
              f"that runs the unit (useradd --system --no-create-home --shell /usr/sbin/nologin "
              f"{settings.user})", file=sys.stderr)
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        args.output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        print(f"corpus render-systemd: {args.output}: cannot create the folder: {exc.strerror}", file=sys.stderr)
        return PROBLEM
    target = args.output / settings.unit_name
    write_atomic(target, text, mode=0o644)
    print(f"corpus render-systemd: wrote {target}; then: systemctl daemon-reload && systemctl enable --now "
          f"{settings.unit_name.replace('@.', '@1.')}", file=sys.stderr)
    return 0


def register_render_nginx(sub: Subparsers) -> None:
    p = sub.add_parser(
        "render-nginx", help="render the nginx replica or frontal into a private prefix (and reload it)",
        description="Render nginx/*.j2 with the build and the settings into PREFIX/conf/ (nginx.conf, the "
                    "includable site corpus.conf, the 0600 secrets include), check it with nginx -t, and "
                    "with --reload signal the nginx running from PREFIX to load it, returning only once the "
                    "new configuration answers. A replica first proves its build (build/ equals the "
                    "manifest; the manifest hash is --expect-manifest-hash or the freeze record's). "
                    "Rotation: add the new secret to the secret file, render every replica then the "
                    "frontal with --reload, switch the proxy, remove the old secret, render the frontal then "
                    "the replicas with --reload again.")
    add_root_options(p)
    p.add_argument("--prefix", type=Path, required=True, help="private nginx prefix folder")
    p.add_argument("--role", choices=("replica", "frontal"), default="replica",
                   help="replica (serves build/, default) or frontal (TLS, secret, failover over --replica)")
    p.add_argument("--replica", action="append", default=[], metavar="HOST:PORT",
                   help="frontal only: a replica address (repeat, or comma-separated)")
    add_render_options(p)
    p.add_argument("--peer-ca", type=Path, default=None, metavar="CA",
                   help="the deployment's private CA (PEM): a replica accepts only clients it signed (the "
                        "frontals), a frontal only replicas it signed, named corpus-replica")
    p.add_argument("--peer-cert", type=Path, default=None, metavar="CERT",
                   help="frontal only: its client certificate for the replicas, signed by --peer-ca")
    p.add_argument("--peer-key", type=Path, default=None, metavar="KEY",
                   help="frontal only: the key of --peer-cert (mode 0600)")
    p.add_argument("--plain-replica", action="store_true",
                   help="development only: plain HTTP between frontal and replicas, no client certificate")
    p.add_argument("--reload", action="store_true",
                   help="after rendering, make the nginx running from PREFIX load the new config and wait "
                        "until it answers")
    p.set_defaults(func=cmd_render_nginx)


def register_serve(sub: Subparsers) -> None:
    """``serve`` and ``maintenance``."""
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
                        "replicas on 127.0.0.2, 127.0.0.3, ... (certificate made at start unless --tls-cert, "
                        "naming the server name and --listen); --server-name, --access-log and --error-log are "
                        "the frontal's, --maintenance-flag every replica's")
    p.add_argument("--replica", action="append", default=[], metavar="HOST[:PORT]",
                   help="with --replicas: a replica's address (repeat, or comma-separated; as many as --replicas, "
                        "which may then be left out), its port --replica-port unless given")
    p.add_argument("--replica-port", type=int, default=None,
                   help=f"with --replicas: port of every replica without its own (default {REPLICA_PORT})")
    p.add_argument("--tls-ca", type=Path, default=None,
                   help="with --tls-cert: the CA certificate clients should trust (for --state-file)")
    p.add_argument("--state-file", type=Path, default=None,
                   help="with --replicas: once everything answers, write JSON {frontal, ca, replicas: "
                        "[{address, pid}], frontals: [...]} to FILE, again after each restart (removed on exit)")
    p.add_argument("--plain-replicas", action="store_true",
                   help="with --replicas, development only: plain HTTP between the frontal and the replicas "
                        "(default: mutual TLS under a local private CA made at start)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser(
        "maintenance", help="switch the served corpus to 503 maintenance, or back",
        description="Create (on) or remove (off) the maintenance flag file of a rendered prefix. nginx checks "
                    "it on every request: no reload, no restart. 'status' only reports.")
    add_root_options(p)
    p.add_argument("state", choices=("on", "off", "status"))
    p.add_argument("--prefix", type=Path, default=None, help="rendered prefix (default ROOT/run/serve)")
    p.set_defaults(func=cmd_maintenance)


def register_instance(sub: Subparsers) -> None:
    """``verify-build`` and ``reload``."""
    p = sub.add_parser(
        "verify-build", help="a rendered replica's start check: each track's build is exactly its manifest",
        description="Read PREFIX/conf/settings.json and prove the replica's root, every track of it: every "
                    "manifest entry's bytes, no other file in the build, and the release hash (or first track's "
                    "manifest hash) the prefix was rendered for (or its --expect-manifest-hash). Exit 1, naming "
                    "the first difference, otherwise; else one line naming the release hash and each track's "
                    "manifest hash.")
    p.add_argument("--prefix", type=Path, required=True, help="rendered nginx prefix")
    p.set_defaults(func=cmd_verify_build)

    p = sub.add_parser(
        "reload", help="re-render an instance from its settings and reload it, waiting until it answers",
        description="Render PREFIX again from PREFIX/conf/settings.json (the secret file as it is now, the "
                    "current release), run nginx -t, signal the running nginx, and return only once no worker "
                    "of the previous configuration accepts connections and the port answers.")
    p.add_argument("--prefix", type=Path, required=True, help="rendered nginx prefix")
    p.set_defaults(func=cmd_reload)


def register_systemd(sub: Subparsers) -> None:
    p = sub.add_parser(
        "render-systemd", help="render the systemd unit of a frontal or a replica",
        description="Render deploy/systemd/corpus-ROLE.service.j2 for a prefix rendered by 'corpus render-nginx': "
                    "nginx in the foreground as an unprivileged user, in a read-only sandbox but for the "
                    "prefix's logs/ and tmp/, nginx -t before start, the build proof before a replica starts, "
                    "a reload that waits, restart on failure. Role and build root are read from "
                    "PREFIX/conf/settings.json when the prefix is rendered on this host. A replica prefix "
                    "containing %i gives the template unit corpus-replica@.service.")
    p.add_argument("--prefix", required=True, help="the nginx prefix on the target host (may contain %%i)")
    p.add_argument("--role", choices=ROLES, default=None, help="frontal or replica (default: PREFIX's settings)")
    p.add_argument("--root", default=None,
                   help="the folder of the releases or build served (default: PREFIX's settings); only needed "
                        "when it lies in a home folder, which the sandbox then opens read-only")
    p.add_argument("--user", default=DEFAULT_USER,
                   help=f"unprivileged account nginx runs as (default {DEFAULT_USER})")
    p.add_argument("--group", default=None, help="its group (default: same name as the user)")
    p.add_argument("--nginx", default=None, help="nginx executable (default: the one on PATH, or /usr/sbin/nginx)")
    p.add_argument("--corpus", default=None,
                   help="the corpus command on the target host (default: the one running this command)")
    p.add_argument("--read-write", action="append", default=[], metavar="DIR",
                   help="another folder nginx writes (logs kept outside the prefix); repeatable")
    p.add_argument("--tls-file", action="append", default=[], metavar="FILE",
                   help="a TLS file nginx reads at start (certificate, key, --peer-ca, --peer-cert, --peer-key); "
                        "repeatable; default: those of PREFIX's settings. Each must exist, not empty, at start")
    p.add_argument("--output", type=Path, default=None,
                   help="folder to write UNIT.service into (e.g. /etc/systemd/system); default: stdout")
    p.set_defaults(func=cmd_render_systemd)
