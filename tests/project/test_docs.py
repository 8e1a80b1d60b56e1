"""The docs stay usable: short sections, links that land, the founding-fact rule written once in English
and in the order of the served French text, and test commands that name real tests."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SEASON = DOCS / "season.md"
RULE_ANCHOR = "docs/season.md#founding-facts-the-rule"
MAX_WORDS = 300  # under one heading, tables and examples included
SHORT_PAGES = ("architecture.md", "authoring.md", "operating.md", "season.md", "scoring.md", "testing.md",
               "topology.md", "index.md")

# The eight cases of a decisive C2/C3 document: the English of docs/season.md beside the words of the
# served French (corpus_src/conformite/referentiel.yaml, principes.justification;
# tests/proving/test_season_panel.py pins those words and their order in the served bytes).
CASES = (
    ("absent", "absent, son existe"),
    ("an attestation listing an absent avenant", "attestation qui liste un avenant absent"),
    ("not started", "pas encore commencé"),
    ("lapsed", "périmé, sa date de fin retenue"),
    ("an agrément whose registre and liste des agréés contradict each other", "se contredisent"),
    ("statut other than actif", "statut autre que actif"),
    ("the activity excluded by an avenant in force", "activité exclue par un avenant en vigueur"),
    ("otherwise the document satisfies the criterion", "sinon, le document satisfait le critère"),
)
# Sentences of the rule that only a copy of it would hold.
RULE_WORDS = ("the first that applies in this order", "the corpus terms of the comparison that decides",
              "each homonym (same nom and prénoms)", "Equivalent forms", "contradict each other")


def _fence_free_lines(text: str) -> list[tuple[bool, str]]:
    """Each line with whether it is inside a fenced block (a ``#`` there is a shell comment, no heading)."""
    lines, fence = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        lines.append((fence, line))
    return lines


def _sections(path: Path) -> list[tuple[str, list[str]]]:
    sections: list[tuple[str, list[str]]] = [("(top)", [])]
    for fenced, line in _fence_free_lines(path.read_text("utf-8")):
        if not fenced and re.match(r"#{1,6} ", line):
            sections.append((line, []))
        else:
            sections[-1][1].append(line)
    return sections


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.lstrip("#").strip().lower()
    text = "".join(c for c in text if c in "-_ " or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    for heading, _ in _sections(path)[1:]:
        base, n = slug(heading), 0
        name = base
        while name in found:
            n += 1
            name = f"{base}-{n}"
        found.add(name)
    return found


def _prose(text: str) -> str:
    """Text as one line: comment marks, emphasis and line breaks dropped, so phrases match across lines."""
    return re.sub(r"\s+", " ", re.sub(r"^\s*#+ ?", "", text, flags=re.M).replace("**", ""))


def _rule_section() -> str:
    text = SEASON.read_text("utf-8")
    start = text.index("\n## Founding facts: the rule\n")
    return text[start:text.index("\n## ", start + 1)]


# -- the rule, once ---------------------------------------------------------------------------------------


def test_the_english_rule_states_the_eight_cases_in_the_served_order() -> None:
    """The docs' table of cases is the served French rule's list, case for case and in its order."""
    section = _rule_section()
    table = section[section.index("### The eight cases"):]
    rows = [line.split("|")[1:4] for line in table.splitlines() if re.match(r"\| [0-9] \|", line)]
    assert [int(r[0]) for r in rows] == list(range(1, 9))
    assert [r[1].strip() for r in rows] == [english for english, _ in CASES]
    served = json.loads((ROOT / "build/conformite/referentiel.json").read_text("utf-8"))["principes"][
        "justification"]
    positions = [served.find(french) for _, french in CASES]
    assert -1 not in positions and positions == sorted(positions), positions


def test_the_key_header_and_the_module_link_to_the_rule_instead_of_repeating_it() -> None:
    key = (ROOT / "season_src/conformite/cle.yaml").read_text("utf-8")
    header = key[:key.index("\nsaison:")]
    module = (ROOT / "generator" / "reading" / "founding.py").read_text("utf-8")
    docstring = module[:module.index('"""', 3)]
    for name, text in (("season_src/conformite/cle.yaml header", header), ("founding.py docstring", docstring)):
        assert RULE_ANCHOR in text, name
        assert not [w for w in RULE_WORDS if w in _prose(text)], name
    section = _prose(_rule_section())
    assert [w for w in RULE_WORDS if w in section] == list(RULE_WORDS)  # so the check above can fail
    for other in [*DOCS.glob("*.md"), ROOT / "README.md"]:
        if other != SEASON:
            assert RULE_WORDS[0] not in _prose(other.read_text("utf-8")), other.name


# -- short sections, links that land ---------------------------------------------------------------------


@pytest.mark.parametrize("page", SHORT_PAGES)
def test_no_section_is_longer_than_the_limit(page: str) -> None:
    long = {heading: n for heading, lines in _sections(DOCS / page)
            if (n := sum(len(line.split()) for line in lines)) > MAX_WORDS}
    assert not long, f"docs/{page}: split these sections (words under the heading): {long}"


def _links(path: Path) -> list[str]:
    text = "\n".join(line for fenced, line in _fence_free_lines(path.read_text("utf-8")) if not fenced)
    text = re.sub(r"`[^`]*`", "", text)
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("page", [ROOT / "README.md", *sorted(DOCS.glob("*.md"))], ids=lambda p: p.name)
def test_every_relative_link_lands_on_a_file_and_a_heading(page: Path) -> None:
    broken = []
    for link in _links(page):
        if re.match(r"[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists() or (anchor and path.suffix == ".md" and anchor not in anchors(path)):
            broken.append(link)
    assert not broken, f"{page.name}: {broken}"


def test_the_sections_the_code_names_exist() -> None:
    """Messages and docstrings cite 'docs/authoring.md, Characters', 'docs/season.md, founding facts'
    and 'docs/season.md, Scoring'."""
    assert any(h.startswith("## Characters") for h, _ in _sections(DOCS / "authoring.md"))
    season = [h for h, _ in _sections(SEASON)]
    assert "## Founding facts: the rule" in season and "## Scoring (`corpus score`)" in season


def test_the_slugs_follow_github() -> None:
    assert slug("## Scoring (`corpus score`)") == "scoring-corpus-score"
    assert slug("## Files in `corpus_src/`") == "files-in-corpus_src"
    assert slug("### 1. Deciding criteria") == "1-deciding-criteria"


# -- the testing page names real tests ------------------------------------------------------------------


def test_the_node_ids_of_the_testing_page_are_real_tests() -> None:
    text = (DOCS / "testing.md").read_text("utf-8")
    ids = re.findall(r"^\.venv/bin/pytest \"?(tests/\w+/test_\w+\.py)::(\w+)", text, re.M)
    assert ids
    for file, name in ids:
        assert re.search(rf"^def {name}\(", (ROOT / file).read_text("utf-8"), re.M), f"{file}::{name}"
