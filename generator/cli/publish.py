"""``corpus publish``: the participant's kit at the opening and the close published as one folder per track
(spec §7, §8); ``corpus verify-publication``: that folder verified offline with the reader's own pins."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from generator.base.errors import GeneratorError
from generator.base.output_places import key_output_dir
from generator.base.transaction import Transaction, write_tree
from generator.cli.options import (
    PROBLEM,
    Subparsers,
    UsageError,
    add_jobs_option,
    add_pinned_options,
    add_rekor_option,
    add_root_options,
    key_fingerprint,
    pins_for,
    salt_files,
    season_close,
    trust_layer_key,
    trust_layer_url,
    trust_layer_url_for,
)
from generator.contract.invalidation import read_invalidation
from generator.publish.close_publication import CLOTURE, CloseRequest, write_close
from generator.publish.folder_files import replaceable
from generator.publish.opening import OUVERTURE, OpeningRequest, opening_files
from generator.publish.season_index import IndexRequest
from generator.publish.verify_publication import AuditorPins, verify_publication
from generator.score.proof_source import close_proofs
from generator.score.season_pins import season_opening
from generator.tracks.loader import track_named

T = TypeVar("T")


def _write(args: argparse.Namespace, piste: str, marker: str, write: Callable[[Path], T],
           what: str) -> tuple[Path, T]:
    """``OUT/<piste>/`` written whole or not at all: ``write`` makes it aside, then it is swapped in; where it
    is, and what ``write`` returned."""
    out = key_output_dir(args.root, str(args.out), Path("run"), what)
    replaceable(out / piste, marker)
    try:
        os.makedirs(out, exist_ok=True)
        with Transaction(out) as txn, txn.staged([piste]) as places:
            return out / piste, write(places[piste])
    except OSError as exc:
        raise GeneratorError(f"{out}: cannot write: {exc.strerror or exc}; nothing written") from None


def cmd_publish(args: argparse.Namespace) -> int:
    track = track_named(args.root, args.track)
    places = track.places
    pins = pins_for(args, args.root, places)
    url = trust_layer_url_for(args.trust_layer_url, args.root, places)
    opening = season_opening(args.root, places, pins)
    if args.opening:
        files = opening_files(OpeningRequest(args.root, track, pins, url, opening))
        target, _ = _write(args, track.piste, OUVERTURE, lambda place: write_tree(place, files),
                           "the participant's kit")
        print(f"corpus publish: {track.piste}: the participant's kit ({len(files)} files) written to {target}; "
              "hand it over before the season opens", file=sys.stderr)
        return 0
    invalidated = read_invalidation(args.root, places) is not None  # no ranking: no records nor registrations
    needed = () if invalidated else (("--records", args.records), ("--registrations", args.registrations))
    missing = [flag for flag, value in (*needed, ("--salt-file", args.salt_file)) if value is None]
    if missing:
        raise UsageError(f"--close needs {', '.join(missing)}: the season service's records and registrations, "
                         "and the salt published at the close")
    salt, replaced_salts = salt_files(args)
    assert salt is not None
    options, folder = close_proofs(args.root, places, pins, args.proofs, salt, None)
    index = IndexRequest(root=args.root, track=track, submissions=args.records or Path(),  # invalidated: unread
                         registrations=args.registrations or Path(),
                         close=pins.season_close, draft=False, now=datetime.now(UTC), trust_layer_url=url,
                         score_options=replace(options, replaced_salts=replaced_salts), opening=opening,
                         proof_folder=folder, jobs=args.jobs)
    request = CloseRequest(index, salt, args.proofs, pins, replaced_salts)
    target, written = _write(args, track.piste, CLOTURE, lambda place: write_close(request, place),
                             "the close publication")
    reports = sum(n.startswith("scores/") for n in written)
    print(f"corpus publish: {track.piste}: the close ({reports} participant(s), {len(written)} files) written to "
          f"{target}; anyone checks it with corpus verify-publication {target} --trust-layer-key ed25519:KEY "
          "--tsa-ca TSA_CA.pem", file=sys.stderr)
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    pins = AuditorPins(tuple(args.trust_layer_key), args.tsa_ca, args.tsa_cert, args.rekor_key,
                       args.challenge_key_fingerprint, args.season_opening, args.season_close)
    checks, notes = verify_publication(args.folder, pins, datetime.now(UTC), args.jobs)
    for check in checks:
        print(f"{'ok  ' if check.ok else 'FAIL'} {check.text}")
    for note in notes:
        print(f"note {note}")
    failed = sum(not c.ok for c in checks)
    print(f"corpus verify-publication: {args.folder}: " + (f"{len(checks)} checks, every one holds" if not failed
          else f"{failed} failure(s): the publication is not what its inputs give"), file=sys.stderr)
    return PROBLEM if failed else 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "publish", help="the participant's kit at the opening, or the close as one folder anyone verifies offline",
        description="--opening: OUT/<piste>/ holds the participant's kit: the barème section exactly as frozen, "
                    "the statements, the freeze record, its anchor and proof_id, the manifest hash, the pinned "
                    "Trust Layer key and authority, a page in French saying what each file is, SHA256SUMS. "
                    "--close: OUT/<piste>/ holds the index and the reports and everything needed to compute them "
                    "again offline (the answer key and its salt, the manifest and the served bodies, the freeze "
                    "record and its anchor, the barème section, the statements, every record counted or listed, "
                    "the public view of every proof they cite, each participant's corpus-score/1, SHA256SUMS), "
                    "which corpus verify-publication checks; a freeze replaced before the opening: every record, "
                    "anchor and salt of the chain (--salt-file once per record, in its order); every contestation "
                    "and decision; an invalidated season: the invalidation and no ranking. Pins: the track's "
                    "(corpus pin); a flag overrides.")
    when = p.add_mutually_exclusive_group(required=True)
    when.add_argument("--opening", action="store_true", help="the participant's kit, before the season opens")
    when.add_argument("--close", action="store_true", help="the close publication, once the season is closed")
    p.add_argument("--track", metavar="PISTE", required=True, help="the track (one publication per track)")
    p.add_argument("--out", type=Path, required=True, metavar="OUT",
                   help="folder of the publications (under run/ or outside the repository); OUT/<piste>/ is "
                        "written whole, replacing only an earlier publication")
    p.add_argument("--records", type=Path, metavar="DIR", help="--close: the season service's records folder")
    p.add_argument("--registrations", type=Path, metavar="FILE", help="--close: the registrations (corpus-"
                                                                      "inscriptions/1)")
    p.add_argument("--proofs", type=Path, metavar="DIR", help="--close: the folder of the proofs' public views "
                                                              "(corpus proofs fetch --records)")
    p.add_argument("--salt-file", type=Path, action="append",
                   help="--close: the salt, published with the key (once per record of the freeze chain, in its "
                        "order, the one in force last)")
    add_pinned_options(p)
    p.add_argument("--tsa-ca", type=Path, help="the authority's CA bundle (default: the track's pins)")
    p.add_argument("--tsa-cert", type=Path, help="the authority's signing certificate (default: the track's pins)")
    add_rekor_option(p)
    add_jobs_option(p, "scoring the participants at the close")
    p.add_argument("--season-close", type=season_close, metavar="YYYY-MM-DDTHH:MM:SSZ",
                   help="the close (default: the track's pins)")
    p.add_argument("--trust-layer-url", type=trust_layer_url, metavar="URL",
                   help="Trust Layer's base URL of the published links (default: the track's pins)")
    add_root_options(p)
    p.set_defaults(func=cmd_publish)

    p = sub.add_parser(
        "verify-publication", help="verify a close publication offline, from that folder and your own pins",
        description="Check one track's close publication (corpus publish --close) from that folder alone and the "
                    "keys given (never the checkout's trees, nor Trust Layer's service): every file of "
                    "SHA256SUMS, no other; the manifest hash and sha256(sel ‖ clé) against the anchored freeze "
                    "record; the anchor and every proof against the pinned Trust Layer key and timestamp "
                    "authority; a replaced freeze's whole chain (each link anchored, before the opening, each "
                    "commitment recomputed from its salt); the rectifications replayed from the published "
                    "decisions; every participant scored again, the index and the reports rebuilt and compared "
                    "byte for byte. One line per check (ok / FAIL, naming the file and the figure that differs); "
                    "exit 0 only if every check holds.")
    p.add_argument("folder", type=Path, metavar="DIR", help="the publication's folder of one track (OUT/<piste>)")
    p.add_argument("--trust-layer-key", type=trust_layer_key, metavar="ed25519:KEY", action="append",
                   required=True,
                   help="Trust Layer's public key, pinned by you (GET /v1/pubkey); repeat it for a rotation")
    p.add_argument("--tsa-ca", type=Path, required=True, help="the timestamp authority's CA bundle, pinned by you")
    p.add_argument("--tsa-cert", type=Path,
                   help="its signing certificate (default: the folder's copy, which must chain to your CA)")
    p.add_argument("--rekor-key", type=Path, metavar="PEM", help="Rekor's public key (default: the folder's copy)")
    p.add_argument("--challenge-key-fingerprint", type=key_fingerprint, metavar="HEX",
                   help="the challenge key's fingerprint as published at the freeze (default: the folder's)")
    p.add_argument("--season-opening", type=season_close, metavar="YYYY-MM-DDTHH:MM:SSZ",
                   help="the opening as announced: must be the folder's")
    p.add_argument("--season-close", type=season_close, metavar="YYYY-MM-DDTHH:MM:SSZ",
                   help="the close as announced: must be the folder's")
    add_jobs_option(p, "judging the proofs and scoring the participants again")
    p.set_defaults(func=cmd_verify)
