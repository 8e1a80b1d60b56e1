"""The benchmark scripts still run, on tiny inputs: a refactor broke bench_score once, unseen by the suite.

No figure is asserted (speed is shown by the benchmarks' own output, never by a timed test); each script
must end with exit 0 and print the line that carries its figure. The frontal and vhost benchmarks are
left out: they need minutes of wrk load by design; the release one runs a small topology (nginx).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("script", "args", "figure"), [
    ("bench_score.py", ["--submissions", "60"], "submissions/s"),
    ("bench_log_report.py", ["--lines", "500"], "lines/s"),
    ("bench_build.py", ["--entities", "40", "--small", "0", "--repeat", "1"], "check + build"),
    ("bench_index.py", ["--participants", "3"], "participants/s"),
    ("season_lures_2.py", [], "everything shown holds"),  # bars/season-lures-2
    pytest.param("close_at_scale.py", ["--participants", "9", "--large", "0", "--repeat", "1"],
                 "output bytes with 1 and 2 processes: identical",  # bars/close-at-scale
                 marks=pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl (test authority)")),
    ("close_hostile.py", [], "cases ok"),  # bars/close-hostile: exit 0 only when every case is ok
    pytest.param("bench_release.py", ["--rounds", "1", "--threads", "2"], "install under load",
                 marks=pytest.mark.nginx),  # a real topology on loopback, a few seconds
    pytest.param("bench_tls_checks.py", ["--rounds", "2", "--starts", "1"], "launch to state file",
                 marks=pytest.mark.nginx),  # one corpus serve --replicas 1, a few seconds
])
def test_benchmark_runs(script: str, args: list[str], figure: str) -> None:
    result = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    assert figure in result.stdout
