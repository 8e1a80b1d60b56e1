"""The production shape on loopback: a TLS frontal over real replicas, failures under proxy-like load.

Every client here behaves like the Trust Layer proxy (:mod:`generator.observe.proxy_client`): one connection and
one TLS handshake per request, through the frontal. Loads are a few hundred requests over a few
seconds; every failure test asserts both "0 failed" and "every body is the manifest's".
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from nginx_server import (
    JSON_TYPE,
    build_copy,
    parse_raw,
    private_folder,
    replica_context,
    start_topology,
    topology_secret,
)
from test_vhost_raw import CASES

from generator.observe.proxy_client import Answer, Load, fetch, tls_context
from generator.serving.instances.topology import Topology
from generator.serving.tls.tls_roles import REPLICA_NAME

LOAD_THREADS = 4


@pytest.fixture(scope="module")
def snapshot() -> Iterator[tuple[Path, dict[str, Any]]]:
    with build_copy("corpus-topology-") as copy:
        yield copy


def _running(root: Path) -> Iterator[Topology]:
    with private_folder("corpus-topo-run-") as folder:
        topo = start_topology(folder, root, replicas=2, frontals=2)
        try:
            yield topo
        finally:
            topo.stop()


@pytest.fixture
def topology(snapshot: tuple[Path, dict[str, Any]]) -> Iterator[Topology]:
    """A fresh topology for a test that kills, reloads or stops part of it."""
    yield from _running(snapshot[0])


@pytest.fixture(scope="module")
def shared(snapshot: tuple[Path, dict[str, Any]]) -> Iterator[Topology]:
    """One topology for the tests that only send requests."""
    yield from _running(snapshot[0])


def bodies(root: Path, manifest: dict[str, Any]) -> dict[str, bytes]:
    return {e["path"]: (root / "build" / "conformite" / e["file"]).read_bytes() for e in manifest["resources"]}


def sample_paths(manifest: dict[str, Any], count: int = 20) -> list[str]:
    return [e["path"] for e in manifest["resources"] if e["kind"] in ("resource", "absent")][:count]


def load(topo: Topology, paths: list[str], *, frontals: int = 1, seconds: float = 20.0,
         secret: str | None = None) -> Load:
    return Load(topo.frontal_addresses[:frontals], paths, secret or topology_secret(topo),
                tls_context(topo.tls.ca), threads=LOAD_THREADS, seconds=seconds)


def failures(answers: list[tuple[str, Answer]], expected: dict[str, bytes]) -> list[str]:
    """Every answer that is not a 200 with the manifest's bytes for its path (counts shown with pytest -s)."""
    bad = [f"{path}: {a.status} {a.error or a.body[:80]!r}" for path, a in answers
            if a.status != 200 or a.body != expected[path]]
    print(f"\n{len(answers)} proxy-like requests, {len(bad)} failed")
    return bad


# --------------------------------------------------------------------------------- pass-through


def test_frontal_passes_status_headers_and_bytes_unchanged(shared: Topology,
                                                           snapshot: tuple[Path, dict[str, Any]]) -> None:
    root, manifest = snapshot
    expected = bodies(root, manifest)
    secret = topology_secret(shared)
    context = tls_context(shared.tls.ca)
    replica = [shared.replica_addresses[0]]
    for path in [*sample_paths(manifest, 5), "/agrements/agr-1", "/catalogue/"]:
        through = fetch(shared.frontal_addresses[:1], path, secret, context)
        direct = fetch(replica, path, secret, replica_context(shared), server_name=REPLICA_NAME)
        assert through.status == direct.status and through.body == direct.body
        if path in expected:
            assert through.body == expected[path]
        drop = {"date", "server", "strict-transport-security", "connection"}
        assert [h for h in through.headers if h[0].lower() not in drop] == \
               [h for h in direct.headers if h[0].lower() not in drop]
        assert dict(through.headers)["Content-Length"] == str(len(direct.body))
        assert "Content-Encoding" not in dict(through.headers)
    for head in (fetch(shared.frontal_addresses[:1], path, secret, context, method="HEAD")
                 for path in sample_paths(manifest, 3)):
        assert head.status == 200 and head.body == b"" and int(dict(head.headers)["Content-Length"]) > 0


def test_secret_is_checked_at_the_frontal_and_at_each_replica(shared: Topology,
                                                              snapshot: tuple[Path, dict[str, Any]]) -> None:
    root, manifest = snapshot
    refused = bodies(root, manifest)["/_systeme/403"]
    path = sample_paths(manifest, 1)[0]
    context = tls_context(shared.tls.ca)
    for secret in (None, "wrong-secret-wrong-secret"):
        answer = fetch(shared.frontal_addresses[:1], path, secret, context)
        assert (answer.status, answer.body) == (403, refused)
        for address in shared.replica_addresses:
            direct = fetch([address], path, secret, replica_context(shared), server_name=REPLICA_NAME)
            assert direct.body == refused
    # the refusal happened at the frontal: no replica was asked
    log = (shared.frontals[0].settings.access_log_path)
    _wait_log(log, 2)
    lines = [line for line in log.read_text().splitlines() if '"status":403' in line]
    assert lines and all('"upstream_addr":""' in line and '"role":"frontal"' in line for line in lines)


def _log_entries(path: Path, keep: Any, timeout: float = 5.0) -> list[dict[str, Any]]:
    """The JSON access log lines ``keep`` accepts, waiting for nginx's buffered log to be flushed."""
    deadline = time.monotonic() + timeout
    while True:
        found = [e for e in map(json.loads, path.read_text().splitlines()) if keep(e)] if path.exists() else []
        if found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def _wait_log(path: Path, lines: int, timeout: float = 5.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_text().splitlines()) >= lines:
            return
        time.sleep(0.1)


@pytest.mark.parametrize(("name", "request_text", "status", "body"), CASES, ids=[c[0] for c in CASES])
def test_hostile_raw_requests_to_the_frontal_get_manifest_json(shared: Topology,
                                                               snapshot: tuple[Path, dict[str, Any]], name: str,
                                                               request_text: str, status: int,
                                                               body: int | str) -> None:
    root, manifest = snapshot
    expected = bodies(root, manifest)
    path = sample_paths(manifest, 1)[0]
    data = request_text.replace("{secret}", topology_secret(shared)).replace("{path}", path)
    raw = _tls_raw(shared, data.encode("utf-8", "surrogateescape"))
    got_status, headers, got_body = parse_raw(raw)
    assert headers["content-type"] == JSON_TYPE, name
    want = expected[path] if body == "resource" else expected[f"/_systeme/{body}"]
    assert (got_status, got_body) == (status, want), name
    assert b"<html" not in raw.lower()


def _tls_raw(topology: Topology, data: bytes) -> bytes:
    import socket

    context = tls_context(topology.tls.ca)
    with socket.create_connection(topology.frontal_addresses[0], timeout=5) as plain, \
            context.wrap_socket(plain, server_hostname="localhost") as sock:
        sock.sendall(data)
        received = b""
        while not _complete(received):
            try:
                chunk = sock.recv(65536)
            except (OSError, TimeoutError):
                break
            if not chunk:
                break
            received += chunk
    return received


def _complete(data: bytes) -> bool:
    """A whole answer (headers and Content-Length bytes): TLS has no half-close to wait for."""
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value)
    return False


# ------------------------------------------------------------------------------------ failures


def test_replica_failures_under_load(topology: Topology, snapshot: tuple[Path, dict[str, Any]]) -> None:
    root, manifest = snapshot
    expected = bodies(root, manifest)
    paths = sample_paths(manifest)
    # one replica killed (SIGKILL, a crash) in the middle of the load: nothing fails
    with load(topology, paths) as running:
        running.wait_for(100)
        topology.replicas[0].kill()
        running.wait_for(running.count() + 200)
    assert len(running.answers) >= 300
    assert failures(running.answers, expected) == []
    # the frontal's log shows the failovers: two tries, the dead replica's 502 then a 200
    dead = "{}:{}".format(*topology.replica_addresses[0])
    retried = _log_entries(topology.frontals[0].settings.access_log_path,
                           lambda e: e["upstream_addr"].startswith(dead + ", "))
    assert retried and all(e["role"] == "frontal" and e["status"] == 200 and
                           e["upstream_status"].endswith(", 200") for e in retried)
    # every replica killed: every answer is the manifest's 503 body, from the frontal
    topology.replicas[1].kill()
    with load(topology, paths) as running:
        running.wait_for(100)
    assert {(a.status, a.body) for _, a in running.answers} == {(503, expected["/_systeme/503"])}
    # replicas started again, the frontal untouched: answers come back within fail_timeout
    frontal_pid = topology.frontals[0].pid
    for index in range(2):
        topology.restart_replica(index)
    context, secret = tls_context(topology.tls.ca), topology_secret(topology)
    deadline = time.monotonic() + 10
    while fetch(topology.frontal_addresses[:1], paths[0], secret, context).status != 200:
        assert time.monotonic() < deadline, "the frontal did not come back to the replicas"
        time.sleep(0.2)
    with load(topology, paths) as running:
        running.wait_for(100)
    assert failures(running.answers, expected) == []
    assert topology.frontals[0].pid == frontal_pid and topology.frontals[0].running()


def test_maintenance_of_one_replica_is_skipped(topology: Topology, snapshot: tuple[Path, dict[str, Any]]) -> None:
    root, manifest = snapshot
    expected = bodies(root, manifest)
    flag = topology.replicas[0].settings.maintenance_path
    flag.touch()
    try:
        time.sleep(1.2)  # open_file_cache_valid: the replica sees the flag within a second
        with load(topology, sample_paths(manifest)) as running:
            running.wait_for(200)
    finally:
        flag.unlink()
    assert failures(running.answers, expected) == []


def test_one_of_two_frontals_killed_under_load(topology: Topology,
                                               snapshot: tuple[Path, dict[str, Any]]) -> None:
    """A client given both addresses (one name, two A records) loses nothing it sends after a frontal dies.

    SIGKILL, a crash: from the moment the process is gone its address refuses connections and the client
    moves to the other one, so every call that starts after the kill succeeds. The calls in flight on the
    dead frontal at that instant (at most one per client thread here) cannot be saved by any server: the
    proxy does not retry once connected. Their number is what the closing note reports.
    """
    root, manifest = snapshot
    expected = bodies(root, manifest)
    with load(topology, sample_paths(manifest), frontals=2) as running:
        running.wait_for(100)
        killing = time.monotonic()
        topology.frontals[0].kill()  # returns once no process of that nginx is left
        killed = time.monotonic()
        running.wait_for(running.count() + 300)
    after = [(p, a) for p, a in running.answers if a.started >= killed]
    assert len(after) >= 250 and failures(after, expected) == []
    in_flight = failures([(p, a) for p, a in running.answers if a.started < killing], expected)
    during = failures([(p, a) for p, a in running.answers if killing <= a.started < killed], expected)
    assert len(in_flight) + len(during) <= 2 * LOAD_THREADS, (in_flight, during)  # a few ms of dying
    print(f"frontal killed in {1000 * (killed - killing):.1f} ms: {len(in_flight)} call(s) in flight lost, "
          f"{len(during)} started during the kill lost, {len(after)} later calls all answered")


def test_a_planned_stop_of_one_of_two_frontals_loses_nothing(topology: Topology,
                                                              snapshot: tuple[Path, dict[str, Any]]) -> None:
    """The planned stop (docs/topology.md): the frontal is taken out of the name first (the clients are given
    the other address only), then stopped gracefully once the calls that resolved the old name are done."""
    root, manifest = snapshot
    expected = bodies(root, manifest)
    with load(topology, sample_paths(manifest), frontals=2) as running:
        running.wait_for(100)
        running.addresses = topology.frontal_addresses[1:]  # out of the name: new calls get the other address
        time.sleep(0.5)  # the "TTL": every call that had the old address has finished
        stopping = running.count()
        topology.frontals[0].quit()  # SIGQUIT: graceful
        assert not topology.frontals[0].running()
        running.wait_for(running.count() + 200)
    assert len(running.answers) - stopping >= 200
    assert failures(running.answers, expected) == []


def test_ten_reloads_and_a_rotation_under_load(topology: Topology, snapshot: tuple[Path, dict[str, Any]]) -> None:
    from generator.base.secret_values import new_secret, write_private
    from generator.serving.instances.nginx_process import reload_and_wait
    from generator.serving.instances.nginx_write import render_and_write

    root, manifest = snapshot
    expected = bodies(root, manifest)
    old, new = topology_secret(topology), new_secret()
    everyone = [p.settings for p in [*topology.replicas, *topology.frontals]]

    def reload_all(secrets: list[str], order: list[Any]) -> None:
        write_private(topology.secret_file, "".join(s + "\n" for s in secrets))
        for settings in order:
            render_and_write(settings, None)
            reload_and_wait(settings)

    with load(topology, sample_paths(manifest), secret=old) as old_holder:
        old_holder.wait_for(50)
        for index in range(10):  # ten reloads, each instance in turn
            reload_all([old], [everyone[index % len(everyone)]])
        reload_all([old, new], everyone)  # replicas first, then the frontals
    assert failures(old_holder.answers, expected) == []
    # the new secret works from the moment the reload returned: no wait here
    with load(topology, sample_paths(manifest), secret=new) as new_holder:
        new_holder.wait_for(20)
        reload_all([new], list(reversed(everyone)))  # the frontal first, then the replicas
        new_holder.wait_for(new_holder.count() + 100)
    assert failures(new_holder.answers, expected) == []
    context = tls_context(topology.tls.ca)
    refused = fetch(topology.frontal_addresses[:1], sample_paths(manifest, 1)[0], old, context)
    assert (refused.status, refused.body) == (403, expected["/_systeme/403"])


# ------------------------------------------------------------------------------------ mutual TLS


def test_a_replica_answers_only_clients_of_the_private_ca(shared: Topology,
                                                          snapshot: tuple[Path, dict[str, Any]]) -> None:
    """Whatever the secret: without the frontals' client certificate, a replica sends no HTTP answer at all."""
    import socket
    import ssl

    root, manifest = snapshot
    path = sample_paths(manifest, 1)[0]
    secret, address = topology_secret(shared), [shared.replica_addresses[0]]
    assert shared.peer is not None
    ok = fetch(address, path, secret, replica_context(shared), server_name=REPLICA_NAME)
    assert (ok.status, ok.body) == (200, bodies(root, manifest)[path])
    # another certificate of the same CA (a replica's: server use only) and a certificate of another CA
    replica_own = ssl.create_default_context(cafile=str(shared.peer.ca))
    replica_own.load_cert_chain(str(shared.peer.replica_cert), str(shared.peer.replica_key))
    other_ca = ssl.create_default_context(cafile=str(shared.peer.ca))
    other_ca.load_cert_chain(str(shared.tls.cert), str(shared.tls.key))
    clients = {"no certificate": replica_context(shared, client_certificate=False),
               "a replica's certificate": replica_own, "a certificate of another CA": other_ca,
               "plain HTTP": None}
    for name, context in clients.items():
        for sent in (secret, None):
            answer = fetch(address, path, sent, context, server_name=REPLICA_NAME)
            assert (answer.status, answer.body) == (0, b""), (name, answer)
    # plain bytes that are not even HTTP: nothing comes back either (not the /_systeme/400 body)
    with socket.create_connection(address[0], timeout=5) as sock:
        sock.sendall(b"NOT HTTP\r\n\r\n")
        try:
            received = sock.recv(65536)
        except ConnectionResetError:
            received = b""
        assert received == b""


def test_the_frontal_keeps_its_tls_connections_to_the_replicas(shared: Topology,
                                                               snapshot: tuple[Path, dict[str, Any]]) -> None:
    """A handshake per kept connection, not per call: the replicas' logs show few connections, many requests."""
    _root, manifest = snapshot
    paths = sample_paths(manifest, 40)
    logs = [p.settings.access_log_path for p in shared.replicas]
    time.sleep(1.2)  # earlier tests' lines flushed first (flush=1s), so that only this test's are counted
    before = [len(log.read_text().splitlines()) if log.exists() else 0 for log in logs]
    context, secret = tls_context(shared.tls.ca), topology_secret(shared)
    assert all(fetch(shared.frontal_addresses[:1], p, secret, context).status == 200 for p in paths)
    lines = []
    deadline = time.monotonic() + 5
    while len(lines) < len(paths) and time.monotonic() < deadline:
        time.sleep(0.2)  # the access log is flushed every second
        lines = [json.loads(line) for log, skip in zip(logs, before, strict=True)
                 for line in log.read_text().splitlines()[skip:]]
    connections = {e["request_id"].rsplit("-", 1)[0] for e in lines}
    print(f"\n{len(lines)} calls through the frontal reached the replicas on {len(connections)} TLS connections")
    assert len(lines) >= len(paths) and len(connections) <= len(paths) // 4


def test_the_frontal_refuses_a_replica_of_another_ca_or_name(snapshot: tuple[Path, dict[str, Any]]) -> None:
    """proxy_ssl_verify: a replica whose certificate the private CA did not sign, or that names another host,
    is never used: with no acceptable replica, the frontal answers the manifest's 503. The render refuses
    such files (tls_roles); here they replace good ones after the render, as a renewal gone wrong would."""
    import shutil
    from dataclasses import replace

    from generator.base.errors import TlsError
    from generator.serving.instances.nginx_process import NginxProcess
    from generator.serving.instances.nginx_write import render_and_write
    from generator.serving.tls.peer_tls import PeerTLS
    from generator.serving.tls.tls_local import _issue, make_peer_tls

    root, manifest = snapshot
    expected = bodies(root, manifest)["/_systeme/503"]
    path = sample_paths(manifest, 1)[0]
    with private_folder("corpus-topo-badpeer-") as folder:
        topo = start_topology(folder, root, replicas=1)
        try:
            assert topo.peer is not None
            context, secret = tls_context(topo.tls.ca), topology_secret(topo)
            assert fetch(topo.frontal_addresses, path, secret, context).status == 200
            stranger = make_peer_tls(folder / "stranger", ["127.0.0.2"])  # its own CA
            renamed = folder / "renamed"  # the deployment's CA, another name
            renamed.mkdir()
            _issue((topo.peer.ca, topo.peer.ca.with_name("ca.key")), renamed / "replica", "not-the-replica",
                   "subjectAltName=DNS:not-the-replica,IP:127.0.0.2\nextendedKeyUsage=serverAuth\n", "ec", 1)
            swapped = folder / "swapped"
            swapped.mkdir()
            cert, key = swapped / "replica.crt", swapped / "replica.key"
            for name, bad_cert, bad_key in (("another CA", stranger.replica_cert, stranger.replica_key),
                                            ("another name", renamed / "replica.crt", renamed / "replica.key")):
                topo.replicas[0].stop()
                settings = replace(topo.replicas[0].settings, tls_cert=bad_cert, tls_key=bad_key)
                with pytest.raises(TlsError):  # refused at the render, naming the file
                    render_and_write(settings, None, PeerTLS(topo.peer.ca))
                shutil.copy(topo.peer.replica_cert, cert)
                shutil.copy(topo.peer.replica_key, key)
                settings = replace(settings, tls_cert=cert, tls_key=key)
                render_and_write(settings, None, PeerTLS(topo.peer.ca))
                shutil.copy(bad_cert, cert)  # replaced after the render: nginx reads them at start
                shutil.copy(bad_key, key)
                topo.replicas[0] = NginxProcess(settings)
                topo.replicas[0].start()
                answer = fetch(topo.frontal_addresses, path, secret, context)
                assert (answer.status, answer.body) == (503, expected), name
        finally:
            topo.stop()
