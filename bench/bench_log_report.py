"""Benchmark of ``corpus log-report`` on a generated access log.

Writes N lines (default 1,000,000) shaped like a frontal's and its replicas' logs over a day: mostly
200s from the proxy, some 403s (the proxy without its secret, browsers, scanners), 404s with varied
URIs, absent identifiers, failovers and 503s, a few malformed lines. Then measures, each in a fresh
interpreter so that peaks do not mix:

- ``ceiling``: reading the same file line by line and ``orjson.loads`` of each line, nothing else;
- ``report``:  the whole ``corpus log-report --json`` (parse, check, count, write the report).

It prints lines per second, the ratio to the ceiling, and the peak memory of each above the
interpreter's baseline (``ru_maxrss`` after imports), at N and N/4 lines, to show that memory does not
grow with the log.

    .venv/bin/python bench/bench_log_report.py                 # 1,000,000 and 250,000 lines
    .venv/bin/python bench/bench_log_report.py --lines 200000
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.contract.manifest import Manifest  # noqa: E402

AGENTS = ["python-httpx/0.27.0"] * 20 + ["Mozilla/5.0 (X11; Linux x86_64)", "curl/8.5.0", "zgrab/0.x"]
REPLICAS = ["127.0.0.2:8081", "127.0.0.3:8081", "127.0.0.4:8081"]

MEASURE = r"""
import json, resource, sys, time
from pathlib import Path
import orjson
from generator.cli.main import main
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
step, path, out = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
if step == "ceiling":
    start = time.perf_counter()
    n = 0
    with path.open("rb") as handle:
        for line in handle:
            try:
                orjson.loads(line)
            except orjson.JSONDecodeError:
                pass
            n += 1
else:
    start = time.perf_counter()
    assert main(["log-report", str(path), "--json", out]) == 0
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"seconds": seconds, "peak_kib": peak - base}))
"""


def generate(path: Path, lines: int, seed: int = 7) -> None:
    """A day of frontal and replica lines, deterministic for a seed."""
    rng = random.Random(seed)
    resources = [e.path for e in Manifest.load(ROOT, "manifest/conformite").of_kind("resource")]
    start = datetime(2026, 11, 30, tzinfo=UTC)
    step = timedelta(days=1) / lines
    with path.open("w", encoding="utf-8") as out:
        for i in range(lines):
            moment = (start + i * step).strftime("%Y-%m-%dT%H:%M:%S+00:00")
            roll = rng.random()
            agent = rng.choice(AGENTS)
            uri, status, addr, ustatus, role = rng.choice(resources), 200, REPLICAS[i % 3], "200", "frontal"
            if roll < 0.03:
                status, ustatus, addr = 403, "", ""
            elif roll < 0.05:
                uri, status = f"/agrements/AGR-{rng.randrange(10000, 999999)}/", 404
            elif roll < 0.07:
                uri = f"/agrements/AGR-{rng.randrange(900000, 999999)}"
            elif roll < 0.075:
                addr, ustatus = f"{REPLICAS[i % 3]}, {REPLICAS[(i + 1) % 3]}", "502, 200"
            elif roll < 0.076:
                status, addr, ustatus = 503, ", ".join(REPLICAS), "502, 502, 502"
            elif roll < 0.5:
                role, addr, ustatus = "replica", "", ""
            if roll > 0.9999:
                out.write('{"time":"' + moment + '","uri":\n')
                continue
            out.write(json.dumps({
                "time": moment, "request_id": f"{1000 + i % 4}-{i}-1", "method": "GET", "uri": uri,
                "status": status, "bytes": 512, "secret_ok": status != 403, "user_agent": agent,
                "request_time": 0.001, "role": role, "upstream_addr": addr, "upstream_status": ustatus,
            }, separators=(",", ":")) + "\n")


def measure(step: str, log: Path, out: Path) -> dict[str, float]:
    result = subprocess.run([sys.executable, "-c", MEASURE, step, str(log), str(out)], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-log-report-") as tmp:
        for lines in (args.lines, args.lines // 4):
            log = Path(tmp) / "access.log"
            generate(log, lines)
            size = log.stat().st_size
            ceiling = measure("ceiling", log, str(Path(tmp) / "ceiling.json"))
            report = measure("report", log, str(Path(tmp) / "report.json"))
            print(f"{lines:>9} lines ({size / 1e6:.0f} MB): ceiling {lines / ceiling['seconds']:>9,.0f} lines/s, "
                  f"peak +{ceiling['peak_kib'] / 1024:.0f} MiB; report {lines / report['seconds']:>9,.0f} lines/s "
                  f"({report['seconds']:.1f} s), peak +{report['peak_kib'] / 1024:.0f} MiB; "
                  f"report/ceiling {ceiling['seconds'] / report['seconds']:.2f}")
            log.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
