"""A client that calls the corpus the way the Trust Layer proxy does, for the topology tests and benchmarks.

The proxy opens a new HTTP client per call: one TCP connection, one TLS handshake, one request. Given
several addresses for one name it tries them in turn when a connection cannot be established (that is
what the two-frontal plan relies on); a failure after the request was sent is not retried. :func:`fetch`
does exactly that; :class:`Load` runs it from a few threads for a bounded time or count and keeps every
answer, so a test can assert "0 failed" and "every body is a manifest body".
"""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
import ssl
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Answer:
    status: int  # 0: no HTTP answer at all (the proxy would hash its own error text)
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    error: str = ""
    seconds: float = 0.0
    started: float = 0.0  # time.monotonic() when the call began


def tls_context(ca: Path) -> ssl.SSLContext:
    """Verify the frontal against ``ca``, as the proxy verifies the production certificate."""
    return ssl.create_default_context(cafile=str(ca))


def fetch(addresses: list[tuple[str, int]], path: str, secret: str | None, context: ssl.SSLContext | None,
          *, method: str = "GET", timeout: float = 10.0, server_name: str = "localhost") -> Answer:
    """One request on a new connection; the next address only when connecting to one fails."""
    started, began = time.perf_counter(), time.monotonic()
    headers = {"X-Challenge-Secret": secret} if secret else {}
    errors = []
    for host, port in addresses:
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            errors.append(f"{host}:{port}: {exc}")
            continue
        try:
            if context is not None:
                sock = context.wrap_socket(sock, server_hostname=server_name)
            conn = http.client.HTTPConnection(host, port, timeout=timeout)
            conn.sock = sock
            conn.request(method, path, headers=headers)
            resp = conn.getresponse()
            body = resp.read()
            return Answer(resp.status, body, tuple(resp.getheaders()), seconds=time.perf_counter() - started,
                          started=began)
        except (OSError, http.client.HTTPException) as exc:
            # after connecting, the proxy does not retry: this call fails
            return Answer(0, b"", error=f"{host}:{port}: {exc!r}", seconds=time.perf_counter() - started,
                          started=began)
        finally:
            sock.close()
    return Answer(0, b"", error="all connection attempts failed: " + "; ".join(errors),
                  seconds=time.perf_counter() - started, started=began)


def ca_context(cadata: str | None) -> ssl.SSLContext:
    """The context that verifies a server (certificate and host name) against the CA certificates ``cadata``
    (PEM text), or the system's when None; :class:`ssl.SSLError` when ``cadata`` holds no certificate."""
    if cadata is None:
        return ssl.create_default_context()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # certificate and host name checked; no system CA
    context.load_verify_locations(cadata=cadata)
    return context


def _shut(fd: int) -> None:
    """End every read and write of the socket ``fd`` now, from another thread (through a duplicate: the
    reader's socket object, plain or TLS, is left to fail as a closed connection does)."""
    with contextlib.suppress(OSError):
        duplicate = socket.socket(fileno=os.dup(fd))
        with duplicate:
            duplicate.shutdown(socket.SHUT_RDWR)


def _connect(host: str, port: int, deadline: float) -> socket.socket:
    """A connection to the first address of ``host`` that answers, all attempts within ``deadline``
    (``socket.create_connection`` gives each address the whole timeout)."""
    failure: OSError = OSError(f"{host}: no address")
    for family, kind, proto, _, address in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM):
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("deadline")
        sock = socket.socket(family, kind, proto)
        sock.settimeout(remaining)
        try:
            sock.connect(address)
        except OSError as exc:
            sock.close()
            failure = exc
            continue
        return sock
    raise failure


def fetch_within(url: str, headers: dict[str, str], seconds: float, context: ssl.SSLContext | None,
                 limit: int) -> Answer:
    """GET ``url`` (http or https, no redirect followed), at most ``limit + 1`` body bytes, the WHOLE exchange
    (connection, TLS handshake, headers, body) within ``seconds``: a per-read timeout lets a server that drips
    one byte at a time hold a client forever, so a watchdog shuts the socket at the deadline.
    ``Answer.error`` says ``deadline`` when that is what ended it."""
    parts = urlsplit(url)
    started, began = time.perf_counter(), time.monotonic()
    deadline = began + seconds
    host, https = parts.hostname or "", parts.scheme == "https"
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    expired = threading.Event()
    watchdog: threading.Timer | None = None
    sock: socket.socket | None = None
    try:
        port = parts.port or (443 if https else 80)
        sock = _connect(host, port, deadline)
        fd = sock.fileno()

        def expire() -> None:
            expired.set()
            _shut(fd)

        watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), expire)
        watchdog.daemon = True
        watchdog.start()
        if https:
            sock = (context or ssl.create_default_context()).wrap_socket(sock, server_hostname=host)
        conn = http.client.HTTPConnection(host, port, timeout=seconds)
        conn.sock = sock
        conn.request("GET", target, headers=headers)
        resp = conn.getresponse()
        body = bytearray()
        while len(body) <= limit:
            chunk = resp.read1(min(64 * 1024, limit + 1 - len(body)))
            if not chunk:
                break
            body += chunk
        if resp.length and len(body) <= limit:  # the connection ended before the Content-Length promised
            raise http.client.IncompleteRead(bytes(body), resp.length)
        if expired.is_set():
            raise TimeoutError("deadline")
        return Answer(resp.status, bytes(body), tuple(resp.getheaders()), seconds=time.perf_counter() - started,
                      started=began)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        error = "deadline" if expired.is_set() or time.monotonic() >= deadline else type(exc).__name__
        return Answer(0, b"", error=error, seconds=time.perf_counter() - started, started=began)
    finally:
        if watchdog is not None:
            watchdog.cancel()
        if sock is not None:
            sock.close()


@dataclass
class Load:
    """``threads`` proxy-like clients fetching ``paths`` in turn, until stopped, ``limit`` or ``seconds``."""

    addresses: list[tuple[str, int]]
    paths: list[str]
    secret: str
    context: ssl.SSLContext | None
    threads: int = 4
    seconds: float = 30.0
    limit: int = 100_000
    answers: list[tuple[str, Answer]] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _workers: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _run(self, offset: int) -> None:
        deadline = time.monotonic() + self.seconds
        index = offset
        while not self._stop.is_set() and time.monotonic() < deadline:
            path = self.paths[index % len(self.paths)]
            index += self.threads
            answer = fetch(self.addresses, path, self.secret, self.context)
            with self._lock:
                if len(self.answers) >= self.limit:
                    return
                self.answers.append((path, answer))

    def start(self) -> Load:
        for offset in range(self.threads):
            worker = threading.Thread(target=self._run, args=(offset,), daemon=True)
            worker.start()
            self._workers.append(worker)
        return self

    def count(self) -> int:
        with self._lock:
            return len(self.answers)

    def wait_for(self, count: int, timeout: float = 30.0) -> None:
        """Block until at least ``count`` answers have arrived (the load is really running)."""
        deadline = time.monotonic() + timeout
        while self.count() < count and time.monotonic() < deadline:
            time.sleep(0.01)

    def stop(self) -> list[tuple[str, Answer]]:
        self._stop.set()
        for worker in self._workers:
            worker.join()
        return self.answers

    def statuses(self) -> Counter[int]:
        return Counter(answer.status for _, answer in self.answers)

    def __enter__(self) -> Load:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
