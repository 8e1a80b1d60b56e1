"""``corpus check-season``: prove the season against the built corpus before anyone freezes it.

Each rule of the season (docs/season.md) is one function returning problems; :func:`check_season` runs
them all and also returns the figures of the closing report (per-task table, shortcuts, best constant
answer).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.base.bounded_read import read_bounded
from generator.base.errors import Location, Problem, unreadable_text
from generator.base.text_policy import SHOWN_CHARACTERS, cut
from generator.contract.hashing import sha256_hex
from generator.proving.control_check import check_control
from generator.reading.evaluation import Evaluation, Strategy
from generator.reading.founding import FoundingFact, fonde_par, founding_facts
from generator.reading.graph import Graph, concerns_entity, first_page, probant_facts, task_graph
from generator.reading.logic import TrackLogic, load_logic
from generator.reading.reader import MISSING, CorpusReader, Fact, resolve_pointer
from generator.reading.referentiel import consumed_fields
from generator.reading.season_model import KeyEntry, Season, Statement, not_a_start
from generator.tracks.model import Track, file_for


@dataclass
class TaskReport:
    statement: Statement
    entry: KeyEntry | None
    evaluation: Evaluation
    shortcuts: dict[str, str]  # strategy name -> verdict
    proper_facts: int = 0
    common_facts: int = 0
    founding: list[FoundingFact] = field(default_factory=list)


@dataclass
class SeasonReport:
    tasks: list[TaskReport] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    best_constant: tuple[str, int] = ("", 0)

    def wrong_by(self, strategy: Strategy) -> list[str]:
        return [t.statement.task.id for t in self.tasks if t.entry is not None
                and t.shortcuts[strategy.name] != t.entry.verdict]


def _json(value: object) -> str:
    """Values as an author writes them in JSON (``false``, ``"false"``), not as Python prints them."""
    return json.dumps(value, ensure_ascii=False)


def _problem(where: Location, task_id: str, message: str) -> Problem:
    return Problem(where, task_id, message)


def check_fact(reader: CorpusReader, graph: Graph, report: TaskReport, fact: Fact, where: Location,
               label: str, *, exact: bool = True) -> list[Problem]:
    """A founding fact (or one of its forms) is in the graph, probant, served exactly, admissible.

    ``exact=False`` skips the served-value check, for a fact whose changed value :func:`check_rule` says once,
    with the fix."""
    task = report.statement.task
    text = f"{label} ({fact.ressource}, {fact.champ}) = {_json(fact.valeur)}"
    if fact.ressource not in graph:
        return [_problem(where, task.id, f"{text} lies outside the task's graph (spec §5.2)")]
    if not reader.is_probant(fact.ressource, fact.champ):
        found = reader.track.collection_of(fact.ressource)
        prefix = found.prefix if found else fact.ressource
        return [_problem(where, task.id, f"{text} is not on a probant field of {prefix} (spec §5.7)")]
    served = resolve_pointer(reader.fetch(fact.ressource), fact.champ)
    problems = []
    if exact and (served is MISSING or type(served) is not type(fact.valeur) or served != fact.valeur):
        shown = "nothing" if served is MISSING else _json(served)
        problems.append(_problem(where, task.id, f"{text} is not served exactly: the corpus serves {shown}"))
    if not concerns_entity(reader, task, graph, fact):
        problems.append(_problem(where, task.id, f"{text} is on a common-list entry that does not concern "
                                 "the entity (spec §5.2)"))
    return problems


def check_task(reader: CorpusReader, logic: TrackLogic[Any], report: TaskReport) -> list[Problem]:
    st, entry, ev = report.statement, report.entry, report.evaluation
    bareme = reader.track.bareme
    task_id = st.task.id
    problems: list[Problem] = []
    if entry is None:
        return [_problem(st.location, task_id, "the key has no entry for this task")]
    bounds = bareme.bounds.get(task_id)
    if bounds is None:
        problems.append(_problem(st.location, task_id, f"not a task of the barème ({bareme.section})"))
    elif (st.minimum, st.plafond) != bounds:
        problems.append(_problem(st.location, task_id, f"assertions minimum {st.minimum}, plafond {st.plafond}; "
                                 f"the barème ({bareme.section}, bareme.bornes of "
                                 f"tracks/{reader.track.piste}/track.yaml) fixes {bounds[0]} and {bounds[1]}"))
    missing = check_task_names(reader, st)
    if missing:  # one cause, said once: what the evaluator made of a missing resource is no news
        return [*problems, *missing]
    if ev.verdict != entry.verdict:
        problems.append(_problem(entry.location, task_id, f"the evaluator gives {ev.verdict}, the key says "
                                 f"{entry.verdict}"))
    calls_min, calls_max = bareme.calls
    if not calls_min <= len(ev.calls) <= calls_max:
        problems.append(_problem(st.location, task_id, f"decided in {len(ev.calls)} corpus calls; a task must "
                                 f"be decidable in {calls_min} to {calls_max}"))
    graph = task_graph(reader, st.task)
    report.founding = founding_facts(reader, logic, ev)
    stale = stale_facts(entry, report.founding)
    for i, kf in enumerate(entry.faits):
        for n, form in enumerate(kf.forms):
            label = "founding fact" if n == 0 else "equivalent form"
            changed = n == 0 and i in stale  # its value changed in the corpus: check_rule says it, with the fix
            problems += check_fact(reader, graph, report, form, kf.location, label, exact=not changed)
    # With fonde_par: un_critere one deciding criterion's facts found the verdict: each group must fit.
    groups = Counter(k.critere for k in entry.faits) if entry.fonde_par == "un_critere" else \
        Counter({"": len(entry.faits)})
    for critere, count in sorted(groups.items()):
        if count > st.plafond:
            of = f" of {critere}" if critere else ""
            problems.append(_problem(entry.location, task_id, f"{count} founding facts{of} exceed the "
                                     f"ceiling of {st.plafond} assertions"))
    proper, common = probant_facts(reader, st.task, graph)
    report.proper_facts, report.common_facts = len(proper), len(common)
    need_proper = math.ceil(st.minimum / 2)
    if len(proper) < need_proper or len(proper) + len(common) < st.minimum:
        problems.append(_problem(st.location, task_id, f"cannot reach its assertion minimum of {st.minimum}: "
                                 f"the graph offers {len(proper)} distinct probant facts on proper resources "
                                 f"(at least {need_proper} needed) and {len(common)} admissible on common lists"))
    problems += check_trap(logic, report) + check_control(reader, logic, st, entry)
    problems += check_rule(report, stale)
    return problems


def check_task_names(reader: CorpusReader, st: Statement) -> list[Problem]:
    """The task's start and the common lists it opens are served by the built corpus; each is said at the
    field of the statement that names it."""
    track, task = reader.track, st.task
    sources = track.trees.sources
    problems = []
    start_field = track.graph.start
    if start_field is not None and track.graph.start_collection is not None:
        start = task.field(start_field)
        collection = track.collection(track.graph.start_collection)
        where = f"taches[{st.index}].{start_field}"
        if not collection.matches(start):  # load_season refuses it; a Statement built otherwise may not
            return [Problem(st.field_location(start_field), where, not_a_start(track, start))]
        if resolve_pointer(reader.fetch(start), "/existe") is not True:
            folder = collection.source.folder or sources
            problems.append(Problem(st.field_location(start_field), where, f"task {task.id} names {start}, "
                                    "which the built corpus does not serve (existe: false): name "
                                    f"{'an' if collection.label[:1] in 'aeiou' else 'a'} {collection.label} of "
                                    f"{sources}/{folder}/, or add {start.removeprefix(collection.prefix)} there "
                                    "and rebuild; the task's other checks are skipped"))
    for common in track.graph.common:
        page = first_page(track, common, task)
        if resolve_pointer(reader.fetch(page), "/existe") is True:
            continue
        listed = track.collection(common.collection)
        fields = [value[1:] for _, value in common.first_page if value.startswith("=")]
        named = fields[0] if fields else start_field or ""
        value = task.field(named)
        shown = value if len(value) <= SHOWN_CHARACTERS else f"{value[:SHOWN_CHARACTERS]}…"
        label = track.vocabulary_label(f"{common.collection}.{named}") or named
        folder = listed.source.folder or listed.source.file or sources
        article = "an" if label[:1] in "aeiouéè" else "a"
        problems.append(Problem(st.field_location(named), f"taches[{st.index}].{named}", f"task {task.id} names "
                                f"{label} {cut(value)}, which has no {listed.label} in the built corpus "
                                f"({page.replace(value, shown)} is not served): name {article} {label} of "
                                f"{sources}/{folder}/, or write {sources}/{folder}/{shown}.yaml and rebuild; the "
                                "task's other checks are skipped"))
    return problems


def _shown(fact: Fact) -> str:
    return f"({fact.ressource}, {fact.champ}) = {_json(fact.valeur)}"


def _signature(critere: str, forms: tuple[Fact, ...]) -> tuple[str, str, tuple[str, ...]]:
    return (critere, _shown(forms[0]), tuple(sorted(_shown(f) for f in forms[1:])))


def stale_facts(entry: KeyEntry, derived: list[FoundingFact]) -> dict[int, FoundingFact]:
    """The key's facts (by index) whose place (criterion, resource, field) the rule derives with another
    value: a served value changed since the key was written. One cause, said once."""
    by_place = {(f.critere, f.fact.ressource, f.fact.champ): f for f in derived}
    out = {}
    for index, kf in enumerate(entry.faits):
        fact = by_place.get((kf.critere, kf.fact.ressource, kf.fact.champ))
        if fact is not None and _json(fact.fact.valeur) != _json(kf.fact.valeur):
            out[index] = fact
    return out


def check_rule(report: TaskReport, stale: dict[int, FoundingFact]) -> list[Problem]:
    """The key's founding facts are exactly what the published rule derives (generator.reading.founding):
    ``report.founding``, of which ``stale`` are the facts whose served value changed (:func:`stale_facts`)."""
    entry = report.entry
    assert entry is not None
    task_id = report.statement.task.id
    derived = report.founding
    wanted = {_signature(f.critere, f.forms): f for f in derived}
    held = {_signature(k.critere, k.forms): k for k in entry.faits}
    problems = []
    for index, fact in sorted(stale.items()):  # one line per changed value
        kf = entry.faits[index]
        held.pop(_signature(kf.critere, kf.forms), None)
        wanted.pop(_signature(fact.critere, fact.forms), None)
        now = _json(fact.fact.valeur)
        problems.append(_problem(kf.location, task_id, f"the key holds the founding fact {_shown(kf.fact)} for "
                                 f"{kf.critere}, but the corpus serves {now} there and the rule derives the fact "
                                 f"with that value: write {now} here (when a served value changes, the key "
                                 "changes with it), then run corpus build-season"))
    rule = fonde_par(report.evaluation, derived)
    if entry.fonde_par != rule:
        which = "any one deciding criterion" if rule == "un_critere" else "every deciding criterion"
        problems.append(_problem(entry.location, task_id, f"the rule derives fonde_par: {rule} (the facts of "
                                 f"{which} found the verdict); the key says {entry.fonde_par}"))
    for sig in sorted(set(wanted) - set(held)):
        forms = "; ".join(_shown(f) for f in wanted[sig].equivalents) or "none"
        problems.append(_problem(entry.location, task_id, f"the rule derives the founding fact {sig[1]} for "
                                 f"{sig[0]} (equivalent forms: {forms}), which the key does not hold as such"))
    for sig in sorted(set(held) - set(wanted)):
        problems.append(_problem(held[sig].location, task_id, f"the key holds the founding fact {sig[1]} for "
                                 f"{sig[0]} with {len(sig[2])} equivalent form(s), which the rule does not "
                                 "derive (spec §5.7; docs/season.md, founding facts)"))
    return problems


def check_trap(logic: TrackLogic[Any], report: TaskReport) -> list[Problem]:
    """The family's shortcut must answer wrong; on the control, every shortcut must answer right."""
    entry = report.entry
    assert entry is not None
    task_id = report.statement.task.id
    named = logic.shortcuts.named
    if entry.famille == "controle" and entry.raccourci is not None:
        return [_problem(entry.location, task_id, "the control task has no trap, so no 'raccourci'")]
    if entry.raccourci is not None and entry.raccourci not in named:
        return [_problem(entry.location, task_id, f"unknown 'raccourci' {entry.raccourci!r}; one of "
                         f"{', '.join(sorted(named))}")]
    if entry.famille == "controle":
        return [_problem(entry.location, task_id, f"control task: the shortcut {name} answers {verdict} "
                         f"instead of {entry.verdict}; a control must be answered right by every shortcut")
                for name, verdict in report.shortcuts.items() if verdict != entry.verdict]
    allowed = logic.shortcuts.named_by_family.get(entry.famille)
    if allowed is not None and entry.raccourci not in allowed:
        return [_problem(entry.location, task_id, f"{entry.famille} task needs 'raccourci', one of "
                         f"{', '.join(sorted(allowed))} (found {entry.raccourci!r})")]
    strategy = logic.shortcuts.of_trap(entry.famille, entry.raccourci)
    assert strategy is not None
    together = allowed.values() if allowed is not None and entry.famille in logic.shortcuts.beaten_together \
        else ()
    return [_problem(entry.location, task_id, f"the trap does not trap: the {entry.famille} shortcut "
                     f"{s.name} ({s.label}) also reaches {entry.verdict}")
            for s in dict.fromkeys([strategy, *together]) if report.shortcuts[s.name] == entry.verdict]


def check_composition(season: Season, where: Location, track: Track) -> list[Problem]:
    """The barème's season table: verdict distribution (a reference verdict counted by its class, each
    reference once when the barème publishes them distinct), every family present, family minimums,
    controls."""
    bareme = track.bareme
    problems = []
    entries = list(season.key.values())
    statement_ids = Counter(s.task.id for s in season.statements)
    for task_id in sorted(set(season.key) - set(statement_ids)):
        problems.append(_problem(season.key[task_id].location, task_id, "key entry without a task statement"))
    for statement in season.statements:
        if statement_ids[statement.task.id] > 1:
            problems.append(_problem(statement.location, statement.task.id, "duplicate task statement (each "
                                     "task id is stated once)"))
    for task_id in sorted(set(bareme.bounds) - set(statement_ids)):
        problems.append(_problem(where, task_id, f"task of the barème ({bareme.section}) without a statement"))
    verdicts = Counter(track.verdict_class(e.verdict) or e.verdict for e in entries)
    ref = track.verdict_reference
    if ref is not None and ref.distinct:
        for verdict, n in sorted(Counter(e.verdict for e in entries).items()):
            if n > 1 and track.verdict_class(verdict) == ref.name:
                problems.append(_problem(where, "verdicts", f"{verdict} is the expected verdict of {n} tasks; the "
                                         f"barème publishes every {ref.name} distinct"))
    if dict(verdicts) != bareme.verdicts:
        shown = ", ".join(f"{verdicts.get(v, 0)} {v}" for v in bareme.verdicts)
        wanted = ", ".join(f"{n} {v}" for v, n in bareme.verdicts.items())
        problems.append(_problem(where, "verdicts", f"expected verdicts must be {wanted}; the key has {shown}"))
    families = Counter(e.famille for e in entries)
    for family in bareme.families:
        if not families.get(family):
            problems.append(_problem(where, "familles", f"family {family} has no task"))
    for family, least in bareme.family_minimum.items():
        if families.get(family, 0) < least:
            problems.append(_problem(where, "familles", f"{family} must be on at least {least} tasks "
                                     f"(found {families.get(family, 0)})"))
    if families.get("controle", 0) != bareme.controls:
        count = "exactly one control task" if bareme.controls == 1 else f"exactly {bareme.controls} control tasks"
        problems.append(_problem(where, "familles", f"{count} without a trap is required "
                                 f"(found {families.get('controle', 0)})"))
    return problems


def best_constant(season: Season) -> tuple[str, int]:
    counts = Counter(e.verdict for e in season.key.values())
    verdict, count = max(sorted(counts.items()), key=lambda item: item[1])
    return verdict, count


def check_referentiel(reader: CorpusReader, evaluations: list[Evaluation]) -> list[Problem]:
    """/referentiel declares exactly the probant fields, and the evaluator consumes only what it declares.

    Two tables say what is probant: the scorer's close rule reads the référentiel's ``champs``
    (:func:`generator.reading.referentiel.consumed_fields`), the panel and the graph read the track's
    ``probants`` (``track.yaml``). This check compares exactly those two tables, both ways, so they cannot
    drift apart."""
    track = reader.track
    where = Location(f"{track.trees.build}/{file_for(track.referentiel)}")
    referentiel = reader.fetch(track.referentiel)
    declared = {(c["id"], prefix, pattern) for c in referentiel["criteres"]
                for prefix, patterns in c["champs"].items() for pattern in patterns}
    probant = {(c.prefix, pattern) for c in track.collections for pattern in c.probant}
    listed = {(prefix, pattern) for prefix, patterns in consumed_fields(referentiel).items()
              for pattern in patterns}
    problems = [Problem(where, "criteres", f"{prefix}{pattern.lstrip('/')} is declared but is not a probant "
                        "field of spec §5.7") for prefix, pattern in sorted(listed - probant)]
    problems += [Problem(where, "criteres", f"probant field {pattern} of {prefix} is consumed by no criterion")
                 for prefix, pattern in sorted(probant - listed)]
    consumed = set().union(*(ev.consumed for ev in evaluations)) if evaluations else set()
    problems += [Problem(where, "criteres", f"the evaluator's {crit} consumes {pattern} of {prefix}, which "
                         f"{crit}'s champs do not list") for crit, prefix, pattern in sorted(consumed - declared)]
    return problems


_SECTION_LIMIT = 4 * 1024 * 1024
_BOUNDS_ROW = re.compile(r"^\|\s*(\S+)\s*\|\s*([0-9]+)\s*\|\s*([0-9]+)\s*\|\s*$")


def _line_of(text: str, key: str, after: str = "") -> int:
    """The 1-based line of ``key:`` in ``text`` (the first after the line ``after:``), 0 when absent."""
    lines, start = text.splitlines(), 0
    if after:
        start = next((i for i, line in enumerate(lines) if line.startswith(f"{after}:")), 0)
    return next((i + 1 for i, line in enumerate(lines[start:], start) if line.strip().startswith(f"{key}:")), 0)


def check_bareme(root: Path, track: Track) -> list[Problem]:
    """The barème is kept once: the section file is the truth; ``track.yaml`` publishes its SHA-256 and repeats
    its bounds table, and each copy is checked against it, naming the file to edit (the statements are held
    against ``track.yaml``'s bounds task by task). The table: the section's rows ``| <task id> | min | max |``."""
    bareme = track.bareme
    definition = f"tracks/{track.piste}/track.yaml"
    try:
        written = (track.folder / "track.yaml").read_text("utf-8")
    except OSError:
        written = ""
    try:
        data = read_bounded(root / bareme.file, _SECTION_LIMIT)
    except OSError as exc:
        return [Problem(Location(definition, _line_of(written, "fichier", "bareme"), 3), "bareme.fichier",
                        unreadable_text(bareme.file, exc, "the barème section names it"))]
    problems = []
    digest = sha256_hex(data)
    if digest != bareme.sha256:
        problems.append(Problem(Location(definition, _line_of(written, "sha256", "bareme"), 3), "bareme.sha256",
                                f"{bareme.file} hashes to {digest}, not to the published {bareme.sha256}: "
                                f"restore {bareme.file}, or, if the section changed on purpose (a new season, "
                                f"a new version), write its new SHA-256 here"))
    table: dict[str, tuple[tuple[int, int], int]] = {}
    for number, text in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
        row = _BOUNDS_ROW.match(text)
        if row and re.fullmatch(track.task_id, row.group(1)):
            table[row.group(1)] = ((int(row.group(2)), int(row.group(3))), number)
    bounds_line = _line_of(written, "bornes", "bareme")
    for task_id in sorted(table.keys() | bareme.bounds.keys()) if table else ():  # a section without a table
        # (the tests' essai track) is held by its SHA-256 alone
        section, line = table.get(task_id, (None, 0))
        copy = bareme.bounds.get(task_id)
        if section == copy:
            continue
        if section is None:
            assert copy is not None  # the two differ
            said = f"{task_id} has bounds {copy[0]}, {copy[1]} in {definition} but no row in the section's table"
        elif copy is None:
            said = f"{task_id} has a row ({section[0]}, {section[1]}) in the section's table but no bounds here"
        else:
            said = (f"{task_id}: the section's table (line {line}) fixes minimum {section[0]}, plafond "
                    f"{section[1]}; here they are {copy[0]}, {copy[1]}")
        problems.append(Problem(Location(definition, bounds_line, 3), "bareme.bornes", f"{said}: the section "
                                f"{bareme.file} is the truth, make bareme.bornes of {definition} repeat it"))
    return problems


def check_season(season: Season, reader: CorpusReader, key_location: Location) -> SeasonReport:
    """Run every rule; the report carries the problems and the figures."""
    report = SeasonReport()
    logic = load_logic(reader.track)
    bareme = reader.track.bareme
    evaluations = []
    for statement in season.statements:
        evaluation = logic.evaluate(statement.task, reader)
        shortcuts = {s.name: logic.evaluate(statement.task, reader, s) for s in logic.shortcuts.every}
        evaluations += [evaluation, *shortcuts.values()]
        task_report = TaskReport(statement, season.key.get(statement.task.id), evaluation,
                                 {name: ev.verdict for name, ev in shortcuts.items()})
        report.tasks.append(task_report)
        report.problems += check_task(reader, logic, task_report)
    report.problems += check_composition(season, key_location, reader.track)
    report.best_constant = best_constant(season)
    wins, out_of = bareme.best_constant
    if season.key and report.best_constant[1] * out_of != wins * len(season.key):
        report.problems.append(_problem(key_location, "verdicts", f"the best constant answer "
                                        f"({report.best_constant[0]}) scores {report.best_constant[1]}/"
                                        f"{len(season.key)}; it must be {wins}/{out_of}"))
    report.problems += check_referentiel(reader, evaluations)
    report.problems += check_bareme(reader.track.folder.parent.parent, reader.track)  # beside tracks/
    report.problems.sort()
    return report
