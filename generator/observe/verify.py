"""Check a running deployment against the manifest, as the Trust Layer proxy sees it (``corpus verify``).

Every served body of the manifest is fetched the way the proxy fetches it (``GET`` with ``params={}``,
the secret header, no redirect), parsed with ``resp.json()`` and hashed with ``canonical_json``; the
bytes (length and SHA-256) and both hashes must equal the manifest. Then what a caller without the
secret, a non-canonical URL, another method and undeclared identifiers receive. Any difference names
the resource and makes the command exit 1. Every request says ``User-Agent: corpus-verify/<version>``, so
that ``corpus log-report`` counts these probes apart (its 403s without a secret are ours, not the proxy's).
"""

from __future__ import annotations

import importlib.metadata
import random
import re
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from generator.base.errors import GeneratorError
from generator.base.jsonvalue import JsonValue
from generator.contract.bodies import absent_body, body_bytes
from generator.contract.hashing import request_hash, response_hash, sha256_hex
from generator.contract.manifest import Entry, Manifest, bytes_difference
from generator.observe.http_exchange import DEADLINE, exchange, tls_context
from generator.tracks.model import Collection

JSON_TYPE = "application/json; charset=utf-8"
SECRET_HEADER = "X-Challenge-Secret"


class VerifyError(GeneratorError):
    """Nothing meaningful can be verified (empty manifest, no secret, inconsistent base URL)."""


@dataclass(frozen=True)
class Expected:
    """One request and the exact answer the manifest (or the absent template) promises for it."""

    label: str
    path: str  # request target appended to the base URL
    status: int
    length: int
    sha256: str
    response_hash: str
    request_hash: str | None = None  # manifest value, checked against the canonical URL
    method: str = "GET"
    secret: str | None = None  # None: no header at all


@dataclass(frozen=True)
class Difference:
    label: str
    problem: str

    def __str__(self) -> str:
        return f"{self.label}: {self.problem}"


def _version() -> str:
    try:
        return importlib.metadata.version("proveit-corpus")
    except importlib.metadata.PackageNotFoundError:  # run from a checkout that was not installed
        return "0"


VERIFY_AGENT_NAME = "corpus-verify"
VERIFY_AGENT = f"{VERIFY_AGENT_NAME}/{_version()}"  # the User-Agent of every request corpus verify sends


def _from_bytes(label: str, path: str, status: int, data: bytes, **extra: Any) -> Expected:
    return Expected(label, path, status, len(data), sha256_hex(data), response_hash(data), **extra)


def undeclared_paths(manifest: Manifest, collections: tuple[Collection, ...],
                     rng: random.Random | None = None) -> list[str]:
    """One identifier per collection that has the collection's shape but names nothing in the manifest.

    Derived from a path the manifest lists (its last number changed), so it follows the collection's
    pattern whatever the season holds; ``rng`` picks a random one instead of the nearest free one.
    """
    taken = {e.path for e in manifest.entries}
    found = []
    for collection in collections:
        model = next((p for p in sorted(taken) if collection.matches(p)), None)
        if model is None:
            continue
        match = list(re.finditer(r"[0-9]+", model))[-1]
        width, start = len(match.group()), int(match.group())
        randoms = [rng.randint(10 ** (width - 1), 10 ** width - 1) for _ in range(200)] if rng else []
        for number in [*randoms, *range(start + 1, start + 5000)]:
            candidate = model[:match.start()] + str(number) + model[match.end():]
            if collection.matches(candidate) and candidate not in taken:
                found.append(candidate)
                break
    return found


def _from_entry(label: str, path: str, status: int, entry: Entry, **extra: Any) -> Expected:
    return Expected(label, path, status, entry.length, entry.sha256, entry.response_hash, **extra)


def expectations(manifest: Manifest, secrets: list[str], collections: tuple[Collection, ...],
                 rng: random.Random | None = None) -> list[Expected]:
    """Everything to request: each served body, then the refusals, then undeclared absents."""
    base = manifest.base_url
    served = manifest.of_kind("resource", "absent")
    if not served or not secrets:
        raise VerifyError("nothing to verify: empty manifest or no secret")
    secret = secrets[0]
    plan = [_from_entry(e.path, e.path, 200, e, request_hash=e.request_hash, secret=secret) for e in served]
    if request_hash(base + served[0].path) != served[0].request_hash:
        raise VerifyError(f"manifest base URL {base} does not give the manifest's request hashes")
    sample_entry = next((e for e in served if e.kind == "resource"), served[0])
    sample = sample_entry.path

    def refusal(label: str, status: int, path: str, **extra: JsonValue) -> Expected:
        return _from_entry(label, path, status, manifest.systeme(status), **extra)

    wrong = secret.swapcase() if secret.swapcase() != secret else secret + "x"
    plan += [
        refusal(f"403 without {SECRET_HEADER} ({sample})", 403, sample),
        refusal(f"403 with a wrong secret ({sample})", 403, sample, secret=wrong),
        refusal(f"404 for a trailing slash ({sample}/)", 404, sample + "/", secret=secret),
        refusal(f"404 for a .json suffix ({sample}.json)", 404, sample + ".json", secret=secret),
        refusal(f"405 for POST ({sample})", 405, sample, method="POST", secret=secret),
    ]
    for index, other in enumerate(secrets[1:], start=2):
        plan.append(_from_entry(f"{sample} with accepted secret #{index}", sample, 200, sample_entry,
                                secret=other))
    for path in undeclared_paths(manifest, collections, rng):
        plan.append(_from_bytes(f"undeclared absent {path}", path, 200, body_bytes(absent_body(path)),
                                secret=secret))
    return plan


BODY_LIMIT = 64 * 1024 * 1024  # far above any served body: a server that sends more differs anyway


class RequestFailed(Exception):
    """No complete answer: refused, reset, or the deadline of the whole exchange passed."""


def check_one(base_url: str, canonical_base: str, exp: Expected, timeout: float,
              context: ssl.SSLContext | None) -> list[str]:
    """The differences between what the server answers to ``exp`` and what it should answer; the whole
    exchange within ``timeout`` (:func:`generator.observe.http_exchange.exchange`), one connection a call
    as the proxy makes it. The body is hashed as the proxy hashes it (``contract.hashing.response_hash``)."""
    headers = {"User-Agent": VERIFY_AGENT}  # log-report counts our probes apart, never as the proxy
    if exp.secret is not None:
        headers[SECRET_HEADER] = exp.secret
    answer = exchange(base_url + exp.path, seconds=timeout, limit=BODY_LIMIT, method=exp.method,
                      headers=headers, context=context)
    if answer.status == 0:
        raise RequestFailed(f"no complete answer within --timeout {timeout:g} s (connection, headers and body "
                            "together)" if answer.error == DEADLINE else answer.error)
    data = answer.body
    problems = []
    if answer.status != exp.status:
        problems.append(f"status {answer.status}, expected {exp.status}")
    if answer.header("Content-Type") != JSON_TYPE:
        problems.append(f"Content-Type {answer.header('Content-Type')!r}, expected {JSON_TYPE!r}")
    if "no-store" not in (answer.header("Cache-Control") or ""):
        problems.append("Cache-Control without no-store")
    difference = bytes_difference(data, exp.length, exp.sha256)
    if difference is not None:
        problems.append(f"bytes differ: {difference}")
    got_hash = response_hash(data)
    if got_hash != exp.response_hash:
        problems.append(f"response_hash {got_hash[:16]}..., expected {exp.response_hash[:16]}...")
    if exp.request_hash is not None and request_hash(canonical_base + exp.path) != exp.request_hash:
        problems.append("request_hash of the canonical URL differs from the manifest")
    return problems


def verify(base_url: str, manifest: Manifest, secrets: list[str], *, collections: tuple[Collection, ...],
           verify_tls: bool | str = True,
           timeout: float = 10.0, progress: Callable[[int, int, int], None] | None = None,
           rng: random.Random | None = None) -> tuple[int, list[Difference]]:
    """Run every check; returns (number of checks, differences). ``verify_tls``: the system's CAs (True), a
    CA file, or none (False)."""
    plan = expectations(manifest, secrets, collections, rng)
    differences: list[Difference] = []
    base = base_url.rstrip("/")
    try:
        context = tls_context(verify_tls) if base.startswith("https:") else None
    except OSError as exc:  # ssl.SSLError included: a CA file OpenSSL cannot load
        raise VerifyError(f"--ca {verify_tls}: not a CA file OpenSSL can load ({exc.strerror or exc})") from None
    for done, exp in enumerate(plan, start=1):
        try:
            problems = check_one(base, manifest.base_url, exp, timeout, context)
        except RequestFailed as exc:
            problems = [f"request failed: {exc}"]
            if done == 1:
                return done, [Difference(exp.label, problems[0])]
        differences += [Difference(exp.label, p) for p in problems]
        if progress:
            progress(done, len(plan), len(differences))
    return len(plan), differences
