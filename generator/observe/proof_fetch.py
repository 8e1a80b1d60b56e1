"""Public views of Trust Layer proofs read as the spec's scorer reads them (spec §10), each kept on disk once.

Trust Layer blocks an address beyond 100 public-view reads an hour. ``POST /v1/proofs`` serves up to 50
views of PROVE IT proofs (those whose seller is the corpus or the season service) and counts as one read;
``GET /v1/proof/{id}`` serves any one and counts as one. So the ids are asked 50 at a time, and only those
the batch does not serve (``null``: another seller's proof, or none) are read alone; every request goes
through a :class:`ReadBudget`, which waits (and says so) when the hour's reads are spent. An anchored view
never changes: one already on disk is checked (it parses and names its id) and never read again; a view not
anchored yet is kept too (the scorer says *en attente* for it) and read again by the next run.

Each view is written ``<out>/<proof_id>.json`` at once (:func:`write_atomic`), the folder ``corpus score
--proofs`` reads. A problem with one proof (a view naming another ``proof_id``, a 404, an unreadable view,
a corrupt kept file) is one line naming it, and the others go on (a batch refused, 400, is read one by
one); a problem with the service (no answer, a timeout, a 5xx or another unexpected status, a batch answer
oversized or not JSON, a 429 that lasts) stops the run at once with one line naming the request: what is
kept stays whole, and the next run goes on from there.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from generator.base import strict_json
from generator.base.atomic_file import write_atomic
from generator.base.bounded_read import MIB, read_bounded, size_text
from generator.base.errors import GeneratorError, unreadable_text
from generator.observe.http_exchange import DEADLINE, exchange, retry_after, run_again_at, seconds_text
from generator.observe.read_budget import WINDOW, ReadBudget, duration
from generator.trust_layer.trust_proof import ProofError, check_proof_id

# -- Trust Layer's read endpoints: their shapes, in this one place ---------------------------------------
# The batch read as ark-forge/trust-layer's tests/test_proof_batch.py calls it: body {"proof_ids": [...]}
# (1 to 50 ids of the proof_id form, else 400 for the whole batch); answer 200 {"proofs": {id: view or
# null}}, null for a proof of another seller or none, each id once; 429 once the address is blocked.
BATCH_PATH = "/v1/proofs"
BATCH_SIZE = 50
UNIT_PATH = "/v1/proof/{}"
VIEW_LIMIT = MIB  # a public view is a few KiB (its RFC 3161 token included)
BATCH_LIMIT = 16 * MIB  # 50 views
MAX_429_WAITS = 2  # a 429 after two waits of up to an hour each: someone else reads from this address

def batch_body(ids: list[str]) -> dict[str, object]:
    """The body of ``POST /v1/proofs`` asking for ``ids`` (at most :data:`BATCH_SIZE`)."""
    return {"proof_ids": ids}


def batch_views(document: object) -> dict[str, object]:
    """The views of a ``POST /v1/proofs`` answer, by proof_id (``None``: not served by the batch read)."""
    views = document.get("proofs") if isinstance(document, dict) else None
    if not isinstance(views, dict):
        raise ValueError('not {"proofs": {proof_id: view or null}}')
    return views


# --------------------------------------------------------------------------------------------------------


class FetchError(GeneratorError):
    """The fetch cannot go on (the service, the command line, the output folder): one line naming it."""


def proof_id_problem(value: object, field: str) -> str | None:
    """Why ``value`` (at ``field``) is no proof_id Trust Layer gives (None: it is one): ``check_proof_id``'s
    form, the one check before an id names a file. An id of another form is never sent (a batch Trust Layer
    refuses for one is read one by one)."""
    try:
        check_proof_id(value, field)
    except ProofError as exc:
        return str(exc)
    return None


def _shown(value: object) -> str:
    """A value in a message: its JSON, ASCII only, cut at 80 characters."""
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 80 else text[:79] + "…"


def base_url(text: str) -> str:
    """A Trust Layer base URL (``https://host[:port][/prefix]``), without its last ``/``."""
    try:
        parts = urlsplit(text)
        fine = parts.scheme in ("http", "https") and parts.hostname and not (parts.query or parts.fragment)
    except ValueError:
        fine = False
    if not fine:
        raise FetchError(f"{text!r}: not a base URL: give http(s)://host[:port], e.g. https://trust.arkforge.tech")
    if "@" in parts.netloc:  # the public views need no credentials, and every message names the URL
        raise FetchError("the base URL holds credentials (user@host): the public views need none; remove them")
    return text.rstrip("/")


def waiting(view: dict[str, object]) -> bool:
    """The view is not anchored yet: its batch anchor or its RFC 3161 token is still to come, so it will
    change (the scorer says *en attente* for it; the next fetch reads it again)."""
    anchor, tsa = view.get("batch_anchor"), view.get("timestamp_authority")
    if isinstance(anchor, dict):  # proof-spec 3.1: the batch anchor says
        return anchor.get("status") != "anchored"
    return isinstance(tsa, dict) and tsa.get("status") == "submitted" and not tsa.get("tsr_base64")


def view_bytes(view: dict[str, object]) -> bytes:
    """The file a view is kept as: its JSON as served, key order kept, two-space indented."""
    return (json.dumps(view, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


@dataclass
class Outcome:
    """What a fetch did: the ids asked, those kept before, read now, still waiting, and the problems."""

    asked: list[str]
    kept_before: list[str] = field(default_factory=list)
    read_now: list[str] = field(default_factory=list)
    waiting: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    batch_reads: int = 0
    unit_reads: int = 0

    @property
    def kept(self) -> int:
        return len(self.kept_before) + len(self.read_now)


@dataclass(frozen=True)
class _Answer:
    status: int
    body: bytes  # empty unless 200
    retry_after: str | None
    location: str | None  # a redirect's target: never followed (a POST would turn into a GET), said

    def unexpected(self, method: str, url: str) -> str:
        moved = f": a redirect to {_shown(self.location)}: give that base URL" if self.location else ""
        return f"{method} {url}: status {self.status}, not 200{moved}"


class ProofFetch:
    """One run: the ids asked, read from ``url`` into ``out`` within ``budget``; ``say`` shows progress."""

    def __init__(self, url: str, out: Path, budget: ReadBudget, *, timeout: float = 30.0,
                 say: Callable[[str], None] = lambda _: None) -> None:
        self.url, self.out, self.budget, self.timeout, self.say = url, out, budget, timeout, say
        self.batch_served = True
        self.outcome = Outcome([])

    # -- what is on disk ---------------------------------------------------------------------------------

    def _on_disk(self, proof_id: str) -> bool | None:
        """True: an anchored view of ``proof_id`` is kept, never to be read again. False: read it (none is
        kept, or one not anchored yet). None: the kept file cannot be used (a problem; never read over it)."""
        path = self.out / f"{proof_id}.json"
        fix = "a kept view that cannot be used; remove it to read the proof again"
        if path.is_symlink():
            self._problem(f"{path}: a symbolic link, not a view this fetch wrote; {fix}")
            return None
        try:
            view = strict_json.document(read_bounded(path, VIEW_LIMIT, follow_symlinks=False))
        except FileNotFoundError:
            return False
        except OSError as exc:
            self._problem(unreadable_text(path, exc, fix))
            return None
        except strict_json.NotJson as exc:
            self._problem(f"{exc.text(path)}; {fix}")
            return None
        problem = self._view_problem(view, proof_id)
        if problem:
            self._problem(f"{path}: {problem}; {fix}")
            return None
        return not waiting(view)

    @staticmethod
    def _view_problem(view: object, proof_id: str) -> str | None:
        if not isinstance(view, dict):
            return f"not a proof's view (a JSON {type(view).__name__}, not an object)"
        if view.get("proof_id") != proof_id:
            return f"names proof_id {_shown(view.get('proof_id'))}, not {proof_id}"
        return None

    def _keep(self, proof_id: str, view: Any, where: str) -> None:
        problem = self._view_problem(view, proof_id)
        if problem:
            self._problem(f"{where}: the view given for {proof_id} {problem}: refused, nothing kept for it")
            return
        write_atomic(self.out / f"{proof_id}.json", view_bytes(view))
        self.outcome.read_now.append(proof_id)
        if waiting(view):
            self.outcome.waiting.append(proof_id)

    def _problem(self, text: str) -> None:
        self.outcome.problems.append(text)

    # -- the requests --------------------------------------------------------------------------------------

    def progress(self) -> str:
        return f"{self.outcome.kept}/{len(self.outcome.asked)} proofs kept"

    def _stop(self, text: str) -> FetchError:
        return FetchError(f"{text}; {self.progress()} in {self.out}, run again to read the rest")

    def _within_budget(self) -> None:
        """Wait until the budget lets one more read go, saying so once."""
        seconds = self.budget.wait()
        if seconds > 0:
            self.say(f"{self.progress()}; budget spent, waiting {duration(seconds)} ({self.budget.allowance()})")
        while seconds > 0:  # again if the clock woke early
            self.budget.clock.sleep(seconds)
            seconds = self.budget.wait()

    def _call(self, method: str, url: str, body: object, limit: int) -> _Answer:
        """One request, within the budget; a 429 waits (``Retry-After``, else an hour) and asks again."""
        for attempt in range(MAX_429_WAITS + 1):
            self._within_budget()
            self.budget.spend()
            answer = self._send(method, url, body, limit)
            if answer.status != 429:
                return answer
            now = self.budget.clock.time()
            asked = retry_after(answer.retry_after, now)
            seconds = WINDOW if asked is None else asked
            if seconds > WINDOW:  # more than this command waits: stop, and say when to come back
                shown = _shown(answer.retry_after)
                raise self._stop(f"{method} {url}: 429 Too Many Requests, Retry-After {shown} asks for "
                                 f"{seconds_text(seconds)}, more than the hour this command waits: "
                                 f"{run_again_at(now, seconds)}")
            if attempt == MAX_429_WAITS:
                raise self._stop(f"{method} {url}: 429 Too Many Requests, still 429 after {MAX_429_WAITS} waits: "
                                 "another client reads from this address")
            how = "as its Retry-After says" if asked is not None else "for its hour to pass (no Retry-After)"
            self.say(f"{self.progress()}; Trust Layer answered 429 (too many reads from this address), "
                     f"waiting {duration(seconds)} {how}")
            self.budget.clock.sleep(seconds)
        raise AssertionError("unreachable")  # pragma: no cover

    def _send(self, method: str, url: str, body: object, limit: int) -> _Answer:
        """The status and, for a 200, at most ``limit + 1`` bytes of the body, the whole exchange within
        ``timeout`` (:func:`generator.observe.http_exchange.exchange`); any failure stops the run."""
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if method == "POST":
            self.outcome.batch_reads += 1
        else:
            self.outcome.unit_reads += 1
        answer = exchange(url, seconds=self.timeout, limit=limit, method=method, headers=headers, body=data)
        if answer.error == DEADLINE:
            raise self._stop(f"{method} {url}: no complete answer within --timeout {self.timeout:g} s "
                             "(connection, headers and body together)")
        if answer.status == 0:
            raise self._stop(f"{method} {url}: no answer ({answer.error})")
        location = answer.header("Location") if answer.status in (301, 302, 303, 307, 308) else None
        return _Answer(answer.status, answer.body if answer.status == 200 else b"", answer.header("Retry-After"),
                       location)

    def _after_read(self) -> None:
        self.say(f"{self.progress()} ({self.budget.spent} of {self.budget.per_hour} reads this hour)")

    def _batch(self, ids: list[str]) -> list[str]:
        """Read ``ids`` in one batch; the ids the batch did not serve, to read alone."""
        url = self.url + BATCH_PATH
        answer = self._call("POST", url, batch_body(ids), BATCH_LIMIT)
        if answer.status in (404, 405):
            self.batch_served = False
            self.say(f"POST {url}: status {answer.status}: this Trust Layer serves no batch read; "
                     "reading each proof alone")
            return ids
        if answer.status in (400, 422):  # an id it does not take, or a body of another shape than batch_body's
            self.say(f"POST {url}: status {answer.status}: the batch of {len(ids)} refused; reading each alone")
            return ids
        if answer.status != 200:
            raise self._stop(answer.unexpected("POST", url))
        if len(answer.body) > BATCH_LIMIT:
            raise self._stop(f"POST {url}: answer larger than {size_text(BATCH_LIMIT)}")
        try:
            views = batch_views(strict_json.document(answer.body))
        except strict_json.NotJson as exc:
            raise self._stop(exc.text(f"POST {url}: answer")) from None
        except ValueError as exc:
            raise self._stop(f"POST {url}: answer {exc}") from None
        alone = []
        for proof_id in ids:
            view = views.get(proof_id)
            if view is None:
                alone.append(proof_id)
            else:
                self._keep(proof_id, view, f"POST {url}")
        self._after_read()
        return alone

    def _unit(self, proof_id: str) -> None:
        url = self.url + UNIT_PATH.format(proof_id)
        answer = self._call("GET", url, None, VIEW_LIMIT)
        if answer.status == 404:
            self._problem(f"GET {url}: 404: Trust Layer holds no proof {proof_id}")
        elif answer.status == 400:
            self._problem(f"GET {url}: 400: Trust Layer takes no proof_id of this form: {proof_id} not read")
        elif answer.status != 200:
            raise self._stop(answer.unexpected("GET", url))
        elif len(answer.body) > VIEW_LIMIT:
            self._problem(f"GET {url}: answer larger than {size_text(VIEW_LIMIT)}: no view of {proof_id} kept")
        else:
            try:
                self._keep(proof_id, strict_json.document(answer.body), f"GET {url}")
            except strict_json.NotJson as exc:
                self._problem(f"{exc.text(f'GET {url}: answer')}: no view of {proof_id} kept")
        if self.outcome.unit_reads % 10 == 0:
            self._after_read()

    def run(self, ids: Iterable[str]) -> Outcome:
        """Keep a view of each of ``ids`` (checked :func:`proof_id_problem` first) in ``out``."""
        asked = list(dict.fromkeys(ids))
        for proof_id in asked:
            problem = proof_id_problem(proof_id, "proof_id")
            if problem:
                raise FetchError(f"{problem}: nothing read")
        self.outcome = Outcome(asked)
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise FetchError(f"{self.out}: cannot make the folder: {exc.strerror or exc}") from None
        to_read = []
        for proof_id in asked:
            kept = self._on_disk(proof_id)
            if kept:
                self.outcome.kept_before.append(proof_id)
            elif kept is False:
                to_read.append(proof_id)
        alone: list[str] = []
        for start in range(0, len(to_read), BATCH_SIZE):
            chunk = to_read[start:start + BATCH_SIZE]
            alone += self._batch(chunk) if self.batch_served else chunk
        for proof_id in alone:
            self._unit(proof_id)
        if alone and self.outcome.unit_reads % 10:
            self._after_read()
        return self.outcome


def cited_proof_ids(submission: object, where: str) -> tuple[list[str], list[str]]:
    """The proof_ids a §4 submission cites (``assertions[].proof_ids``), as ``corpus score`` reads them, and
    one problem per id that is no Trust Layer proof_id (``FILE: POINTER: why``; never sent, never read).

    Another shape (no ``assertions`` list...) cites nothing here: ``corpus score`` rejects it at entry, where
    no proof is needed."""
    ids: list[str] = []
    problems: list[str] = []
    assertions = submission.get("assertions") if isinstance(submission, dict) else None
    for index, assertion in enumerate(assertions if isinstance(assertions, list) else []):
        cited = assertion.get("proof_ids") if isinstance(assertion, dict) else None
        for position, proof_id in enumerate(cited if isinstance(cited, list) else []):
            problem = proof_id_problem(proof_id, f"/assertions/{index}/proof_ids/{position}")
            if problem:
                problems.append(f"{where}: {problem}: not read")
            else:
                ids.append(proof_id)
    return ids, problems
