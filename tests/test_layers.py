"""The package's layers, checked on the source: imports go one way, the CLI is a leaf, argparse lives in it.

Every module of ``generator/`` is parsed with :mod:`ast` (imports at any depth, lazy ones inside functions
included) and mapped to its layer by its package (``generator/<layer>/...``). A failure names file:line, so
that the import to move is found at once. docs/architecture.md draws the layers.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "generator"
# Lowest first: a module may import its own layer and the layers before it. ``pistes`` (track code loaded by
# name through importlib, never imported statically by the engine) sits just below the CLI.
ORDER = ("base", "contract", "tracks", "compiler", "season", "score", "panel", "serving", "observe", "pistes",
         "cli")
RANK = {layer: rank for rank, layer in enumerate(ORDER)}
# Upward imports known and owned by someone else, each with its reason; an entry that no longer occurs fails
# (test_known_upward_imports_still_exist), so that the list only shrinks.
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> str | None:
    """``generator.season.checks`` -> ``season``; the package's own ``__init__`` has no layer."""
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
    assert folders <= set(ORDER), f"a package folder outside the layer order: {sorted(folders - set(ORDER))}"
    assert all(layer_of(m) in folders for m in MODULES if m.count(".") >= 1), "a module outside every layer"


def test_imports_go_down_only() -> None:
    wrong = []
    for path in FILES:
        mine = layer_of(module_name(path))
        for line, target in imports(path):
            theirs = layer_of(target)
            if mine is None or theirs is None:
                continue
            if RANK[theirs] > RANK[mine] and (_where(path, line).rsplit(":", 1)[0], target) not in KNOWN_UPWARD:
                wrong.append(f"{_where(path, line)}: {mine} imports {target} ({theirs} is above {mine})")
    assert not wrong, "\n".join(wrong)


def test_known_upward_imports_still_exist() -> None:
    found = {(_where(path, line).rsplit(":", 1)[0], target) for path in FILES for line, target in imports(path)}
    stale = [f"{file} -> {target}" for file, target in KNOWN_UPWARD if (file, target) not in found]
    assert not stale, f"fixed: remove from KNOWN_UPWARD: {stale}"


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
