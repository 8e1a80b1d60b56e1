"""A task drawing as Graphviz DOT text, and the ``dot`` program that turns it into SVG or PNG.

DOT is written here rather than through a Python binding: the text is the whole interface, it is
deterministic (sorted model, no timestamps), diffable, and needs only the Debian ``graphviz`` package.
Two escapings meet: quoted DOT strings (ids, tooltips, classes: backslash and double quote) and
HTML-like labels (``&``, ``<``, ``>``, quotes). Every served or authored text goes through one of them.

Conventions, so a reader (and a test parsing the SVG) can rely on them: a node's id is its canonical
path and its classes say ``propre`` or ``liste-commune``, ``absent`` (dashed, grey) when the resource
answers ``existe: false``, ``appel`` when the reference reading fetches it, ``fondement`` and
``fondement-CN`` when a founding fact of the key lies on one of its fields; an edge's id is
``source#pointer``, its label the pointer, its classes ``lien`` and, likewise, ``fondement``.
"""

from __future__ import annotations

import html
import shutil
import subprocess
import textwrap
from collections.abc import Iterable
from pathlib import Path

from generator.base.atomic_file import write_atomic
from generator.drawing.task_drawing import (
    GROUP_PROPER,
    NOT_EVALUATED,
    STATE_LABELS,
    Edge,
    Mark,
    Node,
    TaskDrawing,
)
from generator.reading.evaluation import FAUX, NON_ETABLI, VRAI

FONT = "Helvetica"
# A drawing wider than a 1400 px window (1050 pt at 96 px per inch) is scaled down by dot to fit it.
MAX_SIZE = "14.5,1000"
STATE_COLOURS = {VRAI: "#2e7d32", FAUX: "#c62828", NON_ETABLI: "#e65100", NOT_EVALUATED: "#757575"}
ABSENT_COLOUR = "#9e9e9e"
CALL_COLOUR = "#1565c0"
DOT_TIMEOUT = 60  # seconds; one task's graph takes well under one


class DotError(Exception):
    """``dot`` is missing, failed or timed out: a message for the user, no traceback."""


def quoted(text: str) -> str:
    """A DOT quoted string (ids, tooltips, classes); newlines become DOT's ``\\n``."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def esc(text: object) -> str:
    """Text inside an HTML-like label."""
    return html.escape(str(text), quote=True)


_STRENGTH = (FAUX, NON_ETABLI, VRAI, NOT_EVALUATED)


def _colour(marks: Iterable[Mark]) -> str:
    """The colour of the strongest state among the criteria the marks serve (faux, then non établissable);
    called only with at least one mark."""
    return STATE_COLOURS[min((m.highlight.etat for m in marks), key=_STRENGTH.index)]


def _criteria(mark: Mark) -> str:
    return mark.highlight.text + (" *" if mark.highlight.decisif else "")


def _classes(*names: str) -> str:
    return " ".join(n for n in names if n)


def _fondement_classes(marks: tuple[Mark, ...]) -> list[str]:
    if not marks:
        return []
    ids = sorted({m.highlight.critere for m in marks})
    return ["fondement", *(f"fondement-{i}" for i in ids)]


def _node(node: Node) -> str:
    grey = not node.existe
    font = ABSENT_COLOUR if grey else "black"
    border = _colour(node.marks) if node.marks else \
        (ABSENT_COLOUR if grey else "#424242")
    call = (f'<TD BGCOLOR="{CALL_COLOUR}"><FONT COLOR="white"><B>{node.call}</B></FONT></TD>'
            if node.call is not None else "")
    span = ' COLSPAN="2"' if call else ""
    rows = [f'<TR>{call}<TD ALIGN="LEFT"><FONT COLOR="{font}"><B>{esc(node.path)}</B></FONT></TD></TR>']
    rows += [f'<TR><TD{span} ALIGN="LEFT"><FONT COLOR="{font}" POINT-SIZE="9">{esc(line)}</FONT></TD></TR>'
             for line in node.summary if line]
    for mark in node.marks:
        colour = _colour((mark,))
        rows.append(f'<TR><TD{span} ALIGN="LEFT" BGCOLOR="{colour}20"><FONT COLOR="{colour}" POINT-SIZE="9">'
                    f'<B>{esc(_criteria(mark))}</B>  {esc(mark.text)}</FONT></TD></TR>')
    style = []
    if node.group == GROUP_PROPER:
        style.append("ROUNDED")
    if grey:
        style.append("DASHED")
    bg = "#fafafa" if grey else ("white" if node.group == GROUP_PROPER else "#f3f6fb")
    width = 3 if node.marks else 1
    table = (f'<TABLE BORDER="{width}" CELLBORDER="0" CELLSPACING="0" CELLPADDING="3" COLOR="{border}" '
             f'BGCOLOR="{bg}"{" STYLE=" + chr(34) + ",".join(style) + chr(34) if style else ""}>'
             + "".join(rows) + "</TABLE>")
    tooltip = [node.path, "existe: false (absent du corpus)" if grey else "",
               f"appel n° {node.call} de la lecture de référence" if node.call else "jamais lue par la référence",
               *(f"{_criteria(m)} : {m.text}" + "".join(f"\n  ≡ {e}" for e in m.equivalentes) for m in node.marks)]
    classes = _classes("propre" if node.group == GROUP_PROPER else "liste-commune", node.collection,
                       "absent" if grey else "", "appel" if node.call else "", *_fondement_classes(node.marks))
    return (f"    {quoted(node.path)} [id={quoted(node.path)}, class={quoted(classes)}, "
            f"tooltip={quoted(chr(10).join(t for t in tooltip if t))}, label=<{table}>];")


def _edge(edge: Edge, absent_target: bool) -> str:
    label = esc(edge.pointer)
    attrs = [f"id={quoted(edge.id)}"]
    if edge.marks:
        colour = _colour(edge.marks)
        crit = "; ".join(_criteria(m) for m in edge.marks)
        label = f'{label}<BR/><FONT COLOR="{colour}"><B>{esc(crit)}</B></FONT>'
        attrs += [f'color="{colour}"', "penwidth=2.5", f'fontcolor="{colour}"']
    if absent_target:
        attrs += ["style=dashed", f'color="{ABSENT_COLOUR}"'] if not edge.marks else ["style=dashed"]
    tooltip = [f"{edge.source} {edge.pointer} = {edge.target}", *(f"≡ {r} = {edge.source}" for r in edge.reverse),
               *(f"{_criteria(m)} : {m.text}" for m in edge.marks)]
    classes = _classes("lien", "vers-absent" if absent_target else "", *_fondement_classes(edge.marks))
    attrs += [f"class={quoted(classes)}", f"tooltip={quoted(chr(10).join(tooltip))}", f"label=<{label}>"]
    return f"  {quoted(edge.source)} -> {quoted(edge.target)} [{', '.join(attrs)}];"


def _title(d: TaskDrawing) -> str:
    task, s = d.statement.task, d.statement
    crits = "  ".join(f'<FONT COLOR="{STATE_COLOURS.get(h.etat, "black")}">{esc(h.critere)} '
                      f'{esc(STATE_LABELS.get(h.etat, h.etat))}{" *" if h.decisif else ""}</FONT>'
                      for h in d.criteres)
    mismatch = "" if d.verdict_cle == d.verdict_evalue else \
        f'  <FONT COLOR="{STATE_COLOURS[FAUX]}"><B>≠ clé</B></FONT>'
    lines = [f"<B>{esc(task.id)}</B>  {esc(d.heading)}",
             f"clé : <B>{esc(d.verdict_cle)}</B> ({esc(d.famille)}) · évalué : <B>{esc(d.verdict_evalue)}</B>"
             f"{mismatch} · assertions {s.minimum}–{s.plafond} · {len(d.calls)} appel(s)",
             crits]
    lines += [esc(part) for part in textwrap.wrap(f"Piège : {d.piege}", 110)] if d.piege else []
    lines += [f'<FONT COLOR="{STATE_COLOURS[FAUX]}">{esc(w)}</FONT>' for w in
              (*(f"appel hors graphe : {p}" for p in d.calls_outside),
               *(f"fait fondateur hors graphe : {f}" for f in d.stray))]
    return "".join(f'{line}<BR ALIGN="LEFT"/>' for line in lines)


_PROPER_STYLE = 'style="rounded"; color="#424242"'
_COMMON_STYLES = ('style="filled"; color="#90a4ae"; fillcolor="#e3eaf5"',
                  'style="filled"; color="#90a4ae"; fillcolor="#eeeeee"')  # the common lists, in turn


def to_dot(d: TaskDrawing) -> str:
    """The DOT text of one task: three clusters (own resources, each common list), links, title."""
    task = d.statement.task
    out = [f"digraph {quoted(task.id)} {{",
           f"  graph [rankdir=LR, fontname={quoted(FONT)}, fontsize=11, labelloc=t, labeljust=l, "
           f"nodesep=0.25, ranksep=0.6, size={quoted(MAX_SIZE)}, tooltip={quoted(task.id)}, label=<{_title(d)}>];",
           f"  node [shape=plain, fontname={quoted(FONT)}, fontsize=10];",
           f'  edge [fontname={quoted(FONT)}, fontsize=9, color="#424242", arrowsize=0.7];']
    for index, (group, label) in enumerate(d.clusters):
        members = [n for n in d.nodes if n.group == group]
        if not members:
            continue
        style = _PROPER_STYLE if group == GROUP_PROPER else _COMMON_STYLES[(index - 1) % len(_COMMON_STYLES)]
        out += [f"  subgraph {quoted('cluster_' + group)} {{",
                f"    label={quoted(label)}; {style}; fontsize=10;"]
        out += [_node(n) for n in members]
        out.append("  }")
    absent = {n.path for n in d.nodes if not n.existe}
    out += [_edge(e, e.target in absent) for e in d.edges]
    out.append("}")
    return "\n".join(out) + "\n"


def dot_program() -> str:
    found = shutil.which("dot")
    if found is None:
        raise DotError("Graphviz's 'dot' is not installed: run 'make setup' (installs the Debian package "
                       "graphviz) or 'apt-get install graphviz'")
    return found


def render(dot: str, fmt: str, dest: Path) -> None:
    """Run ``dot`` on the text and put its output at ``dest`` (mode 0600: the picture reveals the key),
    renamed into place only once complete."""
    try:
        result = subprocess.run([dot_program(), f"-T{fmt}"], input=dot.encode("utf-8"),
                                capture_output=True, timeout=DOT_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise DotError(f"dot did not finish {dest.name} within {DOT_TIMEOUT} s") from None
    if result.returncode != 0:
        raise DotError(f"dot failed on {dest.name} (exit {result.returncode}): "
                       f"{result.stderr.decode('utf-8', 'replace').strip()}")
    write_atomic(dest, result.stdout, mode=0o600)
