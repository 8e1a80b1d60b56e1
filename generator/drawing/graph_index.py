"""``index.html`` beside the pictures: the tasks drawn, their key verdict, family, bounds, and each picture.

A static page with relative links, to open from the file system in a browser; every text is
HTML-escaped (statements and traps hold accents, quotes and apostrophes).
"""

from __future__ import annotations

from html import escape

from generator.drawing.dot_text import ABSENT_COLOUR, CALL_COLOUR, STATE_COLOURS
from generator.drawing.task_drawing import STATE_LABELS, TaskDrawing
from generator.tracks.model import Track

_STYLE = """
body { font-family: Helvetica, Arial, sans-serif; margin: 1.5em; color: #212121; }
table { border-collapse: collapse; margin-bottom: 1.5em; }
th, td { border: 1px solid #bdbdbd; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
.ecart { color: #c62828; font-weight: bold; }
.alerte { background: #fff3e0; border: 1px solid #e65100; padding: 0.5em; }
section { margin: 2em 0; border-top: 1px solid #bdbdbd; }
img, object { max-width: 100%; height: auto; border: 1px solid #eeeeee; }
.pastille { display: inline-block; padding: 0 0.4em; color: white; border-radius: 0.2em; }
"""


def _legend(track: Track) -> str:
    """The reading of a picture, in the track's own words: its proper resources, its common and shared
    clusters (``track.yaml``'s ``dessin`` and collections), then what the marks mean."""
    states = " ".join(f'<span class="pastille" style="background:{STATE_COLOURS[s]}">{escape(label)}</span>'
                      for s, label in STATE_LABELS.items())
    grey = [track.collection(c.collection).label for c in track.graph.common]
    grey += [track.drawing.groups.get(name) or track.collection(name).label for name in track.graph.shared]
    return (f"<p>Lecture : cadre arrondi : {escape(track.drawing.proper)} ; cadres grisés : "
            f"{escape(', '.join(dict.fromkeys(grey)) or 'aucun')} ; une ressource absente "
            f'(<code>existe: false</code>) est en pointillés gris (<span style="color:{ABSENT_COLOUR}">absente'
            f'</span>) ; <span class="pastille" style="background:{CALL_COLOUR}">n</span> est le rang de son '
            "appel dans la lecture de référence ; les liens portent le pointeur JSON qui les porte ; les faits "
            f"fondateurs de la clé sont surlignés avec leur critère et son état : {states} "
            "(<code>*</code> : le critère décide le verdict).</p>")


def _row(d: TaskDrawing, picture: str) -> str:
    task, s = d.statement.task, d.statement
    evaluated = escape(d.verdict_evalue)
    if d.verdict_evalue != d.verdict_cle:
        evaluated = f'<span class="ecart">{evaluated} ≠ clé</span>'
    return (f'<tr><td><a href="#{escape(task.id)}">{escape(task.id)}</a></td><td>{escape(d.famille)}</td>'
            f"<td>{escape(d.verdict_cle)}</td><td>{evaluated}</td><td>{s.minimum}–{s.plafond}</td>"
            f"<td>{len(d.calls)}</td><td>{escape(d.heading)}</td>"
            f'<td><a href="{escape(picture)}">{escape(picture)}</a></td></tr>')


def _section(d: TaskDrawing, picture: str) -> str:
    task = d.statement.task
    image = f'<img src="{escape(picture)}" alt="graphe de {escape(task.id)}">'
    if picture.endswith(".svg"):  # an <object> keeps the SVG's tooltips (facts, equivalent forms) live
        image = f'<object data="{escape(picture)}" type="image/svg+xml">{image}</object>'
    return (f'<section id="{escape(task.id)}"><h2>{escape(task.id)} : {escape(d.verdict_cle)} '
            f"({escape(d.famille)})</h2><p>{escape(d.statement.question)}</p>"
            f"<p><b>Piège :</b> {escape(d.piege)}</p>"
            f'<p><a href="{escape(picture)}">{escape(picture)}</a></p>{image}</section>')


def index_html(track: Track, saison: str, drawings: list[tuple[TaskDrawing, str]]) -> str:
    """The track's page for ``(drawing, picture file name)`` pairs, in the order given."""
    head = ("<tr><th>tâche</th><th>famille</th><th>verdict (clé)</th><th>évalué</th><th>assertions</th>"
            "<th>appels</th><th>énoncé</th><th>image</th></tr>")
    section = f" ({escape(track.drawing.section)})" if track.drawing.section else ""
    title = f"{escape(track.title)} — saison {escape(saison)} : graphes des tâches"
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="fr">', "<head>", '<meta charset="utf-8">',
        f"<title>{title}</title>", f"<style>{_STYLE}</style>", "</head>",
        "<body>", '<p><a href="../index.html">toutes les pistes</a></p>', f"<h1>{title}{section}</h1>",
        _WARNING, _legend(track), f"<table>{head}", *(_row(d, p) for d, p in drawings), "</table>",
        *(_section(d, p) for d, p in drawings), "</body>", "</html>", ""])


def top_index_html(tracks: list[tuple[Track, str]]) -> str:
    """``run/graphs/index.html``: one link per track drawn, to its own index (``<piste>/index.html``)."""
    items = [f'<li><a href="{escape(link)}">{escape(track.title)}</a> (<code>{escape(track.piste)}</code>)</li>'
             for track, link in tracks]
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="fr">', "<head>", '<meta charset="utf-8">',
        "<title>Graphes des tâches, par piste</title>", f"<style>{_STYLE}</style>", "</head>", "<body>",
        "<h1>Graphes des tâches, par piste</h1>", _WARNING,
        "<p>Deux pistes, jamais agrégées (spec §6) : chacune a ses tâches, sa clé et sa page.</p>",
        "<ul>", *items, "</ul>", "</body>", "</html>", ""])


_WARNING = ('<p class="alerte">Ces images révèlent la clé scellée (familles, verdicts, faits fondateurs) : '
            "elles restent sous <code>run/</code>, hors de tout ce qui est servi, jusqu'à la clôture.</p>")
