"""Helpers for the season tests: a private copy of the repository's season, built aside, and edits of it.

Every season test works on copies. :func:`make_world` copies ``corpus_src/`` and ``season_src/`` into a
temporary root and builds the corpus there (about 0.1 s), so no test reads the committed ``build/`` when
it means the sources, and none can touch the repository's files. A failing fixture is the real season
plus the smallest edit that breaks one rule: :func:`edit` refuses an anchor that is missing or ambiguous,
so a change of the season cannot silently turn a fixture into a no-op (the test would then pass while
proving nothing).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trackfix import CONFORMITE, copy_tracks

from generator.base.errors import CorpusError, Location
from generator.compiler.pipeline import build
from generator.proving.checks import SeasonReport, check_season
from generator.reading.reader import CorpusReader
from generator.reading.season_model import KEY_FILE, TASKS_FILE, Season, load_season
from generator.tracks.model import DEFAULT_BASE_URL, file_for

ROOT = Path(__file__).resolve().parent.parent
KEY_LOCATION = Location(f"season_src/conformite/{KEY_FILE}")  # what `corpus check-season` passes
TASKS = f"season_src/conformite/{TASKS_FILE}"
KEY = f"season_src/conformite/{KEY_FILE}"

# (file relative to corpus_src/, old text, new text): one edit of a corpus source.
CorpusEdit = tuple[str, str, str]


def edit(text: str, old: str, new: str) -> str:
    """``text`` with the single occurrence of ``old`` replaced by ``new``; fails if not exactly one."""
    count = text.count(old)
    if count != 1:
        raise AssertionError(f"edit anchor {old!r} occurs {count} times")
    return text.replace(old, new)


def edit_in_block(text: str, block_start: str, old: str, new: str) -> str:
    """Replace the first ``old`` found after the unique ``block_start`` (e.g. one task of the YAML).

    The tasks and the key repeat the same lines from task to task; anchoring on the task's own header
    keeps the edit on the task the test names.
    """
    if text.count(block_start) != 1:
        raise AssertionError(f"block anchor {block_start!r} occurs {text.count(block_start)} times")
    head, tail = text.split(block_start, 1)
    if old not in tail:
        raise AssertionError(f"{old!r} does not follow {block_start!r}")
    return head + block_start + tail.replace(old, new, 1)


@dataclass(frozen=True)
class World:
    """A temporary project root: ``corpus_src/``, ``season_src/``, and the corpus built from them."""

    root: Path

    @property
    def build(self) -> Path:
        return self.root / "build" / "conformite"

    @property
    def corpus_src(self) -> Path:
        return self.root / "corpus_src" / "conformite"

    def tasks_text(self) -> str:
        return (self.root / TASKS).read_text("utf-8")

    def key_text(self) -> str:
        return (self.root / KEY).read_text("utf-8")

    def reader(self) -> CorpusReader:
        return CorpusReader(self.build, CONFORMITE)

    def season(self) -> Season:
        return load_season(self.root / "season_src" / "conformite", CONFORMITE)

    def doc(self, path: str) -> Any:
        """A served document as an agent would parse it (the built bytes, not the YAML)."""
        return json.loads((self.build / file_for(path)).read_bytes())


def make_world(dest: Path) -> World:
    """Copy the repository's season sources into ``dest`` and build the corpus there."""
    shutil.copytree(ROOT / "corpus_src" / "conformite", dest / "corpus_src" / "conformite")
    copy_tracks(dest)
    shutil.copytree(ROOT / "season_src" / "conformite", dest / "season_src" / "conformite")
    build(dest / "corpus_src" / "conformite", dest, DEFAULT_BASE_URL, CONFORMITE)
    return World(dest)


def rebuilt(world: World, scratch: Path, edits: Iterable[CorpusEdit]) -> Path:
    """Copy the world's ``corpus_src/`` into ``scratch``, apply the edits, build; return the build folder."""
    src = scratch / "corpus_src" / "conformite"
    shutil.copytree(world.corpus_src, src)
    for relative, old, new in edits:
        path = src / relative
        path.write_text(edit(path.read_text("utf-8"), old, new), "utf-8")
    build(src, scratch, DEFAULT_BASE_URL, CONFORMITE)
    return scratch / "build" / "conformite"


def write_season(world: World, scratch: Path, *, tasks: str | None = None, key: str | None = None) -> Path:
    """A ``season_src/`` folder in ``scratch`` holding the given texts (the world's where not given)."""
    folder = scratch / "season_src" / "conformite"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / TASKS_FILE).write_text(world.tasks_text() if tasks is None else tasks, "utf-8")
    (folder / KEY_FILE).write_text(world.key_text() if key is None else key, "utf-8")
    return folder


def season_report(world: World, scratch: Path, *, tasks: str | None = None, key: str | None = None,
                  build_dir: Path | None = None) -> SeasonReport:
    """``check_season`` on an edited season against the world's build (or another one)."""
    season = load_season(write_season(world, scratch, tasks=tasks, key=key), CONFORMITE)
    return check_season(season, CorpusReader(build_dir or world.build, CONFORMITE), KEY_LOCATION)


def problem_lines(world: World, scratch: Path, *, tasks: str | None = None, key: str | None = None,
                  build_dir: Path | None = None) -> list[str]:
    """The problems ``corpus check-season`` would print, one line each, in its order."""
    report = season_report(world, scratch, tasks=tasks, key=key, build_dir=build_dir)
    return [str(p) for p in report.problems]


def load_problem_lines(world: World, scratch: Path, *, tasks: str | None = None,
                       key: str | None = None) -> list[str]:
    """The loading problems (YAML, schema) of an edited season; fails if it loads cleanly."""
    try:
        load_season(write_season(world, scratch, tasks=tasks, key=key), CONFORMITE)
    except CorpusError as exc:
        return [str(p) for p in exc.problems]
    raise AssertionError("the season loaded without a problem")


def position(text: str, needle: str, after: str | None = None) -> str:
    """``line:column`` (1-based) of the first ``needle`` in ``text``, or of the first one after ``after``.

    Problems name where the author wrote the value; computing it from the edited text keeps the test
    honest if the sources are reformatted.
    """
    start = 0
    if after is not None:
        if text.count(after) != 1:
            raise AssertionError(f"{after!r} occurs {text.count(after)} times")
        start = text.index(after)
    index = text.index(needle, start)
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return f"{line}:{column}"


def assert_problems(lines: list[str], *expected: tuple[str, str], exhaustive: bool = True) -> None:
    """Each expected ``(prefix, fragment)`` matches exactly one problem line, a distinct one each.

    The prefix pins where (``file:line:column: field:``), the fragment pins which rule. With
    ``exhaustive`` (the default) no other problem may be reported: a fixture breaks one rule, and the
    test proves that the season check says so and says nothing else.
    """
    unmatched = list(lines)
    for prefix, fragment in expected:
        hits = [line for line in unmatched if line.startswith(prefix) and fragment in line]
        assert len(hits) == 1, f"expected one problem {prefix!r} … {fragment!r}; got:\n" + "\n".join(lines)
        unmatched.remove(hits[0])
    if exhaustive:
        assert not unmatched, "unexpected problems:\n" + "\n".join(unmatched)
