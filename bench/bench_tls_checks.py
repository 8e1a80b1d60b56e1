#!/usr/bin/env python3
"""What the TLS checks cost a start: the figures of docs/operating.md ("What each TLS file must do").

Not a test: run it by hand (``.venv/bin/python bench/bench_tls_checks.py``). On this machine:

- **checks**: every TLS file of a frontal over N replicas checked as ``serve --replicas`` does before it
  renders anything (their form, then what each must do: ``Topology.check_tls``), ``--rounds`` times;
- **reuse**: ``serve``'s own certificates kept in a prefix, judged and checked again at a restart;
- **start**: ``corpus serve --replicas 1 --no-build`` from launch until its state file is written (every
  check, render and nginx start included), ``--starts`` times, then stopped.
"""

from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.base.secret_values import new_secret, write_private  # noqa: E402
from generator.serving.instances.serve import served_name  # noqa: E402
from generator.serving.instances.topology import Topology, free_port, replica_hosts  # noqa: E402
from generator.serving.tls.tls_local import make_local_tls, make_peer_tls  # noqa: E402


def _times(rounds: int, work: Callable[[], object]) -> list[float]:
    found = []
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        found.append(time.perf_counter() - start)
    return found


def _say(what: str, seconds: list[float]) -> None:
    print(f"{what}: median {1000 * statistics.median(seconds):.1f} ms, min {1000 * min(seconds):.1f}, "
          f"max {1000 * max(seconds):.1f} ({len(seconds)} rounds)")


def _start(folder: Path) -> float:
    state = folder / "state.json"
    hosts = replica_hosts(1)
    begun = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "generator.cli", "serve", "--root", str(ROOT), "--no-build", "--replicas", "1",
         "--prefix", str(folder / "prefix"), "--port", str(free_port(["127.0.0.1"])), "--replica-port",
         str(free_port(hosts)), "--workers", "1", "--state-file", str(state)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while not state.exists():
            if process.poll() is not None:
                raise SystemExit(f"corpus serve ended: {process.stderr.read() if process.stderr else ''}")
            time.sleep(0.005)
        return time.perf_counter() - begun
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--starts", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-tls-") as name:
        folder = Path(name)
        write_private(folder / "secret", new_secret() + "\n")
        hosts = replica_hosts(args.replicas)
        names = ["127.0.0.1", served_name(ROOT, folder, "")]
        tls, peer = make_local_tls(folder / "tls", names), make_peer_tls(folder / "tls" / "peer", hosts)
        topology = Topology(root=ROOT, base=folder / "nginx", secret_file=folder / "secret", tls=tls, peer=peer,
                            replica_addresses=[(h, 8081) for h in hosts], frontal_addresses=[("127.0.0.1", 8443)])
        _say(f"checks of a frontal and {args.replicas} replica(s)", _times(args.rounds, topology.check_tls))
        _say("reuse of serve's own certificates", _times(args.rounds, lambda: (
            make_local_tls(folder / "tls", names, reuse=True),
            make_peer_tls(folder / "tls" / "peer", hosts, reuse=True))))
        _say("corpus serve --replicas 1 --no-build, launch to state file",
             [_start(folder / f"start-{i}") for i in range(args.starts)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
