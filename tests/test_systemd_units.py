"""``corpus render-systemd``: the units render, pass ``systemd-analyze verify``, and run what they say.

The nginx command lines of a rendered unit are executed against a prefix rendered by ``corpus
render-nginx``: a unit whose ExecStartPre could not find the prefix's config would fail only at the
first boot of a real host.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from generator.cli import main
from generator.secret_values import new_secret, write_private
from generator.systemd_units import UnitSettings, render_unit

ROOT = Path(__file__).resolve().parent.parent
CORPUS = str(Path(sys.executable).with_name("corpus"))
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def directives(text: str) -> list[tuple[str, str]]:
    """(key, value) of every directive line of a unit, comments and section headers left out."""
    found = []
    for raw in text.splitlines():
        if raw and not raw.startswith(("#", "[")):
            key, _, value = raw.partition("=")
            found.append((key, value))
    return found


def values(text: str, key: str) -> list[str]:
    return [v for k, v in directives(text) if k == key]


def unit(role: str, prefix: str, **kw: str) -> str:
    return render_unit(UnitSettings(role=role, prefix=prefix, nginx=NGINX, corpus=CORPUS, **kw))


@pytest.fixture(scope="module")
def rendered_prefix() -> Iterator[Path]:
    """A replica prefix rendered by the real ``corpus render-nginx`` (world-traversable, for root runs)."""
    folder = Path(tempfile.mkdtemp(prefix="corpus-systemd-"))
    os.chmod(folder, 0o755)
    try:
        secret = folder / "secret"
        write_private(secret, new_secret() + "\n")
        code = main(["render-nginx", "--root", str(ROOT), "--prefix", str(folder / "replica"),
                     "--secret-file", str(secret), "--port", "18081"])
        assert code == 0
        yield folder / "replica"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_sandbox_an_operator_expects() -> None:
    for role in ("frontal", "replica"):
        text = unit(role, "/srv/corpus/" + role, **({"root": "/srv/corpus/current"} if role == "replica" else {}))
        single = {k: v for k, v in directives(text) if k not in ("ExecStartPre", "ReadWritePaths")}
        assert single["User"] == "corpus" and single["Group"] == "corpus"
        for key, value in (("ProtectSystem", "strict"), ("PrivateTmp", "yes"), ("NoNewPrivileges", "yes"),
                           ("Restart", "on-failure"), ("ProtectHome", "yes"), ("Type", "exec"),
                           ("KillSignal", "SIGQUIT")):
            assert single[key] == value, (role, key)
        assert values(text, "ReadWritePaths") == [f"-/srv/corpus/{role}/logs", f"-/srv/corpus/{role}/tmp"]
        assert shlex.split(values(text, "ExecStartPre")[-1])[-2:] == ["-t", "-q"]
        assert shlex.split(single["ExecStart"])[-2:] == ["-g", "daemon off;"]
        assert "reload" in shlex.split(single["ExecReload"])  # through corpus: the reload that waits
        assert "MemoryDenyWriteExecute" not in single  # pcre_jit on needs writable code pages
    frontal = unit("frontal", "/srv/corpus/frontal")
    assert values(frontal, "AmbientCapabilities") == ["CAP_NET_BIND_SERVICE"]
    replica = unit("replica", "/srv/corpus/replica", root="/srv/corpus/current")
    assert values(replica, "CapabilityBoundingSet") == [""] and not values(replica, "AmbientCapabilities")
    verify = shlex.split(values(replica, "ExecStartPre")[0])
    assert verify[0] == CORPUS and "/srv/corpus/current" in verify


def test_template_unit_and_pinned_hash() -> None:
    text = unit("replica", "/srv/corpus/replica-%i", root="/srv/corpus/current", expect_manifest_hash="a" * 64)
    assert text.startswith("# corpus-replica@.service")
    assert "-p /srv/corpus/replica-%i/" in values(text, "ExecStart")[0]
    assert values(text, "ExecStartPre")[0].endswith("--expect-manifest-hash " + "a" * 64)


def test_home_folders_become_read_only() -> None:
    text = unit("replica", "/root/corpus/replica", root="/root/corpus/current")
    assert values(text, "ProtectHome") == ["read-only"]


@pytest.mark.parametrize(("args", "message"), [
    (["--role", "frontal", "--prefix", "/srv/corpus/frontal-%i"], "only replicas are template units"),
    (["--role", "replica", "--prefix", "/srv/corpus/replica"], "a replica needs --root"),
    (["--role", "frontal", "--prefix", "/srv/my corpus"], "--prefix '/srv/my corpus': an absolute path"),
    (["--role", "frontal", "--prefix", "srv/corpus"], "an absolute path"),
    (["--role", "frontal", "--prefix", "/srv/$HOME"], "an absolute path"),
    (["--role", "frontal", "--prefix", "/srv/c", "--user", "root"], "--user 'root': an unprivileged account"),
    (["--role", "replica", "--prefix", "/srv/c", "--root", "/srv/r", "--expect-manifest-hash", "abc"],
     "64 lower-case hex digits"),
    (["--prefix", "/srv/not-rendered"], "--role frontal|replica"),
])
def test_bad_options_are_refused(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render-systemd", *args]) == 1
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_role_and_root_read_from_the_rendered_prefix(rendered_prefix: Path, tmp_path: Path) -> None:
    assert main(["render-systemd", "--prefix", str(rendered_prefix), "--output", str(tmp_path)]) == 0
    text = (tmp_path / "corpus-replica.service").read_text("utf-8")
    assert f"--root {ROOT}" in values(text, "ExecStartPre")[0]
    assert oct((tmp_path / "corpus-replica.service").stat().st_mode & 0o777) == "0o644"


def test_unit_commands_run_against_a_rendered_prefix(rendered_prefix: Path) -> None:
    text = unit("replica", str(rendered_prefix), root=str(ROOT))
    nginx_test = shlex.split(values(text, "ExecStartPre")[-1])
    result = subprocess.run(nginx_test, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    elsewhere = unit("replica", str(rendered_prefix) + "-missing", root=str(ROOT))
    broken = shlex.split(values(elsewhere, "ExecStartPre")[-1])
    assert subprocess.run(broken, capture_output=True, check=False).returncode != 0


def test_build_verification_command(tmp_path: Path) -> None:
    """The replica's ExecStartPre proof accepts the committed build and refuses a tampered copy."""
    if "verify-build" not in subprocess.run([CORPUS, "--help"], capture_output=True, text=True).stdout:
        pytest.skip("no 'corpus verify-build' command on this branch yet (issue 10, item 2)")
    good = shlex.split(values(unit("replica", "/srv/c", root=str(ROOT)), "ExecStartPre")[0])
    assert subprocess.run(good, capture_output=True, check=False).returncode == 0
    copy = tmp_path / "release"
    shutil.copytree(ROOT / "build", copy / "build")
    shutil.copytree(ROOT / "manifest", copy / "manifest")
    victim = next(p for p in sorted((copy / "build").rglob("*.json")) if "_systeme" not in str(p))
    victim.write_bytes(victim.read_bytes().replace(b'"', b"'", 1))
    bad = shlex.split(values(unit("replica", "/srv/c", root=str(copy)), "ExecStartPre")[0])
    result = subprocess.run(bad, capture_output=True, text=True, check=False)
    assert result.returncode != 0 and victim.name in result.stderr


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_systemd_analyze_verify(tmp_path: Path) -> None:
    """No warning at all: systemd only warns about unknown keys or bad values, and would ignore them."""
    (tmp_path / "corpus-frontal.service").write_text(unit("frontal", "/srv/corpus/frontal"), "utf-8")
    (tmp_path / "corpus-replica@.service").write_text(
        unit("replica", "/srv/corpus/replica-%i", root="/srv/corpus/current"), "utf-8")
    (tmp_path / "corpus-replica@1.service").write_text(
        unit("replica", "/srv/corpus/replica-%i", root="/srv/corpus/current"), "utf-8")
    for name in ("corpus-frontal.service", "corpus-replica@1.service"):
        result = subprocess.run(["systemd-analyze", "verify", "--man=no", str(tmp_path / name)],
                                capture_output=True, text=True, check=False, timeout=60)
        assert result.returncode == 0, result.stderr
        assert str(tmp_path) not in result.stderr and "Unknown" not in result.stderr, result.stderr
    # The check can fail: a unit systemd would half-ignore is reported.
    (tmp_path / "broken.service").write_text(unit("frontal", "/srv/corpus/frontal").replace(
        "ProtectSystem=strict", "ProtectSystem=stricter"), "utf-8")
    result = subprocess.run(["systemd-analyze", "verify", "--man=no", str(tmp_path / "broken.service")],
                            capture_output=True, text=True, check=False, timeout=60)
    assert "ProtectSystem" in result.stderr or "protect system" in result.stderr
