"""Shared fixtures (the project root, the committed manifest) and the ``nginx`` and ``slow`` markers, set
automatically.

Every test that runs the nginx binary (a server, a topology, ``corpus serve``, or only ``nginx -t`` through
a render) is marked ``nginx`` at collection, so ``pytest -m "not nginx"`` (``make test-fast``) runs the
rest on a machine without nginx. The marker is found, not written by hand: a test is marked when its code,
the code of a fixture it uses (at any depth), or of a helper of tests/ either calls, names one of
:data:`NGINX_NAMES` or passes one of :data:`NGINX_COMMANDS` to the CLI. Nobody has to remember it.

And the marker is proved complete on every run: during the session ``nginx`` on PATH is a small script
that notes which test ran it (pytest's ``PYTEST_CURRENT_TEST``, inherited by child processes) and then
runs the real nginx; a test that ran nginx without the marker fails, naming what to add here.
``slow`` is set the same way on tests that start another real process (:data:`PROCESS_NAMES`), without a
guard: it only offers a quicker loop. See docs/testing.md.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
TESTS = Path(__file__).resolve().parent

# Names whose use means "runs nginx": the helpers of tests/nginx_server.py and the generator entry points.
NGINX_NAMES = frozenset({
    "NginxServer", "start_topology", "Topology", "NginxProcess", "nginx_binary", "nginx_command", "test_config",
    "render_and_write",
    "render_checked", "reload_and_wait", "run_foreground", "run_topology", "cmd_serve", "cmd_render_nginx",
    "cmd_release",
})
# CLI subcommands that run nginx, seen as string constants (``main(["serve", ...])``, ``[CORPUS, "release"]``).
NGINX_COMMANDS = frozenset({"serve", "render-nginx", "release"})
# Names whose use means "starts another real process" (a ``corpus`` command, ``dot``, a build killed on
# purpose): the ``slow`` marker, advisory (seconds per test, no guard), for ``-m "not nginx and not slow"``.
PROCESS_NAMES = frozenset({"subprocess", "Popen", "fork", "multiprocessing", "ProcessPoolExecutor",
                           "sync_playwright"})  # the last: a headless Chromium (the index pages read)

_GUARD_LOG = "PROVEIT_NGINX_GUARD_LOG"


# ------------------------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


@pytest.fixture(scope="session")
def manifest() -> dict[str, Any]:
    """The committed manifest/conformite/manifest.json, parsed."""
    return json.loads((ROOT / "manifest" / "conformite" / "manifest.json").read_text("utf-8"))


# ------------------------------------------------------------------------------- the nginx marker


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    """``code`` and every code object nested in it (lambdas, comprehensions, inner functions)."""
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _in_tests(obj: object) -> bool:
    """Defined in a module of tests/ (so worth reading: a helper, a fixture, a test)."""
    module = getattr(obj, "__module__", None)
    file = getattr(sys.modules.get(module or ""), "__file__", None)
    return file is not None and Path(file).resolve().is_relative_to(TESTS)


def uses(func: Callable[..., Any], names_: frozenset[str], commands: frozenset[str] = frozenset(),
         seen: set[int] | None = None) -> bool:
    """Whether ``func`` (or a helper of tests/ it names, followed to any depth) names one of ``names_`` or
    holds one of ``commands`` as a string constant."""
    seen = set() if seen is None else seen
    func = getattr(func, "__wrapped__", func)
    code = getattr(func, "__code__", None)
    if code is None or id(code) in seen:
        return False
    seen.add(id(code))
    namespace = getattr(func, "__globals__", {})
    for part in _code_objects(code):
        names = set(part.co_names) | set(part.co_freevars)
        if names & names_ or commands & {c for c in part.co_consts if isinstance(c, str)}:
            return True
        for name in names:
            target = namespace.get(name)
            if isinstance(target, type) and _in_tests(target):
                methods = [m for m in vars(target).values() if isinstance(m, types.FunctionType)]
                if any(uses(m, names_, commands, seen) for m in methods):
                    return True
            elif isinstance(target, types.FunctionType) and _in_tests(target) and uses(target, names_, commands,
                                                                                       seen):
                return True
    return False


_FOUND: dict[tuple[int, str], bool] = {}  # per function and marker: fixtures are shared by many tests


def _cached(func: Callable[..., Any], marker: str, names_: frozenset[str], commands: frozenset[str]) -> bool:
    code = getattr(getattr(func, "__wrapped__", func), "__code__", None)
    key = (id(code), marker)
    if code is None or key not in _FOUND:
        _FOUND[key] = uses(func, names_, commands)
    return _FOUND[key]


def runs_nginx(func: Callable[..., Any]) -> bool:
    return _cached(func, "nginx", NGINX_NAMES, NGINX_COMMANDS)


def item_uses(item: pytest.Item, check: Callable[[Callable[..., Any]], bool]) -> bool:
    """The test function or one of the fixtures it uses (their closure, so fixtures of fixtures too)."""
    if isinstance(item, pytest.Function) and check(item.function):
        return True
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    return any(check(d.func) for name in info.names_closure for d in info.name2fixturedefs.get(name, ()))


def starts_a_process(func: Callable[..., Any]) -> bool:
    return _cached(func, "slow", PROCESS_NAMES, frozenset())


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("nginx") is None and item_uses(item, runs_nginx):
            item.add_marker(pytest.mark.nginx)
        if item.get_closest_marker("slow") is None and item_uses(item, starts_a_process):
            item.add_marker(pytest.mark.slow)


# ------------------------------------------------------------------------ the marker, proved complete

_guard_key = pytest.StashKey[tuple[Path, str]]()  # the shim's folder, and PATH as it was
_SHIM = """#!/bin/sh
printf '%s\\n' "${{PYTEST_CURRENT_TEST:-}}" >> '{log}'
exec '{real}' "$@"
"""


def pytest_configure(config: pytest.Config) -> None:
    """Put the recording ``nginx`` first on PATH for this session (only where a real nginx exists)."""
    real = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if real is None or os.environ.get(_GUARD_LOG):  # no nginx here, or an outer session already guards
        return
    folder = Path(tempfile.mkdtemp(prefix="corpus-nginx-guard-"))
    log = folder / "ran-nginx"
    log.touch()
    shim = folder / "nginx"
    shim.write_text(_SHIM.format(log=log, real=real), "utf-8")
    shim.chmod(stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
    folder.chmod(0o755)
    config.stash[_guard_key] = (folder, os.environ.get("PATH", ""))
    os.environ["PATH"] = f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"
    os.environ[_GUARD_LOG] = str(log)


def pytest_unconfigure(config: pytest.Config) -> None:
    guard = config.stash.get(_guard_key, None)
    if guard is not None:
        folder, path = guard
        os.environ["PATH"] = path
        os.environ.pop(_GUARD_LOG, None)
        shutil.rmtree(folder, ignore_errors=True)



def _ran_nginx(nodeid: str, when: str) -> bool:
    """Whether the guard's log names this test's phase (``tests/x.py::test_y (call)``)."""
    log = os.environ.get(_GUARD_LOG)
    if not log:
        return False
    wanted = f"{nodeid} ({when})"
    return wanted in Path(log).read_text("utf-8", errors="replace").splitlines()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Fail a test that ran nginx in its setup or body without the ``nginx`` marker (teardown does not
    count: a module's fixtures are torn down after its last test, whichever that is)."""
    report = yield
    if (call.when in ("setup", "call") and report.passed and item.get_closest_marker("nginx") is None
            and _ran_nginx(item.nodeid, call.when)):
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} ran nginx ({call.when}) but is not marked 'nginx': add the "
                           "helper or fixture it starts nginx with to NGINX_NAMES (or its CLI command to "
                           "NGINX_COMMANDS) in tests/conftest.py, or mark it @pytest.mark.nginx")
    return report
