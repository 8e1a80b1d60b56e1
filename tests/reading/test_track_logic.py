"""A track's code is one typed object: the engine finds its :class:`TrackLogic` by type, and only that.

docs/tracks.md ("The code of a track") shows the object as the one thing a new track's ``logic.py`` writes.
"""

from __future__ import annotations

import dataclasses
import importlib
from pathlib import Path

import pytest
from trackfix import ROOT

from generator.reading.logic import LogicError, Shortcuts, TrackLogic, load_logic
from generator.reading.reader import CorpusReader, Fact
from generator.tracks.loader import load_tracks, track_named
from generator.tracks.model import Track

ESSAI = ROOT / "tests" / "fixtures" / "essai" / "tracks" / "essai"


@pytest.mark.parametrize("track", load_tracks(ROOT), ids=lambda t: t.piste)
def test_each_track_of_the_checkout_exports_one_track_logic(track: Track) -> None:
    logic = load_logic(track)
    assert logic is importlib.import_module(track.code).TRACK_LOGIC
    names = [s.name for s in (logic.reference, *logic.shortcuts.every)]
    assert len(set(names)) == len(names), "a shortcut twice, or one named as the reference"
    assert set(logic.shortcuts.every) == {*logic.shortcuts.by_family.values(), *logic.shortcuts.named.values()}
    for family, allowed in logic.shortcuts.named_by_family.items():
        assert allowed and set(allowed.items()) <= set(logic.shortcuts.named.items()), family
    with pytest.raises(dataclasses.FrozenInstanceError):
        logic.reference = logic.shortcuts.every[0]


def test_the_test_track_fills_in_the_same_object() -> None:
    track = dataclasses.replace(track_named(ROOT, "conformite"), piste="essai", folder=ESSAI, code="logic.py")
    logic = load_logic(track)
    assert [s.name for s in logic.shortcuts.every] == ["E1-fiche-produit-seule"]
    assert logic.agents.independent == {} and logic.agents.outside_rule == {}


def test_a_trap_catches_its_named_shortcut_else_its_familys() -> None:
    logic = load_logic(track_named(ROOT, "conformite"))
    named = next(iter(logic.shortcuts.named))
    assert logic.shortcuts.of_trap("P5", named) is logic.shortcuts.named[named]
    assert logic.shortcuts.of_trap("P1", None) is logic.shortcuts.by_family["P1"]
    assert logic.shortcuts.of_trap("P1", "no-such-raccourci") is None
    assert logic.shortcuts.of_trap("controle", None) is None


def _no_forms(reader: CorpusReader, fact: Fact) -> list[Fact]:
    return []


@pytest.mark.parametrize(("body", "count"), [
    ("REFERENCE = 1\nSHORTCUTS = ()\n", 0),  # loose names, as a track's code once was: not read
    ("from tests_logic_helper import A as TRACK_LOGIC, A as OTHER\n", 1),  # the same object twice: one
    ("from tests_logic_helper import A as TRACK_LOGIC, B\n", 2),
])
def test_a_module_without_exactly_one_track_logic_is_refused(tmp_path: Path, body: str, count: int,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import sys
    import types

    helper = types.ModuleType("tests_logic_helper")
    base = load_logic(track_named(ROOT, "conformite"))
    helper.A = base
    helper.B = TrackLogic(evaluate=base.evaluate, reference=base.reference, shortcuts=Shortcuts(),
                          same_rank_forms=_no_forms)
    monkeypatch.setitem(sys.modules, "tests_logic_helper", helper)
    folder = tmp_path / f"piste{count}"
    folder.mkdir()
    (folder / "logic.py").write_text(body, "utf-8")
    track = dataclasses.replace(track_named(ROOT, "conformite"), piste="autre", folder=folder, code="logic.py")
    if count == 1:
        assert load_logic(track) is base
        return
    with pytest.raises(LogicError) as caught:
        load_logic(track)
    assert str(caught.value) == (f"logic.py: the code of the track autre holds {count} TrackLogic objects, not "
                                 "one: export TRACK_LOGIC = TrackLogic(...) (docs/tracks.md)")
