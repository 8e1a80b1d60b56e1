"""A real nginx for the tests: a private snapshot of the build, a private prefix, an ephemeral loopback port.

Used as a context manager (``with NginxServer(...) as server:``) from module-scoped fixtures; nginx is
stopped and its process group killed in ``__exit__`` whatever happened, and the private folders are
removed. The snapshot makes a test run immune to someone rebuilding build/ meanwhile: it is copied
once and checked entry by entry against its own copy of the manifest.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from trackfix import copy_tracks

from generator.base.errors import ServingError
from generator.base.secret_values import new_secret, write_private
from generator.contract.hashing import sha256_hex
from generator.serving.instances.nginx_process import NginxProcess, reload_and_wait, worker_pids
from generator.serving.instances.nginx_write import render_and_write
from generator.serving.instances.serve import served_name
from generator.serving.instances.topology import Topology, replica_hosts
from generator.serving.instances.topology import free_port as topology_free_port
from generator.serving.rendering.nginx_settings import Settings
from generator.serving.tls.tls_local import LocalTLS, make_local_tls, make_peer_tls

ROOT = Path(__file__).resolve().parent.parent
JSON_TYPE = "application/json; charset=utf-8"
START_TIMEOUT = 10.0


def private_dir(prefix: str) -> Path:
    """A fresh folder under the system temp dir, traversable by nginx's unprivileged workers (0755).

    pytest's tmp_path lives under a 0700 folder, which workers running as 'nobody' cannot enter.
    """
    path = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(path, 0o755)
    return path


@contextlib.contextmanager
def private_folder(prefix: str) -> Iterator[Path]:
    """A :func:`private_dir` removed on exit, for fixtures (pytest's tmp_path is under a 0700 folder)."""
    folder = private_dir(prefix)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def build_copy(prefix: str) -> Iterator[tuple[Path, dict[str, Any]]]:
    """FOLDER/root holding a private snapshot of the build (its manifest returned too); the rest of FOLDER
    is free for prefixes and secrets, outside that "checkout". Removed on exit."""
    with private_folder(prefix) as folder:
        root = folder / "root"
        root.mkdir()
        os.chmod(root, 0o755)
        yield root, snapshot_build(root)


@contextlib.contextmanager
def rendered_replica(prefix: str) -> Iterator[Path]:
    """A replica prefix rendered by the real ``corpus render-nginx`` from a private copy of the build."""
    from generator.cli.main import main  # the command an operator runs; nothing else here needs the CLI

    with build_copy(prefix) as (release, _manifest):
        secret = release.parent / "secret"
        write_private(secret, new_secret() + "\n")
        code = main(["render-nginx", "--plain-replica",
                     "--root", str(release), "--prefix", str(release.parent / "replica"),
                     "--secret-file", str(secret), "--port", str(free_port()), "--workers", "1"])
        assert code == 0
        yield release.parent / "replica"


def snapshot_build(dest: Path, source: Path = ROOT, attempts: int = 5) -> dict[str, Any]:
    """Copy ``source``'s build/ and manifest/ into ``dest``; return the copied manifest.

    Retried when the copy is not self-consistent (a rebuild swapped the folders during the copy).
    """
    for _ in range(attempts):
        for name in ("build", "manifest"):
            shutil.rmtree(dest / name, ignore_errors=True)
        shutil.copytree(source / "manifest/conformite", dest / "manifest/conformite")
        shutil.copytree(source / "build/conformite", dest / "build/conformite")
        copy_tracks(dest, source)
        manifest = json.loads((dest / "manifest/conformite/manifest.json").read_text("utf-8"))
        if all(_entry_matches(dest, e) for e in manifest["resources"]):
            return manifest
        time.sleep(0.5)
    raise RuntimeError(f"{source}: build/ and manifest/ disagree (rebuild with 'corpus build')")


def _entry_matches(root: Path, entry: dict[str, Any]) -> bool:
    path = root / "build/conformite" / entry["file"]
    return path.is_file() and sha256_hex(path.read_bytes()) == entry["sha256"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def processes_of(prefix: Path) -> list[int]:
    """Pids of the nginx masters whose command line names ``prefix``, and of their workers.

    Workers retitle themselves "nginx: worker process", so they are found as the masters' children.
    """
    found = []
    needle = str(prefix.resolve()).encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if needle in cmdline and b"nginx" in cmdline:
            found.append(int(entry.name))
    return found + [pid for master in found for pid in worker_pids(master)]


def corpus_serve(root: Path, prefix: Path, port: int, *options: str,
                 stdout: int = subprocess.DEVNULL) -> subprocess.Popen[str]:
    """The real ``corpus serve`` over ``root``'s build as it is (``--no-build``), its nginx under ``prefix``, one
    worker each: a child process, as an operator starts it, so its signals and exit code are the command's."""
    return subprocess.Popen([sys.executable, "-m", "generator.cli", "serve", "--root", str(root), "--no-build",
                             "--prefix", str(prefix), "--port", str(port), "--workers", "1", *options],
                            stdout=stdout, stderr=subprocess.PIPE, text=True)


def stop_serving(process: subprocess.Popen[str], timeout: float = 20) -> tuple[int, str]:
    """SIGTERM, as systemd stops the command; SIGKILL if it is still there after ``timeout``. Its exit code and
    what it said on stderr."""
    process.send_signal(signal.SIGTERM)
    try:
        _out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        _out, err = process.communicate()
    return process.returncode, err


def alive(pids: list[int]) -> list[int]:
    """The pids of ``pids`` that still run nginx (a recycled pid running something else does not count)."""
    running = []
    for pid in pids:
        with contextlib.suppress(OSError):
            if b"nginx" in Path(f"/proc/{pid}/cmdline").read_bytes():
                running.append(pid)
    return running


class NginxServer:
    """One nginx serving a snapshot of the build with the rendered vhost."""

    def __init__(self, secrets: list[str] | None = None, *, tls: bool = False, source: Path = ROOT,
                 extra_server_conf: str | None = None, workers: str = "2",
                 build_root: Path | None = None) -> None:
        self.secrets = secrets or [new_secret()]
        self.tls = tls
        self.source = source
        self.extra_server_conf = extra_server_conf
        self.worker_processes = workers
        self.given_root = build_root
        self.dir = private_dir("corpus-nginx-")
        self.root = build_root or self.dir / "root"
        self.prefix = self.dir / "prefix"
        self.secret_file = self.dir / "secrets"
        self.port = 0
        self.process: NginxProcess | None = None
        self.manifest: dict[str, Any] = {}
        self.local_tls: LocalTLS | None = None

    # ------------------------------------------------------------------------------------ lifecycle

    def __enter__(self) -> NginxServer:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def settings(self) -> Settings:
        extra = None
        if self.extra_server_conf is not None:
            extra = self.dir / "extra-server.conf"
            extra.write_text(self.extra_server_conf, "utf-8")
        tls = self.local_tls
        return Settings(root=self.root, prefix=self.prefix, port=self.port, secret_file=self.secret_file,
                        tls_cert=tls.cert if tls else None, tls_key=tls.key if tls else None,
                        worker_processes=self.worker_processes, extra_server_include=extra)

    def start(self) -> None:
        if self.given_root is None:
            self.root.mkdir()
            os.chmod(self.root, 0o755)
            self.manifest = snapshot_build(self.root, self.source)
        else:
            self.manifest = json.loads((self.root / "manifest/conformite/manifest.json").read_text("utf-8"))
        if self.tls:
            self.local_tls = make_local_tls(self.dir / "tls", ["127.0.0.1"])
        self.write_secrets(self.secrets)
        failure = ""
        for _attempt in range(3):  # the free port may be taken between the probe and nginx's bind
            self.port = free_port()
            settings = self.settings()
            render_and_write(settings, None)
            self.process = NginxProcess(settings.resolved())
            try:
                self.process.start(START_TIMEOUT)
                return
            except ServingError as exc:
                failure = str(exc)
                self.process = None
        raise RuntimeError(f"nginx did not start: {failure}")

    def _stop_process(self) -> None:
        process, self.process = self.process, None
        if process is not None:
            process.stop()

    def close(self) -> None:
        """Stop nginx (fast shutdown, then SIGKILL to its group) and remove the private folders."""
        try:
            self._stop_process()
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)

    # --------------------------------------------------------------------------------- operations

    def write_secrets(self, values: list[str]) -> None:
        write_private(self.secret_file, "".join(v + "\n" for v in values))

    def workers(self) -> set[int]:
        assert self.process is not None
        return set(worker_pids(self.process.pid))

    def rotate(self, values: list[str]) -> None:
        """Rewrite the secret file, re-render and reload: returns once only the new configuration answers."""
        self.write_secrets(values)
        settings = self.settings()
        render_and_write(settings, None)
        reload_and_wait(settings.resolved())
        self.secrets = values

    @property
    def base_url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    @property
    def secret(self) -> str:
        return self.secrets[0]

    def connection(self, timeout: float = 10.0) -> http.client.HTTPConnection:
        if self.tls:
            import ssl

            assert self.local_tls is not None
            context = ssl.create_default_context(cafile=str(self.local_tls.ca))
            return http.client.HTTPSConnection("127.0.0.1", self.port, timeout=timeout, context=context)
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, path: str, *, method: str = "GET", secret: str | None = "default",
                headers: dict[str, str] | None = None, body: bytes | None = None) -> Response:
        """One request on a fresh connection; ``secret="default"`` sends the first accepted secret."""
        all_headers = dict(headers or {})
        if secret == "default":
            all_headers["X-Challenge-Secret"] = self.secret
        elif secret is not None:
            all_headers["X-Challenge-Secret"] = secret
        conn = self.connection()
        try:
            conn.request(method, path, body=body, headers=all_headers)
            return Response.read(conn.getresponse())
        finally:
            conn.close()

    def raw(self, data: bytes, timeout: float = 5.0) -> bytes:
        """Send bytes as they are on a plain TCP connection; return everything nginx answers."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            sock.sendall(data)
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_WR)
            chunks = []
            while True:
                try:
                    chunk = sock.recv(65536)
                except (ConnectionResetError, TimeoutError):
                    break
                if not chunk:
                    break
                chunks.append(chunk)
        return b"".join(chunks)

    def maintenance_flag(self) -> Path:
        return self.prefix / "maintenance"

    def access_log(self) -> str:
        path = self.prefix / "logs" / "access.log"
        return path.read_text("utf-8", errors="replace") if path.exists() else ""

    def error_log(self) -> str:
        path = self.prefix / "logs" / "error.log"
        return path.read_text("utf-8", errors="replace") if path.exists() else ""

    def body_of(self, path: str) -> bytes:
        """The snapshot's bytes for a manifest path."""
        entry = next(e for e in self.manifest["resources"] if e["path"] == path)
        return (self.root / "build/conformite" / entry["file"]).read_bytes()


class Response:
    """Status, headers (as a list, duplicates kept) and body bytes of one answer."""

    def __init__(self, status: int, headers: list[tuple[str, str]], body: bytes) -> None:
        self.status = status
        self.header_list = headers
        self.body = body

    @classmethod
    def read(cls, resp: http.client.HTTPResponse) -> Response:
        return cls(resp.status, resp.getheaders(), resp.read())

    def header(self, name: str) -> str | None:
        values = [v for k, v in self.header_list if k.lower() == name.lower()]
        assert len(values) <= 1, f"{name} sent {len(values)} times"
        return values[0] if values else None


def parse_raw(data: bytes) -> tuple[int, dict[str, str], bytes]:
    """Split a raw HTTP/1.x answer into status, headers (lower-case names) and body."""
    head, sep, body = data.partition(b"\r\n\r\n")
    assert sep, f"no header/body separator in {data[:200]!r}"
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, headers, body


# ------------------------------------------------------------------------------------- topologies

FRONTAL_HOSTS = ["127.0.1.1", "127.0.1.2"]  # two frontals, one port: a name resolving to both addresses


def start_topology(folder: Path, root: Path, *, replicas: int = 2, frontals: int = 1,
                   secrets: list[str] | None = None, plain: bool = False) -> Topology:
    """A frontal (or two) over ``replicas`` replicas on 127.0.0.2... serving ``root``, one worker each, mutual
    TLS between them (``plain``: plain HTTP, the development option)."""
    secret_file = folder / "secrets"
    write_private(secret_file, "".join(v + "\n" for v in (secrets or [new_secret()])))
    hosts = FRONTAL_HOSTS[:frontals]
    replica_hosts_ = replica_hosts(replicas)
    replica_port, frontal_port = topology_free_port(replica_hosts_), topology_free_port(hosts)
    topology = Topology(root=root, base=folder / "nginx", secret_file=secret_file,
                        tls=make_local_tls(folder / "tls", [*hosts, served_name(root, folder, "")]),
                        peer=None if plain else make_peer_tls(folder / "tls" / "peer", replica_hosts_),
                        replica_addresses=[(h, replica_port) for h in replica_hosts_],
                        frontal_addresses=[(h, frontal_port) for h in hosts])
    topology.start()
    return topology


__all__ = ["topology_free_port"]


def topology_secret(topology: Topology) -> str:
    return topology.secret_file.read_text("utf-8").split()[0]


def replica_context(topology: Topology, *, client_certificate: bool = True) -> ssl.SSLContext:
    """A client of the replicas as the frontal is one: it trusts the private CA and (unless told otherwise)
    shows the frontals' client certificate. Fetch with ``server_name=REPLICA_NAME``."""
    assert topology.peer is not None, "a plain topology has no TLS on the replicas"
    context = ssl.create_default_context(cafile=str(topology.peer.ca))
    if client_certificate:
        context.load_cert_chain(str(topology.peer.client_cert), str(topology.peer.client_key))
    return context
