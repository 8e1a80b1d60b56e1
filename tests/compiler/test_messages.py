"""The messages an outside hostile run found weak, each one line naming every place.

Each case is a copy of the sources with one defect; the test pins the whole line (where two places are
involved, both: ``file:line:column`` of each, computed from the edited text, not copied from a run).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_run import run_corpus
from corpusfix import apply, copy_fixture, problem_lines, replace, write
from season_fixtures import TASKS, World, edit_in_block, load_problem_lines, make_world, position
from season_fixtures import problem_lines as season_lines
from trackfix import copy_tracks

from generator.base.text_policy import MAX_DEPTH
from generator.documents.yamlstrict import YamlProblem, load_text

E1 = "entites/ENT-0001.yaml"
E2 = "entites/ENT-0002.yaml"
LC = "listes/agrees/courtage-en-assurance.yaml"
AB = "absents.yaml"


def at(src: Path, relative: str, needle: str, after: str | None = None) -> str:
    """``corpus_src/<relative>:line:column`` of ``needle`` (the first one after ``after``) in the edited file."""
    return f"corpus_src/conformite/{relative}:{position((src / relative).read_text('utf-8'), needle, after)}"


def one_line_each(lines: list[str]) -> list[str]:
    assert lines and all("\n" not in line for line in lines), lines
    return lines


# -- an id, a page, an absent defined in two places --------------------------------------------------------------

def test_entity_id_defined_in_two_files_names_both(tmp_path: Path) -> None:
    """Was: ``duplicate id 'ENT-0002' (first defined at ...)``; now both places, in the order of the files."""
    src = copy_fixture(tmp_path)
    text = (src / E2).read_text("utf-8")
    apply(src, [write("entites/ENT-2000.yaml", text)])
    lines = one_line_each(problem_lines(src))
    first, second = at(src, E2, "id: ENT-0002"), at(src, "entites/ENT-2000.yaml", "id: ENT-0002")
    assert f"{second}: entite.id: /entites/ENT-0002 is defined twice: in {first} and in {second}" in lines
    first, second = at(src, E2, "id: AGR-0002"), at(src, "entites/ENT-2000.yaml", "id: AGR-0002")
    assert f"{second}: agrements[0].id: /agrements/AGR-0002 is defined twice: in {first} and in {second}" in lines


def test_id_defined_twice_in_one_file_names_both_lines(tmp_path: Path) -> None:
    src = copy_fixture(tmp_path)
    agrement = ("  - id: AGR-0002\n    entite: /entites/ENT-0002\n"
                "    activite: conseil-en-investissements-financiers\n    statut: actif\n"
                "    date_debut: 2019-06-15\n    date_fin_validite: 2029-06-14\n")
    apply(src, [replace(E2, "\nagrements:\n", "\nagrements:\n" + agrement)])
    first = at(src, E2, "id: AGR-0002")
    second = at(src, E2, "id: AGR-0002", after="statut: actif")
    assert one_line_each(problem_lines(src)) == [
        f"{second}: agrements[1].id: /agrements/AGR-0002 is defined twice: in {first} and in {second}"]


def test_page_defined_in_two_files_names_both_pages(tmp_path: Path) -> None:
    """A liste written under another file name defines the same pages: both page places are named."""
    src = copy_fixture(tmp_path)
    other = "listes/agrees/courtage.yaml"
    apply(src, [write(other, (src / LC).read_text("utf-8"))])
    lines = one_line_each(problem_lines(src))
    mine, theirs = at(src, other, "page: 1"), at(src, LC, "page: 1")
    assert f"{mine}: pages[0].page: /listes/agrees/courtage-en-assurance/1 is defined twice: in {theirs} and in " \
           f"{mine}" in lines


def test_absent_defined_elsewhere_names_the_definition(tmp_path: Path) -> None:
    src = copy_fixture(tmp_path)
    apply(src, [replace(AB, "absents:\n", "absents:\n  - chemin: /agrements/AGR-0001\n    motif: E.\n")])
    assert one_line_each(problem_lines(src)) == [
        f"{at(src, AB, 'chemin: /agrements/AGR-0001')}: absents[0].chemin: /agrements/AGR-0001 is declared absent "
        f"but is defined in {at(src, E1, 'id: AGR-0001')}: existe would be both true and false"]


def test_absent_declared_twice_names_both(tmp_path: Path) -> None:
    src = copy_fixture(tmp_path)
    apply(src, [replace(AB, "absents:\n", "absents:\n  - chemin: /agrements/AGR-0999\n    motif: Deux.\n")])
    first = at(src, AB, "chemin: /agrements/AGR-0999")
    second = at(src, AB, "chemin: /agrements/AGR-0999", after="Deux.")
    assert one_line_each(problem_lines(src)) == [
        f"{second}: absents[1].chemin: /agrements/AGR-0999 is declared absent twice: in {first} and in {second}"]


# -- an agrément listed by two entities ------------------------------------------------------------------------

def test_agrement_listed_by_two_entities_names_both_lists(tmp_path: Path) -> None:
    """Was: ``... is listed by /entites/ENT-0002`` (no place, and ENT-0001's own listing not named)."""
    src = copy_fixture(tmp_path)
    apply(src, [replace(E2, "[/agrements/AGR-0002]", "[/agrements/AGR-0002, /agrements/AGR-0001]")])
    mine, theirs = at(src, E1, "/agrements/AGR-0001"), at(src, E2, "/agrements/AGR-0001")
    assert one_line_each(problem_lines(src)) == [
        f"{at(src, E1, 'entite: /entites/ENT-0001')}: agrements[0].entite: /agrements/AGR-0001 is listed by two "
        f"entities, /entites/ENT-0001 at {mine} and /entites/ENT-0002 at {theirs}; its entite is "
        "/entites/ENT-0001: remove it from the other list"]


def test_agrement_listed_by_another_entity_only_names_that_list(tmp_path: Path) -> None:
    src = copy_fixture(tmp_path)
    apply(src, [replace(E2, "[/agrements/AGR-0002]", "[/agrements/AGR-0002, /agrements/AGR-0001]"),
                replace(E1, "[/agrements/AGR-0001, /agrements/AGR-0999]", "[/agrements/AGR-0999]")])
    assert one_line_each(problem_lines(src)) == [
        f"{at(src, E1, 'entite: /entites/ENT-0001')}: agrements[0].entite: entite is /entites/ENT-0001 but "
        f"/agrements/AGR-0001 is listed by /entites/ENT-0002 at {at(src, E2, '/agrements/AGR-0001')}, not by "
        "/entites/ENT-0001: make the two agree"]


# -- a task naming a missing entity, a path that is not an entity, an activité without a liste -------------------

@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("messages"))


def _task_field(tasks: str, needle: str) -> str:
    return f"{TASKS}:{position(tasks, needle, after='  - id: conf-03')}"


def test_task_naming_a_missing_entity(world: World, tmp_path: Path) -> None:
    """Was located at the task's ``id``, field ``conf-03``; now at its ``entite``, saying what to do."""
    tasks = edit_in_block(world.tasks_text(), "  - id: conf-03", "entite: /entites/ENT-2751",
                          "entite: /entites/ENT-9999")
    lines = [line for line in season_lines(world, tmp_path, tasks=tasks)
             if "taches[2]" in line or "conf-03" in line]
    assert one_line_each(lines) == [
        f"{_task_field(tasks, 'entite: /entites/ENT-9999')}: taches[2].entite: task conf-03 names "
        "/entites/ENT-9999, which the built corpus does not serve (existe: false): name an entity of "
        "corpus_src/conformite/entites/, or add ENT-9999 there and rebuild; the task's other checks are skipped"]


@pytest.mark.parametrize("path", ["/agrements/AGR-5454", "/nimporte/quoi", "/entites/ENT-2751/agrements",
                                  "/entites/ENT-12"])
def test_task_naming_a_path_that_is_not_an_entity(world: World, tmp_path: Path, path: str) -> None:
    """Was: ``... is not a path of /entites/`` at the task's id, plus a /referentiel problem per criterion
    (the evaluator had run on the wrong collection); now one loading problem, so build-season refuses too."""
    tasks = edit_in_block(world.tasks_text(), "  - id: conf-03", "entite: /entites/ENT-2751", f"entite: {path}")
    assert one_line_each(load_problem_lines(world, tmp_path, tasks=tasks)) == [
        f"{_task_field(tasks, f'entite: {path}')}: taches[2].entite: {path!r} is not an entity path "
        "(one is written like /entites/ENT-0123): write the path of the entity the task is about"]


def test_build_season_refuses_a_task_naming_a_non_entity(world: World, tmp_path: Path) -> None:
    root = tmp_path / "root"
    shutil.copytree(world.root / "season_src/conformite", root / "season_src/conformite")
    copy_tracks(root)
    path = root / TASKS
    path.write_text(edit_in_block(path.read_text("utf-8"), "  - id: conf-03", "entite: /entites/ENT-2751",
                                  "entite: /agrements/AGR-5454"), "utf-8")
    result = run_corpus("build-season", "--root", str(root))
    assert result.returncode == 1
    assert "taches[2].entite: '/agrements/AGR-5454' is not an entity path" in result.stderr
    assert "Traceback" not in result.stderr and not (root / "season/conformite").exists()


def test_task_whose_activite_has_no_liste(world: World, tmp_path: Path) -> None:
    """Was at the task's id, beside consequences of the same cause (the trap no longer traps)."""
    tasks = edit_in_block(world.tasks_text(), "  - id: conf-03", "activite: conseil-en-investissements-financiers",
                          "activite: peche-a-la-ligne")
    lines = season_lines(world, tmp_path, tasks=tasks)
    assert one_line_each(lines) == [
        f"{_task_field(tasks, 'activite: peche-a-la-ligne')}: taches[2].activite: task conf-03 names activité "
        "'peche-a-la-ligne', which has no liste des agréés in the built corpus (/listes/agrees/peche-a-la-ligne/1 "
        "is not served): name an activité of corpus_src/conformite/listes/agrees/, or write "
        "corpus_src/conformite/listes/agrees/peche-a-la-ligne.yaml and rebuild; the task's other checks are "
        "skipped"]


# -- very deep nesting -----------------------------------------------------------------------------------------

SHORT = 200  # characters: a depth message is one short line, whatever the depth


def _deep(kind: str, levels: int) -> str:
    if kind == "[":
        return "x: " + "[" * levels + "]" * levels + "\n"
    if kind == "[ ":
        return "x: " + "[ " * levels + "\n"
    if kind == "{":
        return "x: " + "{a: " * levels + "1" + "}" * levels + "\n"
    if kind == "[{":
        return "x: " + "[{" * (levels // 2) + "\n"
    if kind == "- ":
        return "x:\n" + "- " * levels + "1\n"
    if kind == "long keys":
        return "".join(" " * i + "k" * 1000 + f"{i}:\n" for i in range(levels)) + " " * levels + "b: 1\n"
    assert kind == "block"
    return "".join(" " * i + "a:\n" for i in range(levels)) + " " * levels + "b: 1\n"


def _depth_message(text: str) -> str:
    with pytest.raises(YamlProblem) as caught:
        load_text(text, "corpus_src/x.yaml")
    return str(caught.value)


@pytest.mark.parametrize("levels", [10_000, 100_000])
@pytest.mark.parametrize("kind", ["[", "[ ", "{", "[{", "- "])
def test_deep_flow_and_sequences_are_one_short_line(kind: str, levels: int) -> None:
    """Was the field path of all 32 levels (``x[0][0]...``), or libyaml's own limit for ``[[[[``."""
    message = _depth_message(_deep(kind, levels))
    assert "\n" not in message and len(message) <= SHORT, message
    assert f"nesting deeper than {MAX_DEPTH} levels is not allowed" in message
    assert message.startswith("corpus_src/x.yaml:1:") or message.startswith("corpus_src/x.yaml:2:")
    assert "the nesting starts at line " in message


def test_deep_flow_message_names_the_limit_and_where_it_starts() -> None:
    assert _depth_message("x: " + "[" * 40 + "\n") == (
        f"corpus_src/x.yaml:1:{4 + MAX_DEPTH - 1}: x[0][0]…: nesting deeper than {MAX_DEPTH} levels is not "
        f"allowed (level {MAX_DEPTH + 1} opens here; the nesting starts at line 1, column 4)")


@pytest.mark.parametrize("text", ["x: " + "[" * 10_000 + "\n", "x: " + "[{" * 50_000 + "\n"])
def test_libyaml_flow_limit_is_worded_as_ours(text: str) -> None:
    """libyaml looks ahead through ``[[[[`` and stops at its own limit (1,000 levels) before the loader sees
    level 33: the message is the loader's, at the same place."""
    message = _depth_message(text)
    assert message.startswith(f"corpus_src/x.yaml:1:{4 + MAX_DEPTH - 1}: x"), message
    assert message.endswith(f": nesting deeper than {MAX_DEPTH} levels is not allowed (level {MAX_DEPTH + 1} "
                            "opens here; the nesting starts at line 1, column 4)"), message


@pytest.mark.parametrize(("kind", "levels"), [("block", 4_000), ("long keys", 40)])
def test_deep_block_mappings_are_one_short_line(kind: str, levels: int) -> None:
    """Block mappings indent each level, so 4,000 levels is near the 8 MiB limit; keys of 1,000 characters
    (libyaml's longest key is 1,024) do not lengthen the message either."""
    message = _depth_message(_deep(kind, levels))
    assert "\n" not in message and len(message) <= SHORT, message
    assert message.startswith(f"corpus_src/x.yaml:{MAX_DEPTH + 1}:")
    assert message.endswith("the nesting starts at line 2, column 2)"), message


def test_block_mappings_10000_deep_are_over_the_size_limit() -> None:
    message = _depth_message(_deep("block", 10_000))
    assert message.startswith("corpus_src/x.yaml: file larger than") and "\n" not in message


@pytest.mark.parametrize("kind", ["[", "{", "- "])
def test_deep_entity_file_is_one_line_of_corpus_check(tmp_path: Path, kind: str) -> None:
    src = copy_fixture(tmp_path)
    apply(src, [write("entites/ENT-0009.yaml", _deep(kind, 100_000))])
    lines = [line for line in one_line_each(problem_lines(src)) if "ENT-0009" in line]
    assert len(lines) == 1 and len(lines[0]) <= SHORT and "nesting deeper than" in lines[0], lines


# -- a value of the wrong form is said in words, never by its pattern ------------------------------------------

def _patterns(node: object, where: str = "") -> list[tuple[str, dict]]:
    if isinstance(node, list):
        return [found for i, item in enumerate(node) for found in _patterns(item, f"{where}[{i}]")]
    if not isinstance(node, dict):
        return []
    here = [(where, node)] if isinstance(node.get("pattern"), str) else []
    return here + [found for key, item in node.items() for found in _patterns(item, f"{where}/{key}")]


def _checked_schemas() -> list[Path]:
    """Every schema ``check``, ``build``, ``check-season`` and ``score`` validate with: the engine's and each
    track's, its submission schema included (a participant reads its words too)."""
    from trackfix import ROOT

    files = sorted((ROOT / "generator" / "schemas").glob("*.schema.json"))
    return files + sorted((ROOT / "tracks").glob("*/schemas/*.schema.json"))


@pytest.mark.parametrize("file", _checked_schemas(), ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_pattern_carries_its_words_and_a_matching_example(file: Path) -> None:
    import json
    import re

    for where, node in _patterns(json.loads(file.read_text("utf-8"))):
        assert isinstance(node.get("title"), str) and node["title"].startswith(("a ", "an ")), (file, where)
        assert isinstance(node.get("description"), str) and node["description"].startswith("write"), (file, where)
        examples = node.get("examples")
        assert isinstance(examples, list) and examples, (file, where)
        assert all(re.search(node["pattern"], e) for e in examples), (file, where, examples)


def test_the_seeded_errors_quote_no_pattern() -> None:
    """Every line ``corpus check`` prints on the seeded fixture (tests/fixtures/errors/expected.txt)."""
    from corpusfix import FIXTURES

    lines = (FIXTURES / "errors" / "expected.txt").read_text("utf-8").splitlines()
    marks = ("[0-9]", "[a-z]", "{4,6}", "{0,2}", "^", "$'", "(-[")
    assert [line for line in lines if any(mark in line for mark in marks)] == []
