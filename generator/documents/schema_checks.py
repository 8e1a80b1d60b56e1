"""A record checked against its JSON Schema and for real calendar dates, each error worded for an author.

Used by the validator of a track's sources, by the track loader and the season's sources, and by the
scorer (:func:`schema_message` on submissions, whose schemas carry no annotations).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from generator.base.errors import Problem
from generator.base.text_policy import bad_text, cut
from generator.documents.dates import is_false_day
from generator.documents.records import Record, error_at
from generator.documents.schemas import SchemaError, all_valid, errors


def json_path(parts: Iterable[str | int]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def refused_in(value: str) -> str:
    """What makes a pattern-constrained value unusable besides its form: a refused character, a line feed."""
    return bad_text(value) or ("a line feed is not allowed here" if "\n" in value else "")


def format_words(subschema: dict[str, object]) -> tuple[str, str, str] | None:
    """What a pattern means in words, from the annotations beside it: ``title`` (what the value is, "an
    amount"), ``description`` (how to write one) and ``examples`` (the first is shown); None when absent."""
    title, how, examples = subschema.get("title"), subschema.get("description"), subschema.get("examples")
    if isinstance(title, str) and isinstance(how, str) and isinstance(examples, list) and examples:
        return title, how, json.dumps(examples[0], ensure_ascii=False)
    return None


def schema_message(err: SchemaError) -> str:
    """The schema's message, a pattern worded from its annotations (:func:`format_words`; the pattern as the
    schema file writes it only where a schema has none), long values cut."""
    message = err.message
    if err.keyword == "pattern" and isinstance(err.instance, str):
        found = refused_in(err.instance)
        words = format_words(err.schema)
        said = f"{cut(err.instance)} is not {words[0]}: {words[1]}, as {words[2]}" if words else \
            f"{cut(err.instance)} does not match {err.detail!r}"
        return said + (f" ({found})" if found else "")
    if err.keyword == "required":
        return f"missing required field: {err.detail!r}"
    if err.keyword == "oneOf" and isinstance(err.instance, str | type(None)):
        return f"{cut(err.instance)} is not valid here ({err.schema.get('description') or 'see schema'})"
    if err.instance is True or err.instance is False or err.instance is None:  # as written: true, not True
        return message.replace(repr(err.instance), {True: "true", False: "false", None: "null"}[err.instance], 1)
    if isinstance(err.instance, str) and len(err.instance) > 60:
        return message.replace(repr(err.instance), cut(err.instance))
    return message


def check_schemas(records: Iterable[Record]) -> list[Problem]:
    """:func:`check_schema` of every record, those of one schema first checked together (:func:`all_valid`):
    only the records of a schema that one of them breaks are checked one by one, to word each error."""
    groups: dict[tuple[str, Path | None], list[Record]] = {}
    for record in records:
        groups.setdefault((record.schema_name, record.schemas), []).append(record)
    problems: list[Problem] = []
    for (name, folder), group in groups.items():
        if not all_valid(name, [record.data for record in group], folder):
            for record in group:
                problems += check_schema(record)
    return problems


def check_schema(record: Record) -> list[Problem]:
    """Draft 2020-12 validation; each error located at the deepest value the sources know."""
    problems = []
    for err in errors(record.schema_name, record.data, record.schemas):
        parts = list(err.path)
        container, key = record.data, None
        for part in parts:
            try:
                inner = container[part]
            except (KeyError, IndexError, TypeError):
                break
            if isinstance(inner, dict | list):
                container, key = inner, None
            else:
                key = part
                break
        if err.keyword == "additionalProperties" and isinstance(container, dict):
            for name in err.detail:
                problems.append(error_at(record, name, json_path([*parts, name]),
                                       "unknown field (not in the schema of "
                                       f"{record.schema_name}; check its spelling)", container))
            continue
        message = schema_message(err)
        if err.property_name and key is None and isinstance(container, dict) \
                and err.instance in container:  # a badly named key: point at the key, not its mapping
            problems.append(error_at(record, err.instance, json_path([*parts, err.instance]),
                                   f"key {message}", container))
            continue
        problems.append(error_at(record, key, json_path(parts), message, container))
    return problems


def check_dates(record: Record) -> list[Problem]:
    """A value shaped like a date must be a day that exists, in whatever field a track names it
    (``date_fin_validite``, ``fin_validite``, ``releve_le``, ``du``...). Nothing to look for in a record whose
    file the loader found free of false days (:attr:`Record.days_checked`, every record of a build but those
    at fault); any other is walked first without naming anything, then again to name each false day."""
    problems: list[Problem] = []
    if not record.days_checked and _false_day_in(record.data):
        _check_dates_in(record, record.data, (), problems)
    return problems


def _false_day_in(value: object) -> bool:
    """Whether :func:`_check_dates_in` would find a problem in ``value``: a mapping's string value somewhere
    in it shaped like a date but no real day (an explicit stack, no field path made)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for inner in node.values():
                if isinstance(inner, str):
                    if len(inner) == 10 and is_false_day(inner):
                        return True
                elif isinstance(inner, dict | list):
                    stack.append(inner)
        elif isinstance(node, list):
            stack.extend(node)  # its strings are not looked at (as in the walk), its containers are
    return False


def _check_dates_in(record: Record, value: object, parts: tuple[str | int, ...], problems: list[Problem]) -> None:
    """Recursive walk that builds a field path only for containers, not for every scalar (a hot loop)."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if isinstance(inner, str):
                if is_false_day(inner):
                    problems.append(error_at(record, key, json_path((*parts, key)),
                                           f"{inner!r} is not a real calendar date", value))
            elif isinstance(inner, dict | list):
                _check_dates_in(record, inner, (*parts, key), problems)
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            if isinstance(inner, dict | list):
                _check_dates_in(record, inner, (*parts, index), problems)
