"""``corpus serve --replicas 2`` heals: the real command, its nginx killed under proxy-like load.

Each kill reads the pid from the ``--state-file``, as an operator (or a crash) would: a replica's master
alone (its orphaned workers must not block the restart), a replica's whole process group, the frontal's
master alone, the frontal's whole group. Replica kills lose nothing (the frontal fails over, the
replica is started again); a frontal kill loses at most the calls in flight on it (its socket is held
by the command, so calls started after the kill wait and are answered). A process that keeps dying
ends the command with the reason. Figures (requests, failures, recovery) are printed: pytest -s.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from nginx_server import alive, build_copy, corpus_serve, processes_of, stop_serving, topology_free_port

from generator.base.secret_values import new_secret, write_private
from generator.observe.proxy_client import Load, fetch, tls_context
from generator.serving.instances.nginx_process import worker_pids
from generator.serving.instances.state_file import read_state
from generator.serving.instances.supervise import RESTART_LIMIT
from generator.serving.tls.tls_roles import REPLICA_NAME

LOAD_THREADS = 4


@dataclass
class Served:
    process: subprocess.Popen[str]
    root: Path
    prefix: Path
    state_file: Path
    secret: str
    frontal: tuple[str, int]
    expected: dict[str, bytes]
    paths: list[str]

    def state(self) -> dict[str, Any]:
        return read_state(self.state_file)

    def pid(self, role: str, index: int = 0) -> int:
        return int(self.state()[role][index]["pid"])

    def load(self) -> Load:
        return Load([self.frontal], self.paths, self.secret, tls_context(self.prefix / "tls" / "ca.crt"),
                    threads=LOAD_THREADS, seconds=30)


def _serve(root: Path, folder: Path) -> Served:
    secret = new_secret()
    write_private(folder / "secret", secret + "\n")
    replica_port, frontal_port = topology_free_port(["127.0.0.2", "127.0.0.3"]), topology_free_port(["127.0.0.1"])
    prefix, state_file = folder / "prefix", folder / "state.json"
    process = corpus_serve(root, prefix, frontal_port, "--replicas", "2", "--replica-port", str(replica_port),
                           "--secret-file", str(folder / "secret"), "--state-file", str(state_file))
    deadline = time.monotonic() + 30
    while not state_file.exists():
        assert process.poll() is None and time.monotonic() < deadline, process.stderr and process.stderr.read()
        time.sleep(0.05)
    manifest = json.loads((root / "manifest" / "conformite" / "manifest.json").read_text())
    resources = [e for e in manifest["resources"] if e["kind"] in ("resource", "absent")][:20]
    expected = {e["path"]: (root / "build" / "conformite" / e["file"]).read_bytes() for e in resources}
    return Served(process, root, prefix, state_file, secret, ("127.0.0.1", frontal_port), expected, list(expected))


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with build_copy("corpus-heal-") as (root, _manifest):
        running = _serve(root, root.parent)
        try:
            yield running
        finally:
            code, err = stop_serving(running.process)
            print(err)
            assert code == 0 and "stopped (SIGTERM)" in err, err
            assert not running.state_file.exists() and processes_of(running.prefix) == []


def _failed(answers: list[tuple[str, Any]], expected: dict[str, bytes]) -> list[str]:
    return [f"{p}: {a.status} {a.error}" for p, a in answers if (a.status, a.body) != (200, expected[p])]


def _wait_new_pid(served: Served, role: str, old: int, timeout: float = 10.0) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            pid = served.pid(role)
        except Exception:
            pid = old
        if pid != old:
            return pid
        time.sleep(0.02)
    raise AssertionError(f"no new {role} pid in {served.state_file} within {timeout} s")


def _kill(pid: int, group: bool) -> None:
    if group:
        os.killpg(pid, signal.SIGKILL)
    else:
        os.kill(pid, signal.SIGKILL)


@dataclass
class Killed:
    load: Load  # stopped: its answers, each with the time it started
    at: float  # time.monotonic() of the kill
    fresh: int  # the master started again, as the state file names it
    recovered: float  # seconds from the kill to that new pid


def _kill_under_load(served: Served, role: str, victim: int, group: bool) -> Killed:
    """SIGKILL ``victim`` (``role``'s master, or its whole group) after 100 calls of the load, wait for the
    command to start it again, then for 200 calls more."""
    with served.load() as running:
        running.wait_for(100)
        at = time.monotonic()
        _kill(victim, group)
        fresh = _wait_new_pid(served, role, victim)
        recovered = time.monotonic() - at
        running.wait_for(running.count() + 200)
    return Killed(running, at, fresh, recovered)


@pytest.mark.parametrize("group", [False, True], ids=["master alone", "whole group"])
def test_a_killed_replica_is_started_again_and_no_call_fails(served: Served, group: bool) -> None:
    frontal = served.pid("frontals")
    victim = served.pid("replicas")
    orphans = worker_pids(victim)
    killed = _kill_under_load(served, "replicas", victim, group)
    failed = _failed(killed.load.answers, served.expected)
    what = "group" if group else "master"
    print(f"\nreplica {what} SIGKILL: {len(killed.load.answers)} calls, {len(failed)} failed, "
          f"started again (pid {killed.fresh}) {1000 * killed.recovered:.0f} ms after the kill")
    assert failed == []
    assert served.pid("frontals") == frontal  # the frontal was not touched
    assert orphans and alive(orphans) == []  # the workers of the killed master did not outlive it
    # the replica itself answers again (as the frontal calls it: private CA, client certificate)
    import ssl

    peer = served.prefix / "tls" / "peer"
    context = ssl.create_default_context(cafile=str(peer / "ca.crt"))
    context.load_cert_chain(str(peer / "frontal.crt"), str(peer / "frontal.key"))
    host, port = served.state()["replicas"][0]["address"].rsplit(":", 1)
    direct = fetch([(host, int(port))], served.paths[0], served.secret, context, server_name=REPLICA_NAME)
    assert (direct.status, direct.body) == (200, served.expected[served.paths[0]])
    assert killed.recovered < 5


@pytest.mark.parametrize("group", [False, True], ids=["master alone", "whole group"])
def test_a_killed_frontal_loses_only_the_calls_in_flight(served: Served, group: bool) -> None:
    replicas = [served.pid("replicas", i) for i in range(2)]
    killed = _kill_under_load(served, "frontals", served.pid("frontals"), group)
    before = [(p, a) for p, a in killed.load.answers if a.started < killed.at]
    after = [(p, a) for p, a in killed.load.answers if a.started >= killed.at]
    lost = _failed(before, served.expected)
    what = "group" if group else "master"
    print(f"\nfrontal {what} SIGKILL: {len(killed.load.answers)} calls, {len(lost)} in flight "
          f"lost, {len(_failed(after, served.expected))} of {len(after)} later calls failed; started again "
          f"(pid {killed.fresh}) {1000 * killed.recovered:.0f} ms after the kill")
    assert _failed(after, served.expected) == [] and len(after) >= 200
    assert len(lost) <= LOAD_THREADS  # at most the call each client had in flight
    assert [served.pid("replicas", i) for i in range(2)] == replicas
    assert killed.recovered < 5


def test_a_process_that_keeps_dying_ends_the_command() -> None:
    """Its prefix broken, a replica cannot start again: after RESTART_LIMIT tries the command ends, says why,
    and leaves no process and no state file."""
    with build_copy("corpus-heal-dying-") as (root, _manifest):
        running = _serve(root, root.parent)
        try:
            conf = running.prefix / "replica-1" / "conf" / "nginx.conf"
            conf.write_text("this is not an nginx configuration;\n")
            os.killpg(running.pid("replicas"), signal.SIGKILL)
            _out, err = running.process.communicate(timeout=30)
        finally:
            if running.process.poll() is None:
                running.process.kill()
                running.process.communicate()
        assert running.process.returncode == 1, err
        assert err.count("starting it again") == RESTART_LIMIT
        gave_up = f"died {RESTART_LIMIT + 1} times within 60 s: giving up; see {running.prefix}/replica-1/logs/"
        assert gave_up in err
        assert "Traceback" not in err
        assert not running.state_file.exists() and processes_of(running.prefix) == []
