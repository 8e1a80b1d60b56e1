"""``corpus index`` publishes the same bytes as before issue 43's changes (the season read once, participants
on several processes, proofs judged as each participant is scored, an honest 3.1 proof in one pass, orjson),
and the same bytes whatever the number of processes.

The season is ``tests/fixtures/close_golden/`` (``tests/close_golden.py``): a frozen checkout anchored in 3.1,
ten registrations, every kind of proof the scorer names. ``expected.json`` holds the SHA-256 of each file the
code published before the change; besides, what each participant was made to show is checked here as it was
made (the causes, the pending task, the replaced and late submissions, the merged DID), not as any code
computes it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_corpus
from close_golden import BUNDLE, EXPECTED, digests, lay_out

from generator.cli.main import main

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command")


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    folder = tmp_path_factory.mktemp("golden")
    return folder, lay_out(json.loads(BUNDLE.read_text("utf-8")), folder / "season")


def _publish(args: list[str], out: Path, jobs: int) -> dict[str, str]:
    assert main([*args, "--out", str(out), "--jobs", str(jobs)]) == 0
    return digests(out / "conformite")


@pytest.fixture(scope="module")
def published(season: tuple[Path, list[str]]) -> dict[int, Path]:
    folder, args = season
    out = {jobs: folder / f"out-{jobs}" for jobs in (1, 2)}
    for jobs, place in out.items():
        assert main([*args, "--out", str(place), "--jobs", str(jobs)]) == 0
    return {jobs: place / "conformite" for jobs, place in out.items()}


def test_the_bytes_are_those_the_code_published_before(published: dict[int, Path]) -> None:
    expected = json.loads(EXPECTED.read_text("utf-8"))
    for folder in published.values():
        found = digests(folder)
        assert sorted(found) == sorted(expected)
        assert [name for name in expected if found[name] != expected[name]] == []


def test_one_or_two_processes_write_the_same_bytes(published: dict[int, Path]) -> None:
    one, two = (sorted(p.relative_to(published[n]) for p in published[n].rglob("*")) for n in (1, 2))
    assert one == two
    assert all((published[1] / p).read_bytes() == (published[2] / p).read_bytes() for p in one
               if (published[1] / p).is_file())


def _report(published: dict[int, Path], slug: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads((published[2] / "rapports" / f"{slug}.json").read_text("utf-8"))
    return report


def test_each_participant_shows_what_it_was_made_to_show(published: dict[int, Path]) -> None:
    def causes(slug: str) -> dict[str, int]:
        return {c: n for c, n in _report(published, slug)["score"]["causes"].items() if n}

    assert causes("agent-epreuves") == {"preuve_invalide": 2}  # a flipped commitment, a wrong nonce
    assert causes("agent-trois-zero") == {"identite_non_liee": 4}  # a 3.0 proof, another DID's
    assert causes("agent-emprunteur") == {"identite_non_liee": 2, "preuve_invalide": 1}  # borrowed, missing
    assert causes("agent-douze") == {"preuve_invalide": 2}  # stamped after the close
    for honest in ("run-de-reference", "agent-honnete"):
        assert causes(honest) == {} and _report(published, honest)["score"]["reussite"] == 2
    waiting = _report(published, "agent-attente")
    assert waiting["score"]["en_attente"] == ["conf-01"] and len(waiting["score"]["preuves"]["incidents"]) == 2
    assert "no --rekor-key is pinned" in waiting["score"]["preuves"]["non_verifie"][0]
    assert [t["statut"] for t in _report(published, "agent-defauts")["taches"]] == ["rejetee_entree",
                                                                                    "rejetee_cloture"]
    replacing = _report(published, "agent-remplacant")
    assert (len(replacing["remplacees"]), len(replacing["hors_delai"])) == (1, 1)
    assert [m["agent"] for m in _report(published, "agent-honnete")["fusionnes"]] == ["Agent Lié"]
    index = json.loads((published[2] / "index.json").read_text("utf-8"))
    assert index["gel"]["statut"] == "verifie" and index["conditions_1_2"] == "verifiees"


def _copy(season: tuple[Path, list[str]], tmp: Path) -> list[str]:
    """The season's arguments with its proofs folder copied to ``tmp`` (to spoil it)."""
    _, args = season
    at = args.index("--proofs") + 1
    shutil.copytree(args[at], tmp / "proofs")
    return [*args[:at], str(tmp / "proofs"), *args[at + 1:]]


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_unusable_proof_file_is_named_first_in_name_order_and_nothing_is_written(
        season: tuple[Path, list[str]], tmp_path: Path, jobs: int) -> None:
    """A file no submission cites is read too; of two, the first in name order is named, as corpus score
    names it, whichever process met one first."""
    args = _copy(season, tmp_path)
    names = sorted(p.name for p in (tmp_path / "proofs").iterdir())
    (tmp_path / "proofs" / names[-1]).write_text('{"proof_id": "x", "proof_id": "y"}', "utf-8")
    (tmp_path / "proofs" / "prf_20261205_999999_ffffff.json").write_text("{", "utf-8")
    (tmp_path / "proofs" / names[3]).write_text("[]", "utf-8")
    ran = run_corpus(*args, "--out", str(tmp_path / "out"), "--jobs", str(jobs))
    assert ran.returncode == 1 and ran.stderr.count("\n") == 1
    assert names[3] in ran.stderr and not (tmp_path / "out").exists()


def test_the_bound_on_submission_files_follows_the_registrations(season: tuple[Path, list[str]],
                                                                tmp_path: Path) -> None:
    """One registration of two tasks: 40 files at most (each task submitted 20 times), the 41st refused before
    any is read, the message saying the bound and why; 40 are read (and refused here for another reason)."""
    _, args = season
    at, sub = args.index("--registrations") + 1, args.index("--submissions") + 1
    registrations = json.loads(Path(args[at]).read_text("utf-8"))
    registrations["participants"] = registrations["participants"][:1]
    (tmp_path / "inscriptions").mkdir()
    one = tmp_path / "inscriptions" / "one.json"
    one.write_text(json.dumps(registrations), "utf-8")
    record = next(Path(args[sub]).rglob("*.json")).read_bytes()
    many = tmp_path / "many"
    many.mkdir()
    for n in range(41):
        (many / f"{n:03d}.json").write_bytes(record)
    more = [*args[:at], str(one), *args[at + 1:]]
    more[sub] = str(many)
    ran = run_corpus(*more, "--out", str(tmp_path / "out"))
    assert ran.returncode == 1 and "more than 40 files below it" in ran.stderr
    assert "1 registration(s) × 2 task(s) × 20 submissions of a task at most" in ran.stderr
    (many / "040.json").unlink()
    ran = run_corpus(*more, "--out", str(tmp_path / "out"))
    assert ran.returncode == 1 and "more than 40" not in ran.stderr
    assert not (tmp_path / "out").exists()
