"""``corpus score --proofs FOLDER``: the submissions' proofs as Trust Layer serves them, judged offline (spec
§4.1): condition 1 from the chain and the signature against the pinned key, condition 2 not receivable below
spec_version 3.1, a flat hash that differs from the opened pair reported as a Trust Layer incident, and a
proof whose RFC 3161 token is still awaited neither valid nor invalid: en attente.

Proofs are made as Trust Layer 1.7.0 stores them right after the call (``timestamp_authority.status``
``submitted``), then given a local authority's token (``verified``) where a test needs a verdict."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from score_fixtures import HONEST_01, ScoreWorld, anchor_of, make_score_world, submission
from trackfix import CONFORMITE
from trust_layer_fixtures import FINGERPRINT, Authority, TrustLayer

from generator.cli.main import main
from generator.contract.freeze import freeze

needs_openssl = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command")


@pytest.fixture()
def world(tmp_path: Path) -> ScoreWorld:
    return make_score_world(tmp_path / "world")


@pytest.fixture(scope="module")
def authority(tmp_path_factory: pytest.TempPathFactory) -> Authority:
    """A local RFC 3161 authority: the token Trust Layer adds to a proof once its timestamp is issued."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command")
    return Authority(tmp_path_factory.mktemp("tsa"))


def _folder(tmp_path: Path, sub: dict[str, Any], tl: TrustLayer, **changes: Any) -> Path:
    """One proof per disclosed proof_id, made for the disclosed hashes (``changes``: proof_id -> edit)."""
    folder = tmp_path / "proofs"
    folder.mkdir()
    for proof_id, pair in sub["disclosures"].items():
        response = pair["response_hash"]["value"]
        if changes.get(proof_id) == "other response":
            response = "0" * 64
        proof = tl.proof(pair["request_hash"]["value"], response, api_key="a participant's key",
                         proof_id=proof_id)
        if changes.get(proof_id) == "flipped signature":
            body = proof["arkforge_signature"]
            proof["arkforge_signature"] = body[:20] + ("A" if body[20] != "A" else "B") + body[21:]
        (folder / f"{proof_id}.json").write_text(json.dumps(proof), "utf-8")
    return folder


def _score(world: ScoreWorld, tmp_path: Path, sub: dict[str, Any], folder: Path,
           *extra: str) -> tuple[int, dict[str, Any] | None, str]:
    path = tmp_path / "conf-01.json"
    path.write_text(json.dumps(sub), "utf-8")
    report = tmp_path / "report.json"
    code = main(["score", str(path), "--root", str(world.root), "--proofs", str(folder), "--json", str(report),
                 *extra])
    return code, json.loads(report.read_text("utf-8")) if report.exists() else None, ""


def _assertions(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for t in report["taches"] for a in t["assertions"]]


def test_proofs_of_spec_1_2_verify_but_identity_is_not_receivable(world: ScoreWorld, tmp_path: Path,
                                                                   authority: Authority,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    sub = submission(world, "conf-01", "conforme", HONEST_01)
    tl = TrustLayer()
    folder = _folder(tmp_path, sub, tl)
    _stamped(folder, authority)
    code, report, _ = _score(world, tmp_path, sub, folder, "--trust-layer-key", tl.key)
    assert code == 0 and report is not None
    assertions = _assertions(report)
    assert [a["cause"] for a in assertions] == ["identite_non_liee", "identite_non_liee"]
    for a in assertions:
        assert "spec_version 1.2 is below 3.1" in a["detail"] and "not receivable" in a["detail"]
        assert "time within the season is not verified offline" in a["detail"]
    assert report["conditions_1_2"] == "verifiees" and "spec_version 1.2 is below 3.1" in capsys.readouterr().out


@pytest.mark.parametrize(("change", "expected"), [
    ("flipped signature", "fails third-party verification (condition 1): arkforge_signature: not a signature"),
    ("other response", "Trust Layer incident: the proof's flat response_hash sha256:" + "0" * 64),
])
def test_a_bad_proof_in_the_folder_is_an_invalid_proof(world: ScoreWorld, tmp_path: Path, authority: Authority,
                                                      change: str, expected: str) -> None:
    sub = submission(world, "conf-01", "conforme", HONEST_01)
    tl = TrustLayer()
    folder = _folder(tmp_path, sub, tl, prf_0001=change)
    _stamped(folder, authority)
    code, report, _ = _score(world, tmp_path, sub, folder, "--trust-layer-key", tl.key)
    assert code == 0 and report is not None
    first, second = _assertions(report)
    assert first["cause"] == "identite_non_liee"
    assert second["cause"] == "preuve_invalide" and expected in second["detail"], second["detail"]


def test_a_proof_whose_token_is_awaited_is_en_attente(world: ScoreWorld, tmp_path: Path, authority: Authority,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """Right after the call Trust Layer has asked for the token and not got it: the proof is neither valid nor
    invalid, and the submission citing it gets no score until the scoring is replayed (spec §4.1)."""
    sub = submission(world, "conf-01", "conforme", HONEST_01)
    tl = TrustLayer()
    folder = _folder(tmp_path, sub, tl)
    proof = json.loads((folder / "prf_0001.json").read_text("utf-8"))
    assert proof["timestamp_authority"]["status"] == "submitted"  # as the proxy stores it (../shared/trust-layer)
    _stamped(folder, authority)
    (folder / "prf_0001.json").write_text(json.dumps(proof), "utf-8")  # one of the two still awaits its token
    code, report, _ = _score(world, tmp_path, sub, folder, "--trust-layer-key", tl.key)
    assert code == 0 and report is not None
    task = report["taches"][0]
    assert task["statut"] == "en_attente" and task["assertions"] == [], task
    assert "cites prf_0001, awaiting anchoring" in task["motif"] and "status is submitted" in task["motif"]
    assert report["en_attente"] == ["conf-01"] and report["reussite"] == 0
    assert "SCORE PROVISOIRE: conf-01 en attente" in capsys.readouterr().out


def test_a_bad_signature_is_invalid_even_while_its_token_is_awaited(world: ScoreWorld, tmp_path: Path) -> None:
    """Waiting is for what time will settle: a chain or a signature that fails is invalid at once."""
    sub = submission(world, "conf-01", "conforme", HONEST_01)
    tl = TrustLayer()
    folder = _folder(tmp_path, sub, tl, prf_0001="flipped signature", prf_0000="flipped signature")
    code, report, _ = _score(world, tmp_path, sub, folder, "--trust-layer-key", tl.key)
    assert code == 0 and report is not None and report["en_attente"] == []
    assert [a["cause"] for a in _assertions(report)] == ["preuve_invalide", "preuve_invalide"]


def test_a_key_other_than_the_pinned_one_fails_condition_1(world: ScoreWorld, tmp_path: Path) -> None:
    sub = submission(world, "conf-01", "conforme", HONEST_01)
    code, report, _ = _score(world, tmp_path, sub, _folder(tmp_path, sub, TrustLayer()),
                             "--trust-layer-key", TrustLayer().key)
    assert code == 0 and report is not None
    assert all(a["cause"] == "preuve_invalide" and "arkforge_pubkey" in a["detail"] for a in _assertions(report))


@pytest.mark.parametrize("case", ["no pinned key", "a misnamed file", "an opened pair", "a stray entry"])
def test_an_unusable_proofs_folder_is_one_line(world: ScoreWorld, tmp_path: Path, case: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    sub = submission(world, "conf-01", "conforme", HONEST_01)
    tl = TrustLayer()
    folder = _folder(tmp_path, sub, tl)
    extra = ["--trust-layer-key", tl.key]
    if case == "no pinned key":
        extra, expected = [], "a folder of proofs is verified against the pinned Trust Layer key"
    elif case == "a misnamed file":
        (folder / "prf_0001.json").rename(folder / "prf_9999.json")
        expected = "holds the proof prf_0001: name it prf_0001.json"
    elif case == "an opened pair":
        pair = {"proof_id": "prf_0001", **sub["disclosures"]["prf_0001"]}
        (folder / "prf_0001.json").write_text(json.dumps(pair), "utf-8")
        expected = "an opened pair, not a proof"
    else:
        (folder / "notes.txt").write_text("x", "utf-8")
        expected = "not a regular *.json file"
    code, report, _ = _score(world, tmp_path, sub, folder, *extra)
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert code == 1 and report is None and out == "" and len(lines) == 1 and expected in lines[0], lines


def _stamped(folder: Path, authority: Authority, *, other_chain: bool = False) -> None:
    """Each proof of ``folder`` given the authority's token over its chain (or over another chain)."""
    for file in folder.glob("*.json"):
        proof = json.loads(file.read_text("utf-8"))
        chain = proof["hashes"]["chain"].removeprefix("sha256:")
        token = authority.stamp("0" * 64 if other_chain else chain)
        proof["timestamp_authority"] = {"status": "verified", "provider": "test", "tsr_base64": token}
        file.write_text(json.dumps(proof), "utf-8")


@needs_openssl
@pytest.mark.parametrize(("case", "cause", "expected"), [
    ("verifies", "identite_non_liee", "verifies (rfc3161-client) within the season (the close not checked"),
    ("after the close", "preuve_invalide", "is after the close (2000-01-01T00:00:00Z)"),
    ("another chain's token", "preuve_invalide", "timestamp_authority.tsr_base64: does not verify against the "
                                                 "pinned authority: its message imprint is not sha256 of the "
                                                 "anchored 32 bytes"),
    ("no authority given", "identite_non_liee", "not verified (no --tsa-ca given)"),
])
def test_the_rfc_3161_token_is_verified_with_rfc3161_client(world: ScoreWorld, tmp_path: Path, case: str,
                                                           cause: str, expected: str) -> None:
    sub = submission(world, "conf-01", "conforme", HONEST_01)
    tl, authority = TrustLayer(), Authority(tmp_path / "tsa")
    folder = _folder(tmp_path, sub, tl)
    _stamped(folder, authority, other_chain=case == "another chain's token")
    extra = ["--trust-layer-key", tl.key]
    if case != "no authority given":
        extra += ["--tsa-ca", str(authority.ca), "--tsa-cert", str(authority.cert)]
    if case == "after the close":
        extra += ["--season-close", "2000-01-01T00:00:00Z"]
    code, report, _ = _score(world, tmp_path, sub, folder, *extra)
    assert code == 0 and report is not None
    for a in _assertions(report):
        assert a["cause"] == cause and expected in a["detail"], a["detail"]


@needs_openssl
def test_a_token_before_the_anchor_is_before_the_season(world: ScoreWorld, tmp_path: Path) -> None:
    """The season opens after the anchor's time: a token older than it fails condition 1."""
    salt = tmp_path / "salt.hex"
    freeze(world.root, world.root / CONFORMITE.bareme.file, salt, CONFORMITE.places)
    tl, authority = TrustLayer(), Authority(tmp_path / "tsa")
    pair = anchor_of(world.root)
    # the tokens are stamped now; the anchor is dated 4 minutes ahead, within the allowed clock skew (5 min)
    opening = (datetime.now(UTC) + timedelta(minutes=4)).strftime("%Y-%m-%dT%H:%M:%SZ")
    anchor = tl.proof(pair["request_hash"]["value"], pair["response_hash"]["value"], timestamp=opening)
    (tmp_path / "anchor-proof.json").write_text(json.dumps(anchor), "utf-8")
    assert main(["freeze-anchor", "--root", str(world.root), str(tmp_path / "anchor-proof.json"),
                 "--trust-layer-key", tl.key, "--challenge-key-fingerprint", FINGERPRINT]) == 0
    sub = submission(world, "conf-01", "conforme", HONEST_01)
    folder = _folder(tmp_path, sub, tl)
    _stamped(folder, authority)
    code, report, _ = _score(world, tmp_path, sub, folder, "--salt-file", str(salt), "--tsa-ca", str(authority.ca),
                             "--tsa-cert", str(authority.cert), "--trust-layer-key", tl.key)
    assert code == 0 and report is not None
    for a in _assertions(report):
        assert a["cause"] == "preuve_invalide" and f"before the season opened ({opening}" in a["detail"]
