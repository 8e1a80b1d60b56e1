"""Which served bodies changed between two builds, and whether any change reaches a verdict.

A realism pass may rewrite names, forms, addresses, issuers and motifs, the prose of the référentiel and
of the ``/_systeme`` bodies, but never what decides: a probant field (spec §5.7, ``probants`` in
``tracks/<piste>/track.yaml``) that a founding fact, a trap or the rule uses, nor what the référentiel
consumes or decides with (each criterion's ``id``, ``champs`` and ``parametres``, the verdicts of its
``precedence``). This compares the two builds body by body, field by field, for either track:

- both manifests list the same paths, and an unchanged body keeps its bytes;
- in a collection's body, a changed pointer that is, contains or lies inside a probant pointer (or is
  ``/ressource`` or ``/existe``), or a field that appears or disappears there, is refused, unless the
  after checkout holds its season and the change is unused: the season key is byte-identical, no
  founding fact (nor an equivalent form) lies on it, and every task is decided alike, with and without
  the probant changes alone (the after build, then a copy with each probant change put back), by the
  reference reading, every shortcut and every careless reading of the control (verdict, and each
  option's or criterion's state and facts);
- in the référentiel, only strings change, and none of the consumed or deciding ones;
- in a ``/_systeme`` body, only strings change, never ``/erreur``; any other body (the track's
  catalogue) is byte-identical.

Each checkout's own ``tracks/`` says where its trees are, so a before checkout whose trees had other names
is read where they were.

    .venv/bin/python bench/compare_builds.py --before /work/main --after . --track generique

Exit 0 when every change is allowed, 1 otherwise (each offending pointer named).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from generator.base.errors import CorpusError  # noqa: E402
from generator.reading.logic import load_logic  # noqa: E402
from generator.reading.reader import CorpusReader, pointer_pattern  # noqa: E402
from generator.reading.season_model import load_season  # noqa: E402
from generator.tracks.loader import track_named  # noqa: E402
from generator.tracks.model import Track, Trees, systeme_path  # noqa: E402

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


def refusals(track: Track, path: str, before: Any, after: Any) -> list[tuple[str, str, str]]:
    """(pointer, probant pattern or "", reason) for each change of one body that is not prose; an empty
    pattern marks a change no proof can allow."""
    changes = leaf_changes(before, after)
    if path == track.referentiel:
        return [(p, "", f"{path} {p}: {'rule' if REFERENTIEL_KEPT.match(p) else 'not prose'} changed")
                for p, old, new in changes
                if REFERENTIEL_KEPT.match(p) or not (isinstance(old, str) and isinstance(new, str))]
    if path.startswith(systeme_path("")):
        return [(p, "", f"{path} {p}: {'error code' if p == '/erreur' else 'not prose'} changed")
                for p, old, new in changes
                if p == "/erreur" or not (isinstance(old, str) and isinstance(new, str))]
    collection = track.collection_of(path)
    if collection is None:
        return [("", "", f"{path}: a body outside the collections changed")] if changes else []
    protected = (*ALWAYS_KEPT, *collection.probant)
    return [(p, guard, f"{path} {p}: probant field {guard} changed")
            for p, _, _ in changes for guard in protected if touches(pointer_pattern(p), guard)]


def founding_places(key: Any) -> set[tuple[str, str]]:
    """Every (resource, pointer) a founding fact of the key, or one of its equivalent forms, lies on."""
    return {(form["ressource"], form["champ"]) for entry in key["taches"].values() for fact in entry["faits"]
            for form in (fact, *fact.get("formes_equivalentes", []))}


def decisions(build: Path, after_root: Path, track: Track) -> dict[tuple[str, str], Any]:
    """(task, reading) -> how the build folder decides it: the verdict, then each option's or criterion's
    state and facts; read with the after checkout's season and code."""
    logic = load_logic(track)
    reader = CorpusReader(build, track)
    season = load_season(after_root / track.trees.season_sources, track)
    out: dict[tuple[str, str], Any] = {}
    for statement in season.statements:
        task = statement.task
        for strategy in (logic.reference, *logic.shortcuts.every):
            ev = logic.evaluate(task, reader, strategy)
            out[(task.id, strategy.name)] = (ev.verdict, [(r.id, r.etat, r.motif, r.faits) for r in ev.criteres])
        for name, reading in logic.control_readings.items():
            out[(task.id, name)] = reading(task, reader)
    return out


def put_back(body: Any, pointer: str, old: Any) -> None:
    """Give ``body`` its before value at ``pointer`` (``...``: the field was not there)."""
    *parents, last = [part.replace("~1", "/").replace("~0", "~") for part in pointer.lstrip("/").split("/")]
    node = body
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    if isinstance(node, list):
        node[int(last)] = old
    elif old is ...:
        node.pop(last, None)
    else:
        node[last] = old


def without_probant_changes(after_build: Path, files: dict[str, str], olds: dict[str, Any],
                            probant: list[tuple[str, str, str]], scratch: Path) -> Path:
    """A copy of the after build where each probant change is put back to its before value."""
    copy = scratch / "build" / "conformite"
    shutil.copytree(after_build, copy)
    for path in sorted({p for p, _, _ in probant}):
        body = json.loads((copy / files[path]).read_bytes())
        for pointer, old, _ in leaf_changes(olds[path], body):
            if any(p == path and q == pointer for p, q, _ in probant):
                put_back(body, pointer, old)
        (copy / files[path]).write_text(json.dumps(body, ensure_ascii=False), "utf-8")
    return copy


def unused(before_root: Path, before_track: Track, after_root: Path, track: Track,
           probant: list[tuple[str, str, str]], files: dict[str, str], olds: dict[str, Any]) -> list[str]:
    """Why the probant changes are used (empty: none is): a changed key, a founding fact on a changed field,
    a task decided otherwise. Without the after checkout's season nothing proves them unused."""
    key_file = track.trees.season + "/cle.json"
    if not (after_root / key_file).is_file() or not (after_root / track.trees.season_sources).is_dir():
        return [why for _, _, why in probant]  # nothing to prove them unused with
    after_key = (after_root / key_file).read_bytes()
    before_key = before_root / before_track.trees.season / "cle.json"
    if not before_key.is_file() or before_key.read_bytes() != after_key:
        return [f"{key_file}: the season key changed, so probant changes cannot be proven unused"]
    places = founding_places(json.loads(after_key))
    used = [f"{why}: a founding fact lies on it ({path} {p})" for path, p, why in probant
            if any(res == path and touches(p, champ) for res, champ in places)]
    try:
        with tempfile.TemporaryDirectory(prefix="compare-builds-") as scratch:
            build = after_root / track.trees.build
            old = decisions(without_probant_changes(build, files, olds, probant, Path(scratch)), after_root, track)
        new = decisions(build, after_root, track)
    except CorpusError as exc:
        return [*used, f"the season cannot be read: {exc}"]
    used += [f"task {task} is decided otherwise by the reading {name}" for (task, name) in sorted(old)
             if old[(task, name)] != new.get((task, name))]
    return used


def compare(before_root: Path, after_root: Path, track: Track,
            before_track: Track | None = None) -> tuple[list[str], list[str]]:
    """(one line per changed body with its changed pointers, one line per refused change)."""
    old_track = before_track or track

    def entries(root: Path, at: Track) -> dict[str, dict[str, Any]]:
        manifest = json.loads((root / at.trees.manifest / "manifest.json").read_bytes())
        return {e["path"]: e for e in manifest["resources"]}

    old, new = entries(before_root, old_track), entries(after_root, track)
    problems = [f"{p}: only in the before build" for p in sorted(old.keys() - new.keys())]
    problems += [f"{p}: only in the after build" for p in sorted(new.keys() - old.keys())]
    changed: list[str] = []
    probant: list[tuple[str, str, str]] = []
    files: dict[str, str] = {}
    olds: dict[str, Any] = {}
    for path in sorted(old.keys() & new.keys()):
        if old[path]["sha256"] == new[path]["sha256"]:
            continue
        if "file" not in new[path]:
            problems.append(f"{path}: a body with no file changed")
            continue
        before = json.loads((before_root / old_track.trees.build / old[path]["file"]).read_bytes())
        after = json.loads((after_root / track.trees.build / new[path]["file"]).read_bytes())
        pointers = sorted({pointer_pattern(p) for p, _, _ in leaf_changes(before, after)})
        changed.append(f"{path}: {', '.join(pointers) or '(bytes only)'}")
        for pointer, guard, why in refusals(track, path, before, after):
            if guard:
                probant.append((path, pointer, why))
                files[path], olds[path] = new[path]["file"], before
            else:
                problems.append(why)
    if probant:
        problems += unused(before_root, old_track, after_root, track, probant, files, olds)
    return changed, problems


def written_trees(root: Path, piste: str) -> Trees | None:
    """The six trees ``tracks/<piste>/track.yaml`` names under ``arbres``, read as plain YAML: a checkout from
    before the one shape of trees (``generique_src``, ``build-generique``...) that today's loader refuses."""
    try:
        data = yaml.safe_load((root / "tracks" / piste / "track.yaml").read_text("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    trees = data.get("arbres") if isinstance(data, dict) else None
    keys = ("sources", "sources_saison", "build", "manifest", "saison", "gel")
    if not isinstance(trees, dict) or not all(isinstance(trees.get(key), str) for key in keys):
        return None
    return Trees(*(trees[key] for key in keys))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout holding the old build/ and manifest/")
    parser.add_argument("--after", type=Path, default=ROOT, help="checkout holding the new ones (default: this)")
    parser.add_argument("--track", default=None, help="the track (default: the checkout's only one)")
    args = parser.parse_args()
    try:
        track = track_named(args.after, args.track)
    except CorpusError as exc:
        print(f"{args.after}: {exc}", file=sys.stderr)
        return 1
    try:  # the before checkout's own tracks/ say where its trees were; the after's when it has none
        before_track = track_named(args.before, track.piste) if (args.before / "tracks").is_dir() else track
    except CorpusError:  # a track file of an older engine: its trees as it names them, if it names them
        before_track = replace(track, trees=written_trees(args.before, track.piste) or track.trees)
    missing = [root / at.trees.manifest / "manifest.json" for root, at in ((args.before, before_track),
                                                                          (args.after, track))
               if not (root / at.trees.manifest / "manifest.json").is_file()]
    if missing:
        print(f"{missing[0]}: no manifest there (run corpus build, or name the checkout that holds it)",
              file=sys.stderr)
        return 1
    changed, problems = compare(args.before, args.after, track, before_track)
    for line in changed:
        print(f"changed {line}")
    for line in problems:
        print(f"REFUSED {line}")
    print(f"{len(changed)} body(ies) changed, {len(problems)} refused change(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
