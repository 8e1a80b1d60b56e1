"""The ``nginx`` and ``slow`` markers (tests/conftest.py): set from what a test uses; ``nginx`` is proved
complete by the guard.

``make test-fast`` runs ``pytest -m "not nginx"``: it is only as good as the marker. These tests show that
a test reaching nginx through a helper, a fixture or the CLI is marked without anyone writing the mark,
that a pure test is not, and that a test running nginx some other way fails under the guard instead of
slipping into the fast selection.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import conftest
import pytest
from nginx_server import NginxServer

TESTS = Path(__file__).resolve().parents[1]


# -- the static half: what is marked ---------------------------------------------------------------------


def _helper_starting_nginx() -> None:
    with NginxServer():
        pass


def _helper_calling_the_helper() -> None:
    _helper_starting_nginx()


def _cli_serve() -> None:
    from generator.cli.main import main

    main(["serve", "--no-build"])


def _pure() -> int:
    return sum(range(3))


@pytest.mark.parametrize("func", [_helper_starting_nginx, _helper_calling_the_helper, _cli_serve,
                                  lambda: [NginxServer() for _ in range(1)]])
def test_a_way_to_nginx_is_found_through_helpers(func: object) -> None:
    assert conftest.runs_nginx(func)  # type: ignore[arg-type]


def test_a_pure_function_is_not_taken_for_an_nginx_one() -> None:
    assert not conftest.runs_nginx(_pure)
    assert not conftest.runs_nginx(test_a_pure_function_is_not_taken_for_an_nginx_one)


def _runs_dot() -> None:
    subprocess.run(["dot", "-V"], check=False)


def test_slow_is_a_real_process_other_than_nginx_too() -> None:
    assert conftest.starts_a_process(_runs_dot) and not conftest.runs_nginx(_runs_dot)
    assert conftest.starts_a_process(_cli_serve) is False  # in-process main(): nginx, but no other process
    assert not conftest.starts_a_process(_pure)


def test_the_marker_is_registered_and_strict(pytestconfig: pytest.Config) -> None:
    """A typo (``@pytest.mark.ngnix``) is an error, not a silently unmarked test."""
    markers = pytestconfig.getini("markers")
    assert any(line.startswith("nginx:") for line in markers) and any(line.startswith("slow:") for line in markers)
    assert pytestconfig.option.strict_markers or "--strict-markers" in pytestconfig.getini("addopts")


def test_this_session_marked_the_known_nginx_tests(request: pytest.FixtureRequest) -> None:
    """Spot checks on the real collection: a module-fixture user, a CLI user, and pure modules."""
    def of(module: str) -> list[pytest.Item]:
        return [item for item in request.session.items if item.nodeid.startswith(f"tests/{module}::")]

    nginx_modules = ("serving/test_vhost_http.py", "serving/test_vhost_raw.py")
    pure_modules = ("contract/test_hashing.py", "score/test_score.py")
    if not any(of(m) for m in nginx_modules + pure_modules):
        pytest.skip("none of the spot-checked modules is collected in this run")
    for module in nginx_modules:
        assert all(item.get_closest_marker("nginx") for item in of(module)), module
    for module in pure_modules:
        assert not any(item.get_closest_marker("nginx") for item in of(module)), module


# -- the dynamic half: the guard -------------------------------------------------------------------------

CASES = '''
import subprocess

import pytest
from nginx_server import NginxServer


def test_runs_nginx_unseen():
    subprocess.run(["nginx", "-v"], check=True, capture_output=True)


@pytest.mark.nginx
def test_runs_nginx_marked():
    subprocess.run(["nginx", "-v"], check=True, capture_output=True)


def test_pure():
    assert sum(range(3)) == 3


def test_would_start_a_server():
    with NginxServer() as server:
        assert server.request("/catalogue").status == 200
'''


@pytest.fixture
def cases(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "test_cases.py").write_text(textwrap.dedent(CASES), "utf-8")
    yield tmp_path


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A separate pytest on ``folder`` with tests/conftest.py as a plugin (its own guard, its own PATH)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PROVEIT_NGINX_GUARD"))}
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), str(TESTS.parent)])
    outer = os.environ.get("PROVEIT_NGINX_GUARD_LOG")  # this session's shim: the inner run makes its own
    if outer:
        env["PATH"] = os.pathsep.join(p for p in env["PATH"].split(os.pathsep) if p != str(Path(outer).parent))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider",
                           "-q", "--rootdir", str(folder), "-c", os.devnull, *args, str(folder)],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False)


def test_not_nginx_deselects_the_server_test_and_keeps_the_others(cases: Path) -> None:
    result = _pytest(cases, "--collect-only", "-m", "not nginx")
    out = result.stdout
    assert "test_would_start_a_server" not in out and "test_runs_nginx_marked" not in out, out
    assert "test_pure" in out and "test_runs_nginx_unseen" in out, out  # unseen: only the guard finds it


@pytest.mark.nginx
@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one process", "two xdist workers (make test)"])
def test_the_guard_fails_a_test_that_runs_nginx_unmarked(cases: Path, workers: tuple[str, ...]) -> None:
    """Under pytest-xdist each worker inherits the shim on PATH and the log, and judges its own tests."""
    result = _pytest(cases, *workers, "-m", "not nginx")
    out = result.stdout + result.stderr
    assert result.returncode == 1, out
    assert "test_cases.py::test_runs_nginx_unseen ran nginx (call) but is not marked 'nginx'" in out, out
    # the two nginx tests never ran (xdist's summary does not count the deselected)
    assert "1 failed, 1 passed" + ("" if workers else ", 2 deselected") in out, out
