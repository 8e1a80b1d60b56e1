"""A client that calls the corpus the way the Trust Layer proxy does, for the topology tests and benchmarks.

The proxy opens a new HTTP client per call: one TCP connection, one TLS handshake, one request. Given
several addresses for one name it tries them in turn when a connection cannot be established (that is
what the two-frontal plan relies on); a failure after the request was sent is not retried. :func:`fetch`
does exactly that, the whole exchange within one deadline (:mod:`generator.observe.http_exchange`, the
client every network command shares); :class:`Load` runs it from a few threads for a bounded time or count
and keeps every answer, so a test can assert "0 failed" and "every body is a manifest body".
"""

from __future__ import annotations

import ssl
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from generator.observe.http_exchange import Answer, exchange

__all__ = ["Answer", "Load", "ca_context", "fetch", "tls_context"]

BODY_LIMIT = 64 * 1024 * 1024  # far above any served body; a server that sends more is cut there


def tls_context(ca: Path) -> ssl.SSLContext:
    """Verify the frontal against ``ca``, as the proxy verifies the production certificate."""
    return ssl.create_default_context(cafile=str(ca))


def fetch(addresses: list[tuple[str, int]], path: str, secret: str | None, context: ssl.SSLContext | None,
          *, method: str = "GET", timeout: float = 10.0, server_name: str = "localhost",
          limit: int = BODY_LIMIT) -> Answer:
    """One request on a new connection, the whole exchange within ``timeout``; the next address only when
    connecting to one fails (:func:`generator.observe.http_exchange.exchange`)."""
    host, port = addresses[0]
    url = f"{'https' if context is not None else 'http'}://{host}:{port}{path}"
    headers = {"X-Challenge-Secret": secret} if secret else {}
    return exchange(url, seconds=timeout, limit=limit, method=method, headers=headers, context=context,
                    addresses=addresses, server_name=server_name)


def ca_context(cadata: str | None) -> ssl.SSLContext:
    """The context that verifies a server (certificate and host name) against the CA certificates ``cadata``
    (PEM text), or the system's when None; :class:`ssl.SSLError` when ``cadata`` holds no certificate."""
    if cadata is None:
        return ssl.create_default_context()
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # certificate and host name checked; no system CA
    context.load_verify_locations(cadata=cadata)
    return context


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
