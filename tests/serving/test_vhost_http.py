"""The vhost through a real nginx: bytes, hashes, secret, canonical forms, absents, headers, conditionals.

Expected bytes come from the build snapshot the server serves and from the manifest; expected hashes
from generator.contract.hashing, with hashlib on the raw bytes as an independent check.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import random
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from nginx_server import JSON_TYPE, NginxServer, Response
from trackfix import CONFORMITE

from generator.contract.bodies import absent_body, body_bytes
from generator.contract.hashing import request_hash, response_hash
from generator.contract.manifest import Manifest
from generator.observe.verify import undeclared_paths

PROBE = "/corpus-test-status/"
NEVER_SENT = 408  # ngx_http_finalize_request terminates the request instead of answering


def _probe_conf(statuses: list[int]) -> str:
    """Test-only locations that make nginx produce each status, to check every error body."""
    return "".join(f"location = {PROBE}{s} {{ return {s}; }}\n" for s in statuses)


@pytest.fixture(scope="module")
def server(manifest_statuses: list[int]) -> Iterator[NginxServer]:
    with NginxServer(secrets=None, extra_server_conf=_probe_conf(manifest_statuses)) as srv:
        yield srv


@pytest.fixture(scope="module")
def manifest_statuses(manifest: dict[str, Any]) -> list[int]:
    return sorted(e["status"] for e in manifest["resources"] if e["kind"] == "systeme")


def entries(server: NginxServer, *kinds: str) -> list[dict[str, Any]]:
    return [e for e in server.manifest["resources"] if e["kind"] in kinds]


def systeme(server: NginxServer, status: int) -> bytes:
    return server.body_of(f"/_systeme/{status}")


def sample(server: NginxServer) -> str:
    """An agrément that exists in the served manifest."""
    return next(e["path"] for e in entries(server, "resource") if e["path"].startswith("/agrements/"))


def assert_json_answer(resp: Response, status: int, body: bytes) -> None:
    assert resp.status == status, resp.body[:200]
    assert resp.body == body
    assert resp.header("Content-Type") == JSON_TYPE


# ------------------------------------------------------------------------------ every manifest entry


def test_every_served_entry_is_byte_identical_and_hashes_as_the_proxy(server: NginxServer) -> None:
    served = entries(server, "resource", "absent")
    assert len(served) > 10
    base = server.manifest["base_url"]
    conn = server.connection()
    try:
        for entry in served:
            conn.request("GET", entry["path"], headers={"X-Challenge-Secret": server.secret})
            resp = conn.getresponse()
            data = resp.read()
            assert resp.status == 200, entry["path"]
            assert data == server.body_of(entry["path"]), entry["path"]
            assert len(data) == entry["length"]
            assert hashlib.sha256(data).hexdigest() == entry["sha256"]
            assert response_hash(data) == entry["response_hash"], entry["path"]
            parsed = json.loads(data)
            canonical = json.dumps(parsed, sort_keys=True, separators=(",", ":"), default=str)
            assert hashlib.sha256(canonical.encode()).hexdigest() == entry["response_hash"]
            assert request_hash(base + entry["path"]) == entry["request_hash"]
            assert parsed["ressource"] == entry["path"]
    finally:
        conn.close()


def test_every_systeme_body_is_what_nginx_sends_for_its_status(server: NginxServer,
                                                               manifest_statuses: list[int]) -> None:
    assert {400, 403, 404, 405, 412, 413, 414, 431, 500, 501, 503, 505} <= set(manifest_statuses)
    for status in manifest_statuses:
        if status == NEVER_SENT:
            continue
        entry = next(e for e in entries(server, "systeme") if e["status"] == status)
        resp = server.request(f"{PROBE}{status}")
        assert_json_answer(resp, status, systeme(server, status))
        assert hashlib.sha256(resp.body).hexdigest() == entry["sha256"]
        assert response_hash(resp.body) == entry["response_hash"]
        assert json.loads(resp.body)["ressource"] == f"/_systeme/{status}"
        head = server.request(f"{PROBE}{status}", method="HEAD")
        assert head.status == status and head.body == b""


def test_nginx_closes_instead_of_sending_408(server: NginxServer) -> None:
    """nginx never writes a 408 (it closes the connection): no bytes at all, so no HTML either."""
    answer = server.raw(f"GET {PROBE}{NEVER_SENT} HTTP/1.1\r\nHost: x\r\nX-Challenge-Secret: {server.secret}"
                        "\r\n\r\n".encode())
    assert answer == b""


# ------------------------------------------------------------------------------------------ secret


def near_misses(secret: str) -> list[str]:
    misses = {secret.upper(), secret.lower(), secret.swapcase(), secret[:-1], secret[1:], secret + "x",
              "x" + secret, secret[:8] + " " + secret[8:], secret + " " + secret, secret + "," + secret,
              secret[:-1] + ("A" if secret[-1] != "A" else "B"), "", "0", "1", "*", ".*", "^" + secret}
    misses.discard(secret)
    return sorted(misses)


@pytest.mark.parametrize("method", ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"])
def test_403_without_the_exact_secret_whatever_the_path_or_method(server: NginxServer, method: str) -> None:
    forbidden = systeme(server, 403)
    paths = [sample(server), sample(server) + "/", "/agrements/AGR-999999", "/", "/_systeme/403",
             "/nope?x=1", "/catalogue"]
    for path in paths:
        for secret in [None, *near_misses(server.secret)]:
            resp = server.request(path, method=method, secret=secret)
            assert resp.status == 403, (path, secret)
            assert resp.header("Content-Type") == JSON_TYPE
            assert resp.body == (b"" if method == "HEAD" else forbidden), (path, secret)
            if method == "HEAD":
                assert resp.header("Content-Length") == str(len(forbidden))


def test_secret_header_name_is_case_insensitive_but_underscores_do_not_count(server: NginxServer) -> None:
    path = sample(server)
    ok = server.request(path, secret=None, headers={"x-challenge-secret": server.secret})
    assert ok.status == 200 and ok.body == server.body_of(path)
    underscored = server.request(path, secret=None, headers={"X_Challenge_Secret": server.secret})
    assert_json_answer(underscored, 403, systeme(server, 403))


def test_403_body_explains_the_proxy_path(server: NginxServer) -> None:
    body = json.loads(server.request(sample(server), secret=None).body)
    assert body["ressource"] == "/_systeme/403"
    assert "proxy" in json.dumps(body, ensure_ascii=False).lower()


# ------------------------------------------------------------------------------- canonical forms


def non_canonical_forms(path: str) -> list[str]:
    """Every other spelling of ``path`` a client could send (the forms that equal it are dropped)."""
    head, _, ident = path.rpartition("/")
    forms = [path + "/", path + "?", path + "?a=1", path + ".json", path + "#x", path.upper(),
             path[:2].upper() + path[2:], head + "/" + ident.lower(), head + "//" + ident, "/" + path,
             head + "/./" + ident, path.replace("-", "%2D", 1),
             "/%" + format(ord(path[1]), "02X") + path[2:], path + "%20", path + "/x", head, head + "/",
             "/_systeme/404", "/_systeme/403.json", "/", "/build" + path, path + ";", path + "~", path + "_"]
    if head:  # "/../x" climbs above the root: nginx answers that with the 400 body (see test_vhost_raw)
        forms.append(head + "/../" + head.strip("/") + "/" + ident)
    return [form for form in dict.fromkeys(forms) if form and form != path]


def test_only_the_exact_canonical_path_gets_the_bytes(server: NginxServer) -> None:
    not_found = systeme(server, 404)
    for path in [sample(server), "/catalogue", "/referentiel"]:
        good = server.request(path)
        assert good.status == 200 and good.body == server.body_of(path)
        for form in non_canonical_forms(path):
            resp = server.request(form)
            assert_json_answer(resp, 404, not_found)


# -------------------------------------------------------------------------------------- absents


def test_declared_absents_are_served_with_the_template_bytes(server: NginxServer) -> None:
    declared = entries(server, "absent")
    assert declared, "the season declares at least one absent reference"
    for entry in declared:
        resp = server.request(entry["path"])
        expected = body_bytes(absent_body(entry["path"]))
        assert_json_answer(resp, 200, expected)
        assert hashlib.sha256(resp.body).hexdigest() == entry["sha256"]
        assert response_hash(resp.body) == entry["response_hash"]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_undeclared_identifiers_of_every_collection_get_the_template(server: NginxServer, seed: int) -> None:
    paths = undeclared_paths(Manifest.load(server.root, "manifest/conformite"), CONFORMITE.collections,
        random.Random(seed))
    assert len(paths) >= 5  # one per collection the season uses
    for path in paths:
        resp = server.request(path)
        expected = body_bytes(absent_body(path))
        assert_json_answer(resp, 200, expected)
        body = json.loads(resp.body)
        assert body["ressource"] == path and body["existe"] is False
        assert hashlib.sha256(resp.body).hexdigest() == hashlib.sha256(expected).hexdigest()
        head = server.request(path, method="HEAD")
        assert head.status == 200 and head.body == b"" and head.header("Content-Length") == str(len(expected))


def test_paths_outside_every_collection_shape_get_404(server: NginxServer) -> None:
    not_found = systeme(server, 404)
    for path in ["/agrements/agr-99999", "/agrements/AGR-99", "/agrements/AGR-1234567", "/Agrements/AGR-99999",
                 "/mesures-restrictives/0", "/mesures-restrictives/1000", "/listes/agrees/Courtage/1",
                 "/beneficiaires/ENT-99999", "/inconnu/ENT-99999", "/entites/ATT-99999"]:
        assert_json_answer(server.request(path), 404, not_found)


# ------------------------------------------------------------------------------ methods and HEAD


def test_head_gives_headers_only(server: NginxServer) -> None:
    path = sample(server)
    resp = server.request(path, method="HEAD")
    assert resp.status == 200 and resp.body == b""
    assert resp.header("Content-Length") == str(len(server.body_of(path)))
    assert resp.header("Content-Type") == JSON_TYPE


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE", "PROPFIND", "MKCOL"])
def test_other_methods_get_405(server: NginxServer, method: str) -> None:
    for path in [sample(server), "/agrements/AGR-999999", "/nope"]:
        assert_json_answer(server.request(path, method=method), 405, systeme(server, 405))


def test_small_body_on_get_is_ignored_and_large_body_gets_413(server: NginxServer) -> None:
    path = sample(server)
    small = server.request(path, body=b"x" * 100)
    assert small.status == 200 and small.body == server.body_of(path)
    assert_json_answer(server.request(path, body=b"x" * 5000), 413, systeme(server, 413))
    # the secret comes first, even before the body limit
    assert_json_answer(server.request(path, secret=None, body=b"x" * 5000), 403, systeme(server, 403))


# -------------------------------------------------------------------------------------- headers


NO_CACHE = {
    "Cache-Control": "no-store",
    "Pragma": "no-cache",
    "Surrogate-Control": "no-store",
    "CDN-Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
}


def test_every_answer_forbids_caching_and_sniffing(server: NginxServer) -> None:
    path = sample(server)
    answers = [server.request(path, headers={"Accept-Encoding": "gzip, br"}),
               server.request("/agrements/AGR-999999"), server.request(path, secret=None),
               server.request(path + "/"), server.request(path, method="DELETE"),
               server.request(path, headers={"If-Match": "*"}), server.request(f"{PROBE}500")]
    for resp in answers:
        for name, token in NO_CACHE.items():
            assert token in (resp.header(name) or ""), (resp.status, name)
        assert "max-age=0" in (resp.header("Cache-Control") or "")
        assert resp.header("Expires") == "Thu, 01 Jan 1970 00:00:00 GMT"
        assert resp.header("Content-Type") == JSON_TYPE
        assert resp.header("Server") == "nginx"  # no version
        for absent in ("Last-Modified", "ETag", "Accept-Ranges", "Content-Encoding", "Vary"):
            assert resp.header(absent) is None, (resp.status, absent)
        assert int(resp.header("Content-Length") or -1) == len(resp.body) > 0


# --------------------------------------------------------------------------------- conditionals


IGNORED_CONDITIONS = [
    {"If-None-Match": '"abc"'}, {"If-None-Match": 'W/"abc"'},
    {"If-Modified-Since": "Thu, 01 Jan 2099 00:00:00 GMT"},
    {"If-Modified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"},
    {"If-Modified-Since": "now"},  # the date of the request (not of collection: two workers must collect alike)
    {"Range": "bytes=0-3"}, {"Range": "bytes=-5"}, {"Range": "bytes=0-1,5-9"},
    {"Range": "bytes=0-3", "If-Range": "Thu, 01 Jan 2099 00:00:00 GMT"},
    {"Range": "bytes=0-3", "If-Range": '"abc"'},
]
REFUSED_CONDITIONS = [
    {"If-None-Match": "*"}, {"If-None-Match": "*", "If-Modified-Since": "Thu, 01 Jan 2099 00:00:00 GMT"},
    {"If-Match": "*"}, {"If-Match": '"abc"'}, {"If-Match": "0"},
    {"If-Unmodified-Since": "Thu, 01 Jan 2099 00:00:00 GMT"},
    {"If-Unmodified-Since": "Thu, 01 Jan 1970 00:00:00 GMT"}, {"If-Unmodified-Since": "garbage"},
]


@pytest.mark.parametrize("headers", IGNORED_CONDITIONS, ids=lambda h: ";".join(f"{k}={v}" for k, v in h.items()))
def test_ranges_and_cache_validators_are_ignored(server: NginxServer, headers: dict[str, str]) -> None:
    now = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime())
    headers = {name: now if value == "now" else value for name, value in headers.items()}
    for path in [sample(server), "/agrements/AGR-999999"]:
        resp = server.request(path, headers=headers)
        expected = server.body_of(path) if path == sample(server) else body_bytes(absent_body(path))
        assert_json_answer(resp, 200, expected)
        assert resp.header("Content-Range") is None


@pytest.mark.parametrize("headers", REFUSED_CONDITIONS, ids=lambda h: ";".join(f"{k}={v}" for k, v in h.items()))
def test_preconditions_get_the_fixed_412(server: NginxServer, headers: dict[str, str]) -> None:
    for path in [sample(server), "/agrements/AGR-999999"]:
        assert_json_answer(server.request(path, headers=headers), 412, systeme(server, 412))


# ---------------------------------------------------------------------------------- concurrency


def test_concurrent_clients_get_exact_bytes(server: NginxServer) -> None:
    """50 keep-alive clients x 100 requests over resources, absents and refusals: zero wrong byte."""
    targets: list[tuple[str, str | None, int, bytes]] = [
        (e["path"], server.secret, 200, server.body_of(e["path"])) for e in entries(server, "resource", "absent")]
    targets.append((sample(server), None, 403, systeme(server, 403)))
    targets.append((sample(server) + "/", server.secret, 404, systeme(server, 404)))
    wrong: list[str] = []
    done = [0]
    lock = threading.Lock()

    def client(index: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=20)
        try:
            for n in range(100):
                path, secret, status, body = targets[(index * 7 + n) % len(targets)]
                conn.request("GET", path, headers={"X-Challenge-Secret": secret} if secret else {})
                resp = conn.getresponse()
                data = resp.read()
                with lock:
                    done[0] += 1
                    if resp.status != status or data != body:
                        wrong.append(f"{path}: {resp.status}")
        except Exception as exc:
            with lock:
                wrong.append(f"client {index}: {exc!r}")
        finally:
            conn.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(50)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not wrong, wrong[:10]
    assert done[0] == 5000


# ------------------------------------------------------------------------------------------- logs


def _log_lines(server: NginxServer, marker: str, count: int, timeout: float = 5.0) -> list[dict[str, Any]]:
    """The access-log lines whose user agent is ``marker`` (the log is flushed every second)."""
    deadline = time.monotonic() + timeout
    while True:
        lines = [json.loads(line) for line in server.access_log().splitlines() if marker in line]
        if len(lines) >= count or time.monotonic() > deadline:
            return lines
        time.sleep(0.2)


def test_access_log_is_json_with_the_secret_verdict_and_never_the_secret(server: NginxServer) -> None:
    marker = f"corpus-log-test-{random.randrange(10**9)}"
    path, secret = sample(server), server.secret
    misses = [secret.swapcase(), secret[:-1], secret + "x", secret.upper(), secret[:8] + " " + secret[8:]]
    server.request(path, headers={"User-Agent": f"{marker}-ok"})
    for n, miss in enumerate(misses):
        server.request(path, secret=miss, headers={"User-Agent": f"{marker}-miss{n}"})
    server.request(path + "?q=1", headers={"User-Agent": f"{marker}-query"})
    # an error that nginx logs at "error" level, in a request carrying the secret
    server.raw(f"GET {path} HTTP/1.1\r\nHost: x\r\nX-Challenge-Secret: {secret}\r\nUser-Agent: {marker}-chunk\r\n"
               "Transfer-Encoding: chunked\r\n\r\nzz\r\n".encode())
    # one line per request; workers buffer separately, so the file is not in request order
    lines = {line["user_agent"].removeprefix(marker + "-"): line for line in _log_lines(server, marker, 8)}
    assert len(lines) == 8
    for line in lines.values():
        assert set(line) == {"time", "request_id", "method", "uri", "status", "bytes", "secret_ok",
                             "user_agent", "request_time", "role", "upstream_addr", "upstream_status"}
        assert (line["role"], line["upstream_addr"], line["upstream_status"]) == ("replica", "", "")
        assert re.fullmatch(r"[0-9]+-[0-9]+-[0-9]+", line["request_id"])
        assert line["time"].startswith(time.strftime("%Y-"))
        assert isinstance(line["status"], int) and isinstance(line["bytes"], int)
        assert isinstance(line["secret_ok"], bool) and isinstance(line["request_time"], float | int)
    ok = lines["ok"]
    assert (ok["method"], ok["uri"], ok["status"], ok["secret_ok"]) == ("GET", path, 200, True)
    assert ok["bytes"] == len(server.body_of(path))
    for n in range(len(misses)):
        assert (lines[f"miss{n}"]["status"], lines[f"miss{n}"]["secret_ok"]) == (403, False)
    query = lines["query"]
    assert (query["status"], query["uri"], query["secret_ok"]) == (404, path + "?q=1", True)
    assert lines["chunk"]["status"] == 400
    assert len({line["request_id"] for line in lines.values()}) == len(lines)
    assert "invalid chunked body" in server.error_log()  # the error log did record that request...
    logs = server.access_log() + server.error_log()
    for value in [secret, *misses]:
        assert value not in logs  # ...but never the secret, nor a near miss
    assert "[info]" not in server.error_log()
