"""``corpus season invalidate``: a season invalidated in the open (spec §8), recorded once with its time and
motive; ``corpus index`` then publishes the invalidation and no ranking."""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime

from generator.cli.options import Subparsers, add_root_options
from generator.tracks.loader import track_named
from generator.trust_layer.freeze_chain import invalidate_season


def cmd_invalidate(args: argparse.Namespace) -> int:
    track = track_named(args.root, args.track)
    made = invalidate_season(args.root, track.places, args.motif, datetime.now(UTC))
    print(f"corpus season invalidate: the season of {track.piste} is invalidated at {made.le} (recorded in "
          f"{made.path}); commit it, then 'corpus index --track {track.piste} ...' publishes the invalidation and "
          "no ranking; the next season starts afresh", file=sys.stderr)
    return 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser("season", help="the season's state: invalidate it (spec §8)",
                       description="A change during the season is not a correction: it invalidates the season "
                                   "(spec §8). The one answer is to publish it, close the season and start "
                                   "again.")
    actions = p.add_subparsers(dest="season_action", required=True, metavar="{invalidate}")
    i = actions.add_parser("invalidate", help="record that the track's season is invalidated, with its motive",
                           description="Write <freeze folder>/invalidation.json once: the instant, the motive, "
                                       "the freeze in force. corpus index then publishes the invalidation and no "
                                       "ranking. Refused, one line: an empty motive, a track never frozen, a "
                                       "season already invalidated.")
    i.add_argument("--track", metavar="PISTE", required=True, help="the track")
    i.add_argument("--motif", required=True, metavar="TEXT", help="why (published)")
    add_root_options(i)
    i.set_defaults(func=cmd_invalidate, command="season invalidate")
