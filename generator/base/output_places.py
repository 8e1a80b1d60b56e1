"""The one place that knows which folders a command may write into, and which it must leave alone.

Files that reveal the sealed key go under the git-ignored ``run/``, or outside the repository
(:func:`key_output_dir`, :func:`key_output_file`). Any other report must stay out of the repository's
compiled and served trees (every track's, :func:`outside_protected`), and no report may replace one
of the files its own command reads (:func:`not_an_input`).

The task pictures (``corpus graph``) and the panel's submissions (``corpus check-season --write-panel``) show
verdicts and founding facts. Inside the repository only a folder strictly under ``ROOT/run/`` is accepted (it
is ignored by git, never compiled or served); anything else in the tree (the root itself, ``releases/``,
``docs/``, the sources, ``build/``...) is refused. A folder outside the repository is the user's own. Paths are
resolved, symlinks followed, before judging: an allow-list, not a deny-list.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from generator.base.errors import GeneratorError

RUN = "run"  # git-ignored, never served or compiled
# The kinds of a checkout's trees, each a folder at the root holding one sub-folder per track (``build/<piste>``):
# the root names kinds, never a track (docs/architecture.md, "The checkout").
SOURCE_KINDS = ("corpus_src", "season_src")  # what authors write
KINDS = (*SOURCE_KINDS, "build", "manifest", "season", "freeze")
# The trees the generator compiles, serves, freezes or renders: no report is written inside them. Protecting
# each kind's folder protects every track, known or not; then the templates nginx is rendered from, and the
# track definitions (which say what is served).
PROTECTED = (*KINDS, "nginx", "tracks")


class OutputRefused(GeneratorError):
    """A folder that would put key-revealing files where they can be served, compiled or committed."""


def key_output_dir(root: Path, out: str | None, default: Path, what: str, option: str = "--out") -> Path:
    """The folder to write ``what`` into: ``out`` (relative to the current directory) or ``ROOT/default``."""
    if out is not None and not out.strip():
        raise OutputRefused(f"{option} '': empty folder name; give a folder under {RUN}/ or outside the "
                            "repository")
    target = (Path(out) if out is not None else root / default).resolve()
    _refuse_in_repository(root, target, out or str(target), what, option)
    if target.exists() and not target.is_dir():
        raise OutputRefused(f"{option} {out or target}: exists and is not a folder")
    return target


def key_output_file(root: Path, out: Path, what: str, option: str = "--json") -> Path:
    """A file that reveals the key: strictly under ``ROOT/run/`` (``run/x.json`` too) or outside the repository."""
    if not str(out).strip():
        raise OutputRefused(f"{option} '': empty file name")
    _refuse_in_repository(root, out.resolve(), str(out), what, option)
    return out


def _refuse_in_repository(root: Path, target: Path, shown: str, what: str, option: str) -> None:
    """Refuse a resolved ``target`` inside the repository unless it is strictly under ``ROOT/run/``."""
    top = root.resolve()
    run = top / RUN
    if target.is_relative_to(top) and not (target.is_relative_to(run) and target != run):
        rel = target.relative_to(top)
        where = "the repository root" if rel == Path(".") else f"{rel.parts[0]}/ of the repository"
        raise OutputRefused(f"{option} {shown}: resolves to {target}, inside {where} ({top}); {what} "
                            f"reveal the key: use a folder under {RUN}/ (git-ignored) or outside the repository")


def outside_protected(root: Path, out: Path, option: str = "--json",
                      why: str = "which the generator compiles or serves: write the report elsewhere") -> Path:
    """``out``, refused when it resolves inside one of the repository's :data:`PROTECTED` trees: each kind's
    folder (so every track's, known or not, and whether the tracks load or not), ``nginx/`` and ``tracks/``."""
    target, top = out.resolve(), root.resolve()
    for name in PROTECTED:
        if target.is_relative_to(top / name):
            raise OutputRefused(f"{option} {out}: resolves to {target}, inside {name}/ of the checkout ({top}), "
                                f"{why}")
    return out


def outside_inputs(out: Path, folders: Iterable[tuple[str, Path | None]], option: str = "--out") -> Path:
    """``out``, refused when it resolves to, or inside, one of the ``(what, folder)`` the command reads (the
    submissions folder, the registrations' folder, the proofs folder): what it writes there would be read
    back as an input by the next run. A folder given as None is not read."""
    target = out.resolve()
    for what, folder in folders:
        if folder is not None and target.is_relative_to(folder.resolve()):
            raise OutputRefused(f"{option} {out}: resolves to {target}, inside {what} {folder}, which this "
                                "command reads: an output never lands in an input; write it elsewhere")
    return out


def not_an_input(out: Path, inputs: Iterable[Path], option: str = "--json") -> Path:
    """``out``, refused when it is (after resolving links) one of the files the command reads."""
    target = out.resolve()
    for path in inputs:
        if path.resolve() == target:
            raise OutputRefused(f"{option} {out}: is {path}, an input of this command: write the report "
                                "elsewhere")
    return out
