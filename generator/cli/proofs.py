"""``corpus proofs fetch``: the public views of the proofs a score needs, read from Trust Layer as the spec's
scorer reads them (spec §10) into the folder ``corpus score --proofs`` reads."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.base.atomic_file import FileWriteError
from generator.base.bounded_read import SUBMISSION_LIMIT
from generator.base.errors import GeneratorError, read_file, shown_path
from generator.base.output_places import OutputRefused, outside_inputs, outside_protected
from generator.cli.options import (
    PROBLEM,
    Subparsers,
    UsageError,
    add_root_options,
    add_timeout_option,
    add_track_option,
    trust_layer_url_for,
)
from generator.observe.proof_fetch import (
    FetchError,
    Outcome,
    ProofFetch,
    base_url,
    cited_proof_ids,
    proof_id_problem,
)
from generator.observe.read_budget import TRUST_LAYER_READS_PER_HOUR, ReadBudget, SystemClock
from generator.publish.records import recorded_submissions
from generator.score.close_inputs import load_submission, submission_files
from generator.score.entry import FormatDefects
from generator.tracks.loader import track_named

WHO = "corpus proofs fetch"


def _say(text: str) -> None:
    print(f"{WHO}: {text}", file=sys.stderr, flush=True)


def _proof_id(text: str) -> str:
    problem = proof_id_problem(text, "--id")
    if problem:
        raise argparse.ArgumentTypeError(problem.removeprefix("--id: "))
    return text


def _base_url(text: str) -> str:
    try:
        return base_url(text)
    except FetchError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _reads_per_hour(text: str) -> int:
    if not text.isascii() or not text.isdigit() or not 1 <= int(text) <= TRUST_LAYER_READS_PER_HOUR:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number from 1 to {TRUST_LAYER_READS_PER_HOUR} "
                                         "(Trust Layer blocks an address beyond 100 reads an hour)")
    return int(text)


def _ids_file(path: Path) -> list[str]:
    """``--ids-file``: one proof_id a line; blank lines and ``#`` comments skipped."""
    data = read_file(path, FetchError, "no such file", limit=SUBMISSION_LIMIT)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FetchError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    ids = []
    for number, line in enumerate(text.splitlines(), 1):
        value = line.split("#", 1)[0].strip()
        if value:
            problem = proof_id_problem(value, f"{path}:{number}")
            if problem:
                raise FetchError(f"{problem}: nothing read")
            ids.append(value)
    return ids


def _asked(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    """Every id asked (the submissions' cited ones, then ``--id``, then ``--ids-file``'s) and the problems
    of the submissions' ids."""
    ids: list[str] = []
    problems: list[str] = []
    given: list[tuple[Path, object]] = []
    if args.submissions:
        given += [(path, load_submission(path)) for path in submission_files(args.submissions)]
    if args.records is not None:
        given += recorded_submissions(args.records)
    if given:
        for path, submission in given:  # as corpus score reads them: JSON it cannot parse stops here
            if isinstance(submission, FormatDefects):  # a key twice...: rejected at entry, its ids unread
                problems.append(f"{path}: {submission.problems[0]}: corpus score rejects it at entry; none of its "
                                "proofs read")
                continue
            cited, wrong = cited_proof_ids(submission, str(path))
            if not (cited or wrong):  # never a silent 0/0: a season service's record is not a submission
                problems.append(f"{shown_path(path)}: cites no proof_id (assertions[].proof_ids of a spec §4 "
                                'submission; a season record {"recu_le", "soumission"} is not one: give the '
                                "records folder with --records DIR)")
            ids += cited
            problems += wrong
    ids += args.ids
    if args.ids_file is not None:
        ids += _ids_file(args.ids_file)
    return ids, problems


def _out(args: argparse.Namespace) -> Path:
    """``--out``: outside the trees the generator compiles or serves, and none of the submission folders."""
    out: Path = args.out
    outside_protected(args.root, out, "--out", "which the generator compiles or serves: keep the proofs "
                      "elsewhere (under run/, or outside the repository)")
    read = [("the submissions folder", p) for p in args.submissions if p.is_dir()]
    outside_inputs(out, read + ([("the records folder", args.records)] if args.records is not None else []))
    if out.exists() and not out.is_dir():
        raise OutputRefused(f"--out {out}: exists and is not a folder")
    return out


def _summary(outcome: Outcome, out: Path) -> str:
    reads = f"{outcome.batch_reads} batch read(s), {outcome.unit_reads} unit read(s)"
    text = (f"{outcome.kept}/{len(outcome.asked)} proofs kept in {out}: {len(outcome.read_now)} read now "
            f"({reads}), {len(outcome.kept_before)} kept before")
    if outcome.waiting:
        text += (f"; {len(outcome.waiting)} not anchored yet ({', '.join(outcome.waiting[:3])}"
                 f"{', …' if len(outcome.waiting) > 3 else ''}): corpus score says en attente for them, run "
                 "again later to read them anchored")
    return text


def cmd_fetch(args: argparse.Namespace) -> int:
    if not (args.submissions or args.records or args.ids or args.ids_file):
        raise UsageError("give submissions (files or folders), --records DIR, --id PROOF_ID or --ids-file FILE")
    out = _out(args)
    url = args.base_url
    if url is None:  # the track's pinned URL (corpus pin), else the production proxy's
        url = base_url(trust_layer_url_for(None, args.root, track_named(args.root, args.track).places))
    ids, problems = _asked(args)
    fetch = ProofFetch(url, out, ReadBudget(args.reads_per_hour, SystemClock()), timeout=args.timeout,
                       say=_say)
    stopped: GeneratorError | None = None
    try:
        outcome = fetch.run(ids)
    except (FetchError, FileWriteError) as exc:  # the problems found before are said too
        stopped, outcome = exc, fetch.outcome
    for problem in [*problems, *outcome.problems]:
        _say(problem)
    if stopped is not None:
        _say(str(stopped))
        return PROBLEM
    _say(_summary(outcome, out))
    return PROBLEM if problems or outcome.problems else 0


def register(sub: Subparsers) -> None:
    p = sub.add_parser("proofs", help="Trust Layer proofs: fetch the public views a score reads",
                       description="The public views of Trust Layer proofs, for corpus score --proofs.")
    actions = p.add_subparsers(dest="proofs_action", required=True, metavar="{fetch}")
    f = actions.add_parser(
        "fetch", help="read the views of the cited proofs from Trust Layer into a folder, 100 reads an hour",
        description="Read the public view of every proof the submissions cite (and --id, --ids-file) from a "
                    "Trust Layer base URL as the spec's scorer reads them (spec §10): POST /v1/proofs, 50 "
                    "proofs a read, then GET /v1/proof/{id} for any the batch does not serve; at most "
                    "--reads-per-hour requests in any hour (Trust Layer blocks an address beyond 100), waiting "
                    "and saying so when they are spent. Each view is written once, atomically, as "
                    "OUT/<proof_id>.json, the folder corpus score --proofs reads; an anchored view already there "
                    "is checked and never read again. A view naming another proof_id is refused. Exit 1 on any "
                    "problem (each one line), 2 on a usage error (a proof_id of another form, --out inside the "
                    "trees the generator compiles or serves).")
    f.add_argument("submissions", nargs="*", type=Path,
                   help="submission files, or folders of *.json files, as corpus score reads them")
    f.add_argument("--id", dest="ids", action="append", default=[], type=_proof_id, metavar="PROOF_ID",
                   help="a proof_id to read besides (repeat it)")
    f.add_argument("--ids-file", type=Path, help="a file of proof_ids, one a line (# comments)")
    f.add_argument("--records", type=Path, metavar="DIR",
                   help='the season service\'s records folder ({"recu_le", "soumission"} files, sub-folders '
                        "included): every proof any record cites")
    f.add_argument("--base-url", type=_base_url,
                   help="Trust Layer's base URL (default: the track's pins, corpus pin, else "
                        "https://trust.arkforge.tech)")
    add_track_option(f, "the track whose pinned Trust Layer URL is read (default: the checkout's first)")
    f.add_argument("--out", required=True, type=Path,
                   help="the folder to keep the views in (made if missing), one <proof_id>.json each")
    f.add_argument("--reads-per-hour", type=_reads_per_hour, default=TRUST_LAYER_READS_PER_HOUR,
                   help=f"requests allowed in any hour, 1 to {TRUST_LAYER_READS_PER_HOUR} (default "
                        f"{TRUST_LAYER_READS_PER_HOUR}: lower it when another client reads from this address)")
    add_timeout_option(f, 30.0, "each request to Trust Layer")
    add_root_options(f)
    f.set_defaults(func=cmd_fetch, command="proofs fetch")
