"""A track's close, assembled (spec §7): refuse unless the track is frozen and anchored and the season closed
(or write a draft that says so on every page), read the registrations and the submissions, merge the DIDs of
one key (§9.1), keep the last submission of each task before the close (§7.4), score each ranked
participant with ``corpus score``'s own function, and lay out the index and the reports.

Each file is written as it is made, aside, and the whole ``<out>/<piste>/`` swapped in at the end, or nothing
(:func:`publish_index`). What is the season's is computed once (:mod:`.season_context`), the participants are
scored on ``jobs`` processes (:mod:`.parallel`) and published in registration order: the same bytes whatever
their number (issue 43). Nothing here reads the clock: the instant to compare with the close is given
(``now``).
"""

from __future__ import annotations

import os
import shutil
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from generator.base.jsonvalue import JsonValue
from generator.base.transaction import Transaction, make_dir, write_file
from generator.contract.invalidation import Invalidation, read_invalidation
from generator.publish.contestation import read_contests
from generator.publish.files import IndexRefused
from generator.publish.free_text import published_document
from generator.publish.html import environment, render_index, render_report
from generator.publish.invalidation import invalidated_index
from generator.publish.merge import Participant, participants
from generator.publish.parallel import Tally, ordered_map
from generator.publish.publication import Publication
from generator.publish.published import DecidedJson, LineJson, MergedJson, document_bytes
from generator.publish.rectification import by_did, list_contestations, rectify_participant
from generator.publish.registrations import Registration, read_registrations
from generator.publish.report import participant_report
from generator.publish.season_clock import refuse_future
from generator.publish.season_context import SeasonContext, season_context
from generator.publish.selection import Selection, select
from generator.publish.submissions import FileBound, Received, read_received, route_submissions
from generator.publish.tables import index_document, participant_line
from generator.score import score_submissions
from generator.score.close_inputs import NO_OPTIONS, ScoreOptions
from generator.score.proof_source import FolderProofs
from generator.score.report_json import ScoreJson
from generator.score.season_pins import DEFAULT_TRUST_LAYER_URL
from generator.tracks.model import Track
from generator.trust_layer.anchor_time import instant_text

T = TypeVar("T")

DEFAULT_TRUST_LAYER = DEFAULT_TRUST_LAYER_URL  # GET <this>/v1/proof/<proof_id>: a proof's public view


@dataclass(frozen=True)
class IndexRequest:
    """What ``corpus index`` was given. ``score_options`` are the options of ``score_submissions`` beside the
    submissions, the root and the track (``proofs``, ``salt_file``, ``anchor_file``...), read from what
    ``corpus score`` is given (:func:`generator.score.close_inputs.score_options`): passed on as they are,
    never read here but for the anchor a publication requires."""

    root: Path
    track: Track
    submissions: Path
    registrations: Path
    close: datetime | None  # --season-close
    draft: bool
    now: datetime
    trust_layer_url: str = DEFAULT_TRUST_LAYER
    score_options: ScoreOptions = NO_OPTIONS
    opening: datetime | None = None  # the season's opening (pinned, else the anchor's time), beside the close
    proof_folder: FolderProofs | None = None  # --proofs FOLDER: judged as each participant is scored
    jobs: int = 1  # processes scoring the participants: the bytes are the same whatever their number

    def score(self, submissions: Sequence[JsonValue]) -> ScoreJson:
        """``corpus score``'s report of these submissions: the one function, the same options (the close
        itself does its steps once for the season: :mod:`.season_context`)."""
        return score_submissions(submissions, root=self.root, track=self.track, options=self.score_options)


def publication_close(req: IndexRequest) -> datetime | None:
    """The close, once publication is allowed: the track frozen (record) and anchored (published anchor or
    ``--anchor``), and the close passed. A draft skips both, and says so on every page."""
    close = req.close
    if req.draft:
        return close
    places = req.track.places
    missing = [str(p) for p in (places.record, places.anchor) if not os.path.lexists(req.root / p)
               and not (p == places.anchor and req.score_options.anchor_file is not None)]
    if missing:
        raise IndexRefused(f"the track {req.track.piste} is not frozen and anchored ({' and '.join(missing)} "
                           "missing): nothing is published before the freeze and its anchor (spec §7.4, §8); "
                           "--brouillon writes a draft marked as such")
    if close is None:
        raise IndexRefused(f"give the close of the season (corpus pin --track {req.track.piste} --season-close "
                           "YYYY-MM-DDTHH:MM:SSZ, or --season-close): nothing is published before it (spec "
                           "§7.4); --brouillon writes a draft marked as such")
    if req.now < close:
        raise IndexRefused(f"the season closes at {instant(close)}, it is {instant_text(req.now)}: "
                           "nothing is published before the close (spec §7.4); --brouillon writes a draft "
                           "marked as such")
    return close


def instant(moment: datetime) -> str:
    """An instant as the pages write it: ISO 8601 in UTC, ``Z``, fractions of a second only when given."""
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _merged(p: Participant, by_did: dict[str, list[Received]]) -> list[MergedJson]:
    return [{"agent": m.registration.agent, "did": m.registration.did, "tableau": m.registration.tableau,
             "inscrit_le": m.registration.inscrit_le_texte,
             "classe_sous": {"agent": p.ranked.agent, "did": p.ranked.did}, "motif": m.motif(p.ranked),
             "soumissions_ecartees": len(by_did.get(m.registration.did, []))} for m in p.merged]


@dataclass
class Written:
    """What :func:`write_index` wrote: the reports, the proofs it judged, the tokens it verified (each once)."""

    reports: int = 0
    proofs: int = 0
    tally: Tally = field(default_factory=Tally)


@dataclass(frozen=True)
class Turn:
    """One ranked participant's turn: who, which submissions count, who was merged into them."""

    participant: Participant
    selection: Selection
    merged: list[MergedJson]


@dataclass(frozen=True)
class Routed:
    """The close's registrations and every submission routed to its DID, once: what the index scores and the
    close publication lists its records from."""

    registrations: list[Registration]
    by_did: dict[str, list[Received]]
    turns: list[Turn]


class _Close:
    """One close: the season's context, the publication, the decided contestations, each participant's turn,
    and where it is written."""

    def __init__(self, req: IndexRequest, context: SeasonContext, pub: Publication,
                 decisions: dict[str, list[DecidedJson]]) -> None:
        self.req, self.context, self.pub, self.decisions = req, context, pub, decisions
        self.routed = Routed([], {}, [])
        self.written = Written()
        self.out = Path()

    def mapped(self, work: Callable[[int], T], count: int, chunk: int) -> Iterator[T]:
        return ordered_map(work, count, self.req.jobs, chunk, self.written.tally)

    def publish(self, position: int) -> tuple[str, LineJson, list[str]]:
        """Score one participant (its kept submissions read again, its cited proofs judged), rectify what its
        decided contestations change (§9.2), write its report and page; its line of the index and the proofs
        read."""
        item, req, pub = self.routed.turns[position], self.req, self.pub
        p = item.participant
        kept = tuple(read_received(r.path, req.submissions, pub.saison, pub.piste) for r in item.selection.kept)
        submissions = [r.soumission for r in kept]
        proofs = self.context.participant_proofs(submissions)
        score = self.context.score(submissions, proofs)
        selection = Selection(kept, item.selection.replaced, item.selection.late)
        report = participant_report(pub, p, selection, score, item.merged, "../index.html")
        line = participant_line(p, score, f"rapports/{p.ranked.slug}")
        rectify_participant(line, report, self.decisions.get(p.ranked.did, []))
        report = published_document(report)  # free text is text (issue 40), the rectifications' motives included
        write_file(self.out / "rapports" / f"{p.ranked.slug}.json", document_bytes(report))
        write_file(self.out / "rapports" / f"{p.ranked.slug}.html", render_report(report, pub).encode("utf-8"))
        read = sorted(proofs) if self.context.folder is not None and proofs is not None else []
        return p.ranked.tableau, line, read


def prepare(req: IndexRequest) -> _Close:
    """Everything a close does before its first file: the refusals of §7.4, the season read once, the
    registrations, every submission routed, each participant's turn. Nothing is written yet."""
    close = publication_close(req)
    context = season_context(req.root, req.track, req.score_options, req.proof_folder)
    baseline = context.baseline  # the freeze check, the season, the best constant answer: corpus score's own
    pub = Publication(req.track.piste, req.track.title, baseline["saison"], req.draft,
                      instant(close) if close else None, baseline["gel"], req.trust_layer_url,
                      baseline["conditions_1_2"], instant(req.opening) if req.opening else None)
    job = _Close(req, context, pub, by_did(read_contests(req.root, req.track)))
    registrations = read_registrations(req.registrations)
    bound = FileBound(len(registrations), len(context.inputs.statements))
    received = route_submissions(req.submissions, pub.saison, pub.piste, frozenset(r.did for r in registrations),
                                 bound, lambda work, count: job.mapped(work, count, 256))
    refuse_future(req.registrations, registrations, received, req.now)
    by_agent: dict[str, list[Received]] = defaultdict(list)
    for r in received:
        by_agent[r.did].append(r)
    turns = [Turn(p, select(by_agent.get(p.ranked.did, []), close), _merged(p, by_agent))
             for p in participants(registrations)]
    job.routed = Routed(registrations, by_agent, turns)
    return job


def write_index(job: _Close, out: Path) -> Written:
    """Every file of ``<out>/<piste>/``, written into ``out`` (made here) as each is made: a report and its page
    as soon as their participant is scored, the index at the end."""
    context, pub, written = job.context, job.pub, job.written
    environment().get_template("rapport.html.j2")  # compiled once, before the workers start
    job.out = out
    make_dir(out)
    make_dir(out / "rapports")
    lines: list[tuple[str, LineJson]] = []
    read: set[str] = set()
    with context.folder.refusals_in_name_order() if context.folder is not None else nullcontext():
        for table, line, proofs in job.mapped(job.publish, len(job.routed.turns), 8):
            lines.append((table, line))
            read.update(proofs)
            written.reports += 1
        if context.folder is not None:
            rest = sorted(context.folder.names - {f"{p}.json" for p in read})
            folder = context.folder
            for _ in job.mapped(lambda n: folder.judge_rest(rest[n * 64:(n + 1) * 64]), -(-len(rest) // 64), 4):
                pass
            written.proofs = len(read) + len(rest)
    fusionnes = [m for item in job.routed.turns for m in item.merged]
    index = index_document(pub, context.baseline["meilleure_reponse_constante"], context.baseline["taches_total"],
                           lines, fusionnes)
    list_contestations(index, job.decisions)  # spec §9.2: beside the original figures
    index = published_document(index)
    write_file(out / "index.json", document_bytes(index))
    write_file(out / "index.html", render_index(index, pub).encode("utf-8"))
    return written


def _write_invalidated(req: IndexRequest, invalidation: Invalidation, out: Path) -> Written:
    make_dir(out)
    for name, data in invalidated_index(req.root, req.track, invalidation).items():
        write_file(out / name, data)
    return Written()


def index_writer(req: IndexRequest) -> tuple[Callable[[Path], Written], Routed | None]:
    """What writes the close into a folder (made by it: it must not exist): the invalidation alone when the season
    was invalidated (spec §8: published, and no ranking), else the index, with the submissions it routed (None:
    invalidated); everything that can refuse it is done here, before a file is written. The close publication
    writes its index with it too."""
    invalidation = read_invalidation(req.root, req.track.places)
    if invalidation is not None:
        return (lambda out: _write_invalidated(req, invalidation, out)), None
    job = prepare(req)
    return (lambda out: write_index(job, out)), job.routed


def publish_index(req: IndexRequest, out: Path) -> Written:
    """Write ``<out>/<piste>/`` whole or not at all: everything that can refuse the close is done before a file
    is made (:func:`prepare`); then the files are made aside, each as soon as it is ready, and swapped in at the
    end (``base/transaction.py``). A failure after that leaves ``out`` as it was (made for nothing: removed)."""
    write, _ = index_writer(req)
    made = not os.path.lexists(out)
    os.makedirs(out, exist_ok=True)
    try:
        with Transaction(out) as txn, txn.staged([req.track.piste]) as places:
            return write(places[req.track.piste])
    except BaseException:
        if made:
            shutil.rmtree(out, ignore_errors=True)
        raise
