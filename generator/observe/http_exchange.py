"""One HTTP exchange within one deadline: the client every network command of the project shares.

A timeout per socket read (what ``requests`` and ``http.client`` offer) lets a server that trickles its
answer, a byte of the headers or of the body every half second, hold a client forever. Here the deadline is
for the whole exchange, fixed when it starts: the connection (every address of the host, in turn), the TLS
handshake, the request, the status line and headers, and the body up to a limit. A watchdog shuts the socket
at the deadline, whatever read is waiting; the exchange then ends with ``Answer.error == "deadline"``.
``corpus proofs fetch`` (:mod:`generator.observe.proof_fetch`), ``corpus verify``, ``freeze-check --url`` and
the proxy-like client of the tests and benchmarks (:mod:`generator.observe.proxy_client`) all call
:func:`exchange`.

``Retry-After`` (RFC 9110 §10.2.3) is read here too (:func:`retry_after`): delay-seconds of any length, or an
HTTP-date in any of the three forms a recipient must accept, never by the locale's names.
"""

from __future__ import annotations

import contextlib
import http.client
import math
import os
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

DEADLINE = "deadline"  # Answer.error when the deadline ended the exchange
CHUNK = 64 * 1024


@dataclass(frozen=True)
class Answer:
    status: int  # 0: no complete HTTP answer (``error`` says why)
    body: bytes  # at most the limit + 1 bytes: a caller sees that the body was larger than it allows
    headers: tuple[tuple[str, str], ...] = ()
    error: str = ""
    seconds: float = 0.0
    started: float = 0.0  # time.monotonic() when the call began

    def header(self, name: str) -> str | None:
        """The first header called ``name`` (case aside), or None."""
        wanted = name.lower()
        return next((value for key, value in self.headers if key.lower() == wanted), None)


def tls_context(verify: bool | str = True) -> ssl.SSLContext:
    """The context that checks a server: the system's CAs (True), a CA file (its path), or nothing (False:
    ``--insecure``, the certificate and the name unchecked)."""
    if verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    return ssl.create_default_context(cafile=verify if isinstance(verify, str) else None)


def _shut(fd: int) -> None:
    """End every read and write of the socket ``fd`` now, from another thread (through a duplicate: the
    reader's socket object, plain or TLS, is left to fail as a closed connection does)."""
    with contextlib.suppress(OSError):
        duplicate = socket.socket(fileno=os.dup(fd))
        with duplicate:
            duplicate.shutdown(socket.SHUT_RDWR)


def _connect(addresses: list[tuple[str, int]], deadline: float) -> tuple[socket.socket, str, int]:
    """A connection to the first of ``addresses`` (each resolved, every address of a name in turn) that
    answers, all attempts within ``deadline``, and the host and port it reached; the next one only when
    connecting to one fails."""
    failures: list[str] = []
    for host, port in addresses:
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            failures.append(f"{host}:{port}: {exc}")
            continue
        for family, kind, proto, _, address in found:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(DEADLINE)
            sock = socket.socket(family, kind, proto)
            sock.settimeout(remaining)
            try:
                sock.connect(address)
            except OSError as exc:
                sock.close()
                failures.append(f"{host}:{port}: {exc}")
                continue
            return sock, host, port
    raise ConnectionError("all connection attempts failed: " + "; ".join(failures))


def _target(url: str) -> tuple[str, int, bool, str]:
    """Host, port, https?, and the request target (path and query) of ``url``."""
    parts = urlsplit(url)
    https = parts.scheme == "https"
    return (parts.hostname or "", parts.port or (443 if https else 80), https,
            (parts.path or "/") + (f"?{parts.query}" if parts.query else ""))


def _read_body(resp: http.client.HTTPResponse, limit: int) -> bytes:
    body = bytearray()
    while len(body) <= limit:
        chunk = resp.read1(min(CHUNK, limit + 1 - len(body)))
        if not chunk:
            break
        body += chunk
    if resp.length and len(body) <= limit:  # the connection ended before the Content-Length promised
        raise http.client.IncompleteRead(bytes(body), resp.length)
    return bytes(body)


def exchange(url: str, *, seconds: float, limit: int, method: str = "GET", headers: dict[str, str] | None = None,
             body: bytes | None = None, context: ssl.SSLContext | None = None,
             addresses: list[tuple[str, int]] | None = None, server_name: str | None = None) -> Answer:
    """``method url`` (http or https; no redirect followed: its ``Location`` is in the headers), at most
    ``limit + 1`` body bytes read, the WHOLE exchange within ``seconds``. ``addresses`` (default: the URL's
    host and port) are tried in turn when connecting fails, as the Trust Layer proxy does; ``server_name``
    is the name TLS checks (default: the URL's host). Never raises for the network: ``Answer.error`` names
    what ended it (:data:`DEADLINE`, or the exception's name: ``ConnectionError``,
    ``SSLCertVerificationError``)."""
    began, started = time.monotonic(), time.perf_counter()
    deadline = began + seconds
    host, port, https, target = _target(url)
    name = server_name or host
    expired = threading.Event()
    watchdog: threading.Timer | None = None
    sock: socket.socket | None = None
    try:
        sock, host, port = _connect(addresses or [(host, port)], deadline)
        fd = sock.fileno()

        def expire() -> None:
            expired.set()
            _shut(fd)

        watchdog = threading.Timer(max(0.0, deadline - time.monotonic()), expire)
        watchdog.daemon = True
        watchdog.start()
        if https:
            sock = (context or tls_context()).wrap_socket(sock, server_hostname=name)
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        conn = http.client.HTTPConnection(host, port)
        conn.sock = sock
        conn.request(method, target, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = _read_body(resp, limit)
        if expired.is_set():
            raise TimeoutError(DEADLINE)
        return Answer(resp.status, data, tuple(resp.getheaders()), seconds=time.perf_counter() - started,
                      started=began)
    except (OSError, http.client.HTTPException, ValueError) as exc:
        late = expired.is_set() or time.monotonic() >= deadline
        error = DEADLINE if late else type(exc).__name__
        return Answer(0, b"", error=error, seconds=time.perf_counter() - started, started=began)
    finally:
        if watchdog is not None:
            watchdog.cancel()
        if sock is not None:
            sock.close()


# -- Retry-After (RFC 9110 §10.2.3; the HTTP-date of §5.6.7) ------------------------------------------------

_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_LONG_DAY = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_MONTH = f"({'|'.join(_MONTHS)})"
_CLOCK = "([0-9]{2}):([0-9]{2}):([0-9]{2})"
_IMF = re.compile(f"{_DAY}, ([0-9]{{2}}) {_MONTH} ([0-9]{{4}}) {_CLOCK} GMT")
_RFC850 = re.compile(f"{_LONG_DAY}, ([0-9]{{2}})-{_MONTH}-([0-9]{{2}}) {_CLOCK} GMT")
_ASCTIME = re.compile(f"{_DAY} {_MONTH} ([ 0-9][0-9]) {_CLOCK} ([0-9]{{4}})")


def http_date(text: str, now: float) -> datetime | None:
    """An HTTP-date: IMF-fixdate, or the obsolete RFC 850 and asctime forms a recipient must accept; a
    two-digit year more than 50 years ahead of ``now`` is the last such year in the past. None otherwise."""
    try:
        if found := _IMF.fullmatch(text):
            day, month, year, hour, minute, second = found.groups()
        elif found := _ASCTIME.fullmatch(text):
            month, day, hour, minute, second, year = found.groups()
        elif found := _RFC850.fullmatch(text):
            day, month, short, hour, minute, second = found.groups()
            this_year = datetime.fromtimestamp(now, UTC).year
            year = str(this_year // 100 * 100 + int(short))
            if int(year) > this_year + 50:
                year = str(int(year) - 100)
        else:
            return None
        return datetime(int(year), _MONTHS.index(month) + 1, int(day), int(hour), int(minute), int(second),
                        tzinfo=UTC)
    except (ValueError, OverflowError, OSError):  # 31 Feb, hour 25...
        return None


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait from ``now`` (a Unix time): delay-seconds of any size
    (``math.inf`` past what a float holds), or an HTTP-date (0 when it is past); None if absent or unreadable."""
    if value is None:
        return None
    text = value.strip(" \t")
    if re.fullmatch("[0-9]+", text):
        digits = text.lstrip("0") or "0"
        return math.inf if len(digits) > 300 else float(int(digits))
    when = http_date(text, now)
    return None if when is None else max(0.0, when.timestamp() - now)


def run_again_at(now: float, seconds: float) -> str:
    """When a command stopped by a wait of ``seconds`` from ``now`` (a Unix time) may run again, in words."""
    try:
        when = datetime.fromtimestamp(now + seconds, UTC)
    except (OverflowError, OSError, ValueError):
        return "no date can be given (the wait goes beyond year 9999): ask the service's operator"
    return f"run it again after {when:%Y-%m-%dT%H:%M:%SZ}"


def seconds_text(seconds: float) -> str:
    """A wait asked, as its number of seconds (an enormous one is written in powers of ten)."""
    if math.isinf(seconds):
        return "more seconds than can be counted"
    if seconds >= 1e15:
        return f"about 10^{math.floor(math.log10(seconds))} s"
    return f"{seconds:.0f} s"
