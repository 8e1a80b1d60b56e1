"""A frontal over N replicas on loopback, run as real nginx processes (``corpus serve --replicas N``).

The replicas listen on 127.0.0.2, 127.0.0.3, ... (Linux routes the whole 127.0.0.0/8 to loopback) or on
the addresses given, the frontal(s) on 127.0.0.1 or any given address. The serving options reach the
instance they are about: the server name every instance (and the frontal's certificate, made or given),
the access and error logs the frontal (what clients asked), the maintenance flag every replica (the
whole corpus). Every instance's TLS files are checked for what they must do
(:mod:`generator.serving.tls.tls_roles`) before the first one is rendered.

Used by ``corpus serve``, the topology tests and ``bench/bench_frontal.py``: one way to bring the
deployment's shape up on one machine, so that what the tests kill and restart is what an operator runs.
The link between them is mutual TLS under a private CA (:mod:`generator.serving.tls.peer_tls`) unless
``peer`` is None (plain HTTP, development only).
"""

from __future__ import annotations

import json
import socket
from contextlib import suppress
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from generator.base.atomic_file import write_atomic
from generator.base.errors import ServeError
from generator.contract.manifest import Manifest
from generator.serving.instances.nginx_process import NginxProcess, end_group, held_socket
from generator.serving.instances.nginx_write import render_and_write
from generator.serving.rendering.nginx_render import check_tls, server_name
from generator.serving.rendering.nginx_settings import Settings
from generator.serving.tls.peer_tls import PLAIN, PeerTLS
from generator.serving.tls.tls_local import LocalPeer, LocalTLS
from generator.tracks.loader import load_tracks

REPLICA_PORT = 8081
FRONTAL_PORT = 8443


MAX_REPLICAS = 200


def replica_hosts(count: int) -> list[str]:
    """127.0.0.2, 127.0.0.3, ...: one loopback address per replica."""
    if not 0 < count <= MAX_REPLICAS:
        raise ServeError(f"--replicas {count}: from 1 to {MAX_REPLICAS}")
    return [f"127.0.0.{index + 2}" for index in range(count)]


def replica_addresses(given: list[str], count: int, port: int) -> list[tuple[str, int]]:
    """The replicas' ``(host, port)``: each ``HOST[:PORT]`` given (``--replica``; IPv6 in brackets), its port
    ``port`` when it has none; else ``count`` loopback addresses on ``port``. One line when they disagree."""
    if not given:
        return [(host, port) for host in replica_hosts(count)]
    if count and count != len(given):
        raise ServeError(f"--replicas {count} but {len(given)} --replica address(es): give one or the other, "
                          "or as many addresses as replicas")
    found: list[tuple[str, int]] = []
    for item in given:
        host, sep, tail = item.rpartition(":")
        if not sep or (host.count(":") and not host.endswith("]")) or not tail.isdigit():
            host, tail = item, str(port)  # no port: HOST, or a bracketed or bare IPv6 address
        host = host.strip("[]")
        if not host or not all(c.isalnum() or c in ".:-" for c in host) or not 0 < int(tail) < 65536:
            raise ServeError(f"--replica {item!r}: expected HOST or HOST:PORT (a port from 1 to 65535)")
        if (host, int(tail)) in found:
            raise ServeError(f"--replica {item!r}: given twice; each replica listens on its own address and port")
        found.append((host, int(tail)))
    if len(found) > MAX_REPLICAS:
        raise ServeError(f"{len(found)} --replica addresses: at most {MAX_REPLICAS}")
    return found


def free_port(hosts: list[str]) -> int:
    """A port free on every address of ``hosts`` (so that replicas or frontals can share it)."""
    for _attempt in range(50):
        with socket.socket() as probe:
            probe.bind((hosts[0], 0))
            port = int(probe.getsockname()[1])
        if all(_bindable(host, port) for host in hosts[1:]):
            return port
    raise ServeError(f"no common free port on {hosts}")


def _bindable(host: str, port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


@dataclass
class Topology:
    """Frontal(s) and replicas rendered under ``base`` (one prefix each) from one build root."""

    root: Path
    base: Path
    secret_file: Path
    tls: LocalTLS
    replica_addresses: list[tuple[str, int]]
    frontal_addresses: list[tuple[str, int]]
    workers: str = "1"
    replica_workers: str | None = None  # default: same as workers
    tls_resumption: bool = True  # the frontal's TLS session cache (off only to benchmark the proxy's handshakes)
    worker_user: str | None = None
    expect_manifest_hash: str | None = None
    repo_root: Path | None = None
    peer: LocalPeer | None = None  # the link's private CA and certificates; None: plain HTTP (development)
    server_name: str = ""  # every instance's server_name (default: the manifest's host)
    access_log: Path | None = None  # the frontal's (what clients asked); replicas log in their prefixes
    error_log: Path | None = None  # the frontal's
    maintenance_flag: Path | None = None  # every replica's: one file for the whole corpus (default: one each)
    # The frontals' listening sockets kept here, so that a frontal that dies refuses no connection while it
    # is started again (corpus serve); off for the tests that want a dead frontal's address to refuse.
    hold_frontal_sockets: bool = False
    replicas: list[NginxProcess] = field(default_factory=list)
    frontals: list[NginxProcess] = field(default_factory=list)
    _held: list[socket.socket] = field(default_factory=list)

    # -------------------------------------------------------------------------------- settings

    def replica_settings(self, index: int) -> Settings:
        host, port = self.replica_addresses[index]
        cert, key = (self.peer.replica_cert, self.peer.replica_key) if self.peer else (None, None)
        return Settings(root=self.root, prefix=self.base / f"replica-{index + 1}", listen=host, port=port,
                        secret_file=self.secret_file, worker_processes=self.replica_workers or self.workers,
                        worker_user=self.worker_user, expect_manifest_hash=self.expect_manifest_hash,
                        tls_cert=cert, tls_key=key, role="replica", server_name=self.server_name,
                        maintenance_flag=self.maintenance_flag).resolved()

    def peer_tls(self, role: str) -> PeerTLS:
        """The link as ``role`` sees it: a replica checks its clients against the CA; a frontal also shows
        its client certificate."""
        if self.peer is None:
            return PLAIN
        if role == "replica":
            return PeerTLS(self.peer.ca)
        return PeerTLS(self.peer.ca, self.peer.client_cert, self.peer.client_key)

    def frontal_settings(self, index: int) -> Settings:
        host, port = self.frontal_addresses[index]
        return Settings(root=self.root, prefix=self.base / f"frontal-{index + 1}", listen=host, port=port,
                        secret_file=self.secret_file, tls_cert=self.tls.cert, tls_key=self.tls.key,
                        worker_processes=self.workers, worker_user=self.worker_user, role="frontal",
                        tls_resumption=self.tls_resumption, server_name=self.server_name,
                        access_log=self.access_log, error_log=self.error_log,
                        upstreams=tuple(f"{h}:{p}" for h, p in self.replica_addresses)).resolved()

    # ------------------------------------------------------------------------------- lifecycle

    def instances(self) -> list[tuple[Settings, PeerTLS]]:
        """Every instance's settings and link, replicas first."""
        replica, frontal = self.peer_tls("replica"), self.peer_tls("frontal")
        return [*((self.replica_settings(i), replica) for i in range(len(self.replica_addresses))),
                *((self.frontal_settings(i), frontal) for i in range(len(self.frontal_addresses)))]

    def check_tls(self) -> list[str]:
        """Every instance's TLS files checked (their form, then what they must do) before anything is rendered
        or started; the warnings (a certificate ending soon), each once."""
        manifest = Manifest.load(self.root, load_tracks(self.root)[0].places.manifest)
        warnings: list[str] = []
        for settings, peer in self.instances():
            warnings += check_tls(settings, peer.resolved(), partial(server_name, settings, manifest))
        return list(dict.fromkeys(warnings))

    def start(self) -> list[str]:
        """Check every instance's TLS files, then render and start every replica, then the frontal(s); each
        answers before the next starts. Returns the TLS warnings."""
        warnings = self.check_tls()
        try:
            for index in range(len(self.replica_addresses)):
                settings = self.replica_settings(index)
                render_and_write(settings, self.repo_root, self.peer_tls("replica"))
                process = NginxProcess(settings)
                self.replicas.append(process)
                process.start()
            for index in range(len(self.frontal_addresses)):
                settings = self.frontal_settings(index)
                render_and_write(settings, self.repo_root, self.peer_tls("frontal"))
                held = None
                if self.hold_frontal_sockets:
                    held = held_socket(settings.listen, settings.port)
                    self._held.append(held)
                process = NginxProcess(settings, held=held)
                self.frontals.append(process)
                process.start()
        except BaseException:
            self.stop()
            raise
        return warnings

    def restart(self, dead: NginxProcess) -> NginxProcess:
        """Start a dead replica or frontal again from its rendered prefix, nothing else touched; return it.

        What is left of its process group (workers orphaned when the master alone was killed, which
        would hold the replica's port or serve unsupervised) is stopped first, gracefully.
        """
        if dead.process is not None:
            end_group(dead.process.pid)
        group = self.replicas if dead in self.replicas else self.frontals
        process = NginxProcess(dead.settings, quiet=dead.quiet, held=dead.held)
        group[group.index(dead)] = process
        process.start()
        return process

    def restart_replica(self, index: int) -> None:
        """Start a killed replica again from its rendered prefix (the frontal is not touched)."""
        self.restart(self.replicas[index])

    def stop(self) -> None:
        """Frontals first (no new request reaches a stopping replica), then the replicas; then the sockets."""
        for process in [*self.frontals, *self.replicas]:
            process.stop()
        for held in self._held:
            with suppress(OSError):
                held.close()
        self._held.clear()

    def __enter__(self) -> Topology:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------------------------- reports

    def frontal_url(self, index: int = 0) -> str:
        host, port = self.frontal_addresses[index]
        return f"https://{host if ':' not in host else f'[{host}]'}:{port}"

    def named_url(self, name: str, index: int = 0) -> str:
        """``https://NAME:PORT``: the frontal as a client verifying its certificate's name calls it; on 443,
        ``https://NAME``, the canonical form the manifests' URLs spell (no default port)."""
        port = self.frontal_addresses[index][1]
        return f"https://{name}" if port == 443 else f"https://{name}:{port}"

    def resolve(self, name: str, index: int = 0) -> str:
        """curl's ``--resolve NAME:PORT:ADDRESS``, so that ``https://NAME:PORT`` reaches the frontal."""
        host, port = self.frontal_addresses[index]
        return f"{name}:{port}:{host if ':' not in host else f'[{host}]'}"

    def state(self) -> dict[str, Any]:
        """The ``--state-file`` document: where to call (the address, and the server name that the frontal's
        certificate names), which CA to trust, the nginx masters."""
        def masters(processes: list[NginxProcess]) -> list[dict[str, Any]]:
            return [{"address": f"{p.settings.listen}:{p.settings.port}", "pid": p.pid} for p in processes]

        name = self.server_name
        named = {"server_name": name, "url": self.named_url(name), "resolve": self.resolve(name)} if name else {}
        return {"frontal": self.frontal_url(0), **named, "ca": str(self.tls.ca),
                "replicas": masters(self.replicas), "frontals": masters(self.frontals)}

    def write_state(self, path: Path) -> None:
        write_atomic(path, json.dumps(self.state(), indent=2) + "\n")

    def with_root(self, root: Path) -> Topology:
        """The same topology serving another build root (a release): used to re-render, not to start."""
        return replace(self, root=root, replicas=self.replicas, frontals=self.frontals)
