"""Validation of the sources: schemas, ID patterns, calendar dates, referential integrity, pagination.

Every rule appends :class:`Problem` objects instead of raising, so ``corpus check`` lists every error of
a run at once, each with ``file:line:column`` and the field it concerns.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from generator.base.errors import Location, Problem, Severity
from generator.base.text_policy import cut
from generator.compiler.source_paths import page_paths, record_path
from generator.compiler.sources import Sources
from generator.contract.bodies import REQUIRED_SYSTEME
from generator.documents.dates import is_date_shaped
from generator.documents.records import Record, error_at
from generator.documents.schema_checks import check_dates, check_schemas, refused_in
from generator.documents.yamlstrict import location_of
from generator.tracks.assertable import STATEMENT, TABLE
from generator.tracks.model import Collection, Link, Track

# Keys the compiler writes into a body itself: a source may not write them where its mapping is served whole.
_RESERVED_REFERENTIEL = ("ressource",)


@dataclass
class Index:
    """What the sources define, by canonical path: the basis of every cross-reference check."""

    records: dict[str, Record] = field(default_factory=dict)  # resource path -> record
    pages: dict[str, tuple[Record, int]] = field(default_factory=dict)  # page path -> (record, page index)
    absents: dict[str, Record] = field(default_factory=dict)
    absent_index: dict[str, int] = field(default_factory=dict)
    cited: set[str] = field(default_factory=set)

    def defines(self, path: str) -> bool:
        return path in self.records or path in self.pages


def _list(value: object) -> list[object]:
    """``value`` if it is a list, else an empty one: the schema reports the wrong type, rules go on."""
    return value if isinstance(value, list) else []


def _page_at(record: Record, index: int) -> tuple[str, Location]:
    """Field and place of the ``index``-th page of :func:`page_paths` (which skips non-mapping items)."""
    pages = record.data["pages"]
    written = [i for i, page in enumerate(pages) if isinstance(page, dict)][index]
    return record.field_name(f"pages[{written}].page"), location_of(pages[written], "page", record.file)


def _plural(collection: Collection) -> str:
    """How messages name several records: the plural of the label, or the collection's (plural) name."""
    label = collection.label
    if label == collection.name:
        return label
    return label[:-1] + "ies" if label.endswith("y") else label + "s"


def _listed_elsewhere(path: str, link: str, owner: str, owners_label: str,
                      listings: list[tuple[str, Location]]) -> str:
    """One line naming every list that cites ``path`` and where, when one of them is not ``owner``'s."""
    shown = " and ".join(f"{other} at {where}" for other, where in listings)
    if owner in (other for other, _ in listings):
        count = "two" if len(listings) == 2 else str(len(listings))
        others = "the other list" if len(listings) == 2 else "the other lists"
        return (f"{path} is listed by {count} {owners_label}, {shown}; its {link} is {owner}: remove it from "
                f"{others}")
    return f"{link} is {owner} but {path} is listed by {shown}, not by {owner}: make the two agree"


def _field_at(data: object, dotted: str) -> tuple[object, object, str | None]:
    """The value at a dotted field path (``tarif.debut_validite``), its container and key; (None, data,
    None) when a part is missing or not a mapping (the schema says so)."""
    container: object = data
    parts = dotted.split(".")
    for part in parts[:-1]:
        container = container.get(part) if isinstance(container, dict) else None
    if not isinstance(container, dict):
        return None, data, None
    return container.get(parts[-1]), container, parts[-1]


def _sites(data: object, field: str) -> Iterable[tuple[object, str | int, str]]:
    """Each place a link field names a reference: (container, key, field name as messages write it).

    ``field`` is a track link's dotted path, ``[]`` marking a list (``pages[].entrees[].agrement``); a
    value of the wrong shape is skipped here (the schema reports it). A field of one level (``entite``,
    ``agrements[]``: most links) is read here without a generator, as :func:`_walk` would read it."""
    if "." in field:
        return _walk(data, field.split("."), 0, "")
    if not isinstance(data, dict):
        return ()
    if not field.endswith("[]"):
        return ((data, field, field),)
    name = field[:-2]
    items = data.get(name)
    if not isinstance(items, list):
        return ()
    return [(items, k, f"{name}[{k}]") for k in range(len(items))]


def _walk(container: object, parts: list[str], i: int, prefix: str) -> Iterator[tuple[object, str | int, str]]:
    """A module-level recursion: a closure calling itself would be a reference cycle per call, and the
    pipeline runs with the cyclic collector paused."""
    if not isinstance(container, dict):
        return
    name = parts[i].removesuffix("[]")
    fieldname = f"{prefix}.{name}" if prefix else name
    last = i == len(parts) - 1
    if not parts[i].endswith("[]"):
        if last:
            yield container, name, fieldname
        else:
            yield from _walk(container.get(name), parts, i + 1, fieldname)
        return
    items = container.get(name)
    if not isinstance(items, list):
        return
    for k in range(len(items)):
        if last:
            yield items, k, f"{fieldname}[{k}]"
        else:
            yield from _walk(items[k], parts, i + 1, f"{fieldname}[{k}]")


class Validator:
    """Runs every rule of a track over loaded sources; ``run`` returns errors and warnings cause first:
    the files' own problems, then what they say, each part sorted by place."""

    def __init__(self, sources: Sources, track: Track) -> None:
        self.sources = sources
        self.track = track
        self.index = Index()
        self.problems: list[Problem] = list(sources.problems)
        self.vocabularies: dict[str, set[str]] = {}
        self._examples: dict[str, str] = {}
        # for each link with ``memes`` (by its index in the track's links), the places citing each record
        self._cited_by: dict[int, dict[str, list[tuple[Record, object, str | int, str]]]] = {}

    # -- entry point -------------------------------------------------------------------------------
    def run(self) -> list[Problem]:
        src = self.sources
        singles = [r for r in (src.corpus, src.referentiel, src.systeme, src.absents) if r is not None]
        every = singles + [r for records in src.records.values() for r in records]
        self.problems += check_schemas(every)
        for record in every:
            self.problems += check_dates(record)
        if src.corpus is not None:
            for vocabulary in self.track.vocabularies:
                declared = src.corpus.data.get(vocabulary.key)
                if isinstance(declared, dict):
                    self.vocabularies[vocabulary.name] = set(declared)
        self._index_records()
        self._index_pages()
        self._index_absents()
        self._check_references()
        self._check_links()
        self._check_vocabularies()
        self._check_systeme()
        self._check_reserved()
        self._check_path_fields()
        self._check_same_fields()
        self._check_date_order()
        self._check_absents_cited()
        # Cause first: what the files are (unreadable, not YAML, misplaced) before what they say, so that a
        # file's syntax error is read before the references it breaks in other files.
        loaded = len(self.sources.problems)
        return sorted(self.problems[:loaded]) + sorted(self.problems[loaded:])

    def _example(self, collection: Collection) -> str:
        """A path of ``collection`` to show in a message: its first record in the sources that has the
        shape, else one built from its patterns (never the pattern itself)."""
        if collection.name not in self._examples:
            found = None
            for record in self.sources.of(collection.name):
                paths = page_paths(record, collection) if collection.paginated else \
                    [record_path(record, self.track)]
                found = next((p for p in paths if p is not None and collection.matches(p)), None)
                if found is not None:
                    break
            self._examples[collection.name] = found or collection.example
        return self._examples[collection.name]

    # -- indexing ----------------------------------------------------------------------------------
    def _index_records(self) -> None:
        for collection in self.track.collections:
            if collection.paginated:
                continue
            for record in self.sources.of(collection.name):
                path = record_path(record, self.track)
                if path is None:
                    continue
                if not collection.matches(path):
                    hint = refused_in(record.data["id"])
                    self.problems.append(error_at(record, "id", "id", f"{cut(record.data['id'])} is not an id of "
                                                f"{collection.prefix}: write one like "
                                                f"{self._example(collection).removeprefix(collection.prefix)}"
                                                + (f" ({hint})" if hint else "")))
                    continue
                first = self.index.records.get(path)
                if first is not None:
                    self.problems.append(error_at(record, "id", "id", f"{path} is defined twice: in "
                                                f"{first.location('id')} and in {record.location('id')}"))
                    continue
                self.index.records[path] = record

    def _index_pages(self) -> None:
        for collection in self.track.collections:
            if not collection.paginated:
                continue
            page_shape = re.compile(collection.part_pattern("page"))
            for record in self.sources.of(collection.name):
                self._check_page_chain(record, page_shape)
                for index, path in enumerate(page_paths(record, collection)):
                    if path in self.index.pages:
                        other = self.index.pages[path][0]
                        if other is not record:  # a page repeated inside one record: the chain check says so
                            fieldname, here = _page_at(record, index)
                            self.problems.append(Problem(here, fieldname, f"{path} is defined twice: in "
                                                         f"{self._defined_at(path)} and in {here}"))
                        continue
                    self.index.pages[path] = (record, index)

    def _check_page_chain(self, record: Record, page_shape: re.Pattern[str]) -> None:
        """Pages are written in order, numbered 1..n; page_suivante is derived from that order."""
        pages = record.data.get("pages")
        if not isinstance(pages, list):
            return
        seen: dict[str, int] = {}
        for index, page in enumerate(pages):
            number = page.get("page") if isinstance(page, dict) else None
            if not isinstance(number, str) or not page_shape.fullmatch(number):
                continue  # not a page number at all: the schema says so, naming the value
            expected = str(index + 1)
            if number in seen:
                self.problems.append(error_at(record, "page", f"pages[{index}].page", f"page {number} is written "
                                            f"twice (first as pages[{seen[number]}]): the page_suivante "
                                            "chain would loop", page))
            elif number != expected:
                self.problems.append(error_at(record, "page", f"pages[{index}].page", f"expected page "
                                            f"{expected} here, found page {number}: the page_suivante "
                                            "chain must run 1, 2, 3... without a gap", page))
            seen.setdefault(number, index)

    def _index_absents(self) -> None:
        record = self.sources.absents
        if record is None or not isinstance(record.data.get("absents"), list):
            return
        for index, item in enumerate(record.data["absents"]):
            path = item.get("chemin") if isinstance(item, dict) else None
            if not isinstance(path, str):
                continue
            where = f"absents[{index}].chemin"
            if self.track.collection_of(path) is None:
                self.problems.append(error_at(record, "chemin", where, f"{path} is not a canonical path of any "
                                            "collection, so it cannot be served as existe: false", item))
            elif self.index.defines(path):
                self.problems.append(error_at(record, "chemin", where, f"{path} is declared absent but is "
                                            f"defined in {self._defined_at(path)}: existe would be both true "
                                            "and false", item))
            elif path in self.index.absents:
                first = record.data["absents"][self.index.absent_index[path]]
                self.problems.append(error_at(record, "chemin", where, f"{path} is declared absent twice: in "
                                            f"{location_of(first, 'chemin', record.file)} and in "
                                            f"{location_of(item, 'chemin', record.file)}", item))
            else:
                self.index.absents[path] = record
                self.index.absent_index[path] = index

    def _defined_at(self, path: str) -> Location:
        """Where a defined resource was written: its record's ``id``, or its page in the pages list."""
        record = self.index.records.get(path)
        if record is not None:
            return record.location("id")
        return _page_at(*self.index.pages[path])[1]

    # -- references --------------------------------------------------------------------------------
    def _cite(self, record: Record, container: object, key: str | int, fieldname: str,
              target: Collection) -> str | None:
        """Check one reference; return the path when it names a defined resource."""
        if isinstance(container, dict):
            path = container.get(key)  # a missing field: the schema says so
        else:
            path = container[key] if isinstance(container, list) and isinstance(key, int) else None
        if not isinstance(path, str):
            return None
        self.index.cited.add(path)
        if not target.matches(path):
            self.problems.append(error_at(record, key, fieldname, f"{cut(path)} is not a canonical path of "
                                        f"{target.prefix}: write one like {self._example(target)}",
                                        container))
            return None
        if self.index.defines(path):
            return path
        if path not in self.index.absents:
            self.problems.append(error_at(record, key, fieldname, f"{path} does not exist and is not "
                                        f"declared absent (add it to {self.track.trees.sources}/absents.yaml if "
                                        "the reference is deliberate)", container))
        return None

    def _check_references(self) -> None:
        """Every reference of every link; for a link with ``memes``, who cites each record
        (:meth:`_check_same_fields` reads it). A reference to a defined resource of the right collection (all
        but a few of a build's 200,000) is settled here; any other goes through :meth:`_cite`, which words
        what is wrong with it."""
        records, pages, cited = self.index.records, self.index.pages, self.index.cited
        for n, link in enumerate(self.track.links):
            target = self.track.collection(link.target)
            matches = target.regex.fullmatch
            cited_by = self._cited_by.setdefault(n, {}) if link.same else None
            for record in self.sources.of(link.source):
                for container, key, fieldname in _sites(record.data, link.field):
                    path = container.get(key) if isinstance(container, dict) else \
                        container[key] if isinstance(container, list) and isinstance(key, int) else None
                    if path.__class__ is str and (path in records or path in pages) and matches(path) is not None:
                        cited.add(path)
                    else:
                        path = self._cite(record, container, key, fieldname, target)
                    if cited_by is not None and path is not None and path in records:
                        cited_by.setdefault(path, []).append((record, container, key, fieldname))

    def _listed_by(self, owner_kind: str, key: str) -> dict[str, list[tuple[str, list[object], int, str]]]:
        """For each resource path, the owners (entity or attestation paths) whose ``key`` list cites it, with
        where each cites it (the list, the index and the file: a place is worded only for a message)."""
        listed: dict[str, list[tuple[str, list[object], int, str]]] = {}
        for record in self.sources.of(owner_kind):
            owner = record_path(record, self.track)
            items = record.data.get(key)
            if owner is None or not isinstance(items, list):
                continue
            for index, item in enumerate(items):
                if isinstance(item, str):
                    listed.setdefault(item, []).append((owner, items, index, record.file))
        return listed

    def _check_backlink(self, link: Link) -> None:
        """The cited record's ``back`` field must name the record that lists it, and that one must list it."""
        back, owner_list = link.back or "", link.top_field or ""
        owner_collection = self.track.collection(link.source)
        listed = self._listed_by(link.source, owner_list)
        track, records, defines, matches = self.track, self.index.records, self.index.defines, \
            owner_collection.regex.fullmatch
        for record in self.sources.of(link.target):
            path, owner = record_path(record, track), record.data.get(back)
            if path is None or records.get(path) is not record:
                continue  # a record without a usable id: the id check said so
            if not isinstance(owner, str) or not defines(owner) \
                    or matches(owner) is None:  # a wrong-collection link: _cite said so
                continue
            listings = listed.get(path, [])
            if len(listings) == 1 and listings[0][0] == owner and (
                    link.mismatch is None or record.data.get(link.mismatch) is not True):
                continue  # listed by its owner alone, as almost every record is
            owners = [listing[0] for listing in listings]
            intended = link.mismatch is not None and record.data.get(link.mismatch) is True
            if any(other != owner for other in owners):  # an owner that the record does not name
                places = [(other, location_of(items, index, file)) for other, items, index, file in listings]
                self.problems.append(error_at(record, back, back, _listed_elsewhere(
                    path, back, owner, _plural(owner_collection), places)))
            elif not owners and not intended:
                self.problems.append(error_at(record, back, back, f"{owner} does not list {path} in its "
                                            f"{owner_list} (mark the record '{link.mismatch}: true' "
                                            "if this is intended)" if link.mismatch else
                                            f"{owner} does not list {path} in its {owner_list}"))
            elif owners and intended:
                assert link.mismatch is not None  # only a link with a mismatch field can be intended
                self.problems.append(error_at(record, link.mismatch, link.mismatch,
                                            f"marked as an intended mismatch, but {owner} does list {path}"))

    def _check_links(self) -> None:
        for collection in self.track.collections:
            source = collection.source
            if collection.owner is not None or source.folder is None or source.named_by is not None:
                continue
            for record in self.sources.of(collection.name):  # records that name their own files by id
                stem = record.file.rsplit("/", 1)[-1].removesuffix(".yaml")
                named = record.owner if source.section is not None else record.data.get("id")
                if isinstance(named, str) and named != stem:
                    self.problems.append(error_at(record, "id", "id", f"the file must be named {named}.yaml, "
                                                f"after its {collection.label} id"))
        for link in self.track.links:
            if link.back:
                self._check_backlink(link)
        for link in self.track.links:
            if link.first_own_page:
                self._check_first_own_page(link)
        for link in self.track.links:
            if link.belongs:
                self._check_belongs(link)

    def _check_first_own_page(self, link: Link) -> None:
        """The link names page 1 of the pages written in the citing record's own file."""
        target = self.track.collection(link.target)
        owners_with_pages = {record.owner for record in self.sources.of(link.target)}  # one pass in all
        for record in self.sources.of(link.source):
            cited = record.data.get(link.field)
            first = target.path(proprietaire=record.owner or "?", page="1")
            if record.owner in owners_with_pages and cited != first:
                self.problems.append(error_at(record, link.field, link.field, f"must be {first}, the "
                                            f"first page of the {target.label} written in this file"))

    def _check_belongs(self, link: Link) -> None:
        """A record written in an owner's file names that owner."""
        target = self.track.collection(link.target)
        for record in self.sources.of(link.source):
            named = record.data.get(link.field)
            if record.owner and isinstance(named, str) and self.index.defines(named) \
                    and named != target.path(id=record.owner):
                own = target.path(id=record.owner)
                self.problems.append(error_at(record, link.field, link.field, f"{named} is not the {target.label} "
                                            f"of this file ({own}): move the record to that {target.label}'s "
                                            "file"))

    def _undeclared(self, kind: str, key: str, value: str) -> bool:
        """A value outside the vocabulary that constrains ``kind.key`` (``_check_vocabularies`` says so)."""
        return any(f"{kind}.{key}" in vocabulary.fields and self.vocabularies.get(vocabulary.name)
                   and value not in self.vocabularies[vocabulary.name] for vocabulary in self.track.vocabularies)

    def _check_vocabularies(self) -> None:
        for vocabulary in self.track.vocabularies:
            declared = self.vocabularies.get(vocabulary.name)
            for name in vocabulary.fields:
                kind, _, key = name.partition(".")
                for record in self.sources.of(kind):
                    value = record.data.get(key)
                    if isinstance(value, str) and declared and value not in declared:
                        self.problems.append(error_at(record, key, key, f"unknown {vocabulary.label} {value!r} "
                                                    f"(declare it under {vocabulary.key} in "
                                                    f"{self.track.trees.sources}/corpus.yaml)"))
        for collection in self.track.collections:
            named_by = collection.source.named_by
            if named_by is None:
                continue
            label = self.track.vocabulary_label(f"{collection.name}.{named_by}") or named_by
            for record in self.sources.of(collection.name):
                stem = record.file.rsplit("/", 1)[-1].removesuffix(".yaml")
                if isinstance(record.data.get(named_by), str) and record.data[named_by] != stem:
                    self.problems.append(error_at(record, named_by, named_by, f"the file must be named "
                                                f"{record.data[named_by]}.yaml, after its {label}"))

    def _check_systeme(self) -> None:
        record = self.sources.systeme
        if record is None or not isinstance(record.data, dict):
            return
        missing = [status for status in REQUIRED_SYSTEME if status not in record.data]
        if missing:
            self.problems.append(error_at(record, None, "", "missing bodies for statuses the vhost can send: "
                                        + ", ".join(missing)))

    def _check_reserved(self) -> None:
        """The compiler writes ``ressource`` into the référentiel itself: a source key would be overwritten."""
        record = self.sources.referentiel
        if record is None or not isinstance(record.data, dict):
            return
        for key in _RESERVED_REFERENTIEL:
            if key in record.data:
                self.problems.append(error_at(record, key, key, f"'{key}' is written by the compiler (it is the "
                                            f"served path, {self.track.referentiel}): remove it from the source"))
        statement = record.data.get(STATEMENT)
        if statement is not None and not isinstance(statement, dict):
            self.problems.append(error_at(record, STATEMENT, STATEMENT, f"'{STATEMENT}' is the statement of what "
                                        "may be asserted: a mapping (regle, formes...), or nothing"))
        elif isinstance(statement, dict) and TABLE in statement:
            self.problems.append(error_at(record, TABLE, f"{STATEMENT}.{TABLE}", f"'{TABLE}' is generated by "
                                        "the compiler from the criteria's champs (the table the scorer applies): "
                                        "remove it from the source", container=statement))

    def _check_date_order(self) -> None:
        """A period's end is not before its start: refused where ``track.yaml`` says ``erreur``, else served
        as written (a trap may need it) and warned about; both said the same way, at the end's field."""
        for order in self.track.date_orders:
            for record in self.sources.of(order.collection):
                start, _, _ = _field_at(record.data, order.start)
                end, container, key = _field_at(record.data, order.end)
                if not (isinstance(start, str) and isinstance(end, str) and is_date_shaped(start)
                        and is_date_shaped(end) and end < start):
                    continue
                said = f"{end} is before {order.start} {start}"
                if order.error:
                    self.problems.append(error_at(record, key, order.end, f"{said}: a period cannot end before "
                                                f"it starts (write a {order.end} on or after {start})", container))
                else:
                    self.problems.append(error_at(record, key, order.end, f"{said} (served as written; make sure "
                                                "the trap is intended)", container, Severity.WARNING))

    def _check_path_fields(self) -> None:
        """A field that repeats a placeholder of the record's path (``egal_au_chemin``: a product sheet's
        ``reference`` is its id) holds exactly that value: the path is what an agent cites."""
        for collection in self.track.collections:
            if not collection.path_fields or collection.paginated:
                continue
            for record in self.sources.of(collection.name):
                path = record_path(record, self.track)
                if path is None or self.index.records.get(path) is not record:
                    continue  # no usable id: the id check said so
                for name, placeholder in collection.path_fields:
                    value = record.data.get(name)
                    expected = record.owner if placeholder == "proprietaire" else record.data.get(placeholder)
                    shaped = isinstance(value, str) and re.fullmatch(collection.part_pattern(placeholder), value)
                    if shaped and value != expected:  # a value of another shape: the schema says so
                        self.problems.append(error_at(record, name, name, f"{cut(value)} differs from the "
                                                    f"{placeholder} of the record's path, {path}: write "
                                                    f"{expected} (or give the record the id {value}, in a file "
                                                    f"named {value}.yaml)"))

    def _check_same_fields(self) -> None:
        """A link's ``memes`` fields: the cited record holds the citing record's value (a catalogue cites
        only products of its category); with ``memes_avertissement`` a mismatch is served and warned about
        (a trap may need it). Said at the entry when another list of the right value cites the record too
        (the entry is the odd one), else at the cited record's field."""
        for n, link in enumerate(self.track.links):
            cited_by = self._cited_by.get(n)
            if cited_by is None:
                continue
            source = self.track.collection(link.source)
            severity = Severity.WARNING if link.same_warns else Severity.ERROR
            served = " (served as written; make sure the trap is intended)" if link.same_warns else ""
            for path, sites in cited_by.items():
                cited = self.index.records[path]
                for name in link.same:
                    value = cited.data.get(name)
                    wrong = [site for site in sites if isinstance(site[0].data.get(name), str)
                             and site[0].data.get(name) != value]
                    if not wrong or not isinstance(value, str) or self._undeclared(link.target, name, value) \
                            or any(self._undeclared(link.source, name, site[0].data[name]) for site in wrong):
                        continue  # an undeclared value is its own error: the mismatch is its consequence
                    if len(wrong) < len(sites):
                        for record, container, key, fieldname in wrong:
                            self.problems.append(error_at(record, key, fieldname, f"{path} has {name} {value}, "
                                                        f"but this {source.label} lists only {name} "
                                                        f"{record.data[name]}: remove the entry, or cite one "
                                                        f"whose {name} is {record.data[name]}{served}",
                                                        container, severity))
                        continue
                    listers = " and ".join(f"the {source.label} of {name} {record.data[name]} at "
                                           f"{location_of(container, key, record.file)}"
                                           for record, container, key, _ in wrong)
                    wanted = " or ".join(sorted({record.data[name] for record, *_ in wrong}))
                    self.problems.append(error_at(cited, name, name, f"{cut(value)} differs from the {name} of "
                                                f"every {source.label} that lists {path} ({listers}): write "
                                                f"{wanted}, or list it in the {source.label} of {name} {value}"
                                                f"{served}", severity=severity))

    def _check_absents_cited(self) -> None:
        record = self.sources.absents
        if record is None:  # no absents file: nothing is declared absent
            return
        for path, index in self.index.absent_index.items():
            if path not in self.index.cited:
                item = record.data["absents"][index]
                self.problems.append(error_at(record, "chemin", f"absents[{index}].chemin", f"{path} is declared "
                                            "absent but nothing in the corpus cites it", item,
                                            Severity.WARNING))


def validate(sources: Sources, track: Track) -> tuple[list[Problem], Index]:
    """Run every rule; return all problems (errors and warnings) and the index the compiler reuses."""
    checker = Validator(sources, track)
    problems = checker.run()
    return problems, checker.index
