"""A source file is named in messages from the checkout (``corpus_src/<piste>/...``); the string shortcut of
:func:`shown_name` (issue 43) names it as ``Path.relative_to`` does, wherever the source folder is."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.documents.records import named_from, shown_name


@pytest.mark.parametrize("root", ["/w/corpus_src/conformite", "corpus_src/conformite", "/src", "src", "/w/x/y",
                                  "/corpus_src/a", "./corpus_src/b", "/w/corpus_src/conformite/"])
@pytest.mark.parametrize("relative", ["a.yaml", "entites/ENT-1.yaml", "listes/agrees/x.yaml"])
def test_shown_name_is_relative_to(root: str, relative: str) -> None:
    base = Path(root)
    path = base / relative
    assert shown_name(base, path) == path.relative_to(named_from(base)).as_posix()
