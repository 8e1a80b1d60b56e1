"""A folder of proofs judged as each participant is scored (``score/proof_source.py``, issue 43): each verdict is
the one ``corpus score`` gives the same file (read, parsed strictly, judged), an honest 3.1 proof judged in one
pass and any other by the full path; a file that is no longer a regular file when it is read is refused as
``corpus score`` refuses it; the files are opened from the folder listed."""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from proof_issuer import Issuer
from trust_layer_fixtures import Authority

from generator.score.close_inputs import BadFile, proof_names, read_proof_file
from generator.score.proof_source import FolderProofs
from generator.score.proofs import ProofJudge, SeasonWindow
from generator.trust_layer.tsa_token import Authority as Pinned

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command (test authority)")

DID = "did:key:z6MkFolderParticipant"


@pytest.fixture(scope="module")
def issued(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    authority = Authority(tmp_path_factory.mktemp("source") / "tsa")
    issuer = Issuer(authority)
    proofs = [issuer.proof("ab" * 32, f"{n:02x}" * 32, agent_did=DID, proof_id=f"prf_20261205_110000_{n:06x}")
              for n in range(6)]
    issuer.close_batch(proofs, others=2)
    return {"authority": authority, "issuer": issuer, "proofs": proofs}


def _judge(issued: dict[str, Any]) -> ProofJudge:
    now = datetime.now(UTC)
    authority = issued["authority"]
    return ProofJudge([issued["issuer"].key], SeasonWindow(Pinned(authority.ca, authority.cert),
                                                           now - timedelta(days=1), now + timedelta(days=1)))


def _folder(issued: dict[str, Any], folder: Path) -> list[str]:
    """The proofs written into ``folder``: the first three honest, the others each spoiled another way."""
    folder.mkdir()
    ids = []
    for n, proof in enumerate(issued["proofs"]):
        view = proof.public()
        if n == 3:
            view["commitments"]["seller"] = "sha256:" + "0" * 64  # the chain is no longer their root
        if n == 4:
            view["spec_version"] = "3.0"
        text = json.dumps(view)
        if n == 5:
            text = text.replace('"is_demo": false', '"is_demo": false, "is_demo": true')  # refused as a file
        (folder / f"{proof.proof_id}.json").write_text(text, "utf-8")
        ids.append(proof.proof_id)
    return ids


def test_each_verdict_is_the_one_corpus_score_gives(issued: dict[str, Any], tmp_path: Path) -> None:
    folder = tmp_path / "proofs"
    ids = _folder(issued, folder)
    judge = _judge(issued)
    proofs = FolderProofs(folder, judge)
    found = proofs.verdicts([*ids[:5], "prf_20261205_110000_ffffff"])  # one the folder does not hold
    assert found == {i: _judge(issued).verdict(read_proof_file(folder / f"{i}.json")) for i in ids[:5]}
    assert [found[i]["valide"] for i in ids[:5]] == [True, True, True, False, True]
    assert judge._times  # the honest ones were judged in one pass
    with pytest.raises(BadFile) as refused:
        proofs.verdicts([ids[5]])
    with pytest.raises(BadFile) as expected:
        read_proof_file(folder / f"{ids[5]}.json")
    assert str(refused.value) == str(expected.value)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFO on this system")
def test_a_file_replaced_after_the_listing_is_refused_as_it_now_is(issued: dict[str, Any], tmp_path: Path) -> None:
    folder = tmp_path / "proofs"
    ids = _folder(issued, folder)
    proofs = FolderProofs(folder, _judge(issued))
    (folder / f"{ids[0]}.json").unlink()
    os.mkfifo(folder / f"{ids[0]}.json")
    with pytest.raises(BadFile, match="not a regular file"):
        proofs.verdicts([ids[0]])
    (folder / f"{ids[1]}.json").unlink()
    (folder / f"{ids[1]}.json").symlink_to(folder / f"{ids[2]}.json")  # followed, as corpus score follows it
    with pytest.raises(BadFile, match=f"holds the proof {ids[2]}"):
        proofs.verdicts([ids[1]])


@pytest.mark.parametrize("stray", [".json", "notes.txt", "link.json", "folder.json", "x.json."])
def test_a_folder_holding_anything_else_is_refused_as_corpus_score_does(issued: dict[str, Any], tmp_path: Path,
                                                                       stray: str) -> None:
    folder = tmp_path / "proofs"
    ids = _folder(issued, folder)
    if stray == "link.json":
        (folder / stray).symlink_to(folder / f"{ids[0]}.json")
    elif stray == "folder.json":
        (folder / stray).mkdir()
    else:
        (folder / stray).write_text("{}", "utf-8")
    with pytest.raises(BadFile) as refused:
        FolderProofs(folder, _judge(issued))
    with pytest.raises(BadFile) as expected:
        proof_names(folder)
    assert str(refused.value) == str(expected.value) and stray in str(refused.value)


def test_an_empty_folder_is_refused_as_corpus_score_refuses_it(issued: dict[str, Any], tmp_path: Path) -> None:
    (tmp_path / "proofs").mkdir()
    with pytest.raises(BadFile, match=r"no <proof_id>\.json proof"):
        FolderProofs(tmp_path / "proofs", _judge(issued))
    folder = tmp_path / "named"
    ids = _folder(issued, folder)
    assert FolderProofs(folder, _judge(issued)).names == {f"{i}.json" for i in ids} == set(proof_names(folder))
