"""The season's pins (issue 39 point 1): ``corpus pin`` writes them once per track, every command reads them,
a flag overrides one; a broken or swapped pin is one line naming it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from cli_run import run_corpus
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from trackfix import copy_tracks

from generator.score.close_inputs import Pins
from generator.score.season_pins import pins_lines, read_pins, with_pins
from generator.tracks.loader import track_named

KEY = "ed25519:A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg"  # CONTRACT §8's worked vector
OTHER_KEY = "ed25519:" + "B" * 43


def _ca(path: Path, name: str = "Autorité fictive") -> Path:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
            .serial_number(1).not_valid_before(now).not_valid_after(now + dt.timedelta(days=2))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    checkout = tmp_path / "checkout"
    copy_tracks(checkout)
    return checkout


def _pin(root: Path, *args: str) -> tuple[int, str, str]:
    ran = run_corpus("pin", "--root", str(root), "--track", "conformite", *args)
    return ran.returncode, ran.stdout, ran.stderr


def test_pin_writes_the_file_once_and_each_run_keeps_what_it_is_not_given(root: Path, tmp_path: Path) -> None:
    ca = _ca(tmp_path / "ca.pem")
    key_file = tmp_path / "challenge.key"
    key_file.write_text("mcp_free_fictive-challenge\n", "ascii")
    code, out, err = _pin(root, "--trust-layer-key", KEY, "--tsa-ca", str(ca), "--challenge-key-file",
                          str(key_file), "--trust-layer-url", "https://trust.arkforge.tech/")
    assert code == 0, err
    assert "wrote freeze/conformite/pins.json" in err and f"trust layer key(s): {KEY}" in out
    assert "mcp_free" not in out + err + (root / "freeze/conformite/pins.json").read_text("utf-8")
    code, out, err = _pin(root, "--season-close", "2026-12-20T23:59:59Z")
    assert code == 0, err
    document = json.loads((root / "freeze/conformite/pins.json").read_bytes())
    assert document["format"] == "corpus-pins/1" and document["trust_layer"]["cles"] == [KEY]
    assert document["trust_layer"]["url"] == "https://trust.arkforge.tech"
    assert document["horodatage"]["ca"]["fichier"] == "tsa-ca.pem" and document["horodatage"]["certificat"] is None
    assert document["saison"] == {"ouverture": None, "cloture": "2026-12-20T23:59:59Z"}
    assert (root / "freeze/conformite/tsa-ca.pem").read_bytes() == ca.read_bytes()
    code, out, _ = _pin(root)
    assert code == 0 and "season close: 2026-12-20T23:59:59Z" in out


@pytest.mark.parametrize(("args", "code", "words"), [
    (["--trust-layer-key", "ed25519:short"], 2, "--trust-layer-key"),
    (["--tsa-cert", "CERT"], 1, "--tsa-cert without --tsa-ca"),
    (["--tsa-ca", "NOT_PEM"], 1, "not PEM certificates"),
    (["--trust-layer-url", "ftp://x"], 2, "not an http(s) URL"),
    (["--season-opening", "2026-12-21T00:00:00Z", "--season-close", "2026-12-20T00:00:00Z"], 1,
     "--season-close 2026-12-20T00:00:00Z is not after the season's opening"),
    (["--season-close", "yesterday"], 2, "not an ISO 8601 UTC instant"),
], ids=["key", "cert-alone", "ca-not-pem", "url", "window", "instant"])
def test_a_bad_pin_is_one_line_and_nothing_is_written(root: Path, tmp_path: Path, args: list[str], code: int,
                                                     words: str) -> None:
    (tmp_path / "NOT_PEM").write_text("not a certificate\n", "ascii")
    (tmp_path / "CERT").write_text("x", "ascii")
    args = [str(tmp_path / a) if a in ("NOT_PEM", "CERT") else a for a in args]
    got, _, err = _pin(root, *args)
    assert got == code and words in err and len(err.splitlines()) == 1, err
    assert not (root / "freeze/conformite/pins.json").exists()


def test_a_swapped_copy_or_an_edited_file_is_named_by_every_command(root: Path, tmp_path: Path) -> None:
    assert _pin(root, "--trust-layer-key", KEY, "--tsa-ca", str(_ca(tmp_path / "ca.pem")))[0] == 0
    _ca(root / "freeze/conformite/tsa-ca.pem", "Une autre autorité")
    ran = run_corpus("freeze-check", "--root", str(root), "--track", "conformite")
    assert ran.returncode == 1 and "tsa-ca.pem: SHA-256" in ran.stderr and "run corpus pin again" in ran.stderr
    path = root / "freeze/conformite/pins.json"
    document = json.loads(path.read_bytes())
    document["trust_layer"]["extra"] = 1
    path.write_text(json.dumps(document), "utf-8")
    ran = run_corpus("freeze-check", "--root", str(root), "--track", "conformite")
    assert ran.returncode == 1 and "pins.json: /trust_layer: unknown field 'extra'" in ran.stderr


def test_a_flag_overrides_its_pin_and_the_authority_is_pinned_whole(root: Path, tmp_path: Path) -> None:
    ca, cert = _ca(tmp_path / "ca.pem"), _ca(tmp_path / "cert.pem", "Signataire")
    assert _pin(root, "--trust-layer-key", KEY, "--tsa-ca", str(ca), "--tsa-cert", str(cert), "--season-close",
                "2026-12-20T23:59:59Z")[0] == 0
    pinned = read_pins(root, track_named(root, "conformite").places)
    assert pinned is not None and pinned.tsa_cert is not None
    merged = with_pins(Pins(), pinned)
    assert merged.trust_layer_keys == (KEY,)
    assert merged.tsa_ca == pinned.tsa_ca and merged.tsa_cert == pinned.tsa_cert
    other = tmp_path / "other-ca.pem"
    merged = with_pins(Pins((OTHER_KEY,), tsa_ca=other), pinned)
    assert merged.trust_layer_keys == (OTHER_KEY,) and merged.tsa_ca == other and merged.tsa_cert is None
    assert merged.season_close == pinned.season_close
    assert with_pins(Pins(), None) == Pins() and pins_lines(Pins())[0] == "trust layer url: not pinned"
