"""Two rules of docs/architecture.md the layer test does not read from its table: a command module of
``generator/cli/`` imports no other command module (only ``cli/options.py``, what commands share; ``cli/main.py``
assembles them), and ``Any`` stays at or under 10 lines per 1,000 lines of ``generator/``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "generator"
CLI = PACKAGE / "cli"
SHARED = {"generator.cli.options"}  # what commands share; cli/main.py (and __main__) assemble the commands
ASSEMBLERS = {"main.py", "__main__.py"}
ANY_PER_1000 = 10


def _cli_imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else \
            [f"{node.module}.{alias.name}" for alias in node.names] + [node.module or ""] \
            if isinstance(node, ast.ImportFrom) else []
        found += [(node.lineno, n) for n in names if n.startswith("generator.cli")]
    return found


def test_no_command_module_imports_another() -> None:
    commands = {f"generator.cli.{p.stem}" for p in CLI.glob("*.py")} - SHARED - {"generator.cli.__init__"}
    wrong = [f"{path.relative_to(PACKAGE.parent)}:{line}: imports {name}"
             for path in sorted(CLI.glob("*.py")) if path.name not in ASSEMBLERS
             for line, name in _cli_imports(path)
             if name in commands or name.rsplit(".", 1)[0] in commands]
    assert not wrong, "a command module imports another (share it through cli/options.py):\n" + "\n".join(wrong)


def test_the_command_check_sees_an_import_of_a_command(tmp_path: Path) -> None:
    module = tmp_path / "index.py"
    module.write_text("from generator.cli.score import load_proofs\nimport generator.cli.options\n", "utf-8")
    assert _cli_imports(module) == [(1, "generator.cli.score.load_proofs"), (1, "generator.cli.score"),
                                    (2, "generator.cli.options")]


def any_ratio(root: Path = PACKAGE) -> tuple[int, int]:
    """(lines naming ``Any`` as a word, all lines) over every ``*.py`` file below ``root``."""
    word = re.compile(r"\bAny\b")
    lines = [line for path in sorted(root.rglob("*.py")) for line in path.read_text("utf-8").splitlines()]
    return sum(bool(word.search(line)) for line in lines), len(lines)


def test_any_stays_under_its_budget() -> None:
    named, total = any_ratio()
    assert named * 1000 <= ANY_PER_1000 * total, \
        f"Any on {named} lines of {total}: {1000 * named / total:.1f} per 1,000, above {ANY_PER_1000}"


def test_any_is_not_renamed() -> None:
    """A budget met by writing ``X = Any`` (or ``import Any as``) would hide what it counts."""
    hidden = [f"{path.relative_to(PACKAGE.parent)}:{number}: {line.strip()}"
              for path in sorted(PACKAGE.rglob("*.py"))
              for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
              if re.search(r"\bAny as\b|=\s*(typing\.)?Any\s*(#.*)?$|TypeAlias\s*=\s*['\"]?Any\b", line)]
    assert not hidden, hidden
