"""``corpus contest add`` and ``corpus contest decide``: a contestation (spec §9.2) recorded, then its human
decision; ``corpus index`` republishes the rectifications beside the original figures."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from generator.cli.options import Subparsers, add_root_options
from generator.publish.contestation import (
    DECISIONS,
    RECTIFIED_STATUSES,
    ContestRequest,
    DecisionRequest,
    add_contest,
    day,
    decide_contest,
)
from generator.publish.wording import CAUSES
from generator.tracks.loader import track_named


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


def cmd_add(args: argparse.Namespace) -> int:
    track = track_named(args.root, args.track)
    request = ContestRequest(args.index, args.did, args.tache, args.assertion or "", args.cause,
                             day(args.le, "--le"), day(args.publie_le, "--publie-le") if args.publie_le else None)
    path, made = add_contest(args.root, track, request)
    print(f"corpus contest add: {made['id']} recorded in {path}: {made['agent']}, {made['tache']} "
          f"{made['assertion']} ({made['cause_texte']}), asked on {made['demandee_le']}; a decision is due by "
          f"{made['decision_attendue_avant']}; commit it", file=sys.stderr)
    return 0


def cmd_decide(args: argparse.Namespace) -> int:
    track = track_named(args.root, args.track)
    request = DecisionRequest(args.contestation, args.decision, args.motif, args.par, day(args.le, "--le"),
                              args.statut)
    path, made = decide_contest(args.root, track, request)
    late = "" if made["dans_le_delai"] else " OVERDUE: more than 30 days after the request (§9.2), said so"
    print(f"corpus contest decide: {made['contestation']} {made['decision']} on {made['decidee_le']} by "
          f"{made['par']}, recorded in {path};{late} commit it, then 'corpus index' republishes the index and "
          "the report with it", file=sys.stderr)
    return 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser("contest", help="contestations of a published score (spec §9.2): add one, decide one",
                       description="A participant contests one scored assertion and the cause its report shows, "
                                   "within 14 days of the score's publication; a human decides within 30 days, "
                                   "with a motive. Both are kept once in <freeze folder>/contestations/; corpus "
                                   "index publishes every decision and each rectification beside the original "
                                   "figure.")
    actions = p.add_subparsers(dest="contest_action", required=True, metavar="{add,decide}")
    a = actions.add_parser("add", help="record a contestation, checked against the published report",
                           description="Record a contestation of one assertion of a published report (--index, "
                                       "the folder corpus index published for the track). Refused, one line, "
                                       "nothing written: outside the 14 days after the publication, no assertion "
                                       "named, a cause that is not one of the five of §4.1 (the barème and the "
                                       "corpus are frozen), a cause other than the report's, a participant, task "
                                       "or assertion the report does not hold.")
    a.add_argument("--track", metavar="PISTE", required=True, help="the track")
    a.add_argument("--index", type=Path, required=True, metavar="DIR",
                   help="the published folder of the track (OUT/<piste>: index.json, rapports/)")
    a.add_argument("--did", required=True, help="the participant's DID, as ranked in the index")
    a.add_argument("--tache", required=True, metavar="TASK", help="the task, e.g. conf-03")
    a.add_argument("--assertion", metavar="ID", help="the assertion's id in the submission")
    a.add_argument("--cause", required=True, metavar="CAUSE",
                   help=f"the cause the report shows: {', '.join(CAUSES)}")
    a.add_argument("--le", default=_today(), metavar="YYYY-MM-DD", help="the day of the request (default today)")
    a.add_argument("--publie-le", default=None, metavar="YYYY-MM-DD",
                   help="the day the score was published (default the close's day, index.json cloture)")
    add_root_options(a)
    a.set_defaults(func=cmd_add, command="contest add")
    d = actions.add_parser("decide", help="record the human decision on a contestation, once",
                           description="Record the decision on a contestation: accepted (with what the "
                                       "assertion becomes, --statut) or refused, its motive, who decided and "
                                       "when; past 30 days after the request it is recorded and said overdue. A "
                                       "second decision, an unknown contestation, an empty motive: one line, "
                                       "nothing written.")
    d.add_argument("--track", metavar="PISTE", required=True, help="the track")
    d.add_argument("--contestation", required=True, metavar="ID", help="the contestation, e.g. c001")
    d.add_argument("--decision", required=True, choices=DECISIONS)
    d.add_argument("--statut", choices=RECTIFIED_STATUSES, default=None,
                   help="accepted: what the assertion becomes (etayee: the cause was wrong; defaut_instrument: "
                        "the instrument failed, out of the overclaim)")
    d.add_argument("--motif", required=True, metavar="TEXT", help="the motive, published")
    d.add_argument("--par", required=True, metavar="NAME", help="who decided (a human decision, §9.2)")
    d.add_argument("--le", default=_today(), metavar="YYYY-MM-DD", help="the day of the decision (default today)")
    add_root_options(d)
    d.set_defaults(func=cmd_decide, command="contest decide")
