"""Every rendered configuration (replica vhost, TLS frontal) passes gixy-ng, the nginx analyzer, cleanly."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from nginx_server import build_copy

from generator.base.secret_values import new_secret, write_private
from generator.serving.instances.nginx_write import render_and_write
from generator.serving.rendering.nginx_settings import Settings
from generator.serving.tls.peer_tls import PLAIN, PeerTLS
from generator.serving.tls.tls_local import make_local_tls, make_peer_tls

GIXY = Path(sys.executable).with_name("gixy")


@pytest.fixture(scope="module")
def rendered() -> Iterator[dict[str, Path]]:
    """A replica (plain, TLS, mutual TLS) and a frontal (to plain or mutual-TLS replicas), rendered from a
    snapshot of the build."""
    with build_copy("corpus-gixy-") as (root, _manifest):
        folder = root.parent
        secret = folder / "secret"
        write_private(secret, new_secret() + "\n")
        tls = make_local_tls(folder / "tls", ["127.0.0.1"])
        peer = make_peer_tls(folder / "peer", ["127.0.0.2"])
        roles = {
            "replica": Settings(root=folder / "root", prefix=folder / "replica", port=18081, secret_file=secret),
            "replica-tls": Settings(root=folder / "root", prefix=folder / "replica-tls", port=18082,
                                    secret_file=secret, tls_cert=tls.cert, tls_key=tls.key),
            "frontal": Settings(root=folder / "root", prefix=folder / "frontal", port=18443, secret_file=secret,
                                tls_cert=tls.cert, tls_key=tls.key, role="frontal",
                                upstreams=("127.0.0.2:18081", "127.0.0.3:18081")),
            "replica-mtls": Settings(root=folder / "root", prefix=folder / "replica-mtls", port=18083,
                                     secret_file=secret, tls_cert=peer.replica_cert, tls_key=peer.replica_key),
            "frontal-mtls": Settings(root=folder / "root", prefix=folder / "frontal-mtls", port=18444,
                                     secret_file=secret, tls_cert=tls.cert, tls_key=tls.key, role="frontal",
                                     upstreams=("127.0.0.2:18083",)),
        }
        links = {"replica-mtls": PeerTLS(peer.ca),
                 "frontal-mtls": PeerTLS(peer.ca, peer.client_cert, peer.client_key)}
        for name, settings in roles.items():
            render_and_write(settings, None, links.get(name, PLAIN))
        yield {name: s.nginx_conf for name, s in roles.items()}


def gixy(conf: Path) -> list[dict[str, object]]:
    result = subprocess.run([str(GIXY), "-f", "json", str(conf)], capture_output=True, text=True, check=False,
                            timeout=120)
    assert result.stdout.strip().startswith("["), result.stdout + result.stderr
    return json.loads(result.stdout)


@pytest.mark.parametrize("role", ["replica", "replica-tls", "frontal", "replica-mtls", "frontal-mtls"])
def test_rendered_configuration_has_no_gixy_finding(rendered: dict[str, Path], role: str) -> None:
    assert gixy(rendered[role]) == []


def test_gixy_does_report_what_it_checks(rendered: dict[str, Path], tmp_path: Path) -> None:
    """The analyzer runs for real: the finding this project fixed comes back when the fix is removed."""
    conf = rendered["frontal"]
    broken = conf.with_name("broken.conf")
    text = conf.read_text()
    assert "worker_rlimit_nofile" in text
    broken.write_text("\n".join(line for line in text.splitlines() if "worker_rlimit_nofile" not in line))
    try:
        findings = gixy(broken)
    finally:
        broken.unlink()
    assert any("worker_rlimit_nofile" in json.dumps(f) for f in findings), findings
