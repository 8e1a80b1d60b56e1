"""Harness ``bars/close-at-scale``: a season's close at scale, proof-spec 3.1 proofs in batches (issue 43).

Writes (``bench/close_season.py``) a season of ``--participants`` participants (1,000) and one of ``--large``
(10,000), each answering the ten conformité tasks from the recorded blind reading, every claim cited with a 3.1
proof of its own, issued in batches of ``--batch`` (250) under a local RFC 3161 authority, one task in five
submitted twice, a frozen checkout anchored in 3.1; then, each measured in a fresh interpreter:

- the proof work against its floor, in the same process, interleaved, medians of ``--repeat``: the proofs of
  the season judged as ``corpus index`` judges them (each file read, parsed strictly, every check, its
  verdict; :class:`generator.score.proof_source.FolderProofs`), and the floor: one Ed25519 verification per
  proof (``cryptography``, the pinned key loaded once) plus one RFC 3161 verification per batch
  (``rfc3161-client``, the authority loaded once), on the same proofs, their bytes decoded beforehand;
- ``corpus index`` of the 1,000 with ``--jobs 1`` and ``--jobs 2`` (wall time, medians of ``--repeat``), the
  two outputs compared byte for byte, and the tokens verified (each batch's once, whatever the processes);
- ``corpus index`` of the 10,000 (``--jobs 2``): wall time, seconds per 1,000 participants against the 1,000's
  (linear), and the peak memory of the command (its own peak, its workers' largest, their sum).

The machine's load average is printed before and after: the figures are those of a shared machine.

    .venv/bin/python bench/close_at_scale.py                           # the bar: 1,000 and 10,000
    .venv/bin/python bench/close_at_scale.py --large 0 --keep run/cas  # 1,000 only, the seasons kept
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from close_season import index_args, make_season  # noqa: E402

PROOF_WORK = r"""
import base64, gc, json, statistics, sys, time
from datetime import datetime
from pathlib import Path
sys.path.insert(0, ROOT)
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from rfc3161_client import VerifierBuilder, decode_timestamp_response
from generator.score.close_inputs import Pins, proof_judge
from generator.score.proof_source import FolderProofs
from generator.tracks.loader import track_named
from generator.trust_layer import tsa_token

season = json.loads(SEASON)
root, folder = Path(season["root"]), Path(season["proofs_folder"])
close = datetime.fromisoformat(season["close"].replace("Z", "+00:00"))
pins = Pins((season["trust_layer_key"],), None, Path(season["tsa_ca"]), Path(season["tsa_cert"]), None, close)
names = sorted(p.name for p in folder.iterdir())
signatures, tokens = [], {}
for name in names:
    view = json.loads((folder / name).read_bytes())
    body = view["arkforge_signature"].removeprefix("ed25519:")
    signatures.append((base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)),
                       view["hashes"]["chain"].removeprefix("sha256:").encode()))
    tokens[view["timestamp_authority"]["tsr_base64"]] = bytes.fromhex(view["batch_anchor"]["root"][7:])
key = season["trust_layer_key"].removeprefix("ed25519:")
raw_key = base64.urlsafe_b64decode(key + "=" * (-len(key) % 4))
ca, cert = Path(season["tsa_ca"]).read_bytes(), Path(season["tsa_cert"]).read_bytes()

def floor():
    public = Ed25519PublicKey.from_public_bytes(raw_key)
    for signature, chain in signatures:
        public.verify(signature, chain)
    verifier = VerifierBuilder(roots=x509.load_pem_x509_certificates(ca)).tsa_certificate(
        x509.load_pem_x509_certificate(cert)).build()
    for tsr, batch_root in tokens.items():
        verifier.verify_message(decode_timestamp_response(base64.b64decode(tsr)), batch_root)

def proof_work():
    # as the index judges them: a participant's proofs at a time (about 30), the verdicts let go after
    tsa_token.use_outcomes(tsa_token.Outcomes())  # every token verified again, once each
    proofs = FolderProofs(folder, proof_judge(folder, pins, root, track_named(root, "conformite").places))
    valid = 0
    for start in range(0, len(names), 30):
        verdicts = proofs.verdicts([name[:-5] for name in names[start:start + 30]])
        valid += sum(v.get("valide") is True for v in verdicts.values())
    assert valid == len(names)
    return tsa_token.OUTCOMES.verified

work, base, verified = [], [], 0
for _ in range(REPEAT):
    gc.collect()
    started = time.process_time(); verified = proof_work(); work.append(time.process_time() - started)
    gc.collect()
    started = time.process_time(); floor(); base.append(time.process_time() - started)
print(json.dumps({"proofs": len(names), "batches": len(tokens), "tokens_verified": verified,
                  "work": statistics.median(work), "floor": statistics.median(base)}))
"""

RUN_INDEX = r"""
import json, resource, sys, time
sys.path.insert(0, ROOT)
from generator.cli import index
from generator.cli.main import main
started = time.perf_counter()
written = []
publish = index.publish_index
index.publish_index = lambda req, out: written.append(publish(req, out)) or written[-1]
code = main(ARGS)
wall = time.perf_counter() - started
me, workers = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"code": code, "wall": wall, "tokens": written[0].tally.tokens if written else None,
                  "cpu": me.ru_utime + me.ru_stime + workers.ru_utime + workers.ru_stime,
                  "self_mib": me.ru_maxrss / 1024, "workers_mib": workers.ru_maxrss / 1024}))
"""


def fresh(code: str, **values: Any) -> dict[str, Any]:
    """Run ``code`` in a fresh interpreter with ``values`` substituted; its last line of output, as JSON."""
    for name, value in values.items():
        code = code.replace(name, repr(value))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=ROOT)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    found["stderr"] = done.stderr[-2000:]
    return found


def season_of(folder: Path, participants: int, batch: int) -> dict[str, Any]:
    """The season in ``folder`` (written now unless it is there already, of that size)."""
    description = folder / "season.json"
    if description.exists():
        season: dict[str, Any] = json.loads(description.read_text("utf-8"))
        if season["participants"] == participants and season["batch"] == batch:
            return season
        shutil.rmtree(folder)
    return make_season(folder, participants, batch)


def index(season: dict[str, Any], out: Path, jobs: int) -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    ran = fresh(RUN_INDEX, ROOT=str(ROOT), ARGS=[*index_args(season, out), "--jobs", str(jobs)])
    if ran["code"] != 0:
        raise SystemExit(f"corpus index exited {ran['code']}: {ran['stderr']}")
    return ran


def digest(folder: Path) -> str:
    total = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            total.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return total.hexdigest()


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} CPUs)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=1000)
    parser.add_argument("--large", type=int, default=10000, help="the second season (0: none)")
    parser.add_argument("--batch", type=int, default=250)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each timing, the median kept")
    parser.add_argument("--large-repeat", type=int, default=1, help="runs of the large season's index")
    parser.add_argument("--keep", type=Path, help="keep the seasons in this folder (reused when of that size)")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="close-at-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        print(f"python {sys.version.split()[0]}; {load()}")
        small = season_of(work / f"n{args.participants}", args.participants, args.batch)
        print(f"season of {small['participants']:,} participants: {small['proofs']:,} proofs in batches of up to "
              f"{small['batch']} (one task in five submitted twice), frozen and anchored in 3.1")
        proofs = fresh(PROOF_WORK, ROOT=str(ROOT), SEASON=json.dumps(small), REPEAT=args.repeat)
        per = 1e6 / proofs["proofs"]
        print(f"proof work: {proofs['work']:.2f} s of CPU for {proofs['proofs']:,} proofs "
              f"({proofs['work'] * per:.0f} µs each, {proofs['tokens_verified']} token(s) verified for "
              f"{proofs['batches']} batch(es)); floor (Ed25519 per proof + RFC 3161 per batch): "
              f"{proofs['floor']:.2f} s ({proofs['floor'] * per:.0f} µs each): "
              f"{proofs['work'] / proofs['floor']:.2f} × the floor")
        walls: dict[int, list[float]] = {1: [], 2: []}
        cpus: dict[int, list[float]] = {1: [], 2: []}
        outs = {jobs: work / f"out-{jobs}" for jobs in walls}
        tokens: dict[int, Any] = {}
        for _ in range(args.repeat):  # interleaved: a burst of load elsewhere hits both alike
            for jobs in walls:
                ran = index(small, outs[jobs], jobs)
                walls[jobs].append(ran["wall"])
                cpus[jobs].append(ran["cpu"])
                tokens[jobs] = ran["tokens"]
        same = digest(outs[1] / "conformite") == digest(outs[2] / "conformite")
        files = sum(1 for p in (outs[2] / "conformite").rglob("*") if p.is_file())
        median = {jobs: statistics.median(w) for jobs, w in walls.items()}
        cpu = {jobs: statistics.median(c) for jobs, c in cpus.items()}
        print(f"corpus index, {small['participants']:,} participants: --jobs 1 {median[1]:.1f} s ({cpu[1]:.1f} s "
              f"of CPU), --jobs 2 {median[2]:.1f} s ({cpu[2]:.1f} s of CPU in all its processes) (medians of "
              f"{args.repeat}; {files:,} files); tokens verified with 2 processes: {tokens[2]} for "
              f"{proofs['batches']} batches")
        print(f"output bytes with 1 and 2 processes: {'identical' if same else 'DIFFERENT'}")
        if args.large:
            large = season_of(work / f"n{args.large}", args.large, args.batch)
            print(f"season of {large['participants']:,} participants: {large['proofs']:,} proofs ({load()})")
            runs = [index(large, work / "out-large", 2) for _ in range(args.large_repeat)]
            wall = statistics.median(r["wall"] for r in runs)
            peak = max(runs, key=lambda r: r["self_mib"] + r["workers_mib"])
            size = sum(p.stat().st_size for p in (work / "out-large" / "conformite").rglob("*") if p.is_file())
            used = statistics.median(r["cpu"] for r in runs)
            big, little = large["participants"] / 1000, small["participants"] / 1000
            print(f"corpus index, {large['participants']:,} participants, --jobs 2: {wall:.1f} s, {used:.1f} s of "
                  f"CPU (median of {len(runs)}); per 1,000 participants {wall / big:.2f} s ({used / big:.2f} s of "
                  f"CPU) against {median[2] / little:.2f} s ({cpu[2] / little:.2f} s) at "
                  f"{small['participants']:,}; {size / 1e6:.0f} MB written")
            print(f"peak memory at {large['participants']:,}: the command {peak['self_mib']:.0f} MiB, its largest "
                  f"worker {peak['workers_mib']:.0f} MiB, together {peak['self_mib'] + peak['workers_mib']:.0f} "
                  "MiB at most")
        print(load())
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
