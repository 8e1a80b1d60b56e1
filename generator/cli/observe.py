"""``corpus verify`` and ``corpus log-report``: a running deployment seen from outside, and its access logs."""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
import time
from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path

from generator.base.atomic_file import check_target, write_atomic
from generator.base.output_places import not_an_input, outside_protected
from generator.base.secret_values import SecretError, read_secret_env, read_secret_file
from generator.cli.options import (
    DEFECT,
    PROBLEM,
    Subparsers,
    UsageError,
    add_root_options,
    add_timeout_option,
    add_track_option,
    http_url,
)
from generator.contract.manifest import Manifest
from generator.observe.log_report.counts import (
    DEFAULT_PROBE_AGENT,
    DEFAULT_PROXY_AGENT,
    PathKinds,
    Report,
    TrackPaths,
)
from generator.observe.log_report.document import REPORT_FORMAT, report_document
from generator.observe.log_report.files import LogReportError, log_files
from generator.observe.log_report.line import parse_time
from generator.observe.log_report.text import render_text
from generator.observe.verify import Difference, verify
from generator.tracks.loader import TRACKS_DIR, load_tracks, track_named


def _secrets(args: argparse.Namespace) -> list[str]:
    if args.secret_file is not None:
        return read_secret_file(args.secret_file)
    if args.secret_env is not None:
        return read_secret_env(args.secret_env)
    raise SecretError("give --secret-file FILE or --secret-env NAME")


def _printer(every: int) -> Callable[[int, int, int], None]:
    start = time.monotonic()

    def show(done: int, total: int, differing: int) -> None:
        if done % every == 0 or done == total:
            rate = done / max(time.monotonic() - start, 1e-6)
            print(f"corpus verify: {done}/{total} checked, {differing} difference(s), {rate:.0f}/s",
                  file=sys.stderr, flush=True)

    return show


def _summary(count: int, differences: Iterable[Difference], elapsed: float,
             who: str = "corpus verify") -> tuple[str, int]:
    diffs = list(differences)
    if not diffs:
        return f"{who}: OK, {count} checks identical to the manifest ({elapsed:.2f} s)", 0
    labels = sorted({d.label for d in diffs})
    lines = [f"DIFF {d}" for d in diffs]
    lines.append(f"{who}: FAILED, {len(labels)} of {count} checks differ: " + ", ".join(labels))
    return "\n".join(lines), PROBLEM


def cmd_verify(args: argparse.Namespace) -> int:
    """Crawl every track the server serves (``--track``: one), each against its own manifest."""
    secrets = _secrets(args)
    tracks = [track_named(args.root, args.track)] if args.track else load_tracks(args.root)
    verify_tls: bool | str = True
    if args.insecure:
        verify_tls = False
    elif args.ca is not None:
        verify_tls = str(args.ca)
    worst = 0
    for track in tracks:
        manifest = Manifest.load(args.root, track.trees.manifest)
        started = time.monotonic()
        count, differences = verify(args.url, manifest, secrets, collections=track.collections,
                                    verify_tls=verify_tls, timeout=args.timeout,
                                    progress=_printer(max(args.progress_every, 1)))
        who = "corpus verify" if len(tracks) == 1 else f"corpus verify ({track.piste})"
        text, code = _summary(count, differences, time.monotonic() - started, who)
        print(text)
        worst = max(worst, code)
    return worst


def _iso(value: str) -> datetime:
    try:
        return parse_time(value)
    except ValueError as exc:
        if "outside the years" in str(exc):
            raise argparse.ArgumentTypeError(str(exc)) from None
        raise argparse.ArgumentTypeError(f"{value!r}: not an ISO 8601 date-time (e.g. 2026-11-30T06:00Z)") \
            from None


def _write_json(path: str, document: dict[str, object]) -> None:
    data = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    if path == "-":
        sys.stdout.write(data)
        return
    write_atomic(path, data)


def _pattern(option: str, pattern: str) -> re.Pattern[str]:
    """An option's regular expression, or a usage error naming the option."""
    try:
        return re.compile(pattern)
    except re.error as exc:
        raise UsageError(f"{option} {pattern!r}: {exc}") from None


def cmd_log_report(args: argparse.Namespace) -> int:
    proxy_agent = _pattern("--proxy-agent", args.proxy_agent)
    if args.since and args.until and args.since >= args.until:
        raise UsageError("--since must come before --until")
    if args.top < 1:
        raise UsageError("--top must be 1 or more")
    probe_agent = _pattern("--probe-agent", args.probe_agent)
    kinds = PathKinds(_track_paths(args.root, args.manifest))
    manifests = [Path(t.manifest) for t in kinds.tracks]
    report = Report(kinds, proxy_agent, probe_agent, since=args.since, until=args.until)
    files = log_files(args.logs)  # LogReportError: a missing or unreadable input (exit 1)
    if not files:
        raise LogReportError("no access log found (in a folder, files named *access*.log*)")
    if args.json and args.json != "-":  # never inside a compiled or served tree, never over a file read
        not_an_input(outside_protected(args.root, Path(args.json)), [*manifests, *files])
        check_target(args.json)
    report.read(files)
    if args.json:
        document = report_document(report, args.top)
        _write_json(args.json, document)
        defects = sum(f["defect"] for f in document["findings"])
        print(f"corpus log-report: {len(files)} file(s), {report.malformed_count} malformed line(s), "
              f"{defects} instrument defect finding(s); report in {args.json}", file=sys.stderr)
    else:
        sys.stdout.write(render_text(report, args.top))
        defects = sum(f["defect"] for f in report.findings())
    return DEFECT if args.fail_on_defect and defects else 0


def _track_paths(root: Path, given: list[Path]) -> tuple[TrackPaths, ...]:
    """Every track's own manifest (``ROOT``: a checkout or a release folder); or the ``--manifest`` files,
    each counted in the track whose référentiel it lists."""
    tracks = load_tracks(root)
    if not given:
        return tuple(TrackPaths.from_manifest(t.piste, root / t.places.manifest_file, t.collections)
                     for t in tracks)
    found = []
    for path in given:
        paths = TrackPaths.from_manifest("", path, ())
        track = next((t for t in tracks if t.referentiel in paths.known), None)
        if track is None:
            raise LogReportError(f"{path}: lists the référentiel of no track of {root / TRACKS_DIR} "
                                 f"({', '.join(t.referentiel for t in tracks)}): not a manifest of these tracks")
        found.append(dataclasses.replace(paths, piste=track.piste, collections=track.collections))
    return tuple(found)


def register_verify(sub: Subparsers) -> None:
    p = sub.add_parser(
        "verify", help="crawl a running server from the manifest and compare every byte and hash",
        description="Fetch every resource and declared absent of manifest/manifest.json from URL as the proxy "
                    "does (GET, payload {}, the secret header), and compare length, SHA-256, request_hash "
                    "and response_hash; then the 403 without or with a wrong secret, 404 for non-canonical "
                    "forms, 405, the other accepted secrets and one undeclared identifier per collection "
                    "(the absent template). Exit 1 on any difference, naming the resources.")
    add_root_options(p)
    p.add_argument("--url", required=True, type=http_url, help="base URL of the running server, e.g. http://127.0.0.1:8080")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--secret-file", type=Path, help="file of accepted secrets (the first is used to crawl)")
    source.add_argument("--secret-env", metavar="NAME", help="environment variable holding the secrets")
    tls = p.add_mutually_exclusive_group()
    tls.add_argument("--ca", type=Path, help="CA bundle or self-signed certificate to trust for https")
    tls.add_argument("--insecure", action="store_true", help="do not verify the TLS certificate")
    add_timeout_option(p, 10.0, "each request")
    add_track_option(p, "the one track whose manifest to crawl (default: every track of the checkout, each "
                        "against its own manifest)")
    p.add_argument("--progress-every", type=int, default=50, help="progress line every N checks (default 50)")
    p.set_defaults(func=cmd_verify)


def register_log_report(sub: Subparsers) -> None:
    p = sub.add_parser(
        "log-report", help="hour-by-hour report of the JSON access logs: statuses, 403 by agent, 503, failovers",
        description="Read the JSON access logs of the frontals and replicas (files, or folders searched for "
                    "*access*.log*; plain or gzip) as a stream and report per hour (UTC): requests, statuses, "
                    "403s by user agent (the proxy without its secret is an instrument defect, spec §4.1), "
                    "503s, failovers and failed replica tries, absent paths asked for, unknown paths (404); "
                    "then one section per track (each path counted in its own track, from its own manifest; "
                    "its declared absents marked *) and our probes (corpus verify, curl) on a line apart. "
                    "Malformed lines are counted and listed as file:line. Exit 0; 1 when an input cannot be "
                    "read or the --json file cannot be written; 2 on a usage error (a bad option value, a "
                    "--json place refused); 3 with --fail-on-defect when an instrument defect is found.")
    p.add_argument("logs", nargs="+", type=Path, help="access log files or folders")
    add_root_options(p)
    p.add_argument("--manifest", type=Path, action="append", default=[],
                   help="a track's manifest, counted in the track whose référentiel it lists (repeat; default: "
                        "every track's own under ROOT, a checkout or a release folder)")
    p.add_argument("--since", type=_iso, default=None, help="first moment reported (ISO 8601; UTC if no offset)")
    p.add_argument("--until", type=_iso, default=None, help="end of the period, excluded (ISO 8601)")
    p.add_argument("--json", metavar="FILE", default=None,
                   help=f"write the {REPORT_FORMAT} JSON document to FILE ('-': stdout) instead of the table")
    p.add_argument("--top", type=int, default=10, help="user agents and paths listed per hour (default 10)")
    p.add_argument("--proxy-agent", default=DEFAULT_PROXY_AGENT,
                   help=f"regex of the proxy's User-Agent (default {DEFAULT_PROXY_AGENT!r}); a user agent that "
                        "also sent an accepted secret counts as the proxy too")
    p.add_argument("--probe-agent", default=DEFAULT_PROBE_AGENT,
                   help=f"regex of our own probes' User-Agent (default {DEFAULT_PROBE_AGENT!r}: corpus verify and "
                        "the curl lines of the serve banner): counted on a 'probes' line, never as the proxy")
    p.add_argument("--fail-on-defect", action="store_true",
                   help="exit 3 when a finding is an instrument defect (for monitoring)")
    p.set_defaults(func=cmd_log_report)
