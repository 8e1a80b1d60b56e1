"""The TLS files and the state file the serving commands read: one line naming the file, one test per class.

As the compiler's hostile-source tests do: each class of bad file (missing, a dangling link, a folder, a
FIFO, a device, empty, corrupt, the wrong type, a wrong mode, a state file still in use...) gives one
message naming the file and what to do; never a traceback, a hang (a FIFO is not waited on) or a prefix
half written.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from nginx_server import build_copy

from generator.base.errors import TlsError
from generator.base.secret_values import new_secret, write_private
from generator.cli.main import main
from generator.serving.instances.state_file import StateFileError, check_state_target, read_state
from generator.serving.tls.tls_files import check_tls_file
from generator.serving.tls.tls_local import LocalPeer, make_peer_tls


@pytest.fixture(scope="module")
def peer(tmp_path_factory: pytest.TempPathFactory) -> LocalPeer:
    return make_peer_tls(tmp_path_factory.mktemp("peer"), ["127.0.0.2"])


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _link_to_nothing(path: Path) -> Path:
    path.symlink_to(path.with_name("gone"))
    return path


# (class, how to make the bad file from a good one, what the line says)
TLS_CASES: list[tuple[str, str, Callable[[Path, LocalPeer], Path], str]] = [
    ("missing", "ca", lambda d, p: d / "absent.pem", "no such file; give a PEM CA certificate file"),
    ("dangling link", "ca", lambda d, p: _link_to_nothing(d / "link.pem"), "a symbolic link to nothing"),
    ("folder", "certificate", lambda d, p: d, "a folder, not a PEM file"),
    ("FIFO", "certificate", lambda d, p: _fifo(d / "fifo.pem"), "a FIFO, not a PEM file"),
    ("device", "key", lambda d, p: Path("/dev/null"), "a device, not a PEM file"),
    ("empty", "ca", lambda d, p: _write(d / "empty.pem", b"\n"), "empty; give a PEM CA certificate file"),
    ("corrupt", "certificate",
     lambda d, p: _write(d / "bad.pem", b"-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydA==\n"
                                         b"-----END CERTIFICATE-----\n"),
     "corrupt: cannot read a PEM certificate"),
    ("a key given as the certificate", "certificate", lambda d, p: _copy(p.client_key, d / "k.pem"),
     "not a PEM certificate (holds private key)"),
    ("a certificate given as the key", "key", lambda d, p: _copy(p.client_cert, d / "c.pem", 0o600),
     "not a PEM private key (holds certificate)"),
    ("a key other accounts may read", "key", lambda d, p: _copy(p.client_key, d / "open.key", 0o644),
     "mode 0644: a private key must not be readable by other accounts; run: chmod 600"),
    ("an encrypted key", "key", lambda d, p: _encrypted(p.client_key, d / "enc.key"),
     "an encrypted key (nginx would stop to ask for its passphrase)"),
]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _copy(source: Path, path: Path, mode: int = 0o644) -> Path:
    path.write_bytes(source.read_bytes())
    path.chmod(mode)
    return path


def _encrypted(key: Path, path: Path) -> Path:
    subprocess.run(["openssl", "pkey", "-in", str(key), "-out", str(path), "-aes256", "-passout", "pass:secret"],
                   check=True, capture_output=True)
    path.chmod(0o600)
    return path


@pytest.mark.parametrize(("case", "kind", "make", "says"), TLS_CASES, ids=[c[0] for c in TLS_CASES])
def test_a_bad_tls_file_is_one_line(case: str, kind: str, make: Callable[[Path, LocalPeer], Path], says: str,
                                    peer: LocalPeer, tmp_path: Path) -> None:
    path = make(tmp_path, peer)
    with pytest.raises(TlsError) as caught:
        check_tls_file(path, "--peer-ca", kind)
    message = str(caught.value)
    assert message.startswith(f"--peer-ca {path}: ") and says in message and "\n" not in message, message


def test_the_good_files_pass(peer: LocalPeer) -> None:
    """Positive control: the files a topology makes are accepted, each as its kind."""
    for path, kind in ((peer.ca, "ca"), (peer.replica_cert, "certificate"), (peer.client_key, "key")):
        check_tls_file(path, "--peer-ca", kind)


@pytest.fixture
def snapshot() -> Iterator[Path]:
    with build_copy("corpus-serving-files-") as (root, _manifest):
        yield root


def test_render_nginx_with_a_bad_peer_file_is_one_line_and_writes_no_prefix(
        snapshot: Path, peer: LocalPeer, capsys: pytest.CaptureFixture[str]) -> None:
    secret = snapshot.parent / "secret"
    write_private(secret, new_secret() + "\n")
    prefix = snapshot.parent / "prefix"
    base = ["render-nginx", "--root", str(snapshot), "--prefix", str(prefix), "--port", "18199",
            "--secret-file", str(secret), "--tls-cert", str(peer.replica_cert), "--tls-key", str(peer.replica_key)]
    assert main([*base, "--peer-ca", str(snapshot.parent)]) == 1
    err = capsys.readouterr().err
    assert err == f"corpus render-nginx: --peer-ca {snapshot.parent}: a folder, not a PEM file; give a PEM CA " \
                  "certificate file\n"
    assert not (prefix / "conf").exists()
    # neither mutual TLS nor the development option: refused, saying both ways
    assert main(base) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--peer-ca CA --tls-cert CERT --tls-key KEY" in err
    assert "--plain-replica" in err
    assert main([*base, "--plain-replica", "--peer-ca", str(peer.ca)]) == 1
    assert "contradict" in capsys.readouterr().err
    assert main([*base, "--peer-ca", str(peer.ca)]) == 0  # positive control
    saved = json.loads((prefix / "conf" / "settings.json").read_text())
    assert saved["peer_tls"] == {"ca": str(peer.ca.resolve()), "cert": None, "key": None}


# ------------------------------------------------------------------------------------- state file

GOOD_STATE = {"frontal": "https://127.0.0.1:8443", "ca": "/x/ca.crt",
              "replicas": [{"address": "127.0.0.2:8081", "pid": 2 ** 22 + 1}], "frontals": []}
STATE_CASES: list[tuple[str, Callable[[Path], Path], str]] = [
    ("dangling link", lambda d: _link_to_nothing(d / "state.json"), "a symbolic link to nothing"),
    ("folder", lambda d: d, "a folder, not a file"),
    ("FIFO", lambda d: _fifo(d / "state.json"), "a FIFO, not a file"),
    ("device", lambda d: Path("/dev/null"), "a device, not a file"),
    ("missing folder", lambda d: d / "no" / "state.json", "does not exist; create it first"),
    ("empty", lambda d: _write(d / "state.json", b""), "empty; not a state file of corpus serve"),
    ("corrupt", lambda d: _write(d / "state.json", b'{"frontal": '), "not valid JSON; not a state file"),
    ("wrong JSON type", lambda d: _write(d / "state.json", b"[1, 2]"), "expected a JSON object, got list"),
    ("wrong field type", lambda d: _write(d / "state.json", json.dumps({**GOOD_STATE, "replicas": {}}).encode()),
     "replicas: expected a list of {address, pid}"),
    ("masters still running", lambda d: _write(d / "state.json", json.dumps(
        {**GOOD_STATE, "frontals": [{"address": "127.0.0.1:1", "pid": _nginx_like_pid()}]}).encode()),
     "names nginx masters that still run"),
]


def _nginx_like_pid() -> int:
    """A live process whose command line says nginx (a sleeping shell named so), stopped at exit."""
    import time

    child = subprocess.Popen(["bash", "-c", "exec -a nginx-lookalike sleep 30"])
    _CHILDREN.append(child)
    deadline = time.monotonic() + 5
    while b"nginx" not in Path(f"/proc/{child.pid}/cmdline").read_bytes():  # until the exec happened
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return child.pid


_CHILDREN: list[subprocess.Popen[bytes]] = []


@pytest.fixture(autouse=True)
def _no_children_left() -> Iterator[None]:
    yield
    while _CHILDREN:
        child = _CHILDREN.pop()
        child.kill()
        child.wait()


@pytest.mark.parametrize(("case", "make", "says"), STATE_CASES, ids=[c[0] for c in STATE_CASES])
def test_a_bad_state_file_is_one_line(case: str, make: Callable[[Path], Path], says: str, tmp_path: Path) -> None:
    path = make(tmp_path)
    with pytest.raises(StateFileError) as caught:
        check_state_target(path)
    message = str(caught.value)
    assert str(path) in message and says in message and "\n" not in message, message


def test_a_state_file_left_by_a_dead_run_is_replaced_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    assert check_state_target(path) is None  # absent: fine
    path.write_text(json.dumps(GOOD_STATE))
    assert read_state(path) == GOOD_STATE
    note = check_state_target(path)  # its pid runs no nginx
    assert note is not None and "replaced" in note


def test_serve_with_a_bad_state_file_is_one_line_and_starts_nothing(
        snapshot: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prefix = snapshot.parent / "prefix"
    code = main(["serve", "--root", str(snapshot), "--no-build", "--replicas", "1", "--prefix", str(prefix),
                 "--state-file", str(snapshot.parent)])
    err = capsys.readouterr().err
    assert code == 1 and err == f"corpus serve: --state-file {snapshot.parent}: a folder, not a file; give the " \
                                "path of a file to write\n"
    assert not (prefix / "replica-1").exists()


# ------------------------------------------------------------------- serve's options, judged first

SERVE_REFUSALS: list[tuple[str, list[str], int, str]] = [
    ("a state file inside the served build", ["--replicas", "1", "--state-file", "{root}/build/state.json"], 2,
     "--state-file {root}/build/state.json: resolves to {root}/build/state.json, inside build/ of the checkout"),
    ("a topology option without --replicas", ["--state-file", "{folder}/state.json"], 2,
     "--state-file goes with --replicas N"),
    ("--replica-port without --replicas", ["--replica-port", "18081"], 2, "--replica-port goes with --replicas N"),
    ("more replicas than addresses", ["--replicas", "2", "--replica", "127.0.0.2:18081"], 1,
     "--replicas 2 but 1 --replica address(es)"),
    ("a replica given twice", ["--replica", "127.0.0.2:18081", "--replica", "127.0.0.2:18081"], 1,
     "--replica '127.0.0.2:18081': given twice"),
    ("a replica on the frontal's address", ["--replica", "127.0.0.1:18443", "--port", "18443"], 1,
     "--replica 127.0.0.1:18443 is the frontal's own address"),
    ("not an address", ["--replica", "127.0.0.2:99999"], 1,
     "--replica '127.0.0.2:99999': expected HOST or HOST:PORT"),
]


@pytest.mark.parametrize(("case", "extra", "code", "says"), SERVE_REFUSALS, ids=[c[0] for c in SERVE_REFUSALS])
def test_serve_refuses_an_option_it_cannot_honour_before_anything_else(
        snapshot: Path, case: str, extra: list[str], code: int, says: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Never silently ignored: one line, and nothing printed, built or started before it."""
    prefix = snapshot.parent / "prefix"
    values = {"root": str(snapshot), "folder": str(snapshot.parent)}
    argv = [a.format(**values) for a in extra]
    assert main(["serve", "--root", str(snapshot), "--prefix", str(prefix), *argv]) == code
    err = capsys.readouterr().err
    assert err.startswith(f"corpus serve: {says.format(**values)}") and err.count("\n") == 1, err
    assert not prefix.exists()
