"""A YAML loader that never changes a value's type behind the author's back.

PyYAML's SafeLoader follows YAML 1.1: ``no`` becomes ``False``, ``2026-03-31`` a ``date``, ``0755`` an
octal integer, ``1e3`` a float. A corpus served byte-for-byte cannot afford any of it, so here a scalar is
a string unless it is written exactly ``true``, ``false`` or ``null``; explicit tags are refused, and a
duplicate key is an error. Mappings and sequences remember where each item was written so that the
validator can name ``file:line:column`` for any field.
"""

from __future__ import annotations

from typing import Any

import yaml

from generator.errors import Location, Problem

try:  # The C parser is what makes a 10,000-entity corpus load quickly; fall back when absent.
    _BaseLoader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _BaseLoader = yaml.SafeLoader

# Private tags, given only by ``resolve`` (which PyYAML calls only for nodes written without a tag): a node
# carrying any other tag, even a standard one such as ``!!str`` or ``!!map``, was tagged by the author.
_STR = "tag:proveit-corpus,implicit:str"
_MAP = "tag:proveit-corpus,implicit:map"
_SEQ = "tag:proveit-corpus,implicit:seq"
_BOOL = "tag:proveit-corpus,implicit:bool"
_NULL = "tag:proveit-corpus,implicit:null"
_PLAIN_WORDS = {"true": (_BOOL, True), "false": (_BOOL, False), "null": (_NULL, None)}


class YamlProblem(Exception):
    """A source that cannot be loaded; carries the problem with its position."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))

    def within(self, part: str | int) -> YamlProblem:
        """The same problem, its field prefixed by the key or index that contains it.

        Raised from deep inside a document, the problem then names the full field path
        (``agrements[0].statut``), the way the validator names fields.
        """
        head = f"[{part}]" if isinstance(part, int) else part
        inner = self.problem.field
        field = head if not inner else head + (inner if inner.startswith("[") else f".{inner}")
        return YamlProblem(Problem(self.problem.location, field, self.problem.message))


class LocatedDict(dict):
    """A mapping that knows the position of each of its keys (and of itself)."""

    __slots__ = ("mark", "marks")


class LocatedList(list):
    """A sequence that knows the position of each of its items (and of itself)."""

    __slots__ = ("mark", "marks")


_Scalar = yaml.ScalarNode


def _pos(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


class StrictLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Loader with the resolution and construction rules described in the module docstring."""

    source_name = "<string>"

    def resolve(self, kind: type, value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode:
            if implicit[0] and value in _PLAIN_WORDS:
                return _PLAIN_WORDS[value][0]
            return _STR
        return _MAP if kind is yaml.MappingNode else _SEQ

    def _fail(self, node: yaml.Node, field: str, message: str) -> YamlProblem:
        line, column = _pos(node)
        return YamlProblem(Problem(Location(self.source_name, line, column), field, message))

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        tag = node.tag
        if isinstance(node, yaml.ScalarNode):
            if tag == _STR:
                return node.value
            if tag in (_BOOL, _NULL) and node.value in _PLAIN_WORDS:
                return _PLAIN_WORDS[node.value][1]
            raise self._tagged(node)
        if isinstance(node, yaml.MappingNode) and tag == _MAP:
            return self._mapping(node)
        if isinstance(node, yaml.SequenceNode) and tag == _SEQ:
            seq = LocatedList()
            for index, item in enumerate(node.value):
                try:
                    seq.append(self.construct_object(item))
                except YamlProblem as exc:
                    raise exc.within(index) from None
            seq.marks = [_pos(item) for item in node.value]
            seq.mark = _pos(node)
            return seq
        raise self._tagged(node)

    def _tagged(self, node: yaml.Node) -> YamlProblem:
        shown = node.tag.replace("tag:yaml.org,2002:", "!!", 1)  # as the author wrote it
        return self._fail(node, "", f"explicit tag {shown!r} is not allowed: write the value without a tag "
                          "(a plain string, or exactly true, false or null)")

    def _mapping(self, node: yaml.MappingNode) -> LocatedDict:
        result = LocatedDict()
        marks: dict[str, tuple[int, int]] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR:
                raise self._fail(key_node, "", "a mapping key must be a plain string")
            key = key_node.value
            if key == "<<":
                raise self._fail(key_node, key, "merge keys ('<<') are not allowed: write each field out")
            if key in marks:
                first = marks[key]
                raise self._fail(key_node, key, f"duplicate key (first written at line {first[0]})")
            mark = key_node.start_mark
            marks[key] = (mark.line + 1, mark.column + 1)
            if value_node.__class__ is _Scalar and value_node.tag == _STR:
                result[key] = value_node.value  # the common case, inlined: most values are plain strings
                continue
            try:
                result[key] = self.construct_object(value_node)
            except YamlProblem as exc:
                raise exc.within(key) from None
        result.marks = marks
        result.mark = _pos(node)
        return result

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        return None if node is None else self.construct_object(node)


def load_text(text: str | bytes, source_name: str) -> Any:
    """Load one YAML document strictly; raise :class:`YamlProblem` naming the source and position."""
    loader = StrictLoader(text)
    loader.source_name = source_name
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        message = " ".join(part for part in (exc.context, exc.problem) if part)
        raise YamlProblem(Problem(Location(source_name, line, column), "", f"YAML syntax: {message}")) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(Problem(Location(source_name), "", f"YAML: {exc}")) from None
    finally:
        loader.dispose()


def location_of(container: Any, key: str | int | None, file: str) -> Location:
    """Best-known position of ``container[key]`` (or of the container itself when key is None)."""
    if key is not None:
        marks = getattr(container, "marks", None)
        try:
            if marks is not None:
                line, column = marks[key]
                return Location(file, line, column)
        except (KeyError, IndexError, TypeError):
            pass
    mark = getattr(container, "mark", None)
    if mark:
        return Location(file, mark[0], mark[1])
    return Location(file)
