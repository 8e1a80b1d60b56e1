"""Benchmark of ``corpus index``: a season's close laid out for N participants, in one process.

Writes, in a temporary folder, N registrations and the season service's records of their submissions (ten
tasks each, one task in five replaced once), every claim taken from the recorded blind reading of the track
with an honest proof of its own; then times :func:`generator.publish.season_index.publish_index` as a draft
(the checkout is not frozen): reading, merging, selecting, one ``score_submissions`` per participant, the
JSON documents and the HTML pages. It reports participants per second, the bytes laid out and the peak
memory above the interpreter's baseline (``ru_maxrss``).

    .venv/bin/python bench/bench_index.py                         # 500 participants, conformité
    .venv/bin/python bench/bench_index.py --participants 2000 --track generique
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.contract.manifest import Manifest  # noqa: E402
from generator.publish.season_index import IndexRequest, publish_index  # noqa: E402
from generator.score import make_submission  # noqa: E402
from generator.tracks.loader import track_named  # noqa: E402

BLIND = ROOT / "tests" / "fixtures" / "blind"


def registration(n: int) -> dict[str, object]:
    """The registration of the n-th synthetic participant (a community line, its own key and DID)."""
    name = f"Agent {n:05d}"
    did = "did:key:z6Mk" + hashlib.sha256(name.encode()).hexdigest()[:40]
    return {"agent": name, "did": did, "cle_empreinte": hashlib.sha256(did.encode()).hexdigest(),
            "stack": "pile déclarée", "tableau": "communaute",
            "inscrit_le": f"2026-10-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z",
            "verified_did_history": []}


def write_season(folder: Path, piste: str, count: int) -> tuple[Path, Path]:
    track = track_named(ROOT, piste)
    manifest = Manifest.load(ROOT, track.trees.manifest)
    reading = {f.stem: json.loads(f.read_bytes()) for f in sorted((BLIND / piste / "a").glob("*.json"))}
    submissions, participants = folder / "soumissions", []
    for n in range(count):
        participants.append(registration(n))
        did = str(participants[-1]["did"])
        (submissions / f"{n:05d}").mkdir(parents=True)
        for day, (task, answer) in enumerate(sorted(reading.items())):
            claims = [(a["resource"], a["field"], a["value"]) for a in answer["assertions"]]
            sub = make_submission(manifest, task, answer["verdict"], claims, piste=piste, agent_did=did)
            times = [f"2026-11-1{day}T10:00:00Z"] + ([f"2026-11-2{day}T10:00:00Z"] if (n + day) % 5 == 0 else [])
            for k, when in enumerate(times):
                record = {"recu_le": when, "soumission": sub}
                (submissions / f"{n:05d}" / f"{task}-{k}.json").write_text(json.dumps(record), "utf-8")
    registrations = folder / "inscriptions.json"
    registrations.write_text(json.dumps({"format": "corpus-inscriptions/1", "participants": participants}),
                             "utf-8")
    return submissions, registrations


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=500)
    parser.add_argument("--track", default="conformite")
    args = parser.parse_args()
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp:
        submissions, registrations = write_season(Path(tmp), args.track, args.participants)
        request = IndexRequest(root=ROOT, track=track_named(ROOT, args.track), submissions=submissions,
                               registrations=registrations, close=datetime(2026, 11, 30, 18, tzinfo=UTC),
                               draft=True, now=datetime.now(UTC))
        start = time.perf_counter()
        publish_index(request, Path(tmp) / "index")
        elapsed = time.perf_counter() - start
        written = [p for p in (Path(tmp) / "index").rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in written)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - baseline
    print(f"corpus index ({args.track}): {args.participants} participants, {len(written)} files, "
          f"{size / 1e6:.1f} MB laid out in {elapsed:.2f} s: {args.participants / elapsed:.0f} participants/s; "
          f"peak memory +{peak / 1024:.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
