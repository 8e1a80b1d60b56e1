"""The documents of one track's close as JSON, typed: ``index.json`` (``corpus-index/1``) and each
participant's ``corpus-rapport/1``, with their one writer (:func:`document_bytes`) and their one reader
(:func:`read_document`), which checks the format and the fields every such document has.

Their shapes are open where they carry the scorer's report: a task, an assertion or a status the scorer adds
is published under its own name (``dict[str, object]`` entries), never dropped.
"""

from __future__ import annotations

from typing import Literal, NotRequired, TypedDict, cast, overload

from generator.base import strict_json
from generator.base.errors import GeneratorError
from generator.base.jsonvalue import indented_json
from generator.publish.reference_runs import ReferenceJson
from generator.publish.wording import FORMAT_INDEX, FORMAT_RAPPORT
from generator.score.report_json import AssertionJson, OverclaimJson, TaskResultJson

Entry = dict[str, object]  # one published entry that carries the scorer's fields as they are


class LinkJson(TypedDict):
    proof_id: str
    lien: str


class PublishedAssertion(AssertionJson):
    """An assertion as the scorer judged it, with its status and cause in words and its proofs' links."""

    statut_texte: str
    cause_texte: str | None
    preuves: list[LinkJson]
    detail_texte: str  # the detail in French (publish/french.py); ``detail`` stays the scorer's


class PublishedTask(TaskResultJson):
    """A task as the scorer judged it, with the submission's file, time and narrative."""

    statut_texte: str
    fichier: str | None
    recu_le: str | None
    recit: str | None
    assertions: list[PublishedAssertion]


class StackJson(TypedDict):
    texte: str
    mention: str


class MergedJson(TypedDict):
    """A DID merged into a ranked participant (§9.1)."""

    agent: str
    did: str
    tableau: str
    inscrit_le: str
    classe_sous: dict[str, str]
    motif: str
    soumissions_ecartees: int


class _Draft(TypedDict, total=False):
    brouillon: str  # a draft only: says so


class Head(_Draft):
    """The first fields of every document of a close (:meth:`Publication.head`)."""

    format: str
    piste: str
    saison: int
    statut: str
    etiquetage_ai_act: str


class FiguresJson(TypedDict):
    reussite: int
    overclaim: OverclaimJson
    taches_rendues: int


class DecidedJson(TypedDict):
    """One decided contestation as the index and the report list it."""

    contestation: str
    did: str
    agent: str
    tache: str
    assertion: str
    cause: str
    demandee_le: str
    decision: str
    decidee_le: str
    par: str
    motif: str
    dans_le_delai: bool
    statut_rectifie: str | None


class RectificationJson(TypedDict):
    """Beside the original figures: the rectified ones and what rectified them."""

    figures: FiguresJson
    le: str  # the last decision's day
    contestations: list[DecidedJson]


class RapportJson(Head):
    """One ranked participant's ``corpus-rapport/1``."""

    agent: str
    did: str
    tableau: str
    inscrit_le: str
    stack: StackJson
    reference: ReferenceJson | None
    index: str
    recit_note: str
    score: Entry
    taches: list[PublishedTask]
    assertions_non_etayees: list[Entry]
    rejets: list[Entry]
    defauts_instrument: list[Entry]
    en_attente: list[Entry]
    remplacees: list[Entry]
    hors_delai: list[Entry]
    fusionnes: list[MergedJson]
    score_corpus: Entry


class LineJson(TypedDict):
    """A line of a table: the constant answer's (first), or a ranked participant's."""

    agent: str
    did: str | None
    overclaim: str | OverclaimJson
    reussite: int
    taches_rendues: int | None
    stack: StackJson | None
    preuves: str | None
    verdict: NotRequired[str]
    rapport: NotRequired[str]
    inscrit_le: NotRequired[str]
    en_attente: NotRequired[list[str]]
    reference: NotRequired[ReferenceJson]  # a reference run's model, version, framework, prompt: rejouable


class TableJson(TypedDict):
    titre: str
    etiquette: str
    lignes: list[LineJson]


class IndexJson(Head):
    """``index.json``: two tables, never merged, the constant line first in each."""

    titre: str
    ouverture: str | None
    cloture: str | None
    gel: dict[str, str]
    conditions_1_2: str
    taches_total: int
    ordre: str
    ordre_texte: str
    notes: dict[str, str]
    tableaux: dict[str, TableJson]
    fusionnes: list[MergedJson]


class InvalidationJson(TypedDict):
    invalidee_le: str
    motif: str
    gel_en_vigueur: str | None
    gels: int


class InvalidatedIndexJson(TypedDict):
    """``index.json`` of an invalidated season: the head, the invalidation, and no table."""

    format: str
    piste: str
    saison: int
    statut: str
    etiquetage_ai_act: str
    titre: str
    invalidation: InvalidationJson
    texte: str


class DocumentError(GeneratorError):
    """A file that is not the published document it should be: not JSON, another format, a field missing."""


def document_bytes(document: IndexJson | RapportJson) -> bytes:
    """The one writer of ``index.json`` and the reports: indented UTF-8 JSON, one newline at the end."""
    return indented_json(document)


_REQUIRED = {FORMAT_INDEX: IndexJson.__required_keys__, FORMAT_RAPPORT: RapportJson.__required_keys__}


def formatted(data: bytes, form: str, source: str) -> dict[str, object]:
    """A published JSON document read back: strict JSON, an object of the format ``form`` (:class:`DocumentError`
    names the file otherwise)."""
    try:
        value = strict_json.document(data)
    except strict_json.NotJson as exc:
        raise DocumentError(exc.text(source)) from None
    if not isinstance(value, dict) or value.get("format") != form:
        raise DocumentError(f"{source}: /format: expected {form!r}")
    return value


@overload
def read_document(data: bytes, form: Literal["corpus-index/1"], source: str) -> IndexJson: ...
@overload
def read_document(data: bytes, form: Literal["corpus-rapport/1"], source: str) -> RapportJson: ...
def read_document(data: bytes, form: str, source: str) -> IndexJson | RapportJson:
    """The one reader of a published ``index.json`` or report: strict JSON of the format ``form`` with every
    field of its kind (:class:`DocumentError` names the file and the first field missing otherwise)."""
    value = formatted(data, form, source)
    missing = sorted(name for name in _REQUIRED[form] if name not in value)
    if missing:
        raise DocumentError(f"{source}: /{missing[0]}: missing")
    return cast(IndexJson, value) if form == FORMAT_INDEX else cast(RapportJson, value)
