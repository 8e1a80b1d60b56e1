"""The ``corpus-score/1`` report as JSON, its shape typed (docs/season.md, Scoring): what
:func:`generator.score.track.score_submissions` returns and what :class:`generator.score.render.ScoreReport`
writes (its one writer, ``to_bytes``) and reads back field by field (its one reader, ``from_json``)."""

from __future__ import annotations

from typing import NotRequired, TypedDict

from generator.base.jsonvalue import JsonValue


class FormJson(TypedDict):
    ressource: str
    champ: str
    valeur: JsonValue


class FactJson(FormJson):
    """A founding fact as the key writes it, and as a report names it missing."""

    critere: str
    formes_equivalentes: NotRequired[list[FormJson]]


class AssertionJson(TypedDict):
    id: str
    ressource: str
    champ: str
    valeur: JsonValue
    statut: str
    cause: str | None
    detail: str
    ressource_propre: bool
    conditions_1_2: str


class TaskResultJson(TypedDict):
    """What the scorer judged of one task (its assertions apart)."""

    tache: str
    statut: str
    motif: str
    verdict: str | None
    verdict_attendu: str
    verdict_exact: bool
    fonde: bool
    reussie: bool
    faits_manquants: list[FactJson]
    minimum: int
    plafond: int
    comptees: int
    non_etayees: int
    defauts_instrument: int
    rejets: list[str]


class TaskJson(TaskResultJson):
    assertions: list[AssertionJson]
    fichier: NotRequired[str]  # the submission's file, when the CLI knows it


class StrayJson(TypedDict):
    """A submission that names no task of the season, and why it was rejected at entry."""

    index: int
    task_id: JsonValue  # as written: any JSON value, or null
    rejets: list[str]
    fichier: NotRequired[str]


class GelJson(TypedDict):
    statut: str
    detail: str
    ancre: NotRequired[str]  # the anchoring proof's id (a frozen season only)


class OverclaimJson(TypedDict):
    non_etayees: int
    rendues: int
    taux: float | None


class ConstantJson(TypedDict):
    verdict: str
    reussite: int
    overclaim: str


class ProofsSummaryJson(TypedDict):
    citees: int
    conditions_1_2_remplies: int
    echouees: int
    en_attente: int
    non_verifie: list[str]
    incidents: list[str]


class ScoreJson(TypedDict):
    format: str
    saison: int
    piste: str
    gel: GelJson
    conditions_1_2: str
    reussite: int
    taches_total: int
    overclaim: OverclaimJson
    taches_rendues: int
    en_attente: list[str]
    meilleure_reponse_constante: ConstantJson
    causes: dict[str, int]
    taches: list[TaskJson]
    hors_saison: list[StrayJson]
    preuves: NotRequired[ProofsSummaryJson]  # with --proofs: what was checked of the cited proofs
