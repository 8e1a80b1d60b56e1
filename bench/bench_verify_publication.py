"""Benchmark of ``corpus publish --close`` and ``corpus verify-publication`` on a season of N participants.

In a temporary folder: a scratch checkout of the conformité track, frozen, pinned and anchored in
proof-spec 3.1 (the stand-in of Trust Layer's API of ``tests/season_rehearsal.py``, a local RFC 3161 authority);
N participants answering the ten tasks from the recorded blind reading, one task in five replaced once, every
claim proved in 3.1 (batches of ``--batch`` proofs, each batch root stamped once, as Trust Layer batches its
proofs), each record as the season service writes it and each public view as ``corpus proofs fetch`` keeps
it. Then, timed apart, each in a fresh interpreter: ``corpus index`` (the yardstick), ``corpus publish --close``
(every participant scored, every file laid out) and ``corpus verify-publication`` on that folder (every check,
the close computed again), the last one's time as a multiple of the index's (issue 43: at most twice). Speed
is shown here, never asserted by a test.

    .venv/bin/python bench/bench_verify_publication.py                   # 1,000 participants
    .venv/bin/python bench/bench_verify_publication.py --participants 100
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]

from bench_index import registration  # noqa: E402
from cli_run import run_corpus  # noqa: E402
from proof_issuer import Issued, Issuer, with_proxy_ids  # noqa: E402
from season_rehearsal import CHALLENGE_KEY, StandInProxy, kept  # noqa: E402
from trackfix import copy_tracks  # noqa: E402
from trust_layer_fixtures import Authority  # noqa: E402

from generator.contract.manifest import Manifest  # noqa: E402
from generator.score import make_submission  # noqa: E402
from generator.tracks.loader import track_named  # noqa: E402

PISTE = "conformite"
BLIND = ROOT / "tests" / "fixtures" / "blind"


def _run(*args: str) -> None:
    ran = run_corpus(*args)
    if ran.returncode != 0:
        raise SystemExit(f"corpus {args[0]}: exit {ran.returncode}\n{ran.stdout[-3000:]}{ran.stderr[-3000:]}")


def _timed(*args: str) -> tuple[float, float, str]:
    """``corpus ARGS`` in a fresh interpreter (no cache of an earlier command helps it): its wall time, the
    largest peak memory of it and its workers (MiB), its output; exits naming the command if it fails."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "generator.cli.main", *args], capture_output=True, text=True,
                          cwd=ROOT, check=False)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"corpus {args[0]}: exit {done.returncode}\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, done.stdout


def _checkout(root: Path) -> None:
    import shutil
    trees = track_named(ROOT, PISTE).trees
    for tree in (trees.build, trees.manifest, trees.season):
        shutil.copytree(ROOT / tree, root / tree)
    copy_tracks(root, tracks=(PISTE,))


def write_season(work: Path, root: Path, issuer: Issuer, count: int, batch: int) -> tuple[Path, Path, Path, int]:
    """N participants' records and the public views of their proofs; (records, registrations, proofs, #proofs)."""
    manifest = Manifest.load(root, track_named(root, PISTE).trees.manifest)
    reading = {f.stem: json.loads(f.read_bytes()) for f in sorted((BLIND / PISTE / "a").glob("*.json"))}
    records, proofs_dir = work / "soumissions", work / "preuves"
    proofs_dir.mkdir()
    participants: list[dict[str, Any]] = []
    pending: list[Issued] = []
    start = total = 0
    close_to = datetime.now(UTC)

    def flush() -> None:
        nonlocal total
        if pending:
            issuer.close_batch(pending, others=0, batch_id=f"batch_{total:08d}")
            for proof in pending:
                (proofs_dir / f"{proof.proof_id}.json").write_text(json.dumps(proof.public()), "utf-8")
            total += len(pending)
            pending.clear()

    for n in range(count):
        participants.append(registration(n))
        did = str(participants[-1]["did"])
        (records / f"{n:05d}").mkdir(parents=True)
        for day, (task, answer) in enumerate(sorted(reading.items())):
            claims = [(a["resource"], a["field"], a["value"]) for a in answer["assertions"]]
            sub = make_submission(manifest, task, answer["verdict"], claims, piste=PISTE, agent_did=did)
            for k in range(2 if (n + day) % 5 == 0 else 1):
                proved = with_proxy_ids(sub, start)
                start += len(proved["disclosures"])
                pending.extend(issuer.proofs_of(proved))
                when = close_to - timedelta(minutes=10 - k)
                record = {"recu_le": f"{when:%Y-%m-%dT%H:%M:%SZ}", "soumission": proved}
                (records / f"{n:05d}" / f"{task}-{k}.json").write_text(json.dumps(record), "utf-8")
                if len(pending) >= batch:
                    flush()
    flush()
    registrations = work / "inscriptions" / "inscriptions.json"  # a folder of its own: outputs stay apart
    registrations.parent.mkdir()
    document = {"format": "corpus-inscriptions/1", "participants": participants}
    registrations.write_text(json.dumps(document), "utf-8")
    return records, registrations, proofs_dir, total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=500, help="proofs per anchored batch (one token each)")
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it")
    args = parser.parse_args()
    with kept(args.keep) as work:
        root = work / "checkout"
        _checkout(root)
        authority = Authority(work / "tsa")
        issuer = Issuer(authority)
        key_file = work / "challenge.key"
        key_file.write_text(CHALLENGE_KEY + "\n", "ascii")
        places = track_named(root, PISTE).places
        salt = work / "salt.hex"
        _run("freeze", "--root", str(root), "--track", PISTE, "--salt-file", str(salt))
        with StandInProxy(issuer, lambda target: (root / places.record).read_bytes()) as proxy:
            _run("pin", "--root", str(root), "--track", PISTE, "--trust-layer-url", proxy.url, "--trust-layer-key",
                 issuer.key, "--challenge-key-file", str(key_file), "--tsa-ca", str(authority.ca), "--tsa-cert",
                 str(authority.cert))
            import requests
            base = json.loads((root / places.manifest_file).read_bytes())["base_url"]
            headers = {"X-Api-Key": CHALLENGE_KEY}
            answer = requests.post(f"{proxy.url}/v1/proxy", headers=headers, timeout=30, json={
                "target": base + places.served_record, "method": "GET", "payload": {}, "currency": "eur"}).json()
            view = requests.get(f"{proxy.url}/v1/proof/{answer['proof']['proof_id']}/full", headers=headers,
                                timeout=30)
            (work / "anchor-proof.json").write_bytes(view.content)
        _run("freeze-anchor", "--root", str(root), "--track", PISTE, str(work / "anchor-proof.json"))
        made = time.perf_counter()
        records, registrations, proofs, total = write_season(work, root, issuer, args.participants, args.batch)
        made = time.perf_counter() - made
        close = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
        _run("pin", "--root", str(root), "--track", PISTE, "--season-close", f"{close:%Y-%m-%dT%H:%M:%SZ}")
        while datetime.now(UTC) <= close:
            time.sleep(0.2)
        print(f"season of {args.participants} participants: {total} proofs in batches of {args.batch}, written in "
              f"{made:.1f} s")
        common = ["--root", str(root), "--track", PISTE, "--records", str(records), "--registrations",
                  str(registrations), "--proofs", str(proofs), "--salt-file", str(salt)]
        indexed, index_peak, _ = _timed("index", *common, "--out", str(work / "index"))
        published, publish_peak, _ = _timed("publish", "--close", *common, "--out", str(work / "publication"))
        folder = work / "publication" / PISTE
        files = sum(1 for p in folder.rglob("*") if p.is_file())
        size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
        verified, verify_peak, said = _timed("verify-publication", str(folder), "--trust-layer-key", issuer.key,
                                             "--tsa-ca", str(authority.ca))
    print(f"corpus index: {indexed:.1f} s, peak {index_peak:.0f} MiB (the same season, the same proofs)")
    print(f"corpus publish --close: {files} files, {size / 1e6:.1f} MB in {published:.1f} s, peak "
          f"{publish_peak:.0f} MiB")
    print(f"corpus verify-publication: {len(said.splitlines())} checks, every one holds, in {verified:.1f} s: "
          f"{args.participants / verified:.1f} participants/s, {verified / indexed:.2f} × the index's time; peak "
          f"{verify_peak:.0f} MiB")
    print(f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} CPUs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
