"""``corpus index``: a track's close, published (spec §7, §9.1): the public index and each participant's
report, from ``corpus score``'s reports of the season's submissions."""

from __future__ import annotations

import argparse
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

from generator.base import strict_json
from generator.base.bounded_read import PUBLISHED_LIMIT, read_bounded
from generator.base.errors import GeneratorError
from generator.base.output_places import OutputRefused, key_output_dir, outside_inputs
from generator.cli.options import (
    Subparsers,
    add_jobs_option,
    add_pinned_options,
    add_rekor_option,
    add_root_options,
    pins_for,
    salt_files,
    season_close,
    trust_layer_url,
    trust_layer_url_for,
)
from generator.publish.season_index import IndexRequest, publish_index
from generator.publish.wording import FORMAT_INDEX
from generator.score.proof_source import close_proofs
from generator.score.season_pins import DEFAULT_TRUST_LAYER_URL, season_opening
from generator.tracks.loader import track_named


def _earlier_index(target: Path) -> bool:
    """``target`` holds an index this command wrote (its index.json says so): only such a folder is replaced."""
    try:
        document = strict_json.document(read_bounded(target / "index.json", PUBLISHED_LIMIT))
    except (OSError, ValueError):
        return False
    return isinstance(document, dict) and document.get("format") == FORMAT_INDEX


def output_folder(args: argparse.Namespace, piste: str) -> Path:
    """``--out``: under run/ or outside the repository (a draft reveals scores, hence the key, before the
    close); its ``<piste>/`` new, empty or an earlier index; no input inside it (it is replaced whole)."""
    out = key_output_dir(args.root, str(args.out), Path("run"), "an index and its reports (a draft's scores)")
    outside_inputs(out, [("the submissions folder", args.submissions),
                         ("the registrations' folder", args.registrations.parent),
                         ("the proofs folder", args.proofs if args.proofs and args.proofs.is_dir() else None)])
    target = out / piste
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise OutputRefused(f"--out {args.out}: {target} exists and is not a folder")
    if target.is_dir() and any(target.iterdir()) and not _earlier_index(target):
        raise OutputRefused(f"--out {args.out}: {target} is not empty and holds no index written by corpus index "
                            "(no index.json of format corpus-index/1): give another folder")
    inputs = [args.submissions, args.registrations, args.proofs, *(args.salt_file or []), args.anchor]
    for given in (p for p in inputs if p is not None):
        if given.resolve().is_relative_to(target.resolve()):
            raise OutputRefused(f"--out {args.out}: {given} is inside {target}, which is replaced whole: "
                                "write the index elsewhere")
    return out


def cmd_index(args: argparse.Namespace) -> int:
    track = track_named(args.root, args.track)
    out = output_folder(args, track.piste)
    pins = pins_for(args, args.root, track.places)
    salt, replaced_salts = salt_files(args)
    options, folder = close_proofs(args.root, track.places, pins, args.proofs, salt, args.anchor)
    request = IndexRequest(root=args.root, track=track, submissions=args.submissions,
                           registrations=args.registrations, draft=args.brouillon,
                           close=pins.season_close, now=datetime.now(UTC),
                           trust_layer_url=trust_layer_url_for(args.trust_layer_url, args.root, track.places),
                           score_options=replace(options, replaced_salts=replaced_salts),
                           opening=season_opening(args.root, track.places, pins), proof_folder=folder,
                           jobs=args.jobs)
    try:
        written = publish_index(request, out)
    except OSError as exc:
        raise GeneratorError(f"{out}: cannot write: {exc.strerror or exc}; nothing written") from None
    state = "brouillon, rien n'est publié" if args.brouillon else "publié"
    print(f"corpus index: {track.piste}: index and {written.reports} report(s) written to {out / track.piste} "
          f"({state})")
    return 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "index", help="publish a track's close: the public index and each participant's report (spec §7, §9.1)",
        description="Build the public index of one track (two tables, reference runs and community, never "
                    "merged; the best constant answer first) and each participant's report (every unsupported "
                    "assertion with its cause), as JSON and static HTML, in OUT/<piste>/, written whole or not at "
                    "all. Every score is corpus score's, with the proof and freeze options given here. Refuses "
                    "unless the track is frozen and anchored and the season closed (spec §7.4), or with "
                    "--brouillon writes a draft that says so on every page.")
    p.add_argument("--track", metavar="PISTE", required=True, help="the track to publish (one index per track)")
    p.add_argument("--records", "--submissions", dest="submissions", type=Path, required=True, metavar="DIR",
                   help='the season service\'s records folder, anywhere below DIR, each {"recu_le": "<UTC time>", '
                        '"soumission": {spec §4}} (what proofs fetch --records and score --records read too)')
    p.add_argument("--registrations", type=Path, required=True, metavar="FILE",
                   help="the registrations, corpus-inscriptions/1")
    p.add_argument("--out", type=Path, required=True, metavar="OUT",
                   help="folder of the indexes (under run/ or outside the repository); OUT/<piste>/ is replaced")
    p.add_argument("--brouillon", action="store_true",
                   help="write a draft before the close or the freeze, marked on every page and in every JSON")
    p.add_argument("--season-close", type=season_close, metavar="YYYY-MM-DDTHH:MM:SSZ",
                   help="the close: required to publish, refused before it; the last submission of a task "
                        "received before it counts (spec §7.4); default: the track's pins (corpus pin)")
    p.add_argument("--trust-layer-url", type=trust_layer_url, metavar="URL",
                   help="where a proof's public view is served, <URL>/v1/proof/<id> (default: the track's pins, "
                        f"else {DEFAULT_TRUST_LAYER_URL})")
    p.add_argument("--proofs", type=Path, help="passed to corpus score: the third-party proof verification, or a "
                                               "folder of proofs as Trust Layer serves them")
    p.add_argument("--salt-file", type=Path, action="append",
                   help="passed to corpus score: the salt published at the close (once per record of the freeze "
                        "chain, in its order)")
    p.add_argument("--anchor", type=Path, help="passed to corpus score: the proof that anchored the freeze "
                                               "record (default: the track's published anchor.json)")
    add_pinned_options(p)
    p.add_argument("--tsa-ca", type=Path, help="passed to corpus score, with a --proofs folder")
    p.add_argument("--tsa-cert", type=Path, help="passed to corpus score, with a --proofs folder")
    add_rekor_option(p)
    add_jobs_option(p, "scoring the participants")
    add_root_options(p)
    p.set_defaults(func=cmd_index)
