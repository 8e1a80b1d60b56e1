#!/usr/bin/env python3
"""What the frontal costs for the load the proxy makes: one TLS handshake and one request per connection.

Not a test: run it by hand (``make bench-frontal``). wrk sends ``Connection: close`` so that every
request opens a new TCP connection and makes a full TLS handshake (wrk does not resume sessions; the
frontal issues no tickets), which is what the Trust Layer proxy does: a new HTTP client per call.
Targets, all real nginx on loopback, all over TLS, same binary, same TLS settings (rendered from
nginx/snippets/listen.conf.j2), the same file:

- **frontal**: the rendered TLS frontal (secret, gate, JSON log) over one rendered replica (secret
  again, canonical check, try_files, JSON log), upstream keepalive between them, mutual TLS on that
  link as deployed (``--plain-replica``: plain HTTP, the development option, the figure before mTLS);
- **bare**: one nginx serving the file over TLS with no check, no header, no log: the ceiling.

Each with an ECDSA P-256 and an RSA 2048 certificate. wrk resumes TLS sessions when it reconnects (it
keeps the session across ``SSL_clear``) and the proxy never does (a new client, a new context, per
call), so both targets run with ``ssl_session_cache off`` (``--allow-resumption`` keeps the rendered
cache): every request pays a full handshake, as the proxy's do. Runs alternate (the order rotates each round)
so that drift of the shared machine hits every target. The report gives requests/s, p50/p99 and the
nginx CPU time per request (frontal + replica for the frontal), the steadier figure on a busy machine.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_nginx import benchmark_file, medians, print_medians, rounds, wrk  # noqa: E402

from generator.base.secret_values import new_secret, write_private  # noqa: E402
from generator.observe.proxy_client import fetch, tls_context  # noqa: E402
from generator.serving.instances.nginx_process import NginxProcess  # noqa: E402
from generator.serving.instances.topology import Topology, free_port  # noqa: E402
from generator.serving.rendering.nginx_render import TLS_SESSION_CACHE, host_port  # noqa: E402
from generator.serving.rendering.nginx_settings import Settings  # noqa: E402
from generator.serving.rendering.nginx_syntax import quote_path  # noqa: E402
from generator.serving.rendering.templates import environment  # noqa: E402
from generator.serving.tls.tls_local import make_local_tls, make_peer_tls  # noqa: E402

BARE_CONF = """\
# Ceiling for bench/bench_frontal.py: the same file over the same TLS, no check, no header, no log.
worker_processes {workers};
worker_rlimit_nofile 4096;
pid {pid};
error_log {error_log} warn;
events {{ worker_connections 1024; }}
http {{
{temp_paths}
    access_log off;
    default_type application/json;
    server {{
{listen}
        root {build};
        sendfile off;
        tcp_nodelay on;
        open_file_cache max=10000 inactive=60s;
        open_file_cache_valid 1s;
        open_file_cache_errors on;
        location / {{ }}
    }}
}}
"""


def bare(folder: Path, port: int, cert: Path, key: Path, workers: str, resume: bool) -> NginxProcess:
    """The ceiling: TLS directives rendered from the project's own listen snippet, the file served as is."""
    context = {"tls": True, "listen": host_port("127.0.0.1", port), "server_name": "localhost",
               "tls_cert": quote_path(cert), "tls_key": quote_path(key),
               "tls_session_cache": TLS_SESSION_CACHE if resume else "off", "verify_clients": False}
    listen = environment().get_template("snippets/listen.conf.j2").render(context)
    text = BARE_CONF.format(
        workers=workers, pid=quote_path(folder / "logs" / "nginx.pid"),
        error_log=quote_path(folder / "logs" / "error.log"),
        temp_paths="".join(f"    {n}_temp_path {quote_path(folder / n)};\n"
                           for n in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")),
        listen="".join(f"        {line}\n" for line in listen.splitlines()),
            build=quote_path(ROOT / "build/conformite"))
    (folder / "conf").mkdir(parents=True)
    (folder / "logs").mkdir()
    (folder / "conf" / "nginx.conf").write_text(text)
    process = NginxProcess(Settings(root=ROOT, prefix=folder, port=port))
    process.start()
    return process


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=5, help="seconds per run (default 5)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds over the targets (default 2)")
    parser.add_argument("--connections", type=int, default=16, help="concurrent clients (default 16)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", default="auto", help="worker_processes of the frontal and the bare nginx")
    parser.add_argument("--replica-workers", default="1", help="worker_processes of the replica (default 1)")
    parser.add_argument("--path", default=None, help="resource to request (default: the first agrément)")
    parser.add_argument("--allow-resumption", action="store_true",
                        help="keep the rendered TLS session cache (wrk then resumes sessions; the proxy does not)")
    parser.add_argument("--plain-replica", action="store_true",
                        help="plain HTTP between frontal and replica (the development option; default mutual TLS)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args()
    path, file, expected = benchmark_file(args.path)

    work = Path(tempfile.mkdtemp(prefix="corpus-bench-frontal-"))
    work.chmod(0o755)
    topologies: list[Topology] = []
    processes: list[NginxProcess] = []
    targets: dict[str, tuple[str, Path | None, list[int]]] = {}
    try:
        secret = new_secret()
        write_private(work / "secret", secret + "\n")
        (work / "close.lua").write_text('wrk.headers["Connection"] = "close"\n')
        (work / "secret.lua").write_text(f'wrk.headers["X-Challenge-Secret"] = "{secret}"\n'
                                         'wrk.headers["Connection"] = "close"\n')
        for kind in ("ec", "rsa"):
            tls = make_local_tls(work / f"tls-{kind}", ["127.0.0.1"], kind=kind)
            peer = None if args.plain_replica else make_peer_tls(work / f"tls-{kind}" / "peer", ["127.0.0.2"])
            replica_port = free_port(["127.0.0.2"])
            topology = Topology(root=ROOT, base=work / f"topology-{kind}", secret_file=work / "secret", tls=tls,
                                replica_addresses=[("127.0.0.2", replica_port)],
                                frontal_addresses=[("127.0.0.1", free_port(["127.0.0.1"]))],
                                workers=args.workers, replica_workers=args.replica_workers,
                                tls_resumption=args.allow_resumption, peer=peer)
            topologies.append(topology)
            topology.start()
            answer = fetch(topology.frontal_addresses, path, secret, tls_context(tls.ca))
            assert (answer.status, answer.body) == (200, expected), f"frontal-{kind} does not serve the file"
            targets[f"frontal-{kind}"] = (f"{topology.frontal_url()}{path}", work / "secret.lua",
                                          [topology.frontals[0].pid, topology.replicas[0].pid])
            port = free_port(["127.0.0.1"])
            processes.append(bare(work / f"bare-{kind}", port, tls.cert, tls.key, args.workers,
                                  args.allow_resumption))
            url = f"https://127.0.0.1:{port}/{file}"
            answer = fetch([("127.0.0.1", port)], f"/{file}", None, tls_context(tls.ca))
            assert (answer.status, answer.body) == (200, expected), f"bare-{kind} does not serve the file"
            targets[f"bare-{kind}"] = (url, work / "close.lua", [processes[-1].pid])
        for url, script, _masters in targets.values():
            wrk(url, args, script, 1)  # warm-up, not counted

        names = list(targets)
        runs = rounds(targets, args)
    finally:
        for topology in topologies:
            topology.stop()
        for process in processes:
            process.stop()
        shutil.rmtree(work, ignore_errors=True)

    result = medians(runs, names)
    ratios = {kind: round(result[f"frontal-{kind}"]["rps"] / result[f"bare-{kind}"]["rps"], 3)
              for kind in ("ec", "rsa")}
    ec_over_rsa = round(result["frontal-ec"]["rps"] / result["frontal-rsa"]["rps"], 3)
    summary = {"path": path, "link": "plain" if args.plain_replica else "mutual TLS",
               "tls_resumption": args.allow_resumption, "duration_s": args.duration,
               "rounds": args.rounds, "connections": args.connections, "one_request_per_connection": True,
               "median": result,
               "ratio_frontal_over_bare": ratios, "frontal_ec_over_rsa": ec_over_rsa,
               "runs": [r.__dict__ for r in runs]}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_medians(result)
        for kind, ratio in ratios.items():
            print(f"ratio frontal/bare ({kind}) {ratio:.3f} (aim >= 0.7)")
        print(f"frontal ECDSA P-256 / RSA 2048: {ec_over_rsa:.2f}x the requests/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
