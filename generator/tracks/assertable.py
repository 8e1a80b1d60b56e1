"""What may be asserted, said once: the table of pointer patterns a track's référentiel serves in
``assertions.champs_qui_s_affirment``, and the one rule that any other pointer rejects the submission.

The table is generated, never written: the compiler puts into the served référentiel the union of the
patterns its criteria consume (``criteres[].champs``, spec §5.7 / §6.7: a field no criterion consumes
rejects the submission), and the scorer applies exactly the table it reads back from the served bytes
(:func:`served_table`). What a participant reads and what the scorer applies are therefore one table; the
season check holds it equal to ``track.yaml``'s ``probants`` and a test to the barème section's own table.

The pointer shapes (an element of an array, a whole entry, the entries' array, the navigation fields, the
body of an absent resource) are decided once for every track, by the table alone: docs/authoring.md says
which and why, and :func:`shape_problems` checks a track's table against those decisions.
"""

from __future__ import annotations

from typing import Any

from generator.tracks.model import Track

STATEMENT = "assertions"  # the référentiel's key that holds the statement
TABLE = "champs_qui_s_affirment"  # its generated table: collection prefix -> pointer patterns
INDEX = "<n>"  # an array index in a pattern (0, 1, 2...), as in the barème's table


def consumed_fields(referentiel: Any) -> dict[str, frozenset[str]]:
    """Collection prefix -> the pointer patterns some criterion of the référentiel consumes (``champs``)."""
    found: dict[str, set[str]] = {}
    for critere in referentiel.get("criteres", []) if isinstance(referentiel, dict) else []:
        champs = critere.get("champs") if isinstance(critere, dict) else None
        for prefix, patterns in (champs or {}).items():
            found.setdefault(prefix, set()).update(patterns)
    return {prefix: frozenset(patterns) for prefix, patterns in found.items()}


def table(track: Track, referentiel: Any) -> dict[str, list[str]]:
    """The served table: per collection, in the track's order, the patterns the criteria consume, in the
    order of the track's ``probants`` (the barème's), any other after them sorted; a prefix that is no
    collection's (the season check names it) keeps its place after the collections."""
    consumed = consumed_fields(referentiel)
    out: dict[str, list[str]] = {}
    for collection in track.collections:
        patterns = consumed.get(collection.prefix, frozenset())
        if patterns:
            out[collection.prefix] = [p for p in collection.probant if p in patterns] + \
                sorted(patterns - set(collection.probant))
    for prefix in sorted(set(consumed) - set(out)):
        out[prefix] = sorted(consumed[prefix])
    return out


def with_statement(track: Track, referentiel: dict[str, Any]) -> dict[str, Any]:
    """The référentiel as served: its ``assertions`` block (the source's, or an empty one after ``objet``)
    gets the generated table right after its ``regle``."""
    generated = table(track, referentiel)
    source = referentiel.get(STATEMENT)
    block: dict[str, Any] = {}
    for key, value in (source.items() if isinstance(source, dict) else ()):
        block[key] = value
        if key == "regle":
            block[TABLE] = generated
    block.setdefault(TABLE, generated)
    if STATEMENT in referentiel:
        return {key: (block if key == STATEMENT else value) for key, value in referentiel.items()}
    out: dict[str, Any] = {}
    for key, value in referentiel.items():
        out[key] = value
        if key == "objet":
            out[STATEMENT] = block
    out.setdefault(STATEMENT, block)
    return out


def served_table(referentiel: Any) -> dict[str, frozenset[str]]:
    """The table a served référentiel states (empty when it states none): what the scorer applies."""
    block = referentiel.get(STATEMENT) if isinstance(referentiel, dict) else None
    found = block.get(TABLE) if isinstance(block, dict) else None
    if not isinstance(found, dict):
        return {}
    return {prefix: frozenset(p for p in patterns if isinstance(p, str))
            for prefix, patterns in found.items() if isinstance(prefix, str) and isinstance(patterns, list)}


def shape_problems(track: Track, assertable: dict[str, frozenset[str]]) -> list[str]:
    """Where a track's table departs from the shapes decided once for every track (docs/authoring.md): an
    element ``<array>/<n>`` only where its whole array may be asserted (the converse, every element of an
    assertable array, needs the served bodies: ``tests/proving/test_season_lures_2.py``); never a whole entry
    ``/entrees/<n>``, the entries' array ``/entrees``, ``/ressource``, ``/page`` or an absent body's
    ``/message``; ``/page_suivante`` on the pages proper to a task (paginated, not a common list), and only
    there; ``/existe`` on a record, never on a page. Empty when the table keeps them all."""
    common = {c.collection for c in track.graph.common}
    problems: list[str] = []
    for collection in track.collections:
        patterns = assertable.get(collection.prefix, frozenset())
        name = collection.prefix
        problems += [f"{name}: {p} may be asserted, but not its whole array" for p in sorted(patterns)
                     if p.endswith("/" + INDEX) and p.removesuffix("/" + INDEX) not in patterns]
        problems += [f"{name}: {p or 'the empty pointer'} may never be asserted"
                     for p in ("", "/entrees", f"/entrees/{INDEX}", "/ressource", "/page", "/message")
                     if p in patterns]
        if ("/page_suivante" in patterns) != (collection.paginated and collection.name not in common):
            problems.append(f"{name}: /page_suivante is asserted on the pages proper to a task, and only there")
        if collection.paginated and "/existe" in patterns:
            problems.append(f"{name}: a page's /existe is never asserted")
    return problems
