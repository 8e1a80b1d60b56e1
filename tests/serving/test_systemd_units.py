"""``corpus render-systemd``: the units render, pass ``systemd-analyze verify``, and run what they say.

The nginx command lines of a rendered unit are executed against a prefix rendered by ``corpus
render-nginx``: a unit whose ExecStartPre could not find the prefix's config would fail only at the
first boot of a real host.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from nginx_server import build_copy, free_port, rendered_replica

from generator.base.secret_values import new_secret, write_private
from generator.cli.main import main
from generator.serving.instances.nginx_process import answers
from generator.serving.rendering.systemd_units import UnitSettings, render_unit, unit_settings

ROOT = Path(__file__).resolve().parents[2]
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
    """A replica prefix rendered by the real ``corpus render-nginx`` from a private copy of the build."""
    with rendered_replica("corpus-systemd-") as replica:
        yield replica


def test_sandbox_an_operator_expects() -> None:
    for role in ("frontal", "replica"):
        text = unit(role, "/srv/corpus/" + role)
        single = {k: v for k, v in directives(text) if k not in ("ExecStartPre", "ReadWritePaths")}
        assert single["User"] == "corpus" and single["Group"] == "corpus"
        for key, value in (("ProtectSystem", "strict"), ("PrivateTmp", "yes"), ("NoNewPrivileges", "yes"),
                           ("Restart", "on-failure"), ("ProtectHome", "yes"), ("Type", "exec"),
                           ("KillSignal", "SIGQUIT")):
            assert single[key] == value, (role, key)
        assert values(text, "ReadWritePaths") == [f"-/srv/corpus/{role}/logs", f"-/srv/corpus/{role}/tmp"]
        assert shlex.split(values(text, "ExecStartPre")[-1])[-2:] == ["-t", "-q"]
        assert shlex.split(single["ExecStart"])[-2:] == ["-g", "daemon off;"]
        reload = shlex.split(single["ExecReload"])  # corpus reload: the one that waits, as the service's user
        assert reload[:4] == ["+/usr/sbin/runuser", "-u", "corpus", "--"] and reload[5:] == [
            "reload", "--prefix", f"/srv/corpus/{role}"]
        assert "MemoryDenyWriteExecute" not in single  # pcre_jit on needs writable code pages
    frontal = unit("frontal", "/srv/corpus/frontal")
    assert values(frontal, "AmbientCapabilities") == ["CAP_NET_BIND_SERVICE"]
    replica = unit("replica", "/srv/corpus/replica")
    assert values(replica, "CapabilityBoundingSet") == [""] and not values(replica, "AmbientCapabilities")
    assert shlex.split(values(replica, "ExecStartPre")[0]) == [CORPUS, "verify-build", "--prefix",
                                                                "/srv/corpus/replica"]


def test_template_unit() -> None:
    text = unit("replica", "/srv/corpus/replica-%i")
    assert text.startswith("# corpus-replica@.service")
    assert "-p /srv/corpus/replica-%i/" in values(text, "ExecStart")[0]
    assert values(text, "ExecStartPre")[0].endswith("verify-build --prefix /srv/corpus/replica-%i")


def test_home_folders_become_read_only() -> None:
    assert values(unit("replica", "/root/corpus/replica"), "ProtectHome") == ["read-only"]
    assert values(unit("replica", "/srv/c", root="/home/ops/releases"), "ProtectHome") == ["read-only"]


@pytest.mark.parametrize(("args", "message"), [
    (["--role", "frontal", "--prefix", "/srv/corpus/frontal-%i"], "only replicas are template units"),
    (["--role", "frontal", "--prefix", "/srv/my corpus"], "--prefix '/srv/my corpus': an absolute path"),
    (["--role", "frontal", "--prefix", "srv/corpus"], "an absolute path"),
    (["--role", "frontal", "--prefix", "/srv/$HOME"], "an absolute path"),
    (["--role", "frontal", "--prefix", "/srv/c", "--user", "root"], "--user 'root': an unprivileged account"),
    (["--role", "replica", "--prefix", "/srv/c", "--root", "/srv/r w"], "--root '/srv/r w'"),
    (["--prefix", "/srv/not-rendered"], "--role frontal|replica"),
])
def test_bad_options_are_refused(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render-systemd", *args]) == 1
    captured = capsys.readouterr()
    assert message in captured.err and captured.out == ""


def test_role_and_root_read_from_the_rendered_prefix(rendered_prefix: Path, tmp_path: Path) -> None:
    assert main(["render-systemd", "--prefix", str(rendered_prefix), "--output", str(tmp_path)]) == 0
    text = (tmp_path / "corpus-replica.service").read_text("utf-8")
    assert values(text, "ExecStartPre")[0].endswith(f"verify-build --prefix {rendered_prefix}")
    assert oct((tmp_path / "corpus-replica.service").stat().st_mode & 0o777) == "0o644"


@pytest.mark.parametrize("case", ["output under a file", "unit name is a folder"])
def test_an_output_that_cannot_be_written_is_one_line(rendered_prefix: Path, tmp_path: Path, case: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    if case == "output under a file":
        output = tmp_path / "file" / "units"
        expected = f"corpus render-systemd: {output}: cannot create the folder: Not a directory\n"
    else:
        output = tmp_path / "units"
        (output / "corpus-replica.service").mkdir(parents=True)
        expected = (f"corpus render-systemd: {output / 'corpus-replica.service'}: exists and is not a "
                    "regular file\n")
    assert main(["render-systemd", "--prefix", str(rendered_prefix), "--output", str(output)]) == 1
    assert capsys.readouterr().err.endswith(expected)
    assert (tmp_path / "file").read_text() == "x"
    assert not [p for p in tmp_path.rglob("*.tmp")]


def test_unit_commands_run_against_a_rendered_prefix(rendered_prefix: Path) -> None:
    text = unit("replica", str(rendered_prefix))
    nginx_test = shlex.split(values(text, "ExecStartPre")[-1])
    result = subprocess.run(nginx_test, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    elsewhere = unit("replica", str(rendered_prefix) + "-missing")
    broken = shlex.split(values(elsewhere, "ExecStartPre")[-1])
    assert subprocess.run(broken, capture_output=True, check=False).returncode != 0


def test_corpus_commands_of_the_units(rendered_prefix: Path) -> None:
    """What systemd would run, run here: the build proof (and its refusal), start, a reload that waits, stop."""
    text = unit("replica", str(rendered_prefix))
    verify = shlex.split(values(text, "ExecStartPre")[0])
    assert subprocess.run(verify, capture_output=True, check=False).returncode == 0
    victim = next(p for p in sorted((rendered_prefix.parent / "root" / "build" / "conformite").rglob("*.json")))
    original = victim.read_bytes()
    try:
        victim.write_bytes(original.replace(b'"', b"'", 1))
        result = subprocess.run(verify, capture_output=True, text=True, check=False)
        assert result.returncode != 0 and victim.name in result.stderr
    finally:
        victim.write_bytes(original)
    port = json.loads((rendered_prefix / "conf" / "settings.json").read_text("utf-8"))["port"]
    nginx = subprocess.Popen(shlex.split(values(text, "ExecStart")[0]), start_new_session=True,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and nginx.poll() is None and not answers("127.0.0.1", port):
            time.sleep(0.05)
        reload = shlex.split(values(text, "ExecReload")[0])
        inner = reload[reload.index("--") + 1:]  # without runuser: no 'corpus' account on this machine
        result = subprocess.run(inner, capture_output=True, text=True, check=False, timeout=60)
        assert result.returncode == 0, result.stderr
        assert nginx.poll() is None
    finally:
        nginx.send_signal(signal.SIGQUIT)  # the unit's KillSignal: graceful stop
        try:
            assert nginx.wait(15) == 0
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(nginx.pid, signal.SIGKILL)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_systemd_analyze_verify(tmp_path: Path) -> None:
    """No warning at all: systemd only warns about unknown keys or bad values, and would ignore them."""
    (tmp_path / "corpus-frontal.service").write_text(unit("frontal", "/srv/corpus/frontal"), "utf-8")
    (tmp_path / "corpus-replica@.service").write_text(
        unit("replica", "/srv/corpus/replica-%i"), "utf-8")
    (tmp_path / "corpus-replica@1.service").write_text(unit("replica", "/srv/corpus/replica-%i"), "utf-8")
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


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed here")
def test_systemd_exposure_score(tmp_path: Path) -> None:
    """``systemd-analyze security``: both units at most 2.0 of 10 ("OK"); a unit without sandbox is far above."""
    units = {"corpus-frontal.service": unit("frontal", "/srv/corpus/frontal"),
             "corpus-replica@1.service": unit("replica", "/srv/corpus/replica-%i")}
    units["bare.service"] = "[Service]\nExecStart=/usr/sbin/nginx\n"
    codes = {}
    for name, text in units.items():
        (tmp_path / name).write_text(text, "utf-8")
        result = subprocess.run(["systemd-analyze", "security", "--offline=true", "--threshold=20", "--no-pager",
                                 str(tmp_path / name)], capture_output=True, text=True, check=False, timeout=60)
        codes[name] = result.returncode
    assert codes == {"corpus-frontal.service": 0, "corpus-replica@1.service": 0, "bare.service": 1}


def test_the_tls_files_of_a_mutual_tls_prefix_are_named_in_its_unit(tmp_path: Path) -> None:
    """render-systemd takes the certificate, key and private CA of the rendered prefix (or --tls-file)."""
    from generator.serving.tls.tls_local import make_peer_tls

    with build_copy("corpus-systemd-mtls-") as (release, _manifest):
        secret = release.parent / "secret"
        write_private(secret, new_secret() + "\n")
        peer = make_peer_tls(release.parent / "peer", ["127.0.0.2"])
        prefix = release.parent / "replica"
        assert main(["render-nginx", "--root", str(release), "--prefix", str(prefix), "--secret-file", str(secret),
                     "--port", str(free_port()), "--tls-cert", str(peer.replica_cert), "--tls-key",
                     str(peer.replica_key), "--peer-ca", str(peer.ca)]) == 0
        text = render_unit(unit_settings(str(prefix), nginx=NGINX, corpus=CORPUS))
        assert values(text, "AssertFileNotEmpty") == [str(p.resolve()) for p in
                                                      (peer.replica_cert, peer.replica_key, peer.ca)]
        given = render_unit(unit_settings(str(prefix), nginx=NGINX, corpus=CORPUS,
                                          tls_files=("/etc/corpus/ca.pem",)))
        assert values(given, "AssertFileNotEmpty") == ["/etc/corpus/ca.pem"]
