"""The reads Trust Layer allows one address (spec §10): at most N in any rolling hour, waited for when spent.

Trust Layer blocks an IP beyond 100 public-view reads an hour (its counter starts with a first read and
lasts an hour). A client that never lets more than N <= 100 reads into any 3600 s window also stays under
that fixed window, wherever it starts; so the budget counts every request it lets out (a batch read counts
one, as Trust Layer counts it) and says how long to wait for the oldest one to leave the window. The clock
is injected: the tests wait no hour and assert no time.
"""

from __future__ import annotations

import math
import time
from collections import deque
from typing import Protocol

WINDOW = 3600.0  # seconds: Trust Layer's counter lasts an hour
TRUST_LAYER_READS_PER_HOUR = 100  # spec §10: beyond it, the address is blocked


class Clock(Protocol):
    """What the budget and the fetch read the time from, and sleep with (a fake one in the tests)."""

    def monotonic(self) -> float: ...

    def time(self) -> float: ...

    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The machine's clocks: ``time.monotonic`` for the budget, ``time.time`` for an HTTP-date."""

    def monotonic(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class ReadBudget:
    """At most ``per_hour`` reads in any rolling hour of ``clock``."""

    def __init__(self, per_hour: int, clock: Clock) -> None:
        if not 1 <= per_hour <= TRUST_LAYER_READS_PER_HOUR:
            raise ValueError(f"reads per hour: {per_hour}: give 1 to {TRUST_LAYER_READS_PER_HOUR} "
                             "(Trust Layer blocks an address beyond 100)")
        self.per_hour = per_hour
        self.clock = clock
        self._reads: deque[float] = deque()

    def _forget_old(self) -> float:
        now = self.clock.monotonic()
        while self._reads and self._reads[0] <= now - WINDOW:
            self._reads.popleft()
        return now

    def wait(self) -> float:
        """Seconds to wait before the next read may go (0.0: at once)."""
        now = self._forget_old()
        if len(self._reads) < self.per_hour:
            return 0.0
        return self._reads[0] + WINDOW - now

    def spend(self) -> None:
        """Count one read, sent now."""
        self._reads.append(self._forget_old())

    @property
    def spent(self) -> int:
        """Reads within the last hour."""
        self._forget_old()
        return len(self._reads)

    def allowance(self) -> str:
        """The limit in words, for a progress line."""
        if self.per_hour == TRUST_LAYER_READS_PER_HOUR:
            return f"Trust Layer allows {TRUST_LAYER_READS_PER_HOUR} reads an hour"
        return f"at most {self.per_hour} reads an hour asked; Trust Layer allows {TRUST_LAYER_READS_PER_HOUR}"


def duration(seconds: float) -> str:
    """A wait in words: ``14 min`` (minutes rounded up), or ``40 s`` under a minute."""
    if seconds >= 60:
        return f"{math.ceil(seconds / 60)} min"
    return f"{math.ceil(seconds)} s"
