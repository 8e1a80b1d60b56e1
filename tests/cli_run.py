"""The ``corpus`` command run inside the test's process: its exit code and what it printed.

For tests that check what a command does (a build's bytes, a message, an exit code chosen by
``generator.cli.main.main``), a child process proves nothing more and costs the CLI's import (~0.8 s of
CPU) each time. What depends on being a separate process stays a subprocess in its own test: the
installed ``corpus`` script and ``python -m generator.cli`` (test_cli.py), signals and kills
(test_transaction.py, test_serve_heal.py), stdin, a umask or a resource limit, the environment.
"""

from __future__ import annotations

import contextlib
import ctypes
import io
import os
import resource
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from generator.cli.main import main

PR_CAPBSET_DROP, CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH = 24, 1, 2


@dataclass(frozen=True)
class Ran:
    """What ``subprocess.run(..., capture_output=True, text=True)`` would return of the command."""

    returncode: int
    stdout: str
    stderr: str


def run_corpus(*args: str, cwd: Path | None = None) -> Ran:
    """``corpus ARGS`` in this process (in ``cwd`` when given); argparse's own exits are exit codes too.

    stdout and stderr are UTF-8 over bytes as Python sets up a child's pipes: stdout ``strict`` (a string
    it cannot write, a lone surrogate, fails the command as it would there), stderr ``backslashreplace``."""
    out, err = io.BytesIO(), io.BytesIO()
    where = contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext()
    with (where, contextlib.redirect_stdout(io.TextIOWrapper(out, "utf-8", "strict", write_through=True)),
          contextlib.redirect_stderr(io.TextIOWrapper(err, "utf-8", "backslashreplace", write_through=True))):
        try:
            code = main(list(args))
        except SystemExit as stop:  # argparse: a usage error (2) or --help (0)
            code = stop.code if isinstance(stop.code, int) else int(stop.code is not None)
        return Ran(code, out.getvalue().decode("utf-8"), err.getvalue().decode("utf-8"))


def corpus_process(*args: str, cwd: Path | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m generator.cli ARGS`` in a child process: for what a test proves of the process itself (a
    hang ended by its timeout, the environment it starts with)."""
    return subprocess.run([sys.executable, "-m", "generator.cli", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, check=False)


def child_limits(drop_read_override: bool) -> Callable[[], None]:
    """A child's ``preexec_fn``: 2 GiB of address space, and with ``drop_read_override`` no root override of
    file modes (so an unreadable file is unreadable to the command, as it is to an operator)."""
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        if drop_read_override and os.geteuid() == 0:  # root reads any file unless these are gone
            libc = ctypes.CDLL(None, use_errno=True)
            for cap in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
                if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
                    raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")
    return apply
