"""Operating the vhost: maintenance switch, secret rotation with reload, TLS, `corpus serve`, build-if-needed."""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import requests
from corpusfix import copy_fixture
from nginx_server import JSON_TYPE, NginxServer, alive, build_copy, free_port, processes_of
from trackfix import copy_tracks

from generator.base.secret_values import new_secret, write_private
from generator.cli.main import main
from generator.compiler.pipeline import ensure_build

CORPUS = str(Path(sys.executable).with_name("corpus"))


def _sample(server: NginxServer) -> str:
    return next(e["path"] for e in server.manifest["resources"]
                if e["kind"] == "resource" and e["path"].startswith("/agrements/"))


@pytest.fixture(scope="module")
def server() -> Iterator[NginxServer]:
    with NginxServer() as srv:
        yield srv


# ------------------------------------------------------------------------------------ maintenance


def _within(timeout: float, condition: Callable[[], bool]) -> float:
    """Seconds until ``condition`` holds (polling); fails after ``timeout``."""
    start = time.monotonic()
    while not condition():
        assert time.monotonic() - start < timeout, "condition not reached"
        time.sleep(0.05)
    return time.monotonic() - start


def test_maintenance_switches_to_503_and_back_without_reload(server: NginxServer,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    path = _sample(server)
    workers = server.workers()
    unavailable = server.body_of("/_systeme/503")
    prefix = str(server.prefix)
    try:
        assert main(["maintenance", "on", "--prefix", prefix]) == 0
        assert server.maintenance_flag().exists()
        switched = _within(3.0, lambda: server.request(path).status == 503)
        assert switched <= 2.0  # nginx sees the flag within open_file_cache_valid (1 s)
        time.sleep(1.2)  # each worker keeps its own cache: after one validity period, every worker sees it
        for target in (path, "/agrements/AGR-999999", path + "/"):
            resp = server.request(target)
            assert (resp.status, resp.body, resp.header("Content-Type")) == (503, unavailable, JSON_TYPE)
            assert "no-store" in (resp.header("Cache-Control") or "")
        # the secret still comes first
        assert server.request(path, secret=None).body == server.body_of("/_systeme/403")
        assert main(["maintenance", "status", "--prefix", prefix]) == 0
        assert "on (503" in capsys.readouterr().err
    finally:
        assert main(["maintenance", "off", "--prefix", prefix]) == 0
    assert not server.maintenance_flag().exists()
    assert _within(3.0, lambda: server.request(path).status == 200) <= 2.0
    time.sleep(1.2)  # as above: one worker answering 200 does not mean every worker's cache has expired
    resp = server.request(path)
    assert (resp.status, resp.body) == (200, server.body_of(path))
    assert server.workers() == workers  # no reload, no restart


# --------------------------------------------------------------------------------------- rotation


def test_rotation_two_secrets_then_one() -> None:
    old, new = new_secret(), new_secret()
    with NginxServer(secrets=[old, new]) as server:
        path = _sample(server)
        for secret in (old, new):
            assert server.request(path, secret=secret).body == server.body_of(path)
        # the operator's command: rewrite the secret file, render with --reload. It returns only once
        # the new configuration answers: the very next requests meet it, without any wait here.
        server.write_secrets([new])
        workers = server.workers()
        assert main(["render-nginx", "--plain-replica", "--root", str(server.root), "--prefix", str(server.prefix),
                     "--port", str(server.port), "--workers", "2", "--secret-file", str(server.secret_file),
                     "--reload"]) == 0
        for _ in range(20):
            refused = server.request(path, secret=old)
            assert (refused.status, refused.body) == (403, server.body_of("/_systeme/403"))
        assert server.request(path, secret=new).body == server.body_of(path)
        assert not server.workers() & workers or all(
            b"shutting down" in Path(f"/proc/{pid}/cmdline").read_bytes() for pid in server.workers() & workers)
        # and back to two, through the helper
        server.rotate([new, old])
        assert server.request(path, secret=old).status == 200


def test_reload_refuses_a_broken_config_and_keeps_serving(capsys: pytest.CaptureFixture[str]) -> None:
    with NginxServer() as server:
        bad = server.dir / "bad"
        write_private(bad, "not a valid secret\n")
        assert main(["render-nginx", "--plain-replica", "--root", str(server.root), "--prefix", str(server.prefix),
                     "--port", str(server.port), "--secret-file", str(bad), "--reload"]) == 1
        assert "characters among" in capsys.readouterr().err
        assert server.request(_sample(server)).status == 200


# -------------------------------------------------------------------------------------------- TLS


def test_tls_with_a_self_signed_certificate() -> None:
    with NginxServer(tls=True) as server:
        path = _sample(server)
        with requests.Session() as session:
            trust = str(server.local_tls.ca)  # per request: $REQUESTS_CA_BUNDLE would override session.verify
            ok = session.get(server.base_url + path, params={}, headers={"X-Challenge-Secret": server.secret},
                             verify=trust)
            assert (ok.status_code, ok.content) == (200, server.body_of(path))
            assert ok.headers["Content-Type"] == JSON_TYPE
            assert "max-age" in ok.headers["Strict-Transport-Security"]
            refused = session.get(server.base_url + path, verify=trust)
            assert (refused.status_code, refused.content) == (403, server.body_of("/_systeme/403"))
            with pytest.raises(requests.exceptions.SSLError):
                requests.get(server.base_url + path, timeout=5)  # not trusted without the certificate
        # plain HTTP on the TLS port: nginx's 497, answered with the JSON 400
        request = f"GET {path} HTTP/1.1\r\nHost: x\r\nX-Challenge-Secret: {server.secret}\r\n\r\n"
        plain = server.raw(request.encode())
        assert plain.startswith(b"HTTP/1.1 400 ") and plain.endswith(server.body_of("/_systeme/400"))
        for trust in (["--ca", str(server.local_tls.ca)], ["--insecure"]):
            assert main(["verify", "--root", str(server.root), "--url", server.base_url, *trust,
                         "--secret-file", str(server.secret_file)]) == 0
        # without trusting the certificate, verify fails on the first request and says why
        assert main(["verify", "--root", str(server.root), "--url", server.base_url,
                     "--secret-file", str(server.secret_file)]) == 1


# ------------------------------------------------------------------------------------------ serve


@pytest.fixture
def snapshot() -> Iterator[Path]:
    """FOLDER/root holds the build snapshot; the prefix and secrets go beside it, outside that "checkout"."""
    with build_copy("corpus-serve-") as (root, _manifest):
        yield root


def _serve(snapshot: Path, *extra: str) -> tuple[subprocess.Popen[str], int, Path]:
    port, prefix = free_port(), snapshot.parent / "prefix"
    process = subprocess.Popen([CORPUS, "serve", "--root", str(snapshot), "--prefix", str(prefix), "--port",
                                str(port), "--no-build", "--workers", "2", *extra],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return process, port, prefix


def _wait_for(process: subprocess.Popen[str], pattern: str, timeout: float = 15.0) -> str:
    """Read stderr until a line matches (the process prints 'ready' once nginx accepts connections)."""
    assert process.stderr is not None
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        seen.append(line)
        if re.search(pattern, line):
            return "".join(seen)
    raise AssertionError(f"no {pattern!r} in: {''.join(seen)}")


def _stop(process: subprocess.Popen[str], signum: int) -> tuple[int, str, str]:
    process.send_signal(signum)
    try:
        out, err = process.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    return process.returncode, out, err


def test_serve_with_a_secret_file_then_sigterm_leaves_no_process(snapshot: Path) -> None:
    secret = new_secret()
    secret_file = snapshot.parent / "secret"
    write_private(secret_file, secret + "\n")
    process, port, prefix = _serve(snapshot, "--secret-file", str(secret_file))
    try:
        _wait_for(process, "ready on")
        pids = processes_of(prefix)
        assert len(pids) == 3  # the master and its two workers
        path = "/catalogue"
        ok = requests.get(f"http://127.0.0.1:{port}{path}", headers={"X-Challenge-Secret": secret}, timeout=5)
        assert (ok.status_code, ok.content) == (200, (snapshot / "build/conformite/catalogue.json").read_bytes())
        assert requests.get(f"http://127.0.0.1:{port}{path}", timeout=5).status_code == 403
    finally:
        code, out, err = _stop(process, signal.SIGTERM)
    assert code == 0, err
    assert "stopped (SIGTERM)" in err
    assert secret not in out + err  # a given secret file is never echoed
    assert processes_of(prefix) == [] and alive(pids) == []
    with pytest.raises(requests.ConnectionError):
        requests.get(f"http://127.0.0.1:{port}/catalogue", timeout=2)


def test_serve_without_a_secret_prints_a_dev_secret_and_stops_on_ctrl_c(snapshot: Path) -> None:
    process, port, prefix = _serve(snapshot)
    try:
        _wait_for(process, "ready on")
        pids = processes_of(prefix)
        assert len(pids) == 3
        secret_file = prefix / "dev-secret"
        assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
        secret = secret_file.read_text().strip()
        ok = requests.get(f"http://127.0.0.1:{port}/catalogue", headers={"X-Challenge-Secret": secret}, timeout=5)
        assert ok.status_code == 200
    finally:
        code, out, err = _stop(process, signal.SIGINT)
    assert code == 0, err
    assert f"development secret {secret}" in out
    assert f"curl -s -H 'X-Challenge-Secret: {secret}' http://127.0.0.1:{port}/" in out
    assert processes_of(prefix) == [] and alive(pids) == []


@pytest.mark.parametrize("replicas", [False, True], ids=["one replica", "--replicas 1"])
def test_a_busy_port_is_one_line_before_anything_else(snapshot: Path, replicas: bool) -> None:
    """Checked before the build line, the secret or the curl lines: one line naming the address, port and what
    to do, exit 1, no nginx line (nor a stale one of the prefix's error log), no process left."""
    import socket

    prefix = snapshot.parent / "prefix"
    (prefix / "logs").mkdir(parents=True, exist_ok=True)
    (prefix / "logs" / "error.log").write_text("2026/01/01 00:00:00 [emerg] 1#1: a stale line of another run\n")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        extra = ["--replicas", "1", "--replica-port", str(free_port())] if replicas else []
        result = subprocess.run([CORPUS, "serve", "--root", str(snapshot), "--prefix", str(prefix), "--port",
                                 str(port), *extra], capture_output=True, text=True, timeout=30, check=False)
    fix = "make serve-topology FRONTAL_PORT=P" if replicas else "make serve PORT=P"
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == f"corpus serve: 127.0.0.1:{port} is already in use (another server listens there): " \
                            f"stop it, or choose another port: --port P ({fix})\n"
    assert processes_of(prefix) == []


def test_a_start_that_fails_quotes_only_its_own_error_log_lines(snapshot: Path) -> None:
    """The race the check cannot close (the port taken between the check and nginx's bind): nginx's failure is
    one line naming the address, never the lines an earlier run left in the error log."""
    import socket

    from generator.base.errors import ServeError
    from generator.serving.instances.nginx_process import NginxProcess
    from generator.serving.instances.nginx_write import render_and_write
    from generator.serving.rendering.nginx_settings import Settings

    secret = snapshot.parent / "secret"
    write_private(secret, new_secret() + "\n")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        settings = Settings(root=snapshot, prefix=snapshot.parent / "race", port=port, secret_file=secret,
                            worker_processes="1")
        render_and_write(settings, None)
        log = settings.resolved().error_log_path
        log.write_text("2026/01/01 00:00:00 [emerg] 1#1: a stale line of another run\n")
        with pytest.raises(ServeError) as caught:
            NginxProcess(settings.resolved()).start(timeout=5)
    assert str(caught.value) == f"127.0.0.1:{port}: already in use (another server listens there): stop it, " \
                                "or choose another address or port"
    assert "stale" in log.read_text()  # it was there, and was not quoted


# ------------------------------------------------------------------------------- build if needed


def test_ensure_build_writes_only_when_the_sources_changed(tmp_path: Path) -> None:
    copy_fixture(tmp_path)
    base = "https://corpus.example"
    assert ensure_build(tmp_path, base).startswith("built")
    manifest = tmp_path / "manifest/conformite/manifest.json"
    before = manifest.stat().st_mtime_ns
    assert ensure_build(tmp_path, base).startswith("build/conformite/ is up to date")
    assert manifest.stat().st_mtime_ns == before
    victim = next((tmp_path / "build/conformite").rglob("*.json"))
    victim.write_bytes(victim.read_bytes() + b" ")
    assert ensure_build(tmp_path, base).startswith("built")
    (tmp_path / "build/conformite/stray.json").write_text("{}")
    assert ensure_build(tmp_path, base).startswith("built")
    assert not (tmp_path / "build/conformite/stray.json").exists()


def test_serve_replicas_from_a_private_folder_writes_the_state_and_stops_everything(snapshot: Path) -> None:
    """`corpus serve --replicas 2` in a 0700 folder (a private home): TLS frontal, state file, Ctrl-C."""
    from nginx_server import topology_free_port

    os.chmod(snapshot.parent, 0o700)  # workers run as the invoking user: nothing to chmod
    state = snapshot.parent / "state.json"
    replica_port = topology_free_port(["127.0.0.2", "127.0.0.3"])
    process, port, prefix = _serve(snapshot, "--replicas", "2", "--replica-port", str(replica_port),
                                   "--state-file", str(state))
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 20
        while not state.exists():
            assert time.monotonic() < deadline and process.poll() is None, process.stderr.read() if \
                process.stderr else ""
            time.sleep(0.1)
        doc = json.loads(state.read_text())
        assert set(doc) == {"frontal", "server_name", "url", "resolve", "ca", "replicas", "frontals"}
        assert doc["frontal"] == f"https://127.0.0.1:{port}"
        assert [r["address"] for r in doc["replicas"]] == [f"127.0.0.{i}:{replica_port}" for i in (2, 3)]
        assert all(isinstance(r["pid"], int) and alive([r["pid"]]) for r in doc["replicas"])
        secret = (prefix / "dev-secret").read_text().strip()
        ok = requests.get(f"{doc['frontal']}/catalogue", headers={"X-Challenge-Secret": secret}, timeout=5,
                          verify=doc["ca"])
        assert (ok.status_code, ok.content) == (200, (snapshot / "build/conformite/catalogue.json").read_bytes())
        pids = processes_of(prefix)
        assert len(pids) >= 6  # three masters and their workers
    finally:
        code, out, err = _stop(process, signal.SIGINT)
    assert code == 0, err
    assert f"TLS frontal https://{doc['server_name']}:{port} on https://127.0.0.1:{port} over 2 replica(s)" in out
    assert f"--cacert {doc['ca']} --resolve {doc['server_name']}:{port}:127.0.0.1 " in out
    assert processes_of(prefix) == [] and alive(pids) == [] and not state.exists()


def test_serve_no_build_with_a_broken_track_file_names_it_without_the_no_build_advice(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The advice to serve the current build with --no-build is for sources that do not compile, not for a
    track file that --no-build itself cannot read."""
    copy_tracks(tmp_path)
    with (tmp_path / "tracks" / "conformite" / "track.yaml").open("a", encoding="utf-8") as track:
        track.write(": [broken\n")
    assert main(["serve", "--no-build", "--root", str(tmp_path), "--prefix", str(tmp_path / "px"),
                 "--port", str(free_port())]) == 1
    err = capsys.readouterr().err
    assert "track.yaml" in err and "YAML syntax" in err and "--no-build" not in err, err
