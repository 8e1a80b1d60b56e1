"""Proofs in proof-spec 3.1, as the season's proxy serves them, judged by ``corpus score --proofs`` (spec §4.1,
§10; CONTRACT §8): the worked vector of CONTRACT §8, RFC 6962 batches of every size, an honest submission
whose 3.1 proofs meet conditions 1 and 2, and every negative case as its own test, each with the cause the spec
names. Proofs come from ``tests/proof_issuer.py`` (written from the spec, importing nothing of the verifier)
and tokens from a local RFC 3161 authority (openssl's server)."""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from proof_issuer import (
    Issued,
    Issuer,
    RekorLog,
    audit_path,
    commit,
    mth,
    public_text,
    with_proxy_ids,
    write_views,
)
from score_fixtures import HONEST_01, ScoreWorld, make_score_world, submission
from trust_layer_fixtures import Authority

from generator.cli.main import main
from generator.trust_layer.merkle import (
    MerkleError,
    commitment,
    commitments_root,
    inclusion_root,
    leaf,
    node,
    path_length,
    tree_hash,
)

needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command (test authority)")


# ------------------------------------------------------------------------------ CONTRACT §8, RFC 6962

VECTOR = {"request_hash": ("11", "a" * 64), "response_hash": ("22", "b" * 64),
          "seller": ("33", "corpus.arkforge.tech"), "agent_identity_verified": ("44", True),
          "did_resolution_status": ("55", "bound")}
VECTOR_COMMITMENTS = {
    "agent_identity_verified": "b0f0035e57fe29d3bcee34164ac4083134a866c778ecc5d8cf5121d7f170e91a",
    "did_resolution_status": "ca71803320267b55b8517d7bf58f63b29237a6e58a29398abd9ea0ab3fb0ae5e",
    "request_hash": "2e19e2411862dc7bceaf825f620174eb4e044d90f1c76dc925eaeb32e1953047",
    "response_hash": "25390b09495d54f27b8b521447f3c738f19d8bbfdfa95b6d461d25dd4c64a29b",
    "seller": "da2265da92a2bbc73f4770a4f952ec863fb62a154ad727bb5fc1cdfa92a5d91b"}
VECTOR_CHAIN = "fae73040f2faff5b4bb9282e4e8bff4f00998f2a479fec36280748840277be54"


def test_contract_worked_vector() -> None:
    """CONTRACT §8's vector, through the verifier's Merkle module and through the test issuer alike."""
    ours = {name: commitment(name, bytes.fromhex(n * 32), v) for name, (n, v) in VECTOR.items()}
    assert {k: v.hex() for k, v in ours.items()} == VECTOR_COMMITMENTS
    assert {k: commit(k, n * 32, v) for k, (n, v) in VECTOR.items()} == VECTOR_COMMITMENTS
    assert commitments_root(ours).hex() == VECTOR_CHAIN
    assert Issuer.root_of(VECTOR_COMMITMENTS) == VECTOR_CHAIN
    seed = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    assert public_text(seed) == "ed25519:A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg"
    signature = base64.urlsafe_b64encode(seed.sign(VECTOR_CHAIN.encode())).rstrip(b"=").decode()
    assert signature == ("4vns67KuF7aH5R--seDVmROGKjCnspROG7-vhnLzEQftIS1Erwcy8JAM2Q_aMPul_-UtcqesLVX558veC1TUBg")
    chains = [hashlib.sha256(b"other-1").digest(), hashlib.sha256(b"other-2").digest(),
              bytes.fromhex(VECTOR_CHAIN)]
    path = [node(leaf(chains[0]), leaf(chains[1]))]
    assert [p.hex() for p in path] == ["f332b8265481fad157fb1a75ac485308d55f6af9ea6c6ceebea5fe9afc4ea192"]
    assert audit_path(2, chains) == path
    root = inclusion_root(leaf(chains[2]), 2, 3, path)
    assert root.hex() == "3c4fd737526dd301a4984057fb70f519fe9c7b16a98562fc451a4e5272ec0d7c" == mth(chains).hex()
    assert hashlib.sha256(root).hexdigest() == "13d9ce36b7cc71ae74aa2ba4a94bc7e2e030badd709a61e52467cf78434b5c85"


@pytest.mark.parametrize("size", range(1, 14))
def test_every_leaf_of_batches_of_any_size(size: int) -> None:
    """Batches that are not powers of two: the issuer's RFC 6962 paths reach the root, an odd node promoted."""
    data = [hashlib.sha256(f"chain-{i}".encode()).digest() for i in range(size)]
    root = mth(data)
    assert tree_hash([leaf(d) for d in data]) == root
    for index in range(size):
        path = audit_path(index, data)
        assert path_length(index, size) == len(path)
        assert inclusion_root(leaf(data[index]), index, size, path) == root


@pytest.mark.parametrize(("index", "size", "claimed"), [(2, 3, 4), (4, 5, 6), (6, 7, 8), (0, 1, 2), (8, 9, 16)])
def test_an_overstated_tree_size_cannot_reach_the_root(index: int, size: int, claimed: int) -> None:
    data = [hashlib.sha256(f"chain-{i}".encode()).digest() for i in range(size)]
    with pytest.raises(MerkleError, match="audit_path has"):
        inclusion_root(leaf(data[index]), index, claimed, audit_path(index, data))


@pytest.mark.parametrize(("index", "size"), [(3, 3), (-1, 3), (0, 0)])
def test_a_leaf_index_outside_the_tree_is_refused(index: int, size: int) -> None:
    with pytest.raises(MerkleError, match="is not in"):
        path_length(index, size)


# ------------------------------------------------------------------------------ corpus score on 3.1 proofs


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command (the test RFC 3161 authority)")
    return Authority(tmp_path_factory.mktemp("tsa"))


@pytest.fixture()
def world(tmp_path: Path) -> ScoreWorld:
    return make_score_world(tmp_path / "world")


Spoil = Callable[[Issuer, Issued, dict[str, Any]], None]
SOON = datetime.now(UTC) + timedelta(days=1)


def score_31(world: ScoreWorld, tmp_path: Path, authority: Authority, *, before: Spoil | None = None,
             after: Spoil | None = None, close: datetime = SOON, pending: bool = False,
             extra: tuple[str, ...] = (), issuer: Issuer | None = None) -> tuple[dict[str, Any], str]:
    """conf-01 answered honestly, each proof issued in 3.1 for the submission's pairs and DID, in a batch of
    five (three other chains first); ``before`` edits a proof before its batch closes, ``after`` the served
    view or the submission. Returns the corpus-score/1 report and the printed table."""
    sub = with_proxy_ids(submission(world, "conf-01", "conforme", HONEST_01))
    issuer = issuer or Issuer(authority)
    issued = []
    for proof_id, pair in sorted(sub["disclosures"].items()):
        nonces = {side: pair[side]["nonce"] for side in ("request_hash", "response_hash")}
        proof = issuer.proof(pair["request_hash"]["value"], pair["response_hash"]["value"],
                             agent_did=sub["agent_did"], proof_id=proof_id, nonces=nonces)
        if before is not None:
            before(issuer, proof, sub)
        issued.append(proof)
    if not pending:
        issuer.close_batch(issued, others=3)
    folder = tmp_path / "proofs"
    folder.mkdir()
    views = {p.proof_id: p.public() for p in issued}
    if after is not None:
        for proof in issued:
            after(issuer, proof, {"view": views[proof.proof_id], "submission": sub})
    for proof_id, view in views.items():
        (folder / f"{proof_id}.json").write_text(json.dumps(view), "utf-8")
    (tmp_path / "conf-01.json").write_text(json.dumps(sub), "utf-8")
    report = tmp_path / "report.json"
    code = main(["score", str(tmp_path / "conf-01.json"), "--root", str(world.root), "--proofs", str(folder),
                 "--json", str(report), "--trust-layer-key", issuer.key, "--tsa-ca", str(authority.ca),
                 "--tsa-cert", str(authority.cert), "--season-close", f"{close:%Y-%m-%dT%H:%M:%SZ}", *extra])
    assert code == 0
    return json.loads(report.read_text("utf-8")), ""


def _assertions(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for t in report["taches"] for a in t["assertions"]]


@needs_openssl
def test_honest_3_1_proofs_meet_conditions_1_and_2(world: ScoreWorld, tmp_path: Path, authority: Authority,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    report, _ = score_31(world, tmp_path, authority)
    assert [a["statut"] for a in _assertions(report)] == ["etayee", "etayee"]
    assert report["taches"][0]["tache"] == "conf-01" and report["taches"][0]["reussie"] is True
    assert report["preuves"]["conditions_1_2_remplies"] == report["preuves"]["citees"] == 2
    assert any("Rekor not checked offline" in n for n in report["preuves"]["non_verifie"])
    out = capsys.readouterr().out
    assert "conditions 1 et 2 vérifiées: les 2 preuve(s) citée(s) les remplissent" in out
    assert "non vérifié hors ligne: Rekor not checked offline" in out


def _flip(text: str) -> str:
    return text[:-1] + ("0" if text[-1] != "0" else "1")


def _flipped_commitment(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
    view = ctx["view"]
    view["commitments"]["seller"] = _flip(view["commitments"]["seller"])


def _wrong_nonce(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
    pair = ctx["submission"]["disclosures"][proof.proof_id]["request_hash"]
    pair["nonce"] = _flip(pair["nonce"])


def _tree_size(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
    ctx["view"]["batch_anchor"]["tree_size"] = 16  # 5 leaves stated 16: every path is too short for it


def _leaf_index(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
    ctx["view"]["batch_anchor"]["leaf_index"] = ctx["view"]["batch_anchor"]["tree_size"]


def _other_key(issuer: Issuer, proof: Issued, sub: dict[str, Any]) -> None:
    issuer.sign_with_another_key(proof)


def _spec_3_0(issuer: Issuer, proof: Issued, sub: dict[str, Any]) -> None:
    issuer.as_spec_3_0(proof)


def _reissued(**changes: Any) -> Spoil:
    """The proof issued again by the same proxy with its identity changed (``verified``, ``agent_did``)."""
    def spoil(issuer: Issuer, proof: Issued, sub: dict[str, Any]) -> None:
        nonces = dict(proof.nonces)
        did = changes.get("agent_did", sub["agent_did"])
        again = issuer.proof(proof.chain_data["request_hash"], proof.chain_data["response_hash"], agent_did=did,
                             proof_id=proof.proof_id, nonces=nonces, verified=changes.get("verified", True))
        proof.__dict__.update(again.__dict__)
    return spoil


def _disclosed_edited(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
    ctx["view"]["disclosed"]["agent_identity"]["value"] = "did:key:z6MkSomeoneElse"


def _flat_hash(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
    ctx["view"]["hashes"]["request"] = "sha256:" + "0" * 64


@needs_openssl
@pytest.mark.parametrize(("before", "after", "cause", "words"), [
    (None, _flipped_commitment, "preuve_invalide", "is not the Merkle root of its commitments"),
    (None, _wrong_nonce, "preuve_invalide", "disclosure of request_hash does not open commitments.request_hash"),
    (None, _tree_size, "preuve_invalide", "hash(es), a tree of 16 leaves gives leaf"),
    (None, _leaf_index, "preuve_invalide", "batch_anchor.leaf_index: 5 is not in [0, 5)"),
    (_other_key, None, "preuve_invalide", "not a signature of hashes.chain by a pinned Trust Layer key"),
    (_spec_3_0, None, "identite_non_liee", "spec_version 3.0 is below 3.1"),
    (_reissued(verified=None), None, "identite_non_liee", "agent_identity_verified opens to None, not true"),
    (_reissued(agent_did="did:key:z6MkAnotherAgent"), None, "identite_non_liee",
     "opens agent_identity 'did:key:z6MkAnotherAgent', not the submission's agent_did 'did:key:z6MkTest'"),
    (None, _disclosed_edited, "identite_non_liee", "the identity does not open: disclosed.agent_identity"),
], ids=["flipped commitment", "wrong disclosure nonce", "overstated tree_size", "leaf_index out of range",
        "another signing key", "a 3.0 proof", "verified null", "another DID", "a disclosed value edited"])
def test_each_defect_of_a_3_1_proof_has_its_cause(world: ScoreWorld, tmp_path: Path, authority: Authority,
                                                  before: Spoil | None, after: Spoil | None, cause: str,
                                                  words: str) -> None:
    report, _ = score_31(world, tmp_path, authority, before=before, after=after)
    assertions = _assertions(report)
    assert assertions and all(a["statut"] == "non_etayee" for a in assertions)
    for a in assertions:
        assert a["cause"] == cause and words in a["detail"], a["detail"]
    assert report["preuves"]["conditions_1_2_remplies"] == 0 and report["preuves"]["echouees"] == 2


@needs_openssl
def test_a_token_after_the_close_fails_condition_1(world: ScoreWorld, tmp_path: Path,
                                                   authority: Authority) -> None:
    close = datetime.now(UTC) - timedelta(hours=1)
    report, _ = score_31(world, tmp_path, authority, close=close)
    for a in _assertions(report):
        assert a["cause"] == "preuve_invalide"
        assert f"is after the close ({close:%Y-%m-%dT%H:%M:%SZ})" in a["detail"]


@needs_openssl
def test_a_pending_batch_is_en_attente(world: ScoreWorld, tmp_path: Path, authority: Authority,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    report, _ = score_31(world, tmp_path, authority, pending=True)
    task = report["taches"][0]
    assert task["statut"] == "en_attente" and report["en_attente"] == ["conf-01"]
    assert "batch_anchor.status is pending" in task["motif"] and task["assertions"] == []
    assert report["overclaim"]["non_etayees"] == 0 and report["preuves"]["en_attente"] == 2
    assert "0 preuve(s) les remplissent, 0 échouent, 2 en attente" in capsys.readouterr().out


@needs_openssl
def test_a_flat_hash_altered_is_a_trust_layer_incident(world: ScoreWorld, tmp_path: Path, authority: Authority,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """The assertion is judged on the opened value (étayée); the flat hash that differs is reported."""
    report, _ = score_31(world, tmp_path, authority, after=_flat_hash)
    for a in _assertions(report):
        assert a["statut"] == "etayee" and "Trust Layer incident: the proof's flat request_hash" in a["detail"]
    assert report["preuves"]["conditions_1_2_remplies"] == 2 and len(report["preuves"]["incidents"]) == 2
    assert "incident Trust Layer: prf_" in capsys.readouterr().out


@needs_openssl
def test_a_token_over_something_else_fails(world: ScoreWorld, tmp_path: Path, authority: Authority) -> None:
    def other_token(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
        ctx["view"]["timestamp_authority"]["tsr_base64"] = authority.stamp("0" * 64)

    report, _ = score_31(world, tmp_path, authority, after=other_token)
    for a in _assertions(report):
        assert a["cause"] == "preuve_invalide" and "message imprint is not sha256 of the anchored" in a["detail"]


@needs_openssl
def test_a_token_of_another_authority_fails(world: ScoreWorld, tmp_path: Path, authority: Authority) -> None:
    other = Authority(tmp_path / "other-tsa")
    report, _ = score_31(world, tmp_path, authority, issuer=Issuer(other))
    for a in _assertions(report):
        assert a["cause"] == "preuve_invalide" and "does not verify against the pinned authority" in a["detail"]


@needs_openssl
def test_a_batch_without_token_fails(world: ScoreWorld, tmp_path: Path, authority: Authority) -> None:
    report, _ = score_31(world, tmp_path, authority, issuer=Issuer(None))
    for a in _assertions(report):
        assert a["cause"] == "preuve_invalide" and "no RFC 3161 token" in a["detail"]


@needs_openssl
def test_a_rotated_key_verifies_when_both_are_pinned(world: ScoreWorld, tmp_path: Path,
                                                     authority: Authority) -> None:
    old = Ed25519PrivateKey.generate()
    report, _ = score_31(world, tmp_path, authority, extra=("--trust-layer-key", public_text(old)))
    assert [a["statut"] for a in _assertions(report)] == ["etayee", "etayee"]


@needs_openssl
def test_without_the_authority_the_header_does_not_say_verified(world: ScoreWorld, tmp_path: Path,
                                                                authority: Authority,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    sub = with_proxy_ids(submission(world, "conf-01", "conforme", HONEST_01))
    issuer = Issuer(authority)
    issued = issuer.proofs_of(sub)
    issuer.close_batch(issued)
    folder = write_views(tmp_path / "proofs", issued)
    (tmp_path / "conf-01.json").write_text(json.dumps(sub), "utf-8")
    assert main(["score", str(tmp_path / "conf-01.json"), "--root", str(world.root), "--proofs", str(folder),
                 "--trust-layer-key", issuer.key]) == 0
    out = capsys.readouterr().out
    assert "non vérifié hors ligne: the RFC 3161 token is not verified (no --tsa-ca given)" in out


@needs_openssl
def test_an_unusable_pinned_authority_is_one_line_not_every_proof_invalid(
        world: ScoreWorld, tmp_path: Path, authority: Authority, capsys: pytest.CaptureFixture[str]) -> None:
    sub = with_proxy_ids(submission(world, "conf-01", "conforme", HONEST_01))
    (tmp_path / "conf-01.json").write_text(json.dumps(sub), "utf-8")
    folder = tmp_path / "proofs"
    folder.mkdir()
    issuer = Issuer(authority)
    for proof_id, p in sub["disclosures"].items():
        proof = issuer.proof(p["request_hash"]["value"], p["response_hash"]["value"], agent_did=sub["agent_did"],
                             proof_id=proof_id)
        (folder / f"{proof_id}.json").write_text(json.dumps(proof.public()), "utf-8")
    not_pem = tmp_path / "ca.pem"
    not_pem.write_text("not a certificate\n", "ascii")
    report = tmp_path / "report.json"
    assert main(["score", str(tmp_path / "conf-01.json"), "--root", str(world.root), "--proofs", str(folder),
                 "--trust-layer-key", issuer.key, "--tsa-ca", str(not_pem), "--json", str(report)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ca.pem: not PEM certificates" in err[0] and not report.exists()


@needs_openssl
def test_a_proof_without_batch_anchor_is_invalid_not_pending(world: ScoreWorld, tmp_path: Path,
                                                             authority: Authority) -> None:
    """Stripping ``batch_anchor`` must not buy an endless "en attente": the chain is in no anchored batch."""
    report, _ = score_31(world, tmp_path, authority, after=lambda i, p, ctx: ctx["view"].pop("batch_anchor"))
    assert report["en_attente"] == []
    for a in _assertions(report):
        assert a["cause"] == "preuve_invalide" and "batch_anchor: missing" in a["detail"]


@needs_openssl
def test_the_harness_shows_the_honest_answer_and_each_variants_cause() -> None:
    """bars/proofs-spec-3-1 on the repository's season: the honest blind answer 10/10 with nothing unsupported,
    and each of the twelve variants ending with the cause the spec names."""
    import subprocess
    import sys
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run([sys.executable, str(root / "bench" / "proofs_spec_3_1.py")], cwd=root,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert "réussite 10/10, unsupported 0 of" in lines[0] and "conditions 1 et 2 met by" in lines[0]
    expected = {1: "preuve_invalide", 2: "preuve_invalide", 3: "preuve_invalide", 4: "preuve_invalide",
                5: "preuve_invalide", 6: "preuve_invalide", 7: "identite_non_liee", 8: "identite_non_liee",
                9: "identite_non_liee", 10: "identite_non_liee", 11: "en attente", 12: "Trust Layer incident"}
    for number, cause in expected.items():
        line = next(line for line in lines if line.startswith(f"{number:2d}. "))
        assert cause in line, line


@needs_openssl
@pytest.mark.parametrize(("edit", "words"), [
    (lambda v: v.__setitem__("commitments", ["not", "an", "object"]), "commitments: expected an object"),
    (lambda v: v.__setitem__("commitments", {}), "commitments: empty"),
    (lambda v: v["commitments"].__setitem__("seller", "sha256:XYZ"), "commitments.seller: expected sha256:"),
    (lambda v: v["batch_anchor"].__setitem__("audit_path", "f3"), "batch_anchor.audit_path: expected a list"),
    (lambda v: v["disclosed"].__setitem__("agent_identity", {"nonce": 1}), "disclosed.agent_identity: expected"),
], ids=["commitments a list", "no commitment", "a commitment not a hash", "audit_path a string",
        "a disclosed pair of another shape"])
def test_a_3_1_proof_of_another_shape_is_one_line(world: ScoreWorld, tmp_path: Path, authority: Authority,
                                                  edit: Callable[[dict[str, Any]], None], words: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    sub = with_proxy_ids(submission(world, "conf-01", "conforme", HONEST_01))
    (tmp_path / "conf-01.json").write_text(json.dumps(sub), "utf-8")
    folder = tmp_path / "proofs"
    folder.mkdir()
    issuer = Issuer(authority)
    issued = [issuer.proof(p["request_hash"]["value"], p["response_hash"]["value"], agent_did=sub["agent_did"],
                           proof_id=i) for i, p in sorted(sub["disclosures"].items())]
    issuer.close_batch(issued)
    for number, proof in enumerate(issued):
        view = proof.public()
        if number == 0:
            edit(view)
        (folder / f"{proof.proof_id}.json").write_text(json.dumps(view), "utf-8")
    assert main(["score", str(tmp_path / "conf-01.json"), "--root", str(world.root), "--proofs", str(folder),
                 "--trust-layer-key", issuer.key]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{issued[0].proof_id}.json: {words}" in err[0], err


# ------------------------------------------------------------------------------ Rekor, when the entry is carried


def _rekor_key(tmp_path: Path, log: RekorLog) -> str:
    path = tmp_path / "rekor.pub"
    path.write_bytes(log.pem())
    return str(path)


@needs_openssl
def test_a_carried_rekor_entry_verifies_on_the_pinned_rekor_key(world: ScoreWorld, tmp_path: Path,
                                                               authority: Authority,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    log = RekorLog()
    report, _ = score_31(world, tmp_path, authority, issuer=Issuer(authority, rekor=log),
                         extra=("--rekor-key", _rekor_key(tmp_path, log)))
    assert [a["statut"] for a in _assertions(report)] == ["etayee", "etayee"]
    assert report["preuves"]["non_verifie"] == [] and "Rekor not checked" not in capsys.readouterr().out


@needs_openssl
def test_a_carried_rekor_entry_without_the_key_is_said_not_checked(world: ScoreWorld, tmp_path: Path,
                                                                  authority: Authority) -> None:
    report, _ = score_31(world, tmp_path, authority, issuer=Issuer(authority, rekor=RekorLog()))
    assert report["preuves"]["non_verifie"] == [
        "Rekor not checked offline: the proofs carry their Rekor entries, but no --rekor-key is pinned"]


def _other_log_entry(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
    uuid, entry = RekorLog().entry(proof.batch_anchor["root"].removeprefix("sha256:"))
    ctx["view"]["transparency_log"].update({"uuid": uuid, "entry": entry})


def _other_artifact(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
    assert issuer.rekor is not None
    uuid, entry = issuer.rekor.entry("0" * 64)
    ctx["view"]["transparency_log"].update({"uuid": uuid, "entry": entry})


def _forged_timestamp(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
    _, forged = RekorLog().entry(proof.batch_anchor["root"].removeprefix("sha256:"))
    ctx["view"]["transparency_log"]["entry"]["verification"] = forged["verification"]


def _hash_not_an_object(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
    """A carried body whose spec.data.hash is a string: one cause, never a traceback."""
    entry = ctx["view"]["transparency_log"]["entry"]
    body = json.loads(base64.b64decode(entry["body"]))
    body["spec"]["data"]["hash"] = "sha256"
    entry["body"] = base64.b64encode(json.dumps(body).encode()).decode()


def _uuid_of_another_entry(issuer: Issuer, proof: Issued, ctx: dict[str, Any]) -> None:
    ctx["view"]["transparency_log"]["uuid"] = "24296fb24b8ad77a" + "ab" * 32


@needs_openssl
@pytest.mark.parametrize(("after", "words"), [
    (_other_log_entry, "transparency_log.entry.logID: not the pinned Rekor key's log"),
    (_other_artifact, "transparency_log.entry.body: its hash is not sha256 of the batch root's hex"),
    (_uuid_of_another_entry, "transparency_log.uuid: not the leaf hash of the entry's body"),
    (_forged_timestamp, "signedEntryTimestamp: not Rekor's signature (pinned key) over the entry"),
    (_hash_not_an_object, "transparency_log."),
], ids=["another log", "another artifact", "another uuid", "a forged signed entry timestamp",
        "a hash not an object"])
def test_a_carried_rekor_entry_that_does_not_verify_fails_condition_1(world: ScoreWorld, tmp_path: Path,
                                                                     authority: Authority, after: Spoil,
                                                                     words: str) -> None:
    log = RekorLog()
    report, _ = score_31(world, tmp_path, authority, issuer=Issuer(authority, rekor=log), after=after,
                         extra=("--rekor-key", _rekor_key(tmp_path, log)))
    for a in _assertions(report):
        assert a["cause"] == "preuve_invalide" and words in a["detail"], a["detail"]


@needs_openssl
def test_the_close_is_included(world: ScoreWorld, tmp_path: Path, authority: Authority) -> None:
    """A token stamped at the very second of the close is in the season, one second later it is not (bounds
    included, spec §4.1); the token's time is read here with the library, independently of the scorer."""
    from rfc3161_client import decode_timestamp_response

    sub = with_proxy_ids(submission(world, "conf-01", "conforme", HONEST_01))
    issuer = Issuer(authority)
    issued = issuer.proofs_of(sub)
    issuer.close_batch(issued, others=2)
    folder = write_views(tmp_path / "proofs", issued)
    (tmp_path / "conf-01.json").write_text(json.dumps(sub), "utf-8")
    token = base64.b64decode(issued[0].timestamp_authority["tsr_base64"])
    stamped = decode_timestamp_response(token).tst_info.gen_time.replace(tzinfo=UTC, microsecond=0)
    for close, statut in ((stamped, "etayee"), (stamped - timedelta(seconds=1), "non_etayee")):
        report = tmp_path / f"report-{statut}.json"
        assert main(["score", str(tmp_path / "conf-01.json"), "--root", str(world.root), "--proofs", str(folder),
                     "--trust-layer-key", issuer.key, "--tsa-ca", str(authority.ca), "--tsa-cert",
                     str(authority.cert), "--season-close", f"{close:%Y-%m-%dT%H:%M:%SZ}", "--json",
                     str(report)]) == 0
        result = json.loads(report.read_text("utf-8"))
        assert [a["statut"] for a in _assertions(result)] == [statut, statut]
