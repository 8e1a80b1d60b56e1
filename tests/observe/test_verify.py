"""`corpus verify` against a real nginx: passes on the build, fails naming every tampered resource."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trackfix as col
from nginx_server import NginxServer, build_copy

from generator.base.secret_values import write_private
from generator.cli.main import main
from generator.contract.manifest import Manifest
from generator.observe.verify import undeclared_paths


@pytest.fixture(scope="module")
def server() -> Iterator[NginxServer]:
    with NginxServer() as srv:
        yield srv


def run_verify(server: NginxServer, capsys: pytest.CaptureFixture[str], *extra: str,
               root: Path | None = None) -> tuple[int, str, str]:
    code = main(["verify", "--root", str(root or server.root), "--url", server.base_url,
                 "--secret-file", str(server.secret_file), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_verify_passes_against_the_served_build(server: NginxServer, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_verify(server, capsys, "--progress-every", "25")
    served = [e for e in server.manifest["resources"] if e["kind"] in ("resource", "absent")]
    assert code == 0, out
    assert "corpus verify: OK" in out
    checks = int(out.split("OK, ")[1].split()[0])
    assert checks >= len(served) + 5  # every body, the refusals and the undeclared absents
    assert err.count("checked,") >= len(served) // 25  # progress on stderr
    assert server.secret not in out + err


def test_verify_fails_without_the_right_secret(server: NginxServer, capsys: pytest.CaptureFixture[str]) -> None:
    wrong = server.dir / "wrong-secret"
    write_private(wrong, "not-the-secret-of-this-server\n")
    code = main(["verify", "--root", str(server.root), "--url", server.base_url, "--secret-file", str(wrong)])
    out = capsys.readouterr().out
    assert code == 1
    assert "status 403, expected 200" in out


@pytest.fixture
def tampered() -> Iterator[tuple[Path, dict[str, Any]]]:
    """A private copy of the build whose bytes will be changed (never the repository's build/)."""
    with build_copy("corpus-tamper-") as copy:
        yield copy


def test_verify_names_every_tampered_resource(tampered: tuple[Path, dict[str, Any]],
                                              capsys: pytest.CaptureFixture[str]) -> None:
    root, manifest = tampered
    resources = [e for e in manifest["resources"] if e["kind"] == "resource" and col.AGREMENTS.matches(e["path"])]
    changed, removed, reformatted = resources[0], resources[1], resources[2]
    # the replica proves its build when it starts (build_proof): the bytes change under a running one
    with NginxServer(build_root=root) as server:
        # same length, still valid JSON: only a byte-for-byte comparison sees it
        data = (root / "build/conformite" / changed["file"]).read_bytes()
        value = json.loads(data)["statut"]
        altered = data.replace(value.encode(), value[::-1].encode(), 1)
        assert altered != data and len(altered) == len(data)
        (root / "build/conformite" / changed["file"]).write_bytes(altered)
        # a missing file: nginx serves the absent template instead
        (root / "build/conformite" / removed["file"]).unlink()
        # same JSON value, other bytes: the response hash still matches, the sha256 does not
        parsed = json.loads((root / "build/conformite" / reformatted["file"]).read_bytes())
        (root / "build/conformite" / reformatted["file"]).write_bytes(json.dumps(parsed,
            ensure_ascii=False).encode())
        code, out, _ = run_verify(server, capsys, root=root)
    assert code == 1
    failed = out.strip().splitlines()[-1]
    assert failed.startswith("corpus verify: FAILED, 3 of")
    for entry in (changed, removed, reformatted):
        assert entry["path"] in failed
    assert f"DIFF {reformatted['path']}: bytes differ" in out
    assert f"DIFF {reformatted['path']}: response_hash" not in out
    assert f"DIFF {changed['path']}: response_hash" in out


def test_undeclared_paths_follow_each_collection_and_name_nothing(manifest: dict[str, Any], root: Path) -> None:
    taken = {e["path"] for e in manifest["resources"]}
    for seed in range(5):
        paths = undeclared_paths(Manifest.load(root, "manifest/conformite"), col.CONFORMITE.collections,
            random.Random(seed))
        assert paths and not set(paths) & taken
        assert all(col.collection_of(p) is not None for p in paths)
        assert len({col.collection_of(p) for p in paths}) == len(paths)
