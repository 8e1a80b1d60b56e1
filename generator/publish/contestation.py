"""Contestation (spec §9.2): "Un participant peut contester un scoring dans une fenêtre fixée après publication.
La contestation porte sur une assertion précise et sur la cause affichée, jamais sur le barème (gelé) ni sur le
corpus (figé)." 14 days after the score's publication to ask, a human decision with its motive within 30 days,
the rectification published.

Where: ``<freeze folder>/contestations/`` of the track (beside the record, its anchors and an invalidation:
what the season committed to and what happened to it). ``corpus contest add`` writes ``c<NNN>.json``
(``corpus-contestation/1``) once; ``corpus contest decide`` writes ``c<NNN>.decision.json``
(``corpus-decision/1``) once. Nothing is ever rewritten: a second decision is refused. A contestation is
checked against the published index and report (``--index``, the folder ``corpus index`` wrote for the track):
the participant, the task and the assertion must be there, and the cause must be the one the report shows.
Every date is a day (``YYYY-MM-DD``) given by the caller (``--le``, today by default), so that the windows
can be tested.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import TypedDict, cast

from generator.base import strict_json
from generator.base.bounded_read import PUBLISHED_LIMIT, read_bounded
from generator.base.errors import GeneratorError
from generator.base.path_checks import inside_checkout
from generator.base.transaction import make_dir, make_parents, write_file
from generator.publish.published import DocumentError, IndexJson, RapportJson, read_document
from generator.publish.wording import CAUSES, PUBLIE
from generator.tracks.model import Track

FORMAT_CONTESTATION = "corpus-contestation/1"
FORMAT_DECISION = "corpus-decision/1"
WINDOW = timedelta(days=14)  # to contest, after the score's publication (§9.2)
DECISION_DELAY = timedelta(days=30)  # to decide, after the request (§9.2)
ACCEPTEE, REFUSEE = "acceptee", "refusee"
DECISIONS = (ACCEPTEE, REFUSEE)
RECTIFIED_STATUSES = ("etayee", "defaut_instrument")  # what an accepted contestation makes of the assertion
_ID = re.compile(r"c[0-9]{3,}")


class ContestRefused(GeneratorError):
    """A contestation or a decision refused: one line naming what is wrong; nothing written."""


def contest_folder(track: Track) -> Path:
    """``<freeze folder>/contestations``, checkout-relative."""
    return Path(track.trees.freeze) / "contestations"


class ContestationJson(TypedDict):
    format: str
    id: str
    piste: str
    did: str
    agent: str
    tache: str
    assertion: str
    cause: str
    cause_texte: str
    demandee_le: str
    score_publie_le: str
    fenetre_jusqu_au: str  # the last day of the 14-day window
    decision_attendue_avant: str  # the last day of the 30 days to decide


class DecisionJson(TypedDict):
    format: str
    contestation: str
    decision: str  # acceptee, refusee
    motif: str
    decidee_le: str
    par: str
    dans_le_delai: bool
    statut_rectifie: str | None  # accepted: what the assertion becomes (etayee, defaut_instrument)


@dataclass(frozen=True)
class Contest:
    """One contestation and its decision (None: awaiting it)."""

    request: ContestationJson
    decision: DecisionJson | None

    @property
    def accepted(self) -> bool:
        return self.decision is not None and self.decision["decision"] == ACCEPTEE


def day(text: str, flag: str) -> date:
    """A ``YYYY-MM-DD`` day (``--le``, ``--publie-le``), one line otherwise."""
    try:
        if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
            raise ValueError(text)
        return date.fromisoformat(text)
    except ValueError:
        raise ContestRefused(f"{flag} {text!r}: not a day written YYYY-MM-DD") from None


def _json_bytes(value: object) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _read_json(path: Path, what: str) -> object:
    try:
        return strict_json.document(read_bounded(path, PUBLISHED_LIMIT, follow_symlinks=False))
    except strict_json.NotJson as exc:
        raise ContestRefused(exc.text(str(path))) from None
    except OSError as exc:
        raise ContestRefused(f"{path}: cannot read {what}: {exc.strerror or exc}") from None


def _published(index_dir: Path, track: Track) -> IndexJson:
    path = index_dir / "index.json"
    if not path.is_file():
        raise ContestRefused(f"--index {index_dir}: no index.json: give the folder corpus index published for "
                             f"the track {track.piste} (OUT/{track.piste})")
    try:
        index = read_document(read_bounded(path, PUBLISHED_LIMIT), "corpus-index/1", str(path))
    except (DocumentError, OSError) as exc:
        raise ContestRefused(str(exc)) from None
    if index["piste"] != track.piste:
        raise ContestRefused(f"{path}: the index of the track {index['piste']}, not of {track.piste}")
    if index["statut"] != PUBLIE:
        raise ContestRefused(f"{path}: statut {index['statut']!r}: a draft publishes no score, there is nothing "
                             "to contest (§9.2: after publication)")
    return index


def _report_of(index_dir: Path, index: IndexJson, did: str) -> RapportJson:
    for table in index["tableaux"].values():
        for line in table["lignes"]:
            if line["did"] == did and "rapport" in line:
                path = index_dir / line["rapport"]
                try:
                    return read_document(read_bounded(path, PUBLISHED_LIMIT), "corpus-rapport/1", str(path))
                except (DocumentError, OSError) as exc:
                    raise ContestRefused(str(exc)) from None
    raise ContestRefused(f"--did {did}: no ranked participant of the index has this DID (a merged DID is "
                         "contested under the participant it is ranked with)")


def read_contests(root: Path, track: Track) -> list[Contest]:
    """Every contestation of the track with its decision, in the order they were filed."""
    folder = contest_folder(track)
    inside_checkout(root, folder, ContestRefused)
    if not os.path.lexists(root / folder):
        return []
    found: list[Contest] = []
    names = sorted(os.listdir(root / folder))
    for name in names:
        stem = name.removesuffix(".json")
        if name.endswith(".decision.json") and f"{name.removesuffix('.decision.json')}.json" in names:
            continue
        if not (name.endswith(".json") and _ID.fullmatch(stem)):
            raise ContestRefused(f"{folder / name}: not a contestation (c<NNN>.json) nor its decision "
                                 "(c<NNN>.decision.json): restore the folder from git")
        request = _read_json(root / folder / name, "a contestation")
        if not (isinstance(request, dict) and request.get("format") == FORMAT_CONTESTATION
                and request.get("id") == stem):
            raise ContestRefused(f"{folder / name}: not a {FORMAT_CONTESTATION} document of id {stem}")
        decision_path = root / folder / f"{stem}.decision.json"
        decision = _read_json(decision_path, "a decision") if decision_path.is_file() else None
        if decision is not None and not (isinstance(decision, dict) and decision.get("format") == FORMAT_DECISION
                                         and decision.get("contestation") == stem):
            raise ContestRefused(f"{decision_path.relative_to(root)}: not a {FORMAT_DECISION} document of {stem}")
        found.append(Contest(cast(ContestationJson, request), cast("DecisionJson | None", decision)))
    return found


def _write_once(root: Path, path: Path, data: bytes) -> None:
    try:
        if not (root / path.parent).is_dir():
            make_parents(root / path.parent, root)
            make_dir(root / path.parent)
        write_file(root / path, data)
    except FileExistsError:
        raise ContestRefused(f"{path} already exists: nothing is rewritten; nothing written") from None
    except OSError as exc:
        raise ContestRefused(f"{path}: cannot write: {exc.strerror or exc}; nothing written") from None


@dataclass(frozen=True)
class ContestRequest:
    """What ``corpus contest add`` is given."""

    index_dir: Path  # the published folder of the track (index.json, rapports/)
    did: str
    tache: str
    assertion: str
    cause: str
    le: date  # the day of the request
    publie_le: date | None  # the day the score was published; None: the close's day (§7.4)


def add_contest(root: Path, track: Track, req: ContestRequest) -> tuple[Path, ContestationJson]:
    """Record a contestation once it holds (§9.2), else one line and nothing written: no assertion named, a
    cause that is not one of §4.1's five (the barème and the corpus are frozen), outside the window, a
    participant, task or assertion the published report does not hold, a cause other than the one it shows,
    the same assertion contested twice."""
    if not req.assertion.strip():
        raise ContestRefused("names no assertion: a contestation is about one assertion and the cause its report "
                             "shows (§9.2); nothing written")
    if req.cause not in CAUSES:
        raise ContestRefused(f"--cause {req.cause!r}: not one of the five causes of §4.1 ({', '.join(CAUSES)}); "
                             "the barème (frozen) and the corpus (frozen) are not contested (§9.2); nothing "
                             "written")
    index = _published(req.index_dir, track)
    cloture = index["cloture"]
    publie = req.publie_le or (day(cloture[:10], "the index's cloture") if cloture else None)
    if publie is None:
        raise ContestRefused("the index names no close: give --publie-le YYYY-MM-DD, the day the score was "
                             "published; nothing written")
    last = publie + WINDOW
    if not publie <= req.le <= last:
        when = "before the score was published" if req.le < publie else "after the window closed"
        raise ContestRefused(f"--le {req.le}: {when}: a contestation is filed within 14 days of the score's "
                             f"publication ({publie} to {last}, §9.2); nothing written")
    report = _report_of(req.index_dir, index, req.did)
    task = next((t for t in report["taches"] if t["tache"] == req.tache), None)
    if task is None:
        raise ContestRefused(f"--tache {req.tache}: no such task in the report of {report['agent']}; nothing "
                             "written")
    assertion = next((a for a in task["assertions"] if a["id"] == req.assertion), None)
    if assertion is None:
        raise ContestRefused(f"--assertion {req.assertion}: the report of {report['agent']} holds no such "
                             f"assertion in {req.tache}; nothing written")
    shown = assertion["cause"]
    if shown != req.cause:
        said = f"shows the cause {shown}" if shown else "shows it étayée, with no cause"
        raise ContestRefused(f"--cause {req.cause}: the report of {report['agent']} {said} for {req.tache} "
                             f"{req.assertion}: a contestation is about the cause the report shows; nothing "
                             "written")
    contests = read_contests(root, track)
    for c in contests:
        r = c.request
        if (r["did"], r["tache"], r["assertion"]) == (req.did, req.tache, req.assertion):
            raise ContestRefused(f"{req.tache} {req.assertion} of {req.did} is already contested ({r['id']}); "
                                 "nothing written")
    ident = f"c{len(contests) + 1:03d}"
    document: ContestationJson = {
        "format": FORMAT_CONTESTATION, "id": ident, "piste": track.piste, "did": req.did,
        "agent": report["agent"], "tache": req.tache, "assertion": req.assertion, "cause": req.cause,
        "cause_texte": CAUSES[req.cause], "demandee_le": req.le.isoformat(),
        "score_publie_le": publie.isoformat(), "fenetre_jusqu_au": last.isoformat(),
        "decision_attendue_avant": (req.le + DECISION_DELAY).isoformat()}
    path = contest_folder(track) / f"{ident}.json"
    _write_once(root, path, _json_bytes(document))
    return path, document


@dataclass(frozen=True)
class DecisionRequest:
    """What ``corpus contest decide`` is given."""

    contestation: str
    decision: str  # acceptee, refusee
    motif: str
    par: str  # who decided
    le: date
    statut: str | None  # accepted: etayee or defaut_instrument


def decide_contest(root: Path, track: Track, req: DecisionRequest) -> tuple[Path, DecisionJson]:
    """Record the human decision once (§9.2): accepted (with what the assertion becomes) or refused, its
    motive, who decided, its date; past the 30 days it is recorded and said overdue. One line and nothing
    written for an unknown contestation, a second decision, an empty motive or name, a date before the
    request."""
    contests = {c.request["id"]: c for c in read_contests(root, track)}
    contest = contests.get(req.contestation)
    if contest is None:
        known = ", ".join(contests) or "none"
        raise ContestRefused(f"--contestation {req.contestation}: unknown for the track {track.piste} (filed: "
                             f"{known}); nothing written")
    if contest.decision is not None:
        d = contest.decision
        raise ContestRefused(f"{req.contestation} is already decided ({d['decision']} on {d['decidee_le']} by "
                             f"{d['par']}): a decision is given once; nothing written")
    if req.decision not in DECISIONS:
        raise ContestRefused(f"--decision {req.decision!r}: acceptee or refusee; nothing written")
    if not req.motif.strip():
        raise ContestRefused("--motif is empty: a decision is motivated (§9.2); nothing written")
    if not req.par.strip():
        raise ContestRefused("--par is empty: a decision names who took it (a human decision, §9.2); nothing "
                             "written")
    if req.decision == ACCEPTEE and req.statut not in RECTIFIED_STATUSES:
        raise ContestRefused(f"an accepted contestation says what the assertion becomes: --statut "
                             f"{' or '.join(RECTIFIED_STATUSES)}; nothing written")
    if req.decision == REFUSEE and req.statut is not None:
        raise ContestRefused("--statut goes with an accepted contestation only; nothing written")
    asked = date.fromisoformat(contest.request["demandee_le"])
    if req.le < asked:
        raise ContestRefused(f"--le {req.le}: before the request ({asked}); nothing written")
    document: DecisionJson = {
        "format": FORMAT_DECISION, "contestation": req.contestation,
        "decision": req.decision, "motif": req.motif.strip(),
        "decidee_le": req.le.isoformat(), "par": req.par.strip(),
        "dans_le_delai": req.le <= asked + DECISION_DELAY, "statut_rectifie": req.statut}
    path = contest_folder(track) / f"{req.contestation}.decision.json"
    _write_once(root, path, _json_bytes(document))
    return path, document
