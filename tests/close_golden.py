"""A fixed season's close, to compare ``corpus index``'s bytes before and after a change (issue 43).

The season is the scorer's small world (``tests/score_fixtures.py``: the fixture corpus, two tasks, its key),
frozen with a salt kept here and anchored by a proof-spec 3.1 proof (``corpus-anchor/2``), and ten
registrations whose submissions cite 3.1 proofs issued as Trust Layer serves them (``tests/proof_issuer.py``)
in batches stamped by a local RFC 3161 authority made for ten years: honest ones, a resubmission and a late
one, spoiled proofs of every kind the scorer names (a flipped commitment, a wrong nonce, another DID, a pending
batch, a flat hash altered, a 3.0 proof, a token after the close, a proof missing from the folder, one cited by
another participant, a 1.2 proof, a batch carrying its Rekor entry), a submission whose JSON repeats a key, one
outside the task's graph and a merged DID.

Everything that is random or dated when the season is issued (keys, nonces, the tokens' times) is written once
into ``tests/fixtures/close_golden/bundle.json``; ``expected.json`` holds the SHA-256 of every file the
code before issue 43 published from it (main at ef6ce42, the index of issues 39-41 included: ``ouverture``,
``contestations``), run from a checkout of that commit. A test lays the season out again (:func:`lay_out`) and
compares.

    python tests/close_golden.py issue      # writes bundle.json (new keys, tokens and nonces: only on purpose)
    python tests/close_golden.py expected   # writes expected.json with the code as it stands (on purpose)
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from proof_issuer import Issued, Issuer, RekorLog
from score_fixtures import HONEST_01, HONEST_02, ScoreWorld, anchor_of, make_score_world, submission
from trackfix import CONFORMITE
from trust_layer_fixtures import CHALLENGE_KEY, FINGERPRINT, TrustLayer

from generator.contract.freeze import freeze

FOLDER = Path(__file__).resolve().parent / "fixtures" / "close_golden"
BUNDLE, EXPECTED = FOLDER / "bundle.json", FOLDER / "expected.json"
BATCH = 5
REFERENCE = {"modele": "Sirocco", "version": "2.4", "framework": "Boussole 1.3",
             "prompt": {"texte": "Réponds à chaque tâche de la saison à partir des seules réponses du corpus."}}


def did_of(name: str) -> str:
    return "did:key:z6Mk" + hashlib.sha256(name.encode()).hexdigest()[:40]


class LongAuthority:
    """A local RFC 3161 authority as ``trust_layer_fixtures.Authority`` makes it, its certificates valid ten
    years, so that the tokens kept in the bundle verify as long as the bundle is kept."""

    def __init__(self, folder: Path) -> None:
        from trust_layer_fixtures import _TSA_CONFIG  # the authority's configuration, one place
        folder.mkdir(parents=True)
        self.folder, self.ca, self.cert = folder, folder / "ca.crt", folder / "tsa.crt"
        self.key = folder / "tsa.key"
        (folder / "serial").write_text("01\n", "ascii")
        (folder / "tsa.cnf").write_text(_TSA_CONFIG.format(serial=folder / "serial"), "ascii")
        (folder / "ext.cnf").write_text("extendedKeyUsage=critical,timeStamping\nbasicConstraints=CA:FALSE\n",
                                        "ascii")
        ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes")
        self._run("req", "-x509", *ec, "-keyout", str(folder / "ca.key"), "-out", str(self.ca), "-subj",
                  "/CN=Golden TSA CA", "-days", "3650", "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
                  "keyUsage=critical,keyCertSign")
        self._run("req", *ec, "-keyout", str(self.key), "-out", str(folder / "tsa.csr"), "-subj", "/CN=Golden TSA")
        self._run("x509", "-req", "-in", str(folder / "tsa.csr"), "-CA", str(self.ca), "-CAkey",
                  str(folder / "ca.key"), "-CAcreateserial", "-out", str(self.cert), "-days", "3650", "-extfile",
                  str(folder / "ext.cnf"))

    @staticmethod
    def _run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, timeout=30)

    def stamp(self, chain_hex: str) -> str:
        data, query, reply = self.folder / "chain.bin", self.folder / "q.tsq", self.folder / "r.tsr"
        data.write_bytes(bytes.fromhex(chain_hex))
        self._run("ts", "-query", "-data", str(data), "-no_nonce", "-sha256", "-out", str(query))
        self._run("ts", "-reply", "-config", str(self.folder / "tsa.cnf"), "-queryfile", str(query), "-inkey",
                  str(self.key), "-signer", str(self.cert), "-out", str(reply))
        return base64.b64encode(reply.read_bytes()).decode("ascii")


# ---------------------------------------------------------------------------------------- issuing, once


def _ids(sub: dict[str, Any], tag: str) -> dict[str, Any]:
    """The submission's proof ids in the proxy's form, its participant's own (``tag``: 4 hex digits)."""
    sub = copy.deepcopy(sub)
    renamed = {old: f"prf_20261205_1{n:05d}_{tag}{n:02x}" for n, old in enumerate(sorted(sub["disclosures"]))}
    sub["disclosures"] = {renamed[k]: v for k, v in sub["disclosures"].items()}
    for a in sub["assertions"]:
        a["proof_ids"] = [renamed[p] for p in a["proof_ids"]]
    return sub


def _flip(text: str) -> str:
    return text[:-1] + ("0" if text[-1] != "0" else "1")


def issue() -> dict[str, Any]:
    """Issue the season (keys, proofs, tokens): the bundle's content."""
    tmp = Path(tempfile.mkdtemp(prefix="close-golden-"))
    try:
        return _issue(tmp)
    finally:
        shutil.rmtree(tmp)


def _issue(tmp: Path) -> dict[str, Any]:
    from generator.cli.main import main

    world = make_score_world(tmp / "world")
    salt = tmp / "salt.hex"
    freeze(world.root, world.root / CONFORMITE.bareme.file, salt, CONFORMITE.places)
    authority = LongAuthority(tmp / "tsa")
    issuer = Issuer(authority)  # type: ignore[arg-type]  # stamps as trust_layer_fixtures.Authority does
    pair = anchor_of(world.root)
    anchoring = issuer.proof(pair["request_hash"]["value"], pair["response_hash"]["value"],
                             agent_did="did:web:proveit.arkforge.tech", api_key=CHALLENGE_KEY)
    issuer.close_batch([anchoring], others=2, batch_id="batch_anchor")
    (tmp / "anchor-proof.json").write_text(json.dumps(anchoring.full()), "utf-8")
    if main(["freeze-anchor", "--root", str(world.root), str(tmp / "anchor-proof.json"), "--trust-layer-key",
             issuer.key, "--challenge-key-fingerprint", FINGERPRINT, "--tsa-ca", str(authority.ca), "--tsa-cert",
             str(authority.cert)]) != 0:
        raise SystemExit("freeze-anchor failed")
    anchor = (world.root / CONFORMITE.places.anchor).read_text("utf-8")

    records: dict[str, dict[str, Any]] = {}  # relative path below the submissions folder -> record
    views: dict[str, Any] = {}  # proof_id -> the view the folder holds
    registrations: list[dict[str, Any]] = []
    late_batch: list[Issued] = []
    count = [0]

    def register(name: str, table: str = "communaute", history: tuple[str, ...] = ()) -> str:
        registrations.append({"agent": name, "did": did_of(name), "cle_empreinte": hashlib.sha256(
            f"cle-{name}".encode()).hexdigest(), "stack": f"Pile de {name}", "tableau": table,
            "inscrit_le": f"2026-10-{1 + len(registrations):02d}T09:00:00Z",
            "verified_did_history": list(history)})
        if table == "reference":  # a reference run says what replays it (issue 39)
            registrations[-1]["reference"] = REFERENCE
        return did_of(name)

    def put(name: str, sub: dict[str, Any], when: str, text: str | None = None) -> None:
        count[0] += 1
        tag = hashlib.sha256(name.encode()).hexdigest()[:6]
        path = f"{when[:10]}/{tag}/{sub.get('task_id')}-{count[0]:03d}.json"
        records[path] = {"recu_le": when, "soumission": sub} if text is None else {"text": text}

    def of(world_sub: dict[str, Any], name: str, tag: str) -> dict[str, Any]:
        sub = _ids(world_sub, tag)
        sub["agent_did"] = did_of(name)
        sub["narrative"] = f"Lecture de {name} sur {sub['task_id']}."
        return sub

    def proofs(sub: dict[str, Any]) -> list[Issued]:
        return issuer.proofs_of(sub)

    def publish(batch: list[Issued], edit: Any = None) -> None:
        for proof in batch:
            view = proof.public()
            if edit is not None:
                edit(proof, view)
            views[proof.proof_id] = view

    def close(batch: list[Issued], batch_id: str) -> None:
        for start in range(0, len(batch), BATCH):
            issuer.close_batch(batch[start:start + BATCH], others=start % 3, batch_id=f"{batch_id}_{start}")

    honest_01, honest_02 = submission(ScoreWorld(world.root), "conf-01", "conforme", HONEST_01), \
        submission(ScoreWorld(world.root), "conf-02", "non_conforme", HONEST_02)
    register("Run de référence", "reference")
    register("Agent Honnête", history=(did_of("Agent Lié"),))
    register("Agent Remplaçant")
    register("Agent Épreuves")
    register("Agent Attente")
    register("Agent Trois-Zéro")
    register("Agent Défauts")
    register("Agent Emprunteur")
    register("Agent Lié")
    register("Agent Douze")

    plain: list[Issued] = []
    subs: dict[tuple[str, str], dict[str, Any]] = {}
    for n, name in enumerate(("Run de référence", "Agent Honnête", "Agent Remplaçant", "Agent Épreuves",
                              "Agent Attente", "Agent Trois-Zéro", "Agent Défauts", "Agent Emprunteur",
                              "Agent Lié")):
        for world_sub in (honest_01, honest_02):
            subs[(name, world_sub["task_id"])] = of(world_sub, name, f"{n:02x}{world_sub['task_id'][-1]}0")

    # honest participants and the reference run, in the first batches
    for name in ("Run de référence", "Agent Honnête", "Agent Lié"):
        for task in ("conf-01", "conf-02"):
            plain += proofs(subs[(name, task)])
    for n, task in enumerate(("conf-01", "conf-02")):
        put("Run de référence", subs[("Run de référence", task)], f"2026-11-2{n}T08:00:00Z")
        put("Agent Honnête", subs[("Agent Honnête", task)], f"2026-11-2{n}T09:00:00Z")
    put("Agent Lié", subs[("Agent Lié", "conf-02")], "2026-11-23T17:00:00Z")

    # replaced, then counted; one more after the close
    replaced = copy.deepcopy(subs[("Agent Remplaçant", "conf-01")])
    replaced["verdict"] = "non_conforme"
    replaced["narrative"] = "Première lecture, remplacée."
    for task in ("conf-01", "conf-02"):
        plain += proofs(subs[("Agent Remplaçant", task)])
    put("Agent Remplaçant", replaced, "2026-11-20T07:00:00Z")
    put("Agent Remplaçant", subs[("Agent Remplaçant", "conf-01")], "2026-11-21T07:00:00Z")
    put("Agent Remplaçant", subs[("Agent Remplaçant", "conf-02")], "2026-11-22T07:00:00Z")

    # spoiled proofs: a flipped commitment (conf-01's first), a wrong nonce (conf-02's first)
    e01, e02 = subs[("Agent Épreuves", "conf-01")], subs[("Agent Épreuves", "conf-02")]
    flipped = sorted(e01["disclosures"])[0]
    wrong_nonce = sorted(e02["disclosures"])[0]
    spoiled = proofs(e01) + proofs(e02)
    e02["disclosures"][wrong_nonce]["request_hash"]["nonce"] = _flip(
        e02["disclosures"][wrong_nonce]["request_hash"]["nonce"])
    put("Agent Épreuves", e01, "2026-11-20T10:00:00Z")
    put("Agent Épreuves", e02, "2026-11-21T10:00:00Z")

    # a pending batch (conf-01) and a flat hash altered (conf-02); a proof missing from the folder
    a01, a02 = subs[("Agent Attente", "conf-01")], subs[("Agent Attente", "conf-02")]
    pending = proofs(a01)
    altered = proofs(a02)
    put("Agent Attente", a01, "2026-11-20T11:00:00Z")
    put("Agent Attente", a02, "2026-11-21T11:00:00Z")

    # a 3.0 proof (conf-01), another DID's proofs (conf-02: issued for someone else)
    t01, t02 = subs[("Agent Trois-Zéro", "conf-01")], subs[("Agent Trois-Zéro", "conf-02")]
    old = proofs(t01)
    for proof in old:
        issuer.as_spec_3_0(proof)
    other_did = [issuer.proof(p["request_hash"]["value"], p["response_hash"]["value"],
                              agent_did="did:key:z6MkSomeoneElse", proof_id=pid,
                              nonces={s: p[s]["nonce"] for s in ("request_hash", "response_hash")})
                 for pid, p in sorted(t02["disclosures"].items())]
    put("Agent Trois-Zéro", t01, "2026-11-20T12:00:00Z")
    put("Agent Trois-Zéro", t02, "2026-11-21T12:00:00Z")

    # a submission whose JSON repeats a key (conf-01), one outside the graph (conf-02)
    d01 = subs[("Agent Défauts", "conf-01")]
    text = json.dumps({"recu_le": "2026-11-20T13:00:00Z", "soumission": d01}, ensure_ascii=False)
    text = text.replace('"id": "a1"', '"id": "a1", "id": "a9"', 1)  # a key twice inside an assertion
    put("Agent Défauts", d01, "2026-11-20T13:00:00Z", text)
    d02 = subs[("Agent Défauts", "conf-02")]
    d02["assertions"][1]["claim"] = {"resource": "/entites/ENT-0001", "field": "/statut", "value": "active"}
    plain += proofs(d01) + proofs(d02)
    put("Agent Défauts", d02, "2026-11-21T13:00:00Z")

    # cites the honest participant's proof (conf-01) and a proof nobody issued (conf-02)
    b01 = copy.deepcopy(subs[("Agent Honnête", "conf-01")])
    b01["agent_did"] = did_of("Agent Emprunteur")
    b02 = subs[("Agent Emprunteur", "conf-02")]
    put("Agent Emprunteur", b01, "2026-11-20T14:00:00Z")
    put("Agent Emprunteur", b02, "2026-11-21T14:00:00Z")
    missing = sorted(b02["disclosures"])[-1]
    plain += [p for p in proofs(b02) if p.proof_id != missing]

    # a 1.2 proof, signed by the pinned key; its token still submitted (en attente)
    twelve = TrustLayer()
    twelve.private, twelve.key = issuer.private, issuer.key
    w01 = of(honest_01, "Agent Douze", "ee10")
    twelve_views = {pid: twelve.proof(p["request_hash"]["value"], p["response_hash"]["value"], proof_id=pid)
                    for pid, p in w01["disclosures"].items()}
    w02 = of(honest_02, "Agent Douze", "ee20")
    put("Agent Douze", w01, "2026-11-20T15:00:00Z")
    put("Agent Douze", w02, "2026-11-21T15:00:00Z")
    late_batch += proofs(w02)

    close(plain, "batch_plain")
    publish(plain)
    close(spoiled, "batch_spoiled")

    def flip(proof: Issued, view: dict[str, Any]) -> None:
        if proof.proof_id == flipped:
            view["commitments"]["seller"] = "sha256:" + _flip(view["commitments"]["seller"][7:])
    publish(spoiled, flip)
    publish(pending)  # never closed: pending

    def flat(proof: Issued, view: dict[str, Any]) -> None:
        view["hashes"]["request"] = "sha256:" + "0" * 64
    issuer.rekor = RekorLog()  # this batch carries its Rekor entry, no --rekor-key given
    close(altered, "batch_rekor")
    issuer.rekor = None
    publish(altered, flat)
    close(old + other_did, "batch_old")
    publish(old + other_did)
    views.update(twelve_views)
    time.sleep(1.2)
    closing = (datetime.now(UTC) + timedelta(seconds=1)).replace(microsecond=0)
    while datetime.now(UTC) < closing + timedelta(seconds=1.2):
        time.sleep(0.2)
    close(late_batch, "batch_late")  # stamped after the close: out of the season
    put("Agent Remplaçant", replaced, f"{closing + timedelta(hours=1):%Y-%m-%dT%H:%M:%SZ}")  # received after it
    publish(late_batch)
    return {"note": "issued by tests/close_golden.py issue; see its docstring",
            "close": f"{closing:%Y-%m-%dT%H:%M:%SZ}", "trust_layer_key": issuer.key,
            "salt": salt.read_text("ascii"), "anchor": anchor,
            "tsa_ca": authority.ca.read_text("ascii"), "tsa_cert": authority.cert.read_text("ascii"),
            "registrations": {"format": "corpus-inscriptions/1", "participants": registrations},
            "submissions": records, "proofs": views}


# ---------------------------------------------------------------------------------------- laying it out


def lay_out(bundle: dict[str, Any], folder: Path) -> list[str]:
    """The season of ``bundle`` under ``folder`` (the world frozen and anchored, the service's files, the proofs
    and the pinned authority); returns ``corpus index``'s arguments but ``--out``."""
    world = make_score_world(folder / "world")
    salt = folder / "salt.hex"
    salt.write_text(bundle["salt"], "ascii")
    freeze(world.root, world.root / CONFORMITE.bareme.file, salt, CONFORMITE.places)
    (world.root / CONFORMITE.places.anchor).write_text(bundle["anchor"], "utf-8")
    subs = folder / "soumissions"
    for relative, record in bundle["submissions"].items():
        path = subs / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(record["text"] if "text" in record else json.dumps(record, ensure_ascii=False, indent=1),
                        "utf-8")
    proofs = folder / "proofs"
    proofs.mkdir()
    for proof_id, view in bundle["proofs"].items():
        (proofs / f"{proof_id}.json").write_text(json.dumps(view), "utf-8")
    (folder / "inscriptions.json").write_text(json.dumps(bundle["registrations"], ensure_ascii=False), "utf-8")
    (folder / "ca.pem").write_text(bundle["tsa_ca"], "ascii")
    (folder / "tsa.pem").write_text(bundle["tsa_cert"], "ascii")
    return ["index", "--root", str(world.root), "--track", "conformite", "--submissions", str(subs),
            "--registrations", str(folder / "inscriptions.json"), "--season-close", bundle["close"],
            "--proofs", str(proofs), "--salt-file", str(salt), "--trust-layer-key", bundle["trust_layer_key"],
            "--tsa-ca", str(folder / "ca.pem"), "--tsa-cert", str(folder / "tsa.pem")]


def digests(folder: Path) -> dict[str, str]:
    """SHA-256 of every file below ``folder``, by its POSIX path there."""
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def publish_with(args: list[str], out: Path, *more: str) -> Path:
    from generator.cli.main import main

    if main([*args, "--out", str(out), *more]) != 0:
        raise SystemExit("corpus index failed")
    return out / "conformite"


if __name__ == "__main__":
    if sys.argv[1:] == ["issue"]:
        FOLDER.mkdir(parents=True, exist_ok=True)
        BUNDLE.write_text(json.dumps(issue(), ensure_ascii=False, indent=1) + "\n", "utf-8")
        print(f"wrote {BUNDLE}")
    elif sys.argv[1:] == ["expected"]:
        with tempfile.TemporaryDirectory(prefix="close-golden-") as work:
            arguments = lay_out(json.loads(BUNDLE.read_text("utf-8")), Path(work) / "season")
            found = digests(publish_with(arguments, Path(work) / "out"))
        EXPECTED.write_text(json.dumps(found, indent=1) + "\n", "utf-8")
        print(f"wrote {EXPECTED}: {len(found)} files")
    else:
        raise SystemExit(__doc__)
