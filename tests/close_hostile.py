"""The close's commands under hostile input (issue 40, bars/close-hostile): the campaign, one case a function.

Each case is what an attacker or a broken service could hand ``corpus proofs fetch``, ``verify``,
``freeze-check``, ``freeze-anchor``, ``score`` or ``index``: a server on 127.0.0.1 that trickles its answer or
asks to be left alone for 10^30 seconds, names and stacks that read the same, free text holding NUL and bidi
controls, a close before the season's opening, a record from 2099, an output inside an input, a link, a FIFO
or a device in a proofs folder, a proof of an unknown ``spec_version``, an anchoring ``/full`` view whose
unsigned copies contradict what it commits to. A refusal is ok when the command exits with the code asked,
with one line (``corpus CMD: ...``) naming the file, the field or the value, no traceback, within its
deadline, and nothing under the campaign's folder changed; a published text is ok when no control character
reaches the page and the page says what was dropped.

The world is real: a frozen conformité checkout (``score_fixtures``) anchored by ``corpus freeze-anchor`` with
a proof-spec 3.1 ``/full`` view issued by the tests' Trust Layer (``proof_issuer``) under a local RFC 3161
authority (openssl, ``trust_layer_fixtures``). ``tests/publish/test_close_hostile.py`` runs each case as a test;
``bench/close_hostile.py`` runs the campaign and prints one line a case.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

from cli_run import run_corpus
from proof_issuer import Issuer, write_views
from score_fixtures import HONEST_01, ScoreWorld, anchor_of, make_score_world, submission
from trackfix import CONFORMITE
from trust_layer_fixtures import CHALLENGE_KEY, FINGERPRINT, Authority

from generator.base.secret_values import new_secret, write_private
from generator.contract.freeze import freeze

PROOF_ID = "prf_20261202_013023_a0c401"
BEFORE = "2026-12-01T10:00:00Z"  # every record of the season service, before this campaign's clock
REGISTERED = "2026-10-01T09:00:00Z"
DEADLINE = 1.0  # --timeout of the network cases; a case must end within BOUND
BOUND = 6.0
CONTROLS = ("\x00", "\u202e", "\u2066", "\x1b")


@dataclass(frozen=True)
class Outcome:
    ok: bool
    line: str  # the command's line, or why the case is not ok


@dataclass
class World:
    """The campaign's folder: a frozen, 3.1-anchored conformité checkout (``root``) and its pins."""

    folder: Path
    root: Path
    salt: Path
    issuer: Issuer
    authority: Authority
    opening: str  # the anchor's ``heure``: the season's opening

    def pins(self) -> list[str]:
        return ["--root", str(self.root), "--trust-layer-key", self.issuer.key, "--tsa-ca", str(self.authority.ca),
                "--tsa-cert", str(self.authority.cert)]

    def listing(self) -> dict[str, object]:
        """Every entry under the folder with what it is: a refusal changes nothing."""
        out: dict[str, object] = {}
        for path in sorted(self.folder.rglob("*")):
            rel = path.relative_to(self.folder).as_posix()
            out[rel] = (os.readlink(path) if path.is_symlink() else "dir" if path.is_dir() else
                        (path.stat().st_size, path.stat().st_mtime_ns))
        return out

    def refused(self, argv: list[str], code: int, *says: str, within: float = 60.0) -> Outcome:
        """``corpus ARGV`` exits ``code`` with one line saying each of ``says`` (freeze-check: its problem
        lines, then FAILED), no traceback, within ``within`` seconds, and nothing under the folder changed."""
        before = self.listing()
        started = time.monotonic()
        ran = run_corpus(*argv)
        took = time.monotonic() - started
        lines = ran.stderr.splitlines()
        if argv[0] == "freeze-check" and lines[-1:] == ["corpus freeze-check: FAILED"]:
            lines = lines[:-1]
        shown = lines[0] if len(lines) == 1 else ran.stderr.strip() or ran.stdout.strip()
        why = [text for text, bad in (
            (f"exit {ran.returncode}, not {code}", ran.returncode != code),
            ("a traceback", "Traceback" in ran.stderr),
            (f"{len(lines)} lines on stderr, not one", len(lines) != 1 and argv[0] != "freeze-check"),
            (f"took {took:.1f} s", took > within),
            (f"the line does not say {[s for s in says if s not in shown]}", not all(s in shown for s in says)),
            ("something was written", self.listing() != before),
            ("not one line 'corpus ...'", not all(line.startswith("corpus ") for line in lines)),
        ) if bad]
        return Outcome(not why, shown if not why else f"{'; '.join(why)}: {shown[:400]}")


def make_world(folder: Path) -> World:
    """The checkout frozen, then anchored with ``corpus freeze-anchor`` from a 3.1 ``/full`` view."""
    folder.mkdir(parents=True, exist_ok=True)
    world = make_score_world(folder / "root")
    salt = folder / "salt.hex"
    freeze(world.root, world.root / CONFORMITE.bareme.file, salt, CONFORMITE.places)
    authority = Authority(folder / "tsa")
    issuer = Issuer(authority)
    view = anchoring_view(world.root, issuer)
    proof = folder / "anchor-proof.json"
    proof.write_text(json.dumps(view), "utf-8")
    ran = run_corpus("freeze-anchor", "--root", str(world.root), str(proof), "--trust-layer-key", issuer.key,
                     "--challenge-key-fingerprint", FINGERPRINT, "--tsa-ca", str(authority.ca), "--tsa-cert",
                     str(authority.cert))
    assert ran.returncode == 0, ran.stderr
    anchor = json.loads((world.root / CONFORMITE.places.anchor).read_bytes())
    return World(folder, world.root, salt, issuer, authority, anchor["heure"])


def anchoring_view(root: Path, issuer: Issuer, edit: Callable[[dict[str, Any]], None] | None = None,
                   spec: str = "3.1") -> dict[str, Any]:
    """The ``/full`` view of the call that anchors ``root``'s record, made with the challenge's key (its
    hashes from CONTRACT §2, ``anchor_of``), its batch closed and stamped; ``edit`` changes the view after."""
    pair = anchor_of(root)
    issued = issuer.proof(pair["request_hash"]["value"], pair["response_hash"]["value"],
                          agent_did="did:web:proveit.arkforge.tech", api_key=CHALLENGE_KEY, spec="3.1")
    issuer.close_batch([issued], others=2)
    view = issued.full()
    view["spec_version"] = spec  # what it claims; the signature covers the chain only
    if edit is not None:
        edit(view)
    return view


# -- the season service's files ----------------------------------------------------------------------------

def did(n: int) -> str:
    return f"did:key:z6MkCampaign{n}"


def service(w: World, scratch: Path, names: list[str], *, stacks: list[str] | None = None,
            narrative: str = "Lecture du corpus.", received: str = BEFORE, registered: str = REGISTERED,
            value: Any = None) -> tuple[Path, Path]:
    """A registrations file and a submissions folder under ``scratch``: one participant a name, each with one
    submission of conf-01 (``value``: its first claim's value instead of the served one)."""
    regs, subs = scratch / "service" / "inscriptions.json", scratch / "service" / "soumissions"
    subs.mkdir(parents=True)
    participants = []
    for n, name in enumerate(names):
        fingerprint = hashlib.sha256(name.encode()).hexdigest()
        participants.append({"agent": name, "did": did(n), "cle_empreinte": fingerprint,
                             "stack": (stacks or ["Cadre maison"] * len(names))[n], "tableau": "communaute",
                             "inscrit_le": registered if n == len(names) - 1 else REGISTERED,
                             "verified_did_history": []})
        sub = submission(ScoreWorld(w.root), "conf-01", "conforme", HONEST_01)
        sub["agent_did"], sub["narrative"] = did(n), narrative
        if value is not None:
            sub["assertions"][0]["claim"]["value"] = value
        (subs / f"conf-01-{n}.json").write_text(json.dumps({"recu_le": received, "soumission": sub}), "utf-8")
    regs.write_text(json.dumps({"format": "corpus-inscriptions/1", "participants": participants}), "utf-8")
    return regs, subs


def index_args(w: World, regs: Path, subs: Path, out: Path, *more: str) -> list[str]:
    return ["index", "--track", "conformite", "--submissions", str(subs), "--registrations", str(regs), "--out",
            str(out), "--salt-file", str(w.salt), *w.pins(), *more]


def proofs_folder(w: World, folder: Path) -> Path:
    """A folder of proofs as Trust Layer serves them: the views of conf-01's honest proofs."""
    sub = submission(ScoreWorld(w.root), "conf-01", "conforme", HONEST_01)
    issued = w.issuer.proofs_of(sub)
    w.issuer.close_batch(issued)
    folder.parent.mkdir(parents=True, exist_ok=True)
    return write_views(folder, issued)


# -- servers on 127.0.0.1 ----------------------------------------------------------------------------------

@contextlib.contextmanager
def server(head: bytes, body: bytes = b"", *, trickle: str = "", seconds: float = 15.0) -> Iterator[str]:
    """A loopback HTTP server answering every connection with ``head`` + ``body``; ``trickle`` (``headers``
    or ``body``) sends that part a byte every half second. It stops by itself after ``seconds``, a client
    still waiting included."""
    stop = threading.Event()
    ends = time.monotonic() + seconds
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(0.2)

        def answer(connection: socket.socket) -> None:
            with contextlib.suppress(OSError), connection:
                connection.recv(65536)
                whole, slow = (b"", head + body) if trickle == "headers" else \
                    (head, body) if trickle == "body" else (head + body, b"")
                connection.sendall(whole)
                for byte in slow:
                    if stop.is_set() or time.monotonic() > ends:
                        break
                    connection.sendall(bytes([byte]))
                    time.sleep(0.5)

        def serve() -> None:
            while not stop.is_set() and time.monotonic() < ends:
                try:
                    connection, _ = listener.accept()
                except OSError:
                    continue
                threading.Thread(target=answer, args=(connection,), daemon=True).start()

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{listener.getsockname()[1]}"
        finally:
            stop.set()
            thread.join(5)


OK_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 4000\r\n\r\n"


def too_many(retry_after: str) -> bytes:
    return (f"HTTP/1.1 429 Too Many Requests\r\nRetry-After: {retry_after}\r\nContent-Length: 2\r\n\r\n{{}}"
            ).encode("ascii")


# -- 1. one deadline for the whole exchange; Retry-After as RFC 9110 reads it ------------------------------

def _fetch(w: World, scratch: Path, url: str) -> list[str]:
    out = scratch / "proofs"
    out.mkdir(parents=True)
    return ["proofs", "fetch", "--id", PROOF_ID, "--base-url", url, "--out", str(out), "--timeout", str(DEADLINE),
            "--root", str(w.root)]


def fetch_trickled_headers(w: World, scratch: Path) -> Outcome:
    with server(OK_HEAD, b"x" * 4000, trickle="headers") as url:
        return w.refused(_fetch(w, scratch, url), 1, f"POST {url}/v1/proofs: no complete answer within --timeout "
                         "1 s", within=BOUND)


def fetch_trickled_body(w: World, scratch: Path) -> Outcome:
    with server(OK_HEAD, b"x" * 4000, trickle="body") as url:
        return w.refused(_fetch(w, scratch, url), 1, f"POST {url}/v1/proofs: no complete answer within --timeout "
                         "1 s", within=BOUND)


def fetch_retry_after_beyond_any_date(w: World, scratch: Path) -> Outcome:
    with server(too_many("1" + "0" * 30)) as url:
        return w.refused(_fetch(w, scratch, url), 1, "429 Too Many Requests", "asks for about 10^30 s",
                         "more than the hour this command waits", "no date can be given", within=BOUND)


def fetch_retry_after_a_date(w: World, scratch: Path) -> Outcome:
    when = (datetime.now(UTC) + timedelta(hours=2)).replace(microsecond=0)
    with server(too_many(format_datetime(when, usegmt=True))) as url:
        return w.refused(_fetch(w, scratch, url), 1, "more than the hour this command waits",
                         f"run it again after {when:%Y-%m-%dT%H:%M:%SZ}", within=BOUND)


def _secret(scratch: Path) -> Path:
    scratch.mkdir(parents=True, exist_ok=True)
    path = scratch / "secret"
    write_private(path, new_secret() + "\n")
    return path


def freeze_check_trickled(w: World, scratch: Path) -> Outcome:
    secret = _secret(scratch)
    with server(OK_HEAD, b"x" * 4000, trickle="body") as url:
        return w.refused(["freeze-check", "--url", url, "--secret-file", str(secret), "--timeout", str(DEADLINE),
                          "--salt-file", str(w.salt), *w.pins()], 1,
                         f"GET {url}/gel: no complete answer within --timeout 1 s", within=BOUND)


def verify_trickled(w: World, scratch: Path) -> Outcome:
    secret = _secret(scratch)
    with server(OK_HEAD, b"x" * 4000, trickle="headers") as url:
        started = time.monotonic()
        ran = run_corpus("verify", "--root", str(w.root), "--track", "conformite", "--url", url, "--secret-file",
                         str(secret), "--timeout", str(DEADLINE))
        took = time.monotonic() - started
    line = next((x for x in ran.stdout.splitlines() if "request failed" in x), ran.stdout.strip()[:300])
    ok = ran.returncode == 1 and "no complete answer within --timeout 1 s" in line and took < BOUND \
        and "Traceback" not in ran.stderr
    return Outcome(ok, line if ok else f"exit {ran.returncode}, {took:.1f} s: {line}")


# -- 2. names a reader cannot tell apart -------------------------------------------------------------------

def _draft(w: World, scratch: Path, regs: Path, subs: Path, *more: str) -> list[str]:
    return index_args(w, regs, subs, scratch / "out", "--brouillon", *more)


def names_cyrillic(w: World, scratch: Path) -> Outcome:
    regs, subs = service(w, scratch, ["Agent Alpha", "\u0410gent Alpha"])  # a Cyrillic А
    return w.refused(_draft(w, scratch, regs, subs), 1, f"{regs}: /participants/1/agent", "/participants/0",
                     "'Agent Alpha'")


def names_fullwidth_and_digits(w: World, scratch: Path) -> Outcome:
    regs, subs = service(w, scratch, ["Agent l", "\uff21gent 1"])  # a full-width A, a one for an l
    return w.refused(_draft(w, scratch, regs, subs), 1, "/participants/1/agent", "/participants/0")


def stacks_lookalike(w: World, scratch: Path) -> Outcome:
    regs, subs = service(w, scratch, ["Agent Alpha", "Agent Beta"],
                         stacks=["Orfeo 3.1, cadre Lanterne", "\u041erfeo 3.1, cadre Lanterne"])  # a Cyrillic О
    return w.refused(_draft(w, scratch, regs, subs), 1, "/participants/1/stack", "/participants/0",
                     "written with other characters")


# -- 3. published text is text -----------------------------------------------------------------------------

def _published_clean(w: World, scratch: Path, regs: Path, subs: Path, wanted: str) -> Outcome:
    ran = run_corpus(*_draft(w, scratch, regs, subs))
    if ran.returncode != 0:
        return Outcome(False, f"exit {ran.returncode}: {ran.stderr.strip()[:300]}")
    pages = {p.name: p.read_text("utf-8") for p in (scratch / "out" / "conformite").rglob("*") if p.is_file()}
    dirty = sorted(name for name, text in pages.items() if any(c in text for c in CONTROLS))
    report = pages.get("agent-alpha.html", "") + pages.get("agent-alpha.json", "")
    said = report.count(wanted) >= 2  # on the page and in its JSON
    return Outcome(not dirty and said, f"published without control characters, saying {wanted!r}" if not dirty
                   and said else f"controls left in {dirty}, said on the page: {said}")


def narrative_with_controls(w: World, scratch: Path) -> Outcome:
    regs, subs = service(w, scratch, ["Agent Alpha"], narrative="Verdict conforme\x00 \u202eemrofnoc non\u202c "
                                                                "\u2066isolé\u2069\x1b[31m rouge")
    return _published_clean(w, scratch, regs, subs, "caractères de contrôle retirés à la publication : U+0000, "
                                                    "U+001B, U+202C, U+202E, U+2066, U+2069]")


def claim_value_with_bidi(w: World, scratch: Path) -> Outcome:
    regs, subs = service(w, scratch, ["Agent Alpha"], value="\u202e13-30-6202")
    return _published_clean(w, scratch, regs, subs, "caractères de contrôle retirés à la publication : U+202E]")


# -- 4. instants against the season ------------------------------------------------------------------------

def index_close_before_opening(w: World, scratch: Path) -> Outcome:
    regs, subs = service(w, scratch, ["Agent Alpha"])
    return w.refused(_draft(w, scratch, regs, subs, "--season-close", "0001-01-01T00:00:00Z"), 1,
                     "--season-close 0001-01-01T00:00:00Z is before the season's opening", w.opening)


def score_close_before_opening(w: World, scratch: Path) -> Outcome:
    folder = scratch / "subs"
    folder.mkdir(parents=True)
    (folder / "conf-01.json").write_text(json.dumps(submission(ScoreWorld(w.root), "conf-01", "conforme",
                                                               HONEST_01)), "utf-8")
    return w.refused(["score", str(folder), "--salt-file", str(w.salt), "--season-close", "2026-01-01T00:00:00Z",
                      *w.pins()], 1, "--season-close 2026-01-01T00:00:00Z is before the season's opening")


def draft_record_from_2099(w: World, scratch: Path) -> Outcome:
    regs, subs = service(w, scratch, ["Agent Alpha"], received="2099-01-01T00:00:00Z")
    return w.refused(_draft(w, scratch, regs, subs), 1, f"{subs / 'conf-01-0.json'}: /recu_le: "
                     "2099-01-01T00:00:00Z is after this command's clock")


def registration_from_2099(w: World, scratch: Path) -> Outcome:
    regs, subs = service(w, scratch, ["Agent Alpha"], registered="2099-01-01T00:00:00Z")
    return w.refused(_draft(w, scratch, regs, subs), 1, f"{regs}: /participants/0/inscrit_le: "
                     "2099-01-01T00:00:00Z is after this command's clock")


# -- 5. outputs never land in an input ---------------------------------------------------------------------

def index_out_in_submissions(w: World, scratch: Path) -> Outcome:
    regs, subs = service(w, scratch, ["Agent Alpha"])
    return w.refused(index_args(w, regs, subs, subs / "index", "--brouillon"), 2,
                     f"--out {subs / 'index'}", "inside the submissions folder")


def index_out_in_registrations_folder(w: World, scratch: Path) -> Outcome:
    regs, subs = service(w, scratch, ["Agent Alpha"])
    return w.refused(index_args(w, regs, subs, regs.parent / "index", "--brouillon"), 2,
                     "inside the registrations' folder")


def index_out_in_proofs(w: World, scratch: Path) -> Outcome:
    regs, subs = service(w, scratch, ["Agent Alpha"])
    proofs = proofs_folder(w, scratch / "proofs")
    return w.refused(index_args(w, regs, subs, proofs / "index", "--brouillon", "--proofs", str(proofs)), 2,
                     "inside the proofs folder")


def fetch_out_in_submissions(w: World, scratch: Path) -> Outcome:
    folder = scratch / "subs"
    folder.mkdir(parents=True)
    (folder / "conf-01.json").write_text(json.dumps(submission(ScoreWorld(w.root), "conf-01", "conforme",
                                                               HONEST_01)), "utf-8")
    return w.refused(["proofs", "fetch", str(folder), "--base-url", "http://127.0.0.1:9", "--out",
                      str(folder / "proofs"), "--root", str(w.root)], 2, "inside the submissions folder")


def score_json_in_proofs(w: World, scratch: Path) -> Outcome:
    proofs = proofs_folder(w, scratch / "proofs")
    folder = scratch / "subs"
    folder.mkdir()
    (folder / "conf-01.json").write_text(json.dumps(submission(ScoreWorld(w.root), "conf-01", "conforme",
                                                               HONEST_01)), "utf-8")
    return w.refused(["score", str(folder), "--proofs", str(proofs), "--json", str(proofs / "report.json"),
                      "--salt-file", str(w.salt), *w.pins()], 2, "inside the proofs folder")


# -- 6. what the scorer reads: links, FIFOs, devices; spec_version; the /full view -------------------------

def _score_with(w: World, scratch: Path, odd: Callable[[Path], None]) -> tuple[list[str], Path]:
    proofs = proofs_folder(w, scratch / "proofs")
    target = proofs / "prf_20261202_013023_ffffff.json"
    odd(target)
    folder = scratch / "subs"
    folder.mkdir()
    (folder / "conf-01.json").write_text(json.dumps(submission(ScoreWorld(w.root), "conf-01", "conforme",
                                                               HONEST_01)), "utf-8")
    return ["score", str(folder), "--proofs", str(proofs), "--salt-file", str(w.salt), *w.pins()], target


def proofs_symlink(w: World, scratch: Path) -> Outcome:
    elsewhere = scratch / "elsewhere.json"
    scratch.mkdir(parents=True, exist_ok=True)
    elsewhere.write_text(json.dumps({"proof_id": "prf_20261202_013023_ffffff"}), "utf-8")
    argv, target = _score_with(w, scratch, lambda p: p.symlink_to(elsewhere))
    return w.refused(argv, 1, str(target), "not a regular *.json file")


def proofs_fifo(w: World, scratch: Path) -> Outcome:
    argv, target = _score_with(w, scratch, lambda p: os.mkfifo(p))
    return w.refused(argv, 1, str(target), "not a regular *.json file", within=BOUND)


def proofs_link_to_a_device(w: World, scratch: Path) -> Outcome:
    argv, target = _score_with(w, scratch, lambda p: p.symlink_to("/dev/zero"))
    return w.refused(argv, 1, str(target), "not a regular *.json file", within=BOUND)


def index_proofs_symlink(w: World, scratch: Path) -> Outcome:
    regs, subs = service(w, scratch, ["Agent Alpha"])
    proofs = proofs_folder(w, scratch / "proofs")
    (proofs / "prf_20261202_013023_ffffff.json").symlink_to(next(proofs.iterdir()))
    return w.refused(index_args(w, regs, subs, scratch / "out", "--brouillon", "--proofs", str(proofs)), 1,
                     "prf_20261202_013023_ffffff.json", "not a regular *.json file")


def _anchor_file(w: World, scratch: Path, view: dict[str, Any]) -> list[str]:
    scratch.mkdir(parents=True, exist_ok=True)
    path = scratch / "anchor-proof.json"
    path.write_text(json.dumps(view), "utf-8")
    return ["freeze-anchor", "--root", str(w.root), str(path), "--trust-layer-key", w.issuer.key,
            "--challenge-key-fingerprint", FINGERPRINT, "--tsa-ca", str(w.authority.ca), "--tsa-cert",
            str(w.authority.cert)]


def anchor_unknown_spec_version(w: World, scratch: Path) -> Outcome:
    view = anchoring_view(w.root, w.issuer, spec="9.9")
    return w.refused(_anchor_file(w, scratch, view), 1, "spec_version: '9.9' is a proof-spec version this "
                     "verifier does not know")


def anchor_parties_contradict(w: World, scratch: Path) -> Outcome:
    def edit(view: dict[str, Any]) -> None:
        view["parties"]["buyer_fingerprint"] = "0" * 64

    view = anchoring_view(w.root, w.issuer, edit)
    return w.refused(_anchor_file(w, scratch, view), 1, "parties.buyer_fingerprint", "0" * 64,
                     "is not the value commitments.buyer_fingerprint opens to")


def anchor_chain_data_timestamp(w: World, scratch: Path) -> Outcome:
    def edit(view: dict[str, Any]) -> None:
        view["chain_data"]["timestamp"] = "2020-01-01T00:00:00Z"

    view = anchoring_view(w.root, w.issuer, edit)
    return w.refused(_anchor_file(w, scratch, view), 1, "chain_data.timestamp", "does not open the anchored "
                     "commitment")


def anchor_keeps_nothing_unsigned(w: World, scratch: Path) -> Outcome:
    kept = json.loads((w.root / CONFORMITE.places.anchor).read_bytes())["proof"]
    unsigned = sorted({"certification_fee", "views_count", "timestamp", "seller", "transparency_log", "is_demo"}
                      & set(kept))
    unsigned += [f"parties.{k}" for k in sorted(set(kept.get("parties", {})) - set(kept["commitments"]))]
    verified = {"status", "leaf_index", "tree_size", "audit_path", "root"}
    unsigned += [f"batch_anchor.{k}" for k in sorted(set(kept["batch_anchor"]) - verified)]
    again = run_corpus("freeze-check", "--salt-file", str(w.salt), *w.pins())
    ok = not unsigned and again.returncode == 0
    return Outcome(ok, f"anchor.json keeps {sorted(kept)}, every copy checked; freeze-check passes" if ok else
                   f"unsigned fields kept: {unsigned}; freeze-check exit {again.returncode}: "
                   f"{again.stderr[-300:]}")


CASES: dict[str, tuple[int, Callable[[World, Path], Outcome]]] = {
    "proofs fetch: a server that trickles its headers": (1, fetch_trickled_headers),
    "proofs fetch: a server that trickles its body": (1, fetch_trickled_body),
    "proofs fetch: Retry-After of 10^30 seconds": (1, fetch_retry_after_beyond_any_date),
    "proofs fetch: Retry-After an HTTP-date two hours on": (1, fetch_retry_after_a_date),
    "freeze-check --url: a server that trickles its body": (1, freeze_check_trickled),
    "verify: a server that trickles its headers": (1, verify_trickled),
    "index: a name with a Cyrillic A": (2, names_cyrillic),
    "index: a full-width A and a one for an l": (2, names_fullwidth_and_digits),
    "index: a stack with a Cyrillic O": (2, stacks_lookalike),
    "index: a narrative with NUL, bidi and escape controls": (3, narrative_with_controls),
    "index: a claim value with a bidi override": (3, claim_value_with_bidi),
    "index: --season-close in year 0001": (4, index_close_before_opening),
    "score: --season-close before the anchor's opening": (4, score_close_before_opening),
    "index --brouillon: a record received in 2099": (4, draft_record_from_2099),
    "index --brouillon: a registration made in 2099": (4, registration_from_2099),
    "index: --out inside the submissions folder": (5, index_out_in_submissions),
    "index: --out inside the registrations' folder": (5, index_out_in_registrations_folder),
    "index: --out inside the proofs folder": (5, index_out_in_proofs),
    "proofs fetch: --out inside a submissions folder": (5, fetch_out_in_submissions),
    "score: --json inside the proofs folder": (5, score_json_in_proofs),
    "score --proofs: a symbolic link": (6, proofs_symlink),
    "score --proofs: a FIFO": (6, proofs_fifo),
    "score --proofs: a link to a device": (6, proofs_link_to_a_device),
    "index --proofs: a symbolic link": (6, index_proofs_symlink),
    "freeze-anchor: spec_version 9.9": (6, anchor_unknown_spec_version),
    "freeze-anchor: parties.buyer_fingerprint contradicts its commitment": (6, anchor_parties_contradict),
    "freeze-anchor: chain_data.timestamp does not open": (6, anchor_chain_data_timestamp),
    "freeze-anchor: the published anchor keeps nothing unsigned": (6, anchor_keeps_nothing_unsigned),
}


def run_case(w: World, name: str) -> Outcome:
    """One case in a folder of its own under the campaign's; an exception is a failed case, shown."""
    scratch = w.folder / "cases" / hashlib.sha256(name.encode()).hexdigest()[:12]
    try:
        return CASES[name][1](w, scratch)
    except Exception as exc:  # the campaign goes on: a case that crashes is a FAILED line
        return Outcome(False, f"{type(exc).__name__}: {exc}")
