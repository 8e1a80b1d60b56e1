"""Benchmark of ``corpus score``: synthetic submissions scored in one process.

Builds N synthetic submissions for the season found in ``--root`` (default: the repository; run
``make build`` first), as serialised JSON bytes, then scores them the way a replay does: load the
published inputs once, then for each participant parse its ten submissions and score them together with
:func:`generator.score.track.score_with`. The mix is deterministic (seeded) and exercises every path:
honest submissions filled up to the plafond with true probant facts, a wrong value, a proof of another
resource, a 403 body (instrument defect), duplicates and above-plafond (rejected at entry), an
out-of-graph resource (rejected at the close), and too few assertions (not rendered).

It reports submissions per second (the aim is 1,000/s or more in one process), the time to load the
inputs, and the peak memory above the interpreter's baseline (``ru_maxrss``).

    .venv/bin/python bench/bench_score.py                    # 10,000 submissions
    .venv/bin/python bench/bench_score.py --submissions 2000 --profile

While the season is being edited, score a committed snapshot instead of the working tree:

    mkdir /tmp/snap && git archive HEAD build manifest season | tar -x -C /tmp/snap
    .venv/bin/python bench/bench_score.py --root /tmp/snap
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.reading.graph import probant_facts  # noqa: E402
from generator.score import make_disclosure  # noqa: E402
from generator.score.inputs import ScoringInputs, load_inputs  # noqa: E402
from generator.score.track import score_with  # noqa: E402
from generator.tracks.loader import track_named  # noqa: E402

KINDS = ("honest", "honest", "honest", "wrong-value", "other-proof", "defect-403", "duplicate",
         "above-plafond", "out-of-graph", "too-few")


def _claims(inputs: ScoringInputs, task_id: str, rng: random.Random) -> list[tuple[str, str, Any]]:
    """The key's facts, then true probant facts of the task's graph, up to the plafond."""
    statement = inputs.statements[task_id]
    claims = [(f.ressource, f.champ, f.valeur) for f in inputs.key[task_id].faits]
    proper, common = probant_facts(inputs.reader, statement.task, inputs.graph(task_id))
    pool = sorted((f.ressource, f.champ, f.valeur) for f in proper | common if not isinstance(f.valeur, str)
                  or not f.valeur.startswith("["))  # arrays are stood in for by text there: skip them
    rng.shuffle(pool)
    for claim in pool:
        if len(claims) >= statement.plafond:
            break
        if claim not in claims:
            claims.append(claim)
    return claims[: statement.plafond]


def _submission(inputs: ScoringInputs, task_id: str, kind: str, rng: random.Random,
                outside: str) -> dict[str, Any]:
    claims = _claims(inputs, task_id, rng)
    statement = inputs.statements[task_id]
    if kind == "too-few":
        claims = claims[: max(statement.minimum - 1, 0)]
    elif kind == "duplicate":
        claims = [*claims[:-1], claims[0]]
    elif kind == "above-plafond":
        claims = [*claims, (statement.task.entite, "/existe", True), (statement.task.entite, "/existe", "vrai")]
    elif kind == "out-of-graph":
        claims = [*claims[:-1], (outside, "/existe", True)]
    elif kind == "wrong-value":
        resource, field, _ = claims[-1]
        claims = [*claims[:-1], (resource, field, "valeur-inventee")]
    assertions, disclosures = [], {}
    for number, (resource, field, value) in enumerate(claims, 1):
        proof_id, disclosure = make_disclosure(inputs.manifest, resource)
        if kind == "other-proof" and number == len(claims):
            proof_id, disclosure = make_disclosure(inputs.manifest, outside)
        if kind == "defect-403" and number == len(claims):
            proof_id, disclosure = make_disclosure(inputs.manifest, resource, response_of="/_systeme/403")
        disclosures[proof_id] = disclosure
        assertions.append({"id": f"a{number}", "claim": {"resource": resource, "field": field, "value": value},
                           "proof_ids": [proof_id]})
    return {"season": inputs.saison, "track": "conformite", "task_id": task_id, "agent_did": "did:key:z6MkBench",
            "verdict": rng.choice(["conforme", "non_conforme", "indeterminable", inputs.key[task_id].verdict]),
            "assertions": assertions, "disclosures": disclosures}


def generate(inputs: ScoringInputs, count: int, seed: int) -> tuple[list[list[bytes]], Counter[str]]:
    """``count`` submissions as JSON bytes, grouped by participant (one per task), and the kind mix."""
    rng = random.Random(seed)
    task_ids = sorted(inputs.statements)
    outside = [e.path for e in inputs.manifest.of_kind("resource") if e.path.startswith("/entites/")][-1]
    kinds: Counter[str] = Counter()
    participants: list[list[bytes]] = []
    while sum(len(p) for p in participants) < count:
        batch = []
        for task_id in task_ids[: count - sum(len(p) for p in participants)]:
            kind = rng.choice(KINDS)
            kinds[kind] += 1
            batch.append(json.dumps(_submission(inputs, task_id, kind, rng, outside)).encode("utf-8"))
        participants.append(batch)
    return participants, kinds


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args(argv)

    baseline = _rss_mib()
    started = time.perf_counter()
    inputs = load_inputs(args.root, track_named(args.root, "conformite"))
    for task_id in inputs.statements:
        inputs.graph(task_id)
    load_s = time.perf_counter() - started
    participants, kinds = generate(inputs, args.submissions, args.seed)
    generated = _rss_mib()
    gel = {"statut": "non_gele", "detail": "benchmark"}

    def run() -> Counter[str]:
        outcomes: Counter[str] = Counter()
        for batch in participants:
            report = score_with(inputs, [json.loads(data) for data in batch], None, gel)
            outcomes.update(t["statut"] for t in report["taches"])
        return outcomes

    if args.profile:
        import cProfile
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
    started = time.perf_counter()
    outcomes = run()
    elapsed = time.perf_counter() - started
    if args.profile:
        profiler.disable()
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
    total = sum(len(b) for b in participants)
    print(f"season in {args.root}: {len(inputs.statements)} tasks; inputs loaded (and graphs built) in "
          f"{1000 * load_s:.0f} ms")
    print(f"submissions: {total} from {len(participants)} participants; mix: "
          + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print("task outcomes: " + ", ".join(f"{k} {n}" for k, n in sorted(outcomes.items())))
    print(f"scored {total} submissions in {elapsed:.2f} s: {total / elapsed:,.0f} submissions/s "
          "(parse + entry + close + §4.1 + task and track; one process)")
    print(f"peak memory: {_rss_mib() - baseline:.1f} MiB above the interpreter baseline "
          f"({generated - baseline:.1f} MiB of which hold the generated submissions)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
