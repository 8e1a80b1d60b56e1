"""``corpus log-report``: counts read from a real nginx's access log, crafted failovers, malformed input.

Expected counts come from what the test sent and what nginx answered (the statuses it received), never
from the report itself.
"""

from __future__ import annotations

import gzip
import http.client
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from nginx_server import NginxServer, free_port, private_folder
from trackfix import collection_of

from generator.base.secret_values import new_secret, write_private
from generator.cli.main import main
from generator.observe.log_report import counts, files
from generator.serving.instances.topology import free_port as port_free_on
from generator.serving.instances.topology import replica_hosts

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = ROOT / "manifest" / "conformite" / "manifest.json"
PROXY_UA = "python-httpx/0.27.0"
RealLog = tuple[Path, Counter[int], dict[str, Any]]  # the log folder, the statuses received, what was sent


def run_report(tmp_path: Path, *inputs: Path, extra: tuple[str, ...] = ()) -> tuple[int, dict[str, Any]]:
    out = tmp_path / "report.json"
    code = main(["log-report", *map(str, inputs), "--manifest", str(MANIFEST), "--json", str(out), *extra])
    return code, json.loads(out.read_text("utf-8"))


def line(time: str = "2026-11-30T05:10:00+00:00", uri: str = "/catalogue", status: int = 200,
         **fields: Any) -> str:
    record = {"time": time, "request_id": "1-1-1", "method": "GET", "uri": uri, "status": status, "bytes": 10,
              "secret_ok": status != 403, "user_agent": PROXY_UA, "request_time": 0.001, **fields}
    return json.dumps(record, separators=(",", ":"))


def write_log(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(x + "\n" for x in lines), "utf-8")
    return path


# ------------------------------------------------------------------------------------- a real nginx


@pytest.fixture(scope="module")
def real_log(tmp_path_factory: pytest.TempPathFactory) -> RealLog:
    """Requests of every kind sent to a real nginx; its access log, the statuses received, what was sent."""
    manifest = json.loads(MANIFEST.read_text("utf-8"))
    known = {e["path"] for e in manifest["resources"]}
    declared = next(e["path"] for e in manifest["resources"] if e["kind"] == "absent")
    undeclared = "/agrements/AGR-999998"
    assert undeclared not in known and collection_of(undeclared) is not None
    resource = next(e["path"] for e in manifest["resources"] if e["kind"] == "resource")
    received: Counter[int] = Counter()
    sent: dict[str, Any] = {"declared": declared, "undeclared": undeclared, "resource": resource}
    with NginxServer() as server:
        for _ in range(4):
            received[server.request(resource, headers={"User-Agent": PROXY_UA}).status] += 1
        for path in (declared, undeclared, undeclared):
            received[server.request(path, headers={"User-Agent": PROXY_UA}).status] += 1
        for _ in range(3):  # the proxy without its secret: an instrument defect
            received[server.request(resource, secret=None, headers={"User-Agent": PROXY_UA}).status] += 1
        for _ in range(2):  # a browser without the secret: not the proxy
            answer = server.request(resource, secret=None, headers={"User-Agent": "Mozilla/5.0 (X11)"})
            received[answer.status] += 1
        for path in (resource + "/", "/nope"):
            received[server.request(path).status] += 1
        # A hostile user agent: invalid UTF-8, a quote, a backslash, a control byte.
        answer = server.raw(f"GET {resource} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Challenge-Secret: "
                            f"{server.secret}\r\n".encode() + b'User-Agent: bad\xff\xfe"\\\x01ua\r\n\r\n')
        received[int(answer.split(b" ", 2)[1])] += 1
        log = server.prefix / "logs" / "access.log"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and log.read_bytes().count(b"\n") < sum(received.values()):
            time.sleep(0.2)  # the access log is buffered, flushed every second
        folder = tmp_path_factory.mktemp("logs")
        shutil.copy(log, folder / "access.log")
    return folder, received, sent


def test_real_log_counts(real_log: RealLog, tmp_path: Path) -> None:
    folder, received, sent = real_log
    assert received[403] == 5 and received[404] == 2  # nginx answered as the vhost promises
    code, report = run_report(tmp_path, folder)
    assert code == 0
    assert report["format"] == "corpus-log-report/1"
    assert report["malformed"]["count"] == 0  # the hostile user agent's line included
    total = report["total"]
    assert total["requests"] == sum(received.values())
    assert total["statuses"] == {str(k): v for k, v in sorted(received.items())}
    agents = {a["user_agent"]: (a["count"], a["proxy"]) for a in total["forbidden_by_user_agent"]}
    assert agents == {PROXY_UA: (3, True), "Mozilla/5.0 (X11)": (2, False)}
    absent = {p["path"]: (p["count"], p["declared"]) for p in total["absent"]["paths"]}
    assert absent == {sent["declared"]: (1, True), sent["undeclared"]: (2, False)}
    assert {u["uri"] for u in total["unknown"]["uris"]} == {sent["resource"] + "/", "/nope"}
    defects = [f for f in report["findings"] if f["defect"]]
    assert [(f["kind"], f["count"]) for f in defects] == [("proxy-without-secret", 3)]
    assert sum(h["requests"] for h in report["hours"]) == total["requests"]


def test_rotated_gzip_files_and_folders(real_log: RealLog, tmp_path: Path) -> None:
    folder, received, _ = real_log
    logs = tmp_path / "logs"
    shutil.copytree(folder, logs / "frontal")
    data = (folder / "access.log").read_bytes()
    (logs / "frontal" / "access.log.2.gz").write_bytes(gzip.compress(data))
    (logs / "frontal" / "access.log.1").write_bytes(data)
    (logs / "frontal" / "error.log").write_text("2026/11/30 05:00:00 [warn] not an access log\n")
    code, report = run_report(tmp_path, logs)
    assert code == 0
    names = sorted(Path(f["path"]).name for f in report["files"])
    assert names == ["access.log", "access.log.1", "access.log.2.gz"]
    assert report["total"]["requests"] == 3 * sum(received.values())
    assert report["malformed"]["count"] == 0


def test_text_table(real_log: RealLog, capsys: pytest.CaptureFixture[str]) -> None:
    folder, received, _ = real_log
    assert main(["log-report", str(folder), "--manifest", str(MANIFEST)]) == 0
    out = capsys.readouterr().out
    assert "hour (UTC)" in out and "requests" in out
    total_row = next(x for x in out.splitlines() if x.startswith("total"))
    assert total_row.split()[1] == str(sum(received.values()))
    assert f"!       3  {PROXY_UA}" in out
    assert "DEFECT" in out and "proxy-without-secret" in out


# ------------------------------------------------------------------ a real frontal over two replicas


def _https_status(state: dict[str, Any], path: str, headers: dict[str, str]) -> int:
    """One request on a fresh TLS connection, as the proxy makes them."""
    host, port = state["frontal"].removeprefix("https://").rsplit(":", 1)
    context = ssl.create_default_context(cafile=state["ca"])
    conn = http.client.HTTPSConnection(host, int(port), timeout=15, context=context)
    try:
        conn.request("GET", path, headers=headers)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def test_real_topology_failovers_and_503s(tmp_path: Path) -> None:
    """`corpus serve --replicas 2`: a replica in maintenance makes failovers, both make 503s, read back."""
    with private_folder("corpus-logreport-") as base:
        received, state = _drive_topology(base)
        code, report = run_report(tmp_path, base / "topology")
    assert code == 0 and report["malformed"]["count"] == 0
    assert report["client_roles"] == ["frontal"]
    total = report["total"]
    assert total["requests"] == sum(received.values())
    assert total["statuses"] == {str(k): v for k, v in sorted(received.items())}
    replica_addresses = {r["address"] for r in state["replicas"]}
    tries = {(t["upstream"], t.get("status")) for t in total["failovers"]["failed_tries"]}
    first = state["replicas"][0]["address"]
    assert (first, "503") in tries  # the replica in maintenance, tried then skipped
    assert {address for address, _ in tries} <= replica_addresses | {"corpus_replicas"}
    assert total["failovers"]["count"] >= 1
    defects = {f["kind"]: f["count"] for f in report["findings"] if f["defect"]}
    assert defects == {"unavailable": 3, "proxy-without-secret": 2}
    replica_statuses: Counter[int] = Counter()
    for hour in report["hours"]:
        replica_statuses.update({int(k): v for k, v in hour["replicas"]["statuses"].items()})
    assert replica_statuses[503] >= 1 and replica_statuses[200] == 10


def _drive_topology(base: Path) -> tuple[Counter[int], dict[str, Any]]:
    """Run `corpus serve --replicas 2` in ``base``, make the calls, stop it; the statuses and the state."""
    secret = new_secret()
    write_private(base / "secret", secret + "\n")
    state_file = base / "state.json"
    command = [sys.executable, "-m", "generator.cli", "serve", "--root", str(ROOT), "--no-build",
               "--prefix", str(base / "topology"), "--secret-file", str(base / "secret"), "--replicas", "2",
               "--port", str(free_port()), "--replica-port", str(port_free_on(replica_hosts(2))),
               "--workers", "1", "--state-file", str(state_file)]
    serve = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             start_new_session=True)
    received: Counter[int] = Counter()
    try:
        deadline = time.monotonic() + 60
        while not state_file.exists() and serve.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert state_file.exists(), serve.stderr.read().decode() if serve.poll() is not None else "no state file"
        state = json.loads(state_file.read_text("utf-8"))
        resource = "/catalogue"
        proxy = {"X-Challenge-Secret": secret, "User-Agent": PROXY_UA}

        def calls(n: int, headers: dict[str, str] = proxy) -> None:
            for _ in range(n):
                received[_https_status(state, resource, headers)] += 1

        calls(4)
        assert received == {200: 4}
        flags = [base / "topology" / f"replica-{i}" / "maintenance" for i in (1, 2)]
        flags[0].touch()
        time.sleep(1.5)  # nginx sees the flag through its file cache within a second
        calls(6)
        assert received == {200: 10}  # the frontal retried the other replica
        flags[1].touch()
        time.sleep(1.5)
        calls(3)
        assert received[503] == 3
        for flag in flags:
            flag.unlink()
        calls(2, {"User-Agent": PROXY_UA})  # the proxy without its secret
        assert received[403] == 2
    finally:
        if serve.poll() is None:
            os.killpg(serve.pid, signal.SIGINT)
        try:
            serve.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(serve.pid, signal.SIGKILL)
            serve.wait()
    return received, state


# ----------------------------------------------------------------------------- crafted topology lines


def test_failovers_and_roles(tmp_path: Path) -> None:
    frontal = write_log(tmp_path / "frontal-access.log", [
        line(role="frontal", upstream_addr="127.0.0.2:8081", upstream_status="200"),
        line(role="frontal", upstream_addr="127.0.0.2:8081, 127.0.0.3:8081", upstream_status="502, 200"),
        line(role="frontal", upstream_addr="127.0.0.2:8081, 127.0.0.3:8081", upstream_status="503, 200"),
        # every replica down: the frontal's own /_systeme/503
        line(role="frontal", status=503, upstream_addr="127.0.0.2:8081, 127.0.0.3:8081",
             upstream_status="502, 502"),
        line(role="frontal", status=503, upstream_addr="corpus_replicas", upstream_status="502"),
        line(time="2026-11-30T06:30:00+00:00", role="frontal", upstream_addr="-", upstream_status="-"),
    ])
    replica = write_log(tmp_path / "replica-access.log", [
        line(role="replica", upstream_addr="", upstream_status=""),
        line(role="replica", status=503, upstream_addr="", upstream_status=""),  # retried by the frontal
        line(role="replica", upstream_addr="", upstream_status=""),
        line(role="replica", upstream_addr="", upstream_status=""),
    ])
    code, report = run_report(tmp_path, frontal, replica)
    assert code == 0
    assert report["client_roles"] == ["frontal"]
    five = report["hours"][0]
    assert five["hour"] == "2026-11-30T05:00Z"
    assert five["lines_by_role"] == {"frontal": 5, "replica": 4}
    assert five["requests"] == 5 and five["unavailable"] == 2
    assert five["replicas"] == {"requests": 4, "statuses": {"200": 3, "503": 1}}
    assert five["failovers"]["count"] == 3 and five["failovers"]["recovered"] == 2
    tries = {(t["upstream"], t["status"]): t["count"] for t in five["failovers"]["failed_tries"]}
    assert tries == {("127.0.0.2:8081", "502"): 2, ("127.0.0.2:8081", "503"): 1, ("127.0.0.3:8081", "502"): 1,
                     ("corpus_replicas", "502"): 1}
    kinds = {(f["hour"], f["kind"]): f for f in report["findings"]}
    assert kinds[("2026-11-30T05:00Z", "unavailable")]["defect"] is True
    assert kinds[("2026-11-30T05:00Z", "unavailable")]["count"] == 2
    assert kinds[("2026-11-30T05:00Z", "replica-unavailable")]["defect"] is False
    assert kinds[("2026-11-30T05:00Z", "failover")]["defect"] is False
    assert report["hours"][1]["requests"] == 1 and report["hours"][1]["failovers"]["count"] == 0


def test_old_and_new_lines_together(tmp_path: Path) -> None:
    """Lines without role (the single vhost before the topology) still count as the clients' answers."""
    log = write_log(tmp_path / "access.log", [
        line(), line(status=403, user_agent="curl/8.0"),
        line(role="frontal", upstream_addr="127.0.0.2:8081", upstream_status="200"),
        line(role="replica", upstream_addr="", upstream_status=""),
    ])
    _, report = run_report(tmp_path, log)
    assert report["client_roles"] == ["frontal", "vhost"]
    assert report["total"]["requests"] == 3


def test_agent_seen_with_secret_counts_as_proxy(tmp_path: Path) -> None:
    log = write_log(tmp_path / "access.log", [
        line(user_agent="trust-layer/2.0"), line(status=403, user_agent="trust-layer/2.0"),
        line(status=403, user_agent="scanner/1.0"),
    ])
    _, report = run_report(tmp_path, log)
    defects = [f for f in report["findings"] if f["defect"]]
    assert len(defects) == 1 and "trust-layer/2.0" in defects[0]["message"]
    assert main(["log-report", str(log), "--manifest", str(MANIFEST), "--json", str(tmp_path / "r.json"),
                 "--fail-on-defect"]) == 3


def test_bad_request_to_proxy_is_a_defect(tmp_path: Path) -> None:
    log = write_log(tmp_path / "access.log",
                    [line(status=400), line(status=400, user_agent="curl/8.0", secret_ok=False)])
    _, report = run_report(tmp_path, log)
    assert [(f["kind"], f["count"]) for f in report["findings"] if f["defect"]] == [("bad-request-to-proxy", 1)]


def test_since_until_and_offsets(tmp_path: Path) -> None:
    log = write_log(tmp_path / "access.log", [
        line(time="2026-11-30T04:59:59+00:00"),
        line(time="2026-11-30T06:10:00+01:00"),  # 05:10 UTC
        line(time="2026-11-30T05:59:59+00:00"),
        line(time="2026-11-30T06:00:00+00:00"),
    ])
    _, report = run_report(tmp_path, log, extra=("--since", "2026-11-30T05:00", "--until", "2026-11-30T06:00Z"))
    assert [h["hour"] for h in report["hours"]] == ["2026-11-30T05:00Z"]
    assert report["hours"][0]["requests"] == 2
    assert report["lines_outside_period"] == 2
    assert report["since"] == "2026-11-30T05:00:00Z"


# ------------------------------------------------------------------------------------- bad input


def test_malformed_lines_reported_with_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = write_log(tmp_path / "access.log", [
        line(), "", "not json", "[1, 2]", line(status="200"), line(time="yesterday"),  # type: ignore[arg-type]
        line(user_agent=7), line(secret_ok="yes"), '{"time":"2026-11-30T05:1', line(),
    ])
    code, report = run_report(tmp_path, log)
    assert code == 0
    listed = {(Path(m["file"]).name, m["line"]) for m in report["malformed"]["listed"]}
    assert listed == {("access.log", n) for n in range(2, 10)}
    assert report["malformed"]["count"] == 8
    assert report["total"]["requests"] == 2
    reasons = " ".join(m["reason"] for m in report["malformed"]["listed"])
    assert "field status" in reasons and "field time" in reasons and "field user_agent" in reasons
    main(["log-report", str(log), "--manifest", str(MANIFEST)])
    out = capsys.readouterr().out
    assert f"{log}:3: not a JSON object" in out


def test_truncated_gzip(tmp_path: Path) -> None:
    data = gzip.compress(("\n".join([line()] * 2000) + "\n").encode())
    (tmp_path / "access.log.1.gz").write_bytes(data[: len(data) // 2])
    code, report = run_report(tmp_path, tmp_path / "access.log.1.gz")
    assert code == 0
    assert report["malformed"]["count"] == 1
    assert "gzip stream" in report["malformed"]["listed"][0]["reason"]
    assert 0 < report["total"]["requests"] < 2000


def test_unreadable_inputs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["log-report", str(tmp_path / "missing.log"), "--manifest", str(MANIFEST)]) == 1
    assert "missing.log: no such file or folder" in capsys.readouterr().err
    assert main(["log-report", str(tmp_path), "--manifest", str(MANIFEST)]) == 1  # a folder with no access log
    assert "no access log found" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exit_info:
        main(["log-report", str(tmp_path), "--since", "last tuesday"])
    assert exit_info.value.code == 2
    assert "not an ISO 8601 date-time" in capsys.readouterr().err
    log = write_log(tmp_path / "access.log", [line()])
    assert main(["log-report", str(log), "--since", "2026-12-01", "--until", "2026-11-30"]) == 2
    assert "--since must come before --until" in capsys.readouterr().err
    assert main(["log-report", str(log), "--proxy-agent", "("]) == 2
    assert "--proxy-agent '('" in capsys.readouterr().err


def test_memory_is_bounded_by_capped_counters(tmp_path: Path) -> None:
    n = counts.MAX_KEYS * 3
    log = write_log(tmp_path / "access.log", [line(uri=f"/x{i}/" + "y" * 500, status=404) for i in range(n)])
    _, report = run_report(tmp_path, log, extra=("--top", str(n)))
    uris = report["total"]["unknown"]["uris"]
    assert len(uris) == counts.MAX_KEYS + 1 and uris[-1]["uri"] == counts.OTHERS
    assert sum(u["count"] for u in uris) == n == report["total"]["unknown"]["count"]
    assert max(len(u["uri"]) for u in uris) <= counts.MAX_KEY_CHARS + 1


def test_overlong_line_and_many_malformed_lines(tmp_path: Path) -> None:
    """A file without newlines, or full of garbage, is reported, never held in memory."""
    log = tmp_path / "access.log"
    with log.open("wb") as out:
        out.write(line().encode() + b"\n")
        out.write(b"x" * (files.MAX_LINE_BYTES * 3 + 5) + b"\n")
        out.write(line().encode() + b"\n")
        out.write(b"garbage\n" * 5000)
    _, report = run_report(tmp_path, log)
    assert report["total"]["requests"] == 2
    assert report["malformed"]["count"] == 5001 == report["files"][0]["malformed"]
    listed = report["malformed"]["listed"]
    assert len(listed) == counts.MAX_MALFORMED_LISTED
    assert listed[0]["line"] == 2 and "longer than" in listed[0]["reason"]
    assert listed[1]["line"] == 4


def test_time_beyond_utc_range_is_one_malformed_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A year-1 or year-9999 time whose offset leaves Python's range is a bad line, not a traceback."""
    log = write_log(tmp_path / "access.log", [line(), line(time="0001-01-01T00:00:00+01:00"),
                                              line(time="9999-12-31T23:59:59-01:00"), line()])
    code, report = run_report(tmp_path, log)
    assert code == 0 and report["total"]["requests"] == 2
    assert [(m["line"], "outside the years" in m["reason"]) for m in report["malformed"]["listed"]] == [
        (2, True), (3, True)]
    capsys.readouterr()
    for option in ("--since", "--until"):
        with pytest.raises(SystemExit) as exit_info:
            main(["log-report", str(log), "--manifest", str(MANIFEST), option, "0001-01-01T00:00:00+14:00"])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "outside the years 1 to 9999" in err and "Traceback" not in err


def test_blank_lines_are_counted_in_runs(tmp_path: Path) -> None:
    """Empty lines are skipped a buffer at a time, not through the JSON error path one by one: a run of them
    is one entry (speed on a 2 GiB bomb is a benchmark figure, not an assertion here)."""
    log = tmp_path / "access.log.gz"
    with gzip.open(log, "wb") as out:
        out.write(line().encode() + b"\n" + b"\n" * 300_000 + b" \r\n" + line().encode() + b"\n\n")
    _, report = run_report(tmp_path, log)
    assert report["total"]["requests"] == 2
    assert report["files"][0] == {"path": str(log), "lines": 300_004, "malformed": 300_002}
    assert [(m["line"], m["reason"]) for m in report["malformed"]["listed"]] == [
        (2, "300001 empty lines from here"), (300_004, "empty line")]


def test_gzip_bomb_is_reported_and_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A gzip that expands far beyond what logs do stops being read once past the free allowance."""
    monkeypatch.setattr(files, "GZIP_RATIO_FREE", 1024 * 1024)
    log = tmp_path / "access.log.gz"
    with gzip.open(log, "wb") as out:
        out.write((line().encode() + b"\n") * 200_000)  # 33 MB of one line, which deflate packs 1000 times
    _, report = run_report(tmp_path, log)
    assert 0 < report["total"]["requests"] < 100_000
    assert [m["reason"] for m in report["malformed"]["listed"]] == [
        f"gzip expands more than {files.MAX_GZIP_RATIO} times its size: a decompression bomb, not a log; "
        "rest of the file skipped"]


def test_each_manifest_given_is_counted_in_its_own_track(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """--manifest twice: each file in the track whose référentiel it lists; a path of one track is never an
    absent of the other; a file of no track is one line naming it."""
    generique = ROOT / "manifest" / "generique" / "manifest.json"
    log = write_log(tmp_path / "access.log", [
        line(uri="/generique/produits/PRD-33077"), line(uri="/generique/produits/PRD-34038"),
        line(uri="/generique/produits/PRD-99999"), line(uri="/entites/ENT-1066"), line(uri="/nope", status=404),
    ])
    out = tmp_path / "r.json"
    assert main(["log-report", str(log), "--manifest", str(generique), "--manifest", str(MANIFEST),
                 "--json", str(out)]) == 0
    tracks = {t["piste"]: t for t in json.loads(out.read_bytes())["tracks"]}
    assert (tracks["generique"]["manifest"], tracks["conformite"]["manifest"]) == (str(generique), str(MANIFEST))
    assert [(p["path"], p["declared"]) for p in tracks["generique"]["absent"]["paths"]] == [
        ("/generique/produits/PRD-34038", True), ("/generique/produits/PRD-99999", False)]
    assert tracks["generique"]["requests"] == 3 and tracks["conformite"]["requests"] == 1
    assert tracks["conformite"]["absent"]["count"] == 0 and tracks[None]["statuses"] == {"404": 1}
    (tmp_path / "other.json").write_text(json.dumps({"format": "corpus-manifest/1", "corpus": "x", "base_url":
                                                     "https://x.test", "resources": []}))
    capsys.readouterr()
    assert main(["log-report", str(log), "--manifest", str(tmp_path / "other.json")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "other.json: lists the référentiel of no track" in err, err


def test_a_systeme_path_both_manifests_list_is_on_the_no_track_line(tmp_path: Path) -> None:
    """/_systeme/404 is in both tracks' manifests: a hit on it belongs to neither, whoever is listed first."""
    generique = ROOT / "manifest" / "generique" / "manifest.json"
    assert all("/_systeme/404" in {e["path"] for e in json.loads(m.read_bytes())["resources"]}
               for m in (generique, MANIFEST))
    log = write_log(tmp_path / "access.log",
                    [line(uri="/_systeme/404"), line(uri="/generique/produits/PRD-33077")])
    out = tmp_path / "r.json"
    assert main(["log-report", str(log), "--manifest", str(generique), "--manifest", str(MANIFEST),
                 "--json", str(out)]) == 0
    tracks = {t["piste"]: t for t in json.loads(out.read_bytes())["tracks"]}
    assert tracks["generique"]["requests"] == 1 and tracks["conformite"]["requests"] == 0
    assert tracks[None]["statuses"] == {"200": 1}
    assert tracks["generique"]["absent"]["count"] == 0


def test_a_503_answered_to_our_probes_is_no_instrument_defect(tmp_path: Path) -> None:
    """corpus verify or curl meeting a 503 proves nothing any agent hashed: only the clients' 503s are a defect."""
    log = write_log(tmp_path / "access.log", [
        line(status=503, user_agent="corpus-verify/1.0"), line(status=503, user_agent="curl/8.5.0"),
        line(status=503)])
    _, report = run_report(tmp_path, log)
    assert [(f["kind"], f["count"]) for f in report["findings"] if f["defect"]] == [("unavailable", 1)]
    log = write_log(tmp_path / "access.log", [line(status=503, user_agent="corpus-verify/1.0")])
    assert run_report(tmp_path, log)[1]["findings"] == []
