"""``corpus score``: replay the scoring of a participant's submissions against the published season."""

from __future__ import annotations

import argparse
import contextlib
import sys
from dataclasses import replace
from pathlib import Path

from generator.base.atomic_file import FileWriteError, check_target, write_atomic
from generator.base.jsonvalue import JsonValue
from generator.base.output_places import key_output_file, not_an_input, outside_inputs
from generator.cli.options import (
    PROBLEM,
    Subparsers,
    UsageError,
    add_pinned_options,
    add_rekor_option,
    pins_for,
    salt_files,
    season_close,
)
from generator.publish.records import participant_selection
from generator.score.close_inputs import (
    BadFile,
    load_proofs,
    load_submission,
    printable,
    score_options,
    submission_files,
)
from generator.score.inputs import ScoreInputError, ScoreRefused
from generator.score.render import ScoreReport, render_table
from generator.score.track import DuplicateTask, score_submissions, submitted_track
from generator.tracks.loader import load_tracks, track_named
from generator.tracks.model import Track


def _json_target(args: argparse.Namespace, files: list[Path]) -> None:
    """The report holds the key (verdict_attendu): under run/ or outside the repository, and no input."""
    inputs = [*files, *(args.salt_file or []), *(p for p in (args.proofs, args.anchor) if p is not None)]
    key_output_file(args.root, args.json, "score reports (their verdict_attendu)")
    not_an_input(args.json, inputs)
    proofs = args.proofs if args.proofs and args.proofs.is_dir() else None
    outside_inputs(args.json, [*(("the submissions folder", p) for p in args.submissions if p.is_dir()),
                               ("the proofs folder", proofs)], "--json")
    check_target(args.json)  # before the table is printed, not after


def _recorded(args: argparse.Namespace) -> tuple[list[Path], list[JsonValue], Track]:
    """``--records DIR --agent DID``: the submissions ``corpus index`` counts for that participant (the
    season service's records, the last of each task received before the pinned close)."""
    if args.agent is None:
        raise UsageError("--records needs --agent DID: the participant whose submissions are scored")
    track = track_named(args.root, args.track)
    close = pins_for(args, args.root, track.places).season_close
    if close is None:
        raise UsageError("--records needs the season's close to pick each task's last submission: pin it (corpus "
                         f"pin --track {track.piste} --season-close ...) or give --season-close")
    kept = participant_selection(args.root, track, args.records, args.agent, close).kept
    return [r.path for r in kept], [r.soumission for r in kept], track


def cmd_score(args: argparse.Namespace) -> int:
    with contextlib.suppress(AttributeError, ValueError):  # no text may crash the table print
        sys.stdout.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    if bool(args.submissions) == (args.records is not None):
        raise UsageError("give the submissions (files or folders of spec §4 files) or --records DIR --agent DID "
                         "(the season service's records folder), one of the two")
    track: Track | None = None
    try:
        if args.records is not None:
            files, submissions, track = _recorded(args)
        else:
            files = submission_files(args.submissions)
            submissions = [load_submission(f) for f in files]
        if args.json is not None:
            _json_target(args, files)
        proofs = load_proofs(args.proofs) if args.proofs else None
    except (BadFile, FileWriteError) as exc:  # an OutputRefused (--json in the repository) is exit 2
        print(f"corpus score: {exc}", file=sys.stderr)
        return PROBLEM
    try:
        if track is None:
            pistes = [t.piste for t in load_tracks(args.root)]
            piste = args.track if args.track is not None else submitted_track(submissions, pistes)
            track = track_named(args.root, piste)
        salt, replaced_salts = salt_files(args)
        options = replace(score_options(args.root, track.places, pins_for(args, args.root, track.places), proofs,
                                        salt, args.anchor), replaced_salts=replaced_salts)
        report = score_submissions(submissions, root=args.root, track=track, options=options)
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
    typed = ScoreReport.from_json(report)
    if args.records is None:  # from --records: the bytes of the close publication's scores/<agent>.json
        by_task = {task: printable(str(f)) for s, f in zip(submissions, files, strict=True)
                   if isinstance(s, dict) and isinstance(task := s.get("task_id"), str)}  # a row's id is text
        typed = typed.with_files(
            by_task, {stray["index"]: printable(str(files[stray["index"]])) for stray in report["hors_saison"]})
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
    p.add_argument("submissions", nargs="*", type=Path, help="submission files, or folders of *.json files (or "
                                                               "--records)")
    p.add_argument("--records", type=Path, metavar="DIR",
                   help='the season service\'s records folder ({"recu_le", "soumission"} files, sub-folders '
                        "included), with --agent: score exactly what corpus index counts for that participant")
    p.add_argument("--agent", metavar="DID", help="with --records: the participant's DID (its index line's)")
    p.add_argument("--proofs", type=Path, help='third-party proof verification: {"<proof_id>": {"valide": '
                                               'bool, "identite_liee": bool}}, or a folder of <proof_id>.json '
                                               "proofs as Trust Layer serves them, verified here against the "
                                               "pinned key")
    p.add_argument("--json", type=Path, help="also write the corpus-score/1 report to this file")
    p.add_argument("--salt-file", type=Path, action="append",
                   help="the salt published at the close, to check the key commitment of the freeze record "
                        "(required once freeze/record.json exists, spec §8.5); once per record of the chain, in "
                        "its order, when the freeze was replaced")
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
                   help="the close: a token time after it fails condition 1 (the opening is the anchor's time); "
                        "default: the track's pins (corpus pin), as for --trust-layer-key, --tsa-ca, --tsa-cert")
    p.add_argument("--root", type=Path, default=Path.cwd(),
                   help="project folder holding build/, manifest/, season/ and freeze/ (default: .)")
    p.add_argument("--track", metavar="PISTE", default=None,
                   help="the track the submissions are for (default: the one their 'track' field names; "
                        "submissions of two tracks are refused together; none known: the checkout's first)")
    p.set_defaults(func=cmd_score)
