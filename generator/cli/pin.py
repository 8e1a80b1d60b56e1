"""``corpus pin``: the season's pins declared once per track; ``corpus key-fingerprint``: an API key's SHA-256."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.cli.options import (
    Subparsers,
    add_root_options,
    add_track_option,
    key_fingerprint,
    season_close,
    trust_layer_key,
    trust_layer_url,
)
from generator.score.close_inputs import Pins
from generator.score.season_pins import key_fingerprint_of, pins_lines, pins_path, read_pins, write_pins
from generator.tracks.loader import track_named


def cmd_pin(args: argparse.Namespace) -> int:
    track = track_named(args.root, args.track)
    fingerprint = args.challenge_key_fingerprint
    if args.challenge_key_file is not None:
        fingerprint = key_fingerprint_of(args.challenge_key_file)
    given = Pins(tuple(args.trust_layer_key or ()), fingerprint, args.tsa_ca, args.tsa_cert, args.rekor_key,
                 season_close=args.season_close, season_opening=args.season_opening,
                 trust_layer_url=args.trust_layer_url)
    changed = given != Pins()
    pins = write_pins(args.root, track.places, given) if changed else read_pins(args.root, track.places)
    where = pins_path(args.root, track.places).relative_to(args.root)
    if pins is None:
        print(f"corpus pin: {track.piste}: no pins yet ({where}); give the values to pin", file=sys.stderr)
        return 1
    print(f"corpus pin: {track.piste}: {'wrote' if changed else 'pinned in'} {where}; every command of the season "
          "reads it (a flag still overrides it); commit it", file=sys.stderr)
    for line in pins_lines(pins):
        print(f"  {line}")
    return 0


def cmd_key_fingerprint(args: argparse.Namespace) -> int:
    print(key_fingerprint_of(args.key_file))
    return 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "pin", help="declare the season's pins once per track: Trust Layer key and URL, authority, window",
        description="Write the track's pins (<freeze folder>/pins.json, corpus-pins/1): the Trust Layer key(s), "
                    "the challenge key's fingerprint, the timestamp authority (its CA bundle and signing "
                    "certificate, copied beside the file and pinned by SHA-256), Rekor's key if used, the one "
                    "Trust Layer base URL, the season's opening (default: the freeze anchor's token time; never "
                    "before it) and close. Each run sets what it is given and keeps the rest; without a value it "
                    "prints the pins. freeze-anchor, freeze-check, proofs fetch, score, index, publish and their "
                    "checks read them; a flag of theirs still overrides a pin (docs/operating.md).")
    p.add_argument("--trust-layer-url", type=trust_layer_url, metavar="URL",
                   help="Trust Layer's base URL, for the proxy, the proofs' public views and the published links "
                        "(https://trust.arkforge.tech)")
    p.add_argument("--trust-layer-key", type=trust_layer_key, metavar="ed25519:KEY", action="append",
                   help="Trust Layer's public key (GET /v1/pubkey); repeat it for a rotation (the anchor is "
                        "checked on the first)")
    fingerprint = p.add_mutually_exclusive_group()
    fingerprint.add_argument("--challenge-key-fingerprint", type=key_fingerprint, metavar="HEX",
                             help="SHA-256 of the challenge's API key (corpus key-fingerprint KEYFILE prints it)")
    fingerprint.add_argument("--challenge-key-file", type=Path, metavar="KEYFILE",
                             help="the challenge's API key file: only its SHA-256 is pinned, the key is never "
                                  "written nor shown")
    p.add_argument("--tsa-ca", type=Path, help="the timestamp authority's CA bundle (PEM)")
    p.add_argument("--tsa-cert", type=Path, help="the authority's signing certificate (PEM), which Trust Layer's "
                                                 "tokens do not carry")
    p.add_argument("--rekor-key", type=Path, metavar="PEM", help="Rekor's public key (PEM), if used")
    p.add_argument("--season-opening", type=season_close, metavar="YYYY-MM-DDTHH:MM:SSZ",
                   help="the opening, at or after the freeze anchor's token time (default: that time)")
    p.add_argument("--season-close", type=season_close, metavar="YYYY-MM-DDTHH:MM:SSZ", help="the close")
    add_root_options(p)
    add_track_option(p)
    p.set_defaults(func=cmd_pin)

    p = sub.add_parser("key-fingerprint", help="print the SHA-256 fingerprint of an API key, never the key",
                       description="Print SHA-256 of the API key kept in KEYFILE (its one line), as Trust Layer "
                                   "writes buyer_fingerprint: what --challenge-key-fingerprint and the "
                                   "registrations' cle_empreinte hold. The key itself is never printed.")
    p.add_argument("key_file", type=Path, metavar="KEYFILE", help="a file holding the API key on one line")
    p.set_defaults(func=cmd_key_fingerprint)
