"""A whole season of both tracks, as its operator runs it, against a local stand-in of Trust Layer's API
(issue 39, bars/season-publication, ``make rehearsal``).

In a scratch checkout of the repository's built tracks: ``corpus freeze``; ``corpus pin`` (the stand-in's URL
and key, the test authority, the challenge key's file); the anchoring call made through the stand-in's
``POST /v1/proxy`` with the challenge's key, its ``/full`` view saved; ``corpus freeze-anchor`` and ``corpus
freeze-check`` with no pin flag; ``corpus publish --opening``; a community answering from the recorded blind
readings (``tests/index_community.py``), every claim proved in proof-spec 3.1 by the stand-in's issuer, each
record as the season service writes it; the close pinned (``corpus pin --season-close``); then ``corpus
proofs fetch --records`` (over HTTP, from the stand-in), ``corpus score --records --agent``, ``corpus index``,
``corpus publish --close`` and ``corpus verify-publication``; and each tampered variant of the publication,
which verify-publication must refuse naming the file.

The stand-in serves the routes a season uses (``POST /v1/proxy``, ``GET /v1/proof/{id}``, ``.../full``,
``POST /v1/proofs``, ``GET /v1/pubkey``), with the shapes of Trust Layer's own code
(ark-forge/trust-layer ``app.py``); its proofs are ``tests/proof_issuer.py``'s, stamped by openssl's RFC 3161
server (``tests/trust_layer_fixtures.py``). Nothing here imports the verifier's modules but the CLI.
"""

from __future__ import annotations

import contextlib
import hashlib
import http.server
import json
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import requests
from cli_run import Ran, run_corpus
from index_community import CLOSE as COMMUNITY_CLOSE
from index_community import write_community
from proof_issuer import Issued, Issuer, with_proxy_ids
from trackfix import ROOT, copy_tracks
from trust_layer_fixtures import Authority

from generator.tracks.loader import track_named

PISTES = ("conformite", "generique")
CHALLENGE_KEY = "mcp_free_proveit-challenge-repetition-0001"  # fictional
Say = Callable[[str], None]


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8")


class StandInProxy:
    """Trust Layer's API as a season uses it, on loopback: the proxy call and the proofs' views."""

    def __init__(self, issuer: Issuer, serve: Callable[[str], bytes]) -> None:
        self.issuer, self.serve = issuer, serve
        self.proofs: dict[str, Issued] = {}
        self.reads = 0
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> StandInProxy:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def add(self, proofs: list[Issued]) -> None:
        self.proofs.update({p.proof_id: p for p in proofs})

    def _proxy(self, key: str, body: dict[str, Any]) -> tuple[int, Any]:
        """``POST /v1/proxy``: the target read as the proxy reads it, the call proved and its batch closed."""
        request = {"target": body["target"], "method": body.get("method", "POST"),
                   "payload": body.get("payload", {}), "amount": 0.0, "currency": body.get("currency", "eur")}
        data = self.serve(body["target"])
        proof = self.issuer.proof(hashlib.sha256(_canonical(request)).hexdigest(),
                                  hashlib.sha256(_canonical(json.loads(data))).hexdigest(),
                                  agent_did="did:web:proveit.arkforge.tech", api_key=key)
        self.issuer.close_batch([proof], others=2, batch_id=f"batch_{proof.proof_id[4:19]}")
        self.add([proof])
        return 200, {"proof": {"proof_id": proof.proof_id}, "response": json.loads(data)}

    def _answer(self, method: str, path: str, key: str | None, data: bytes) -> tuple[int, Any]:
        if method == "POST" and path == "/v1/proxy":
            return self._proxy(key or "", json.loads(data)) if key else (401, {"error": "API key required"})
        if method == "GET" and path == "/v1/pubkey":
            return 200, {"pubkey": self.issuer.key}
        if method == "POST" and path == "/v1/proofs":
            self.reads += 1
            ids = json.loads(data).get("proof_ids", [])
            return 200, {"proofs": {i: self.proofs[i].public() if i in self.proofs else None for i in ids}}
        if method == "GET" and path.startswith("/v1/proof/"):
            proof_id, full = path.removeprefix("/v1/proof/").removesuffix("/full"), path.endswith("/full")
            proof = self.proofs.get(proof_id)
            if proof is None:
                return 404, {"error": "not_found"}
            if full and hashlib.sha256((key or "").encode()).hexdigest() != proof.parties["buyer_fingerprint"]:
                return 403, {"error": "You are not the owner of this proof"}
            self.reads += 1
            return 200, proof.full() if full else proof.public()
        return 404, {"error": "not_found"}

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _serve(self, method: str) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                status, document = stand_in._answer(method, self.path, self.headers.get("X-Api-Key"),
                                                    self.rfile.read(size) if size else b"")
                body = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._serve("GET")

            def do_POST(self) -> None:
                self._serve("POST")

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@dataclass
class Step:
    name: str
    ran: Ran
    ok: bool
    args: tuple[str, ...] = ()

    def line(self) -> str:
        tail = (self.ran.stderr.strip().splitlines() or self.ran.stdout.strip().splitlines() or [""])[-1]
        return f"{'ok  ' if self.ok else 'FAIL'} {self.name}: exit {self.ran.returncode}: {tail[:160]}"


@dataclass
class Season:
    """The rehearsal's folders and what each step gave."""

    work: Path
    root: Path = field(init=False)
    steps: list[Step] = field(default_factory=list)
    salts: dict[str, Path] = field(default_factory=dict)
    records: dict[str, Path] = field(default_factory=dict)
    registrations: dict[str, Path] = field(default_factory=dict)
    proofs: dict[str, Path] = field(default_factory=dict)
    publications: dict[str, Path] = field(default_factory=dict)
    key: str = ""
    authority: Authority | None = None

    def __post_init__(self) -> None:
        self.root = self.work / "checkout"

    def corpus(self, name: str, *args: str, expect: int = 0) -> Ran:
        ran = run_corpus(*args)
        self.steps.append(Step(name, ran, ran.returncode == expect, args))
        return ran

    @property
    def failed(self) -> list[Step]:
        return [s for s in self.steps if not s.ok]

    def verify_args(self, folder: Path) -> list[str]:
        assert self.authority is not None
        return ["verify-publication", str(folder), "--trust-layer-key", self.key, "--tsa-ca",
                str(self.authority.ca)]


def _checkout(root: Path) -> None:
    for piste in PISTES:
        trees = track_named(ROOT, piste).trees
        for tree in (trees.build, trees.manifest, trees.season):
            shutil.copytree(ROOT / tree, root / tree)
    copy_tracks(root, tracks=PISTES)


def _served(root: Path) -> Callable[[str], bytes]:
    """What the corpus serves at a target, for the stand-in proxy: each track's record at its gel_servi."""
    places = [track_named(root, p).places for p in PISTES]
    records = {where.served_record: root / where.record for where in places}

    def serve(target: str) -> bytes:
        path = "/" + target.split("://", 1)[1].split("/", 1)[1]
        return records[path].read_bytes()
    return serve


def _prove_records(folder: Path, issuer: Issuer, proxy: StandInProxy, start: int) -> int:
    """Each record's proof ids given the proxy's form, and its claims proved in proof-spec 3.1 (one batch)."""
    issued: list[Issued] = []
    for path in sorted(folder.rglob("*.json")):
        record = json.loads(path.read_text("utf-8"))
        sub = with_proxy_ids(record["soumission"], start)
        start += len(sub["disclosures"])
        issued += issuer.proofs_of(sub)
        record["soumission"] = sub
        path.write_text(json.dumps(record, ensure_ascii=False, indent=1), "utf-8")
    issuer.close_batch(issued, others=3, batch_id=f"batch_{folder.parent.name}_{start:06d}")
    proxy.add(issued)
    return start


def _anchor(s: Season, proxy: StandInProxy, piste: str, say: Say) -> None:
    """The freeze ceremony's call through the proxy, with the challenge's key, its /full view saved, published
    with ``freeze-anchor`` and checked with ``freeze-check``."""
    path = anchor_call(s, proxy, piste, say)
    s.corpus(f"{piste}: freeze-anchor (no pin flag)", "freeze-anchor", "--root", str(s.root), "--track", piste,
             str(path))
    s.corpus(f"{piste}: freeze-check (no pin flag)", "freeze-check", "--root", str(s.root), "--track", piste,
             "--salt-file", str(s.salts[piste]))


def anchor_call(s: Season, proxy: StandInProxy, piste: str, say: Say, name: str = "") -> Path:
    """The anchoring call through the stand-in proxy, with the challenge's key: its /full view saved; the path."""
    places = track_named(s.root, piste).places
    base = json.loads((s.root / places.manifest / "manifest.json").read_bytes())["base_url"]
    headers = {"X-Api-Key": CHALLENGE_KEY, "Content-Type": "application/json"}
    body = {"target": base + places.served_record, "method": "GET", "payload": {}, "currency": "eur"}
    answer = requests.post(f"{proxy.url}/v1/proxy", json=body, headers=headers, timeout=30).json()
    proof_id = answer["proof"]["proof_id"]
    view = requests.get(f"{proxy.url}/v1/proof/{proof_id}/full", headers=headers, timeout=30)
    path = s.work / f"{piste}-anchor-proof{name}.json"
    path.write_bytes(view.content)
    say(f"  {piste}: POST {proxy.url}/v1/proxy {json.dumps(body)} -> {proof_id}; /full saved ({len(view.content)} "
        "bytes)")
    return path


def set_up(s: Season) -> tuple[Issuer, Authority, Path]:
    """The scratch checkout, the test authority, the stand-in's issuer and the challenge key's file."""
    _checkout(s.root)
    authority = Authority(s.work / "tsa")
    issuer = Issuer(authority)
    s.key, s.authority = issuer.key, authority
    key_file = s.work / "challenge.key"
    key_file.write_text(CHALLENGE_KEY + "\n", "ascii")
    key_file.chmod(0o600)
    return issuer, authority, key_file


def run_season(work: Path, say: Say = lambda _: None) -> Season:
    """The season from the freeze to both publications; every step kept in ``Season.steps``."""
    s = Season(work)
    issuer, authority, key_file = set_up(s)
    with StandInProxy(issuer, _served(s.root)) as proxy:
        say(f"stand-in Trust Layer API at {proxy.url} (key {issuer.key})")
        for piste in PISTES:
            s.salts[piste] = work / f"{piste}.salt"
            s.corpus(f"{piste}: freeze", "freeze", "--root", str(s.root), "--track", piste, "--salt-file",
                     str(s.salts[piste]))
            s.corpus(f"{piste}: pin", "pin", "--root", str(s.root), "--track", piste, "--trust-layer-url",
                     proxy.url, "--trust-layer-key", issuer.key, "--challenge-key-file", str(key_file), "--tsa-ca",
                     str(authority.ca), "--tsa-cert", str(authority.cert))
            _anchor(s, proxy, piste, say)
            s.corpus(f"{piste}: publish --opening", "publish", "--opening", "--root", str(s.root), "--track",
                     piste, "--out", str(work / "opening"))
        start = 0
        for piste in PISTES:
            community = write_community(s.root, piste, work / "service" / piste)
            s.records[piste], s.registrations[piste] = community.submissions, community.registrations
            start = _prove_records(community.submissions, issuer, proxy, start)
            say(f"  {piste}: {sum(1 for _ in community.submissions.rglob('*.json'))} records, "
                f"{len(community.names)} registrations")
        close = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
        for piste in PISTES:
            _late_after(s.records[piste], close)
            s.corpus(f"{piste}: pin the close", "pin", "--root", str(s.root), "--track", piste, "--season-close",
                     f"{close:%Y-%m-%dT%H:%M:%SZ}")
        while datetime.now(UTC) <= close + LATE:  # the late record too is in the past: none from the future
            time.sleep(0.2)
        for piste in PISTES:
            _close(s, piste)
    return s


LATE = timedelta(seconds=1)


def _late_after(records: Path, close: datetime) -> None:
    """The community's reception times moved into this season, in the same order: an hour before the
    community's close becomes 10 ms before this one; the record received after it, ``LATE`` after (a second:
    the close waits for it, since a record received after the command's own clock is refused)."""
    for path in sorted(records.rglob("*.json")):
        record = json.loads(path.read_text("utf-8"))
        given = datetime.fromisoformat(record["recu_le"].replace("Z", "+00:00"))
        hours = (datetime.fromisoformat(COMMUNITY_CLOSE.replace("Z", "+00:00")) - given).total_seconds() / 3600
        when = close + LATE if hours < 0 else close - timedelta(milliseconds=10 * hours)
        record["recu_le"] = f"{when:%Y-%m-%dT%H:%M:%S}.{when.microsecond // 1000:03d}Z"
        path.write_text(json.dumps(record, ensure_ascii=False, indent=1), "utf-8")


def _close(s: Season, piste: str) -> None:
    root, out = str(s.root), s.work
    proofs = out / "proofs" / piste
    s.proofs[piste] = proofs
    s.corpus(f"{piste}: proofs fetch --records (no pin flag)", "proofs", "fetch", "--records",
             str(s.records[piste]), "--track", piste, "--out", str(proofs), "--root", root)
    common = ["--root", root, "--track", piste, "--proofs", str(proofs), "--salt-file", str(s.salts[piste])]
    s.corpus(f"{piste}: index (no pin flag)", "index", "--records", str(s.records[piste]), "--registrations",
             str(s.registrations[piste]), "--out", str(out / "index"), *common)
    s.corpus(f"{piste}: publish --close (no pin flag)", "publish", "--close", "--records", str(s.records[piste]),
             "--registrations", str(s.registrations[piste]), "--out", str(out / "publication"), *common)
    s.publications[piste] = out / "publication" / piste
    s.corpus(f"{piste}: verify-publication", *s.verify_args(s.publications[piste]))


# ------------------------------------------------------------------------------------- tampered variants


def _json_edit(name: str, edit: Callable[[Any], None]) -> Callable[[Path], str]:
    def apply(folder: Path) -> str:
        path = folder / name
        value = json.loads(path.read_bytes())
        edit(value)
        path.write_text(json.dumps(value, ensure_ascii=False, indent=2) + "\n", "utf-8")
        return name
    return apply


def _first(folder: Path, pattern: str) -> str:
    return sorted(p.relative_to(folder).as_posix() for p in folder.glob(pattern))[0]


def _index_figure(v: Any) -> None:
    v["tableaux"]["communaute"]["lignes"][1]["reussite"] += 1


def _report_line(v: Any) -> None:
    v["taches"][0]["assertions"][0]["statut"] = "non_etayee"


def _score(v: Any) -> None:
    v["reussite"] -= 1


def _key(v: Any) -> None:
    first = sorted(v["taches"])[0]
    v["taches"][first]["verdict"] = "indeterminable" if v["taches"][first]["verdict"] != "indeterminable" \
        else "conforme"


def _record(v: Any) -> None:
    v["soumission"]["verdict"] = "indeterminable" if v["soumission"]["verdict"] != "indeterminable" else "conforme"


def _proof_view(v: Any) -> None:
    text = v["commitments"]["response_hash"]
    v["commitments"]["response_hash"] = text[:-1] + ("0" if text[-1] != "0" else "1")


def _anchor_edit(v: Any) -> None:
    v["heure"] = "2020-01-01T00:00:00Z"


def _salt(folder: Path) -> str:
    (folder / "saison/sel.hex").write_text("00" * 32 + "\n", "ascii")
    return "saison/sel.hex"


def _manifest(folder: Path) -> str:
    path = folder / "manifeste/manifest.json"
    path.write_bytes(path.read_bytes().replace(b'"length": ', b'"length":  ', 1))
    return "manifeste/manifest.json"


def _missing(folder: Path) -> str:
    (folder / "index.html").unlink()
    return "index.html"


def _added(folder: Path) -> str:
    (folder / "rapports" / "agent-ajoute.json").write_text("{}\n", "utf-8")
    return "rapports/agent-ajoute.json"


def _record_file(folder: Path) -> str:
    return _first(folder, "soumissions/agent-honnete-1/*.json")


def _proof_file(folder: Path) -> str:
    return _first(folder, "preuves/*.json")


def _variant(pick: Callable[[Path], str], edit: Callable[[Any], None]) -> Callable[[Path], str]:
    return lambda folder: _json_edit(pick(folder), edit)(folder)


TAMPERED: dict[str, Callable[[Path], str]] = {
    "one figure of the index": _json_edit("index.json", _index_figure),
    "one report line": _json_edit("rapports/agent-honnete-1.json", _report_line),
    "one score": _json_edit("scores/agent-honnete-1.json", _score),
    "the key": _json_edit("saison/cle.json", _key),
    "the salt": _salt,
    "one record": _variant(_record_file, _record),
    "one proof view": _variant(_proof_file, _proof_view),
    "the manifest": _manifest,
    "the anchor": _json_edit("gel/anchor.json", _anchor_edit),
    "a listed file missing": _missing,
    "an unlisted file added": _added,
}
RELISTED = ("one figure of the index", "the key", "one record", "one proof view", "the anchor", "the manifest")


def relist(folder: Path) -> None:
    """``SHA256SUMS`` written again over the tampered files, as a forger would: the deeper checks must hold."""
    names = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()
                   and p.name != "SHA256SUMS")
    (folder / "SHA256SUMS").write_text("".join(f"{hashlib.sha256((folder / n).read_bytes()).hexdigest()}  {n}\n"
                                               for n in names), "utf-8")


@dataclass(frozen=True)
class Verdict:
    variant: str
    file: str
    ran: Ran

    @property
    def refused(self) -> bool:
        text = self.ran.stdout + self.ran.stderr
        return self.ran.returncode == 1 and self.file in text and "Traceback" not in text

    def line(self) -> str:
        fails = [line for line in self.ran.stdout.splitlines() if line.startswith("FAIL")]
        return f"{'refused' if self.refused else 'NOT REFUSED'} (exit {self.ran.returncode}): " + \
            (fails[0][5:180] if fails else "no failing line")


def tampered_verdicts(s: Season, piste: str) -> list[Verdict]:
    """Each tampered variant of the track's publication verified (and, for some, with SHA256SUMS rewritten)."""
    out = []
    for name, tamper in TAMPERED.items():
        for rewritten in (False, True) if name in RELISTED else (False,):
            copy = s.work / "tampered" / f"{piste}-{len(out):02d}"
            shutil.copytree(s.publications[piste], copy)
            file = tamper(copy)
            if rewritten:
                relist(copy)
            out.append(Verdict(f"{name}{' (SHA256SUMS rewritten)' if rewritten else ''}", file,
                               run_corpus(*s.verify_args(copy))))
    return out


@contextlib.contextmanager
def kept(work: Path | None) -> Iterator[Path]:
    """A work folder: ``work`` as given, or a temporary one removed at the end."""
    if work is not None:
        work.mkdir(parents=True, exist_ok=True)
        yield work
        return
    import tempfile
    with tempfile.TemporaryDirectory(prefix="season-rehearsal-") as tmp:
        yield Path(tmp)
