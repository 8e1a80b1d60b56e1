"""Both tracks served from the checkout's layout: every body of both manifests byte for byte, then
our own probes (corpus verify, the serve banner's curl lines) and a log report that counts each path in its
own track, marks each track's declared absents, and finds nothing to report (--fail-on-defect: exit 0)."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_run import Ran, run_corpus
from nginx_server import NginxServer, private_folder
from trackfix import ROOT, copy_tracks

from generator.cli.main import main

# The layout docs/tracks.md gives, written out here: each track's trees are <kind>/<piste>.
TREES = {"conformite": ("build/conformite", "manifest/conformite"),
         "generique": ("build/generique", "manifest/generique")}
CURL = shutil.which("curl")


def corpus(*args: str) -> Ran:
    return run_corpus(*args)


def _lines(log: Path) -> int:
    return log.read_bytes().count(b"\n") if log.exists() else 0


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, dict], Path, str]]:
    """Serve a copy of both tracks' trees; fetch every body of both manifests, run corpus verify and the
    banner's two curl lines; return the root, the manifests, the access log (copied) and verify's output."""
    with private_folder("corpus-two-tracks-") as folder:
        root = folder / "served"
        for build, manifest in TREES.values():
            shutil.copytree(ROOT / build, root / build)
            shutil.copytree(ROOT / manifest, root / manifest)
        copy_tracks(root, tracks=tuple(TREES))
        root.chmod(0o755)
        manifests = {piste: json.loads((root / manifest / "manifest.json").read_bytes())
                     for piste, (_build, manifest) in TREES.items()}
        mismatched = []
        with NginxServer(build_root=root) as server:
            sent = 0
            for piste, manifest in manifests.items():
                build = root / TREES[piste][0]
                for entry in manifest["resources"]:
                    if entry["kind"] == "systeme":
                        continue  # the error bodies: corpus verify below checks each one as it is answered
                    answer = server.request(entry["path"])
                    sent += 1
                    data = (build / entry["file"]).read_bytes()
                    if (answer.status, answer.body) != (200, data) or \
                            hashlib.sha256(answer.body).hexdigest() != entry["sha256"]:
                        mismatched.append(entry["path"])
            verified = corpus("verify", "--root", str(root), "--url", server.base_url, "--secret-file",
                              str(server.secret_file))
            sample = f"{server.base_url}/generique/produits/PRD-33077"
            if CURL:  # the banner's lines as printed: curl's own default User-Agent
                header = f"X-Challenge-Secret: {server.secret}"
                subprocess.run([CURL, "-s", "-o", "/dev/null", "-H", header, sample], timeout=30, check=True)
                subprocess.run([CURL, "-s", "-o", "/dev/null", sample], timeout=30, check=True)
            else:
                server.request("/generique/produits/PRD-33077", headers={"User-Agent": "curl/8.5.0"})
                server.request("/generique/produits/PRD-33077", secret=None, headers={"User-Agent": "curl/8.5.0"})
            log = server.prefix / "logs" / "access.log"
            deadline, seen = time.monotonic() + 15, -1
            while time.monotonic() < deadline and (_lines(log) < sent + 2 or _lines(log) != seen):
                seen = _lines(log)
                time.sleep(1.2)  # the access log is buffered, flushed every second
            shutil.copy(log, folder / "access.log")
        assert mismatched == []
        yield root, manifests, folder / "access.log", verified.stdout + verified.stderr


def test_every_body_of_both_manifests_is_served_byte_for_byte_and_verify_agrees(served) -> None:
    _root, manifests, _log, verified = served
    assert all(sum(e["kind"] == "resource" for e in m["resources"]) > 30 for m in manifests.values())
    assert "corpus verify (conformite): OK" in verified and "corpus verify (generique): OK" in verified, verified


def test_the_log_report_counts_each_path_in_its_own_track_and_reports_our_probes_apart(
        served, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, manifests, log, _verified = served
    out = tmp_path / "report.json"
    assert main(["log-report", str(log), "--root", str(root), "--json", str(out), "--fail-on-defect"]) == 0
    report = json.loads(out.read_bytes())
    assert report["findings"] == []
    tracks = {t["piste"]: t for t in report["tracks"]}
    for piste, manifest in manifests.items():
        declared = sorted(e["path"] for e in manifest["resources"] if e["kind"] == "absent")
        served_paths = [e["path"] for e in manifest["resources"] if e["kind"] == "resource"]
        track = tracks[piste]
        # each body was fetched once by the test (corpus verify and curl are probes, counted apart)
        assert track["requests"] == len(served_paths) + len(declared)
        assert track["statuses"] == {"200": len(served_paths) + len(declared)}
        assert track["absent"]["count"] == len(declared)  # no served resource counted as absent
        assert [(p["path"], p["declared"]) for p in track["absent"]["paths"]] == [(p, True) for p in declared]
        assert track["declared_absent"] == [{"path": p, "asked": 1} for p in declared]
    assert tracks["generique"]["declared_absent"] == [{"path": "/generique/produits/PRD-34038", "asked": 1}]
    agents = {json.loads(x)["user_agent"].split("/")[0] for x in log.read_text("utf-8").splitlines()}
    assert "corpus-verify" in agents and "python-requests" not in agents  # verify says who it is
    probes = report["total"]["probes"]
    assert probes["count"] > 100 and probes["statuses"]["403"] >= 2, probes  # verify's no-secret checks, curl's
    assert report["total"]["forbidden_by_user_agent"] == []
    capsys.readouterr()
    assert main(["log-report", str(log), "--root", str(root), "--fail-on-defect"]) == 0
    text = capsys.readouterr().out
    assert "findings: none" in text and "proxy-without-secret" not in text
    assert f"probes: {probes['count']} call(s) of corpus verify and curl" in text
    assert "track generique (" in text and "/generique/produits/PRD-34038 * (asked 1)" in text
