"""``corpus check``, ``build``, ``manifest-hash``, ``show``, ``freeze``, ``freeze-check`` and ``tracks``: the
corpus itself, track by track."""

from __future__ import annotations

import argparse
import json
import ssl
import sys
from datetime import UTC, datetime
from pathlib import Path

from generator.base.bounded_read import MIB, read_bounded
from generator.base.errors import CorpusError, FrozenMismatch, Severity, TlsError, shown_path
from generator.base.secret_values import read_secret_file
from generator.base.transaction import reading
from generator.cli.options import (
    PROBLEM,
    Subparsers,
    UsageError,
    add_pinned_options,
    add_rekor_option,
    add_root_options,
    add_timeout_option,
    add_track_option,
    base_url_option,
    http_url,
    key_fingerprint,
    named,
    pins_for,
    print_problems,
    season_close,
    selected_tracks,
    trust_layer_key,
)
from generator.compiler.pipeline import build, check
from generator.contract.freeze import check_freeze, freeze, is_frozen
from generator.contract.hashing import sha256_hex
from generator.contract.manifest import Manifest
from generator.contract.places import Places
from generator.observe import proxy_client
from generator.observe.http_exchange import DEADLINE, exchange
from generator.score.close_inputs import Pins, judged_proofs, load_proofs
from generator.score.season_pins import freeze_hints, read_pins
from generator.serving.tls.tls_files import TLS_FILE_LIMIT, check_tls_file
from generator.tracks.listing import track_listing
from generator.tracks.loader import load_tracks, track_named
from generator.tracks.model import Track
from generator.trust_layer.anchor import Anchor
from generator.trust_layer.anchor_time import instant_text
from generator.trust_layer.freeze_anchor import check_anchor, freeze_anchor, freeze_anchor_v3, record_call_of
from generator.trust_layer.freeze_chain import chain_problems, replace_freeze
from generator.trust_layer.proof_v3 import ProofV3
from generator.trust_layer.trust_proof import TrustProof
from generator.trust_layer.tsa_token import Authority


def _track(args: argparse.Namespace) -> Track:
    """The one track a command works on: ``--track``'s, else the checkout's first (conformité here)."""
    return track_named(args.root, args.track)


def cmd_check(args: argparse.Namespace) -> int:
    tracks, failed = selected_tracks(args), False
    for track in tracks:
        problems = check(args.root / track.trees.sources, track)
        print_problems(problems)
        errors = sum(p.severity is Severity.ERROR for p in problems)
        warnings = len(problems) - errors
        print(f"corpus check{named(track, tracks)}: {errors} error(s), {warnings} warning(s)", file=sys.stderr)
        failed = failed or bool(errors)
    return PROBLEM if failed else 0


def cmd_build(args: argparse.Namespace) -> int:
    tracks = selected_tracks(args)
    for track in tracks:
        trees = f"{track.trees.build}/ and {track.trees.manifest}/"
        try:
            result = build(args.root / track.trees.sources, args.root, args.base_url.rstrip("/"), track,
                           wait=not args.no_wait)
        except CorpusError as exc:
            print_problems(exc.problems)
            print(f"corpus build{named(track, tracks)}: {len(exc.problems)} error(s); {trees} left unchanged",
                  file=sys.stderr)
            return PROBLEM
        except FrozenMismatch as exc:
            print(f"corpus build{named(track, tracks)}: REFUSED: {exc}; {trees} left unchanged", file=sys.stderr)
            return PROBLEM
        print_problems(result.warnings)
        kinds: dict[str, int] = {}
        for item in result.built:
            kinds[item.document.kind] = kinds.get(item.document.kind, 0) + 1
        summary = ", ".join(f"{count} {kind}" for kind, count in sorted(kinds.items()))
        print(f"corpus build{named(track, tracks)}: {len(result.built)} files ({summary}); manifest hash "
              f"{result.manifest_hash}", file=sys.stderr)
        print(f"corpus build{named(track, tracks)}: {result.changes.text()}", file=sys.stderr)
    return 0


def cmd_manifest_hash(args: argparse.Namespace) -> int:
    """The hash of manifest.json's bytes, checked against manifest.sha256 (they come from one build)."""
    print(Manifest.load(args.root, _track(args).trees.manifest).hash)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    path = args.path if args.path.startswith("/") else "/" + args.path
    with reading(args.root):  # the entry and the bytes from the same build
        for track in selected_tracks(args):
            entry = Manifest.load(args.root, track.trees.manifest).by_path(path)
            if entry is not None:
                body = entry.read_checked(args.root / track.trees.build)
                break
        else:
            print(f"corpus show: {path} is not in the manifest (canonical paths are exact: no trailing slash, "
                  "no '?', no '.json')", file=sys.stderr)
            return PROBLEM
    sys.stdout.write(body.decode("utf-8"))
    print("--- manifest entry ---")
    print(json.dumps(entry.to_json(), indent=2, ensure_ascii=False))
    return 0


def cmd_freeze(args: argparse.Namespace) -> int:
    track = _track(args)
    bareme = args.bareme or args.root / track.bareme.file
    if args.replaces is None and (args.motif is not None or args.opening is not None):
        raise UsageError("--motif and --opening go with --replaces PROOF_ID (a freeze replaced before the "
                         "opening)")
    if args.replaces is not None:
        if args.motif is None:
            raise UsageError("--replaces needs --motif TEXT: a replacement is published with its motive (spec §8)")
        pinned = read_pins(args.root, track.places)  # the season's opening (corpus pin); --opening overrides
        opening = args.opening or (pinned.season_opening if pinned is not None else None)
        done = replace_freeze(args.root, track.places, bareme, args.salt_file, args.replaces, args.motif,
                              opening, datetime.now(UTC))
        sys.stdout.write(done.data.decode("utf-8"))
        print(f"corpus freeze: {args.replaces} replaced before the opening ({instant_text(done.opening)}): kept "
              f"with its record in {done.kept}; wrote {track.places.record}, which names it and the motive",
              file=sys.stderr)
    else:
        data = freeze(args.root, bareme, args.salt_file, track.places)
        sys.stdout.write(data.decode("utf-8"))
    print(f"corpus freeze: wrote {track.places.record}; keep {args.salt_file} secret until the close",
          file=sys.stderr)
    print("corpus freeze: serve it, then anchor it with one call through the Trust Layer proxy, made with the "
          "challenge's key, and publish its proof_id (docs/operating.md, the freeze ceremony):", file=sys.stderr)
    for line in record_call_of(args.root, track.places).lines():
        print(f"  {line}", file=sys.stderr)
    for line in freeze_hints(args.root, track.places, record_call_of(args.root, track.places).target):
        print(line, file=sys.stderr)
    return 0


def cmd_tracks(args: argparse.Namespace) -> int:
    """The tracks of the checkout, and where each one's files are (what freeze and scorer scripts read)."""
    tracks = load_tracks(args.root)
    listing = [track_listing(track) for track in tracks]
    if args.json:
        print(json.dumps(listing, indent=2, ensure_ascii=False))
        return 0
    for item in listing:
        primary = " (principale: served at the root, taken without --track)" if item["principale"] else ""
        print(f"{item['piste']}: {item['titre']}{primary}")
        for key in ("sources", "build", "manifest", "taches", "cle", "bareme", "gel"):
            print(f"  {key:<9} {item[key]}")
        print(f"  served   {item['referentiel']}, {item['catalogue']}, {len(item['collections'])} collections")
    return 0


def ca_context(ca: Path | None) -> ssl.SSLContext:
    """``--ca`` checked as a PEM CA certificate (:func:`check_tls_file`, as every TLS file an instance is
    given) and loaded, before any connection; None: the system's CAs."""
    if ca is None:
        return proxy_client.ca_context(None)
    check_tls_file(ca, "--ca", "ca")
    try:
        return proxy_client.ca_context(read_bounded(ca, TLS_FILE_LIMIT).decode("ascii"))
    except (OSError, UnicodeDecodeError, ssl.SSLError, ValueError):  # changed since it was checked
        raise TlsError(f"--ca {shown_path(ca)}: not a PEM CA certificate OpenSSL can load") from None


def _served_problems(args: argparse.Namespace, places: Places, context: ssl.SSLContext) -> list[str]:
    """``--url``: the record as the server serves it at the track's ``gel_servi``, byte for byte the file's."""
    secret = read_secret_file(args.secret_file)[0]
    url = args.url.rstrip("/") + places.served_record
    answer = exchange(url, seconds=args.timeout, limit=MIB, headers={"X-Challenge-Secret": secret},
                      context=context)
    if answer.error == DEADLINE:
        return [f"GET {shown_path(url)}: no complete answer within --timeout {args.timeout:g} s (connection, "
                "headers and body together): the served record cannot be compared"]
    if answer.status == 0:
        return [f"GET {shown_path(url)}: no answer ({answer.error}): the served record cannot be compared"]
    body = answer.body
    if answer.status != 200:
        return [f"GET {shown_path(url)}: status {answer.status}, not 200: the record is not served"]
    with reading(args.root):
        data = (args.root / places.record).read_bytes()
    if body != data:
        shown = "more than 1 MiB" if len(body) > MIB else f"{len(body)} bytes (sha256 {sha256_hex(body)})"
        return [f"GET {url}: {shown}, not the bytes of {places.record} ({len(data)} bytes, sha256 "
                f"{sha256_hex(data)}): the server serves another record"]
    print(f"corpus freeze-check: GET {url} serves {places.record} byte for byte", file=sys.stderr)
    return []


def cmd_freeze_check(args: argparse.Namespace) -> int:
    if args.url is not None and args.secret_file is None:  # a usage error, before anything is read
        raise UsageError("--url needs --secret-file: the corpus answers only calls that carry the secret")
    context = ca_context(args.ca) if args.url is not None else None  # --ca checked before any connection
    places = _track(args).places
    salts = args.salt_file or []
    given = [flag for flag, value in (("--salt-file", salts), ("--anchor", args.anchor),
                                      ("--url", args.url)) if value]
    if given and not is_frozen(args.root, places):
        print(f"corpus freeze-check: {' and '.join(given)} given, but {places.record} is not there: the track "
              f"{places.piste} was never frozen, or its record was deleted (restore it from git)", file=sys.stderr)
        print("corpus freeze-check: FAILED", file=sys.stderr)
        return PROBLEM
    pins = pins_for(args, args.root, places)
    proofs = judged_proofs(load_proofs(args.proofs) if args.proofs is not None else None, pins, args.root, places)
    problems = check_freeze(args.root, salts[-1] if salts else None, places)
    problems += chain_problems(args.root, places, salts[:-1] if salts else None, pins.anchor_key(),
                               pins.fingerprint, pins.window(), pins.season_opening)
    anchor: Anchor | None = None
    anchored: list[str] = []
    if is_frozen(args.root, places):
        anchor, anchored = check_anchor(args.root, places, args.anchor, proofs, pins.anchor_key(),
                                        pins.fingerprint, pins.window())
        problems += anchored
        if context is not None:
            problems += _served_problems(args, places, context)
    if anchor is None and not problems:
        print(f"corpus freeze-check: not anchored yet: no {places.anchor} and no --anchor; once the call's /full "
              f"view is saved, corpus freeze-anchor --track {places.piste} anchor-proof.json publishes it "
              "(docs/operating.md, the freeze ceremony)", file=sys.stderr)
    elif anchor is not None and not anchored:
        how = anchor.v3_words() or ("an opened pair: its chain and signature are not verified offline"
                                    if anchor.proof.is_pair else
               f"made at {anchor.proof.timestamp} (Trust Layer's time, bound by the chain), chain and signature "
               "verified against the pinned key")
        print(f"corpus freeze-check: anchor {anchor.proof_id} is the proof of GET "
              f"{record_call_of(args.root, places).target} answered by the bytes of {places.record} ({how})",
              file=sys.stderr)
    for problem in problems:
        print(f"corpus freeze-check: {problem}", file=sys.stderr)
    print(f"corpus freeze-check: {'FAILED' if problems else 'passed'}", file=sys.stderr)
    return PROBLEM if problems else 0


def _freeze_anchor_v3(args: argparse.Namespace, places: Places, anchor: Anchor, pins: Pins) -> int:
    """freeze-anchor for a 3.x proof: the pinned authority is required, the season opens at its token."""
    if pins.tsa_ca is None:
        raise UsageError("a proof-spec 3.x anchor is checked with its RFC 3161 token: give --tsa-ca (and "
                         "--tsa-cert when the token does not carry the authority's certificate), or pin them once "
                         f"with corpus pin --track {places.piste} --tsa-ca CA.pem --tsa-cert TSA.pem; the season "
                         "opens at its time")
    assert pins.fingerprint is not None
    anchor, written, when = freeze_anchor_v3(args.root, places, anchor, list(pins.trust_layer_keys),
                                             pins.fingerprint, Authority(pins.tsa_ca, pins.tsa_cert))
    print(f"corpus freeze-anchor: {anchor.proof_id} (spec {anchor.proof.spec_version}) "
          f"verified: commitments root, signature by {pins.anchor_key()}, batch inclusion, RFC 3161 token by "
          f"the pinned authority; its owner's pairs open GET {record_call_of(args.root, places).target}, the "
          f"bytes of {places.record} and the challenge's key ({pins.fingerprint[:16]}…)",
          file=sys.stderr)
    print(f"corpus freeze-anchor: the token's time {when:%Y-%m-%dT%H:%M:%SZ} is the season's opening; Rekor not "
          "checked offline (the served entry carries no body nor inclusion proof)", file=sys.stderr)
    state = "wrote" if written else "already holds this very anchor:"
    print(f"corpus freeze-anchor: {state} {places.anchor}; commit it and publish it with the proof_id: corpus "
          f"publish --opening --track {places.piste} --out OPENING_DIR writes the participant's kit",
          file=sys.stderr)
    return 0


def cmd_freeze_anchor(args: argparse.Namespace) -> int:
    places = _track(args).places
    pins = pins_for(args, args.root, places)
    missing = [flag for flag, value in (("--trust-layer-key", pins.anchor_key()),
                                        ("--challenge-key-fingerprint", pins.fingerprint)) if value is None]
    if missing:
        raise UsageError(f"give {' and '.join(missing)}, or pin them once: corpus pin --track {places.piste} "
                         "--trust-layer-key ed25519:<GET /v1/pubkey> --challenge-key-file KEYFILE --tsa-ca CA.pem "
                         "--tsa-cert TSA.pem")
    given = Anchor.read(args.proof)
    if isinstance(given.proof, ProofV3):
        return _freeze_anchor_v3(args, places, given, pins)
    key, fingerprint = pins.anchor_key(), pins.fingerprint
    assert key is not None and fingerprint is not None
    anchor, written = freeze_anchor(args.root, places, args.proof, key, fingerprint)
    assert isinstance(anchor.proof, TrustProof)
    fields = anchor.proof.fields
    upstream = fields.upstream_timestamp if fields else None
    upstream = f"; the corpus answered at {upstream}" if upstream else ""
    print(f"corpus freeze-anchor: {anchor.proof_id} verified: chain hash, signature by {key}, "
          f"made with the challenge's key ({fingerprint[:16]}…), for GET "
          f"{record_call_of(args.root, places).target} and the bytes of {places.record}", file=sys.stderr)
    print(f"corpus freeze-anchor: made at {anchor.proof.timestamp} (Trust Layer's time){upstream}: the season "
          "opens after it", file=sys.stderr)
    if anchor.proof.awaiting_token:
        print("corpus freeze-anchor: its RFC 3161 token is not issued yet (timestamp_authority.status submitted): "
              "that time rests on Trust Layer's signature alone until the token is added to the proof it serves",
              file=sys.stderr)
    state = "wrote" if written else "already holds this very anchor:"
    print(f"corpus freeze-anchor: {state} {places.anchor}; commit it and publish it with the proof_id: corpus "
          f"publish --opening --track {places.piste} --out OPENING_DIR writes the participant's kit",
          file=sys.stderr)
    return 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser("check", help="validate corpus_src/ and list every error at once",
                       description="Load corpus_src/ strictly and run every validation rule (schemas, IDs, "
                                   "dates, references, pagination). Prints each problem as "
                                   "file:line:column: field: message. Exit 1 if any error (warnings alone "
                                   "exit 0). Writes nothing.")
    add_root_options(p)
    add_track_option(p, "check only this track (default: every track of the checkout)")
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("build", help="compile corpus_src/ into build/ and manifest/",
                       description="Validate, then compile corpus_src/ into one JSON file per served "
                                   "resource under build/ and the SHA-256 manifest under manifest/. One "
                                   "transaction: build/ and manifest/ change together or not at all, even if "
                                   "the command is killed; a second build waits for the first (.corpus.lock); "
                                   "leftovers of a killed build are repaired first, and said so. Files are "
                                   "0644 and folders 0755 whatever the umask. Same sources give the same "
                                   "bytes, on any machine.")
    add_root_options(p)
    base_url_option(p)
    p.add_argument("--no-wait", action="store_true",
                   help="refuse (exit 1) instead of waiting when another build holds the lock")
    add_track_option(p, "build only this track (default: every track of the checkout, each its own "
                        "transaction)")
    p.set_defaults(func=cmd_build)

    p = sub.add_parser("manifest-hash", help="print the manifest hash (SHA-256 of manifest/manifest.json)",
                       description="Print the manifest hash that the freeze anchors, as read from "
                                   "manifest/manifest.sha256.")
    add_root_options(p)
    add_track_option(p)
    p.set_defaults(func=cmd_manifest_hash)

    p = sub.add_parser("show", help="pretty-print a built resource and its manifest entry",
                       description="Print the frozen bytes of a served path (e.g. /agrements/AGR-4417) and "
                                   "its manifest entry: length, sha256, request_hash, response_hash.")
    p.add_argument("path", help="canonical path, e.g. /entites/ENT-1001")
    add_root_options(p)
    add_track_option(p, "look in this track only (default: every track)")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser("freeze", help="write freeze/record.json: manifest hash, barème hash, key commitment",
                       description="Pre-registration (spec §8): record the manifest hash, the SHA-256 of the "
                                   "frozen barème section (must be the published one) and sha256(salt ‖ "
                                   "season/cle.json) with a 32-byte salt read from, or created in, --salt-file "
                                   "(mode 0600, outside the repository). From then on, a build that would change "
                                   "a byte of the manifest or of the key fails.")
    p.add_argument("--bareme", type=Path, default=None,
                   help="the frozen barème section (default: the track's, ROOT/tracks/<piste>/<section>.txt, a "
                        "byte-exact copy of the published section)")
    p.add_argument("--salt-file", type=Path, required=True, help="hex salt file outside the repository (with "
                                                                 "--replaces: a new one)")
    p.add_argument("--replaces", metavar="PROOF_ID", default=None,
                   help="before the opening: replace the record in force, anchored by PROOF_ID; it and its anchor "
                        "are kept in <freeze folder>/remplaces/<n>/, the new record names them and the motive")
    p.add_argument("--motif", metavar="TEXT", default=None, help="with --replaces: why (published, spec §8)")
    p.add_argument("--opening", type=season_close, metavar="YYYY-MM-DDTHH:MM:SSZ", default=None,
                   help="with --replaces: the season's opening (default: the one pinned with corpus pin "
                        "--season-opening, else the anchor's time, when the season opened); a replacement at or "
                        "after it is refused")
    add_root_options(p)
    add_track_option(p)
    p.set_defaults(func=cmd_freeze)

    p = sub.add_parser("freeze-check", help="check the freeze record, field by field, and its anchor",
                       description="What the scorer checks before scoring (spec §8.5): every field of the "
                                   "record against manifest/, the statements and the track (unknown fields "
                                   "refused), its bytes, with --salt-file the key commitment, and the anchor: "
                                   "the published <freeze folder>/anchor.json or --anchor, verified offline "
                                   "(chain hash, signature by the pinned Trust Layer key, the challenge key's "
                                   "fingerprint, the call of the record). With --url, the record served at the "
                                   "track's gel_servi is compared byte for byte. Once the freeze folder holds a "
                                   "record or an anchor, a record missing, not a regular file or not strict "
                                   "JSON fails. Exit 1 on any difference.")
    p.add_argument("--salt-file", type=Path, action="append",
                   help="the salt, to check the key commitment too; once per record of the chain, in its order, "
                        "when the freeze was replaced")
    p.add_argument("--anchor", type=Path, help="the anchoring proof as GET /v1/proof/{id}/full returns it, or its "
                                               "opened pair {proof_id, request_hash, response_hash} (default: the "
                                               "published <freeze folder>/anchor.json)")
    add_pinned_options(p)
    p.add_argument("--proofs", type=Path, help="the third-party proof verification (as corpus score --proofs): an "
                                               "opened pair must be held valid and bound there")
    p.add_argument("--tsa-ca", type=Path, help="a 3.x anchor: the pinned timestamp authority's CA bundle "
                                               "(required: the authority an anchor names is never trusted)")
    p.add_argument("--tsa-cert", type=Path, help="with --tsa-ca: the authority's signing certificate")
    add_rekor_option(p)
    p.add_argument("--url", type=http_url,
                   help="base URL of a running server: fetch the record at the track's gel_servi (with "
                        "--secret-file) and compare it byte for byte")
    p.add_argument("--secret-file", type=Path, help="file of accepted secrets (the first is sent), with --url")
    p.add_argument("--ca", type=Path, help="CA to verify the server's certificate against, with --url")
    add_timeout_option(p, 10.0, "the fetch of the record, with --url,")
    add_root_options(p)
    add_track_option(p)
    p.set_defaults(func=cmd_freeze_check)

    p = sub.add_parser("freeze-anchor", help="verify the proof that anchored the record, publish it (anchor.json)",
                       description="The freeze ceremony's anchoring step (spec §8.3): PROOF is the proof of the "
                                   "call GET <base URL><gel_servi> made through Trust Layer with the challenge's "
                                   "key, as GET /v1/proof/{id}/full returns it. Its chain hash is recomputed, its "
                                   "Ed25519 signature checked against --trust-layer-key (never only the key it "
                                   "carries), its parties.buyer_fingerprint compared with "
                                   "--challenge-key-fingerprint, its request hash with the call and its response "
                                   "hash with the record as it stands. Then <freeze folder>/anchor.json is "
                                   "written (the proof as fetched, the key, the fingerprint, the proof's time), "
                                   "or one line says what differs and nothing is written.")
    p.add_argument("proof", type=Path, help="the proof JSON (GET /v1/proof/{id}/full, as served)")
    p.add_argument("--trust-layer-key", type=trust_layer_key, metavar="ed25519:KEY", action="append",
                   help="the pinned Trust Layer public key (GET /v1/pubkey of the production proxy; default: the "
                        "track's pins, corpus pin)")
    p.add_argument("--challenge-key-fingerprint", type=key_fingerprint, metavar="HEX",
                   help="SHA-256 of the challenge's API key, as published (default: the track's pins)")
    p.add_argument("--tsa-ca", type=Path, help="a 3.x proof: the pinned timestamp authority's CA bundle (PEM); "
                                               "the batch root's RFC 3161 token must verify on it (default: the "
                                               "track's pins)")
    p.add_argument("--tsa-cert", type=Path, help="a 3.x proof: the authority's signing certificate (PEM), which "
                                                 "Trust Layer's tokens do not carry (default: the track's pins)")
    add_root_options(p)
    add_track_option(p)
    p.set_defaults(func=cmd_freeze_anchor)

    p = sub.add_parser("tracks", help="list the tracks of the checkout and where their files are",
                       description="Every track of ROOT/tracks/ (one folder each, with its track.yaml): its "
                                   "sources, build, manifest, statements, key, barème section and freeze "
                                   "folders (relative to the checkout) and the paths of its référentiel and "
                                   "catalogue. --json prints a list that freeze and scorer scripts read.")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    add_root_options(p)
    p.set_defaults(func=cmd_tracks)
