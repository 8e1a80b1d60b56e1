"""Keep a local topology up (``corpus serve --replicas N``): an nginx that dies is started again.

What systemd's ``Restart=on-failure`` does for a deployment, for the shape an operator tries first: a
replica or a frontal whose master exits (a crash, a SIGKILL, the whole group or the master alone) is
started again from its rendered prefix, nothing re-rendered and nothing else touched, after a short
backoff (0.1 s, doubled per death up to 2 s). Workers orphaned by a killed master are stopped first
(gracefully: they finish what they hold), so they never keep a replica's port nor serve unsupervised.
Meanwhile the frontal fails over to the other replicas; a frontal's listening socket is held by the
supervisor, so its address refuses nothing while it restarts (the connections wait in the accept
queue). One process that dies more than :data:`RESTART_LIMIT` times within :data:`RESTART_WINDOW`
seconds ends the command, saying why: something is wrong that a restart does not fix.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from generator.base.errors import ServingError
from generator.serving.instances.nginx_process import NginxProcess
from generator.serving.instances.topology import Topology

RESTART_LIMIT = 5  # restarts of one process allowed within RESTART_WINDOW (as the units' StartLimitBurst)
RESTART_WINDOW = 60.0
BACKOFF_FIRST = 0.1
BACKOFF_MAX = 2.0
POLL = 0.05


def exit_text(process: NginxProcess) -> str:
    """``killed by SIGKILL`` or ``exit status 1``: how a master ended."""
    code = process.process.returncode if process.process is not None else None
    if code is None:
        return "did not start"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def describe(process: NginxProcess) -> str:
    s = process.settings
    return f"{s.role} {s.listen}:{s.port}"


@dataclass
class Supervisor:
    """Watches every nginx of ``topology``; ``changed`` is called after each restart (the state file)."""

    topology: Topology
    say: Callable[[str], None]
    changed: Callable[[], None] = lambda: None
    deaths: dict[Path, list[float]] = field(default_factory=dict)
    pending: dict[Path, tuple[NginxProcess, float]] = field(default_factory=dict)

    def run(self, stopped: Callable[[], bool]) -> str | None:
        """Until ``stopped()`` (None), or until one process keeps dying (the reason, one line)."""
        while not stopped():
            reason = self.check(time.monotonic())
            if reason is not None:
                return reason
            time.sleep(POLL)
        return None

    def check(self, now: float) -> str | None:
        """Note the deaths, start again what is due; the reason to give up, if any."""
        for process in [*self.topology.replicas, *self.topology.frontals]:
            prefix = process.settings.prefix
            if prefix in self.pending or process.running():
                continue
            times = [t for t in self.deaths.get(prefix, []) if now - t < RESTART_WINDOW] + [now]
            self.deaths[prefix] = times
            if len(times) > RESTART_LIMIT:
                return (f"{describe(process)} ({exit_text(process)}) died {len(times)} times within "
                        f"{RESTART_WINDOW:.0f} s: giving up; see {process.settings.error_log_path}, fix it, then "
                        "start corpus serve again")
            delay = min(BACKOFF_FIRST * 2 ** (len(times) - 1), BACKOFF_MAX)
            pid = f" (pid {process.process.pid})" if process.process is not None else ""
            self.say(f"{describe(process)}{pid} {exit_text(process)}; starting it again from {prefix} in "
                     f"{delay:.1f} s (restart {len(times)} of {RESTART_LIMIT} within {RESTART_WINDOW:.0f} s)")
            self.pending[prefix] = (process, now + delay)
        for prefix, (dead, due) in list(self.pending.items()):
            if now < due:
                continue
            del self.pending[prefix]
            try:
                fresh = self.topology.restart(dead)
            except ServingError as exc:  # counted as a death at the next check
                self.say(f"{describe(dead)} did not start again: {str(exc).splitlines()[0]}")
                continue
            self.say(f"{describe(fresh)} started again (pid {fresh.pid}), answering")
            self.changed()
        return None
