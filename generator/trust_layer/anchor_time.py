"""When an anchoring proof was made, and whether that time can open the season (spec §8.4, §8.5).

One rule, :func:`check_anchor_time`, for every command that reads an anchor (``freeze-anchor``,
``freeze-check``, ``score``) and for whichever clock gives the time (Trust Layer's ``timestamp`` today, the
RFC 3161 token's for spec 3.1 proofs): the time is a valid ISO 8601 UTC instant, it is not ahead of now by
more than :data:`CLOCK_SKEW`, and it is not before the record it anchors was written.

The record (``corpus-freeze/2``) states no time of its own, and its file time is anyone's to set. What says
the record existed is the anchoring call itself: the proof binds, in its signed chain, ``upstream_timestamp``,
the ``Date`` the corpus server answered that call with the record's bytes. So "written at" is that instant
at the latest, and a proof dated before it (beyond the skew) contradicts itself. (Adding a time field to the
record would change what ``/gel`` serves and the record's format, and would still be the operator's clock.)
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from generator.base.errors import GeneratorError
from generator.base.text_policy import cut

# Trust Layer's, the corpus server's and this machine's clocks may differ this much (docs/season.md).
CLOCK_SKEW = timedelta(minutes=5)
SKEW_TEXT = "5 minutes"
_INSTANT = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]{1,9})?"
                      r"(Z|\+00:00)")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_HTTP_DATE = re.compile(rf"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{{2}}) ({'|'.join(_MONTHS)}) ([0-9]{{4}}) "
                        r"([0-9]{2}):([0-9]{2}):([0-9]{2}) GMT")


class AnchorTimeError(GeneratorError):
    """A time that cannot open the season: one line naming the field and the value."""


def instant_text(when: datetime) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ``: how every message writes an instant."""
    utc = when.astimezone(UTC)
    return f"{utc.year:04d}-{utc:%m-%dT%H:%M:%SZ}"  # %Y writes the year 1 as "1" on glibc


def parse_instant(text: object, field: str) -> datetime:
    """An ISO 8601 UTC instant (``2026-12-02T01:30:23Z``, fractions and ``+00:00`` accepted) as an aware UTC
    datetime; anything else (``yesterday``, ``2026-02-30T25:61:00Z``, a local time) is refused."""
    found = _INSTANT.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        raise AnchorTimeError(f"{field}: {cut(text)} is not an ISO 8601 UTC instant written "
                              "YYYY-MM-DDTHH:MM:SSZ")
    year, month, day, hour, minute, second = (int(part) for part in found.groups()[:6])
    fraction = found[7] or ""
    try:
        when = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError as exc:  # 2026-02-30, hour 25, minute 61: no such instant
        raise AnchorTimeError(f"{field}: {cut(text)} is no instant ({exc})") from None
    return when + timedelta(microseconds=int((fraction[1:] + "000000")[:6] or 0))


def parse_http_date(text: object, field: str) -> datetime:
    """An HTTP ``Date`` (IMF-fixdate, ``Wed, 02 Dec 2026 01:30:23 GMT``) as an aware UTC datetime."""
    found = _HTTP_DATE.fullmatch(text) if isinstance(text, str) else None
    if found is None:
        raise AnchorTimeError(f"{field}: {cut(text)} is not an HTTP date written 'Wed, 02 Dec 2026 01:30:23 GMT'")
    day, month, year, hour, minute, second = found.groups()
    try:
        return datetime(int(year), _MONTHS.index(month) + 1, int(day), int(hour), int(minute), int(second),
                        tzinfo=UTC)
    except ValueError as exc:
        raise AnchorTimeError(f"{field}: {cut(text)} is no instant ({exc})") from None


def check_anchor_time(instant: datetime, record_written_at: datetime | None, now: datetime,
                      skew: timedelta = CLOCK_SKEW, field: str = "timestamp") -> datetime:
    """``instant`` (the anchoring proof's time, named ``field``), once it can open the season: not ahead of
    ``now`` by more than ``skew``, not before ``record_written_at`` (None: not known) by more than ``skew``.
    Raises :class:`AnchorTimeError` otherwise."""
    if instant > now + skew:
        raise AnchorTimeError(f"{field}: {instant_text(instant)} lies ahead of now ({instant_text(now)}) by more "
                              f"than the allowed clock skew of {SKEW_TEXT}: a proof cannot be dated in the future")
    if record_written_at is not None and instant < record_written_at - skew:
        raise AnchorTimeError(f"{field}: {instant_text(instant)} is before the freeze record it anchors was "
                              f"served ({instant_text(record_written_at)}, its upstream_timestamp) by more "
                              f"than {SKEW_TEXT}: the proof contradicts itself")
    return instant


def proof_time(timestamp: object, upstream: object, now: datetime | None = None) -> datetime:
    """The season opening a proof as Trust Layer serves it gives: its ``timestamp`` checked by
    :func:`check_anchor_time` against its ``upstream_timestamp`` (when it carries one) and ``now``."""
    when = parse_instant(timestamp, "timestamp")
    written = parse_http_date(upstream, "upstream_timestamp") if upstream is not None else None
    return check_anchor_time(when, written, now or datetime.now(UTC))
