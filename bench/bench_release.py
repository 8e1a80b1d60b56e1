#!/usr/bin/env python3
"""What a release artifact costs and what an install under load loses: the figures of docs/operating.md.

Not a test: run it by hand (``.venv/bin/python bench/bench_release.py``). Three parts, all on this machine:

- **pack**: ``corpus release pack`` of the checkout (every track), ``--rounds`` times in a fresh folder:
  median and spread of the wall time, the artifact's size and file count, and whether every round gave
  the same bytes;
- **install under load**: two builds of the tests' fixture corpus (one entity's address differs), a real
  TLS frontal over two replicas on loopback serving the first, a bounded proxy-like load (``--threads``
  clients, one TLS connection per request, as the Trust Layer proxy makes them), then ``corpus release
  install`` of the second build's artifact and ``corpus release --rollback``, each with every prefix:
  requests answered during the run, failures (not 200, or a body of neither release), and how long each
  command took;
- **bombs**: the second artifact with one build member replaced by a header declaring 2 GiB (a plain file,
  GNU sparse, PAX sparse 0.1 and 1.0; tests/tar_bombs.py builds them), each installed by ``corpus release
  install`` in a child process: its exit code, wall time, peak resident memory (``VmHWM`` of the
  child), and what it wrote inside the releases folder; beside them the same child refusing a missing
  artifact, the memory that Python and the package take before any artifact is read.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from tar_bombs import bombs, run_install  # noqa: E402

from generator.base.secret_values import new_secret, write_private  # noqa: E402
from generator.cli.main import main  # noqa: E402
from generator.compiler.pipeline import build  # noqa: E402
from generator.contract.manifest import Manifest  # noqa: E402
from generator.observe.proxy_client import Load, tls_context  # noqa: E402
from generator.serving.instances.topology import Topology, free_port, replica_hosts  # noqa: E402
from generator.serving.releases.artifact import pack  # noqa: E402
from generator.serving.tls.tls_local import make_local_tls  # noqa: E402
from generator.tracks.loader import TRACKS_DIR, track_named  # noqa: E402

FIXTURE = ROOT / "tests" / "fixtures" / "valid" / "corpus_src"
FRONTAL = ["127.0.1.1"]


def bench_pack(rounds: int, work: Path) -> None:
    times, digests = [], set()
    packed = None
    for index in range(rounds):
        start = time.perf_counter()
        packed = pack(ROOT, work / f"pack-{index}")
        times.append(time.perf_counter() - start)
        digests.add(packed.sha256)
    assert packed is not None
    print(f"pack: {rounds} rounds, median {statistics.median(times) * 1000:.0f} ms (min {min(times) * 1000:.0f}, "
          f"max {max(times) * 1000:.0f}); {packed.size} bytes ({packed.size / 1024:.0f} KiB), "
          f"{packed.files} files; "
          f"{'the same bytes every round' if len(digests) == 1 else f'{len(digests)} DIFFERENT digests'}")


def _checkout(folder: Path, address: str) -> Path:
    folder.mkdir(parents=True)
    shutil.copytree(FIXTURE, folder / "corpus_src/conformite")
    shutil.copytree(ROOT / TRACKS_DIR / "conformite", folder / TRACKS_DIR / "conformite")  # the track built here
    entity = folder / "corpus_src/conformite/entites/ENT-0001.yaml"
    entity.write_text(entity.read_text("utf-8").replace("1 rue de l'Essai", address), "utf-8")
    build(folder / "corpus_src/conformite", folder, "https://corpus.test", track_named(ROOT, "conformite"))
    shutil.rmtree(folder / "corpus_src/conformite")
    folder.chmod(0o755)
    return folder


def _bodies(root: Path) -> dict[str, bytes]:
    manifest = Manifest.load(root, "manifest/conformite")
    return {e.path: (root / "build/conformite" / e.file).read_bytes() for e in manifest.entries}


def bench_bombs(work: Path) -> None:
    a = _checkout(work / "bomb-source", "5 rue de l'Essai")
    releases = work / "bomb-releases"
    baseline = run_install(work / f"{'0' * 64}.tar", releases, ROOT)
    print(f"bombs: a child refusing a missing artifact: {baseline.seconds:.2f} s, peak RSS "
          f"{baseline.max_rss_mib:.0f} MiB (Python and the package)")
    for index, (case, make) in enumerate(bombs().items()):
        packed = pack(a, work / f"bomb-{index}")
        name = next(e.file for e in Manifest.load(a, "manifest/conformite").entries
            if e.file.startswith("entites/"))
        make(packed.path, f"build/conformite/{name}")
        run = run_install(packed.path, releases, ROOT)
        print(f"bombs: {case} ({packed.path.stat().st_size} bytes): exit {run.code} in {run.seconds:.2f} s, "
              f"peak RSS {run.max_rss_mib:.0f} MiB, {len(run.written)} writes in the releases folder; "
              f"{run.err.strip()[-110:]}")


def bench_install(threads: int, work: Path) -> None:
    a, b = _checkout(work / "a", "1 rue de l'Essai"), _checkout(work / "b", "3 rue de l'Essai")
    old, new = _bodies(a), _bodies(b)
    changed = sorted(p for p in old if old[p] != new.get(p))
    releases = work / "releases"
    first, second = pack(a, work / "artifacts"), pack(b, work / "artifacts")
    assert main(["release", "install", str(first.path), "--releases", str(releases)]) == 0
    secret_file = work / "secrets"
    write_private(secret_file, new_secret() + "\n")
    hosts = replica_hosts(2)
    port = free_port(hosts)
    topology = Topology(root=releases / "current", base=work / "nginx", secret_file=secret_file,
                        tls=make_local_tls(work / "tls", [*FRONTAL, "corpus.test"]),  # the fixture's host
                        replica_addresses=[(h, port) for h in hosts],
                        frontal_addresses=[(FRONTAL[0], free_port(FRONTAL))])
    topology.start()
    try:
        every = [*topology.replicas, *topology.frontals]
        prefixes = [arg for p in every for arg in ("--prefix", str(p.settings.prefix))]
        paths = [*changed, *sorted(p for p in old if p.startswith(("/agrements/", "/entites/")))[:20]]
        secret = secret_file.read_text("utf-8").split()[0]
        with Load(topology.frontal_addresses, paths, secret, tls_context(topology.tls.ca), threads=threads,
                  seconds=60, limit=1_000_000) as running:
            running.wait_for(200)
            start = time.perf_counter()
            assert main(["release", "install", str(second.path), "--releases", str(releases), *prefixes]) == 0
            installed = time.perf_counter() - start
            running.wait_for(running.count() + 200)
            start = time.perf_counter()
            assert main(["release", "--rollback", "--releases", str(releases), *prefixes]) == 0
            rolled = time.perf_counter() - start
            running.wait_for(running.count() + 200)
        answers = running.answers
        failed = [a_ for path, a_ in answers if a_.status != 200 or a_.body not in (old[path], new.get(path))]
        seen = {hashlib.sha256(a_.body).hexdigest()[:12] for path, a_ in answers if path == changed[0]}
        print(f"install under load: {threads} clients, one TLS connection per request, frontal + 2 replicas; "
              f"{len(answers)} requests, {len(failed)} failed; install + switch + 3 reloads {installed:.2f} s, "
              f"rollback {rolled:.2f} s; bodies of {changed[0]} seen: {len(seen)} (old and new)")
    finally:
        topology.stop()


def main_() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="pack rounds (default 5)")
    parser.add_argument("--threads", type=int, default=4, help="load clients (default 4)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-release-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)
        bench_pack(args.rounds, work)
        bench_install(args.threads, work)
        bench_bombs(work)
    return 0


if __name__ == "__main__":
    raise SystemExit(main_())
