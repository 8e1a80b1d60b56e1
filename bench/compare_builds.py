"""Which served bodies changed between two builds, and whether only non-probant fields did (a realism pass).

A realism pass may rewrite names, forms, addresses, issuers and motifs, and the prose of ``/referentiel``,
but never a probant field (spec §5.7, ``probants`` in ``tracks/<piste>/track.yaml``), nor what the
référentiel consumes or decides with (each criterion's ``id``, ``champs`` and ``parametres``, the
verdicts of its ``precedence``). This compares the two builds body by body, field by field:

- both manifests list the same paths, and an unchanged body keeps its bytes;
- in a collection's body, no changed pointer is, contains or lies inside a probant pointer (nor is
  ``/ressource`` or ``/existe``), and no field appears or disappears unless it is non-probant;
- in ``/referentiel``, only strings change, and none of the consumed or deciding ones;
- any other body (``/catalogue``, ``/_systeme/*``) is byte-identical.

    .venv/bin/python bench/compare_builds.py --before /work/main --after .

Exit 0 when every change is allowed, 1 otherwise (each offending pointer named).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.compiler.track_file import track_named  # noqa: E402
from generator.season.reader import pointer_pattern  # noqa: E402
from generator.tracks.model import Track  # noqa: E402

ALWAYS_KEPT = ("/ressource", "/existe")
# Pointers of /referentiel whose values are rules, not prose: what a criterion consumes and decides with.
REFERENTIEL_KEPT = re.compile(r"^/(criteres/[0-9]+/(id|champs|parametres)|precedence/[0-9]+/verdict|version)(/|$)")


def leaf_changes(before: Any, after: Any, pointer: str = "") -> list[tuple[str, Any, Any]]:
    """(pointer, old, new) for every value that differs; a key or index present on one side only is a
    change of that pointer (old or new ``...`` marks the missing side)."""
    if isinstance(before, dict) and isinstance(after, dict):
        found: list[tuple[str, Any, Any]] = []
        for key in sorted(before.keys() | after.keys()):
            sub = f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}"
            found += leaf_changes(before.get(key, ...), after.get(key, ...), sub)
        return found
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [c for i, (b, a) in enumerate(zip(before, after, strict=True))
                for c in leaf_changes(b, a, f"{pointer}/{i}")]
    return [] if type(before) is type(after) and before == after else [(pointer, before, after)]


def touches(pointer: str, protected: str) -> bool:
    """Whether a change at ``pointer`` changes the value at ``protected`` (both as patterns): the same
    pointer, one inside the other."""
    return pointer == protected or pointer.startswith(protected + "/") or protected.startswith(pointer + "/")


def refusals(track: Track, path: str, before: Any, after: Any) -> list[str]:
    """Why the change of one body is not allowed; empty when it is."""
    changes = leaf_changes(before, after)
    if path == track.referentiel:
        return [f"{path} {p}: {'rule' if REFERENTIEL_KEPT.match(p) else 'not prose'} changed"
                for p, old, new in changes
                if REFERENTIEL_KEPT.match(p) or not (isinstance(old, str) and isinstance(new, str))]
    collection = track.collection_of(path)
    if collection is None:
        return [f"{path}: a body outside the collections changed"] if changes else []
    protected = (*ALWAYS_KEPT, *collection.probant)
    return [f"{path} {p}: probant field {guard} changed"
            for p, _, _ in changes for guard in protected if touches(pointer_pattern(p), guard)]


def compare(before_root: Path, after_root: Path, track: Track) -> tuple[list[str], list[str]]:
    """(one line per changed body with its changed pointers, one line per refused change)."""
    def entries(root: Path) -> dict[str, dict[str, Any]]:
        manifest = json.loads((root / track.trees.manifest / "manifest.json").read_bytes())
        return {e["path"]: e for e in manifest["resources"]}

    old, new = entries(before_root), entries(after_root)
    problems = [f"{p}: only in the before build" for p in sorted(old.keys() - new.keys())]
    problems += [f"{p}: only in the after build" for p in sorted(new.keys() - old.keys())]
    changed: list[str] = []
    for path in sorted(old.keys() & new.keys()):
        if old[path]["sha256"] == new[path]["sha256"]:
            continue
        if "file" not in new[path]:
            problems.append(f"{path}: a body with no file changed")
            continue
        before = json.loads((before_root / track.trees.build / old[path]["file"]).read_bytes())
        after = json.loads((after_root / track.trees.build / new[path]["file"]).read_bytes())
        pointers = sorted({pointer_pattern(p) for p, _, _ in leaf_changes(before, after)})
        changed.append(f"{path}: {', '.join(pointers) or '(bytes only)'}")
        problems += refusals(track, path, before, after)
    return changed, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout holding the old build/ and manifest/")
    parser.add_argument("--after", type=Path, default=ROOT, help="checkout holding the new ones (default: this)")
    parser.add_argument("--track", default=None, help="the track (default: the checkout's only one)")
    args = parser.parse_args()
    track = track_named(args.after, args.track)
    changed, problems = compare(args.before, args.after, track)
    for line in changed:
        print(f"changed {line}")
    for line in problems:
        print(f"REFUSED {line}")
    print(f"{len(changed)} body(ies) changed, {len(problems)} refused change(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
