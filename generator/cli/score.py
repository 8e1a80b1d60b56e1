"""``corpus score``: replay the scoring of a participant's submissions against the published season."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from generator.base import strict_json
from generator.base.atomic_file import FileWriteError, check_target, write_atomic
from generator.base.bounded_read import SUBMISSION_LIMIT, ReadRefused, kind_of, read_bounded
from generator.base.errors import GeneratorError, shown_path, unreadable_text
from generator.base.output_places import key_output_file, not_an_input
from generator.cli.options import PROBLEM, Subparsers
from generator.contract.places import Places
from generator.score.entry import FormatDefects
from generator.score.inputs import ScoreInputError, ScoreRefused
from generator.score.proofs import SeasonWindow, verdicts
from generator.score.render import ScoreReport, render_table
from generator.score.track import DuplicateTask, check_proofs, score_submissions, submitted_track
from generator.tracks.loader import load_tracks, track_named
from generator.tracks.model import Track
from generator.trust_layer.anchor import Anchor
from generator.trust_layer.anchor_time import AnchorTimeError, parse_instant, proof_time
from generator.trust_layer.anchor_v3 import parse_time
from generator.trust_layer.proof_v3 import ProofV3, Window, is_v3, read_v3
from generator.trust_layer.trust_proof import ProofError, TrustProof, check_fingerprint, public_key, read_proof
from generator.trust_layer.tsa_token import Authority


class _BadFile(GeneratorError):
    """A file the command was given cannot be used: one line, exit 1."""


def _text(path: Path) -> str:
    """The UTF-8 text of a participant's file, read bounded (a FIFO, a device or a huge file is refused)."""
    try:
        data = read_bounded(path, SUBMISSION_LIMIT)
    except ReadRefused as exc:
        raise _BadFile(f"{shown_path(path)}: {exc.strerror}") from None
    except OSError as exc:
        raise _BadFile(f"{shown_path(path)}: cannot read: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _BadFile(f"{shown_path(path)}: not UTF-8 text (byte {exc.start})") from None


def _parse(path: Path, what: str = "a submission") -> tuple[Any, list[str]]:
    """A JSON file and its defects (:func:`strict_json.loads`), or ``file:line:column: message``."""
    text = _text(path)
    try:
        return strict_json.loads(text)
    except json.JSONDecodeError as exc:
        raise _BadFile(f"{shown_path(path)}:{exc.lineno}:{exc.colno}: json: {exc.msg}") from None
    except ValueError as exc:
        raise _BadFile(f"{shown_path(path)}: json: {exc}") from None
    except RecursionError:
        raise _BadFile(f"{shown_path(path)}: json: nested too deeply to be {what}") from None


def load_submission(path: Path) -> Any:
    """A submission; one whose JSON has defects is kept as :class:`FormatDefects`, rejected at entry (§4)."""
    value, defects = _parse(path)
    if not defects:
        return value
    task_id = value.get("task_id") if isinstance(value, dict) else None
    clean = isinstance(task_id, str) and "task_id" not in getattr(value, "repeated", ()) \
        and not any(d.startswith("/task_id:") for d in defects)
    return FormatDefects(defects, task_id if clean else None)


@dataclass(frozen=True)
class ProofFolder:
    """``--proofs`` given as a folder of proofs as Trust Layer serves them, one ``<proof_id>.json`` each."""

    path: Path
    proofs: dict[str, TrustProof | ProofV3]


def _proof_folder(path: Path) -> ProofFolder:
    entries = sorted(path.iterdir())
    strays = [p for p in entries if not (p.suffix == ".json" and p.is_file())]
    if strays:
        raise _BadFile(f"{', '.join(_printable(str(p)) for p in strays)}: not a regular *.json file: a proofs "
                       "folder holds <proof_id>.json proofs only")
    if not entries:
        raise _BadFile(f"{path}: no <proof_id>.json proof in this folder")
    proofs: dict[str, TrustProof | ProofV3] = {}
    for file in entries:
        value, defects = _parse(file, "a proof")
        if defects:
            raise _BadFile(f"{file}: {'; '.join(defects)}")
        try:
            proof: TrustProof | ProofV3 = read_v3(value) if is_v3(value) else read_proof(value)
        except ProofError as exc:
            raise _BadFile(f"{file}: {exc}") from None
        if proof.is_pair:
            raise _BadFile(f"{file}: an opened pair, not a proof: the folder holds proofs as GET /v1/proof/{{id}} "
                           "serves them (the pairs are the submission's disclosures)")
        if file.stem != proof.proof_id:
            shown = shown_path(proof.proof_id)
            raise _BadFile(f"{shown_path(file)}: holds the proof {shown}: name it {shown}.json")
        proofs[proof.proof_id] = proof
    return ProofFolder(path, proofs)


def season_close(text: str) -> datetime:
    """``--season-close``: an ISO 8601 UTC instant, checked whether or not ``--proofs`` is given."""
    try:
        return parse_instant(text, "--season-close")
    except AnchorTimeError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--season-close: ")) from None


def _pem(path: Path, flag: str) -> bytes:
    """A pinned PEM file, read bounded (a FIFO or a huge file is refused in one line)."""
    try:
        return read_bounded(path, SUBMISSION_LIMIT)
    except OSError as exc:
        raise _BadFile(f"{path}: cannot read ({flag}): {exc.strerror or exc}") from None


def judged_proofs(loaded: Any, args: argparse.Namespace, places: Places) -> Any:
    """A :class:`ProofFolder` judged against the pinned key (``--trust-layer-key``, else the track's
    ``trust_layer_key``; never the published anchor's), the token times within the season (from the published
    anchor's time, once it passes the time rule, to ``--season-close``); a verification file as it is."""
    if not isinstance(loaded, ProofFolder):
        return loaded
    keys = list(args.trust_layer_key or []) or ([places.trust_layer_key] if places.trust_layer_key else [])
    published = Anchor.read(args.root / places.anchor) if os.path.lexists(args.root / places.anchor) else None
    if not keys:  # never the key an anchor names
        raise _BadFile(f"{shown_path(loaded.path)}: a folder of proofs is verified against the pinned Trust Layer "
                       "key: give --trust-layer-key ed25519:<key> (or pin trust_layer_key in the track's "
                       "track.yaml)")
    tsa_ca, tsa_cert, close = (getattr(args, name, None) for name in ("tsa_ca", "tsa_cert", "season_close"))
    for given in (tsa_ca, tsa_cert):
        if given is not None and not given.is_file():
            raise _BadFile(f"{given}: no such file (--tsa-ca, --tsa-cert: PEM files of the timestamp authority)")
    rekor = getattr(args, "rekor_key", None)
    season = SeasonWindow(Authority(tsa_ca, tsa_cert) if tsa_ca else None, _opening(published, places), close,
                    _pem(rekor, "--rekor-key") if rekor is not None else None)
    return verdicts(loaded.proofs, keys, season)


def _opening(published: Anchor | None, places: Places) -> datetime | None:
    """When the season opens: a 3.x anchor's RFC 3161 time (verified when it was published, and again by the
    freeze check), else a 1.2 anchor's time once it passes the anchor's time rule (trust_layer/anchor_time.py)."""
    if published is None:
        return None
    if isinstance(published.proof, ProofV3):
        return parse_time(published.heure)
    fields = published.proof.fields
    try:
        return proof_time(fields.timestamp, fields.upstream_timestamp) if fields is not None else None
    except AnchorTimeError as exc:
        raise _BadFile(f"{places.anchor}: proof: {exc}") from None


def pinned_window(args: argparse.Namespace) -> Window | None:
    """``--tsa-ca`` / ``--tsa-cert`` as the window a 3.x anchor given with ``--anchor`` is checked in (the
    published ``corpus-anchor/2`` carries its own)."""
    tsa_ca, tsa_cert = getattr(args, "tsa_ca", None), getattr(args, "tsa_cert", None)
    return Window(*Authority(tsa_ca, tsa_cert).pems()) if tsa_ca is not None else None


def anchor_key(keys: list[str] | None) -> str | None:
    """The one pinned key an anchor is checked against when ``--trust-layer-key`` is repeated: the first
    given (a rotation concerns the participants' proofs, which verify on any of them); never a key the
    published anchor names."""
    return keys[0] if keys else None


def load_proofs(path: Path) -> Any:
    """The proof verification file, or a :class:`ProofFolder`; a defect in the file (a key twice...) or
    another shape than the object of ``check_proofs`` (``null``, ``[]``, a string) is a file error: it cannot
    be trusted, nor read as absent."""
    if path.is_dir():
        return _proof_folder(path)
    value, defects = _parse(path, "a proofs file")
    if defects:
        raise _BadFile(f"{shown_path(path)}: {'; '.join(defects)}")
    try:
        return check_proofs(value)
    except ScoreInputError as exc:
        raise _BadFile(f"{shown_path(path)}: {str(exc).removeprefix('proofs: ')}") from None


def trust_layer_key(text: str) -> str:
    """``--trust-layer-key``: an Ed25519 public key written ``ed25519:<base64url>``, checked before any work."""
    try:
        public_key(text)
    except ProofError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--trust-layer-key: ")) from None
    return text


def key_fingerprint(text: str) -> str:
    """``--challenge-key-fingerprint``: the SHA-256 of the challenge's API key, 64 lowercase hex digits."""
    try:
        return check_fingerprint(text, "--challenge-key-fingerprint")
    except ProofError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--challenge-key-fingerprint: ")) from None


def add_pinned_options(p: argparse.ArgumentParser) -> None:
    """The two values a proof of Trust Layer's is checked against: the key pinned here or in track.yaml, and
    the challenge key's fingerprint (default: the published anchor's)."""
    p.add_argument("--trust-layer-key", type=trust_layer_key, metavar="ed25519:KEY", action="append",
                   help="the pinned Trust Layer public key (GET /v1/pubkey, ed25519:<base64url>) that must have "
                        "signed the anchoring proof (default: the track's trust_layer_key in track.yaml; never "
                        "the one the published anchor names: with neither, the anchor's signature is not "
                        "trusted); repeat it for a key rotation: a 3.x proof then verifies on any of them, the "
                        "anchor on the first")
    p.add_argument("--challenge-key-fingerprint", type=key_fingerprint, metavar="HEX",
                   help="SHA-256 of the challenge's API key, the proof's parties.buyer_fingerprint (default: the "
                        "one the published anchor states)")


def add_rekor_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rekor-key", type=Path, metavar="PEM",
                   help="with a --proofs folder: Rekor's pinned public key (PEM); a 3.x proof that carries its "
                        "Rekor entry (transparency_log.entry) then has it verified offline; otherwise the report "
                        "says Rekor was not checked")


def _printable(text: str) -> str:
    """``text`` with any undecodable byte of a file name written ``\\xNN``-style, fit for UTF-8 output."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def submission_files(paths: list[Path]) -> list[Path]:
    """The files given, and the ``*.json`` files directly inside each folder given, in name order.

    Any other entry of a folder (a FIFO, a dangling link, ``conf-03.JSON``) is named as an error: skipping it
    would show its task as not submitted. Sub-folders are not searched (and not refused)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            entries = sorted(p for p in path.iterdir() if p.suffix == ".json" or not p.is_dir())
            strays = [p for p in entries if not (p.suffix == ".json" and p.is_file())]
            if strays:
                raise _BadFile(f"{', '.join(_printable(str(p)) for p in strays)}: not a regular *.json file: a "
                               "submission folder holds *.json submissions only: remove or rename "
                               f"{'it' if len(strays) == 1 else 'them'}")
            if not entries:
                raise _BadFile(f"{path}: no *.json submission in this folder")
            files += entries
        elif path.is_file():
            files.append(path)
        elif os.path.lexists(path):  # a FIFO, a device, a socket, a dangling link: there, but no submission
            try:
                reason = f"not a regular file ({kind_of(path.stat().st_mode)})"
            except OSError as exc:
                reason = unreadable_text(path, exc).removeprefix(f"{shown_path(path)}: ")
            raise _BadFile(f"{_printable(str(path))}: {reason}: give a submission file or a folder of them")
        else:
            raise _BadFile(f"{path}: no such file or folder")
    return files


def _json_target(args: argparse.Namespace, files: list[Path]) -> None:
    """The report holds the key (verdict_attendu): under run/ or outside the repository, and no input."""
    inputs = [*files, *(p for p in (args.proofs, args.salt_file, args.anchor) if p is not None)]
    key_output_file(args.root, args.json, "score reports (their verdict_attendu)")
    not_an_input(args.json, inputs)
    check_target(args.json)  # before the table is printed, not after


def score_options(args: argparse.Namespace, track: Track, loaded_proofs: Any) -> dict[str, Any]:
    """``score_submissions``'s keyword options from ``corpus score``'s proof and freeze flags: one place, so that
    ``corpus index`` scores each participant exactly as ``corpus score`` would (``loaded_proofs``: what
    :func:`load_proofs` read, or None)."""
    return {"proofs": judged_proofs(loaded_proofs, args, track.places), "salt_file": args.salt_file,
            "anchor_file": args.anchor, "trust_layer_key": anchor_key(args.trust_layer_key),
            "fingerprint": args.challenge_key_fingerprint, "window": pinned_window(args)}


def cmd_score(args: argparse.Namespace) -> int:
    with contextlib.suppress(AttributeError, ValueError):  # no text may crash the table print
        sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    try:
        files = submission_files(args.submissions)
        if args.json is not None:
            _json_target(args, files)
        submissions = [load_submission(f) for f in files]
        proofs = load_proofs(args.proofs) if args.proofs else None
    except (_BadFile, FileWriteError) as exc:  # an OutputRefused (--json in the repository) is exit 2
        print(f"corpus score: {exc}", file=sys.stderr)
        return PROBLEM
    try:
        pistes = [t.piste for t in load_tracks(args.root)]
        piste = args.track if args.track is not None else submitted_track(submissions, pistes)
        track = track_named(args.root, piste)
        report = score_submissions(submissions, root=args.root, track=track,
                                   **score_options(args, track, proofs))
    except DuplicateTask as exc:
        print(f"corpus score: {exc.task_id} is submitted by {', '.join(str(files[i]) for i in exc.positions)}: "
              "the season keeps the last one recorded; give one file per task", file=sys.stderr)
        return PROBLEM
    except ScoreRefused as exc:
        print(f"corpus score: REFUSED: {exc}", file=sys.stderr)
        return PROBLEM
    except ScoreInputError as exc:
        message = str(exc)
        if args.proofs and message.startswith("proofs: "):
            message = f"{args.proofs}: {message.removeprefix('proofs: ')}"
        print(f"corpus score: {message}", file=sys.stderr)
        return PROBLEM
    by_task = {task: _printable(str(f)) for s, f in zip(submissions, files, strict=True)
               if isinstance(s, dict) and isinstance(task := s.get("task_id"), str)}  # a report row's id is text
    typed = ScoreReport.from_json(report).with_files(
        by_task, {stray["index"]: _printable(str(files[stray["index"]])) for stray in report["hors_saison"]})
    sys.stdout.write(render_table(typed.to_json()))
    if args.json:
        write_atomic(args.json, typed.to_bytes())
    return 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser(
        "score", help="score a participant's submissions (spec §4, §4.1, §5.7): the corpus side of the scorer",
        description="Replay the scoring of submissions in the spec §4 format (one JSON file per task, or "
                    "folders of them) against the published season: manifest/, build/, season/taches.json, "
                    "season/cle.json. Rejects at entry (schema, duplicates, disclosures, plafond) and at the "
                    "close (graph, probant fields, common-list entries), checks conditions 3 and 4 and the "
                    "instrument defect, then prints réussite, overclaim and the best constant answer. Conditions "
                    "1 and 2 need Trust Layer's proofs: give a verification file or a folder of proofs with "
                    "--proofs (proof-spec 3.x verified here offline: docs/proofs-3-1.md), or they are taken as "
                    "met and every line says they were not verified. Once the track's freeze folder holds a "
                    "record or an anchor, requires --salt-file and the anchor (the published one, or --anchor), "
                    "and refuses to score unless the whole freeze check passes and the anchoring proof verifies "
                    "(chain, signature by the pinned Trust Layer key, the challenge's fingerprint) for the record "
                    "served.")
    p.add_argument("submissions", nargs="+", type=Path, help="submission files, or folders of *.json files")
    p.add_argument("--proofs", type=Path, help='third-party proof verification: {"<proof_id>": {"valide": '
                                               'bool, "identite_liee": bool}}, or a folder of <proof_id>.json '
                                               "proofs as Trust Layer serves them, verified here against the "
                                               "pinned key")
    p.add_argument("--json", type=Path, help="also write the corpus-score/1 report to this file")
    p.add_argument("--salt-file", type=Path, help="the salt published at the close, to check the key "
                                                  "commitment of the freeze record (required once "
                                                  "freeze/record.json exists, spec §8.5)")
    p.add_argument("--anchor", type=Path, help="the proof that anchored the freeze record, as GET "
                                               "/v1/proof/{id}/full returns it, or its opened pair {proof_id, "
                                               "request_hash, response_hash} (default: the track's published "
                                               "<freeze folder>/anchor.json; spec §8.5)")
    add_pinned_options(p)
    p.add_argument("--tsa-ca", type=Path, help="with a --proofs folder: the CA bundle of the timestamp authority; "
                                               "each proof's RFC 3161 token is then verified (rfc3161-client)")
    p.add_argument("--tsa-cert", type=Path, help="the authority's signing certificate, which Trust Layer's tokens "
                                                 "do not carry")
    add_rekor_option(p)
    p.add_argument("--season-close", type=season_close, metavar="YYYY-MM-DDTHH:MM:SSZ",
                   help="the close: a token time after it fails condition 1 (the opening is the anchor's time)")
    p.add_argument("--root", type=Path, default=Path.cwd(),
                   help="project folder holding build/, manifest/, season/ and freeze/ (default: .)")
    p.add_argument("--track", metavar="PISTE", default=None,
                   help="the track the submissions are for (default: the one their 'track' field names; "
                        "submissions of two tracks are refused together; none known: the checkout's first)")
    p.set_defaults(func=cmd_score)
