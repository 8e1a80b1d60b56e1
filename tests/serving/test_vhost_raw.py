"""Requests no HTTP library would send, on a raw socket: every answer is a manifest body, never HTML."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from nginx_server import JSON_TYPE, NginxServer, parse_raw

SECRET = "{secret}"  # replaced by the server's secret
PATH = "{path}"  # replaced by an agrément of the manifest
GOOD = f"Host: corpus.test\r\nX-Challenge-Secret: {SECRET}\r\n"


def get(target: str = PATH, version: str = "HTTP/1.1", extra: str = "", body: str = "") -> str:
    return f"GET {target} {version}\r\n{GOOD}{extra}\r\n{body}"


# (name, request, expected status, expected body: a /_systeme status or "resource")
CASES: list[tuple[str, str, int, int | str]] = [
    ("garbage request line", "GARBAGE\r\n\r\n", 400, 400),
    ("lower-case method", get().replace("GET", "get", 1), 400, 400),
    ("CONNECT authority form", f"CONNECT corpus.test:443 HTTP/1.1\r\n{GOOD}\r\n", 400, 400),
    ("OPTIONS asterisk form", f"OPTIONS * HTTP/1.1\r\n{GOOD}\r\n", 400, 400),
    ("space inside the target", get("/agrements/AGR 1"), 400, 400),
    ("control character in the target", get("/agr\x01"), 400, 400),
    ("dot segments above the root", get("/../agrements"), 400, 400),
    ("HTTP/2.0 request line", get(version="HTTP/2.0"), 505, 505),
    ("HTTP/3.0 request line", get(version="HTTP/3.0"), 505, 505),
    ("HTTP/9.9 request line", get(version="HTTP/9.9"), 505, 505),
    ("malformed version", get(version="HTTP/1.1x"), 400, 400),
    ("oversized URI", get("/" + "a" * 9000), 414, 414),
    ("oversized header", get(extra="X-Big: " + "a" * 9000 + "\r\n"), 431, 431),
    ("too many large headers", get(extra="".join(f"X-H{i}: {'a' * 7000}\r\n" for i in range(6))), 431, 431),
    ("bad chunked body", get(extra="Transfer-Encoding: chunked\r\n", body="zz\r\n"), 400, 400),
    ("unknown Transfer-Encoding", get(extra="Transfer-Encoding: gzip\r\n"), 501, 501),
    ("gzip then chunked", get(extra="Transfer-Encoding: gzip, chunked\r\n"), 501, 501),
    ("Content-Length and Transfer-Encoding",
     get(extra="Content-Length: 3\r\nTransfer-Encoding: chunked\r\n", body="0\r\n\r\n"), 400, 400),
    ("Transfer-Encoding in HTTP/1.0",
     get(version="HTTP/1.0", extra="Transfer-Encoding: chunked\r\n", body="0\r\n\r\n"), 400, 400),
    ("non-numeric Content-Length", get(extra="Content-Length: abc\r\n"), 400, 400),
    ("duplicate Content-Length", get(extra="Content-Length: 1\r\nContent-Length: 1\r\n", body="ab"), 400, 400),
    ("body too large", get(extra="Content-Length: 5000\r\n", body="a" * 5000), 413, 413),
    ("body too large, expecting 100-continue", get(extra="Expect: 100-continue\r\nContent-Length: 5000\r\n"),
     413, 413),
    ("HTTP/1.1 without Host", f"GET {PATH} HTTP/1.1\r\nX-Challenge-Secret: {SECRET}\r\n\r\n", 400, 400),
    ("duplicate Host", get(extra="Host: other.test\r\n"), 400, 400),
    ("invalid Host", f"GET {PATH} HTTP/1.1\r\nHost: ../x\r\nX-Challenge-Secret: {SECRET}\r\n\r\n", 400, 400),
    ("NUL in a header", get(extra="X-A: a\x00b\r\n"), 400, 400),
    ("space before the colon", get(extra="X-A : b\r\n"), 400, 400),
    ("obsolete line folding", get(extra="X-A: a\r\n folded\r\n"), 400, 400),
    ("TRACE", f"TRACE {PATH} HTTP/1.1\r\n{GOOD}\r\n", 405, 405),
    ("no secret, broken body", f"GET {PATH} HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n", 403, 403),
    # A refused request whose chunked body is malformed: nginx meets the broken chunk while discarding the
    # body of its refusal; the answer is still a manifest body (the 400 one), never nginx's HTML page.
    ("no secret, malformed chunked body",
     f"GET {PATH} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, 400),
    ("POST with a malformed chunked body",
     f"POST {PATH} HTTP/1.1\r\n{GOOD}Transfer-Encoding: chunked\r\n\r\nzz\r\n", 400, 400),
    ("DELETE without secret, malformed chunked body",
     f"DELETE {PATH} HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nabcdeXY\r\n0\r\n\r\n",
     400, 400),
    ("secret after a tab (nginx keeps the tab)",
     f"GET {PATH} HTTP/1.1\r\nHost: x\r\nX-Challenge-Secret:\t{SECRET}\r\n\r\n", 403, 403),
    ("secret with a non-ASCII suffix", f"GET {PATH} HTTP/1.1\r\nHost: x\r\nX-Challenge-Secret: {SECRET}é\r\n\r\n",
     403, 403),
    ("wrong secret first, right one second",
     f"GET {PATH} HTTP/1.1\r\nHost: x\r\nX-Challenge-Secret: wrong-wrong-wrong-1\r\nX-Challenge-Secret: {SECRET}"
     "\r\n\r\n", 403, 403),
    ("secret between spaces (HTTP optional whitespace, not part of the value)",
     f"GET {PATH} HTTP/1.1\r\nHost: x\r\nX-Challenge-Secret:    {SECRET}   \r\n\r\n", 200, "resource"),
    ("absolute-form query", get("http://corpus.test" + PATH + "?"), 404, 404),
    ("non-ASCII path", get("/agréments/AGR-1"), 404, 404),
    ("bare LF line endings", get().replace("\r\n", "\n"), 200, "resource"),
    ("absolute-form target", get("http://corpus.test" + PATH), 200, "resource"),
    ("HTTP/1.0 without Host", f"GET {PATH} HTTP/1.0\r\nX-Challenge-Secret: {SECRET}\r\n\r\n", 200, "resource"),
    ("header line without colon (ignored)", get(extra="Foo\r\n"), 200, "resource"),
    ("small chunked body (discarded)", get(extra="Transfer-Encoding: chunked\r\n", body="3\r\nabc\r\n0\r\n\r\n"),
     200, "resource"),
]


@pytest.fixture(scope="module")
def server() -> Iterator[NginxServer]:
    with NginxServer() as srv:
        yield srv


def _path(server: NginxServer) -> str:
    return next(e["path"] for e in server.manifest["resources"]
                if e["kind"] == "resource" and e["path"].startswith("/agrements/"))


@pytest.mark.parametrize(("name", "request_text", "status", "body"), CASES, ids=[c[0] for c in CASES])
def test_raw_request_gets_a_manifest_body(server: NginxServer, name: str, request_text: str, status: int,
                                          body: int | str) -> None:
    path = _path(server)
    data = request_text.replace(SECRET, server.secret).replace(PATH, path).encode("utf-8")
    answer = server.raw(data)
    assert b"<html" not in answer.lower()
    got_status, headers, got_body = parse_raw(answer)
    expected = server.body_of(path) if body == "resource" else server.body_of(f"/_systeme/{body}")
    assert got_status == status, got_body[:120]
    assert headers["content-type"] == JSON_TYPE
    assert "no-store" in headers["cache-control"]
    assert got_body == expected


def test_pipelined_requests_then_garbage(server: NginxServer) -> None:
    path = _path(server)
    one = get().replace(SECRET, server.secret).replace(PATH, path)
    answer = server.raw((one * 2 + "GARBAGE\r\n\r\n").encode())
    resource, bad = server.body_of(path), server.body_of("/_systeme/400")
    assert answer.count(b"HTTP/1.1 200 OK\r\n") == 2 and answer.count(b"HTTP/1.1 400 Bad Request\r\n") == 1
    assert answer.count(resource) == 2 and answer.endswith(bad)
    assert b"<html" not in answer.lower()


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_http09_gets_a_bare_json_body(server: NginxServer, method: str) -> None:
    """HTTP/0.9 has no headers, so no secret: nginx answers GET with the bare 403 body, others with 400."""
    answer = server.raw(f"{method} {_path(server)}\r\n".encode())
    assert answer == server.body_of("/_systeme/403" if method == "GET" else "/_systeme/400")
