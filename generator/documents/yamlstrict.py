"""A YAML loader that never changes a value's type, or a character, behind the author's back.

PyYAML's SafeLoader follows YAML 1.1: ``no`` becomes ``False``, ``2026-03-31`` a ``date``, ``0755`` an
octal integer, ``1e3`` a float. A corpus served byte-for-byte cannot afford any of it, so here a scalar is
a string unless it is written exactly ``true``, ``false`` or ``null``; a duplicate key is an error.

The loader is bounded by construction (docs/authoring.md, "What the loader refuses"): it builds values
straight from libyaml's event stream with an explicit stack (no recursion, so no depth can crash it), and
it refuses what an author never needs and an attacker loves: anchors and aliases (the "billion laughs"),
every explicit tag (``!``, ``!!str``, ``!<...>``, ``%TAG``), nesting deeper than :data:`MAX_DEPTH`, text
that is not UTF-8, and characters outside the policy of :mod:`generator.base.text_policy`. Mappings and
sequences remember where each item was written so that the validator can name ``file:line:column``.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Protocol

import yaml
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    NodeEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from generator.base.errors import GeneratorError, Location, Problem
from generator.base.jsonvalue import JsonValue
from generator.base.text_policy import (
    MAX_DEPTH,
    MAX_FILE_BYTES,
    bad_key,
    bad_text,
    decode_source,
    escaped,
    is_nfc,
    line_column,
    raw_problem,
)
from generator.documents.dates import is_false_day

try:  # libyaml's parser is what makes a 10,000-entity corpus load quickly; fall back when absent.
    _Parser: type = yaml.CBaseLoader  # only its parser is used: values are built from its events here
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Parser = yaml.BaseLoader

_PLAIN_WORDS = {"true": True, "false": False, "null": None}

# Characters that the policy lets a source hold raw (text_policy.raw_problem), whatever it says of the others: a
# text of these only is not asked about (one scan of a single character class, where the policy's own pattern
# costs twice as much). A test checks each of them against raw_problem.
_NOT_SURELY_ALLOWED = re.compile("[^\n -~\u00a0-\u200d\u2010-\u2027\u202f-\u2065\u206a-\ufefe\uff00-\ufffd"
                                 "\U00010000-\U0010ffff]")


class YamlProblem(GeneratorError):
    """A source that cannot be loaded; carries the problem with its position."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))


class Mark(Protocol):
    """Where libyaml saw a key, an item or a container start (0-based): the start mark of its event, kept as
    libyaml made it, since copying its line and column into a tuple for each of millions of events cost a tenth
    of loading. :func:`position` reads it as an editor counts."""

    @property
    def line(self) -> int: ...

    @property
    def column(self) -> int: ...


def position(mark: Mark) -> tuple[int, int]:
    """The 1-based line and column of ``mark``."""
    return mark.line + 1, mark.column + 1


class LocatedDict(dict[str, object]):
    """A mapping that knows the position of each of its keys (and of itself)."""

    __slots__ = ("mark", "marks")
    mark: Mark
    marks: dict[str, Mark]


class LocatedList(list[object]):
    """A sequence that knows the position of each of its items (and of itself)."""

    __slots__ = ("mark", "marks")
    mark: Mark
    marks: list[Mark]


# Keys that broke no character rule and are in NFC (a key is checked once a run); never true, false, null nor
# ``<<``, which are refused unquoted.
_CLEAN_KEYS: set[str] = set()


def _pos(event: yaml.Event) -> tuple[int, int]:
    start = event.start_mark
    assert start is not None  # libyaml marks every event it sends
    return start.line + 1, start.column + 1


class _Frame:
    """An open mapping or sequence, as the methods that word a problem read it (:meth:`_Builder.sync`)."""

    __slots__ = ("container", "is_map", "key", "marks")

    def __init__(self, container: LocatedDict | LocatedList, is_map: bool, marks: Any, key: str | None) -> None:
        self.container = container
        self.is_map = is_map
        self.marks = marks  # {key: mark} or [mark], shared with the loop that fills the container
        self.key = key  # a mapping's key whose value is being read


# One open container of the loop in :meth:`_Builder.build`: (container, is a mapping, its marks, pending key).
_Open = tuple[Any, bool, Any, "str | None"]


class _Builder:
    """Turns one document's events into LocatedDict / LocatedList / str / bool / None."""

    def __init__(self, parser: Any, source_name: str, check_nfc: bool) -> None:
        self.parser = parser
        self.source_name = source_name
        self.check_nfc = check_nfc
        self.stack: list[_Frame] = []
        self.false_day = False  # a mapping's value shaped like a date that is no real day, met somewhere

    def field(self) -> str:
        """The field path of the value being read (``agrements[0].statut``), as the validator names it."""
        out = ""
        for frame in self.stack:
            if frame.is_map:
                if frame.key is not None:
                    out += f".{frame.key}" if out else frame.key
            else:
                out += f"[{len(frame.container)}]"
        return out

    def fail(self, event: yaml.Event, message: str, field: str | None = None) -> YamlProblem:
        line, column = _pos(event)
        where = self.field() if field is None else field
        return YamlProblem(Problem(Location(self.source_name, line, column), where, message))

    def short_field(self, more: bool = False) -> str:
        """The first levels of :meth:`field`, then ``…``: a depth message stays short, however deep the
        nesting or long its keys."""
        parts: list[str] = []
        for frame in self.stack:
            if frame.is_map:
                if frame.key is not None:
                    key = escaped(frame.key[:_SHOWN_KEY]) + ("…" if len(frame.key) > _SHOWN_KEY else "")
                    parts.append(f".{key}" if parts else key)
            else:
                parts.append(f"[{len(frame.container)}]")
        more = more or len(parts) > _SHOWN_LEVELS
        return "".join(parts[:_SHOWN_LEVELS]) + ("…" if more else "")

    def too_deep(self, mark: tuple[int, int], start: tuple[int, int] | None = None, more: bool = False) \
            -> YamlProblem:
        """Level ``MAX_DEPTH + 1`` opens at ``mark``: one line naming the limit and where the nesting starts.

        The nesting starts at the outermost of the containers that each open as the first item of their
        parent, up from the one too deep (``start``: the innermost of them that the builder has not opened,
        for libyaml's look-ahead, see :meth:`libyaml_too_deep`); the file's top level is not part of it.
        """
        frames = self.stack[1:]
        if start is None and frames:
            start = position(frames.pop().container.mark)
        while frames and not frames[-1].container:
            start = position(frames.pop().container.mark)
        where = f"; the nesting starts at line {start[0]}, column {start[1]}" if start else ""
        return YamlProblem(Problem(Location(self.source_name, *mark), self.short_field(more),
                                   f"nesting deeper than {MAX_DEPTH} levels is not allowed (level "
                                   f"{MAX_DEPTH + 1} opens here{where})"))

    def libyaml_too_deep(self, exc: yaml.MarkedYAMLError, text: str) -> YamlProblem:
        """libyaml's own flow limit (1,000 levels), reached while it looks ahead through ``[[[[`` for a key.

        The events of that run were never sent, so the place where level ``MAX_DEPTH + 1`` opens is found in
        the text: back from libyaml's mark over the run of ``[``, ``{`` and blanks, then forward counting
        levels. Worded as the loader's own limit, which is the one an author must meet.
        """
        mark = exc.problem_mark
        assert mark is not None  # libyaml's depth error always carries the place it stopped
        end = _offset(text, mark.line, mark.column)
        begin = end
        while begin > 0 and text[begin - 1] in _FLOW_RUN:
            begin -= 1
        while begin < end and text[begin] == " ":
            begin += 1
        first = line_column(text, begin)  # containers of the run that the builder has opened already
        level, found = sum(1 for frame in self.stack if position(frame.container.mark) < first), None
        for index in range(begin, end):
            if text[index] in "[{":
                level += 1
                if level > MAX_DEPTH:
                    found = index
                    break
        if found is None:  # pragma: no cover - libyaml stops at 1,000 levels, far past MAX_DEPTH
            return self.too_deep((mark.line + 1, mark.column + 1), None, True)
        start = line_column(text, begin) if begin < end else None
        return self.too_deep(line_column(text, found), start, True)

    def _refuse_decorations(self, event: NodeEvent, field: str | None = None) -> None:
        if event.anchor is not None:
            kind, sign = ("aliases", "*") if isinstance(event, AliasEvent) else ("anchors", "&")
            raise self.fail(event, f"YAML {kind} are not allowed ({sign}{_cut(event.anchor)}): write each "
                            "value out", field)
        tag = getattr(event, "tag", None)
        if tag is not None:
            shown = tag.replace("tag:yaml.org,2002:", "!!", 1)  # as the author wrote it
            raise self.fail(event, f"explicit tag {_cut(shown)!r} is not allowed: write the value without a "
                            "tag (a plain string, or exactly true, false or null)", field)

    def _scalar(self, event: ScalarEvent) -> JsonValue:
        value = event.value
        if event.implicit[0] and value in _PLAIN_WORDS:
            return _PLAIN_WORDS[value]
        if event.style == '"':  # only escapes (\x85, \u2028, \0...) can bring a refused character in
            found = bad_text(value)
            if found:
                raise self.fail(event, found)
        if self.check_nfc and not is_nfc(value):
            raise self.fail(event, "text not in Unicode NFC form (write composed characters, e.g. 'é' as "
                            "one character); see docs/authoring.md")
        return value

    def _key(self, frame: _Frame, event: yaml.Event) -> str:
        if not isinstance(event, ScalarEvent) or (event.implicit[0] and event.value in _PLAIN_WORDS):
            raise self.fail(event, "a mapping key must be a plain string")
        key = event.value
        if event.tag is not None or event.anchor is not None:  # a key is a name: no tag, no anchor either
            self._refuse_decorations(event, self._join(escaped(_cut(key))))
        if key == "<<" and event.implicit[0]:
            raise self.fail(event, "merge keys ('<<') are not allowed: write each field out", self._join(key))
        if key in _CLEAN_KEYS:  # a name met before, allowed and in NFC: most keys of a build
            first = frame.marks.get(key)
            if first is not None:
                raise self.fail(event, f"duplicate key (first written at line {first.line + 1})", self._join(key))
            return key
        found = bad_key(key)
        if found:
            raise self.fail(event, found, self._join(escaped(_cut(key))))
        if is_nfc(key) and len(_CLEAN_KEYS) < 1 << 16 and key not in _PLAIN_WORDS and key != "<<":
            _CLEAN_KEYS.add(key)  # never a word the fast path of build() must still refuse unquoted
        if self.check_nfc and not is_nfc(key):
            composed = unicodedata.normalize("NFC", key)
            twin = frame.marks.get(composed)
            also = f"; its NFC form is already a key at line {twin.line + 1}" if twin else ""
            raise self.fail(event, f"key not in Unicode NFC form{also}", self._join(key))
        first = frame.marks.get(key)
        if first is not None:
            raise self.fail(event, f"duplicate key (first written at line {first.line + 1})", self._join(key))
        return key

    def _join(self, key: str) -> str:
        head = self.field()
        return f"{head}.{key}" if head else key

    def sync(self, saved: list[_Open], top: _Open) -> None:
        """Set :attr:`stack` from the state of :meth:`build`'s loop, for the methods that word a problem."""
        self.stack = [_Frame(*state) for state in (*saved, top) if state[0] is not None]

    def build(self) -> object:
        """Read the events of one value (the document's root) and return it.

        The loop every load runs for each event (2.3 million for a 10,000-entity corpus): the open container
        is kept in locals and the enclosing ones in ``saved``, and the common events (a key already met, a
        plain value, a container opened or closed) are handled inline. Anything else goes through the
        methods above, which name the field from :attr:`stack` as :meth:`sync` sets it.
        """
        get_event = self.parser.get_event
        check_nfc = self.check_nfc
        clean, words, normalized = _CLEAN_KEYS, _PLAIN_WORDS, unicodedata.is_normalized
        saved: list[_Open] = []  # the enclosing containers, outermost first
        container: Any = None  # the open container (None before the document's root)
        is_map = False
        marks: Any = None  # the open container's marks: {key: mark} or [mark]
        key: str | None = None  # the key whose value is being read (a mapping)
        try:
            while True:
                event = get_event()
                cls = event.__class__  # where it starts, event.start_mark, is read only where it is kept
                if is_map and key is None and cls is not MappingEndEvent:  # a mapping's key
                    if cls is ScalarEvent and event.tag is None and event.anchor is None:
                        key = event.value
                        if key not in clean or key in marks:  # a name not met yet, or twice: in full
                            self.sync(saved, (container, is_map, marks, None))
                            key = self._key(self.stack[-1], event)
                    else:
                        self.sync(saved, (container, is_map, marks, None))
                        key = self._key(self.stack[-1], event)  # raises: no plain string, or decorated
                    marks[key] = event.start_mark  # kept as it is (:class:`Mark`)
                    continue
                value: object
                if cls is ScalarEvent:
                    text: str = event.value
                    if event.tag is not None or event.anchor is not None:
                        self.sync(saved, (container, is_map, marks, key))
                        self._refuse_decorations(event)
                    if text in words and event.implicit[0]:
                        value = words[text]
                    elif event.style == '"' or (check_nfc and not text.isascii() and not normalized("NFC", text)):
                        self.sync(saved, (container, is_map, marks, key))
                        value = self._scalar(event)  # checked in full (escapes, NFC)
                    else:
                        value = text
                    if container is None:
                        return value
                    if is_map:
                        container[key] = value
                        key = None
                        if len(text) == 10 and text[4] == "-" and is_false_day(text):  # as check_dates sees it
                            self.false_day = True
                    else:
                        marks.append(event.start_mark)
                        container.append(value)
                elif cls is MappingStartEvent or cls is SequenceStartEvent:
                    start = event.start_mark
                    if event.tag is not None or event.anchor is not None:
                        self.sync(saved, (container, is_map, marks, key))
                        self._refuse_decorations(event)
                    if container is not None:
                        if len(saved) + 1 >= MAX_DEPTH:
                            self.sync(saved, (container, is_map, marks, key))
                            raise self.too_deep(position(start))
                        if not is_map:
                            marks.append(start)  # an item's position is where it starts
                        saved.append((container, is_map, marks, key))
                    is_map = cls is MappingStartEvent
                    container = LocatedDict() if is_map else LocatedList()
                    container.mark = start
                    marks = {} if is_map else []
                    key = None
                elif cls is MappingEndEvent or cls is SequenceEndEvent:
                    container.marks = marks
                    if not saved:
                        return container
                    value = container
                    container, is_map, marks, key = saved.pop()
                    if is_map:
                        container[key] = value
                        key = None
                    else:
                        container.append(value)  # its position was noted when it started
                else:
                    self.sync(saved, (container, is_map, marks, key))
                    if cls is AliasEvent:  # an alias always names its anchor: refused there
                        self._refuse_decorations(event)
                    raise self.fail(event, f"unexpected YAML event {cls.__name__}")  # pragma: no cover
        except yaml.MarkedYAMLError:  # libyaml stopped: the caller words it, some cases from the stack
            self.sync(saved, (container, is_map, marks, key))
            raise


_SHOWN_LEVELS = 3  # levels of the field path a depth message shows
_SHOWN_KEY = 20  # characters of each key it shows
_FLOW_RUN = "[{ "  # what a run of flow openers that libyaml looks ahead through is made of


def _offset(text: str, line: int, column: int) -> int:
    """Index in ``text`` of a 0-based (line, column) mark, lines counted at line feeds as libyaml does."""
    index = 0
    for _ in range(line):
        index = text.index("\n", index) + 1
    return index + column


def _cut(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def _single_document(parser: Any, source_name: str, check_nfc: bool, text: str) -> tuple[Any, bool]:
    parser.get_event()  # StreamStartEvent
    start = parser.get_event()
    if isinstance(start, StreamEndEvent):
        return None, False  # an empty file, or only comments
    assert isinstance(start, DocumentStartEvent)
    if start.tags:
        raise _builder_problem(start, source_name, "%TAG directives are not allowed: write values without tags")
    builder = _Builder(parser, source_name, check_nfc)
    try:
        data = builder.build()
    except yaml.MarkedYAMLError as exc:
        if exc.problem_mark is not None and "maximum nesting depth" in (exc.problem or ""):
            raise builder.libyaml_too_deep(exc, text) from None
        raise
    parser.get_event()  # DocumentEndEvent
    after = parser.get_event()
    if not isinstance(after, StreamEndEvent):
        raise _builder_problem(after, source_name, "YAML syntax: expected a single document in the stream "
                               "but found another document")
    return data, builder.false_day


def _builder_problem(event: yaml.Event, source_name: str, message: str) -> YamlProblem:
    line, column = _pos(event)
    return YamlProblem(Problem(Location(source_name, line, column), "", message))


def load_text(text: str | bytes, source_name: str) -> object:
    """Load one YAML document strictly; raise :class:`YamlProblem` naming the source and position."""
    return load_noting_days(text, source_name)[0]


def load_noting_days(text: str | bytes, source_name: str) -> tuple[object, bool]:
    """:func:`load_text`, and whether a mapping's value somewhere in the document is shaped like a date but no
    real day (``2026-02-30``), which the date check names: where there is none, it has nothing to look for."""
    if len(text) > MAX_FILE_BYTES:
        raise YamlProblem(Problem(Location(source_name), "", f"file larger than {MAX_FILE_BYTES} bytes: split "
                                  "it, or ask for the limit to be raised (docs/authoring.md)"))
    decoded = decode_source(text, source_name)
    if isinstance(decoded, Problem):
        raise YamlProblem(decoded)
    refused = raw_problem(decoded, source_name) if _NOT_SURELY_ALLOWED.search(decoded) is not None else None
    if refused is not None:
        raise YamlProblem(refused)
    parser = _Parser(decoded)
    try:
        return _single_document(parser, source_name, not decoded.isascii(), decoded)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)  # no raw U+2028: lines as edited
        message = " ".join(part for part in (exc.context, exc.problem) if part)
        raise YamlProblem(Problem(Location(source_name, line, column), "", f"YAML syntax: {message}")) from None
    except yaml.YAMLError as exc:  # pragma: no cover - every libyaml error carries a mark
        raise YamlProblem(Problem(Location(source_name), "", f"YAML: {exc}")) from None
    finally:
        parser.dispose()


def location_of(container: object, key: str | int | None, file: str) -> Location:
    """Best-known position of ``container[key]`` (or of the container itself when key is None)."""
    if key is not None:
        marks = getattr(container, "marks", None)
        try:
            if marks is not None:
                mark = marks[key]
                return Location(file, mark.line + 1, mark.column + 1)
        except (KeyError, IndexError, TypeError):
            pass
    mark = getattr(container, "mark", None)
    if mark is not None:
        return Location(file, mark.line + 1, mark.column + 1)
    return Location(file)
