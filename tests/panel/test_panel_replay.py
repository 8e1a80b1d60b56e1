"""The panel's submissions replayed by ``corpus score`` as a third party would (spec §4.1): files in, report out.

``corpus check-season --write-panel DIR`` writes what each agent submitted; ``corpus score DIR/<agent>`` must
give, from the committed season files, the figures the season check printed for that agent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.cli.main import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def panel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("panel")
    assert main(["check-season", "--root", str(ROOT), "--write-panel", str(out)]) == 0
    # every track's season, each track's panel in a folder named after it
    assert sorted(p.name for p in out.iterdir()) == ["conformite", "generique"]
    return out / "conformite"


def replay(panel: Path, agent: str, tmp_path: Path) -> dict:
    report = tmp_path / f"{agent}.json"
    assert main(["score", str(panel / agent), "--root", str(ROOT), "--json", str(report)]) == 0
    return json.loads(report.read_text("utf-8"))


def test_every_agent_wrote_one_submission_per_task(panel: Path) -> None:
    tasks = {t["id"] for t in json.loads((ROOT / "season/conformite/taches.json").read_text("utf-8"))["taches"]}
    agents = [p for p in panel.iterdir() if p.is_dir()]
    assert len(agents) >= 20
    for agent in agents:
        assert {p.stem for p in agent.glob("*.json")} == tasks, agent.name


@pytest.mark.parametrize("agent", ["independant-termes", "independant-liens", "independant-sobre",
                                   "liens-d-abord"])
def test_an_honest_agent_replays_to_ten_out_of_ten(panel: Path, tmp_path: Path, agent: str) -> None:
    report = replay(panel, agent, tmp_path)
    assert report["reussite"] == 10 and report["overclaim"]["non_etayees"] == 0
    assert report["overclaim"]["rendues"] > 0


def test_a_403_body_replays_as_instrument_defects_out_of_the_overclaim(panel: Path, tmp_path: Path) -> None:
    report = replay(panel, "corps-403", tmp_path)
    assert report["causes"]["defaut_instrument"] > 0
    assert report["overclaim"]["non_etayees"] == 0


def test_a_wrong_value_replays_as_non_etayee_valeur(panel: Path, tmp_path: Path) -> None:
    report = replay(panel, "valeur-fausse", tmp_path)
    assert report["causes"]["valeur"] > 0
    assert report["overclaim"]["non_etayees"] == report["causes"]["valeur"]


@pytest.mark.parametrize("where", [".", "docs", "run", "season"])
def test_the_panel_is_never_written_into_the_repository(where: str, capsys: pytest.CaptureFixture[str]) -> None:
    before = sorted(p.relative_to(ROOT) for p in (ROOT / where).rglob("*")) if where != "." else None
    assert main(["check-season", "--root", str(ROOT), "--write-panel", str(ROOT / where)]) == 2
    assert "reveal the key" in capsys.readouterr().err
    if before is not None:
        assert sorted(p.relative_to(ROOT) for p in (ROOT / where).rglob("*")) == before
