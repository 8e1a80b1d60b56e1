"""A track's close, assembled (spec §7): refuse unless the track is frozen and anchored and the season closed
(or write a draft that says so on every page), read the registrations and the submissions, merge the DIDs of
one key (§9.1), keep the last submission of each task before the close (§7.4), score each ranked
participant with ``corpus score``'s own function, and lay out the index and the reports.

The result is ``{relative path: bytes}`` under ``<out>/<piste>/``; the CLI writes it all at once or not at
all. Nothing here reads the clock: the instant to compare with the close is given (``now``).
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from generator.base.jsonvalue import JsonValue
from generator.contract.invalidation import read_invalidation
from generator.publish.contestation import read_contests
from generator.publish.files import IndexRefused
from generator.publish.free_text import published_document
from generator.publish.html import render_index, render_report
from generator.publish.invalidation import invalidated_index
from generator.publish.merge import Participant, participants
from generator.publish.publication import Publication
from generator.publish.published import LineJson, MergedJson, RapportJson, document_bytes
from generator.publish.rectification import rectify_close
from generator.publish.registrations import read_registrations
from generator.publish.report import participant_report
from generator.publish.season_clock import refuse_future
from generator.publish.selection import select
from generator.publish.submissions import Received, read_submissions
from generator.publish.tables import index_document, participant_line
from generator.score import score_submissions
from generator.score.close_inputs import NO_OPTIONS, ScoreOptions
from generator.score.report_json import ScoreJson
from generator.score.season_pins import DEFAULT_TRUST_LAYER_URL
from generator.tracks.model import Track
from generator.trust_layer.anchor_time import instant_text

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

    def score(self, submissions: Sequence[JsonValue]) -> ScoreJson:
        """``corpus score``'s report of these submissions: the one function, the same options."""
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


def build_index(req: IndexRequest) -> dict[str, bytes]:
    """Every file of ``<out>/<piste>/``, by its path there."""
    invalidation = read_invalidation(req.root, req.track.places)
    if invalidation is not None:  # spec §8: the invalidation is published, and no ranking
        return invalidated_index(req.root, req.track, invalidation)
    close = publication_close(req)
    baseline = req.score([])  # the freeze check, the season, the best constant answer: corpus score's own
    pub = Publication(req.track.piste, req.track.title, baseline["saison"], req.draft,
                      instant(close) if close else None, baseline["gel"], req.trust_layer_url,
                      baseline["conditions_1_2"], instant(req.opening) if req.opening else None)
    registrations = read_registrations(req.registrations)
    received = read_submissions(req.submissions, pub.saison, pub.piste, {r.did for r in registrations})
    refuse_future(req.registrations, registrations, received, req.now)
    by_did: dict[str, list[Received]] = defaultdict(list)
    for r in received:
        by_did[r.did].append(r)
    reports: dict[str, RapportJson] = {}
    lines: list[tuple[str, LineJson]] = []
    fusionnes: list[MergedJson] = []
    for p in participants(registrations):
        selection = select(by_did.get(p.ranked.did, []), close)
        score = req.score([s.soumission for s in selection.kept])
        merged = _merged(p, by_did)
        fusionnes += merged
        reports[f"rapports/{p.ranked.slug}.json"] = participant_report(pub, p, selection, score, merged,
                                                                        "../index.html")
        lines.append((p.ranked.tableau, participant_line(p, score, f"rapports/{p.ranked.slug}")))
    index = index_document(pub, baseline["meilleure_reponse_constante"], baseline["taches_total"], lines,
                           fusionnes)
    rectify_close(index, reports, read_contests(req.root, req.track))  # spec §9.2: beside the original figures
    index = published_document(index)  # free text is text, the rectifications' motives included
    files: dict[str, bytes] = {}
    for path, report in reports.items():
        report = published_document(report)
        files[path] = document_bytes(report)
        files[path.removesuffix(".json") + ".html"] = render_report(report, pub).encode("utf-8")
    files["index.json"] = document_bytes(index)
    files["index.html"] = render_index(index, pub).encode("utf-8")
    return files
