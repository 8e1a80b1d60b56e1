"""A season's close at scale, written for ``corpus index``: N participants of conformité, each answering the ten
tasks from the recorded blind reading, every claim cited with a proof-spec 3.1 proof of its own, issued as
Trust Layer serves them (``tests/proof_issuer.py``) in batches of up to ``batch`` proofs, each batch root stamped
by a local RFC 3161 authority (openssl's server); a frozen checkout anchored by a 3.1 proof
(``corpus freeze-anchor``). One task in five is submitted twice (the first replaced), and one participant in
seven gets a verdict wrong; every proof cited is in the ``--proofs`` folder.

The season is laid out in ``folder`` and described by ``folder/season.json`` (the arguments of ``corpus index``).
Writing it is spread over ``jobs`` processes, each with its own copy of the authority (openssl's serial file is
not shared). ``python bench/close_season.py OUT --participants 1000`` writes one.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import multiprocessing
import shutil
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402
from index_community import frozen_checkout, record_pair  # noqa: E402
from proof_issuer import Issued, Issuer, with_proxy_ids  # noqa: E402
from trust_layer_fixtures import CHALLENGE_KEY, FINGERPRINT, Authority  # noqa: E402

from generator.cli.main import main as corpus  # noqa: E402
from generator.contract.manifest import Manifest  # noqa: E402
from generator.score import make_submission  # noqa: E402
from generator.tracks.loader import track_named  # noqa: E402

PISTE = "conformite"
BLIND = ROOT / "tests" / "fixtures" / "blind" / PISTE / "a"
SEED = b"close-at-scale"


class _AuthorityCopy(Authority):
    """The same authority (CA, certificate, key) in a folder of its own: one openssl serial file per process."""

    def __init__(self, source: Authority, folder: Path, first_serial: int) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder, self.ca, self.cert, self.key = folder, source.ca, source.cert, source.key
        (folder / "serial").write_text(f"{first_serial:08x}\n", "ascii")
        config = (source.folder / "tsa.cnf").read_text("ascii").replace(str(source.folder / "serial"),
                                                                         str(folder / "serial"))
        (folder / "tsa.cnf").write_text(config, "ascii")


def did_of(n: int) -> str:
    return "did:key:z6Mk" + hashlib.sha256(f"participant-{n}".encode()).hexdigest()[:40]


def _private() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(SEED).digest())


def _reading() -> dict[str, dict[str, Any]]:
    return {f.stem: json.loads(f.read_bytes()) for f in sorted(BLIND.glob("*.json"))}


def _participants(manifest: Manifest, first: int, last: int) -> list[tuple[int, list[dict[str, Any]]]]:
    reading = _reading()
    verdicts = sorted({answer["verdict"] for answer in reading.values()})
    out = []
    for n in range(first, last):
        subs = []
        for day, (task, answer) in enumerate(sorted(reading.items())):
            claims = [(a["resource"], a["field"], a["value"]) for a in answer["assertions"]]
            verdict = answer["verdict"]
            if n % 7 == 3 and day == 0:
                verdict = next(v for v in verdicts if v != verdict)
            sub = make_submission(manifest, task, verdict, claims, piste=PISTE, agent_did=did_of(n))
            subs.append(with_proxy_ids(sub, (n * 10 + day) * 16))
        out.append((n, subs))
    return out


def _write_slice(args: tuple[Path, Authority, int, int, int, int]) -> int:
    """Submissions and proofs of participants ``first``..``last``: their proofs in batches, each stamped."""
    folder, authority, first, last, batch, worker = args
    issuer = Issuer(_AuthorityCopy(authority, folder / "tsa-copies" / str(worker), 1 + worker * 10**7),
                    _private())
    manifest = Manifest.load(ROOT, track_named(ROOT, PISTE).trees.manifest)
    proofs, submissions = folder / "proofs", folder / "soumissions"
    pending: list[Issued] = []

    def close(batch_proofs: list[Issued]) -> None:
        issuer.close_batch(batch_proofs, batch_id=f"batch_{batch_proofs[0].proof_id}")
        for proof in batch_proofs:
            (proofs / f"{proof.proof_id}.json").write_bytes(json.dumps(proof.public()).encode())

    for n, subs in _participants(manifest, first, last):
        (submissions / f"{n:05d}").mkdir(parents=True, exist_ok=True)
        for day, sub in enumerate(subs):
            times = [f"2026-11-1{day}T10:00:00Z"] + ([f"2026-11-2{day}T10:00:00Z"] if (n + day) % 5 == 0 else [])
            for k, when in enumerate(times):
                record = {"recu_le": when, "soumission": sub}
                (submissions / f"{n:05d}" / f"{sub['task_id']}-{k}.json").write_text(json.dumps(record), "utf-8")
            pending += issuer.proofs_of(sub)
            while len(pending) >= batch:
                close(pending[:batch])
                pending = pending[batch:]
    if pending:
        close(pending)
    return last - first


def _anchor(root: Path, folder: Path, authority: Authority) -> None:
    """The track's freeze record anchored by a 3.1 proof of GET <base URL>/gel made with the challenge's key."""
    issuer = Issuer(authority, _private())
    pair = record_pair(root, PISTE)
    proof = issuer.proof(pair["request_hash"]["value"], pair["response_hash"]["value"],
                         agent_did="did:web:proveit.arkforge.tech", api_key=CHALLENGE_KEY)
    issuer.close_batch([proof], others=2)
    view = folder / "anchor-proof.json"
    view.write_text(json.dumps(proof.full()), "utf-8")
    with contextlib.redirect_stderr(io.StringIO()) as said:
        code = corpus(["freeze-anchor", "--root", str(root), str(view), "--trust-layer-key", issuer.key,
                       "--challenge-key-fingerprint", FINGERPRINT, "--tsa-ca", str(authority.ca), "--tsa-cert",
                       str(authority.cert)])
    if code != 0:
        raise SystemExit(f"corpus freeze-anchor failed: {said.getvalue()}")


def make_season(folder: Path, participants: int, batch: int = 250, jobs: int = 2) -> dict[str, Any]:
    """Write the season under ``folder`` (made, must not exist) and return its description (season.json)."""
    folder.mkdir(parents=True)
    started = time.perf_counter()
    root = folder / "root"
    root.mkdir()
    salt = frozen_checkout(root, (PISTE,))[PISTE][0]
    authority = Authority(folder / "tsa")
    _anchor(root, folder, authority)
    (folder / "proofs").mkdir()
    slices = [(folder, authority, participants * w // jobs, participants * (w + 1) // jobs, batch, w)
              for w in range(jobs)]
    if jobs > 1:
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            pool.map(_write_slice, slices)
    else:
        _write_slice(slices[0])
    shutil.rmtree(folder / "tsa-copies")
    registrations = [{"agent": f"Agent {n:05d}", "did": did_of(n),
                      "cle_empreinte": hashlib.sha256(did_of(n).encode()).hexdigest(),
                      "stack": "pile déclarée", "tableau": "reference" if n == 0 else "communaute",
                      "inscrit_le": f"2026-10-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z",
                      "verified_did_history": []} for n in range(participants)]
    registrations[0]["reference"] = {"modele": "Sirocco", "version": "2.4", "framework": "Boussole 1.3",
                                     "prompt": {"texte": "Une assertion par fait fondateur, chacune prouvée."}}
    (folder / "inscriptions.json").write_text(json.dumps({"format": "corpus-inscriptions/1",
                                                          "participants": registrations}), "utf-8")
    close = (datetime.now(UTC) + timedelta(seconds=2)).replace(microsecond=0)  # after every token
    count = sum(1 for _ in (folder / "proofs").iterdir())
    season = {"participants": participants, "batch": batch, "proofs": count,
              "batches": -(-count // batch), "close": f"{close:%Y-%m-%dT%H:%M:%SZ}",
              "trust_layer_key": Issuer(None, _private()).key, "tsa_ca": str(authority.ca),
              "tsa_cert": str(authority.cert), "root": str(root), "salt": str(salt),
              "submissions": str(folder / "soumissions"), "registrations": str(folder / "inscriptions.json"),
              "proofs_folder": str(folder / "proofs"), "written_s": round(time.perf_counter() - started, 1)}
    (folder / "season.json").write_text(json.dumps(season, indent=1), "utf-8")
    while datetime.now(UTC) <= close:
        time.sleep(0.2)
    return season


def index_args(season: dict[str, Any], out: Path) -> list[str]:
    """``corpus index`` of the season, published (after the close), into ``out``."""
    return ["index", "--root", season["root"], "--track", PISTE, "--submissions", season["submissions"],
            "--registrations", season["registrations"], "--out", str(out), "--season-close", season["close"],
            "--proofs", season["proofs_folder"], "--salt-file", season["salt"], "--trust-layer-key",
            season["trust_layer_key"], "--tsa-ca", season["tsa_ca"], "--tsa-cert", season["tsa_cert"]]


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--participants", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=250)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    made = make_season(args.out, args.participants, args.batch, args.jobs)
    print(json.dumps(made, indent=1))
