"""The freeze, the anchor and the score under hostile input (issue 34): proof times, proof ids, links, a slow
server, the pinned key, empty names and the messages themselves.

Each case is a command an operator or a participant could run: it exits non-zero with one line naming the
file or the value (``freeze-check`` lists its problems, one per line, then ``FAILED``), never a traceback,
never a hang, and writes nothing (the checkout and the folder beside it are listed before and after).
Proofs are made as Trust Layer makes them (``trust_layer_fixtures``, keys made at run time); the record's
hashes come from CONTRACT.md §2 (``score_fixtures.anchor_of``), never from the code under test. The slow
server is a real loopback socket in a thread; an unreadable folder is made real for root too, by running
the command in a child process without the capabilities that let root read any file.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from cli_run import Ran, child_limits, run_corpus
from nginx_server import NginxServer, private_folder
from score_fixtures import HONEST_01, ScoreWorld, anchor_of, make_score_world, submission
from trackfix import CONFORMITE, ROOT
from trust_layer_fixtures import FINGERPRINT, TrustLayer

from generator.base.secret_values import new_secret, write_private
from generator.contract.freeze import freeze
from generator.trust_layer.anchor_time import CLOCK_SKEW, AnchorTimeError, check_anchor_time, parse_instant
from generator.trust_layer.trust_proof import ProofError, check_proof_id

TL = TrustLayer()  # one signing key for the module: each test makes its own proofs with it


def _instant(delta: timedelta) -> str:
    return (datetime.now(UTC) + delta).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class World:
    """A frozen conformité checkout (``root``), its salt and a folder beside it (``folder``) for the inputs."""

    folder: Path
    root: Path
    salt: Path

    @property
    def freeze_dir(self) -> Path:
        return self.root / "freeze" / "conformite"

    def write(self, name: str, value: Any) -> Path:
        path = self.folder / name
        path.write_text(value if isinstance(value, str) else json.dumps(value, indent=2), "utf-8")
        return path

    def proof(self, **changes: Any) -> dict[str, Any]:
        pair = anchor_of(self.root)
        return TL.proof(pair["request_hash"]["value"], pair["response_hash"]["value"], **changes)

    def publish(self, proof: dict[str, Any], key: str = TL.key) -> Path:
        """``anchor.json`` as ``corpus freeze-anchor`` writes it, made here by hand (any time, any key)."""
        document = {"format": "corpus-anchor/1", "proof_id": proof["proof_id"], "heure": proof["timestamp"],
                    "trust_layer_key": key, "challenge_key_fingerprint": FINGERPRINT, "proof": proof}
        path = self.freeze_dir / "anchor.json"
        path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", "utf-8")
        return path

    def submission(self) -> Path:
        return self.write("conf-01.json", submission(ScoreWorld(self.root), "conf-01", "conforme", HONEST_01))

    def listing(self) -> dict[str, object]:
        """Every entry under the folder (the checkout included), with what it is: nothing may change."""
        out: dict[str, object] = {}
        for path in sorted(self.folder.rglob("*")):
            rel = path.relative_to(self.folder).as_posix()
            out[rel] = (os.readlink(path) if path.is_symlink() else "dir" if path.is_dir() else
                        path.stat().st_size)
        return out


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile-freeze")
    world = make_score_world(folder / "root")
    freeze(world.root, world.root / CONFORMITE.bareme.file, folder / "salt.hex", CONFORMITE.places)
    return folder


@pytest.fixture
def world(pristine: Path, tmp_path: Path) -> World:
    folder = tmp_path / "w"
    shutil.copytree(pristine, folder, symlinks=True)
    return World(folder, folder / "root", folder / "salt.hex")


def corpus(*argv: str | Path) -> Ran:
    return run_corpus(*(str(a) for a in argv))


def unprivileged(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    """The command in a child process that cannot read past a file's mode, even as root (20 s at most)."""
    return subprocess.run([sys.executable, "-m", "generator.cli", *(str(a) for a in argv)], capture_output=True,
                          text=True, timeout=20, check=False, cwd=ROOT, preexec_fn=child_limits(True))


def refused(w: World, argv: list[str | Path], *says: str, code: int = 1,
            run: Any = corpus) -> str:
    """``argv`` exits ``code`` with one line ``corpus CMD: ...`` holding every text of ``says`` (``freeze-check``:
    its problem lines then ``FAILED``), no traceback, bounded, and the folder unchanged. Returns stderr."""
    before = w.listing()
    result = run(*argv)
    err = result.stderr
    assert result.returncode == code, err
    assert "Traceback" not in err and result.stdout == "", err
    lines = err.splitlines()
    command = str(argv[0])
    if command == "freeze-check" and lines[-1:] == ["corpus freeze-check: FAILED"]:
        lines = lines[:-1]  # the check's problems, one line each
        assert lines, err
    else:
        assert len(lines) == 1, lines  # a file that cannot be used at all: one line
    assert all(line.startswith(f"corpus {command}") for line in lines), lines
    assert any(all(text in line for text in says) for line in lines), (says, lines)
    assert all(len(line) < 2000 for line in lines), [len(line) for line in lines]
    assert w.listing() == before
    return err


def anchor_cmd(w: World, proof: Path, key: str = TL.key) -> list[str | Path]:
    return ["freeze-anchor", "--root", w.root, proof, "--trust-layer-key", key, "--challenge-key-fingerprint",
            FINGERPRINT]


def check_cmd(w: World, *extra: str | Path) -> list[str | Path]:
    return ["freeze-check", "--root", w.root, *extra]


def score_cmd(w: World, *extra: str | Path) -> list[str | Path]:
    return ["score", w.submission(), "--root", w.root, "--salt-file", w.salt, *extra]


# ---------------------------------------------------------------------------------- 1. proof times

BAD_TIMES = [
    ("yesterday", "is not an ISO 8601 UTC instant"),
    ("2026-02-30T25:61:00Z", "is no instant"),
    ("2026-02-30T12:00:00Z", "is no instant"),
    ("2026-12-02T01:30:23+02:00", "is not an ISO 8601 UTC instant"),
    ("2026-12-02 01:30:23", "is not an ISO 8601 UTC instant"),
    ("", "is not an ISO 8601 UTC instant"),
    ("2099-01-01T00:00:00Z", "lies ahead of now"),
    ("+10 minutes", "lies ahead of now"),
    ("2020-01-01T00:00:00Z", "is before the freeze record it anchors was served"),
    ("2026-12-02T01:20:00Z", "is before the freeze record it anchors was served"),
]


def _time(text: str) -> str:
    return _instant(timedelta(minutes=10)) if text == "+10 minutes" else text


@pytest.mark.parametrize(("when", "says"), BAD_TIMES)
@pytest.mark.parametrize("command", ["freeze-anchor", "freeze-check --anchor", "freeze-check published",
                                     "score --anchor", "score published"])
def test_an_anchoring_proof_of_a_bad_time_is_refused(world: World, when: str, says: str, command: str) -> None:
    w = world
    proof = w.proof(timestamp=_time(when))
    if command == "freeze-anchor":
        refused(w, anchor_cmd(w, w.write("proof.json", proof)), "timestamp: ", says, "nothing written")
        assert not (w.freeze_dir / "anchor.json").exists()
    elif command.endswith("--anchor"):
        anchor = w.write("proof.json", proof)
        argv = (check_cmd(w, "--anchor", anchor, "--trust-layer-key", TL.key) if command.startswith("freeze")
                else score_cmd(w, "--anchor", anchor, "--trust-layer-key", TL.key))
        refused(w, argv, "timestamp: ", says)
    else:
        w.publish(proof)
        argv = (check_cmd(w, "--trust-layer-key", TL.key) if command.startswith("freeze")
                else score_cmd(w, "--trust-layer-key", TL.key))
        refused(w, argv, "timestamp: ", says)


def test_a_proof_within_the_clock_skew_opens_the_season_and_is_what_they_print(world: World) -> None:
    w = world
    opening = _instant(CLOCK_SKEW - timedelta(minutes=1))
    proof = w.write("proof.json", w.proof(timestamp=opening))
    done = corpus(*anchor_cmd(w, proof))
    assert done.returncode == 0 and f"made at {opening}" in done.stderr, done.stderr
    done = corpus(*check_cmd(w, "--trust-layer-key", TL.key, "--salt-file", w.salt))
    assert done.returncode == 0 and f"made at {opening}" in done.stderr, done.stderr


def test_the_time_rule_is_one_function_with_a_stated_skew() -> None:
    now = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
    served = datetime(2026, 12, 5, 11, 0, tzinfo=UTC)
    assert check_anchor_time(now + CLOCK_SKEW, served, now) == now + CLOCK_SKEW  # the bound itself is allowed
    assert check_anchor_time(served - CLOCK_SKEW, served, now) == served - CLOCK_SKEW
    assert parse_instant("2026-12-02T01:30:23.250Z", "t") == datetime(2026, 12, 2, 1, 30, 23, 250000, tzinfo=UTC)
    with pytest.raises(AnchorTimeError, match=r"lies ahead of now .* clock skew of 5 minutes"):
        check_anchor_time(now + CLOCK_SKEW + timedelta(seconds=1), served, now)
    with pytest.raises(AnchorTimeError, match=r"before the freeze record it anchors was served .* 5 minutes"):
        check_anchor_time(served - CLOCK_SKEW - timedelta(seconds=1), served, now)


# ---------------------------------------------------------------------------------- 2. proof ids

FORM = "is not a proof id of Trust Layer's (prf_YYYYMMDD_HHMMSS_"
BAD_IDS = [("../../x", FORM, "'../../x'"), ("p" * 20_000, FORM, "…"),
           ("prf_20261202_013023_AE4117", FORM, "prf_20261202"), ("prf_2026_013023_ae4117", FORM, "prf_2026_"),
           ("prf_20261202_013023_ae41\n17", FORM, "\\n"), ("", "proof_id: expected a non-empty string", "")]


@pytest.mark.parametrize(("proof_id", "form", "shown"), BAD_IDS)
@pytest.mark.parametrize("command", ["freeze-anchor", "freeze-check --anchor", "freeze-check published",
                                     "score --anchor"])
def test_a_proof_id_not_of_the_proxys_form_is_refused(world: World, proof_id: str, form: str, shown: str,
                                                      command: str) -> None:
    w = world
    proof = w.write("proof.json", w.proof(proof_id=proof_id))
    if command == "freeze-anchor":
        refused(w, anchor_cmd(w, proof), "proof_id: ", form, shown)
    elif command == "freeze-check --anchor":
        refused(w, check_cmd(w, "--anchor", proof, "--trust-layer-key", TL.key), str(proof), form, shown, code=1)
    elif command == "score --anchor":
        refused(w, score_cmd(w, "--anchor", proof, "--trust-layer-key", TL.key), form, shown)
    else:
        w.publish(json.loads(proof.read_text("utf-8")))
        refused(w, check_cmd(w, "--trust-layer-key", TL.key), "anchor.json: proof_id: ", form, shown)


def test_the_proof_id_check_is_one_function() -> None:
    assert check_proof_id("prf_20261202_013023_ae4117") == "prf_20261202_013023_ae4117"
    for bad in ("../../x", "p" * 20_000, None, 7, "prf_20261202_013023_" + "a" * 65):
        with pytest.raises(ProofError, match="proof_id: "):
            check_proof_id(bad)


# ---------------------------------------------------------------------------------- 3. links

LINK_CASES = ["freeze folder a link outside", "freeze folder a link inside", "freeze folder a link loop",
              "record a link loop", "anchor a link outside"]


def _link(w: World, case: str) -> tuple[Path, str]:
    """Make ``case`` in the world; the path the message must name and what it must say."""
    outside = w.folder / "elsewhere"
    if case.startswith("freeze folder"):
        shutil.move(w.freeze_dir, outside)
        if case.endswith("outside"):
            w.freeze_dir.symlink_to(outside)
        elif case.endswith("inside"):
            shutil.move(outside, w.root / "gel-ailleurs")
            w.freeze_dir.symlink_to("gel-ailleurs")
        else:
            w.freeze_dir.symlink_to(w.freeze_dir.name)  # itself
    elif case == "record a link loop":
        (w.freeze_dir / "record.json").unlink(missing_ok=True)
        (w.freeze_dir / "record.json").symlink_to("record.json")
    else:
        outside.mkdir()
        target = outside / "anchor.json"
        target.write_text("{}", "utf-8")  # what it holds is never read: the link is refused first
        (w.freeze_dir / "anchor.json").symlink_to(target)
    path = w.freeze_dir / ("anchor.json" if case.startswith("anchor") else
                           "record.json" if case.startswith("record") else "")
    return path, "a symbolic link loop" if case.endswith("loop") else "a symbolic link (to "


@pytest.mark.parametrize("case", LINK_CASES)
@pytest.mark.parametrize("command", ["freeze", "freeze-anchor", "freeze-check", "score"])
def test_a_freeze_place_that_is_a_link_is_refused(world: World, case: str, command: str) -> None:
    w = world
    proof = w.write("proof.json", w.proof())
    if command == "freeze":  # a new season's record must not be written through the link
        (w.freeze_dir / "record.json").unlink()
    named, says = _link(w, case)
    named = Path(str(named).rstrip("/"))
    argv: list[str | Path] = {
        "freeze": ["freeze", "--root", w.root, "--salt-file", w.folder / "new.salt"],
        "freeze-anchor": anchor_cmd(w, proof),
        "freeze-check": check_cmd(w, "--trust-layer-key", TL.key),
        "score": score_cmd(w, "--trust-layer-key", TL.key),
    }[command]
    refused(w, argv, str(named), says)
    assert not (w.folder / "new.salt").exists()  # nor a salt made for a record that is not written


@pytest.mark.parametrize("command", ["freeze", "freeze-anchor", "freeze-check", "score"])
def test_an_unreadable_freeze_folder_is_permission_denied_not_not_found(world: World, command: str) -> None:
    w = world
    proof = w.write("proof.json", w.proof())
    argv: list[str | Path] = {
        "freeze": ["freeze", "--root", w.root, "--salt-file", w.folder / "new.salt"],
        "freeze-anchor": anchor_cmd(w, proof),
        "freeze-check": check_cmd(w, "--trust-layer-key", TL.key),
        "score": score_cmd(w, "--trust-layer-key", TL.key),
    }[command]
    os.chmod(w.freeze_dir, 0o000)
    try:
        err = refused(w, argv, "freeze", "permission denied", run=unprivileged)
    finally:
        os.chmod(w.freeze_dir, 0o755)
    assert "not found" not in err and "not frozen" not in err, err


# ---------------------------------------------------------------------------------- 4. freeze-check --url

@contextlib.contextmanager
def dripping_server(what: str) -> Iterator[tuple[str, list[float]]]:
    """A loopback server that answers one byte every half second (``what``: the headers or the body), for at
    most 15 s; yields its URL and the times at which its connections ended."""
    stop, ended = threading.Event(), []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(15)

        def serve() -> None:
            with contextlib.suppress(OSError):
                connection, _ = listener.accept()
                with connection:
                    connection.recv(65536)
                    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 4000\r\n\r\n"
                    if what == "body":
                        connection.sendall(head)
                    data = head + b"x" * 4000 if what == "headers" else b"x" * 4000
                    deadline = time.monotonic() + 15
                    for byte in data:
                        if stop.is_set() or time.monotonic() > deadline:
                            break
                        connection.sendall(bytes([byte]))
                        time.sleep(0.5)
            ended.append(time.monotonic())

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{listener.getsockname()[1]}", ended
        finally:
            stop.set()
            thread.join(20)


def _secret(w: World) -> Path:
    path = w.folder / "secret"
    if not path.exists():
        write_private(path, new_secret() + "\n")
    return path


@pytest.mark.parametrize("what", ["headers", "body"])
def test_a_server_that_drips_fails_at_the_deadline(world: World, what: str) -> None:
    w = world
    secret = _secret(w)
    with dripping_server(what) as (url, _):
        started = time.monotonic()
        refused(w, check_cmd(w, "--url", url, "--secret-file", secret, "--timeout", "1.5",
                             "--trust-layer-key", TL.key),
                f"GET {url}/gel: no complete answer within --timeout 1.5 s")
        took = time.monotonic() - started
    assert took < 5, took  # the deadline (1.5 s) and the command around it, not 4000 bytes at 2 per second


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "-inf", "1e400", "abc", ""])
def test_a_timeout_that_is_no_finite_positive_number_is_refused(world: World, value: str) -> None:
    w = world
    refused(w, check_cmd(w, "--url", "http://127.0.0.1:9", "--secret-file", _secret(w), f"--timeout={value}"),
            "argument --timeout", "expected a finite number of seconds above 0", code=2)


@pytest.mark.parametrize("case", ["not a certificate", "empty", "a folder", "missing", "a private key"])
def test_a_ca_that_is_no_certificate_is_named_before_any_connection(world: World, case: str) -> None:
    w = world
    ca = w.folder / "ca.pem"
    if case == "not a certificate":
        ca.write_text("hello\n", "ascii")
    elif case == "empty":
        ca.write_text("", "ascii")
    elif case == "a folder":
        ca.mkdir()
    elif case == "a private key":
        ca.write_text("-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n",
                      "ascii")
    says = {"missing": "no such file", "a folder": "a folder, not a PEM file", "empty": "empty; give a PEM CA",
            "a private key": "not a PEM CA certificate (holds private key)"}.get(case, "not a PEM CA certificate")
    with socket.create_server(("127.0.0.1", 0)) as listener:
        url = f"https://127.0.0.1:{listener.getsockname()[1]}"
        refused(w, check_cmd(w, "--url", url, "--secret-file", _secret(w), "--ca", ca), str(ca), says)
        listener.settimeout(0.2)
        with pytest.raises(TimeoutError):
            listener.accept()  # no connection was attempted


# ---------------------------------------------------------------------------------- 5. the pinned key

def _pin(w: World, key: str) -> None:
    track = w.root / "tracks" / "conformite" / "track.yaml"
    track.write_text(track.read_text("utf-8") + f"trust_layer_key: {key}\n", "utf-8")


def test_an_anchor_remade_with_another_key_never_passes_a_plain_check(world: World) -> None:
    w = world
    assert corpus(*anchor_cmd(w, w.write("proof.json", w.proof()))).returncode == 0
    forger = TrustLayer()
    pair = anchor_of(w.root)
    w.freeze_dir.joinpath("anchor.json").unlink()
    w.publish(forger.proof(pair["request_hash"]["value"], pair["response_hash"]["value"]), forger.key)
    says = "its signature was not checked against a pinned key"
    refused(w, check_cmd(w), says)
    refused(w, check_cmd(w, "--salt-file", w.salt), says)
    refused(w, score_cmd(w), says)
    refused(w, check_cmd(w, "--trust-layer-key", TL.key), "arkforge_pubkey: ", "is not the pinned Trust Layer key")
    _pin(w, TL.key)  # the key pinned in the track's configuration
    refused(w, check_cmd(w), "arkforge_pubkey: ", "is not the pinned Trust Layer key")
    refused(w, score_cmd(w), "arkforge_pubkey: ")


def test_a_key_pinned_in_track_yaml_verifies_a_plain_check(world: World) -> None:
    w = world
    assert corpus(*anchor_cmd(w, w.write("proof.json", w.proof()))).returncode == 0
    refused(w, check_cmd(w), "its signature was not checked against a pinned key")
    _pin(w, TL.key)
    done = corpus(*check_cmd(w, "--salt-file", w.salt))
    assert done.returncode == 0 and "verified against the pinned key" in done.stderr, done.stderr


@pytest.mark.parametrize("key", ["ed25519:short", "'ed25519:" + "A" * 44 + "'", "rsa:AAAA", "''"])
def test_a_malformed_pinned_key_in_track_yaml_names_file_and_field(world: World, key: str) -> None:
    w = world
    _pin(w, key)
    before = w.listing()
    done = corpus(*check_cmd(w))
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert "conformite/track.yaml:" in done.stderr and "trust_layer_key" in done.stderr, done.stderr
    assert w.listing() == before


# ---------------------------------------------------------------------------------- 6. empty names, the close

@pytest.mark.parametrize("close", ["yesterday", "2026-02-30T25:61:00Z", "2026-12-31", "",
                                   "2026-12-31T00:00:00+01:00"])
@pytest.mark.parametrize("proofs", [False, True])
def test_season_close_is_an_instant_with_or_without_proofs(world: World, close: str, proofs: bool) -> None:
    w = world
    extra: list[str | Path] = ["--proofs", w.write("proofs.json", "{}")] if proofs else []
    refused(w, score_cmd(w, "--season-close", close, *extra), "argument --season-close", code=2)


@pytest.mark.parametrize(("name", "shown"), [("", "no track '' in tracks/"), ("a\nb", "no track 'a\\nb' in"),
                                             ("x" * 20_000, "(20000 characters) in tracks/")])
@pytest.mark.parametrize("command", ["score", "freeze-check", "freeze", "freeze-anchor", "manifest-hash", "check"])
def test_a_track_name_that_names_no_track_is_no_track(world: World, command: str, name: str, shown: str) -> None:
    w = world
    argv: list[str | Path] = {
        "score": score_cmd(w),
        "freeze-check": check_cmd(w),
        "freeze": ["freeze", "--root", w.root, "--salt-file", w.folder / "new.salt"],
        "freeze-anchor": anchor_cmd(w, w.write("proof.json", w.proof())),
        "manifest-hash": ["manifest-hash", "--root", w.root],
        "check": ["check", "--root", w.root],
    }[command]
    before = w.listing()
    done = corpus(*argv, "--track", name)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert shown in done.stderr and len(done.stderr) < 1000, done.stderr
    assert done.stderr.count("\n") == 2, done.stderr  # the located problem, then the count of errors
    assert w.listing() == before


@pytest.mark.parametrize("name", ["", " ", "\t"])
def test_render_nginx_refuses_an_empty_server_name(world: World, name: str) -> None:
    w = world
    refused(w, ["render-nginx", "--root", w.root, "--prefix", w.folder / "prefix", "--server-name", name],
            "argument --server-name", "an empty server name", code=2)
    assert not (w.folder / "prefix").exists()


# ---------------------------------------------------------------------------------- 7. messages

def test_a_long_key_name_in_an_anchor_is_cut(world: World) -> None:
    w = world
    proof = w.proof()
    document = {"format": "corpus-anchor/1", "proof_id": proof["proof_id"], "heure": proof["timestamp"],
                "trust_layer_key": TL.key, "challenge_key_fingerprint": FINGERPRINT, "proof": proof,
                "k" * 20_000: 1, "a\nb": 2}
    (w.freeze_dir / "anchor.json").write_text(json.dumps(document), "utf-8")
    err = refused(w, check_cmd(w, "--trust-layer-key", TL.key), "unknown field of a corpus-anchor/1 anchor")
    assert "k" * 200 not in err


@pytest.mark.parametrize("command", ["freeze-anchor", "freeze-check --anchor", "score --anchor", "score --proofs"])
def test_a_file_name_holding_a_newline_stays_one_line(world: World, command: str) -> None:
    w = world
    odd = w.folder / "pro\nof.json"
    odd.write_text("{not json", "utf-8")
    argv = {"freeze-anchor": anchor_cmd(w, odd),
            "freeze-check --anchor": check_cmd(w, "--anchor", odd, "--trust-layer-key", TL.key),
            "score --anchor": score_cmd(w, "--anchor", odd, "--trust-layer-key", TL.key),
            "score --proofs": score_cmd(w, "--proofs", odd)}[command]
    refused(w, argv, "pro\\nof.json")


@pytest.mark.parametrize("command", ["freeze-anchor", "freeze-check --anchor"])
def test_a_very_long_missing_path_is_cut(world: World, command: str) -> None:
    w = world
    deep = w.folder / ("d" * 200) / ("e" * 200) / "proof.json"
    argv = anchor_cmd(w, deep) if command == "freeze-anchor" else check_cmd(w, "--anchor", deep)
    err = refused(w, argv, "proof.json", "characters)")
    assert "d" * 200 not in err


@pytest.mark.parametrize("command", ["score --proofs", "freeze-check --proofs"])
def test_a_too_deep_proofs_file_is_called_a_proofs_file(world: World, command: str) -> None:
    w = world
    proofs = w.write("proofs.json", "[" * 100_000 + "]" * 100_000)
    pair = w.write("pair.json", anchor_of(w.root))
    argv = (score_cmd(w, "--proofs", proofs) if command.startswith("score") else
            check_cmd(w, "--proofs", proofs, "--anchor", pair))
    err = refused(w, argv, str(proofs))
    assert "submission" not in err and ("proofs file" in err or "nested" in err), err


@pytest.mark.parametrize("case", ["a key of 20,000 characters twice", "a key holding a newline",
                                  "a value of 20,000 characters"])
@pytest.mark.parametrize("command", ["score --proofs", "freeze-check --proofs"])
def test_a_proofs_files_keys_and_values_are_cut_and_one_line(world: World, case: str, command: str) -> None:
    w = world
    long = "k" * 20_000
    text = {"a key of 20,000 characters twice": f'{{"{long}": 1, "{long}": 2}}',
            "a key holding a newline": '{"a\\nb": {"valide": 1}}',
            "a value of 20,000 characters": json.dumps({"prf_x": long})}[case]
    proofs = w.write("proofs.json", text)
    pair = w.write("pair.json", anchor_of(w.root))
    argv = (score_cmd(w, "--proofs", proofs) if command.startswith("score") else
            check_cmd(w, "--proofs", proofs, "--anchor", pair))
    err = refused(w, argv, str(proofs))
    assert long[:300] not in err


def test_a_long_unknown_field_of_the_record_is_cut(world: World) -> None:
    w = world
    record = w.freeze_dir / "record.json"
    data = json.loads(record.read_text("utf-8"))
    data["z" * 20_000] = 1
    record.write_text(json.dumps(data, indent=2) + "\n", "utf-8")
    err = refused(w, check_cmd(w), "unknown field", "characters)")
    assert "z" * 300 not in err


def test_freeze_check_over_tls_reads_the_record_with_the_ca_given(pristine: Path) -> None:
    """The bounded fetch is a real HTTPS client: the record compared byte for byte through a real nginx with
    --ca; without it, the local CA is unknown and the check fails in one line (no traceback, no hang)."""
    with private_folder("corpus-hostile-freeze-tls-") as folder:
        shutil.copytree(pristine / "root", folder / "root", symlinks=True)
        with NginxServer(build_root=folder / "root", tls=True) as server:
            assert server.local_tls is not None
            argv = ["freeze-check", "--root", folder / "root", "--url", server.base_url, "--secret-file",
                    server.secret_file, "--timeout", "5"]
            done = corpus(*argv, "--ca", server.local_tls.ca)
            assert "serves freeze/conformite/record.json byte for byte" in done.stderr, done.stderr
            done = corpus(*argv)
            assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
            assert f"GET {server.base_url}/gel: no answer (SSLCertVerificationError)" in done.stderr, done.stderr


@pytest.mark.parametrize("url", ["http://", "http://host:99999", "http://[::1", "https://127.0.0.1:0", "ftp://x",
                                 "http://a\nb", "127.0.0.1:8080"])
def test_a_url_that_is_no_server_url_is_refused_before_anything(world: World, url: str) -> None:
    w = world
    refused(w, check_cmd(w, "--url", url, "--secret-file", _secret(w)), "argument --url", code=2)


@pytest.mark.parametrize("name", ["a\nb.tar", "d" * 200 + "/" + "d" * 200 + ".tar"])
def test_release_install_names_an_odd_artifact_on_one_line(world: World, name: str) -> None:
    w = world
    (w.folder / "releases").mkdir()
    artifact = w.folder / name
    artifact.parent.mkdir(exist_ok=True)
    artifact.write_bytes(b"")
    err = refused(w, ["release", "install", artifact, "--releases", w.folder / "releases"],
                  "not named <release hash>.tar")
    assert "d" * 250 not in err
