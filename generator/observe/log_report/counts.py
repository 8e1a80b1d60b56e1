"""The counts of a report: per UTC hour and role, capped so that memory stays bounded, and the findings
that need the operator (spec §4.1's instrument defects among them)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from generator.base.errors import ManifestError
from generator.contract.manifest import Manifest
from generator.observe.log_report.files import LogReportError, blank_reason, read_lines
from generator.observe.log_report.line import Entry, attempts, good, hour_of, parse_line, parse_time
from generator.observe.verify import VERIFY_AGENT_NAME
from generator.tracks.model import Collection

FRONTAL = "frontal"
REPLICA = "replica"
DEFECT_STATUSES = (400, 403, 503)  # the /_systeme bodies spec §4.1 classes as instrument defects
DEFAULT_PROXY_AGENT = r"^python-httpx/"  # the Trust Layer proxy's client (CONTRACT §2, measured)
# Our own probes: corpus verify (its User-Agent) and the curl lines the `corpus serve` banner prints (curl's
# default User-Agent, curl/<version>): counted apart, never the proxy, never an incident.
DEFAULT_PROBE_AGENT = rf"^({VERIFY_AGENT_NAME}|curl)/"
NO_TRACK = ""  # the track of a URI no track owns: a typo answered 404, a /_systeme path (every track lists it)
MAX_KEYS = 1000  # distinct user agents or paths kept per hour and role; the rest are counted as one
MAX_KEY_CHARS = 300  # a hostile URI or user agent is kept truncated
MAX_MALFORMED_LISTED = 50
OTHERS = "(others)"
_PROXY_CAUSES = {403: "the proxy did not send an accepted secret",
                 400: "the proxy's requests were refused as malformed"}


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
    probes: Counter[int] = field(default_factory=Counter)  # our probes' answers, by status
    by_track: Counter[tuple[str, int]] = field(default_factory=Counter)  # (piste, status) of the others
    absent_by_track: Counter[str] = field(default_factory=Counter)  # piste -> absents asked (exact)

    def merge(self, other: Bucket) -> None:
        self.requests += other.requests
        self.statuses.update(other.statuses)
        self.probes.update(other.probes)
        self.by_track.update(other.by_track)
        self.absent_by_track.update(other.absent_by_track)
        self.failovers += other.failovers
        self.failovers_recovered += other.failovers_recovered
        for name in ("forbidden_agents", "bad_request_agents", "failed_attempts", "absent", "unknown"):
            mine: CappedCounter = getattr(self, name)
            for key, n in getattr(other, name).items():
                mine.add(key, n)


@dataclass(frozen=True)
class Malformed:
    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


# ----------------------------------------------------------------------------------------- the report


@dataclass(frozen=True)
class TrackPaths:
    """One track's paths, from its own manifest: what it serves, which of them are declared absents."""

    piste: str
    manifest: str  # the file read, as given
    declared_absent: frozenset[str]
    known: frozenset[str]
    collections: tuple[Collection, ...] = ()  # its canonical shapes: an undeclared identifier is its absent

    @classmethod
    def from_manifest(cls, piste: str, manifest_path: Path, collections: tuple[Collection, ...]) -> TrackPaths:
        try:
            manifest = Manifest.read(manifest_path)
        except ManifestError as exc:
            raise LogReportError(f"{exc} (give --root the checkout or the release, or --manifest)") from None
        return cls(piste, str(manifest_path), frozenset(e.path for e in manifest.of_kind("absent")),
                   frozenset(e.path for e in manifest.entries), collections)


@dataclass(frozen=True)
class PathKinds:
    """Which track a request URI belongs to, and whether it asks for an absent identifier of that track:
    each track's declared absents, and its canonical shapes its own manifest lacks. A path more than one
    manifest lists (the ``/_systeme`` bodies) belongs to no track: counting it under one would be a guess."""

    tracks: tuple[TrackPaths, ...]
    declared_absent: frozenset[str] = field(init=False, repr=False, compare=False)  # every track's, for the report
    _owners: dict[str, TrackPaths | None] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        owners: dict[str, TrackPaths | None] = {}
        for track in self.tracks:
            for path in track.known:
                owners[path] = None if path in owners else track
        object.__setattr__(self, "_owners", owners)  # built once: track_of runs for every log line
        object.__setattr__(self, "declared_absent", frozenset().union(*(t.declared_absent for t in self.tracks)))

    def track_of(self, uri: str) -> TrackPaths | None:
        if uri in self._owners:
            return self._owners[uri]
        for track in self.tracks:
            if any(c.matches(uri) for c in track.collections):
                return track
        return None

    def is_absent(self, uri: str, track: TrackPaths | None) -> bool:
        return track is not None and (uri in track.declared_absent or uri not in track.known)


@dataclass
class Report:
    """The counts of every (hour, role), the malformed lines, and what the options were."""

    kinds: PathKinds
    proxy_agent: re.Pattern[str]
    probe_agent: re.Pattern[str] = re.compile(DEFAULT_PROBE_AGENT)
    since: datetime | None = None
    until: datetime | None = None
    buckets: dict[tuple[str, str], Bucket] = field(default_factory=dict)
    files: list[dict[str, object]] = field(default_factory=list)
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
            problem(first, blank_reason(count))

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
        if self.probe_agent.search(entry.user_agent):  # ours: on the probes line, never an agent or a path
            bucket.probes[status] += 1
        else:
            self._add_client(bucket, entry)
        addr = entry.upstream_addr
        if addr and (not good(entry.upstream_status) or "," in addr or " : " in addr):  # else one good try
            tries = attempts(addr, entry.upstream_status)
            if len(tries) > 1:
                bucket.failovers += 1
                bucket.failovers_recovered += good(tries[-1][1])
            for address, try_status in tries:
                if not good(try_status):
                    bucket.failed_attempts.add(f"{address} {try_status}")

    def _add_client(self, bucket: Bucket, entry: Entry) -> None:
        """A line of anyone but our probes: its track, its agent when refused, the path it asked for."""
        status = entry.status
        if entry.secret_ok and len(self.agents_with_secret) < MAX_KEYS:
            self.agents_with_secret.add(entry.user_agent[:MAX_KEY_CHARS])
        track = self.kinds.track_of(entry.uri)
        piste = track.piste if track else NO_TRACK
        bucket.by_track[(piste, status)] += 1
        if status == 200:
            if self.kinds.is_absent(entry.uri, track):
                bucket.absent.add(entry.uri)
                bucket.absent_by_track[piste] += 1
        elif status == 403:
            bucket.forbidden_agents.add(entry.user_agent)
        elif status == 404:
            bucket.unknown.add(entry.uri)
        elif status == 400:
            bucket.bad_request_agents.add(entry.user_agent)

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

    def findings(self) -> list[dict[str, object]]:
        """What needs the operator, hour by hour; ``defect`` marks what spec §4.1 makes an instrument defect."""
        found: list[dict[str, object]] = []
        for hour in self.hours():
            client = self.merged(hour, self.client_roles)
            found.extend(self._client_findings(hour, client))
            if self.replica_roles():
                found.extend(self._replica_findings(hour, self.merged(hour, self.replica_roles())))
        if self.malformed_count:
            found.append({"hour": None, "kind": "malformed-lines", "count": self.malformed_count, "defect": False,
                          "message": f"{self.malformed_count} line(s) are not access log lines (listed below)"})
        return found

    def _client_findings(self, hour: str, client: Bucket) -> list[dict[str, object]]:
        found = []
        for status, kind, agents in ((403, "proxy-without-secret", client.forbidden_agents),
                                     (400, "bad-request-to-proxy", client.bad_request_agents)):
            for agent, count in sorted(agents.items()):
                proxy, why = self.is_proxy(agent)
                if proxy:
                    found.append(_finding(hour, kind, count, True,
                                          f"{count} x {status} to {agent!r} ({why}): {_PROXY_CAUSES[status]}; "
                                          f"every proof of these calls hashes /_systeme/{status}"))
        unavailable = client.statuses[503] - client.probes[503]  # our probes' 503s are no client's proof
        if unavailable:
            found.append(_finding(hour, "unavailable", unavailable, True,
                                  f"{unavailable} x 503 answered to clients: no replica answered (or "
                                  "maintenance); every proof of these calls hashes /_systeme/503"))
        if client.failovers:
            lost = client.failovers - client.failovers_recovered
            found.append(_finding(hour, "failover", client.failovers, False,
                                  f"{client.failovers} request(s) retried on another replica, {lost} without "
                                  f"a good answer; failed tries: {pairs_text(client.failed_attempts.top(5))}"))
        return found

    def _replica_findings(self, hour: str, replicas: Bucket) -> list[dict[str, object]]:
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


def _finding(hour: str, kind: str, count: int, defect: bool, message: str) -> dict[str, object]:
    return {"hour": hour, "kind": kind, "count": count, "defect": defect, "message": message}


def pairs_text(items: Iterable[tuple[object, int]]) -> str:
    """``key xN, ...``, or ``none``: how the report writes a breakdown, in findings and in the text alike."""
    return ", ".join(f"{key} x{count}" for key, count in items) or "none"
