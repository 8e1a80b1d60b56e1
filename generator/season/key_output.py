"""Where files that reveal the sealed key may go: under the git-ignored ``run/``, or outside the repository.

The task pictures (``corpus graph``) and the panel's submissions (``corpus check-season --write-panel``) show
verdicts and founding facts. Inside the repository only a folder strictly under ``ROOT/run/`` is accepted (it
is ignored by git, never compiled or served); anything else in the tree (the root itself, ``releases/``,
``docs/``, the sources, ``build/``...) is refused. A folder outside the repository is the user's own. Paths are
resolved, symlinks followed, before judging: an allow-list, not a deny-list.
"""

from __future__ import annotations

from pathlib import Path

from generator.errors import GeneratorError

RUN = "run"  # git-ignored, never served or compiled


class OutputRefused(GeneratorError):
    """A folder that would put key-revealing files where they can be served, compiled or committed."""


def key_output_dir(root: Path, out: str | None, default: Path, what: str, option: str = "--out") -> Path:
    """The folder to write ``what`` into: ``out`` (relative to the current directory) or ``ROOT/default``."""
    if out is not None and not out.strip():
        raise OutputRefused(f"{option} '': empty folder name; give a folder under {RUN}/ or outside the "
                            "repository")
    target = (Path(out) if out is not None else root / default).resolve()
    top = root.resolve()
    run = top / RUN
    if target.is_relative_to(top) and not (target.is_relative_to(run) and target != run):
        rel = target.relative_to(top)
        where = "the repository root" if rel == Path(".") else f"{rel.parts[0]}/ of the repository"
        raise OutputRefused(f"{option} {out or target}: resolves to {target}, inside {where} ({top}); {what} "
                            f"reveal the key: use a folder under {RUN}/ (git-ignored) or outside the repository")
    if target.exists() and not target.is_dir():
        raise OutputRefused(f"{option} {out or target}: exists and is not a folder")
    return target
