#!/usr/bin/env python3
"""What the vhost's checks cost: wrk against the real vhost and against a bare nginx serving the same file.

Not a test: run it by hand (``.venv/bin/python bench/bench_nginx.py``). Two nginx instances run from
private prefixes on loopback, same binary, same worker count, same sendfile/keep-alive settings:

- **vhost**: the rendered corpus vhost (secret map and gate, canonical check, try_files, headers, JSON
  access log), requested with the secret (set by a wrk Lua script, so it is on no command line);
- **ceiling**: a minimal server that serves the same file with no check, no header, no log, and the
  same file-serving settings (no sendfile, keep-alive, open_file_cache); ``--bare-ceiling`` drops the
  open_file_cache from the ceiling too (then the vhost may beat it: the cache is worth ~25% here);
- **output** (unless ``--no-output-ceiling``): the ceiling plus what the vhost writes on every answer,
  rendered from the same snippets (JSON-only settings, no-cache headers, JSON access log) but no
  check: the ratio vhost/output is the cost of the checks alone (secret, gate, canonical form,
  try_files).

Runs alternate (the order rotates each round) so that drift of the machine hits every target; the
report gives each run, the medians, the ratios of the medians, and the nginx CPU time per request (the
steadier figure on a shared machine). Goal: vhost/ceiling >= 0.9 and vhost p99 < 5 ms at 64 connections
on a 2-core machine. ``--check`` exits 1 when the goal is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.base.secret_values import new_secret, write_private  # noqa: E402
from generator.contract.manifest import Manifest  # noqa: E402
from generator.serving.instances.nginx_process import NginxProcess  # noqa: E402
from generator.serving.instances.nginx_write import render_and_write  # noqa: E402
from generator.serving.rendering.nginx_render import ACCESS_LOG_BUFFER  # noqa: E402
from generator.serving.rendering.nginx_settings import Settings  # noqa: E402
from generator.serving.rendering.nginx_syntax import quote_path  # noqa: E402
from generator.serving.rendering.templates import environment  # noqa: E402

CEILING_CONF = """\
# Ceiling for bench/bench_nginx.py: the same file, no check (and, unless "output", no header, no log).
worker_processes {workers};
pid {pid};
error_log {error_log} warn;
events {{ worker_connections 1024; }}
http {{
{temp_paths}
    access_log off;
{http_extra}
    server {{
        listen 127.0.0.1:{port};
        root {build};
{server_extra}
        sendfile off;
        tcp_nodelay on;
        keepalive_timeout 65s;
        keepalive_requests 10000;
        location / {{
{cache}        }}
    }}
}}
"""
UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3}
# The vhost's file cache (nginx/snippets/file-serving.conf.j2), for a like-for-like ceiling.
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
    cpu_us: float = 0.0  # CPU time of the nginx workers per request, in microseconds


def nginx_cpu_seconds(master: int) -> float:
    """User + system CPU time of the master's children (the workers), from /proc.

    Throughput on a shared 2-core machine moves with whatever else runs; CPU time per request is the
    steadier measure of what the vhost's checks cost.
    """
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == master:
            total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


def parse_wrk(target: str, output: str) -> Run:
    """Requests/s and latency percentiles (ms) from ``wrk --latency``; refuse runs with errors."""
    if "Non-2xx or 3xx responses" in output or "Socket errors" in output:
        raise SystemExit(f"{target}: wrk saw errors, the figures would be meaningless:\n{output}")
    rps = float(re.search(r"Requests/sec:\s+([0-9.]+)", output).group(1))  # type: ignore[union-attr]
    requests_done = int(re.search(r"([0-9]+) requests in", output).group(1))  # type: ignore[union-attr]
    latency = {}
    for pct, value, unit in re.findall(r"^\s+(50|75|90|99)%\s+([0-9.]+)(us|ms|s)\s*$", output, re.M):
        latency[pct] = float(value) * UNITS[unit]
    run = Run(target, rps, latency["50"], latency["75"], latency["90"], latency["99"])
    run.cpu_us = float(requests_done)  # replaced by the caller with CPU per request
    return run


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ceiling_conf(kind: str, folder: Path, port: int, args: argparse.Namespace) -> str:
    """The config of a ceiling; ``output`` adds the vhost's own output snippets, rendered from nginx/."""
    temp_paths = "".join(f"    {n}_temp_path {quote_path(folder / n)};\n"
                         for n in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    http_extra, server_extra = "", "        default_type application/json;\n"
    if kind == "output":
        env = environment()
        context = {"access_log": quote_path(folder / "access.log"), "access_log_buffer": ACCESS_LOG_BUFFER,
                   "error_log": quote_path(folder / "error.log"), "error_log_level": "warn",
                   "role": "replica"}
        http_extra = ("map $uri $corpus_secret_ok { default 1; }\n"
                      + env.get_template("snippets/log-format.conf.j2").render(context))
        server_extra = "".join(env.get_template(f"snippets/{name}.conf.j2").render(context)
                               for name in ("logs", "json-only", "no-cache"))
    return CEILING_CONF.format(
        workers=args.workers, pid=quote_path(folder / "nginx.pid"), error_log=quote_path(folder / "error.log"),
        port=port, build=quote_path(ROOT / "build" / "conformite"), temp_paths=temp_paths, http_extra=http_extra,
        server_extra=server_extra, cache="" if args.bare_ceiling else FILE_CACHE)


def start_conf(folder: Path, text: str, port: int) -> NginxProcess:
    """Run a hand-written config (a ceiling) through the project's one nginx runner: FOLDER/conf/nginx.conf."""
    (folder / "conf").mkdir(parents=True, exist_ok=True)
    (folder / "logs").mkdir(exist_ok=True)
    (folder / "conf" / "nginx.conf").write_text(text)
    process = NginxProcess(Settings(root=ROOT, prefix=folder, port=port))
    process.start()
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


def benchmark_file(path: str | None) -> tuple[str, str, bytes]:
    """The path to request (default: the first agrément), its file under build/ and its checked bytes."""
    if shutil.which("wrk") is None:
        raise SystemExit("wrk not found: make setup (installs it from the Debian packages)")
    manifest = Manifest.load(ROOT, "manifest/conformite")
    path = path or next(e.path for e in manifest.of_kind("resource") if e.path.startswith("/agrements/"))
    entry = manifest.by_path(path)
    if entry is None:
        raise SystemExit(f"{path}: not in the manifest")
    return path, entry.file, entry.read_checked(ROOT / "build" / "conformite")


def medians(runs: list[Run], names: list[str]) -> dict[str, dict[str, float]]:
    """Per target, the median of each figure over its runs."""
    fields = ("rps", "p50", "p90", "p99", "cpu_us")
    return {name: {f: round(statistics.median(getattr(r, f) for r in runs if r.target == name), 2) for f in fields}
            for name in names}


def print_medians(result: dict[str, dict[str, float]]) -> None:
    for name, m in result.items():
        print(f"{name:11} median {m['rps']:10.0f} req/s  p50 {m['p50']:.2f} ms  p90 {m['p90']:.2f} ms  "
              f"p99 {m['p99']:.2f} ms  nginx CPU {m['cpu_us']:.1f} us/request")


def rounds(targets: dict[str, tuple[str, Path | None, list[int]]], args: argparse.Namespace) -> list[Run]:
    """``args.rounds`` wrk runs of every target, the order rotating each round so that the drift of a shared
    machine hits every target; each run also measures the CPU time of the nginx masters' workers."""
    runs: list[Run] = []
    names = list(targets)
    for round_index in range(args.rounds):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            url, script, masters = targets[name]
            before = sum(nginx_cpu_seconds(m) for m in masters)
            run = parse_wrk(name, wrk(url, args, script, args.duration))
            run.cpu_us = (sum(nginx_cpu_seconds(m) for m in masters) - before) / run.cpu_us * 1e6
            runs.append(run)
            print(f"round {round_index + 1} {name:11} {run.rps:10.0f} req/s  p50 {run.p50:.2f} ms  "
                  f"p90 {run.p90:.2f} ms  p99 {run.p99:.2f} ms  nginx {run.cpu_us:.1f} us/req",
                  file=sys.stderr, flush=True)
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=int, default=10, help="seconds per run (default 10)")
    parser.add_argument("--rounds", type=int, default=3, help="vhost/ceiling pairs (default 3)")
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--workers", default="auto", help="nginx worker_processes for both (default auto)")
    parser.add_argument("--path", default=None, help="resource to request (default: the first agrément)")
    parser.add_argument("--bare-ceiling", action="store_true", help="no open_file_cache in the ceilings")
    parser.add_argument("--no-output-ceiling", action="store_true", help="skip the third target (output)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--check", action="store_true", help="exit 1 if ratio < 0.9 or vhost p99 >= 5 ms")
    args = parser.parse_args()
    path, file, expected = benchmark_file(args.path)

    work = Path(tempfile.mkdtemp(prefix="corpus-bench-"))
    work.chmod(0o755)
    processes: list[NginxProcess] = []
    try:
        secret = new_secret()
        write_private(work / "secret", secret + "\n")
        (work / "secret.lua").write_text(f'wrk.headers["X-Challenge-Secret"] = "{secret}"\n')
        vhost_port = free_port()
        settings = Settings(root=ROOT, prefix=work / "vhost", port=vhost_port, secret_file=work / "secret",
                            worker_processes=args.workers)
        render_and_write(settings, None)
        processes.append(NginxProcess(settings.resolved()))
        processes[-1].start()
        targets = {"vhost": (f"http://127.0.0.1:{vhost_port}{path}", work / "secret.lua", processes[-1].pid)}
        kinds = ["ceiling"] + ([] if args.no_output_ceiling else ["output"])
        for kind in kinds:
            port, folder = free_port(), work / kind
            folder.mkdir()
            processes.append(start_conf(folder, ceiling_conf(kind, folder, port, args), port))
            targets[kind] = (f"http://127.0.0.1:{port}/{file}", None, processes[-1].pid)
        for name, (url, script, _master) in targets.items():
            assert fetch(url, secret if script else None) == (200, expected), f"{name} does not serve the file"
            wrk(url, args, script, 2)  # warm-up, not counted

        names = list(targets)
        runs = rounds({name: (url, script, [master]) for name, (url, script, master) in targets.items()}, args)
    finally:
        for process in processes:
            process.stop()
        shutil.rmtree(work, ignore_errors=True)

    result = medians(runs, names)
    ratio = result["vhost"]["rps"] / result["ceiling"]["rps"]
    ratios = {f"vhost/{name}": round(result["vhost"]["rps"] / result[name]["rps"], 3) for name in names[1:]}
    ok = ratio >= 0.9 and result["vhost"]["p99"] < 5.0
    summary = {"path": path, "bare_ceiling": args.bare_ceiling,
               "duration_s": args.duration, "rounds": args.rounds, "connections": args.connections,
               "threads": args.threads, "median": result, "ratios": ratios, "goal_met": ok,
               "runs": [r.__dict__ for r in runs]}
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_medians(result)
        print(f"ratio vhost/ceiling {ratio:.3f} (goal >= 0.9), vhost p99 {result['vhost']['p99']:.2f} ms "
              f"(goal < 5 ms): {'met' if ok else 'MISSED'}")
        if "output" in result:
            print(f"ratio vhost/output {ratios['vhost/output']:.3f}: the cost of the checks alone")
    return 1 if args.check and not ok else 0


if __name__ == "__main__":
    raise SystemExit(main())
