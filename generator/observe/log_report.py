"""Incidents from the access logs (``corpus log-report``): what the proxy received, hour by hour.

Spec §4.1 classes a proof whose response hash is the corpus's 403 body (the proxy did not send the
secret), or the frontal's 503 or 400 body, as an *instrument defect* and opens an incident. The operator
learns about those from the JSON access logs of the frontals and replicas (``nginx/snippets/
log-format.conf.j2``), which this module reads as a stream: plain or gzip-rotated files, or folders of
them, one line at a time, with counters capped so that memory stays bounded whatever the logs hold.

Which lines are the clients' answers: the frontal's when frontal lines are present (a replica's 503
that the frontal retried elsewhere reached no client); otherwise every line (a lone vhost, or only
replica logs given). Replica lines are reported apart, for what they say about the replicas.
"""

from __future__ import annotations

import argparse
import errno
import gzip
import json
import os
import re
import stat
import sys
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

import orjson

from generator.base.atomic_file import FileWriteError, check_target, write_atomic
from generator.base.errors import GeneratorError, ManifestError
from generator.base.output_places import OutputRefused, not_an_input, outside_protected
from generator.compiler.track_file import load_tracks
from generator.contract.manifest import MANIFEST_FILE, Manifest
from generator.tracks.model import Collection

REPORT_FORMAT = "corpus-log-report/1"
FRONTAL = "frontal"
REPLICA = "replica"
LONE = "vhost"  # lines written before the topology existed carry no role: one vhost served everything
DEFECT_STATUSES = (400, 403, 503)  # the /_systeme bodies spec §4.1 classes as instrument defects
DEFAULT_PROXY_AGENT = r"^python-httpx/"  # the Trust Layer proxy's client (CONTRACT §2, measured)
MAX_KEYS = 1000  # distinct user agents or paths kept per hour and role; the rest are counted as one
MAX_KEY_CHARS = 300  # a hostile URI or user agent is kept truncated
MAX_MALFORMED_LISTED = 50
MAX_LINE_BYTES = 256 * 1024  # nginx's header buffers are 8k: a URI and a user agent, escaped, fit easily
OTHERS = "(others)"
_PROXY_CAUSES = {403: "the proxy did not send an accepted secret",
                 400: "the proxy's requests were refused as malformed"}
GZIP_MAGIC = b"\x1f\x8b"
# Access logs compress 10 to 30 times; deflate's ceiling is about 1000. Past its first 64 MiB, a gzip
# file that has expanded more than 200 times its compressed size is reported as a bomb and skipped.
MAX_GZIP_RATIO = 200
GZIP_RATIO_FREE = 64 * 1024 * 1024


class LogReportError(GeneratorError):
    """An input that cannot be read at all (missing path, unreadable manifest, bad option)."""


# ------------------------------------------------------------------------------------------ counters


class CappedCounter(Counter[str]):
    """A counter of at most ``MAX_KEYS`` distinct keys: later new keys are counted under ``(others)``.

    Each key is truncated to ``MAX_KEY_CHARS``. The total stays exact; only the breakdown is capped.
    """

    def add(self, key: str, n: int = 1) -> None:
        if len(key) > MAX_KEY_CHARS:
            key = key[:MAX_KEY_CHARS] + "…"
        if key in self or len(self) < MAX_KEYS:
            self[key] += n
        else:
            self[OTHERS] += n

    def top(self, n: int) -> list[tuple[str, int]]:
        """The ``n`` largest, ties by key (deterministic), ``(others)`` last whatever its size."""
        items = sorted(((k, v) for k, v in self.items() if k != OTHERS), key=lambda kv: (-kv[1], kv[0]))
        shown, rest = items[:n], sum(v for _, v in items[n:]) + self.get(OTHERS, 0)
        return shown + ([(OTHERS, rest)] if rest else [])


@dataclass
class Bucket:
    """Everything counted for one hour and one role."""

    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    forbidden_agents: CappedCounter = field(default_factory=CappedCounter)  # 403 by user agent
    bad_request_agents: CappedCounter = field(default_factory=CappedCounter)  # 400 by user agent
    failovers: int = 0  # requests the frontal sent to more than one replica
    failovers_recovered: int = 0  # ... and that got a good answer from a later one
    failed_attempts: CappedCounter = field(default_factory=CappedCounter)  # "address status" of failed tries
    absent: CappedCounter = field(default_factory=CappedCounter)  # 200 existe:false, by path
    unknown: CappedCounter = field(default_factory=CappedCounter)  # 404, by URI

    def merge(self, other: Bucket) -> None:
        self.requests += other.requests
        self.statuses.update(other.statuses)
        self.failovers += other.failovers
        self.failovers_recovered += other.failovers_recovered
        for name in ("forbidden_agents", "bad_request_agents", "failed_attempts", "absent", "unknown"):
            mine: CappedCounter = getattr(self, name)
            for key, n in getattr(other, name).items():
                mine.add(key, n)


# ---------------------------------------------------------------------------------------------- input


@dataclass(frozen=True)
class Malformed:
    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


def log_files(paths: Iterable[Path]) -> list[Path]:
    """The files to read: files as given; in a folder, every ``*access*.log*`` file below it, sorted.

    Error logs and other files in a log folder are not JSON access logs: naming the files picks them.
    A path given that is neither (a FIFO, a device, a socket) is refused by name: reading a FIFO would
    wait for a writer forever. In a folder, an entry named like an access log that is no regular file (a
    FIFO, a dangling link) is refused too: skipping it would report its hours as quiet.
    """
    found: list[Path] = []
    for path in paths:
        try:
            mode = path.stat().st_mode
        except FileNotFoundError:
            raise LogReportError(f"{path}: no such file or folder") from None
        except OSError as exc:
            raise LogReportError(f"{path}: cannot read: {exc.strerror}") from None
        if stat.S_ISDIR(mode):
            named = sorted(p for p in path.rglob("*access*.log*") if not p.is_dir())
            unreadable = [p for p in named if not p.is_file()]  # a FIFO, a socket, a dangling link
            if unreadable:
                raise LogReportError(f"{', '.join(map(str, unreadable))}: named like an access log but not a "
                                     "regular file (a FIFO, a socket, a device or a dangling link): cannot read "
                                     f"{'it' if len(unreadable) == 1 else 'them'}")
            found.extend(named)
        elif stat.S_ISREG(mode):
            found.append(path)
        else:
            raise LogReportError(f"{path}: not a regular file")
    return found


@contextmanager
def _open(path: Path) -> Iterator[BinaryIO]:
    """The file's bytes, gunzipped when it starts with the gzip magic (whatever its name).

    Opened without blocking and checked on the open descriptor: a file replaced by a FIFO after
    :func:`log_files` looked at it is refused, not waited on.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
    os.set_blocking(fd, True)
    with os.fdopen(fd, "rb") as raw:
        if raw.read(2) == GZIP_MAGIC:
            raw.seek(0)
            with gzip.GzipFile(fileobj=raw, mode="rb") as unzipped:
                yield unzipped  # type: ignore[misc]
        else:
            raw.seek(0)
            yield raw


def read_lines(path: Path, problem: Callable[[int, str], None],
               blank: Callable[[int, int], None] | None = None) -> Iterator[tuple[int, bytes]]:
    """(line number, line) of one file, streamed, each line at most ``MAX_LINE_BYTES``.

    A longer line (not something nginx writes: its header buffers are 8k) is skipped and reported, so
    that a file without newlines cannot fill the memory; a truncated or corrupt gzip ends the file
    with a problem. Runs of blank lines are counted a buffer at a time and given to ``blank`` (first
    line, count), never yielded: a small gzip that expands to gigabytes of newlines takes seconds, not
    hours. A gzip file that expands more than ``MAX_GZIP_RATIO`` times beyond its first
    ``GZIP_RATIO_FREE`` bytes is a bomb, not a log: it is reported and the rest of it skipped.
    """
    number = 0
    report_blank = blank or (lambda first, count: problem(first, _blank_reason(count)))
    run = 0  # blank lines counted but not yet reported: a run spans many buffers

    def flush() -> None:
        nonlocal run
        if run:
            report_blank(number - run + 1, run)
            run = 0

    try:
        with _open(path) as handle:
            readline, peek, read = handle.readline, handle.peek, handle.read  # type: ignore[attr-defined]
            bomb = _bomb_check(handle)
            while head := peek(MAX_LINE_BYTES):
                if head[0] in _BLANK:
                    spaces = len(head) - len(head.lstrip(_BLANK_CHARS))
                    cut = head.rfind(b"\n", 0, spaces) + 1
                    if cut:
                        count = head.count(b"\n", 0, cut)
                        number += count
                        run += count
                        read(cut)
                        if bomb():
                            flush()
                            problem(number + 1, _BOMB_REASON)
                            return
                        continue
                flush()
                line = readline(MAX_LINE_BYTES)
                number += 1
                if len(line) == MAX_LINE_BYTES and not line.endswith(b"\n"):
                    while (rest := readline(MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
                        pass
                    problem(number, f"line longer than {MAX_LINE_BYTES} bytes, skipped")
                    continue
                if not number & 0xFFFF and bomb():
                    problem(number + 1, _BOMB_REASON)
                    return
                yield number, line
            flush()
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        flush()
        problem(number + 1, f"gzip stream ends or breaks here ({exc})")
    except OSError as exc:
        flush()
        problem(number + 1, f"read error: {exc.strerror or exc}")


_BLANK_CHARS = b" \t\r\n"
_BLANK = frozenset(_BLANK_CHARS)
_BOMB_REASON = (f"gzip expands more than {MAX_GZIP_RATIO} times its size: a decompression bomb, not a log; "
                "rest of the file skipped")


def _blank_reason(count: int) -> str:
    return "empty line" if count == 1 else f"{count} empty lines from here"


def _bomb_check(handle: BinaryIO) -> Callable[[], bool]:
    """Whether a gzip stream has expanded beyond ``MAX_GZIP_RATIO`` (always False for a plain file)."""
    raw = getattr(handle, "fileobj", None) if isinstance(handle, gzip.GzipFile) else None
    if raw is None:
        return lambda: False

    def bomb() -> bool:
        out = handle.tell()
        return out > GZIP_RATIO_FREE and out > MAX_GZIP_RATIO * max(raw.tell(), 1)
    return bomb


class Entry(NamedTuple):
    """The fields of one access log line that the report uses (a tuple: a million are made per run)."""

    time: str
    role: str
    uri: str
    status: int
    secret_ok: bool | None
    user_agent: str
    upstream_addr: str
    upstream_status: str


_TEXT_FIELDS = ("time", "uri", "role", "user_agent", "upstream_addr", "upstream_status")


def parse_line(line: bytes) -> Entry:
    """One line as nginx's ``corpus_json`` format writes it; ValueError says what is wrong.

    nginx's ``escape=json`` escapes quotes, backslashes and control characters but copies other bytes
    as they came: a hostile user agent can make a line that is not UTF-8. Such a line is still nginx's
    own output, so it is read with the bad bytes replaced rather than rejected.
    """
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        if not line.strip():
            raise ValueError("empty line") from None
        try:
            record = orjson.loads(line.decode("utf-8", errors="replace"))
        except orjson.JSONDecodeError:
            raise ValueError("not a JSON object (truncated or not an access log line)") from None
    if type(record) is not dict:
        raise ValueError("not a JSON object")
    get = record.get
    time, uri, role = get("time"), get("uri", ""), get("role", "")
    agent, addr, upstream = get("user_agent", ""), get("upstream_addr", ""), get("upstream_status", "")
    status, secret_ok = get("status"), get("secret_ok")
    # One test for the common case; the slow path only names what is wrong.
    if not (type(time) is str and time and type(uri) is str and type(role) is str and type(agent) is str
            and type(addr) is str and type(upstream) is str and type(status) is int and 0 <= status <= 999
            and (secret_ok is None or type(secret_ok) is bool)):
        raise ValueError(_what_is_wrong(record))
    return Entry(time, role or LONE, uri, status, secret_ok, agent, addr, upstream)


def _what_is_wrong(record: dict[str, Any]) -> str:
    status = record.get("status")
    if type(status) is not int or not 0 <= status <= 999:
        return "field status: missing or not an HTTP status number"
    if not record.get("time"):
        return "field time: missing"
    for name in _TEXT_FIELDS:
        value = record.get(name, "")
        if type(value) is not str:
            return f"field {name}: {type(value).__name__}, not a string"
    return "field secret_ok: not true or false"


def parse_time(value: str) -> datetime:
    """An ISO 8601 date-time in UTC; a value without offset is taken as UTC. ValueError says what is wrong."""
    moment = datetime.fromisoformat(value)
    try:
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:00+01:00 is before year 1 in UTC: not a date Python can hold
        raise ValueError(f"{value[:40]!r}: outside the years 1 to 9999 once in UTC") from None


def hour_of(moment: datetime) -> str:
    """``2026-11-30T05:00Z``: the UTC hour a moment falls in."""
    return moment.isoformat()[:13] + ":00Z"


# -------------------------------------------------------------------------------------- upstream tries


def attempts(addr: str, status: str) -> list[tuple[str, str]]:
    """(address, status) of each upstream try, from nginx's ``$upstream_addr`` and ``$upstream_status``.

    nginx separates the servers tried for one request with ", " and the groups of an internal redirect
    with " : "; an absent value is "" or "-". When every server of a group is down, the address is the
    group's name.
    """
    if addr in ("", "-"):
        return []
    addrs = [a.strip() for group in addr.split(" : ") for a in group.split(",")]
    statuses = [s.strip() for group in status.split(" : ") for s in group.split(",")] if status else []
    statuses += ["-"] * (len(addrs) - len(statuses))
    return list(zip(addrs, statuses, strict=False))


def _good(status: str) -> bool:
    return status.isdigit() and int(status) < 500


# ----------------------------------------------------------------------------------------- the report


@dataclass(frozen=True)
class PathKinds:
    """Which request URIs are absent identifiers: declared absents, and canonical shapes the manifest lacks."""

    declared_absent: frozenset[str]
    known: frozenset[str]
    collections: tuple[Collection, ...] = ()  # the canonical shapes of every track served

    @classmethod
    def from_manifest(cls, manifest_path: Path, collections: tuple[Collection, ...]) -> PathKinds:
        try:
            manifest = Manifest.read(manifest_path)
        except ManifestError as exc:
            raise LogReportError(f"{exc} (give --manifest, or run from the checkout)") from None
        return cls(frozenset(e.path for e in manifest.of_kind("absent")),
                   frozenset(e.path for e in manifest.entries), collections)

    def is_absent(self, uri: str) -> bool:
        return uri in self.declared_absent or (uri not in self.known
                                               and any(c.matches(uri) for c in self.collections))


@dataclass
class Report:
    """The counts of every (hour, role), the malformed lines, and what the options were."""

    kinds: PathKinds
    proxy_agent: re.Pattern[str]
    since: datetime | None = None
    until: datetime | None = None
    buckets: dict[tuple[str, str], Bucket] = field(default_factory=dict)
    files: list[dict[str, Any]] = field(default_factory=list)
    malformed: list[Malformed] = field(default_factory=list)
    malformed_count: int = 0
    outside: int = 0  # lines before --since or from --until on
    agents_with_secret: set[str] = field(default_factory=set)  # capped like the counters
    _times: dict[str, tuple[str, bool]] = field(default_factory=dict)

    # ---------------------------------------------------------------------------------- reading

    def read(self, paths: Iterable[Path]) -> None:
        for path in paths:
            self.read_file(path)

    def read_file(self, path: Path) -> None:
        lines = 0
        before = self.malformed_count
        name = str(path)

        def problem(number: int, reason: str) -> None:
            self.malformed_count += 1
            if len(self.malformed) < MAX_MALFORMED_LISTED:
                self.malformed.append(Malformed(name, number, reason))

        def blank(first: int, count: int) -> None:  # a run of empty lines: one entry, each line counted
            nonlocal lines
            lines += count
            self.malformed_count += count - 1
            problem(first, _blank_reason(count))

        for number, line in read_lines(path, problem, blank):
            lines += 1
            try:
                self.add(parse_line(line))
            except ValueError as exc:
                problem(number, str(exc))
        self.files.append({"path": name, "lines": lines, "malformed": self.malformed_count - before})

    def _hour(self, time: str) -> tuple[str, bool]:
        """(hour, inside --since/--until) of a time field, cached: nginx repeats it for a whole second."""
        cached = self._times.get(time)
        if cached is None:
            try:
                moment = parse_time(time)
            except ValueError as exc:
                why = exc if "outside the years" in str(exc) else f"{time[:40]!r} is not an ISO 8601 date-time"
                raise ValueError(f"field time: {why}") from None
            inside = (self.since is None or moment >= self.since) and (self.until is None or moment < self.until)
            if len(self._times) > 4096:
                self._times.clear()
            cached = self._times[time] = (hour_of(moment), inside)
        return cached

    def add(self, entry: Entry) -> None:
        hour, inside = self._hour(entry.time)
        if not inside:
            self.outside += 1
            return
        bucket = self.buckets.get((hour, entry.role))
        if bucket is None:
            bucket = self.buckets[(hour, entry.role)] = Bucket()
        bucket.requests += 1
        status = entry.status
        bucket.statuses[status] += 1
        if entry.secret_ok and len(self.agents_with_secret) < MAX_KEYS:
            self.agents_with_secret.add(entry.user_agent[:MAX_KEY_CHARS])
        if status == 200:
            if self.kinds.is_absent(entry.uri):
                bucket.absent.add(entry.uri)
        elif status == 403:
            bucket.forbidden_agents.add(entry.user_agent)
        elif status == 404:
            bucket.unknown.add(entry.uri)
        elif status == 400:
            bucket.bad_request_agents.add(entry.user_agent)
        addr = entry.upstream_addr
        if addr and (not _good(entry.upstream_status) or "," in addr or " : " in addr):  # else one good try
            tries = attempts(addr, entry.upstream_status)
            if len(tries) > 1:
                bucket.failovers += 1
                bucket.failovers_recovered += _good(tries[-1][1])
            for address, try_status in tries:
                if not _good(try_status):
                    bucket.failed_attempts.add(f"{address} {try_status}")

    # ---------------------------------------------------------------------------------- views

    @property
    def client_roles(self) -> tuple[str, ...]:
        """The roles whose lines are the clients' answers: all but the replicas' when a frontal logged.

        Lines without a role come from the single vhost that served clients before the topology.
        """
        roles = {role for _, role in self.buckets}
        if FRONTAL in roles:
            roles.discard(REPLICA)
        return tuple(sorted(roles))

    def hours(self) -> list[str]:
        return sorted({hour for hour, _ in self.buckets})

    def merged(self, hour: str | None, roles: Iterable[str]) -> Bucket:
        """One bucket summing ``roles`` for an hour (or for every hour when ``hour`` is None)."""
        total = Bucket()
        wanted = set(roles)
        for (h, role), bucket in self.buckets.items():
            if role in wanted and (hour is None or h == hour):
                total.merge(bucket)
        return total

    def replica_roles(self) -> tuple[str, ...]:
        return (REPLICA,) if FRONTAL in self.client_roles else ()  # else the replicas are the clients' answers

    def is_proxy(self, agent: str) -> tuple[bool, str]:
        """Whether a user agent is the proxy's, and why we think so."""
        if self.proxy_agent.search(agent):
            return True, f"matches --proxy-agent {self.proxy_agent.pattern!r}"
        if agent[:MAX_KEY_CHARS] in self.agents_with_secret:
            return True, "the same user agent also sent an accepted secret"
        return False, ""

    def findings(self) -> list[dict[str, Any]]:
        """What needs the operator, hour by hour; ``defect`` marks what spec §4.1 makes an instrument defect."""
        found: list[dict[str, Any]] = []
        for hour in self.hours():
            client = self.merged(hour, self.client_roles)
            found.extend(self._client_findings(hour, client))
            if self.replica_roles():
                found.extend(self._replica_findings(hour, self.merged(hour, self.replica_roles())))
        if self.malformed_count:
            found.append({"hour": None, "kind": "malformed-lines", "count": self.malformed_count, "defect": False,
                          "message": f"{self.malformed_count} line(s) are not access log lines (listed below)"})
        return found

    def _client_findings(self, hour: str, client: Bucket) -> list[dict[str, Any]]:
        found = []
        for status, kind, agents in ((403, "proxy-without-secret", client.forbidden_agents),
                                     (400, "bad-request-to-proxy", client.bad_request_agents)):
            for agent, count in sorted(agents.items()):
                proxy, why = self.is_proxy(agent)
                if proxy:
                    found.append(_finding(hour, kind, count, True,
                                          f"{count} x {status} to {agent!r} ({why}): {_PROXY_CAUSES[status]}; "
                                          f"every proof of these calls hashes /_systeme/{status}"))
        if client.statuses[503]:
            found.append(_finding(hour, "unavailable", client.statuses[503], True,
                                  f"{client.statuses[503]} x 503 answered to clients: no replica answered (or "
                                  "maintenance); every proof of these calls hashes /_systeme/503"))
        if client.failovers:
            lost = client.failovers - client.failovers_recovered
            found.append(_finding(hour, "failover", client.failovers, False,
                                  f"{client.failovers} request(s) retried on another replica, {lost} without "
                                  f"a good answer; failed tries: {_pairs(client.failed_attempts.top(5))}"))
        return found

    def _replica_findings(self, hour: str, replicas: Bucket) -> list[dict[str, Any]]:
        found = []
        if replicas.statuses[403]:
            found.append(_finding(hour, "replica-refused-secret", replicas.statuses[403], False,
                                  f"{replicas.statuses[403]} x 403 at the replicas: a replica does not accept "
                                  "what the frontal accepts (half-done rotation?), or a direct caller"))
        if replicas.statuses[503]:
            found.append(_finding(hour, "replica-unavailable", replicas.statuses[503], False,
                                  f"{replicas.statuses[503]} x 503 at the replicas (maintenance or restart; "
                                  "the frontal retries them elsewhere)"))
        return found

    # ---------------------------------------------------------------------------------- outputs

    def as_json(self, top: int) -> dict[str, Any]:
        """The documented ``corpus-log-report/1`` document (docs/operating.md)."""
        client_roles = self.client_roles
        hours = []
        for hour in self.hours():
            by_role = {role: self.buckets[(hour, role)].requests
                       for role in sorted({r for h, r in self.buckets if h == hour})}
            entry = _bucket_json(self.merged(hour, client_roles), top, self)
            entry = {"hour": hour, "lines_by_role": by_role, **entry}
            if self.replica_roles():
                replicas = self.merged(hour, self.replica_roles())
                entry["replicas"] = {"requests": replicas.requests, "statuses": _statuses(replicas.statuses)}
            hours.append(entry)
        return {
            "format": REPORT_FORMAT,
            "since": self.since.isoformat().replace("+00:00", "Z") if self.since else None,
            "until": self.until.isoformat().replace("+00:00", "Z") if self.until else None,
            "client_roles": list(client_roles),
            "files": self.files,
            "lines_outside_period": self.outside,
            "malformed": {"count": self.malformed_count,
                          "listed": [{"file": m.file, "line": m.line, "reason": m.reason}
                                     for m in self.malformed]},
            "total": _bucket_json(self.merged(None, client_roles), top, self),
            "hours": hours,
            "findings": self.findings(),
        }


def _finding(hour: str, kind: str, count: int, defect: bool, message: str) -> dict[str, Any]:
    return {"hour": hour, "kind": kind, "count": count, "defect": defect, "message": message}


def _pairs(items: list[tuple[str, int]]) -> str:
    return ", ".join(f"{key} x{count}" for key, count in items) or "none"


def _statuses(statuses: Counter[int]) -> dict[str, int]:
    return {str(code): statuses[code] for code in sorted(statuses)}


def _bucket_json(bucket: Bucket, top: int, report: Report) -> dict[str, Any]:
    return {
        "requests": bucket.requests,
        "statuses": _statuses(bucket.statuses),
        "forbidden_by_user_agent": [
            {"user_agent": agent, "count": count, "proxy": report.is_proxy(agent)[0] if agent != OTHERS else False}
            for agent, count in bucket.forbidden_agents.top(top)],
        "unavailable": bucket.statuses[503],
        "failovers": {"count": bucket.failovers, "recovered": bucket.failovers_recovered,
                      "failed_tries": [{"upstream": key.rsplit(" ", 1)[0], "status": key.rsplit(" ", 1)[-1],
                                        "count": count} if key != OTHERS else {"upstream": OTHERS, "count": count}
                                       for key, count in bucket.failed_attempts.top(top)]},
        "absent": {"count": sum(bucket.absent.values()),
                   "paths": [{"path": p, "count": c, "declared": p in report.kinds.declared_absent}
                             for p, c in bucket.absent.top(top)]},
        "unknown": {"count": bucket.statuses[404],
                    "uris": [{"uri": u, "count": c} for u, c in bucket.unknown.top(top)]},
    }


# ------------------------------------------------------------------------------------------ the table


def render_text(report: Report, top: int) -> str:
    """The readable report: one row per hour, then the details that name agents, paths and replicas."""
    data = report.as_json(top)
    lines_read = sum(f["lines"] for f in data["files"])
    out = [f"corpus log-report: {len(data['files'])} file(s), {lines_read} line(s), {data['malformed']['count']} "
           f"malformed, {data['lines_outside_period']} outside the period; clients' answers: "
           f"{'+'.join(data['client_roles']) or 'none'} lines"]
    if report.since or report.until:
        out.append(f"period: {data['since'] or '...'} to {data['until'] or '...'} (UTC)")
    header = ("hour (UTC)", "requests", "2xx", "403", "404", "503", "other", "failover", "absent", "replicas")
    rows = [header]
    for entry in [*data["hours"], {"hour": "total", **data["total"]}]:
        statuses = {int(k): v for k, v in entry["statuses"].items()}
        ok = sum(v for k, v in statuses.items() if 200 <= k < 300)
        other = entry["requests"] - ok - sum(statuses.get(k, 0) for k in (403, 404, 503))
        replicas = entry.get("replicas", {}).get("requests", "")
        if entry["hour"] == "total" and report.replica_roles():
            replicas = report.merged(None, report.replica_roles()).requests
        rows.append((entry["hour"].replace("T", " "), entry["requests"], ok, statuses.get(403, 0),
                     statuses.get(404, 0), statuses.get(503, 0), other, entry["failovers"]["count"],
                     entry["absent"]["count"], replicas))
    out.append("")
    out.extend(_table(rows))

    out.extend(_section("statuses", [(h["hour"], ", ".join(f"{k} x{v}" for k, v in h["statuses"].items()))
                                     for h in data["hours"] if h["statuses"]]))
    out.extend(_section("403 by user agent (! = the proxy: instrument defect, spec §4.1)", [
        (h["hour"], f"{'!' if a['proxy'] else ' '} {a['count']:>7}  {a['user_agent'] or '(none)'}")
        for h in data["hours"] for a in h["forbidden_by_user_agent"]]))
    out.extend(_section("failovers and failed tries", [
        (h["hour"], f"{h['failovers']['count']} failover(s), {h['failovers']['recovered']} recovered; "
                    + "failed tries: " + (", ".join(f"{t['upstream']} {t.get('status', '')} x{t['count']}"
                                 for t in h["failovers"]["failed_tries"]) or "none"))
        for h in data["hours"] if h["failovers"]["count"] or h["failovers"]["failed_tries"]]))
    out.extend(_section("absent paths asked for (200, existe: false; * = declared absent)", [
        (h["hour"], f"{p['count']:>7}  {p['path']}{' *' if p['declared'] else ''}")
        for h in data["hours"] for p in h["absent"]["paths"]]))
    out.extend(_section("unknown paths (404)", [
        (h["hour"], f"{u['count']:>7}  {u['uri']}") for h in data["hours"] for u in h["unknown"]["uris"]]))
    findings = data["findings"]
    out.append("")
    out.append(f"findings ({sum(f['defect'] for f in findings)} instrument defect(s), spec §4.1):" if findings
               else "findings: none")
    for f in findings:
        out.append(f"  {'DEFECT' if f['defect'] else 'note  '} {f['hour'] or '':17} {f['kind']}: {f['message']}")
    if data["malformed"]["count"]:
        out.append("")
        out.append(f"malformed lines ({data['malformed']['count']}, first {len(data['malformed']['listed'])}):")
        out.extend(f"  {m['file']}:{m['line']}: {m['reason']}" for m in data["malformed"]["listed"])
    return "\n".join(out) + "\n"


def _table(rows: list[tuple[Any, ...]]) -> list[str]:
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(str(v).ljust(w) if i == 0 else str(v).rjust(w) for i, (v, w) in enumerate(zip(row, widths,
                                                                                                    strict=True)))
            for row in rows]


def _section(title: str, rows: list[tuple[str, str]]) -> list[str]:
    if not rows:
        return []
    return ["", f"{title}:", *(f"  {hour.replace('T', ' ')}  {text}" for hour, text in rows)]


# ----------------------------------------------------------------------------------------------- CLI


def _iso(value: str) -> datetime:
    try:
        return parse_time(value)
    except ValueError as exc:
        if "outside the years" in str(exc):
            raise argparse.ArgumentTypeError(str(exc)) from None
        raise argparse.ArgumentTypeError(f"{value!r}: not an ISO 8601 date-time (e.g. 2026-11-30T06:00Z)") \
            from None


def _write_json(path: str, document: dict[str, Any]) -> None:
    data = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if path == "-":
        sys.stdout.write(data)
        return
    write_atomic(path, data)


def cmd_log_report(args: argparse.Namespace) -> int:
    try:
        proxy_agent = re.compile(args.proxy_agent)
    except re.error as exc:
        print(f"corpus log-report: --proxy-agent {args.proxy_agent!r}: {exc}", file=sys.stderr)
        return 2
    if args.since and args.until and args.since >= args.until:
        print("corpus log-report: --since must come before --until", file=sys.stderr)
        return 2
    if args.top < 1:
        print("corpus log-report: --top must be 1 or more", file=sys.stderr)
        return 2
    try:
        manifest = args.manifest or args.root / "manifest" / MANIFEST_FILE
        collections = tuple(c for track in load_tracks(args.root) for c in track.collections)
        report = Report(PathKinds.from_manifest(manifest, collections), proxy_agent, since=args.since,
                        until=args.until)
        files = log_files(args.logs)
    except LogReportError as exc:
        print(f"corpus log-report: {exc}", file=sys.stderr)
        return 2
    if not files:
        print("corpus log-report: no access log found (in a folder, files named *access*.log*)", file=sys.stderr)
        return 2
    if args.json and args.json != "-":
        try:  # never inside a compiled or served tree, never over one of the files read
            not_an_input(outside_protected(args.root, Path(args.json)), [manifest, *files])
            check_target(args.json)
        except (OutputRefused, FileWriteError) as exc:
            print(f"corpus log-report: {exc}", file=sys.stderr)
            return 1
    report.read(files)
    if args.json:
        document = report.as_json(args.top)
        _write_json(args.json, document)
        defects = sum(f["defect"] for f in document["findings"])
        print(f"corpus log-report: {len(files)} file(s), {report.malformed_count} malformed line(s), "
              f"{defects} instrument defect finding(s); report in {args.json}", file=sys.stderr)
    else:
        sys.stdout.write(render_text(report, args.top))
        defects = sum(f["defect"] for f in report.findings())
    return 3 if args.fail_on_defect and defects else 0


def register(sub: argparse._SubParsersAction) -> None:
    from generator.cli.main import add_root_options

    p = sub.add_parser(
        "log-report", help="hour-by-hour report of the JSON access logs: statuses, 403 by agent, 503, failovers",
        description="Read the JSON access logs of the frontals and replicas (files, or folders searched for "
                    "*access*.log*; plain or gzip) as a stream and report per hour (UTC): requests, statuses, "
                    "403s by user agent (the proxy without its secret is an instrument defect, spec §4.1), "
                    "503s, failovers and failed replica tries, absent paths asked for, unknown paths (404). "
                    "Malformed lines are counted and listed as file:line. Exit 0; 1 when the --json file "
                    "cannot be written; 2 when an input cannot be read; 3 with --fail-on-defect when an "
                    "instrument defect is found.")
    p.add_argument("logs", nargs="+", type=Path, help="access log files or folders")
    add_root_options(p)
    p.add_argument("--manifest", type=Path, default=None,
                   help="manifest that says which paths are absents (default ROOT/manifest/manifest.json)")
    p.add_argument("--since", type=_iso, default=None, help="first moment reported (ISO 8601; UTC if no offset)")
    p.add_argument("--until", type=_iso, default=None, help="end of the period, excluded (ISO 8601)")
    p.add_argument("--json", metavar="FILE", default=None,
                   help=f"write the {REPORT_FORMAT} JSON document to FILE ('-': stdout) instead of the table")
    p.add_argument("--top", type=int, default=10, help="user agents and paths listed per hour (default 10)")
    p.add_argument("--proxy-agent", default=DEFAULT_PROXY_AGENT,
                   help=f"regex of the proxy's User-Agent (default {DEFAULT_PROXY_AGENT!r}); a user agent that "
                        "also sent an accepted secret counts as the proxy too")
    p.add_argument("--fail-on-defect", action="store_true",
                   help="exit 3 when a finding is an instrument defect (for monitoring)")
    p.set_defaults(func=cmd_log_report)
