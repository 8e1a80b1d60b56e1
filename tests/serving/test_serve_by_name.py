"""``corpus serve --replicas`` as the real proxy uses it locally: reached by its server name, every option kept.

The real command, run once: ``--replicas 1 --server-name corpus.arkforge.tech --access-log F`` with the
frontal's error log, a maintenance flag and the replica's address chosen. A client that verifies the
certificate's name against the printed CA reaches ``https://corpus.arkforge.tech:PORT`` (and one asking
for another name is refused); the printed ``curl`` line, run as printed, gets the manifest's bytes; F
holds the frontal's lines; the flag puts the corpus in maintenance. Bounded: one process, a few calls.
"""

from __future__ import annotations

import http.client
import json
import shlex
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from nginx_server import build_copy, corpus_serve, free_port, processes_of, stop_serving, topology_free_port

from generator.serving.instances.state_file import read_state

HOST = "corpus.arkforge.tech"
REPLICA = "127.0.0.5"


@dataclass
class Running:
    process: subprocess.Popen[str]
    root: Path
    folder: Path
    port: int
    replica_port: int
    state: dict[str, Any]
    banner: str

    @property
    def secret(self) -> str:
        return (self.folder / "prefix" / "dev-secret").read_text().strip()

    def body_of(self, path: str) -> bytes:
        manifest = json.loads((self.root / "manifest" / "conformite" / "manifest.json").read_text())
        entry = next(e for e in manifest["resources"] if e["path"] == path)
        return (self.root / "build" / "conformite" / entry["file"]).read_bytes()


def _banner(process: subprocess.Popen[str], timeout: float = 30.0) -> str:
    assert process.stdout is not None
    deadline, seen = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith("  an nginx that dies"):
            return "".join(seen)
    raise AssertionError(f"no banner: {''.join(seen)} {process.stderr.read() if process.stderr else ''}")


@pytest.fixture(scope="module")
def running() -> Iterator[Running]:
    with build_copy("corpus-serve-name-") as (root, _manifest):
        folder = root.parent
        (folder / "logs").mkdir()
        port, replica_port = free_port(), topology_free_port([REPLICA])
        state_file = folder / "state.json"
        process = corpus_serve(
            root, folder / "prefix", port, "--replicas", "1", "--server-name", HOST, "--access-log",
            str(folder / "logs" / "access.log"), "--error-log", str(folder / "logs" / "error.log"),
            "--maintenance-flag", str(folder / "maintenance"), "--replica", f"{REPLICA}:{replica_port}",
            "--state-file", str(state_file), stdout=subprocess.PIPE)
        try:
            banner = _banner(process)
            yield Running(process, root, folder, port, replica_port, read_state(state_file), banner)
        finally:
            code, err = stop_serving(process)
            assert code == 0, err
            assert processes_of(folder / "prefix") == []


def _get(running: Running, path: str, name: str = HOST) -> tuple[int, bytes]:
    """GET through the frontal's address, the certificate verified for ``name`` against the printed CA."""
    context = ssl.create_default_context(cafile=running.state["ca"])
    assert context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED
    connection = http.client.HTTPSConnection(name, running.port, timeout=10, context=context)
    connection.sock = context.wrap_socket(socket.create_connection(("127.0.0.1", running.port), timeout=10),
                                          server_hostname=name)
    try:
        connection.request("GET", path, headers={"X-Challenge-Secret": running.secret})
        answer = connection.getresponse()
        return answer.status, answer.read()
    finally:
        connection.close()


def _sample(running: Running) -> tuple[list[str], str]:
    line = next(x for x in running.banner.splitlines() if x.strip().startswith("curl "))
    argv = shlex.split(line)
    return argv, urlsplit(argv[-1]).path


def test_a_client_verifying_the_server_name_reaches_it(running: Running) -> None:
    _argv, path = _sample(running)
    assert _get(running, path) == (200, running.body_of(path))
    with pytest.raises(ssl.SSLCertVerificationError):  # the name is checked: another one is refused
        _get(running, path, name="corpus.example")
    assert running.state["server_name"] == HOST and running.state["url"] == f"https://{HOST}:{running.port}"
    assert running.state["replicas"][0]["address"] == f"{REPLICA}:{running.replica_port}"  # the address chosen


def test_the_printed_curl_line_works_as_printed(running: Running) -> None:
    argv, path = _sample(running)
    assert "--resolve" in argv and argv[-1].startswith(f"https://{HOST}:{running.port}/")
    result = subprocess.run(argv, capture_output=True, timeout=20, check=False)
    assert result.returncode == 0 and result.stdout == running.body_of(path), result.stderr


def test_the_frontal_logs_where_told(running: Running) -> None:
    _argv, path = _sample(running)
    assert _get(running, path)[0] == 200
    log, deadline, lines = running.folder / "logs" / "access.log", time.monotonic() + 5, []
    while time.monotonic() < deadline:  # buffered: flushed every second
        lines = [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else []
        if any(e["uri"] == path for e in lines):
            break
        time.sleep(0.2)
    assert lines and all(e["role"] == "frontal" for e in lines) and any(e["uri"] == path for e in lines)
    assert (running.folder / "logs" / "error.log").exists()
    assert not (running.folder / "prefix" / "frontal-1" / "logs" / "access.log").exists()


def test_the_maintenance_flag_is_every_replicas(running: Running) -> None:
    _argv, path = _sample(running)
    flag = running.folder / "maintenance"
    assert f"touch {flag}" in running.banner
    flag.touch()
    try:
        time.sleep(1.2)  # the replicas' open_file_cache_valid
        status, body = _get(running, path)
        assert (status, body) == (503, running.body_of("/_systeme/503"))
    finally:
        flag.unlink()
    time.sleep(1.2)
    assert _get(running, path)[0] == 200
