"""The freeze anchored through the proxy (spec §8.3, §8.5): the record served, the call that anchors it, and a
scorer that refuses to score unless the anchor opens to the record.

Every hash is derived here from CONTRACT.md §2 (json + hashlib on the record's bytes), checked first
against the contract's own vector, never taken from the code under test.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from pathlib import Path

import pytest
from nginx_server import NginxServer, private_folder
from score_fixtures import HONEST_01, ScoreWorld, anchor_of, expected_request_hash, make_score_world, submission
from trackfix import CONFORMITE, ROOT, copy_tracks

from generator.cli.main import main
from generator.contract.freeze import freeze


def test_the_independent_request_hash_is_the_contracts_vector() -> None:
    assert expected_request_hash("/agrements/AGR-4417", "https://corpus.arkforge.tech") == \
        "1378d38cdb14483cdbea18463c2a908158202cc6dfba0195dbad8050d1bbaa9c"


@pytest.fixture()
def frozen(tmp_path: Path) -> tuple[ScoreWorld, Path]:
    world = make_score_world(tmp_path / "world")
    salt = tmp_path / "salt.hex"
    freeze(world.root, world.root / CONFORMITE.bareme.file, salt, CONFORMITE.places)
    return world, salt


def _write(folder: Path, name: str, value: object) -> Path:
    path = folder / name
    path.write_text(json.dumps(value), "utf-8")
    return path


def test_freeze_prints_the_call_and_its_two_hashes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = make_score_world(tmp_path / "world")
    assert main(["freeze", "--root", str(world.root), "--salt-file", str(tmp_path / "salt.hex")]) == 0
    err = capsys.readouterr().err
    expected = anchor_of(world.root)
    assert "target: https://corpus.arkforge.tech/gel" in err and "method: GET" in err and "payload: {}" in err
    assert f"request_hash: {expected['request_hash']['value']}" in err
    assert f"response_hash: {expected['response_hash']['value']}" in err


@pytest.mark.parametrize("case", ["good", "record changed by one byte", "anchor of another record",
                                  "anchor of another path", "proof not valid"])
def test_freeze_check_opens_the_anchor(frozen: tuple[ScoreWorld, Path], tmp_path: Path, case: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    world, salt = frozen
    anchor = anchor_of(world.root)
    proofs = {"prf_20261202_013023_a0c401": {"valide": True, "identite_liee": True}}
    record = world.root / "freeze/conformite/record.json"
    if case == "record changed by one byte":
        data = record.read_bytes()
        assert data.count(b"al\xc3\xa9atoires") == 1
        record.write_bytes(data.replace(b"al\xc3\xa9atoires", b"al\xc3\xa9atoireS"))  # one byte, still valid
    elif case == "anchor of another record":
        other = json.loads(record.read_text("utf-8"))
        other["manifest_hash"] = "0" * 64
        digest = hashlib.sha256(json.dumps(other, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        anchor["response_hash"]["value"] = digest
    elif case == "anchor of another path":
        anchor["request_hash"]["value"] = expected_request_hash("/catalogue")
    elif case == "proof not valid":
        proofs["prf_20261202_013023_a0c401"]["valide"] = False
    code = main(["freeze-check", "--root", str(world.root), "--salt-file", str(salt),
                 "--anchor", str(_write(tmp_path, "anchor.json", anchor)),
                 "--proofs", str(_write(tmp_path, "proofs.json", proofs))])
    err = capsys.readouterr().err
    if case == "good":
        opened = ("anchor prf_20261202_013023_a0c401 is the proof of GET https://corpus.arkforge.tech/gel "
                  "answered by the bytes of freeze/conformite/record.json")
        assert code == 0 and opened in err, err
        return
    assert code == 1 and "FAILED" in err
    reason = {"record changed by one byte": "anchors another body", "anchor of another record":
              "anchors another body", "anchor of another path": "anchors another request",
              "proof not valid": "not hold it as valid"}[case]
    assert reason in err, err


def test_the_scorer_refuses_without_the_anchor_and_names_it_when_given(frozen: tuple[ScoreWorld, Path],
                                                                      tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    world, salt = frozen
    sub = _write(tmp_path, "conf-01.json", submission(world, "conf-01", "conforme", HONEST_01))
    report = tmp_path / "report.json"
    args = ["score", str(sub), "--root", str(world.root), "--salt-file", str(salt), "--json", str(report)]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "REFUSED" in err and "give --anchor" in err and not report.exists()
    wrong = anchor_of(world.root)
    wrong["request_hash"]["value"] = expected_request_hash("/gel-bis")
    assert main([*args, "--anchor", str(_write(tmp_path, "wrong.json", wrong))]) == 1
    assert "anchors another request" in capsys.readouterr().err and not report.exists()
    assert main([*args, "--anchor", str(_write(tmp_path, "anchor.json", anchor_of(world.root)))]) == 0
    written = json.loads(report.read_text("utf-8"))
    assert written["gel"]["statut"] == "verifie" and written["gel"]["ancre"] == "prf_20261202_013023_a0c401"
    assert written["reussite"] == 1


def test_the_record_is_served_once_it_exists_and_never_before() -> None:
    with private_folder("corpus-anchor-") as folder:
        root = folder / "root"
        root.mkdir()
        for name in ("build", "manifest"):
            shutil.copytree(ROOT / name, root / name)
        copy_tracks(root)
        root.chmod(0o755)
        with NginxServer(build_root=root) as server:
            before = server.request("/gel")
            assert before.status == 404 and before.body == (
                ROOT / "build/conformite/_systeme/404.json").read_bytes()
            record = b'{\n  "format": "corpus-freeze/2"\n}\n'
            (root / "freeze/conformite").mkdir(mode=0o755, parents=True)
            (root / "freeze/conformite/record.json").write_bytes(record)
            (root / "freeze/conformite/record.json").chmod(0o644)
            for _ in range(30):  # open_file_cache keeps the miss for up to a second
                served = server.request("/gel")
                if served.status == 200:
                    break
                time.sleep(0.1)
            assert served.status == 200 and served.body == record
            assert served.header("Content-Type") == "application/json; charset=utf-8"
            assert "no-store" in served.header("Cache-Control")
            assert server.request("/gel", secret=None).status == 403
            assert server.request("/gel/").status == 404


@pytest.mark.parametrize(("text", "expected"), [
    ('{"proof_id": "a", "proof_id": "b"}', 'the key "proof_id" appears more than once'),
    ("[1]", "expected a JSON object"),
    ('{"proof_id": "p", "request_hash": {"value": "x"}}', "request_hash.nonce: missing"),
    ('{"proof_id": "p", "hashes": {"request": "sha256:AB"}}', "hashes.request: expected sha256:<64 lowercase hex"),
    ("{", "not JSON"),
])
def test_a_bad_anchor_file_is_one_line(frozen: tuple[ScoreWorld, Path], tmp_path: Path, text: str,
                                       expected: str, capsys: pytest.CaptureFixture[str]) -> None:
    world, _ = frozen
    anchor = tmp_path / "anchor.json"
    anchor.write_text(text, "utf-8")
    assert main(["freeze-check", "--root", str(world.root), "--anchor", str(anchor)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"corpus freeze-check: {anchor}:"), lines  # FILE[:L:C]: why
    assert expected in lines[0]
