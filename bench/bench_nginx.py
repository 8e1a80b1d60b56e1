#!/usr/bin/env python3
"""What the vhost's checks cost: wrk against the real vhost and against a bare nginx serving the same file.

Not a test: run it by hand (``.venv/bin/python bench/bench_nginx.py``). Two nginx instances run from
private prefixes on loopback, same binary, same worker count, same sendfile/keep-alive settings:

- **vhost**: the rendered corpus vhost (secret map and gate, canonical check, try_files, headers, JSON
  access log), requested with the secret (set by a wrk Lua script, so it is on no command line);
- **ceiling**: a minimal server that serves the same file with no check, no header, no log, and the
  same file-serving settings (sendfile, keep-alive, open_file_cache); ``--bare-ceiling`` drops the
  open_file_cache from the ceiling too (then the vhost may beat it: the cache is worth ~25% here).

Runs alternate (vhost/ceiling, then ceiling/vhost, ...) so that drift of the machine hits both; the
report gives each run, the medians, and the ratio of the medians. Goal: ratio >= 0.9 and vhost p99 < 5 ms
at 64 connections on a 2-core machine. ``--check`` exits 1 when the goal is missed.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.nginx_render import Settings, nginx_binary, render_and_write  # noqa: E402
from generator.nginx_syntax import quote_path  # noqa: E402
from generator.secrets import new_secret, write_private  # noqa: E402
from generator.serve import stop_group, wait_ready  # noqa: E402

CEILING_CONF = """\
# Ceiling for bench/bench_nginx.py: the same file, no check, no header, no log.
worker_processes {workers};
pid {pid};
error_log {error_log} warn;
events {{ worker_connections 1024; }}
http {{
{temp_paths}
    access_log off;
    server {{
        listen 127.0.0.1:{port};
        root {build};
        default_type application/json;
        sendfile on;
        tcp_nopush on;
        tcp_nodelay on;
        keepalive_timeout 65s;
        keepalive_requests 10000;
        location / {{
{cache}        }}
    }}
}}
"""
UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}
# The vhost's file cache (nginx/snippets/resources.conf.j2), for a like-for-like ceiling.
FILE_CACHE = """\
            open_file_cache max=10000 inactive=60s;
            open_file_cache_valid 1s;
            open_file_cache_min_uses 1;
            open_file_cache_errors on;
"""


@dataclass
class Run:
    target: str
    rps: float
    p50: float  # milliseconds
    p75: float
    p90: float
    p99: float


def parse_wrk(target: str, output: str) -> Run:
    """Requests/s and latency percentiles (ms) from ``wrk --latency``; refuse runs with errors."""
    if "Non-2xx or 3xx responses" in output or "Socket errors" in output:
        raise SystemExit(f"{target}: wrk saw errors, the figures would be meaningless:\n{output}")
    rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", output).group(1))  # type: ignore[union-attr]
    latency = {}
    for pct, value, unit in re.findall(r"^\s+(50|75|90|99)%\s+([0-9.]+)(us|ms|s)\s*$", output, re.M):
        latency[pct] = float(value) * UNITS[unit]
    return Run(target, rps, latency["50"], latency["75"], latency["90"], latency["99"])


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(prefix: Path, conf: Path, port: int) -> subprocess.Popen[bytes]:
    command = [nginx_binary(), "-p", f"{prefix}/", "-c", str(conf), "-e", str(prefix / "error.log"),
               "-g", "daemon off;"]
    process = subprocess.Popen(command, start_new_session=True)
    if not wait_ready("127.0.0.1", port, process, 10):
        stop_group(process)
        raise SystemExit(f"nginx did not start on port {port}; see {prefix}")
    time.sleep(0.3)  # workers up
    return process


def fetch(url: str, secret: str | None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers={"X-Challenge-Secret": secret} if secret else {})
    with urllib.request.urlopen(request, timeout=5) as resp:
        return resp.status, resp.read()


def wrk(url: str, args: argparse.Namespace, script: Path | None, duration: int) -> str:
    command = ["wrk", f"-t{args.threads}", f"-c{args.connections}", f"-d{duration}s", "--latency", url]
    if script:
        command[1:1] = ["-s", str(script)]
    return subprocess.run(command, capture_output=True, text=True, check=True, timeout=duration + 30).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds per run (default 10)")
    parser.add_argument("--rounds", type=int, default=3, help="vhost/ceiling pairs (default 3)")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", default="auto", help="nginx worker_processes for both (default auto)")
    parser.add_argument("--path", default=None, help="resource to request (default: the first agrément)")
    parser.add_argument("--bare-ceiling", action="store_true", help="no open_file_cache in the ceiling")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 if ratio < 0.9 or vhost p99 >= 5 ms")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk not found: apt-get install wrk")

    manifest = json.loads((ROOT / "manifest" / "manifest.json").read_text("utf-8"))
    entries = {e["path"]: e for e in manifest["resources"]}
    path = args.path or next(p for p in sorted(entries) if p.startswith("/agrements/"))
    build_file = ROOT / "build" / entries[path]["file"]
    expected = build_file.read_bytes()

    work = Path(tempfile.mkdtemp(prefix="corpus-bench-"))
    work.chmod(0o755)
    processes: list[subprocess.Popen[bytes]] = []
    try:
        secret = new_secret()
        write_private(work / "secret", secret + "\n")
        (work / "secret.lua").write_text(f'wrk.headers["X-Challenge-Secret"] = "{secret}"\n')
        vhost_port, ceiling_port = free_port(), free_port()
        settings = Settings(root=ROOT, prefix=work / "vhost", port=vhost_port, secret_file=work / "secret",
                            worker_processes=args.workers)
        render_and_write(settings, None)
        processes.append(start(settings.prefix, settings.nginx_conf, vhost_port))
        ceiling = work / "ceiling"
        ceiling.mkdir()
        temp_paths = "".join(f"    {n}_temp_path {quote_path(ceiling / n)};\n"
                             for n in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        (ceiling / "nginx.conf").write_text(CEILING_CONF.format(
            workers=args.workers, pid=quote_path(ceiling / "nginx.pid"),
            error_log=quote_path(ceiling / "error.log"), port=ceiling_port, build=quote_path(ROOT / "build"),
            temp_paths=temp_paths, cache="" if args.bare_ceiling else FILE_CACHE))
        processes.append(start(ceiling, ceiling / "nginx.conf", ceiling_port))

        vhost_url = f"http://127.0.0.1:{vhost_port}{path}"
        ceiling_url = f"http://127.0.0.1:{ceiling_port}/{entries[path]['file']}"
        assert fetch(vhost_url, secret) == (200, expected), "the vhost does not serve the file"
        assert fetch(ceiling_url, None) == (200, expected), "the ceiling does not serve the file"
        targets = {"vhost": (vhost_url, work / "secret.lua"), "ceiling": (ceiling_url, None)}
        for url, script in targets.values():  # warm-up, not counted
            wrk(url, args, script, 2)

        runs: list[Run] = []
        for round_index in range(args.rounds):
            order = ["vhost", "ceiling"] if round_index % 2 == 0 else ["ceiling", "vhost"]
            for name in order:
                url, script = targets[name]
                run = parse_wrk(name, wrk(url, args, script, args.duration))
                runs.append(run)
                print(f"round {round_index + 1} {name:8} {run.rps:10.0f} req/s  p50 {run.p50:.2f} ms  "
                      f"p90 {run.p90:.2f} ms  p99 {run.p99:.2f} ms", file=sys.stderr, flush=True)
    finally:
        for process in processes:
            stop_group(process)
        shutil.rmtree(work, ignore_errors=True)

    def median(name: str, field: str) -> float:
        return statistics.median(getattr(r, field) for r in runs if r.target == name)

    result = {name: {f: median(name, f) for f in ("rps", "p50", "p90", "p99")} for name in ("vhost", "ceiling")}
    ratio = result["vhost"]["rps"] / result["ceiling"]["rps"]
    ok = ratio >= 0.9 and result["vhost"]["p99"] < 5.0
    summary = {"path": path, "bare_ceiling": args.bare_ceiling,
               "duration_s": args.duration, "rounds": args.rounds, "connections": args.connections,
               "threads": args.threads, "median": result, "ratio": round(ratio, 3), "goal_met": ok,
               "runs": [r.__dict__ for r in runs]}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        for name in ("vhost", "ceiling"):
            m = result[name]
            print(f"{name:8} median {m['rps']:10.0f} req/s  p50 {m['p50']:.2f} ms  p90 {m['p90']:.2f} ms  "
                  f"p99 {m['p99']:.2f} ms")
        print(f"ratio vhost/ceiling {ratio:.3f} (goal >= 0.9), vhost p99 {result['vhost']['p99']:.2f} ms "
              f"(goal < 5 ms): {'met' if ok else 'MISSED'}")
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    raise SystemExit(main())
