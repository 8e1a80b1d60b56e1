"""The one place that starts, waits for, reloads and stops an nginx (serve, topology, tests, benchmarks).

Every nginx of the project runs from a private prefix with ``nginx -p PREFIX -c conf/nginx.conf``, in
the foreground (``daemon off``) and in its own session, so that one signal stops the master and no
worker can outlive its owner. "Ready" and "reloaded" mean *answers*: the port accepts connections and
only workers of the current configuration hold the listening sockets. A reload that returned while old
workers still accepted connections would let a request with a just-added secret meet the previous
configuration (measured before this module: 293 refusals in 125,000 requests right after a rotation).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from generator.base.errors import RenderError, ServeError
from generator.serving.rendering.nginx_settings import Settings

START_TIMEOUT = 10.0
STOP_TIMEOUT = 10.0
RELOAD_TIMEOUT = 15.0
_POLL = 0.02


def nginx_binary() -> str:
    """The nginx executable (PATH, then Debian's /usr/sbin)."""
    found = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if found is None:
        raise ServeError("nginx not found; run 'make setup' (installs it from the Debian packages)")
    return found


def nginx_command(prefix: Path, *extra: str, conf: Path | None = None) -> list[str]:
    """``nginx -p PREFIX -c conf/nginx.conf -e logs/error.log ...``: never the compiled-in paths.

    ``conf``: another main config (a staged one, checked before it replaces conf/nginx.conf).
    """
    prefix = prefix.resolve()
    return [nginx_binary(), "-p", f"{prefix}/", "-c", str(conf or prefix / "conf" / "nginx.conf"),
            "-e", str(prefix / "logs" / "error.log"), *extra]


def test_config(prefix: Path, conf: Path | None = None) -> None:
    """Run ``nginx -t`` on a rendered prefix (or on ``conf`` staged in it); raise with nginx's own message."""
    result = subprocess.run(nginx_command(prefix, "-t", "-q", conf=conf), capture_output=True, text=True,
                            check=False)
    if result.returncode != 0:
        raise RenderError(f"nginx -t failed:\n{result.stderr.strip()}")


def running_pid(prefix: Path) -> int | None:
    """The master pid of the nginx running from ``prefix``, or None."""
    try:
        pid = int((prefix / "logs" / "nginx.pid").read_text("ascii").strip())
    except (FileNotFoundError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid


def worker_pids(master: int) -> list[int]:
    """Children of an nginx master (its workers), read from /proc."""
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == master:
                pids.append(int(entry.name))
    return pids


def _accepting_workers(master: int) -> set[int]:
    """Workers that still accept connections: a worker told to stop retitles itself "... shutting down"."""
    accepting = set()
    for pid in worker_pids(master):
        with contextlib.suppress(OSError):
            if b"shutting down" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                accepting.add(pid)
    return accepting


def _live_members(pgid: int) -> list[int]:
    """Processes of a process group that have not exited (a zombie has closed its sockets already)."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(entry.name))
    return members


def answers(host: str, port: int, timeout: float = 0.5) -> bool:
    """True when a TCP connection to host:port succeeds."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def reload_and_wait(settings: Settings, timeout: float = RELOAD_TIMEOUT) -> int:
    """``nginx -t``, SIGHUP, then wait until only workers of the new configuration accept; return the pid.

    nginx replaces its workers asynchronously after SIGHUP: old workers keep accepting until the master
    has started the new ones and told the old ones to stop. Returning before that is the defect this
    function fixes. A master that refuses the new configuration (error log) keeps its old workers: the
    wait then times out with that message rather than claiming success.
    """
    test_config(settings.prefix)
    pid = running_pid(settings.prefix)
    if pid is None:
        raise ServeError(f"no nginx running from {settings.prefix} (no live pid in logs/nginx.pid)")
    old = _accepting_workers(pid)
    os.kill(pid, signal.SIGHUP)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        current = _accepting_workers(pid)
        if current and not current & old and answers(settings.probe_host, settings.port):
            return pid
        time.sleep(_POLL)
    raise ServeError(f"nginx (master pid {pid}) did not switch to the new configuration within {timeout:.0f} s; "
                      f"see {settings.error_log_path}")


def _family(host: str) -> socket.AddressFamily:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def listen_problem(host: str, port: int) -> str | None:
    """Why nginx could not listen on ``host:port`` (``Address already in use``, an address not of this host,
    a privileged port), or None: a bind as nginx makes it (SO_REUSEADDR), released at once."""
    with socket.socket(_family(host), socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host.strip("[]"), port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def held_socket(host: str, port: int) -> socket.socket:
    """A listening socket for an nginx to inherit (:class:`NginxProcess` ``held``), kept by its supervisor.

    While the supervisor holds it, the address never refuses a connection: when nginx dies, new
    connections wait in the kernel's accept queue and the restarted nginx (given the same socket)
    answers them. Non-blocking, as nginx's workers expect of a listening socket they share.
    """
    held = socket.socket(_family(host), socket.SOCK_STREAM)
    try:
        held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        held.bind((host.strip("[]"), port))
        held.listen(511)  # nginx's own default backlog
        held.setblocking(False)
    except OSError as exc:
        held.close()
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return held


def end_group(pgid: int, grace: float = 2.0) -> None:
    """Stop what is left of a dead master's process group (orphaned workers): SIGQUIT, so that they finish
    the requests they hold and close their listening sockets, then SIGKILL after ``grace`` seconds."""
    for signum, wait in ((signal.SIGQUIT, grace), (signal.SIGKILL, STOP_TIMEOUT)):
        if not _live_members(pgid):
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pgid, signum)
        deadline = time.monotonic() + wait
        while _live_members(pgid) and time.monotonic() < deadline:
            time.sleep(_POLL)


class NginxProcess:
    """One nginx master run in the foreground from a rendered prefix, in its own session.

    ``held``: a listening socket the caller keeps (:func:`held_socket`), handed to nginx through the
    ``NGINX`` environment variable (nginx's own way to inherit sockets, made for binary upgrades).
    """

    def __init__(self, settings: Settings, *, quiet: bool = True, held: socket.socket | None = None) -> None:
        self.settings = settings
        self.quiet = quiet
        self.held = held
        self.process: subprocess.Popen[bytes] | None = None
        self._log_start = 0  # the error log's size when this start began: older lines are another run's

    @property
    def pid(self) -> int:
        assert self.process is not None, "not started"
        return self.process.pid

    def start(self, timeout: float = START_TIMEOUT) -> None:
        """Start nginx and return once it answers; raise with the error log's end when it does not."""
        out = subprocess.DEVNULL if self.quiet else None
        log = self.settings.error_log_path
        self._log_start = log.stat().st_size if log.is_file() else 0
        env: dict[str, str] | None = None
        fds: tuple[int, ...] = ()
        if self.held is not None:
            fds = (self.held.fileno(),)
            env = {**os.environ, "NGINX": f"{fds[0]};"}
        self.process = subprocess.Popen([*nginx_command(self.settings.prefix), "-g", "daemon off;"],
                                        stdout=out, stderr=out, start_new_session=True, env=env, pass_fds=fds)
        if not self.wait_ready(timeout):
            code = self.process.poll()
            self.stop()
            tail, where = self.error_tail(), f"{self.settings.listen}:{self.settings.port}"
            if "(98: Address already in use)" in tail:
                raise ServeError(f"{where}: already in use (another server listens there): stop it, or choose "
                                  "another address or port")
            raise ServeError(f"nginx from {self.settings.prefix} did not answer on {self.settings.probe_host}:"
                              f"{self.settings.port} (exit status {code}): {tail}")

    def wait_ready(self, timeout: float) -> bool:
        """Poll until the port accepts connections and workers run, or nginx exits."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                return False
            # The master listens before its workers run: wait for them too, so that a benchmark or a
            # timing-sensitive test does not measure the start-up.
            if answers(self.settings.probe_host, self.settings.port, 0.2) and worker_pids(self.pid):
                return True
            time.sleep(_POLL)
        return False

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self, timeout: float = STOP_TIMEOUT) -> None:
        """SIGKILL the master and its workers at once (a crash, for the failure tests); return once every
        process of the group is gone, so that nothing holds the listening socket any more."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        deadline = time.monotonic() + timeout
        while _live_members(self.process.pid) and time.monotonic() < deadline:
            time.sleep(_POLL / 4)

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """Fast shutdown (SIGTERM) of the master, then SIGKILL whatever is left of its process group."""
        process = self.process
        if process is None:
            return
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def quit(self, timeout: float = STOP_TIMEOUT) -> None:
        """Graceful stop (SIGQUIT): the master closes its listening sockets, the workers finish the requests
        they hold; SIGKILL whatever is left after ``timeout``. What a planned stop of a frontal ends with,
        once it is out of the name (docs/topology.md)."""
        process = self.process
        if process is None or process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGQUIT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout)
        self.stop()

    def error_tail(self, size: int = 2000) -> str:
        """The end of what the error log got since this start began (never a previous run's lines)."""
        path = self.settings.error_log_path
        if not path.is_file():
            return "(no error log)"
        with path.open("rb") as log:
            log.seek(self._log_start if path.stat().st_size >= self._log_start else 0)
            new = log.read()[-size:].decode("utf-8", errors="replace").strip()
        return new or "(nothing in the error log)"

    def __enter__(self) -> NginxProcess:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
