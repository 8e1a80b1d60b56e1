"""``corpus proofs fetch`` against a real HTTP server on 127.0.0.1 standing for Trust Layer's read endpoints.

The server answers as ark-forge/trust-layer does (``POST /v1/proofs``: ``{"proof_ids": [...]}``, 1 to 50 ids
of the proof_id form, else 400 for the whole batch; ``{"proofs": {id: view or null}}``, null for another
seller's proof or none; ``GET /v1/proof/{id}``; 429 once an address is past its reads of the hour) and counts
every request. The rate wait runs on a fake clock shared by the client and the server: no hour is waited,
no time is asserted.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_corpus
from trust_layer_fixtures import TrustLayer

from generator.observe import proof_fetch
from generator.observe.proof_fetch import (
    FetchError,
    ProofFetch,
    cited_proof_ids,
    proof_id_problem,
    retry_after,
    waiting,
)
from generator.observe.read_budget import WINDOW, ReadBudget, duration
from generator.score.close_inputs import ProofFolder, load_proofs

PROVE_IT = ("corpus.arkforge.tech", "proveit.arkforge.tech")
FORM = "prf_YYYYMMDD_HHMMSS_<6 to 64 lowercase hex digits>"  # trust_layer/trust_proof.py's words
ID_FORM = re.compile(r"prf_[0-9]{8}_[0-9]{6}_[0-9a-f]{6}")  # Trust Layer's own _PROOF_ID_RE


def pid(n: int) -> str:
    return f"prf_20261202_0130{n // 100 % 100:02d}_{n:06x}"


def view(proof_id: str, seller: str = "corpus.arkforge.tech", anchored: bool = True) -> dict[str, Any]:
    """A public view of the 3.1 shape (the fields a fetch reads; the others as Trust Layer names them)."""
    return {"proof_id": proof_id, "spec_version": "3.1", "seller": seller, "views_count": 0,
            "hashes": {"chain": "sha256:" + hashlib.sha256(proof_id.encode()).hexdigest()},
            "batch_anchor": {"status": "anchored" if anchored else "pending"}, "integrity_verified": True}


class FakeClock:
    """The fetch's and the server's clock: ``sleep`` moves it on at once and is recorded."""

    def __init__(self) -> None:
        self.now = 1_000_000.0
        self.sleeps: list[float] = []
        self.lock = threading.Lock()

    def monotonic(self) -> float:
        with self.lock:
            return self.now

    def time(self) -> float:
        return self.monotonic()

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.sleeps.append(seconds)
            self.now += seconds


class TrustLayerReads:
    """The read endpoints of Trust Layer, on an ephemeral loopback port, with the state a test sets."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.views: dict[str, Any] = {}  # what GET /v1/proof/{id} serves (any seller)
        self.unit: dict[str, tuple[int, bytes]] = {}  # a proof's own answer, instead of its view
        self.batch_answer: tuple[int, bytes] | None = None  # the batch's answer, instead of the views
        self.redirect = ""  # every answer a 301 to this Location
        self.too_many: list[str | None] = []  # the next answers are 429, with this Retry-After (None: none)
        self.delay = 0.0  # seconds before the answer
        self.drip = 0.0  # seconds between two bytes of the body
        self.limit = 100  # reads an address may make in the hour of the counter (then 429)
        self.log: list[tuple[str, str, Any]] = []
        self.blocked = 0
        self._window: tuple[float, int] = (0.0, 0)  # start of the counter's hour, reads in it
        self.lock = threading.Lock()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, args=(0.05,), daemon=True)

    def add(self, *views: dict[str, Any]) -> list[str]:
        for one in views:
            self.views[one["proof_id"]] = one
        return [one["proof_id"] for one in views]

    def count(self, method: str) -> int:
        return sum(1 for m, _, _ in self.log if m == method)

    def _counted(self) -> bool:
        """Trust Layer's counter: an hour from its first read; past ``limit`` reads, the address is blocked."""
        now = self.clock.monotonic()
        start, reads = self._window
        if now >= start + WINDOW:
            start, reads = now, 0
        if reads >= self.limit:
            self.blocked += 1
            return False
        self._window = (start, reads + 1)
        return True

    def _batch(self, body: Any) -> tuple[int, bytes]:
        ids = body.get("proof_ids") if isinstance(body, dict) else None
        if (not isinstance(ids, list) or not 1 <= len(ids) <= 50
                or not all(isinstance(i, str) and ID_FORM.fullmatch(i) for i in ids)):
            return 400, b'{"error": {"code": "invalid_request", "status": 400}}'
        served = {i: (self.views[i] if i in self.views and self.views[i].get("seller") in PROVE_IT else None)
                  for i in dict.fromkeys(ids)}
        return 200, json.dumps({"proofs": served}).encode()

    def _answer(self, method: str, path: str, data: bytes) -> tuple[int, bytes, dict[str, str]]:
        with self.lock:
            body = json.loads(data) if method == "POST" and data else None
            self.log.append((method, path, body))
            if self.redirect:
                return 301, b"", {"Location": self.redirect}
            if self.too_many:
                after = self.too_many.pop(0)
                return 429, b'{"error": {"code": "rate_limited"}}', {} if after is None else {"Retry-After": after}
            if not self._counted():
                return 429, b'{"error": {"code": "rate_limited"}}', {}
            if method == "POST" and path == "/v1/proofs":
                return (*(self.batch_answer or self._batch(body)), {})
            found = re.fullmatch(r"/v1/proof/([^/]+)", path)
            if method == "GET" and found:
                proof_id = found.group(1)
                if not ID_FORM.fullmatch(proof_id):
                    return 400, b'{"error": {"code": "invalid_request", "status": 400}}', {}
                if proof_id in self.unit:
                    return (*self.unit[proof_id], {})
                if proof_id in self.views:
                    return 200, json.dumps(self.views[proof_id]).encode(), {}
                return 404, b'{"error": {"code": "not_found", "status": 404}}', {}
            return 404, b'{"detail": "Not Found"}', {}

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        reads = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _serve(self, method: str) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                status, body, headers = reads._answer(method, self.path, data)
                if reads.delay:
                    time.sleep(reads.delay)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if reads.drip:
                        for at in range(len(body)):
                            time.sleep(reads.drip)
                            self.wfile.write(body[at:at + 1])
                    else:
                        self.wfile.write(body)
                except OSError:  # the client gave up (a timeout test)
                    pass

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def tl(clock: FakeClock) -> Iterator[TrustLayerReads]:
    reads = TrustLayerReads(clock)
    reads.thread.start()
    yield reads
    reads.server.shutdown()
    reads.server.server_close()


def fetcher(tl: TrustLayerReads, out: Path, clock: FakeClock, per_hour: int = 100,
            timeout: float = 10.0) -> tuple[ProofFetch, list[str]]:
    said: list[str] = []
    return ProofFetch(tl.url, out, ReadBudget(per_hour, clock), timeout=timeout, say=said.append), said


def kept(out: Path) -> dict[str, Any]:
    """The folder as written: each file's JSON by name (a temporary left would show here)."""
    return {p.name: json.loads(p.read_text("utf-8")) for p in sorted(out.iterdir())}


# -- the batch read, the unit read, the ids -----------------------------------------------------------------


def test_fifty_ids_a_batch_read_in_order_and_each_view_kept_once(tl: TrustLayerReads, clock: FakeClock,
                                                                   tmp_path: Path) -> None:
    ids = tl.add(*(view(pid(n)) for n in range(120)))
    fetch, said = fetcher(tl, tmp_path / "proofs", clock)
    outcome = fetch.run(ids + ids[:5])  # an id asked twice is read once
    assert [len(body["proof_ids"]) for _, _, body in tl.log] == [50, 50, 20]
    assert [i for _, _, body in tl.log for i in body["proof_ids"]] == ids
    assert tl.count("GET") == 0 and (outcome.batch_reads, outcome.unit_reads) == (3, 0)
    files = kept(tmp_path / "proofs")
    assert sorted(files) == sorted(f"{i}.json" for i in ids)
    assert all(files[f"{i}.json"] == tl.views[i] for i in ids)
    assert not outcome.problems and outcome.kept == 120
    assert said[-1] == "120/120 proofs kept (3 of 100 reads this hour)"
    assert clock.sleeps == []


def test_a_proof_the_batch_does_not_serve_is_read_alone_and_an_absent_one_named(
        tl: TrustLayerReads, clock: FakeClock, tmp_path: Path) -> None:
    ours = tl.add(view(pid(1)), view(pid(2), seller="proveit.arkforge.tech"))
    other = tl.add(view(pid(3), seller="api.client.example"))
    absent = pid(4)
    fetch, _ = fetcher(tl, tmp_path, clock)
    outcome = fetch.run([*ours, *other, absent])
    assert [(m, p) for m, p, _ in tl.log] == [("POST", "/v1/proofs"), ("GET", f"/v1/proof/{other[0]}"),
                                              ("GET", f"/v1/proof/{absent}")]
    assert sorted(kept(tmp_path)) == sorted(f"{i}.json" for i in [*ours, *other])
    assert outcome.problems == [f"GET {tl.url}/v1/proof/{absent}: 404: Trust Layer holds no proof {absent}"]


def test_a_view_naming_another_proof_is_refused_in_the_batch_and_alone(tl: TrustLayerReads, clock: FakeClock,
                                                                       tmp_path: Path) -> None:
    good, swapped, alone = pid(1), pid(2), pid(3)
    tl.add(view(good), view(alone, seller="api.client.example"))
    tl.views[swapped] = view(pid(9))  # the batch serves pid(9)'s view as pid(2)'s
    tl.unit[alone] = (200, json.dumps(view(pid(8))).encode())
    fetch, _ = fetcher(tl, tmp_path, clock)
    outcome = fetch.run([good, swapped, alone])
    assert list(kept(tmp_path)) == [f"{good}.json"]
    assert outcome.problems == [
        f'POST {tl.url}/v1/proofs: the view given for {swapped} names proof_id "{pid(9)}", not {swapped}: '
        "refused, nothing kept for it",
        f'GET {tl.url}/v1/proof/{alone}: the view given for {alone} names proof_id "{pid(8)}", not {alone}: '
        "refused, nothing kept for it"]


def test_an_anchored_view_on_disk_is_never_read_again(tl: TrustLayerReads, clock: FakeClock,
                                                      tmp_path: Path) -> None:
    ids = tl.add(*(view(pid(n)) for n in range(3)))
    fetcher(tl, tmp_path, clock)[0].run(ids[:2])
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    tl.log.clear()
    outcome = fetcher(tl, tmp_path, clock)[0].run(ids)
    assert [body["proof_ids"] for _, _, body in tl.log] == [[ids[2]]]
    assert (outcome.kept_before, outcome.read_now) == (ids[:2], ids[2:])
    assert all((tmp_path / name).read_bytes() == data for name, data in before.items())
    tl.log.clear()
    assert fetcher(tl, tmp_path, clock)[0].run(ids).kept == 3 and tl.log == []


def test_a_view_not_anchored_yet_is_kept_and_read_again_until_it_is(tl: TrustLayerReads, clock: FakeClock,
                                                                    tmp_path: Path) -> None:
    ids = tl.add(view(pid(1), anchored=False), view(pid(2)))
    outcome = fetcher(tl, tmp_path, clock)[0].run(ids)
    assert outcome.waiting == [pid(1)] and len(kept(tmp_path)) == 2
    tl.log.clear()
    fetcher(tl, tmp_path, clock)[0].run(ids)
    assert [body["proof_ids"] for _, _, body in tl.log] == [[pid(1)]]
    tl.add(view(pid(1)))  # anchored since
    tl.log.clear()
    outcome = fetcher(tl, tmp_path, clock)[0].run(ids)
    assert outcome.waiting == [] and kept(tmp_path)[f"{pid(1)}.json"]["batch_anchor"] == {"status": "anchored"}
    tl.log.clear()
    fetcher(tl, tmp_path, clock)[0].run(ids)
    assert tl.log == []


@pytest.mark.parametrize(("fields", "still"), [
    ({"batch_anchor": {"status": "pending"}}, True),
    ({"batch_anchor": {"status": "anchored"}, "timestamp_authority": {"status": "failed"}}, False),
    ({"batch_anchor": {"status": "anchored"}, "timestamp_authority": {"status": "submitted"}}, False),
    ({"timestamp_authority": {"status": "submitted", "provider": "freetsa.org"}}, True),  # 1.2: no batch
    ({"timestamp_authority": {"status": "verified", "tsr_base64": "MIIB"}}, False),
], ids=["3.1-pending", "3.1-anchored-tsa-failed", "3.1-anchored", "1.2-submitted", "1.2-token"])
def test_a_view_waits_until_its_batch_is_anchored(fields: dict[str, Any], still: bool) -> None:
    """As Trust Layer's tests/test_batch_anchor.py moves a proof: batch_anchor pending, then anchored."""
    assert waiting({"proof_id": pid(1), **fields}) is still


@pytest.mark.parametrize(("data", "why"), [
    (b"{", ":1:2: not JSON: Expecting property name enclosed in double quotes"),
    (b"[]", ": not a proof's view (a JSON list, not an object)"),
    (json.dumps(view(pid(7))).encode(), f': names proof_id "{pid(7)}", not {pid(1)}'),
], ids=["not-json", "a-list", "another-id"])
def test_a_corrupt_kept_view_is_named_never_read_nor_replaced(tl: TrustLayerReads, clock: FakeClock,
                                                              tmp_path: Path, data: bytes, why: str) -> None:
    ids = tl.add(view(pid(1)), view(pid(2)))
    (tmp_path / f"{pid(1)}.json").write_bytes(data)
    outcome = fetcher(tl, tmp_path, clock)[0].run(ids)
    assert outcome.problems == [f"{tmp_path / pid(1)}.json{why}; a kept view that cannot be used; remove it to "
                                "read the proof again"]
    assert [body["proof_ids"] for _, _, body in tl.log] == [[pid(2)]]
    assert (tmp_path / f"{pid(1)}.json").read_bytes() == data


def test_the_folder_is_the_one_corpus_score_reads(tl: TrustLayerReads, clock: FakeClock, tmp_path: Path) -> None:
    """1.2 proofs made as the proxy makes them, fetched, then read by ``corpus score --proofs``'s reader."""
    maker = TrustLayer()
    proofs = [maker.proof("a" * 64, f"{n:x}" * 64, proof_id=pid(n)) for n in range(1, 4)]
    ids = tl.add(*proofs)
    fetcher(tl, tmp_path, clock)[0].run(ids)
    folder = load_proofs(tmp_path)
    assert isinstance(folder, ProofFolder) and sorted(folder.proofs) == sorted(ids)
    assert folder.proofs[pid(2)].proof_id == pid(2)


# -- the budget: at most N reads in any hour, waited for on the fake clock --------------------------------


def test_past_the_hours_reads_the_fetch_waits_says_so_and_trust_layer_never_blocks(
        tl: TrustLayerReads, clock: FakeClock, tmp_path: Path) -> None:
    ids = tl.add(*(view(pid(n), seller="api.client.example") for n in range(230)))  # each read alone
    fetch, said = fetcher(tl, tmp_path, clock)
    outcome = fetch.run(ids)
    assert outcome.kept == 230 and not outcome.problems and tl.blocked == 0
    assert (outcome.batch_reads, outcome.unit_reads) == (5, 230)
    waits = [line for line in said if "budget spent" in line]
    assert waits == ["95/230 proofs kept; budget spent, waiting 60 min (Trust Layer allows 100 reads an hour)",
                     "195/230 proofs kept; budget spent, waiting 60 min (Trust Layer allows 100 reads an hour)"]
    assert len(clock.sleeps) == 2 and sum(clock.sleeps) <= 2 * WINDOW


def test_a_lower_budget_is_kept_and_said(tl: TrustLayerReads, clock: FakeClock, tmp_path: Path) -> None:
    tl.limit = 10  # the server blocks past 10: a fetch allowed 100 would be blocked
    ids = tl.add(*(view(pid(n), seller="api.client.example") for n in range(25)))
    fetch, said = fetcher(tl, tmp_path, clock, per_hour=10)
    assert fetch.run(ids).kept == 25 and tl.blocked == 0
    assert said.count("9/25 proofs kept; budget spent, waiting 60 min (at most 10 reads an hour asked; Trust "
                      "Layer allows 100)") == 1
    assert len(clock.sleeps) == 2


def test_the_budget_counts_a_rolling_hour(clock: FakeClock) -> None:
    budget = ReadBudget(3, clock)
    for _ in range(3):  # at 0, 600 and 1200 s
        budget.spend()
        clock.now += 600
    clock.now -= 600
    assert budget.wait() == WINDOW - 1200
    clock.now += WINDOW - 1200
    assert budget.wait() == 0.0 and budget.spent == 2
    with pytest.raises(ValueError, match="give 1 to 100"):
        ReadBudget(101, clock)
    assert (duration(14 * 60 - 30), duration(59.2), duration(3600)) == ("14 min", "60 s", "60 min")


@pytest.mark.parametrize(("header", "waited"), [("120", 120.0), (None, WINDOW),
                                                ("Mon, 12 Jan 1970 13:46:40 GMT", 0.0)])
def test_a_429_waits_as_retry_after_says_then_reads_again(tl: TrustLayerReads, clock: FakeClock, tmp_path: Path,
                                                          header: str | None, waited: float) -> None:
    ids = tl.add(view(pid(1)))
    tl.too_many = [header]
    fetch, said = fetcher(tl, tmp_path, clock)
    assert fetch.run(ids).kept == 1
    assert clock.sleeps == [waited] and tl.count("POST") == 2
    assert "Trust Layer answered 429 (too many reads from this address), waiting" in said[0]


def test_retry_after_is_read_as_seconds_or_a_date() -> None:
    assert retry_after("30", 0.0) == 30.0
    assert retry_after("Thu, 01 Jan 1970 00:01:40 GMT", 40.0) == 60.0
    assert retry_after("soon", 0.0) is None and retry_after(None, 0.0) is None and retry_after("-5", 0) is None
    # RFC 9110: delay-seconds of any size, the two obsolete date forms, never the locale's names
    assert retry_after("1" + "0" * 30, 0.0) == 1e30 and retry_after("9" * 400, 0.0) == float("inf")
    assert retry_after("Thursday, 01-Jan-70 00:01:40 GMT", 40.0) == 60.0
    assert retry_after("Thu Jan  1 00:01:40 1970", 40.0) == 60.0
    assert retry_after("Thu, 31 Feb 1970 00:01:40 GMT", 0.0) is None


@pytest.mark.parametrize(("script", "why"), [
    (["7200"], '429 Too Many Requests, Retry-After "7200" asks for 7200 s, more than the hour this command '
               "waits: run it again after 1970-01-12T15:46:40Z"),
    (["1", "1", "1"], "429 Too Many Requests, still 429 after 2 waits: another client reads from this address"),
])
def test_a_429_that_lasts_stops_the_fetch(tl: TrustLayerReads, clock: FakeClock, tmp_path: Path,
                                          script: list[str], why: str) -> None:
    ids = tl.add(view(pid(1)))
    tl.too_many = list(script)
    with pytest.raises(FetchError) as stop:
        fetcher(tl, tmp_path, clock)[0].run(ids)
    assert str(stop.value) == (f"POST {tl.url}/v1/proofs: {why}; 0/1 proofs kept in {tmp_path}, run again to "
                               "read the rest")
    assert list(tmp_path.iterdir()) == []


# -- the service failing: one line naming the request, nothing half-written -------------------------------


@pytest.mark.parametrize(("answer", "why"), [
    ((502, b"bad gateway"), "status 502, not 200"),
    ((403, b"{}"), "status 403, not 200"),
    ((200, b"{\"proofs\": "), "answer:1:12: not JSON: Expecting value"),
    ((200, b"[]"), 'answer not {"proofs": {proof_id: view or null}}'),
    ((200, b'{"proofs": {}, "proofs": {}}'), 'answer: /: the key "proofs" appears more than once in this '
                                              "object: write each key once"),
], ids=["502", "403", "not-json", "another-shape", "key-twice"])
def test_a_bad_batch_answer_stops_naming_the_request_and_keeps_what_was_read(
        tl: TrustLayerReads, clock: FakeClock, tmp_path: Path, answer: tuple[int, bytes], why: str) -> None:
    ids = tl.add(*(view(pid(n)) for n in range(60)))
    fetch, _ = fetcher(tl, tmp_path, clock)
    first = fetch._batch  # the first batch is answered by the views, the second by ``answer``

    def second(chunk: list[str]) -> list[str]:
        tl.batch_answer = answer if tl.count("POST") else None
        return first(chunk)

    fetch._batch = second  # type: ignore[method-assign]
    with pytest.raises(FetchError) as stop:
        fetch.run(ids)
    assert str(stop.value) == f"POST {tl.url}/v1/proofs: {why}; 50/60 proofs kept in {tmp_path}, run again to " \
                              "read the rest"
    assert sorted(kept(tmp_path)) == sorted(f"{i}.json" for i in ids[:50])


def test_a_redirect_is_not_followed_but_said(tl: TrustLayerReads, clock: FakeClock, tmp_path: Path) -> None:
    tl.redirect = "https://trust.example/v1/proofs"
    with pytest.raises(FetchError) as stop:
        fetcher(tl, tmp_path, clock)[0].run([pid(1)])
    assert str(stop.value) == (f'POST {tl.url}/v1/proofs: status 301, not 200: a redirect to "https://trust.example/'
                               f'v1/proofs": give that base URL; 0/1 proofs kept in {tmp_path}, run again to read '
                               "the rest")
    assert [m for m, _, _ in tl.log] == ["POST"]


def test_an_oversized_answer_is_refused(tl: TrustLayerReads, clock: FakeClock, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    ids = tl.add(view(pid(1)), view(pid(2), seller="api.client.example"))
    monkeypatch.setattr(proof_fetch, "VIEW_LIMIT", 100)
    outcome = fetcher(tl, tmp_path, clock)[0].run(ids)
    assert outcome.problems == [f"GET {tl.url}/v1/proof/{pid(2)}: answer larger than 100 bytes: no view of "
                                f"{pid(2)} kept"]
    monkeypatch.setattr(proof_fetch, "BATCH_LIMIT", 100)
    with pytest.raises(FetchError, match=r"/v1/proofs: answer larger than 100 bytes; 0/1 proofs kept"):
        fetcher(tl, tmp_path / "again", clock)[0].run(ids[:1])


def test_no_answer_in_time_stops_naming_the_request(tl: TrustLayerReads, clock: FakeClock, tmp_path: Path) -> None:
    tl.add(view(pid(1)))
    tl.delay = 1.0
    with pytest.raises(FetchError) as stop:
        fetcher(tl, tmp_path, clock, timeout=0.2)[0].run([pid(1)])
    assert str(stop.value) == (f"POST {tl.url}/v1/proofs: no complete answer within --timeout 0.2 s (connection, "
                               f"headers and body together); 0/1 proofs kept in {tmp_path}, run again to read the "
                               "rest")


def test_an_answer_that_drips_stops_at_the_timeout(tl: TrustLayerReads, clock: FakeClock,
                                                   tmp_path: Path) -> None:
    """Each byte within the timeout, the whole far beyond it: the fetch ends at the deadline of the whole
    exchange, it does not hang."""
    tl.add(view(pid(1)))
    # a ~300 bytes batch answer at a byte every 0.02 s: 6 s in all, far beyond a timeout of 1 s; each gap stays
    # 50 times below the timeout, so only the deadline of the whole exchange can end it
    tl.drip = 0.02
    started = time.monotonic()
    with pytest.raises(FetchError) as stop:
        fetcher(tl, tmp_path, clock, timeout=1.0)[0].run([pid(1)])
    assert time.monotonic() - started < 3
    assert str(stop.value) == (f"POST {tl.url}/v1/proofs: no complete answer within --timeout 1 s (connection, "
                               f"headers and body together); 0/1 proofs kept in {tmp_path}, run again to read the "
                               "rest")


def test_no_server_at_all_stops_naming_the_request(clock: FakeClock, tmp_path: Path) -> None:
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    fetch = ProofFetch(f"http://127.0.0.1:{port}", tmp_path, ReadBudget(100, clock), timeout=2)
    with pytest.raises(FetchError, match=rf"^POST http://127.0.0.1:{port}/v1/proofs: no answer \(ConnectionError"):
        fetch.run([pid(1)])


def test_a_trust_layer_without_the_batch_read_is_read_one_by_one(tl: TrustLayerReads, clock: FakeClock,
                                                                  tmp_path: Path) -> None:
    ids = tl.add(*(view(pid(n)) for n in range(60)))
    tl.batch_answer = (404, b'{"detail": "Not Found"}')
    fetch, said = fetcher(tl, tmp_path, clock)
    assert fetch.run(ids).kept == 60
    assert (tl.count("POST"), tl.count("GET")) == (1, 60)
    assert said[0] == (f"POST {tl.url}/v1/proofs: status 404: this Trust Layer serves no batch read; reading "
                       "each proof alone")


def test_a_batch_refused_is_read_one_by_one(tl: TrustLayerReads, clock: FakeClock, tmp_path: Path) -> None:
    """Trust Layer takes 6 hex digits today; a longer id passes here, and its batch is refused whole (400)."""
    longer = "prf_20261202_013023_ae4117aa"
    ids = tl.add(view(pid(1)), view(pid(2)))
    fetch, said = fetcher(tl, tmp_path, clock)
    outcome = fetch.run([*ids, longer])
    assert [(m, p) for m, p, _ in tl.log] == [("POST", "/v1/proofs"), *(("GET", f"/v1/proof/{i}") for i in
                                                                        [*ids, longer])]
    assert sorted(kept(tmp_path)) == sorted(f"{i}.json" for i in ids)
    assert said[0] == f"POST {tl.url}/v1/proofs: status 400: the batch of 3 refused; reading each alone"
    assert outcome.problems == [f"GET {tl.url}/v1/proof/{longer}: 400: Trust Layer takes no proof_id of this "
                                f"form: {longer} not read"]


def test_a_kept_symbolic_link_is_named(tl: TrustLayerReads, clock: FakeClock, tmp_path: Path) -> None:
    ids = tl.add(view(pid(1)))
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps(view(pid(1))))
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / f"{pid(1)}.json").symlink_to(target)
    outcome = fetcher(tl, tmp_path / "out", clock)[0].run(ids)
    assert outcome.problems == [f"{tmp_path / 'out' / pid(1)}.json: a symbolic link, not a view this fetch wrote; "
                                "a kept view that cannot be used; remove it to read the proof again"]
    assert tl.log == []


# -- the proof_id form and the ids a submission cites -------------------------------------------------------


def test_the_proof_id_form_is_the_contracts() -> None:
    assert proof_id_problem("prf_20261202_013023_ae4117", "x") is None
    for bad in ("prf_0001", "prf_20261202_013023_AE4117", "prf_20261202_013023_ae41", "../../etc/passwd",
                "prf_20261202_013023_" + "a" * 65, " prf_20261202_013023_ae4117"):
        assert proof_id_problem(bad, "x") is not None, bad
    assert proof_id_problem(42, "x") == f"x: 42 is not a proof id of Trust Layer's ({FORM})"
    ids, problems = cited_proof_ids({"assertions": [{"proof_ids": [pid(1), "prf_0001"]}, {"proof_ids": [pid(2)]},
                                                    {"proof_ids": "x"}, 3]}, "s.json")
    assert ids == [pid(1), pid(2)]
    assert problems == ["s.json: /assertions/0/proof_ids/1: 'prf_0001' is not a proof id of Trust Layer's "
                        f"({FORM}): not read"]
    with pytest.raises(FetchError, match="nothing read"):
        ProofFetch("http://127.0.0.1:9", Path("/nonexistent"), ReadBudget(1, FakeClock())).run(["prf_1"])


# -- the command ----------------------------------------------------------------------------------------------


def _submission(path: Path, *cited: list[str]) -> Path:
    path.write_text(json.dumps({"season": 1, "task_id": path.stem, "verdict": "conforme",
                                "assertions": [{"id": f"a{n}", "proof_ids": ids} for n, ids in enumerate(cited)]}))
    return path


def test_the_command_reads_the_submissions_ids_and_the_others(tl: TrustLayerReads, tmp_path: Path) -> None:
    ids = tl.add(*(view(pid(n)) for n in range(6)))
    folder = tmp_path / "submissions"
    folder.mkdir()
    _submission(folder / "conf-01.json", [ids[0], ids[1]], [ids[1]])
    _submission(folder / "conf-02.json", [ids[2], "prf_0001"])
    listed = tmp_path / "ids.txt"
    listed.write_text(f"# the anchor\n{ids[4]}\n\n{ids[5]}  # and another\n")
    out = tmp_path / "proofs"
    ran = run_corpus("proofs", "fetch", str(folder), "--id", ids[3], "--ids-file", str(listed), "--base-url",
                     tl.url + "/", "--out", str(out), "--root", str(tmp_path))
    assert ran.returncode == 1, ran.stderr
    assert sorted(kept(out)) == sorted(f"{i}.json" for i in ids)
    assert [body["proof_ids"] for _, _, body in tl.log] == [ids]
    assert ran.stderr.splitlines()[-2:] == [
        f'corpus proofs fetch: {folder / "conf-02.json"}: /assertions/0/proof_ids/1: \'prf_0001\' is not a proof '
        f"id of Trust Layer's ({FORM}): not read",
        f"corpus proofs fetch: 6/6 proofs kept in {out}: 6 read now (1 batch read(s), 0 unit read(s)), 0 kept "
        "before"]
    again = run_corpus("proofs", "fetch", "--id", ids[0], "--base-url", tl.url, "--out", str(out), "--root",
                       str(tmp_path))
    assert again.returncode == 0 and again.stderr.endswith("0 read now (0 batch read(s), 0 unit read(s)), 1 kept "
                                                           "before\n")


def test_a_submission_is_read_as_corpus_score_reads_it(tl: TrustLayerReads, tmp_path: Path) -> None:
    """A key twice: rejected at entry, its ids not read (a line says so); JSON that does not parse: one line."""
    ids = tl.add(view(pid(1)), view(pid(2)))
    twice = tmp_path / "conf-01.json"
    twice.write_text(f'{{"task_id": "conf-01", "verdict": "conforme", "verdict": "non_conforme", '
                     f'"assertions": [{{"id": "a1", "proof_ids": ["{ids[0]}"]}}]}}')
    fine = _submission(tmp_path / "conf-02.json", [ids[1]])
    ran = run_corpus("proofs", "fetch", str(twice), str(fine), "--base-url", tl.url, "--out", str(tmp_path / "p"),
                     "--root", str(tmp_path))
    assert ran.returncode == 1 and sorted(kept(tmp_path / "p")) == [f"{ids[1]}.json"]
    assert (f'corpus proofs fetch: {twice}: /: the key "verdict" appears more than once in this object: write '
            "each key once: corpus score rejects it at entry; none of its proofs read\n") in ran.stderr
    broken = tmp_path / "conf-03.json"
    broken.write_text('{"task_id": "conf-03",\n  "assertions": [}')
    ran = run_corpus("proofs", "fetch", str(broken), str(fine), "--base-url", tl.url, "--out", str(tmp_path / "q"),
                     "--root", str(tmp_path))
    assert (ran.returncode, ran.stderr) == (1, f"corpus proofs fetch: {broken}:2:18: json: Expecting value\n")
    assert not (tmp_path / "q").exists()


def test_a_file_citing_no_proof_is_said_never_a_silent_zero(tl: TrustLayerReads, tmp_path: Path) -> None:
    """A season service's record ({recu_le, soumission}) given as a submission cites nothing: said, exit 1."""
    record = tmp_path / "conf-01.json"
    record.write_text('{"recu_le": "2026-11-01T00:00:00Z", "soumission": {"task_id": "conf-01"}}')
    ran = run_corpus("proofs", "fetch", str(record), "--base-url", tl.url, "--out", str(tmp_path / "p"),
                     "--root", str(tmp_path))
    assert ran.returncode == 1 and tl.count("POST") == 0
    assert (f"corpus proofs fetch: {record}: cites no proof_id (assertions[].proof_ids of a spec §4 submission; "
            'a season record {"recu_le", "soumission"} is not one: give the records folder with --records '
            'DIR)\n') in ran.stderr


def test_the_command_stops_in_one_line_when_the_service_fails(tl: TrustLayerReads, tmp_path: Path) -> None:
    tl.batch_answer = (503, b"")
    ran = run_corpus("proofs", "fetch", "--id", pid(1), "--base-url", tl.url, "--out", str(tmp_path / "p"),
                     "--root", str(tmp_path))
    assert (ran.returncode, ran.stderr) == (1, f"corpus proofs fetch: POST {tl.url}/v1/proofs: status 503, not "
                                               f"200; 0/1 proofs kept in {tmp_path / 'p'}, run again to read the "
                                               "rest\n")


@pytest.mark.parametrize(("args", "message"), [
    (["--id", "prf_0001"], "argument --id: 'prf_0001' is not a proof id of Trust Layer's"),
    (["--reads-per-hour", "101"], "argument --reads-per-hour: '101': give a whole number from 1 to 100"),
    (["--base-url", "ftp://x"], "argument --base-url: 'ftp://x': not a base URL"),
    (["--base-url", "http://[::1"], "argument --base-url: 'http://[::1': not a base URL"),
    (["--base-url", "https://me:pw@trust.example"], "argument --base-url: the base URL holds credentials"),
    (["--timeout", "0"], "argument --timeout: 0: expected a finite number of seconds above 0"),
    (["--out", "build/conformite/proofs"], "--out build/conformite/proofs: resolves to"),
    (["--out", "season/generique/p"], "inside season/ of the checkout"),
    ([], "give submissions (files or folders), --records DIR, --id PROOF_ID or --ids-file FILE"),
], ids=["bad-id", "budget", "url", "url-broken", "url-credentials", "timeout", "in-build", "in-generique",
        "nothing"])
def test_the_command_refuses_a_bad_command_line_before_any_read(root: Path, tmp_path: Path, args: list[str],
                                                                message: str) -> None:
    given = {"--base-url": "http://127.0.0.1:9", "--out": str(tmp_path / "p"), "--id": pid(1)}
    if not args:
        given.pop("--id")
    for name, value in zip(args[::2], args[1::2], strict=True):
        given[name] = value
    line = [x for pair in given.items() for x in pair]
    ran = run_corpus("proofs", "fetch", *line, "--root", str(root), cwd=root)
    assert ran.returncode == 2 and message in ran.stderr and len(ran.stderr.splitlines()) == 1, ran.stderr
    assert not (tmp_path / "p").exists() and not (root / "build" / "conformite" / "proofs").exists()


def test_a_bad_ids_file_is_named_with_its_line(tmp_path: Path) -> None:
    listed = tmp_path / "ids.txt"
    listed.write_text(f"{pid(1)}\nprf_x\n")
    ran = run_corpus("proofs", "fetch", "--ids-file", str(listed), "--base-url", "http://127.0.0.1:9", "--out",
                     str(tmp_path / "p"), "--root", str(tmp_path))
    assert (ran.returncode, ran.stderr) == (1, f"corpus proofs fetch: {listed}:2: 'prf_x' is not a proof id of "
                                               f"Trust Layer's ({FORM}): nothing read\n")
