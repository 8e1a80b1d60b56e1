"""Harness ``bars/proofs-spec-3-1``: an honest blind answer proved in proof-spec 3.1, and twelve spoiled variants.

The honest answer is the conformité season's independent agent (``independant-termes``, written from the
served référentiel alone). Each of its proofs is issued as the 3.1 proxy serves it by ``tests/proof_issuer.py``
(commitments, Merkle root signed in Ed25519, batches of seven, which are not powers of two, each batch root
stamped by a local RFC 3161 authority: openssl's server, the one thing here that issues tokens), then
``corpus score --proofs`` judges them offline against the pinned key, authority and season window. Each
variant spoils the proofs of one task (the first) and prints the cause the scorer gives for that task.

    .venv/bin/python bench/proofs_spec_3_1.py            # against the repository's built season

Needs ``make build`` (the committed build is enough) and the openssl command (the test authority).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from proof_issuer import Issued, Issuer, with_proxy_ids  # noqa: E402
from trust_layer_fixtures import Authority  # noqa: E402

from generator.cli.main import main  # noqa: E402
from generator.track_code.conformite.independent import submissions  # noqa: E402

BATCH = 7
Spoil = Callable[[Issuer, Issued, dict[str, Any]], None]


def _flip(text: str) -> str:
    return text[:-1] + ("0" if text[-1] != "0" else "1")


def _resign_other(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
    issuer.sign_with_another_key(proof)


def _spec_3_0(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
    issuer.as_spec_3_0(proof)


def _reissue(verified: bool | None = True, did: str | None = None) -> Spoil:
    def spoil(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
        again = issuer.proof(proof.chain_data["request_hash"], proof.chain_data["response_hash"],
                             agent_did=did or proof.parties["agent_identity"], proof_id=proof.proof_id,
                             nonces=dict(proof.nonces), verified=verified)
        proof.__dict__.update(again.__dict__)
    return spoil


def _view(edit: Callable[[dict[str, Any], Issued, dict[str, Any]], None]) -> Callable[..., None]:
    return edit


# (name, spoil before the batch closes, edit of the served view / submission after, close in the past, pending)
VARIANTS: list[tuple[str, Spoil | None, Callable[..., None] | None, bool, bool]] = [
    ("flipped commitment", None,
     lambda v, p, s: v["commitments"].__setitem__("seller", _flip(v["commitments"]["seller"])), False, False),
    ("wrong disclosure nonce", None,
     lambda v, p, s: s["disclosures"][p.proof_id]["request_hash"].__setitem__(
         "nonce", _flip(s["disclosures"][p.proof_id]["request_hash"]["nonce"])), False, False),
    ("overstated tree_size", None, lambda v, p, s: v["batch_anchor"].__setitem__("tree_size", 64), False, False),
    ("leaf_index out of range", None,
     lambda v, p, s: v["batch_anchor"].__setitem__("leaf_index", v["batch_anchor"]["tree_size"]), False, False),
    ("another signing key", _resign_other, None, False, False),
    ("token after the close", None, None, True, False),
    ("a 3.0 proof", _spec_3_0, None, False, False),
    ("verified null", _reissue(verified=None), None, False, False),
    ("another DID", _reissue(did="did:key:z6MkSomeoneElsesAgent"), None, False, False),
    ("a disclosed value edited",
     None, lambda v, p, s: v["disclosed"]["agent_identity"].__setitem__("value", "did:key:z6MkEdited"), False,
     False),
    ("a pending batch", None, None, False, True),
    ("a flat hash altered", None, lambda v, p, s: v["hashes"].__setitem__("request", "sha256:" + "0" * 64),
     False, False),
]


def run(work: Path, issuer: Issuer, authority: Authority, subs: list[dict[str, Any]], *,
        before: Spoil | None = None, after: Callable[..., None] | None = None, past_close: bool = False,
        pending: bool = False) -> tuple[dict[str, Any], str]:
    """Issue every proof, spoil the first task's, score all; the report and the printed table."""
    subs = json.loads(json.dumps(subs))
    target = subs[0]["task_id"]
    issued: list[Issued] = []
    spoiled: list[Issued] = []
    for sub in subs:
        for proof in issuer.proofs_of(sub):
            if sub["task_id"] == target:
                spoiled.append(proof)
                if before is not None:
                    before(issuer, proof, sub)
            issued.append(proof)
    for start in range(0, len(issued), BATCH):
        batch = issued[start:start + BATCH]
        if pending and any(p in spoiled for p in batch):
            continue
        issuer.close_batch(batch, batch_id=f"batch_{start:04d}")
    folder, subs_dir = work / "proofs", work / "submissions"
    folder.mkdir()
    subs_dir.mkdir()
    first = subs[0]
    for proof in issued:
        view = proof.public()
        if after is not None and proof in spoiled:
            after(view, proof, first)
        (folder / f"{proof.proof_id}.json").write_text(json.dumps(view), "utf-8")
    for sub in subs:
        (subs_dir / f"{sub['task_id']}.json").write_text(json.dumps(sub), "utf-8")
    close = datetime.now(UTC) + (timedelta(hours=-1) if past_close else timedelta(days=1))
    report = work / "report.json"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["score", str(subs_dir), "--root", str(ROOT), "--proofs", str(folder), "--json", str(report),
                     "--trust-layer-key", issuer.key, "--tsa-ca", str(authority.ca), "--tsa-cert",
                     str(authority.cert), "--season-close", f"{close:%Y-%m-%dT%H:%M:%SZ}"])
    if code != 0:
        raise SystemExit(f"corpus score exited {code}")
    return json.loads(report.read_text("utf-8")), out.getvalue()


def _task_causes(report: dict[str, Any], task: str) -> str:
    entry = next(t for t in report["taches"] if t["tache"] == task)
    if entry["statut"] == "en_attente":
        return f"en attente ({entry['motif'][:110]}…)"
    causes = Counter(a["cause"] or a["statut"] for a in entry["assertions"])
    first = next((a["detail"] for a in entry["assertions"] if a["cause"] or "incident" in a["detail"]), "")
    return f"{', '.join(f'{c} ×{n}' for c, n in sorted(causes.items()))}: {first[:170]}"


def main_harness() -> int:
    with tempfile.TemporaryDirectory(prefix="proofs-3-1-") as tmp:
        work = Path(tmp)
        authority = Authority(work / "tsa")
        issuer = Issuer(authority)
        subs = [with_proxy_ids(s, 1000 * n) for n, s in enumerate(submissions(ROOT, "termes")[0])]
        cited = sum(len(s["disclosures"]) for s in subs)
        (work / "honest").mkdir()
        report, table = run(work / "honest", issuer, authority, subs)
        summary = report["preuves"]
        print(f"honest (independant-termes, {cited} proofs in batches of {BATCH}): réussite "
              f"{report['reussite']}/{report['taches_total']}, unsupported {report['overclaim']['non_etayees']} "
              f"of {report['overclaim']['rendues']}, conditions 1 et 2 met by {summary['conditions_1_2_remplies']}"
              f"/{summary['citees']} proofs")
        print("  " + "\n  ".join(line for line in table.splitlines()[1:4] if line))
        target = subs[0]["task_id"]
        for number, (name, before, after, past, pending) in enumerate(VARIANTS, 1):
            (work / f"v{number}").mkdir()
            report, _ = run(work / f"v{number}", issuer, authority, subs, before=before, after=after,
                            past_close=past, pending=pending)
            print(f"{number:2d}. {name:<26} {target}: {_task_causes(report, target)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main_harness())
