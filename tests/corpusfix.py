"""Small synthetic corpora for the compiler tests: copy a fixture aside, apply edits, check or build.

Each failing case is the valid fixture plus the smallest edit that breaks one rule, so a test can assert
the complete list of problems (the seeded one and nothing else). Edits refuse to apply when their anchor
text is missing or ambiguous, so a fixture change cannot silently turn a case into a no-op.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable
from pathlib import Path

from trackfix import CONFORMITE, copy_tracks

from generator.compiler.pipeline import check

FIXTURES = Path(__file__).resolve().parent / "fixtures"

Edit = Callable[[Path], None]


def copy_fixture(dest: Path, name: str = "valid") -> Path:
    """Copy ``tests/fixtures/<name>/corpus_src`` to ``dest/corpus_src`` and return that folder.

    The folder keeps the name ``corpus_src`` because problems name files relative to its parent.
    """
    src = dest / "corpus_src" / "conformite"
    shutil.copytree(FIXTURES / name / "corpus_src", src)
    copy_tracks(dest)  # a scratch checkout: its commands read the track definitions from dest/tracks
    return src


def replace(relative: str, old: str, new: str) -> Edit:
    """Replace the single occurrence of ``old`` in a source file."""

    def edit(src: Path) -> None:
        path = src / relative
        text = path.read_text("utf-8")
        count = text.count(old)
        if count != 1:
            raise AssertionError(f"edit anchor {old!r} occurs {count} times in {relative}")
        path.write_text(text.replace(old, new), "utf-8")

    return edit


def write(relative: str, text: str) -> Edit:
    """Create (or overwrite) a source file."""

    def edit(src: Path) -> None:
        path = src / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")

    return edit


def remove(relative: str) -> Edit:
    def edit(src: Path) -> None:
        (src / relative).unlink()

    return edit


def rename(relative: str, new_relative: str) -> Edit:
    def edit(src: Path) -> None:
        (src / relative).rename(src / new_relative)

    return edit


def apply(src: Path, edits: Iterable[Edit]) -> Path:
    for edit in edits:
        edit(src)
    return src


def problem_lines(src: Path) -> list[str]:
    """``corpus check``'s lines for a source folder (errors and warnings, in printed order)."""
    return [str(problem) for problem in check(src, CONFORMITE)]
