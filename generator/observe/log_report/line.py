"""One access log line as nginx's ``corpus_json`` format writes it, and the fields read from it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

import orjson

LONE = "vhost"  # lines written before the topology existed carry no role: one vhost served everything


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


def _what_is_wrong(record: dict[str, object]) -> str:
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


def good(status: str) -> bool:
    return status.isdigit() and int(status) < 500
