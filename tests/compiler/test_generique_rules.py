"""The générique track's integrity rules and its format messages.

Each case is a scratch copy of the track's sources with the smallest edit an author could make by mistake;
``corpus check`` must fail with one line at ``file:line:column: field`` (computed from the edited text), as
it does for conformité. The records edited are found in the sources (the first product sheet, the
catalogue that lists it...), and every path comes from the Track, so the cases follow the corpus and its
trees wherever they move.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from season_fixtures import position
from trackfix import ROOT, copy_tracks

from generator.base.errors import Severity
from generator.compiler.pipeline import check
from generator.documents.yamlstrict import load_text
from generator.tracks.loader import track_named

TRACK = track_named(ROOT, "generique")
PRODUITS, CATALOGUES = TRACK.collection("produits"), TRACK.collection("catalogues")


class Scratch:
    """A copy of the générique sources; problems name files as ``<arbres.sources>/<file>``."""

    def __init__(self, tmp_path: Path) -> None:
        self.src = tmp_path / TRACK.trees.sources
        shutil.copytree(ROOT / TRACK.trees.sources, self.src)
        copy_tracks(tmp_path, tracks=("generique",))
        self.shown = TRACK.trees.sources  # problems name files from the checkout

    def text(self, relative: str) -> str:
        return (self.src / relative).read_text("utf-8")

    def data(self, relative: str) -> Any:
        return load_text((self.src / relative).read_bytes(), relative)

    def edit(self, relative: str, old: str, new: str) -> None:
        text = self.text(relative)
        assert text.count(old) == 1, (relative, old)
        (self.src / relative).write_text(text.replace(old, new), "utf-8")

    def at(self, relative: str, needle: str, after: str | None = None) -> str:
        return f"{self.shown}/{relative}:{position(self.text(relative), needle, after)}"

    def lines(self, severity: Severity | None = None) -> list[str]:
        return [str(p) for p in check(self.src, TRACK) if severity is None or p.severity is severity]

    def products(self) -> list[str]:
        return sorted(p.name for p in (self.src / (PRODUITS.source.folder or "")).glob("*.yaml"))

    def listed(self, sheet: dict[str, Any]) -> bool:
        folder = self.src / (CATALOGUES.source.folder or "")
        entry = f"produit: {PRODUITS.path(id=sheet['id'])}\n"
        return any(entry in file.read_text("utf-8") for file in folder.glob("*.yaml"))

    def listing(self, product: str) -> tuple[str, str]:
        """The catalogue file that lists a product sheet, and the line of its entry."""
        path = PRODUITS.path(id=product)
        for file in sorted((self.src / (CATALOGUES.source.folder or "")).glob("*.yaml")):
            if f"produit: {path}\n" in file.read_text("utf-8"):
                return file.relative_to(self.src).as_posix(), f"produit: {path}\n"
        raise AssertionError(f"no catalogue lists {path}")


@pytest.fixture()
def scratch(tmp_path: Path) -> Scratch:
    return Scratch(tmp_path)


def first_product(scratch: Scratch) -> tuple[str, dict[str, Any]]:
    """The first product sheet that a catalogue lists: its file (relative) and its data."""
    for name in scratch.products():
        relative = f"{PRODUITS.source.folder}/{name}"
        data = scratch.data(relative)
        if scratch.listed(data):
            return relative, data
    raise AssertionError("no listed product sheet")


def test_the_committed_sources_pass(scratch: Scratch) -> None:
    assert scratch.lines() == []


# -- item 1: the five inconsistencies that used to pass ---------------------------------------------------------

# A field of the first listed product sheet, rewritten: (its line's key, its value, the wrong value, the words).
SheetCase = tuple[str, str, str, str]


def _reference_not_its_id(scratch: Scratch, data: dict[str, Any]) -> SheetCase:
    wrong = data["id"][:-2] + data["id"][-1] + data["id"][-2]  # two digits swapped: PRD-31057 -> PRD-31075
    assert wrong != data["id"]
    return "reference", data["id"], wrong, (
        f"reference: '{wrong}' differs from the id of the record's path, {PRODUITS.path(id=data['id'])}: write "
        f"{data['id']} (or give the record the id {wrong}, in a file named {wrong}.yaml)")


def _category_not_its_catalogues(scratch: Scratch, data: dict[str, Any]) -> SheetCase:
    catalogue, entry = scratch.listing(data["id"])
    folder = scratch.src / (CATALOGUES.source.folder or "")
    other = next(c for c in sorted(p.stem for p in folder.glob("*.yaml")) if c != data["categorie"])
    return "categorie", data["categorie"], other, (
        f"categorie: '{other}' differs from the categorie of every catalogue that lists "
        f"{PRODUITS.path(id=data['id'])} (the catalogue of categorie {data['categorie']} at "
        f"{scratch.at(catalogue, entry.split(':')[0] + ':')}): write {data['categorie']}, or list it in the "
        f"catalogue of categorie {other}")


def _tariff_ending_before_it_starts(scratch: Scratch, data: dict[str, Any]) -> SheetCase:
    start, end = data["tarif"]["debut_validite"], data["tarif"]["fin_validite"]
    before = f"{int(start[:4]) - 1}{start[4:]}"
    return "  fin_validite", end, before, (
        f"tarif.fin_validite: {before} is before tarif.debut_validite {start}: a period cannot end before it "
        f"starts (write a tarif.fin_validite on or after {start})")


@pytest.mark.parametrize("case", [_reference_not_its_id, _category_not_its_catalogues,
                                  _tariff_ending_before_it_starts],
                         ids=["a reference that is not the id of its path",
                              "a product whose category is not its catalogues'",
                              "a tariff that ends before it starts"])
def test_one_field_of_a_sheet_made_inconsistent_is_one_line_at_it(
        scratch: Scratch, case: Callable[[Scratch, dict[str, Any]], SheetCase]) -> None:
    relative, data = first_product(scratch)
    key, value, wrong, words = case(scratch, data)
    scratch.edit(relative, f"{key}: {value}\n", f"{key}: {wrong}\n")
    assert scratch.lines() == [f"{scratch.at(relative, key.strip() + ':')}: {words}"]


def test_a_catalogue_entry_citing_a_product_of_another_category(scratch: Scratch) -> None:
    _, data = first_product(scratch)
    catalogue, entry = scratch.listing(data["id"])
    sheets = [scratch.data(f"{PRODUITS.source.folder}/{name}") for name in scratch.products()]
    foreign = next(sheet for sheet in sheets if sheet["categorie"] != data["categorie"] and scratch.listed(sheet))
    cited = PRODUITS.path(id=foreign["id"])
    scratch.edit(catalogue, entry, f"produit: {cited}\n")
    own = scratch.data(catalogue)["categorie"]
    problems = scratch.lines()
    assert len(problems) == 1, problems  # one line, at the entry: the product is listed by its own catalogue
    line = problems[0]
    assert line.endswith(f": {cited} has categorie {foreign['categorie']}, but this catalogue lists only "
                         f"categorie {own}: remove the entry, or cite one whose categorie is {own}"), \
        problems
    assert line.startswith(scratch.at(catalogue, f"produit: {cited}")), line


def test_a_product_file_named_after_another_id(scratch: Scratch) -> None:
    relative, data = first_product(scratch)
    other = data["id"][:-1] + ("0" if data["id"][-1] != "0" else "1")
    (scratch.src / relative).rename(scratch.src / PRODUITS.source.folder / f"{other}.yaml")
    renamed = f"{PRODUITS.source.folder}/{other}.yaml"
    assert scratch.lines() == [f"{scratch.at(renamed, 'id:')}: id: the file must be named {data['id']}.yaml, "
                               "after its product sheet id"]


def test_an_annex_ending_before_it_starts_is_a_warning_said_the_same_way(scratch: Scratch) -> None:
    """Where a trap may need it (an annex's period), the same words, served as written and warned about."""
    folder = scratch.src / (TRACK.collection("annexes").source.folder or "")
    for file in sorted(folder.glob("*.yaml")):
        for annex in scratch.data(file.relative_to(scratch.src).as_posix()).get("annexes") or []:
            if annex.get("du") and annex.get("au"):
                relative = file.relative_to(scratch.src).as_posix()
                before = f"{int(annex['du'][:4]) - 1}{annex['du'][4:]}"
                scratch.edit(relative, f"au: {annex['au']}\n", f"au: {before}\n")
                lines = scratch.lines(Severity.WARNING)
                assert len(lines) == 1 and lines[0].startswith("warning: "), lines
                assert lines[0].endswith(f"au: {before} is before du {annex['du']} (served as written; make sure "
                                         "the trap is intended)"), lines
                assert scratch.lines(Severity.ERROR) == []
                return
    pytest.skip("no annex with a period in the sources")


# -- item 2: formats worded from the schema, cause first ---------------------------------------------------------

FORMATS = [
    # (what, field path in a product sheet, written line, bad value, expected words)
    ("amount", "tarif.prix_unitaire_ht", "  prix_unitaire_ht: ", '"171"',
     "'171' is not an amount: write it with two decimals after a point, no sign and no thousands separator, "
     'as "171.00"'),
    ("quantity", "disponibilite.quantite", "  quantite: ", '"120 u"',
     "'120 u' is not a quantity: write a whole number in digits, without sign, decimals or leading zero, as "
     '"120"'),
    ("date", "tarif.debut_validite", "  debut_validite: ", "01/07/2026",
     "'01/07/2026' is not a date: write it year-month-day, four digits, two and two, joined by hyphens, as "
     '"2026-07-01"'),
    ("reference", "reference", "reference: ", "PRD-3105",
     "'PRD-3105' is not a product reference: write PRD- followed by five digits, as \"PRD-31057\""),
    ("code", "categorie", "categorie: ", "Sièges de bureau",
     "'Sièges de bureau' is not a code: write lowercase letters without accents, words joined by single "
     'hyphens, as "sieges-de-bureau"'),
]


@pytest.mark.parametrize(("what", "field", "written", "value", "words"), FORMATS, ids=[f[0] for f in FORMATS])
def test_a_format_is_said_in_words_with_an_example(scratch: Scratch, what: str, field: str, written: str,
                                                   value: str, words: str) -> None:
    relative, data = first_product(scratch)
    old = data
    for part in field.split("."):
        old = old[part]
    quoted = f'"{old}"' if f'{written}"{old}"' in scratch.text(relative) else old
    scratch.edit(relative, f"{written}{quoted}\n", f"{written}{value}\n")
    lines = [line for line in scratch.lines() if line.startswith(f"{scratch.shown}/{relative}:")]
    assert f"{scratch.at(relative, written.strip())}: {field}: {words}" in lines, lines
    assert not any(mark in line for line in lines for mark in ("[0-9]", "^", "$'", "{0,")), lines


def test_a_files_own_syntax_error_comes_before_its_consequences(scratch: Scratch) -> None:
    """A tab in a product sheet: the tab first, then the references it breaks in other files."""
    relative, data = first_product(scratch)
    scratch.edit(relative, f"marque: {data['marque']}\n", f"marque:\t{data['marque']}\n")
    lines = scratch.lines()
    assert lines[0].startswith(f"{scratch.shown}/{relative}:") and "TAB" in lines[0], lines
    assert len(lines) > 1 and all(PRODUITS.path(id=data["id"]) in line for line in lines[1:]), lines


def test_build_prints_the_cause_first_too(scratch: Scratch) -> None:
    """``corpus build`` refuses with the same lines as ``check``, in the same order."""
    from generator.base.errors import CorpusError
    from generator.compiler.pipeline import compile_build
    from generator.tracks.model import DEFAULT_BASE_URL

    relative, data = first_product(scratch)
    scratch.edit(relative, f"marque: {data['marque']}\n", f"marque:\t{data['marque']}\n")
    with pytest.raises(CorpusError) as refused:
        compile_build(scratch.src, DEFAULT_BASE_URL, TRACK)
    assert [str(p) for p in refused.value.problems] == scratch.lines()
    assert "TAB" in str(refused.value).splitlines()[0]
