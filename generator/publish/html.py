"""The index and the reports as static HTML pages: one Jinja2 environment of their own, templates found by
name in ``generator/templates/index/``, every value HTML-escaped (autoescape), no script, nothing loaded from
elsewhere (the style is in the page): a page reads the same opened from a disk or served as a file."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import jinja2

from generator.publish import french, wording
from generator.publish.publication import Publication
from generator.publish.published import IndexJson, InvalidatedIndexJson, RapportJson

TEMPLATES = Path(__file__).resolve().parents[1] / "templates" / "index"


def overclaim_text(overclaim: object) -> str:
    """``2/41 (4,9 %)``; ``sans objet`` for the constant line or when nothing was rendered."""
    if not isinstance(overclaim, dict):
        return wording.SANS_OBJET
    if overclaim.get("taux") is None:
        return f"{wording.SANS_OBJET} (aucune assertion rendue)"
    return f"{overclaim['non_etayees']}/{overclaim['rendues']} ({wording.percent(overclaim['taux'])})"


def value_text(value: object) -> str:
    return json.dumps(value, ensure_ascii=False)


_DICT_NAMES = frozenset(dir(dict))  # what ``x.name`` finds on a dict before its key of that name


class _Environment(jinja2.Environment):
    """Jinja2's environment, ``x.name`` on a dict read as Jinja2 reads it, without its detour: Jinja2 tries the
    attribute first and catches the failure, then the key; a report holds hundreds of such lookups (issue 43).
    A name a dict has as an attribute (``items``...) still takes Jinja2's own way."""

    def getattr(self, obj: object, attribute: str) -> object:
        if type(obj) is dict and attribute not in _DICT_NAMES:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


@functools.cache
def environment() -> jinja2.Environment:
    """One environment for a run: each template is parsed and compiled once, not once per page."""
    env = _Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                             keep_trailing_newline=True)
    env.filters.update(overclaim=overclaim_text, valeur=value_text, non_verifie=french.unchecked_line,
                       incident=french.incident_line)
    env.globals.update(w=wording)
    return env


def render_index(index: IndexJson, pub: Publication) -> str:
    return environment().get_template("index.html.j2").render(index=index, pub=pub)


def render_report(report: RapportJson, pub: Publication) -> str:
    return environment().get_template("rapport.html.j2").render(r=report, pub=pub)


def render_invalidated(index: InvalidatedIndexJson) -> str:
    """The page of an invalidated season: when, why, and no table (spec §8)."""
    return environment().get_template("invalidee.html.j2").render(index=index, pub={"brouillon": False})
