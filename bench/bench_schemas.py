"""Benchmark of the schema step alone: ``check_schema`` (``generator.documents.schema_checks``) on every record
of a synthetic corpus.

The whole ``corpus check`` is mostly YAML loading, and on a shared 2-core machine its time moves by more than
the schema step weighs; this isolates that step (CPU time, best of ``--repeat``), on the valid records of
``bench_build.generate`` and on one-change mutations of a sample of them (the invalid path, where each error
is worded). Run it against another tree with ``PYTHONPATH=that/tree python that/tree/bench/bench_schemas.py``.

    .venv/bin/python bench/bench_schemas.py                 # 10,000 entities, 3,000 mutated records
"""

from __future__ import annotations

import argparse
import copy
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_build import ROOT, generate  # this folder is on sys.path when the script runs

POOL: list[Any] = ["x", "", "2026-02-30", "/agrements/AGR-0001", "actif", "1", True, None, [], ["a"], {}, 12, 1.5]


def mutate(value: Any, rng: random.Random) -> Any:
    """A copy of ``value`` with one value replaced, one removed or one added, somewhere inside."""
    value = copy.deepcopy(value)
    containers: list[Any] = []
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict | list):
            containers.append(node)
            stack.extend(node.values() if isinstance(node, dict) else node)
    node = rng.choice(containers)
    if isinstance(node, dict) and node and rng.random() < 0.8:
        key = rng.choice(list(node))
        if rng.random() < 0.75:
            node[key] = copy.deepcopy(rng.choice(POOL))
        else:
            del node[key]
    elif isinstance(node, dict):
        node[rng.choice(["extra", "id", "statut"])] = copy.deepcopy(rng.choice(POOL))
    elif node:
        node[rng.randrange(len(node))] = copy.deepcopy(rng.choice(POOL))
    else:
        node.append(copy.deepcopy(rng.choice(POOL)))
    return value


def main() -> None:
    from generator.compiler.sources import load_sources
    from generator.documents.schema_checks import check_schema
    from generator.tracks.loader import track_named

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entities", type=int, default=10_000)
    ap.add_argument("--mutated", type=int, default=3_000, help="mutated records checked (default 3000)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="schema-bench-") as work:
        src = Path(work) / "corpus_src" / "conformite"
        generate(src, args.entities)
        sources = load_sources(src, track_named(ROOT, "conformite"))
    records = [r for r in (sources.corpus, sources.referentiel, sources.systeme, sources.absents) if r is not None]
    records += [r for kind in sources.records.values() for r in kind]
    rng = random.Random(7)
    mutated = []
    for record in rng.sample(records, min(args.mutated, len(records))):
        bad = copy.copy(record)
        bad.data = mutate(record.data, rng)
        mutated.append(bad)
    print(f"python {sys.version.split()[0]}, {args.entities:,} entities, best of {args.repeat} (CPU time)")
    for label, batch in (("valid records", records), ("mutated records", mutated)):
        best, problems = float("inf"), 0
        for _ in range(args.repeat):
            started = time.process_time()
            problems = sum(len(check_schema(r)) for r in batch)
            best = min(best, time.process_time() - started)
        print(f"  {label:<16}{len(batch):>8,} records {problems:>7,} problems {best:>8.3f} s "
              f"{len(batch) / best:>11,.0f} records/s")


if __name__ == "__main__":
    main()
