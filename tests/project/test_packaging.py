"""A non-editable ``pip install <checkout>``: it writes nothing into the corpus trees, and the installed
``corpus`` checks, builds, renders and serves a checkout given with ``--root`` from outside it.

The templates (``nginx/``, ``deploy/systemd/``) are package data: ``generator/templates/`` links to them, and
the wheel stores them as files, so the installed command never looks for them beside ``--root`` (a release
folder holds only build/ and manifest/). setuptools' build folder is ``.setuptools-build/`` (setup.cfg), not
``build/``, which is the corpus's frozen tree.

The fresh venv gets the dependencies from this test's own environment through a ``.pth`` line (a path line
adds the folder, not the editable install's import hook, so ``generator`` is the installed copy); the project
itself is built by pip as a user would, with build isolation.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from nginx_server import free_port, private_folder
from trackfix import copy_tracks

from generator.base.secret_values import new_secret, write_private
from generator.contract.manifest import Manifest

ROOT = Path(__file__).resolve().parents[2]
CORPUS_TREES = ("build", "manifest", "season")
PIP_TIMEOUT = 300
COMMAND_TIMEOUT = 120


def _tree_status() -> str:
    """git's view of the corpus trees, ignored and untracked files included."""
    result = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all", "--ignored", "--",
                             *CORPUS_TREES], cwd=ROOT, capture_output=True, text=True, timeout=60, check=True)
    return result.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The ``bin/`` of a fresh venv holding a non-editable install of this checkout."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs the git checkout, to compare its corpus trees before and after")
    venv = tmp_path_factory.mktemp("venv") / "v"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=COMMAND_TIMEOUT)
    site = Path(subprocess.run([str(venv / "bin" / "python"), "-c",
                                "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True, timeout=60).stdout.strip())
    (site / "deps-of-the-test-env.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", "utf-8")
    before = _tree_status()
    shutil.rmtree(ROOT / ".setuptools-build", ignore_errors=True)
    try:
        result = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", "--no-deps", str(ROOT)],
                                cwd=venv, capture_output=True, text=True, timeout=PIP_TIMEOUT, check=False)
    finally:
        shutil.rmtree(ROOT / ".setuptools-build", ignore_errors=True)  # pip's scratch: stale files would ship
    assert result.returncode == 0, result.stderr[-3000:]
    assert not (ROOT / "build/conformite/lib").exists(), "setuptools wrote its build folder into the corpus build/"
    assert _tree_status() == before, "pip install changed the corpus trees"
    yield venv / "bin"


def _run(bin_dir: Path, *args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run([str(bin_dir / "corpus"), *args], cwd=cwd, capture_output=True, text=True,
                            timeout=COMMAND_TIMEOUT, check=False, env=env)
    assert result.returncode == 0, f"corpus {' '.join(args)}: {result.stderr}"
    return result.stderr + result.stdout


def test_the_installed_package_is_not_the_checkout(installed: Path, tmp_path: Path) -> None:
    """``generator`` and its templates come from the venv, not from this checkout."""
    code = ("import generator, generator.serving.rendering.templates as t; "
            "print(generator.__file__); print(t.NGINX_TEMPLATES); print(t.SYSTEMD_TEMPLATES)")
    result = subprocess.run([str(installed / "python"), "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60, check=True)
    package, nginx, systemd = (Path(line) for line in result.stdout.splitlines())
    venv = installed.parent
    for path in (package, nginx, systemd):
        assert venv in path.parents and ROOT not in path.resolve().parents, path
    assert not nginx.is_symlink() and (nginx / "corpus.conf.j2").is_file()
    for shipped, source in ((nginx, ROOT / "nginx"), (systemd, ROOT / "deploy" / "systemd")):
        assert _files(shipped) == _files(source), f"{shipped} is not {source}"


def test_the_index_templates_are_installed(installed: Path, tmp_path: Path) -> None:
    """``corpus index`` renders its pages from the templates of the installed version (package data)."""
    code = "import generator.publish.html as h; print(h.TEMPLATES)"
    result = subprocess.run([str(installed / "python"), "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60, check=True)
    shipped = Path(result.stdout.strip())
    assert installed.parent in shipped.parents
    assert _files(shipped) == _files(ROOT / "generator" / "templates" / "index") != {}


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*.j2")}


@pytest.fixture
def copy() -> Iterator[Path]:
    """A checkout copy without build/ and manifest/ (traversable by nginx's workers), and free space beside."""
    with private_folder("corpus-installed-") as folder:
        root = folder / "root"
        root.mkdir()
        os.chmod(root, 0o755)
        shutil.copytree(ROOT / "corpus_src/conformite", root / "corpus_src/conformite")
        copy_tracks(root)
        yield root


def test_installed_corpus_checks_builds_renders_and_serves(installed: Path, copy: Path) -> None:
    outside = copy.parent
    assert "0 error(s)" in _run(installed, "check", "--root", str(ROOT), cwd=outside)
    _run(installed, "build", "--root", str(copy), cwd=outside)
    # the same sources give the same bytes as this checkout's build
    assert (copy / "manifest/conformite/manifest.json").read_bytes() == (
        ROOT / "manifest/conformite/manifest.json").read_bytes()
    secret = new_secret()
    secret_file = outside / "secrets"
    write_private(secret_file, secret + "\n")
    prefix = outside / "prefix"
    _run(installed, "render-nginx", "--plain-replica", "--root", str(copy), "--prefix", str(prefix),
         "--secret-file", str(secret_file), "--port", str(free_port()), cwd=outside)
    assert str(copy / "build/conformite") in (prefix / "conf" / "corpus.conf").read_text("utf-8")
    units = outside / "units"
    _run(installed, "render-systemd", "--prefix", str(prefix), "--output", str(units), cwd=outside)
    assert (units / "corpus-replica.service").is_file()

    port = free_port()
    server = subprocess.Popen([str(installed / "corpus"), "serve", "--root", str(copy), "--port", str(port),
                               "--secret-file", str(secret_file)], cwd=outside, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, start_new_session=True)
    entry = Manifest.load(copy, "manifest/conformite").of_kind("resource")[0]
    try:
        status, body = _get_when_up(port, entry.path, secret, server)
        assert status == 200
        assert body == (copy / "build/conformite" / entry.file).read_bytes()
        assert _get_when_up(port, entry.path, new_secret(), server)[0] == 403
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=30)
    assert server.returncode == 0, server.stderr.read().decode() if server.stderr else ""


def _get_when_up(port: int, path: str, secret: str, server: subprocess.Popen[bytes],
                 timeout: float = 30.0) -> tuple[int, bytes]:
    """``GET path`` once nginx answers on ``port`` (polled for at most ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while True:
        if server.poll() is not None:
            raise AssertionError(f"corpus serve exited: {server.stderr.read().decode() if server.stderr else ''}")
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            connection.request("GET", path, headers={"X-Challenge-Secret": secret})
            response = connection.getresponse()
            return response.status, response.read()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
        finally:
            connection.close()
