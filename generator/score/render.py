"""The score report as a readable table, as JSON bytes (``--json``), and as a typed :class:`ScoreReport` that
writes those bytes and reads them back field by field."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar, cast

from generator.base import strict_json
from generator.base.bounded_read import PUBLISHED_LIMIT
from generator.base.errors import GeneratorError, read_file
from generator.base.jsonvalue import JsonValue, indented_json
from generator.score.key import Fact, Form
from generator.score.report_json import (
    AssertionJson,
    FactJson,
    GelJson,
    ProofsSummaryJson,
    ScoreJson,
    StrayJson,
    TaskJson,
)
from generator.score.track import FORMAT

_CAUSE_LABELS = {"preuve_invalide": "preuve invalide", "identite_non_liee": "identité non liée",
                 "ressource": "ressource", "defaut_instrument": "défaut d'instrument", "valeur": "valeur"}


def report_bytes(report: ScoreJson) -> bytes:
    return indented_json(report)


def _yes(flag: bool) -> str:
    return "oui" if flag else "non"


def _fact(fact: FactJson) -> str:
    return (f"{fact['ressource']} {fact['champ']} = {json.dumps(fact['valeur'], ensure_ascii=False)} "
            f"[{fact['critere']}]")


def proof_lines(report: ScoreJson) -> list[str]:
    """The header on conditions 1 and 2, in words that cannot be misread: "vérifiées" only when every cited
    proof meets both; otherwise how many meet them, fail, or wait; then what was not verified offline."""
    head = "conditions 1 et 2 (preuve valide, identité liée): "
    if report["conditions_1_2"] != "verifiees":
        return [head + "non vérifiées hors ligne (sans --proofs)"]
    summary = report.get("preuves")
    if summary is None:
        return [head + "vérifiées (--proofs)"]
    cited, met = summary["citees"], summary["conditions_1_2_remplies"]
    if cited and met == cited:
        rest = " (hors ce qui suit, non vérifiable hors ligne)" if summary["non_verifie"] else ""
        lines = [f"conditions 1 et 2 vérifiées: les {cited} preuve(s) citée(s) les remplissent{rest}"]
    else:
        lines = [head + f"{met} preuve(s) les remplissent, {summary['echouees']} échouent, "
                 f"{summary['en_attente']} en attente, sur {cited} citée(s)"]
    lines += [f"non vérifié hors ligne: {note}" for note in summary["non_verifie"]]
    lines += [f"incident Trust Layer: {note}" for note in summary["incidents"]]
    return lines


def render_table(report: ScoreJson) -> str:
    """Tasks, then the track, then one line per assertion, rejection and missing fact."""
    offline = report["conditions_1_2"] != "verifiees"
    columns = ("tâche", "statut", "verdict", "attendu", "exact", "fondé", "compt./min", "non ét.", "défauts",
               "manquants")
    rows = [columns] + [(t["tache"], t["statut"], t["verdict"] or "-", t["verdict_attendu"],
                         _yes(t["verdict_exact"]), _yes(t["fonde"]), f"{t['comptees']}/{t['minimum']}",
                         str(t["non_etayees"]), str(t["defauts_instrument"]), str(len(t["faits_manquants"])))
                        for t in report["taches"]]
    widths = [max(len(row[i]) for row in rows) for i in range(len(columns))]
    lines = [f"corpus score: saison {report['saison']}, piste {report['piste']}; gel: {report['gel']['detail']}",
             *proof_lines(report)]
    if report["en_attente"]:
        lines.append(f"SCORE PROVISOIRE: {', '.join(report['en_attente'])} en attente d'ancrage (non scorées, "
                     "à rejouer)")
    lines.append("")
    lines += ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
              for row in rows]
    overclaim = report["overclaim"]
    rate = "sans objet" if overclaim["taux"] is None else f"{100 * overclaim['taux']:.1f} %"
    constant = report["meilleure_reponse_constante"]
    lines += ["", f"réussite {report['reussite']}/{report['taches_total']} · overclaim "
              f"{overclaim['non_etayees']}/{overclaim['rendues']} ({rate}) "
              f"sur {report['taches_rendues']} tâche(s) "
              f"rendue(s) · meilleure réponse constante: {constant['verdict']} {constant['reussite']}/"
              f"{report['taches_total']} (overclaim sans objet)",
              "causes: " + " · ".join(f"{_CAUSE_LABELS[c]} {n}" for c, n in report["causes"].items())]
    detail = []
    marker = " [conditions 1-2 non vérifiées hors ligne]" if offline else ""
    for task in report["taches"]:
        if task["statut"] not in ("rendue",):
            detail.append(f"{task['tache']} {task['statut']}: {task['motif']}")
        source = f"{task['fichier']}: " if task.get("fichier") else ""
        detail += [f"{task['tache']} rejet: {source}{problem}" for problem in task["rejets"]]
        for a in task["assertions"]:
            cause = f" ({a['cause']})" if a["cause"] and a["cause"] != a["statut"] else ""
            detail.append(f"{task['tache']} {a['id']} {a['statut']}{cause}: {a['ressource']} {a['champ']} = "
                          f"{json.dumps(a['valeur'], ensure_ascii=False)}: {a['detail']}{marker}")
        detail += [f"{task['tache']} fait manquant: {_fact(f)}" for f in task["faits_manquants"]]
    detail += [f"soumission {s.get('fichier') or '#' + str(s['index'])} rejet: {p}"
               for s in report["hors_saison"] for p in s["rejets"]]
    return "\n".join([*lines, "", *detail]) + "\n"


# ------------------------------------------------------------------------------ the report, typed


class ReportError(GeneratorError):
    """A ``corpus-score/1`` report that cannot be read back: not JSON, or a field missing or of the wrong type."""


class _Fields:
    """The fields of one JSON object of a report, each taken with its type checked (else a ReportError naming
    the file and the JSON Pointer of the field)."""

    def __init__(self, data: object, where: str, source: str) -> None:
        if not isinstance(data, dict):
            raise ReportError(f"{source}: {where or '/'}: expected an object")
        self.data: dict[str, JsonValue] = data
        self.where, self.source = where, source

    def _fail(self, name: str, wanted: str) -> ReportError:
        return ReportError(f"{self.source}: {self.where}/{name}: expected {wanted}")

    def take(self, name: str, check: Callable[[JsonValue], bool], wanted: str) -> JsonValue:
        if name not in self.data or not check(self.data[name]):
            raise self._fail(name, wanted)
        return self.data[name]

    def text(self, name: str) -> str:
        return cast(str, self.take(name, lambda v: isinstance(v, str), "a string"))

    def text_or_none(self, name: str) -> str | None:
        return cast(str | None, self.take(name, lambda v: v is None or isinstance(v, str), "a string or null"))

    def count(self, name: str) -> int:
        return cast(int, self.take(name, lambda v: type(v) is int and v >= 0, "a count"))

    def flag(self, name: str) -> bool:
        return cast(bool, self.take(name, lambda v: type(v) is bool, "true or false"))

    def rate(self, name: str) -> float | None:
        return cast(float | None, self.take(name, lambda v: v is None or (type(v) in (int, float) and 0 <= cast(
            float, v) <= 1), "a rate from 0 to 1, or null"))

    def texts(self, name: str) -> tuple[str, ...]:
        return tuple(cast(list[str], self.take(name, lambda v: isinstance(v, list) and all(isinstance(i, str)
                                                                                         for i in v),
                                               "a list of strings")))

    def items(self, name: str, read: Callable[[JsonValue, str, str], T]) -> tuple[T, ...]:
        values = cast(list[JsonValue], self.take(name, lambda v: isinstance(v, list), "a list"))
        return tuple(read(item, f"{self.where}/{name}/{i}", self.source) for i, item in enumerate(values))

    def record(self, name: str) -> _Fields:
        return _Fields(self.take(name, lambda v: isinstance(v, dict), "an object"), f"{self.where}/{name}",
                       self.source)


T = TypeVar("T")


def _proofs_summary(f: _Fields) -> ProofsSummaryJson:
    """The optional ``preuves`` block, each field typed."""
    block = f.record("preuves")
    return {"citees": block.count("citees"), "conditions_1_2_remplies": block.count("conditions_1_2_remplies"),
            "echouees": block.count("echouees"), "en_attente": block.count("en_attente"),
            "non_verifie": list(block.texts("non_verifie")), "incidents": list(block.texts("incidents"))}


@dataclass(frozen=True)
class AssertionLine:
    """One assertion of a task as judged (spec §4.1): its claim, status, cause and why."""

    id: str
    ressource: str
    champ: str
    valeur: JsonValue
    statut: str
    cause: str | None
    detail: str
    ressource_propre: bool
    conditions_1_2: str

    @classmethod
    def from_json(cls, data: JsonValue, where: str, source: str) -> AssertionLine:
        f = _Fields(data, where, source)
        return cls(f.text("id"), f.text("ressource"), f.text("champ"), f.take("valeur", _any, "a JSON value"),
                   f.text("statut"), f.text_or_none("cause"), f.text("detail"), f.flag("ressource_propre"),
                   f.text("conditions_1_2"))

    def to_json(self) -> AssertionJson:
        return {"id": self.id, "ressource": self.ressource, "champ": self.champ, "valeur": self.valeur,
                "statut": self.statut, "cause": self.cause, "detail": self.detail,
                "ressource_propre": self.ressource_propre, "conditions_1_2": self.conditions_1_2}


def _read_fact(data: JsonValue, where: str, source: str) -> Fact:
    f = _Fields(data, where, source)
    forms = None
    if "formes_equivalentes" in f.data:
        forms = f.items("formes_equivalentes", lambda d, w, s: Form(*_form_fields(_Fields(d, w, s))))
    return Fact(*_form_fields(f), f.text("critere"), forms)


def _form_fields(f: _Fields) -> tuple[str, str, JsonValue]:
    return f.text("ressource"), f.text("champ"), f.take("valeur", _any, "a JSON value")


def _any(value: JsonValue) -> bool:
    return True


@dataclass(frozen=True)
class TaskResult:
    """One task of the report (spec §5.7): status, verdict, fondé, counts, rejections, assertions."""

    tache: str
    statut: str
    motif: str
    verdict: str | None
    verdict_attendu: str
    verdict_exact: bool
    fonde: bool
    reussie: bool
    faits_manquants: tuple[Fact, ...]
    minimum: int
    plafond: int
    comptees: int
    non_etayees: int
    defauts_instrument: int
    rejets: tuple[str, ...]
    assertions: tuple[AssertionLine, ...]
    fichier: str | None = None  # the submission's file, when the CLI knows it

    @classmethod
    def from_json(cls, data: JsonValue, where: str, source: str) -> TaskResult:
        f = _Fields(data, where, source)
        return cls(f.text("tache"), f.text("statut"), f.text("motif"), f.text_or_none("verdict"),
                   f.text("verdict_attendu"), f.flag("verdict_exact"), f.flag("fonde"), f.flag("reussie"),
                   f.items("faits_manquants", _read_fact), f.count("minimum"), f.count("plafond"),
                   f.count("comptees"), f.count("non_etayees"), f.count("defauts_instrument"), f.texts("rejets"),
                   f.items("assertions", AssertionLine.from_json),
                   f.text("fichier") if "fichier" in f.data else None)

    def to_json(self) -> TaskJson:
        data: TaskJson = {"tache": self.tache, "statut": self.statut, "motif": self.motif, "verdict": self.verdict,
                "verdict_attendu": self.verdict_attendu, "verdict_exact": self.verdict_exact, "fonde": self.fonde,
                "reussie": self.reussie, "faits_manquants": [fact.to_json() for fact in self.faits_manquants],
                "minimum": self.minimum, "plafond": self.plafond, "comptees": self.comptees,
                "non_etayees": self.non_etayees, "defauts_instrument": self.defauts_instrument,
                "rejets": list(self.rejets), "assertions": [a.to_json() for a in self.assertions]}
        if self.fichier is not None:
            data["fichier"] = self.fichier
        return data


@dataclass(frozen=True)
class Stray:
    """A submission that names no task of the season, with why it was rejected at entry."""

    index: int
    task_id: JsonValue  # as written: any JSON value, or null
    rejets: tuple[str, ...]
    fichier: str | None = None

    @classmethod
    def from_json(cls, data: JsonValue, where: str, source: str) -> Stray:
        f = _Fields(data, where, source)
        return cls(f.count("index"), f.take("task_id", _any, "a JSON value"), f.texts("rejets"),
                   f.text("fichier") if "fichier" in f.data else None)

    def to_json(self) -> StrayJson:
        data: StrayJson = {"index": self.index, "task_id": self.task_id, "rejets": list(self.rejets)}
        if self.fichier is not None:
            data["fichier"] = self.fichier
        return data


@dataclass(frozen=True)
class ScoreReport:
    """The ``corpus-score/1`` report (docs/season.md, Scoring), typed: what ``corpus score --json`` writes,
    and reads back field by field (:meth:`read`)."""

    saison: int
    piste: str
    gel: tuple[str, str, str | None]  # statut, detail, the anchoring proof's id (a frozen season only)
    conditions_1_2: str
    reussite: int
    taches_total: int
    overclaim: tuple[int, int, float | None]  # non_etayees, rendues, taux
    taches_rendues: int
    en_attente: tuple[str, ...]
    meilleure_reponse_constante: tuple[str, int, str]  # verdict, reussite, overclaim
    causes: tuple[tuple[str, int], ...]
    taches: tuple[TaskResult, ...]
    hors_saison: tuple[Stray, ...]
    preuves: ProofsSummaryJson | None = None  # with --proofs: what was checked of the cited proofs

    @classmethod
    def from_json(cls, data: object, source: str = "report") -> ScoreReport:
        """Check every field; :class:`ReportError` names the file and the field otherwise."""
        f = _Fields(data, "", source)
        f.take("format", lambda v: v == FORMAT, repr(FORMAT))
        gel, overclaim, constant = f.record("gel"), f.record("overclaim"), f.record("meilleure_reponse_constante")
        causes = f.record("causes")
        return cls(
            f.count("saison"), f.text("piste"),
            (gel.text("statut"), gel.text("detail"), gel.text("ancre") if "ancre" in gel.data else None),
            f.text("conditions_1_2"),
            f.count("reussite"), f.count("taches_total"),
            (overclaim.count("non_etayees"), overclaim.count("rendues"),
             overclaim.rate("taux")),
            f.count("taches_rendues"), f.texts("en_attente"),
            (constant.text("verdict"), constant.count("reussite"), constant.text("overclaim")),
            tuple((name, causes.count(name)) for name in causes.data),
            f.items("taches", TaskResult.from_json), f.items("hors_saison", Stray.from_json),
            _proofs_summary(f) if "preuves" in f.data else None)

    @classmethod
    def from_bytes(cls, data: bytes, source: str) -> ScoreReport:
        try:
            document = strict_json.document(data)
        except strict_json.NotJson as exc:
            raise ReportError(exc.text(source)) from None
        return cls.from_json(document, source)

    @classmethod
    def read(cls, path: Path) -> ScoreReport:
        """A report written by ``corpus score --json``, read bounded and checked field by field."""
        return cls.from_bytes(read_file(path, ReportError, "not found", limit=PUBLISHED_LIMIT), str(path))

    def to_json(self) -> ScoreJson:
        """The report as written, keys in the published order."""
        taux = self.overclaim[2]
        gel: GelJson = {"statut": self.gel[0], "detail": self.gel[1]}
        if self.gel[2]:
            gel["ancre"] = self.gel[2]
        report: ScoreJson = {
            "format": FORMAT, "saison": self.saison, "piste": self.piste,
            "gel": gel,
            "conditions_1_2": self.conditions_1_2,
            "reussite": self.reussite, "taches_total": self.taches_total,
            "overclaim": {"non_etayees": self.overclaim[0], "rendues": self.overclaim[1],
                          "taux": None if taux is None else float(taux)},
            "taches_rendues": self.taches_rendues, "en_attente": list(self.en_attente),
            "meilleure_reponse_constante": {"verdict": self.meilleure_reponse_constante[0],
                                            "reussite": self.meilleure_reponse_constante[1],
                                            "overclaim": self.meilleure_reponse_constante[2]},
            "causes": dict(self.causes),
            "taches": [task.to_json() for task in self.taches],
            "hors_saison": [stray.to_json() for stray in self.hors_saison],
        }
        if self.preuves is not None:
            report["preuves"] = self.preuves
        return report

    def to_bytes(self) -> bytes:
        """The ``--json`` file: indented UTF-8 JSON, one newline at the end."""
        return report_bytes(self.to_json())

    def with_files(self, by_task: Mapping[str, str], strays: Mapping[int, str]) -> ScoreReport:
        """The report naming each scored task's submission file and each stray submission's file."""
        return replace(self,
                       taches=tuple(replace(t, fichier=by_task.get(t.tache, t.fichier)) for t in self.taches),
                       hors_saison=tuple(replace(s, fichier=strays.get(s.index, s.fichier))
                                         for s in self.hors_saison))
