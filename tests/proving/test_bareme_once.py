"""The barème is kept once: the section file is the truth, and ``check-season`` holds ``track.yaml``'s copy of
its SHA-256 and of its bounds table against it, naming the file to edit.

Each case edits one copy in a scratch checkout of a track (the definition and the section are copied, the
paths read from the Track) and asserts the one line ``check-season``'s rule prints.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest
from cli_run import run_corpus
from trackfix import ROOT, copy_tracks

from generator.proving.checks import check_bareme
from generator.tracks.loader import TRACKS_DIR, load_track, track_named

PISTES = ("conformite", "generique")


def scratch(tmp_path: Path, piste: str) -> Path:
    copy_tracks(tmp_path, tracks=(piste,))
    return tmp_path


def lines(root: Path, piste: str) -> list[str]:
    track = load_track(root / TRACKS_DIR / piste / "track.yaml")
    return [str(p) for p in check_bareme(root, track)]


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), "utf-8")


def line_of(path: Path, needle: str) -> int:
    return next(i for i, line in enumerate(path.read_text("utf-8").splitlines(), 1) if needle in line)


@pytest.mark.parametrize("piste", PISTES)
def test_the_committed_bareme_agrees_with_its_track(piste: str) -> None:
    assert lines(ROOT, piste) == []


@pytest.mark.parametrize("piste", PISTES)
def test_a_section_edited_without_its_sha256_names_track_yaml(piste: str, tmp_path: Path) -> None:
    root = scratch(tmp_path, piste)
    bareme = track_named(root, piste).bareme
    section = root / bareme.file
    section.write_bytes(section.read_bytes() + b"\nUne ligne de plus.\n")
    digest = hashlib.sha256(section.read_bytes()).hexdigest()
    definition = root / TRACKS_DIR / piste / "track.yaml"
    assert lines(root, piste) == [
        f"tracks/{piste}/track.yaml:{line_of(definition, '  sha256: ')}:3: bareme.sha256: {bareme.file} hashes to "
        f"{digest}, not to the published {bareme.sha256}: restore {bareme.file}, or, if the section changed "
        "on purpose (a new season, a new version), write its new SHA-256 here"]


@pytest.mark.parametrize("piste", PISTES)
def test_bounds_that_differ_from_the_section_name_track_yaml(piste: str, tmp_path: Path) -> None:
    root = scratch(tmp_path, piste)
    track = track_named(root, piste)
    task, (low, high) = sorted(track.bareme.bounds.items())[1]
    definition = root / TRACKS_DIR / piste / "track.yaml"
    edit(definition, f"    {task}: [{low}, {high}]", f"    {task}: [{low}, {high + 1}]")
    row = line_of(root / track.bareme.file, f"| {task} |")
    assert lines(root, piste) == [
        f"tracks/{piste}/track.yaml:{line_of(definition, '  bornes:')}:3: bareme.bornes: {task}: the section's "
        f"table (line {row}) fixes minimum {low}, plafond {high}; here they are {low}, {high + 1}: the section "
        f"{track.bareme.file} is the truth, make bareme.bornes of tracks/{piste}/track.yaml repeat it"]


def test_an_eleventh_task_in_track_yaml_only_is_named(tmp_path: Path) -> None:
    """The section still says ten tasks after an eleventh was added to track.yaml's bounds."""
    root = scratch(tmp_path, "generique")
    definition = root / TRACKS_DIR / "generique" / "track.yaml"
    edit(definition, "    gen-10: [3, 6]\n", "    gen-10: [3, 6]\n    gen-11: [3, 6]\n")
    file = track_named(root, "generique").bareme.file
    assert lines(root, "generique") == [
        f"tracks/generique/track.yaml:{line_of(definition, '  bornes:')}:3: bareme.bornes: gen-11 has bounds 3, 6 "
        f"in tracks/generique/track.yaml but no row in the section's table: the section {file} is the truth, "
        "make bareme.bornes of tracks/generique/track.yaml repeat it"]


def test_check_season_fails_naming_track_yaml(tmp_path: Path) -> None:
    """The rule runs in ``corpus check-season`` itself, on a scratch checkout of the générique track."""
    track = track_named(ROOT, "generique")
    root = scratch(tmp_path, "generique")
    for tree in (track.trees.sources, track.trees.season_sources, track.trees.build, track.trees.manifest):
        shutil.copytree(ROOT / tree, root / tree)
    edit(root / TRACKS_DIR / "generique" / "track.yaml", f"sha256: {track.bareme.sha256}", f"sha256: {'0' * 64}")
    run = run_corpus("check-season", "--track", "generique", "--root", str(root))  # its problems: on stderr
    assert run.returncode == 1
    problems = [line for line in run.stderr.splitlines() if "bareme." in line]
    assert len(problems) == 1 and problems[0].startswith("tracks/generique/track.yaml:"), run.stderr
    assert f"not to the published {'0' * 64}" in problems[0]
    assert run.stderr.strip().endswith("corpus check-season: FAILED, 1 problem(s)")
