"""The freeze ceremony with the real Trust Layer's proofs (spec §8.3, §8.5): ``corpus freeze-anchor`` verifies
the proof of the call GET <base URL>/gel offline and publishes it; ``freeze-check`` and ``score`` read it;
no file change undoes the freeze.

The proofs are made here, in the 1.2 shape of ``../shared/trust-layer/proof-1.7.0-anchor.json``, with keys
made at run time: the chain as proof-spec §2 defines it (json + hashlib), the record's hashes from
CONTRACT.md §2 (``score_fixtures``), never from the code under test.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import socket
import threading
from pathlib import Path
from typing import Any

import pytest
from nginx_server import NginxServer, private_folder
from score_fixtures import HONEST_01, ScoreWorld, anchor_of, expected_request_hash, make_score_world, submission
from trackfix import CONFORMITE
from trust_layer_fixtures import FINGERPRINT, TIMESTAMP, TrustLayer

from generator.base.secret_values import new_secret, write_private
from generator.cli.main import main
from generator.contract.freeze import freeze


def _freeze(root: Path, salt: Path) -> None:
    freeze(root, root / CONFORMITE.bareme.file, salt, CONFORMITE.places)


@pytest.fixture()
def frozen(tmp_path: Path) -> tuple[ScoreWorld, Path]:
    world = make_score_world(tmp_path / "world")
    salt = tmp_path / "salt.hex"
    _freeze(world.root, salt)
    return world, salt


def _record_hashes(root: Path) -> tuple[str, str]:
    pair = anchor_of(root)
    return pair["request_hash"]["value"], pair["response_hash"]["value"]


def _write(folder: Path, name: str, value: object) -> Path:
    path = folder / name
    path.write_text(json.dumps(value, indent=2), "utf-8")
    return path


def _anchor(root: Path, proof: Path, tl: TrustLayer, fingerprint: str = FINGERPRINT) -> int:
    return main(["freeze-anchor", "--track", "conformite", "--root", str(root), str(proof),
                 "--trust-layer-key", tl.key, "--challenge-key-fingerprint", fingerprint])


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_freeze_anchor_publishes_and_freeze_check_and_score_read_it(frozen: tuple[ScoreWorld, Path],
                                                                     tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    world, salt = frozen
    tl = TrustLayer()
    proof = tl.proof(*_record_hashes(world.root))
    proof_file = _write(tmp_path, "proof.json", proof)
    assert _anchor(world.root, proof_file, tl) == 0
    err = capsys.readouterr().err
    assert f"made at {TIMESTAMP}" in err and "the season opens after it" in err, err
    assert "its RFC 3161 token is not issued yet" in err  # the proof as the proxy stores it right after the call
    published = json.loads((world.root / "freeze/conformite/anchor.json").read_text("utf-8"))
    assert published["proof"] == proof and published["trust_layer_key"] == tl.key
    assert published["challenge_key_fingerprint"] == FINGERPRINT and published["heure"] == TIMESTAMP
    assert _anchor(world.root, proof_file, tl) == 0  # the same anchor again: nothing to write
    assert "already holds this very anchor" in capsys.readouterr().err
    for extra in ([], ["--anchor", str(proof_file)]):
        assert main(["freeze-check", "--root", str(world.root), "--salt-file", str(salt), "--trust-layer-key",
                     tl.key, *extra]) == 0
        err = capsys.readouterr().err
        assert "chain and signature verified against the pinned key" in err and "passed" in err, err
    # no key pinned: the key anchor.json names is not trusted (docs/season.md)
    assert main(["freeze-check", "--root", str(world.root), "--salt-file", str(salt)]) == 1
    assert "its signature was not checked against a pinned key" in capsys.readouterr().err
    sub = _write(tmp_path, "conf-01.json", submission(world, "conf-01", "conforme", HONEST_01))
    report = tmp_path / "report.json"
    assert main(["score", str(sub), "--root", str(world.root), "--salt-file", str(salt), "--json",
                 str(report), "--trust-layer-key", tl.key]) == 0
    gel = json.loads(report.read_text("utf-8"))["gel"]
    assert gel["statut"] == "verifie" and gel["ancre"] == proof["proof_id"] and TIMESTAMP in gel["detail"]


def _flip(text: str) -> str:
    head, body = text.split(":", 1)
    return f"{head}:{body[:10]}{'A' if body[10] != 'A' else 'B'}{body[11:]}"


@pytest.mark.parametrize(("case", "field"), [
    ("flipped signature", "arkforge_signature: not a signature of its chain hash by the pinned"),
    ("a key other than the pinned one", "arkforge_pubkey: "),
    ("another fingerprint", "parties.buyer_fingerprint: "),
    ("a chain that does not match its fields", "hashes.chain: "),
    ("another resource's request hash", "hashes.request: "),
    ("another record's response hash", "hashes.response: "),
    ("the opened pair", "an opened pair carries no chain hash and no signature"),
    ("the public view", "parties.buyer_fingerprint: missing"),
])
def test_freeze_anchor_refuses_in_one_line_and_writes_nothing(frozen: tuple[ScoreWorld, Path], tmp_path: Path,
                                                             case: str, field: str,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    world, _ = frozen
    tl = TrustLayer()
    request, response = _record_hashes(world.root)
    proof: Any = tl.proof(request, response)
    if case == "flipped signature":
        proof["arkforge_signature"] = _flip(proof["arkforge_signature"])
    elif case == "a key other than the pinned one":
        proof = TrustLayer().proof(request, response)  # well signed, by a key that is not the pinned one
    elif case == "another fingerprint":
        proof = tl.proof(request, response, api_key="a participant's key")
    elif case == "a chain that does not match its fields":
        proof["timestamp"] = "2026-12-02T01:30:24Z"
    elif case == "another resource's request hash":
        proof = tl.proof(expected_request_hash("/catalogue"), response)
    elif case == "another record's response hash":
        other = json.loads((world.root / "freeze/conformite/record.json").read_text("utf-8"))
        other["manifest_hash"] = "0" * 64
        proof = tl.proof(request, hashlib.sha256(json.dumps(other, sort_keys=True, separators=(",", ":"))
                                                 .encode()).hexdigest())
    elif case == "the opened pair":
        proof = anchor_of(world.root)
    elif case == "the public view":
        del proof["parties"], proof["certification_fee"]
    before = _listing(world.root)
    assert _anchor(world.root, _write(tmp_path, "proof.json", proof), tl) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and field in lines[0] and lines[0].endswith("nothing written"), lines
    assert _listing(world.root) == before and not (world.root / "freeze/conformite/anchor.json").exists()


def _published(world: ScoreWorld, tmp_path: Path) -> TrustLayer:
    tl = TrustLayer()
    assert _anchor(world.root, _write(tmp_path, "proof.json", tl.proof(*_record_hashes(world.root))), tl) == 0
    return tl


@pytest.mark.parametrize("change", ["deleted", "a FIFO", "a folder", "a link to /dev/zero", "a link to a copy",
                                    "deleted, no anchor published"])
def test_score_refuses_a_frozen_track_whose_record_changed_kind(frozen: tuple[ScoreWorld, Path], tmp_path: Path,
                                                               change: str,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    world, salt = frozen
    record = world.root / "freeze/conformite/record.json"
    extra: list[str] = []
    if change == "deleted, no anchor published":
        extra = ["--anchor", str(_write(tmp_path, "pair.json", anchor_of(world.root)))]
    else:
        _published(world, tmp_path)
    copy = tmp_path / "record-copy.json"
    shutil.copy(record, copy)
    record.unlink()
    if change == "a FIFO":
        os.mkfifo(record)
    elif change == "a folder":
        record.mkdir()
    elif change == "a link to /dev/zero":
        record.symlink_to("/dev/zero")
    elif change == "a link to a copy":
        record.symlink_to(copy)
    capsys.readouterr()
    sub = _write(tmp_path, "conf-01.json", submission(world, "conf-01", "conforme", HONEST_01))
    report = tmp_path / "report.json"
    code = main(["score", str(sub), "--root", str(world.root), "--salt-file", str(salt), "--json", str(report),
                 *extra])
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and not report.exists(), (out, err)
    lines = err.splitlines()
    assert len(lines) == 1 and "REFUSED" in lines[0] and "record.json" in lines[0], lines
    assert main(["freeze-check", "--root", str(world.root), *extra]) == 1
    assert "record.json" in capsys.readouterr().err


@pytest.mark.parametrize(("edit", "field"), [
    (lambda r: r["cle"].__setitem__("sel", "connu"), "cle.sel: 'connu' is not what corpus freeze writes"),
    (lambda r: r.__setitem__("corpus", "autre"), "corpus: 'autre' is not the manifest's corpus"),
    (lambda r: r["taches"].__setitem__("fichier", "ailleurs.json"), "taches.fichier: 'ailleurs.json'"),
    (lambda r: r.__setitem__("ouverture", "2026-12-03"), "ouverture: unknown field"),
    (lambda r: r["cle"].__setitem__("indice", "x"), "cle.indice: unknown field"),
])
def test_freeze_check_compares_every_field_of_the_record(frozen: tuple[ScoreWorld, Path], edit: Any, field: str,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    world, _ = frozen
    record = world.root / "freeze/conformite/record.json"
    data = json.loads(record.read_text("utf-8"))
    edit(data)
    record.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", "utf-8")
    assert main(["freeze-check", "--root", str(world.root)]) == 1
    err = capsys.readouterr().err
    assert field in err, err


def test_freeze_check_refuses_a_record_whose_bytes_changed_only(frozen: tuple[ScoreWorld, Path],
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    world, _ = frozen
    record = world.root / "freeze/conformite/record.json"
    record.write_text(json.dumps(json.loads(record.read_text("utf-8")), ensure_ascii=False), "utf-8")
    assert main(["freeze-check", "--root", str(world.root)]) == 1
    assert "its bytes are not those corpus freeze writes" in capsys.readouterr().err


def test_a_pinned_key_other_than_the_published_one_fails(frozen: tuple[ScoreWorld, Path], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    world, _ = frozen
    _published(world, tmp_path)
    other = TrustLayer().key
    assert main(["freeze-check", "--root", str(world.root), "--trust-layer-key", other]) == 1
    err = capsys.readouterr().err
    assert f"--trust-layer-key {other} is not the Trust Layer key the published anchor was checked" in err
    assert "arkforge_pubkey: " in err


@pytest.mark.parametrize("text", ["null", "[]", '"x"', "3"])
def test_proofs_that_are_no_object_are_one_line_everywhere(frozen: tuple[ScoreWorld, Path], tmp_path: Path,
                                                          text: str, capsys: pytest.CaptureFixture[str]) -> None:
    world, salt = frozen
    proofs = tmp_path / "proofs.json"
    proofs.write_text(text, "utf-8")
    pair = _write(tmp_path, "pair.json", anchor_of(world.root))
    sub = _write(tmp_path, "conf-01.json", submission(world, "conf-01", "conforme", HONEST_01))
    for argv in (["score", str(sub), "--salt-file", str(salt), "--anchor", str(pair)],
                 ["freeze-check", "--anchor", str(pair)]):
        assert main([*argv, "--root", str(world.root), "--proofs", str(proofs)]) == 1
        out, err = capsys.readouterr()
        lines = err.splitlines()
        assert out == "" and len(lines) == 1 and f"{proofs}: expected an object" in lines[0], lines


def test_salt_or_anchor_for_a_track_never_frozen_is_refused(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    world = make_score_world(tmp_path / "world")
    salt = tmp_path / "salt.hex"
    salt.write_text("00" * 32 + "\n", "ascii")
    assert main(["freeze-check", "--root", str(world.root), "--salt-file", str(salt)]) == 1
    assert "--salt-file given, but freeze/conformite/record.json is not there" in capsys.readouterr().err
    secret = tmp_path / "secret"
    write_private(secret, new_secret() + "\n")
    # --url on a track never frozen: refused, not skipped and passed (nothing listens: never called)
    assert main(["freeze-check", "--root", str(world.root), "--url", "http://127.0.0.1:9", "--secret-file",
                 str(secret)]) == 1
    assert "--url given, but freeze/conformite/record.json is not there" in capsys.readouterr().err
    assert main(["freeze-check", "--root", str(world.root), "--url", "http://127.0.0.1:9"]) == 2
    assert "--url needs --secret-file" in capsys.readouterr().err
    sub = _write(tmp_path, "conf-01.json", submission(world, "conf-01", "conforme", HONEST_01))
    assert main(["score", str(sub), "--root", str(world.root), "--salt-file", str(salt)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "--salt-file given, but freeze/conformite/record.json is not there" in err


def test_a_dangling_salt_link_and_a_fifo_submission_are_one_line(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    world = make_score_world(tmp_path / "world")
    salt = tmp_path / "salt.hex"
    salt.symlink_to(tmp_path / "nowhere" / "salt.hex")
    assert main(["freeze", "--root", str(world.root), "--salt-file", str(salt)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and f"{salt}: a symbolic link to" in lines[0] and "dangling" in lines[0], lines
    assert "File exists" not in lines[0] and not (world.root / "freeze/conformite").exists()
    fifo = tmp_path / "conf-01.json"
    os.mkfifo(fifo)
    assert main(["score", str(fifo), "--root", str(world.root)]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"corpus score: {fifo}: not a regular file (a FIFO): give a submission file or a folder of "
                     "them"], lines


def test_freeze_check_compares_the_served_record_byte_for_byte(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    with private_folder("corpus-freeze-anchor-") as folder:
        served = make_score_world(folder / "served")
        _freeze(served.root, tmp_path / "served.salt")
        other = make_score_world(tmp_path / "other")
        _freeze(other.root, tmp_path / "other.salt")  # another salt: another record
        with NginxServer(build_root=served.root) as server:
            for root, code in ((served.root, 0), (other.root, 1)):
                assert main(["freeze-check", "--root", str(root), "--url", server.base_url, "--secret-file",
                             str(server.secret_file)]) == code
                err = capsys.readouterr().err
                expected = (
                    "serves freeze/conformite/record.json byte for byte" if code == 0 else "serves another record")
                assert f"GET {server.base_url}/gel" in err and expected in err, err


@pytest.mark.parametrize(("edit", "field"), [
    (lambda p: p.__setitem__("parties", "x"), "parties.buyer_fingerprint: missing"),
    (lambda p: p.__setitem__("timestamp", 5), "timestamp: expected a string"),
    (lambda p: p.__setitem__("hashes", []), "hashes.request: expected sha256:"),
    (lambda p: p.__setitem__("arkforge_signature", "ed25519:@@"), "arkforge_signature: expected an Ed25519"),
    (lambda p: p.__setitem__("arkforge_pubkey", 7), "arkforge_pubkey: expected a string"),
    (lambda p: p.__setitem__("spec_version", 1.2), "spec_version: expected a string"),
    (lambda p: p["certification_fee"].__setitem__("transaction_id", 0), "certification_fee.transaction_id: "),
])
def test_a_malformed_proof_is_one_line_naming_its_field(frozen: tuple[ScoreWorld, Path], tmp_path: Path,
                                                        edit: Any, field: str,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    world, _ = frozen
    tl = TrustLayer()
    proof = tl.proof(*_record_hashes(world.root))
    edit(proof)
    before = _listing(world.root)
    assert _anchor(world.root, _write(tmp_path, "proof.json", proof), tl) == 1
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and field in lines[0] and "Traceback" not in lines[0], lines
    assert _listing(world.root) == before


def test_a_deleted_record_beside_its_anchor_stops_build_and_freeze(frozen: tuple[ScoreWorld, Path], tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    world, _ = frozen
    _published(world, tmp_path)
    (world.root / "freeze/conformite/record.json").unlink()
    capsys.readouterr()
    assert main(["build", "--root", str(world.root), "--track", "conformite"]) == 1
    assert "record.json: missing, while freeze/conformite/anchor.json anchors it" in capsys.readouterr().err
    assert main(["freeze", "--root", str(world.root), "--salt-file", str(tmp_path / "new.salt")]) == 1
    err = capsys.readouterr().err
    assert "freeze/conformite/anchor.json exists" in err and not (
        world.root / "freeze/conformite/record.json").exists()
    assert not (tmp_path / "new.salt").exists()


def test_a_served_record_cut_short_is_one_line_naming_the_url(frozen: tuple[ScoreWorld, Path], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A server that promises 100 bytes and closes after 10: urllib3's own read error, one line, no traceback."""
    world, _ = frozen
    secret = tmp_path / "secret"
    write_private(secret, new_secret() + "\n")
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(10)

        def answer_cut_short() -> None:
            with contextlib.suppress(OSError):
                connection, _ = listener.accept()
                with connection:
                    connection.settimeout(10)
                    connection.recv(65536)
                    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                       b"Content-Length: 100\r\n\r\n{\"gel\": 1}")

        server = threading.Thread(target=answer_cut_short, daemon=True)
        server.start()
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        code = main(["freeze-check", "--root", str(world.root), "--url", url, "--secret-file", str(secret),
                     "--timeout", "10"])
        server.join(10)
    err = capsys.readouterr().err
    assert code == 1 and f"GET {url}/gel" in err and "no answer (IncompleteRead)" in err, err
    assert "Traceback" not in err
