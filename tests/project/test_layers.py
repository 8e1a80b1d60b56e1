"""The package's layers, checked on the source against docs/architecture.md: each layer imports only the
layers its row of the table "What each layer may import" allows, the table is a tree (no circle), the CLI is
a leaf and argparse lives in it.

Every module of ``generator/`` is parsed with :mod:`ast` (imports at any depth, lazy ones inside functions
included) and mapped to its layer by its package (``generator/<layer>/...``). A failure names file:line, so
that the import to move is found at once.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "generator"
ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
# Imports known to break the table and owned by someone else, each with its reason; an entry that no longer
# occurs fails (test_known_exceptions_still_exist), so that the list only shrinks.
KNOWN_EXCEPTIONS: dict[tuple[str, str], str] = {}


def allowed_sets(text: str) -> dict[str, set[str]]:
    """layer -> the layers it may import, from the table under "## What each layer may import"; a row whose
    cell is "everything" (the CLI) may import every other layer, "nothing of the package" none."""
    section = text.split("## What each layer may import", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([a-z_]+)` \| (.+?) \|$", section, re.MULTILINE)
    layers = {layer for layer, _ in rows}
    named = {layer: set(re.findall(r"`([a-z_]+)`", cell)) for layer, cell in rows}
    return {layer: layers - {layer} if cell.startswith("everything") else named[layer] for layer, cell in rows}


ALLOWED = allowed_sets(ARCHITECTURE.read_text("utf-8"))


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str | None:
    """``generator.proving.checks`` -> ``proving``; the package's own ``__init__`` has no layer."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "generator" else None


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, imported module) for every import of the file, at any depth; ``from X import y`` gives
    ``X.y`` when ``X.y`` is a module of the package (so that a package import names its module)."""
    return source_imports(path.read_text("utf-8"), module_name(path), path.name == "__init__.py")


def source_imports(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                package = module.split(".")
                package = package[:len(package) - node.level + is_package]
                base = ".".join([*package, *([base] if base else [])])
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.append((node.lineno, candidate if candidate in MODULES else base))
    return found


FILES = sorted(PACKAGE.rglob("*.py"))
MODULES = {module_name(p): p for p in FILES}


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(PACKAGE.parent)}:{line}"


def test_the_layers_are_the_package_folders() -> None:
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(ALLOWED), ("docs/architecture.md's table and generator/ disagree: folders without a "
                                     f"row {sorted(folders - set(ALLOWED))}, rows without a folder "
                                     f"{sorted(set(ALLOWED) - folders)}")
    assert all(layer_of(m) in folders for m in MODULES if m.count(".") >= 1), "a module outside every layer"


def _layer_imports() -> list[tuple[Path, int, str, str, str]]:
    """(file, line, its layer, imported module, that module's layer) for every import across layers."""
    found = []
    for path in FILES:
        mine = layer_of(module_name(path))
        for line, target in imports(path):
            theirs = layer_of(target)
            if mine is not None and theirs is not None and theirs != mine:
                found.append((path, line, mine, target, theirs))
    return found


def test_each_layer_imports_only_what_its_row_allows() -> None:
    wrong = [f"{_where(path, line)}: {mine} imports {target}, and {theirs} is not in {mine}'s row of "
             "docs/architecture.md (move the code, or change the row if the drawing is wrong)"
             for path, line, mine, target, theirs in _layer_imports()
             if theirs not in ALLOWED[mine]
             and (_where(path, line).rsplit(":", 1)[0], target) not in KNOWN_EXCEPTIONS]
    assert not wrong, "\n".join(wrong)


def test_each_allowed_import_is_used() -> None:
    """The table draws the house as it is: a layer allowed to import one it never imports is a stale row."""
    used = {(mine, theirs) for _, _, mine, _, theirs in _layer_imports()}
    stale = sorted(f"{mine} -> {theirs}" for mine, allowed in ALLOWED.items() for theirs in allowed
                   if mine != "cli" and (mine, theirs) not in used)
    assert not stale, f"docs/architecture.md allows imports nobody makes: remove them from the rows: {stale}"


def test_the_allowed_sets_are_a_tree_without_circles() -> None:
    graph = {layer: {other: 0 for other in allowed} for layer, allowed in ALLOWED.items()}
    assert cycles(graph) == [], "docs/architecture.md's table has a circle between layers"
    assert ALLOWED["base"] == set(), "base is the ground: it imports nothing of the package"


def test_the_compiler_is_imported_by_the_cli_only() -> None:
    """Reading (documents, tracks, season reading) lives below the compiler, so that serving, scoring and the
    season never pass through compiling."""
    assert [layer for layer, allowed in ALLOWED.items() if "compiler" in allowed] == ["cli"]


@pytest.mark.parametrize("text, expected", [
    ("## What each layer may import\n\n| layer | may import |\n|---|---|\n| `base` | nothing of the package |\n"
     "| `tracks` | `base` |\n| `cli` | everything |\n\n## Next\n| `x` | `y` |\n",
     {"base": set(), "tracks": {"base"}, "cli": {"base", "tracks"}}),
])
def test_the_table_is_read_as_written(text: str, expected: dict[str, set[str]]) -> None:
    assert allowed_sets(text) == expected


def test_known_exceptions_still_exist() -> None:
    found = {(_where(path, line).rsplit(":", 1)[0], target) for path in FILES for line, target in imports(path)}
    stale = [f"{file} -> {target}" for file, target in KNOWN_EXCEPTIONS if (file, target) not in found]
    assert not stale, f"fixed: remove from KNOWN_EXCEPTIONS: {stale}"


def test_nothing_imports_the_cli() -> None:
    wrong = [f"{_where(path, line)}: imports {target}" for path in FILES
             if layer_of(module_name(path)) != "cli"
             for line, target in imports(path) if layer_of(target) == "cli"]
    assert not wrong, "\n".join(wrong)


def test_argparse_lives_in_the_cli_only() -> None:
    wrong = [f"{_where(path, line)}: import argparse outside generator/cli/" for path in FILES
             if layer_of(module_name(path)) != "cli"
             for line, target in imports(path) if target.split(".")[0] == "argparse"]
    assert not wrong, "\n".join(wrong)


def _graph() -> dict[str, dict[str, int]]:
    """module -> {imported module of the package: first line}."""
    graph: dict[str, dict[str, int]] = {}
    for path in FILES:
        edges = graph.setdefault(module_name(path), {})
        for line, target in imports(path):
            while target and target not in MODULES:  # ``from generator.x import name`` -> generator.x
                target = target.rpartition(".")[0]
            if target and target != module_name(path):
                edges.setdefault(target, line)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """Every strongly connected component of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, {}):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_circle_between_modules() -> None:
    graph = _graph()
    wrong = []
    for component in cycles(graph):
        members = set(component)
        edges = [f"{_where(MODULES[a], line)}: {a} imports {b}" for a in component
                 for b, line in sorted(graph[a].items()) if b in members]
        wrong.append("circle " + " <-> ".join(component) + ":\n  " + "\n  ".join(edges))
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b": 1}, "b": {"a": 2}, "c": {"a": 3}}, [["a", "b"]]),
    ({"a": {"b": 1}, "b": {"c": 1}, "c": {}}, []),
    ({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"d": 1}}, [["a", "b", "c"]]),
])
def test_the_circle_finder_finds_circles(graph: dict[str, dict[str, int]], expected: list[list[str]]) -> None:
    assert cycles(graph) == expected


def test_lazy_and_relative_imports_are_seen() -> None:
    """An import inside a function counts (that is where the old upward imports hid), and so does a
    relative one, resolved against the importing module's package."""
    source = ("import json\n"
              "def f():\n    if True:\n        from generator.cli.main import main\n"
              "class C:\n    def g(self):\n        import argparse\n"
              "from .counts import Report\n"
              "from .. import verify\n")
    found = source_imports(source, "generator.observe.log_report.text")
    assert sorted(found) == [(1, "json"), (4, "generator.cli.main"), (7, "argparse"),
                             (8, "generator.observe.log_report.counts"), (9, "generator.observe.verify")]


# serving/'s parts, in the order they may import one another: each imports only those before it
# (docs/architecture.md, "Serving: `serving`").
SERVING_PARTS = ("tls", "rendering", "instances", "releases")


def test_serving_parts_import_one_way() -> None:
    folders = {p.name for p in (PACKAGE / "serving").iterdir() if (p / "__init__.py").exists()}
    assert folders == set(SERVING_PARTS), f"generator/serving/'s parts are {sorted(folders)}, not {SERVING_PARTS}"
    assert [p.name for p in (PACKAGE / "serving").glob("*.py")] == ["__init__.py"], "a module outside the parts"
    wrong = []
    for path in FILES:
        mine = module_name(path).split(".")
        if mine[:2] != ["generator", "serving"] or len(mine) < 4:
            continue
        for line, target in imports(path):
            theirs = target.split(".")
            if theirs[:2] == ["generator", "serving"] and len(theirs) > 2 and theirs[2] != mine[2] \
                    and SERVING_PARTS.index(theirs[2]) > SERVING_PARTS.index(mine[2]):
                wrong.append(f"{_where(path, line)}: serving.{mine[2]} imports {target}, a later part")
    assert not wrong, "\n".join(wrong)


# -- the tests mirror the layers --------------------------------------------------------------------------

TESTS = PACKAGE.parent / "tests"
WHOLE = "project"  # the tests of the whole checkout: docs, the layer table, packaging, markers, benchmarks
NOT_TESTS = ("fixtures", "__pycache__")


def test_the_tests_mirror_the_layers_one_folder_each() -> None:
    """A test of a layer lives in ``tests/<layer>/``, read from the table above: a new layer gets its folder,
    a folder no layer names (or a test left at the root) is a layout the next reader would have to guess."""
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and p.name not in NOT_TESTS}
    assert folders == {*ALLOWED, WHOLE}, sorted(folders ^ {*ALLOWED, WHOLE})
    assert not sorted(p.name for p in TESTS.glob("test_*.py")), "a test file at the root of tests/"
    for folder in folders:
        assert list((TESTS / folder).glob("test_*.py")), f"tests/{folder}/ holds no test"
