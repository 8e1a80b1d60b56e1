"""Recorded blind readings score 10/10 with no unsupported assertion, on every track.

Each folder ``tests/fixtures/blind/<piste>/<agent>/`` holds the claims of one agent that never saw the key, the
sources or the code: only the barème section, the statements and HTTP to a served corpus (README there). Each
claim is given an honest proof of the resource it names and scored by ``corpus score``, as a participant's
submission would be. A season change that breaks one calls for a new blind reading, never an edit of the claims.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import Ran, run_corpus
from trackfix import ROOT

from generator.contract.manifest import Manifest
from generator.reading.reader import MISSING, CorpusReader, resolve_pointer
from generator.score import make_submission
from generator.tracks.loader import track_named
from generator.tracks.model import Track

BLIND = ROOT / "tests" / "fixtures" / "blind"
READINGS = sorted((folder.parent.name, folder.name) for folder in BLIND.glob("*/*") if folder.is_dir())


def corpus(*args: str) -> Ran:
    return run_corpus(*args, "--root", str(ROOT), cwd=ROOT)


def test_every_track_has_a_recorded_blind_reading() -> None:
    assert {piste for piste, _ in READINGS} == {"conformite", "generique"}


@pytest.mark.parametrize(("piste", "agent"), READINGS)
def test_agents_that_never_saw_the_key_score_ten_out_of_ten(piste: str, agent: str, tmp_path: Path) -> None:
    track = track_named(ROOT, piste)
    manifest = Manifest.load(ROOT, track.trees.manifest)
    claims = sorted((BLIND / piste / agent).glob("*.json"))
    assert len(claims) == 10
    subs = tmp_path / "subs"  # the report is written beside, never inside the folder score reads
    subs.mkdir()
    for file in claims:
        data = json.loads(file.read_bytes())
        assert {a["resource"] for a in data["assertions"]} <= set(data["calls"]), file.name
        triples = [(a["resource"], a["field"], a["value"]) for a in data["assertions"]]
        submission = make_submission(manifest, data["task_id"], data["verdict"], triples, piste=piste)
        (subs / file.name).write_text(json.dumps(submission, ensure_ascii=False), "utf-8")
    report = tmp_path / "report.json"
    result = corpus("score", str(subs), "--json", str(report))  # the submissions' track decides
    assert result.returncode == 0, result.stderr
    scored = json.loads(report.read_bytes())
    got = (scored["piste"], scored["reussite"], scored["overclaim"]["non_etayees"])
    assert got == (piste, 10, 0), blind_reading_outdated(track, agent, claims, got)


def blind_reading_outdated(track: Track, agent: str, claims: list[Path], got: tuple[str, int, int]) -> str:
    """Why recorded blind claims stopped scoring 10/10: which served facts and expected verdicts changed under
    them, and what to do (a new blind reading; never an edit of the recorded claims)."""
    reader = CorpusReader(ROOT / track.trees.build, track)
    key = json.loads((ROOT / track.trees.season / "cle.json").read_bytes())["taches"]
    changed = []
    for file in claims:
        data = json.loads(file.read_bytes())
        for claim in data["assertions"]:
            served = resolve_pointer(reader.fetch(claim["resource"]), claim["field"])
            if served != claim["value"]:
                now = "not served" if served is MISSING else json.dumps(served, ensure_ascii=False)
                changed.append(f"{data['task_id']}: ({claim['resource']}, {claim['field']}) was "
                               f"{json.dumps(claim['value'], ensure_ascii=False)} when read, is now {now}")
        expected = key.get(data["task_id"], {}).get("verdict")
        if expected != data["verdict"]:
            changed.append(f"{data['task_id']}: the recorded verdict is {data['verdict']}, the key now "
                           f"expects {expected}")
    facts = "; ".join(changed) or "no claimed fact changed"
    return (f"blind agent {track.piste}/{agent} scores {got[1]}/10 with {got[2]} unsupported assertion(s), not "
            f"10/10 with 0: the season changed under its recorded reading ({facts}). A season change calls for "
            f"a new blind reading: an agent that never saw {track.trees.season_sources}/cle.yaml reads the new "
            f"build, and its claims replace {(BLIND / track.piste / agent).relative_to(ROOT)}/; never edit the "
            "recorded claims to match the key")


def test_an_outdated_blind_reading_names_the_changed_fact(tmp_path: Path) -> None:
    """A recorded claim whose value the corpus no longer serves is named, with what to do about it."""
    track = track_named(ROOT, "generique")
    recorded = json.loads((BLIND / "generique" / "a" / "gen-01.json").read_bytes())
    claim = recorded["assertions"][0]
    served = claim["value"]
    claim["value"] = "0.01" if served != "0.01" else "0.02"  # as if the corpus had changed since the reading
    file = tmp_path / "gen-01.json"
    file.write_text(json.dumps(recorded, ensure_ascii=False), "utf-8")
    message = blind_reading_outdated(track, "a", [file], ("generique", 9, 1))
    assert f"gen-01: ({claim['resource']}, {claim['field']}) was \"{claim['value']}\" when read, is now " \
        f"{json.dumps(served, ensure_ascii=False)}" in message, message
    assert "calls for a new blind reading" in message and "never edit the recorded claims" in message
