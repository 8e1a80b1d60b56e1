"""The freeze anchor in proof-spec 3.1 (spec §8.3, §8.5): ``corpus freeze-anchor`` takes the anchoring call's
proof as the proxy serves it to the challenge's key (the ``/full`` view, or the public view plus the owner's
pairs), checks everything of condition 1 and that the owner's pairs open the call of the record served at
``/gel`` with the challenge's key; the season opens at the token's time. The published ``corpus-anchor/2``
keeps the proof, its token and the pinned authority, so ``freeze-check`` and ``score`` verify it again without
the proxy nor the authority's files. Each refusal is its own test; nothing is written then."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from proof_issuer import Issued, Issuer, with_proxy_ids, write_views
from score_fixtures import HONEST_01, ScoreWorld, anchor_of, make_score_world, submission
from trackfix import CONFORMITE
from trust_layer_fixtures import CHALLENGE_KEY, FINGERPRINT, Authority

from generator.cli.main import main
from generator.contract.freeze import freeze

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command (test authority)")


@pytest.fixture()
def frozen(tmp_path: Path) -> tuple[ScoreWorld, Path]:
    world = make_score_world(tmp_path / "world")
    salt = tmp_path / "salt.hex"
    freeze(world.root, world.root / CONFORMITE.bareme.file, salt, CONFORMITE.places)
    return world, salt


@pytest.fixture()
def authority(tmp_path: Path) -> Authority:
    return Authority(tmp_path / "tsa")


def _anchoring_proof(root: Path, issuer: Issuer, *, api_key: str = CHALLENGE_KEY, pending: bool = False,
                     response: str | None = None) -> Issued:
    """The proof of GET <base URL>/gel made with ``api_key``, its hashes from CONTRACT §2 (score_fixtures)."""
    pair = anchor_of(root)
    proof = issuer.proof(pair["request_hash"]["value"], response or pair["response_hash"]["value"],
                         agent_did="did:web:proveit.arkforge.tech", api_key=api_key)
    if not pending:
        issuer.close_batch([proof], others=2)
    return proof


def _anchor(root: Path, view: dict[str, Any], tmp_path: Path, issuer: Issuer, authority: Authority | None,
            fingerprint: str = FINGERPRINT) -> int:
    path = tmp_path / "anchor-proof.json"
    path.write_text(json.dumps(view), "utf-8")
    tsa = ["--tsa-ca", str(authority.ca), "--tsa-cert", str(authority.cert)] if authority else []
    return main(["freeze-anchor", "--root", str(root), str(path), "--trust-layer-key", issuer.key,
                 "--challenge-key-fingerprint", fingerprint, *tsa])


def test_a_3_1_anchor_is_published_and_verified_again_without_the_authority(
        frozen: tuple[ScoreWorld, Path], tmp_path: Path, authority: Authority,
        capsys: pytest.CaptureFixture[str]) -> None:
    world, salt = frozen
    issuer = Issuer(authority)
    proof = _anchoring_proof(world.root, issuer)
    assert _anchor(world.root, proof.full(), tmp_path, issuer, authority) == 0
    err = capsys.readouterr().err
    assert "is the season's opening" in err and "Rekor not checked offline" in err
    published = json.loads((world.root / CONFORMITE.places.anchor).read_text("utf-8"))
    assert published["format"] == "corpus-anchor/2" and published["proof_id"] == proof.proof_id
    assert published["autorite_horodatage"]["ca_pem"] == authority.ca.read_text("ascii")
    assert published["proof"]["timestamp_authority"]["tsr_base64"] == proof.timestamp_authority["tsr_base64"]
    pinned = tmp_path / "pinned"  # the authority's public certificates, kept by the operator as the key is
    pinned.mkdir()
    ca, cert = shutil.copy(authority.ca, pinned / "ca.pem"), shutil.copy(authority.cert, pinned / "tsa.pem")
    shutil.rmtree(authority.folder)  # years later: no authority service at hand, no proxy
    base = ["freeze-check", "--root", str(world.root), "--salt-file", str(salt), "--trust-layer-key", issuer.key]
    assert main(base) == 1  # neither the key nor the authority is taken from the anchor it checks
    assert "was not checked against a pinned authority: give --tsa-ca and --tsa-cert" in capsys.readouterr().err
    assert main([*base, "--tsa-ca", str(ca), "--tsa-cert", str(cert)]) == 0
    err = capsys.readouterr().err
    assert f"its RFC 3161 token at {published['heure']} (the season's opening)" in err and "passed" in err


def test_a_published_anchor_naming_another_authority_fails(frozen: tuple[ScoreWorld, Path], tmp_path: Path,
                                                           authority: Authority,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Trust Layer signs the chain, not the token: an anchor.json whose token and authority were swapped for
    an authority of the forger's own names that authority, which the pinned one is not."""
    world, salt = frozen
    issuer = Issuer(authority)
    assert _anchor(world.root, _anchoring_proof(world.root, issuer).full(), tmp_path, issuer, authority) == 0
    path = world.root / CONFORMITE.places.anchor
    published = json.loads(path.read_text("utf-8"))
    published["autorite_horodatage"]["ca_pem"] = published["autorite_horodatage"]["cert_pem"]
    path.write_text(json.dumps(published, indent=2), "utf-8")
    capsys.readouterr()
    assert main(["freeze-check", "--root", str(world.root), "--salt-file", str(salt), "--trust-layer-key",
                 issuer.key, "--tsa-ca", str(authority.ca), "--tsa-cert", str(authority.cert)]) == 1
    assert "names another timestamp authority than the pinned --tsa-ca/--tsa-cert" in capsys.readouterr().err


def test_the_public_view_plus_the_owners_pairs_is_accepted(frozen: tuple[ScoreWorld, Path], tmp_path: Path,
                                                            authority: Authority) -> None:
    world, _ = frozen
    issuer = Issuer(authority)
    proof = _anchoring_proof(world.root, issuer)
    view = {**proof.public(), "commitment_nonces": proof.nonces, "chain_data": proof.chain_data}
    assert _anchor(world.root, view, tmp_path, issuer, authority) == 0


def test_score_opens_the_season_at_the_anchors_token(frozen: tuple[ScoreWorld, Path], tmp_path: Path,
                                                      authority: Authority,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A participant's 3.1 proofs stamped after the anchor's token are in the season; the gel is verified."""
    world, salt = frozen
    issuer = Issuer(authority)
    assert _anchor(world.root, _anchoring_proof(world.root, issuer).full(), tmp_path, issuer, authority) == 0
    sub = with_proxy_ids(submission(world, "conf-01", "conforme", HONEST_01))
    issued = issuer.proofs_of(sub)
    issuer.close_batch(issued, others=4)
    folder = write_views(tmp_path / "proofs", issued)
    (tmp_path / "conf-01.json").write_text(json.dumps(sub), "utf-8")
    report = tmp_path / "report.json"
    assert main(["score", str(tmp_path / "conf-01.json"), "--root", str(world.root), "--proofs", str(folder),
                 "--salt-file", str(salt), "--tsa-ca", str(authority.ca), "--tsa-cert", str(authority.cert),
                 "--trust-layer-key", issuer.key, "--json", str(report)]) == 0
    result = json.loads(report.read_text("utf-8"))
    assert result["gel"]["statut"] == "verifie" and "spec 3.1: commitments root" in result["gel"]["detail"]
    assert [a["statut"] for t in result["taches"] for a in t["assertions"]] == ["etayee", "etayee"]


def _public_only(proof: Issued, view: dict[str, Any]) -> dict[str, Any]:
    return proof.public()


def _pair_edited(proof: Issued, view: dict[str, Any]) -> dict[str, Any]:
    view["chain_data"]["seller"] = "corpus.example.test"
    return view


def _commitment_flipped(proof: Issued, view: dict[str, Any]) -> dict[str, Any]:
    text = view["commitments"]["response_hash"]
    view["commitments"]["response_hash"] = text[:-1] + ("0" if text[-1] != "0" else "1")
    return view


Edit = Callable[[Issued, dict[str, Any]], dict[str, Any]]


@pytest.mark.parametrize(("edit", "words"), [
    (_public_only, "commitment_nonces and chain_data: missing: give the proof as GET /v1/proof/{id}/full"),
    (_pair_edited, "chain_data.seller: sha256(seller ‖ 0x00 ‖ nonce ‖ canonical_json(value))"),
    (_commitment_flipped, "is not the Merkle root of its commitments"),
], ids=["public view only", "an owner's value edited", "a commitment flipped"])
def test_a_3_1_anchor_is_refused(frozen: tuple[ScoreWorld, Path], tmp_path: Path, authority: Authority,
                                 edit: Edit, words: str, capsys: pytest.CaptureFixture[str]) -> None:
    world, _ = frozen
    issuer = Issuer(authority)
    proof = _anchoring_proof(world.root, issuer)
    assert _anchor(world.root, edit(proof, proof.full()), tmp_path, issuer, authority) == 1
    err = capsys.readouterr().err
    assert words in err and "nothing written" in err, err
    assert not (world.root / CONFORMITE.places.anchor).exists()


@pytest.mark.parametrize(("case", "words"), [
    ("pending", "batch_anchor.status is pending: its batch is not anchored yet"),
    ("another key's call", "chain_data.buyer_fingerprint: opens to"),
    ("another body", "chain_data.response_hash: opens to"),
    ("another authority", "does not verify against the pinned authority"),
])
def test_a_3_1_anchor_of_another_call_or_time_is_refused(frozen: tuple[ScoreWorld, Path], tmp_path: Path,
                                                         authority: Authority, case: str, words: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    world, _ = frozen
    stamping = Authority(tmp_path / "other-tsa") if case == "another authority" else authority
    issuer = Issuer(stamping)
    proof = _anchoring_proof(world.root, issuer, pending=case == "pending",
                             api_key="a participant's key" if case == "another key's call" else CHALLENGE_KEY,
                             response="0" * 64 if case == "another body" else None)
    assert _anchor(world.root, proof.full(), tmp_path, issuer, authority) == 1
    err = capsys.readouterr().err
    assert words in err and "nothing written" in err, err
    assert not (world.root / CONFORMITE.places.anchor).exists()


def test_a_3_1_anchor_needs_the_pinned_authority(frozen: tuple[ScoreWorld, Path], tmp_path: Path,
                                                 authority: Authority, capsys: pytest.CaptureFixture[str]) -> None:
    world, _ = frozen
    issuer = Issuer(authority)
    assert _anchor(world.root, _anchoring_proof(world.root, issuer).full(), tmp_path, issuer, None) == 2
    assert "give --tsa-ca" in capsys.readouterr().err
    assert not (world.root / CONFORMITE.places.anchor).exists()


def test_an_edited_published_anchor_fails_freeze_check(frozen: tuple[ScoreWorld, Path], tmp_path: Path,
                                                       authority: Authority,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    world, salt = frozen
    issuer = Issuer(authority)
    assert _anchor(world.root, _anchoring_proof(world.root, issuer).full(), tmp_path, issuer, authority) == 0
    path = world.root / CONFORMITE.places.anchor
    published = json.loads(path.read_text("utf-8"))
    published["heure"] = "2020-01-01T00:00:00Z"  # an earlier opening would let earlier proofs in
    path.write_text(json.dumps(published, indent=2), "utf-8")
    capsys.readouterr()
    assert main(["freeze-check", "--root", str(world.root), "--salt-file", str(salt), "--trust-layer-key",
                 issuer.key, "--tsa-ca", str(authority.ca), "--tsa-cert", str(authority.cert)]) == 1
    assert "heure: 2020-01-01T00:00:00Z is not the token's time" in capsys.readouterr().err


def test_freeze_check_verifies_a_3_1_anchor_given_with_the_authority(frozen: tuple[ScoreWorld, Path],
                                                                     tmp_path: Path, authority: Authority,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """Before it is published, an anchor is checked with --anchor and the authority pinned on the line."""
    world, salt = frozen
    issuer = Issuer(authority)
    path = tmp_path / "anchor-proof.json"
    path.write_text(json.dumps(_anchoring_proof(world.root, issuer).full()), "utf-8")
    base = ["freeze-check", "--root", str(world.root), "--salt-file", str(salt), "--anchor", str(path),
            "--trust-layer-key", issuer.key, "--challenge-key-fingerprint", FINGERPRINT]
    assert main(base) == 1
    assert "give --tsa-ca and --tsa-cert" in capsys.readouterr().err
    assert main([*base, "--tsa-ca", str(authority.ca), "--tsa-cert", str(authority.cert)]) == 0
    assert "passed" in capsys.readouterr().err


def test_a_3_1_anchor_without_a_pinned_key_is_not_trusted(frozen: tuple[ScoreWorld, Path], tmp_path: Path,
                                                          authority: Authority,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    world, salt = frozen
    issuer = Issuer(authority)
    path = tmp_path / "anchor-proof.json"
    path.write_text(json.dumps(_anchoring_proof(world.root, issuer).full()), "utf-8")
    assert main(["freeze-check", "--root", str(world.root), "--salt-file", str(salt), "--anchor", str(path),
                 "--challenge-key-fingerprint", FINGERPRINT, "--tsa-ca", str(authority.ca), "--tsa-cert",
                 str(authority.cert)]) == 1
    assert "its signature was not checked against a pinned key" in capsys.readouterr().err
