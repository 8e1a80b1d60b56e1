"""A track as data: what ``tracks/<piste>/track.yaml`` declares, as typed, frozen objects.

The engine (compiler, season check, scorer, nginx renderer) reads everything it knows of a track from one
:class:`Track`, passed explicitly: the collections and their path shapes, where each document comes from
in the sources, the links the validator checks and the founding rule turns into equivalent forms, the
date orders and vocabularies, the graph of a task (spec §5.2), the statement fields, the barème and where
the référentiel and the catalogue are served. Only logic stays code, in the module ``Track.code`` names
(:mod:`generator.reading.logic` says what it provides).

Patterns are written in the subset of regular-expression syntax that Python and nginx's PCRE agree on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from generator.base.output_places import KINDS
from generator.contract.places import Places

# Any canonical path: no trailing slash, no '?', '%', '.', '_' or '//' (CONTRACT §3).
CANONICAL_PATH = r"(?:/[A-Za-z0-9-]+)+"
SYSTEME_PREFIX = "/_systeme/"
DEFAULT_BASE_URL = "https://corpus.arkforge.tech"
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")


def file_for(path: str) -> str:
    """The file under a build folder that holds the bytes of a canonical path (nginx: ``$uri.json``)."""
    return path.lstrip("/") + ".json"


def systeme_path(status: str) -> str:
    return f"{SYSTEME_PREFIX}{status}"


_SAMPLE_DIGITS = "1234567890"
_SAMPLE_LETTERS = "abcdefghij"


def sample(pattern: str) -> str:
    """One value matching ``pattern`` (the subset of regular expressions track patterns use): literals,
    classes, groups, alternations (the first branch) and repeats (their least count, at least one for
    ``+``). Digits and letters run 1, 2, 3... and a, b, c... so that an example reads as one."""
    import re._parser as parser  # type: ignore[import-not-found]  # the standard library's own parser of
    # the pattern syntax; typeshed has no stub for this private module

    out: list[str] = []
    counter = [0]

    def emit(items: object) -> None:
        for op, arg in items:  # type: ignore[attr-defined]
            name = str(op)
            if name == "LITERAL":
                out.append(chr(arg))
            elif name == "IN":
                first = next((a for o, a in arg if str(o) in ("RANGE", "LITERAL")), ord("a"))
                low = chr(first[0] if isinstance(first, tuple) else first)
                pool = _SAMPLE_DIGITS if low.isdigit() else _SAMPLE_LETTERS if low.isalpha() else ""
                if low in pool:
                    out.append(pool[(pool.index(low) + counter[0]) % len(pool)])
                    counter[0] += 1
                else:
                    out.append(low)
            elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
                least, _, inner = arg
                most = arg[1]  # '+': a word, not a letter, within the repeat's most ({1,2}: two)
                for _ in range(least if least != 1 else min(4, most)):
                    emit(inner)
            elif name == "SUBPATTERN":
                emit(arg[-1])
            elif name == "BRANCH":
                emit(arg[1][0])
            elif name == "ANY":
                out.append("x")

    emit(parser.parse(pattern))
    value = "".join(out)
    return value if re.fullmatch(pattern, value) else pattern


@dataclass(frozen=True)
class Source:
    """Where the records of a collection are written in the track's source folder.

    ``folder``: one YAML file per owner record (``entites/<id>.yaml``) or per named record
    (``listes/agrees/<activite>.yaml``); ``section``: the key of that file holding this collection
    (absent: the file is the record); ``many``: the section is a list of records; ``file``: one fixed file
    holding the record; ``named_by``: the record field the file stem must equal.
    """

    folder: str | None = None
    section: str | None = None
    many: bool = False
    file: str | None = None
    named_by: str | None = None


@dataclass(frozen=True)
class Collection:
    """A family of served documents sharing one canonical path shape."""

    name: str
    template: str  # "/agrements/{id}", "/beneficiaires/{proprietaire}/{page}"
    parts: tuple[tuple[str, str], ...]  # placeholder -> pattern, in template order
    schema: str  # schema name, a file of the track's schemas folder
    source: Source
    probant: tuple[str, ...]  # JSON Pointers of the barème's table; "<n>" stands for an array index
    paginated: bool = False
    header: tuple[tuple[str, str], ...] = ()  # page header: served field -> "proprietaire" or a record field
    owner: str | None = None  # the collection whose file holds these records (same folder, its id)
    label: str = ""  # how messages name one record ("entity"); the collection name when empty
    # Record fields that repeat a placeholder of the path (a product sheet's ``reference`` is its ``{id}``):
    # field -> placeholder; ``egal_au_chemin`` in track.yaml.
    path_fields: tuple[tuple[str, str], ...] = ()

    @property
    def prefix(self) -> str:
        """The literal start of every path of the collection (``/agrements/``)."""
        return self.template.split("{", 1)[0]

    @cached_property
    def path_pattern(self) -> str:
        """The whole canonical path shape, as a regular expression (anchored by its users)."""
        patterns = dict(self.parts)
        return _PLACEHOLDER.sub(lambda m: patterns[m.group(1)], self.template)

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.path_pattern)

    def matches(self, path: str) -> bool:
        return self.regex.fullmatch(path) is not None

    def path(self, **values: str) -> str:
        """The canonical path with each placeholder filled (``path(id="AGR-4417")``): the template's
        placeholders are ``str.format`` fields, and this runs for every record of a build."""
        return self.template.format(**values)

    def part_pattern(self, name: str) -> str:
        return dict(self.parts)[name]

    @cached_property
    def example(self) -> str:
        """A path of the collection's shape built from its patterns alone (``/agrements/AGR-1234``), for
        messages that must show a form without quoting a regular expression."""
        return self.path(**{name: sample(pattern) for name, pattern in self.parts})


@dataclass(frozen=True)
class Link:
    """A reference from one collection's field to another collection, checked by the validator.

    ``field`` is a dotted path into the source record where ``[]`` marks a list (``agrements[]``,
    ``pages[].entrees[].agrement``). ``back``: the field of the cited record that must name the citing one
    (a back-link; the founding rule derives the reverse and whole-array forms from it). ``mismatch``: a
    source field (``incoherence_voulue``) that marks a deliberate missing back-link. ``first_own_page``:
    the link must name the first page of the citing record's own pages of the target collection.
    """

    source: str
    field: str
    target: str
    back: str | None = None
    mismatch: str | None = None
    first_own_page: bool = False
    belongs: bool = False  # the cited record is the owner of the file the citing record lives in
    same: tuple[str, ...] = ()  # fields the cited record holds with the citing record's value (``memes``)
    same_warns: bool = False  # a ``memes`` mismatch is served and warned about (a trap may need it)

    @property
    def many(self) -> bool:
        return self.field.endswith("[]")

    @property
    def top_field(self) -> str | None:
        """The served field of the citing document for a top-level link (``agrements``), else None."""
        name = self.field.removesuffix("[]")
        return None if "." in name or "[]" in name else name

    @property
    def entry_field(self) -> str | None:
        """The field of a served page's entries for a link written ``pages[].entrees[].<field>`` (a
        catalogue entry's ``produit``), else None."""
        head, _, name = self.field.rpartition(".")
        return name if head == "pages[].entrees[]" and name.isidentifier() else None

    @property
    def follow_name(self) -> str | None:
        """How ``graphe.suivre`` names the link: ``entites.agrements``, ``catalogues.entrees[].produit``."""
        if self.top_field:
            return f"{self.source}.{self.top_field}"
        return f"{self.source}.entrees[].{self.entry_field}" if self.entry_field else None


@dataclass(frozen=True)
class DateOrder:
    """Two dates of one record that make a period: ``end`` is never before ``start``.

    ``start`` and ``end`` are dotted field paths (``tarif.debut_validite``); ``error``: an end before its
    start is refused (a tariff), else it is served and warned about (a trap may need it)."""

    collection: str
    start: str
    end: str
    error: bool = False


@dataclass(frozen=True)
class Vocabulary:
    """Values declared under ``key`` of the corpus file; ``fields`` are ``collection.field`` names."""

    name: str
    key: str
    fields: tuple[str, ...]
    label: str  # how messages name one value ("activité")


@dataclass(frozen=True)
class CommonList:
    """A shared list in the graph of every task: its first page, and which of its entries concern a task.

    An entry concerns the task when its ``entry_field`` equals the statement's ``equals`` field, when
    its ``names`` fields match one entry of the start document's own pages of ``names_of`` (spec §5.2), or,
    with ``all_entries``, always (a list whose first page the statement names is the task's own: a
    category's catalogue).
    """

    collection: str
    first_page: tuple[tuple[str, str], ...]  # placeholder -> "=<statement field>" or a literal ("1")
    entry_field: str | None = None
    equals: str | None = None
    names: tuple[str, ...] = ()
    names_of: str | None = None
    title: str = ""  # how a drawing names the list ({field}: the statement's)
    all_entries: bool = False


@dataclass(frozen=True)
class GraphSpec:
    """The graph of a task (spec §5.2): from the statement's start, the links followed, the common lists.

    A track may have no start document (générique: a task names a category, whose catalogue is a common
    list); its links are then followed from the common lists' entries (``catalogues.entrees[].produit``).
    What the links reach is proper to the task unless its collection is ``shared`` (a supplier sheet
    serves many tasks): in the graph, but not counted as proper.
    """

    start: str | None  # the statement field naming the start document
    start_collection: str | None  # the collection that document must belong to
    follow: tuple[str, ...]  # "collection.field" or "collection.entrees[].field" links followed
    common: tuple[CommonList, ...]
    description: str = ""  # the graph in words, {field} standing for a statement's field
    concerns_text: str = ""  # which common-list entries concern a task, in words
    shared: tuple[str, ...] = ()  # collections reached by links that are in the graph but not proper


@dataclass(frozen=True)
class Summary:
    """What a drawing prints of a resource: lines of items (``{field}`` templates), one line per entry."""

    lines: tuple[tuple[str, ...], ...] = ()
    entries: str = ""


@dataclass(frozen=True)
class Drawing:
    """How ``corpus graph`` titles a task and its clusters, and summarises each collection."""

    task: str = "{id}"
    proper: str = "Ressources propres"
    summaries: dict[str, Summary] = field(default_factory=dict)
    section: str = ""  # the spec section that defines a task's graph ("spec §5.2"), in the index's title
    groups: dict[str, str] = field(default_factory=dict)  # shared collection -> its cluster's label


@dataclass(frozen=True)
class Bareme:
    """The frozen barème section of the track and the numbers of its season table."""

    section: str  # "conformite-bareme-v3"
    file: str  # checkout-relative path of the byte-exact section: tracks/<piste>/<section>.txt
    sha256: str  # the published SHA-256 of that file
    bounds: dict[str, tuple[int, int]]  # task id -> (minimum, plafond)
    verdicts: dict[str, int]  # verdict -> number of tasks
    families: tuple[str, ...]
    family_minimum: dict[str, int]  # family -> least number of tasks carrying it
    controls: int  # tasks without a trap
    calls: tuple[int, int]  # a task is decidable in this many corpus calls
    calls_ceiling: int  # never more than this
    best_constant: tuple[int, int]  # the best constant answer's réussite, out of the task count


@dataclass(frozen=True)
class VerdictReference:
    """Verdicts that are references rather than fixed words (générique: a product reference).

    ``name`` is how the barème's distribution counts them (``reference_produit``); ``distinct``: no two
    tasks expect the same reference (published, so the best constant answer follows from it)."""

    name: str
    pattern: str
    distinct: bool = False


@dataclass(frozen=True)
class Trees:
    """Where the track's files live in the checkout, relative to its root: ``<kind>/<piste>``, derived from
    the track's name (:meth:`of`), never written in ``track.yaml``."""

    sources: str
    season_sources: str
    build: str
    manifest: str
    season: str
    freeze: str

    @classmethod
    def of(cls, piste: str) -> Trees:
        """The six trees of the track ``piste``, one per kind, in :data:`KINDS`' order."""
        return cls(*(f"{kind}/{piste}" for kind in KINDS))


@dataclass(frozen=True)
class Track:
    """One track of the challenge, as its ``track.yaml`` declares it."""

    piste: str
    title: str
    folder: Path  # the folder holding track.yaml and schemas/ (absolute)
    code: str  # the module of the track's logic: a dotted name, or a .py file of the track folder
    trees: Trees
    referentiel: str
    catalogue: str
    record_path: str  # where the freeze record is served once it exists (never in the manifest)
    corpus_key: str  # the source file's field naming the corpus (corpus.yaml)
    collections: tuple[Collection, ...]
    links: tuple[Link, ...]
    date_orders: tuple[DateOrder, ...]
    vocabularies: tuple[Vocabulary, ...]
    graph: GraphSpec
    statement_fields: tuple[str, ...]  # the fields of a task statement besides id, question, assertions
    task_id: str  # the pattern of a task id
    bareme: Bareme
    verdicts: tuple[str, ...]  # the fixed verdict words
    drawing: Drawing = field(default_factory=Drawing)
    verdict_reference: VerdictReference | None = None
    trust_layer_key: str | None = None  # the pinned Trust Layer key the freeze's anchor is checked against
    primary: bool = False  # served at the root with the /_systeme bodies; taken without --track

    def verdict_class(self, verdict: str) -> str | None:
        """How the barème's distribution counts ``verdict``: itself when it is a fixed word, the reference
        class's name when it has the reference shape, None when it is no verdict of the track."""
        if verdict in self.verdicts:
            return verdict
        ref = self.verdict_reference
        if ref is not None and re.fullmatch(ref.pattern, verdict):
            return ref.name
        return None

    @property
    def schemas(self) -> Path:
        """The folder of the track's JSON Schemas."""
        return self.folder / "schemas"

    @cached_property
    def by_name(self) -> dict[str, Collection]:
        return {c.name: c for c in self.collections}

    def collection(self, name: str) -> Collection:
        return self.by_name[name]

    def collection_of(self, path: str) -> Collection | None:
        """The collection whose canonical shape ``path`` has, or None."""
        for collection in self.collections:
            if collection.matches(path):
                return collection
        return None

    def is_probant(self, path: str, pattern: str) -> bool:
        found = self.collection_of(path)
        return found is not None and pattern in found.probant

    @cached_property
    def back_fields(self) -> dict[str, str]:
        """Cited collection name -> the JSON Pointer of its field that names the citing record back."""
        return {link.target: f"/{link.back}" for link in self.links if link.back}

    def vocabulary_label(self, field: str) -> str | None:
        """How messages name a value of ``collection.field`` when a vocabulary constrains it (``activité``)."""
        return next((v.label for v in self.vocabularies if field in v.fields), None)

    @cached_property
    def collection_order(self) -> dict[str, int]:
        """Collection name -> its rank in ``track.yaml`` (drawings sort by it)."""
        return {c.name: i for i, c in enumerate(self.collections)}

    @cached_property
    def followed(self) -> dict[str, Link]:
        """``graphe.suivre``'s names -> the links they follow (built once: every task graph reads it)."""
        return {link.follow_name: link for link in self.links if link.follow_name}

    @cached_property
    def back_links(self) -> dict[tuple[str, str], str]:
        """(citing prefix, citing top field) -> the JSON Pointer of the field that points back."""
        return {(self.collection(link.source).prefix, link.top_field): f"/{link.back}"
                for link in self.links if link.back and link.top_field}

    @cached_property
    def places(self) -> Places:
        """What the contract layer (freeze, build proof, scorer) needs to know of the track's files."""
        trees, bareme = self.trees, self.bareme
        return Places(self.piste, trees.build, trees.manifest, trees.season, trees.freeze, bareme.section,
                      bareme.file, bareme.sha256, self.record_path, self.trust_layer_key)

    def served_paths(self) -> tuple[str, ...]:
        """The single documents the track serves besides its collections (the freeze record included)."""
        return (self.referentiel, self.catalogue, self.record_path)
