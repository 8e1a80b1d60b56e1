"""What every command group shares: the options they have in common, the exit codes, the errors the CLI
itself raises. Only the CLI parses a command line (argparse lives in ``generator/cli/`` alone)."""

from __future__ import annotations

import argparse
import math
import os
import re
import stat
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn, TextIO, TypeAlias
from urllib.parse import urlsplit

from generator.base.errors import CorpusError, GeneratorError, shown_path
from generator.base.path_checks import path_mode
from generator.contract.places import Places
from generator.publish.parallel import available_cores
from generator.reading.reader import CorpusReader
from generator.reading.season_model import Season, load_season
from generator.score.close_inputs import Pins
from generator.score.season_pins import DEFAULT_TRUST_LAYER_URL, PinsError, check_url, read_pins, with_pins
from generator.serving.rendering.nginx_settings import DEFAULT_WORKER_USER, Settings
from generator.tracks.loader import load_tracks, pick_track
from generator.tracks.model import DEFAULT_BASE_URL, Track, file_for
from generator.trust_layer.anchor_time import AnchorTimeError, parse_instant
from generator.trust_layer.trust_proof import ProofError, check_fingerprint, public_key

# The exit codes of every command (docs/architecture.md, ``corpus --help``).
OK = 0  # the command did what it was asked and found nothing wrong
PROBLEM = 1  # it ran and found a problem: a check failed, verify differs, a score refused, a file corrupt
USAGE = 2  # the command line is wrong: argparse's errors, and values refused before any work
DEFECT = 3  # log-report --fail-on-defect only: the logs show an instrument defect (for monitoring)
INTERRUPTED = 130  # Ctrl-C
EXIT_CODES = (f"exit codes: {OK} success; {PROBLEM} the command ran and found a problem (a check failed, "
              f"verify differs, score refused, a file missing or corrupt); {USAGE} usage error (a bad option or "
              f"argument, an unknown task, an output place refused); {DEFECT} log-report --fail-on-defect "
              f"found an instrument defect; {INTERRUPTED} interrupted.")



class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the command and the argument (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE, f"{self.prog}: {message} (--help for usage)\n")


# What ``OneLineParser.add_subparsers`` returns; its class is private in argparse, so it is named for the type
# checker only (a string: never evaluated).
Subparsers: TypeAlias = "argparse._SubParsersAction[OneLineParser]"


class UsageError(GeneratorError):
    """A value of the command line that argparse cannot judge (an unknown task, --since after --until): exit 2."""


class Reported(Exception):
    """The command printed its messages already; end with ``code``."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def root_folder(value: str) -> Path:
    """``--root``'s type: an existing folder, so that a file given by mistake is named as such."""
    path = Path(value)
    mode = path_mode(path, lambda why: argparse.ArgumentTypeError(f"{value}: {why}"), "no such folder")
    if not stat.S_ISDIR(mode):
        raise argparse.ArgumentTypeError(f"{value}: not a folder")
    return path


def positive_seconds(text: str) -> float:
    """A duration option (``--timeout``): a finite number of seconds above zero (0, -1, nan, inf refused)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"{shown_path(text)}: expected a finite number of seconds above 0")
    return value


def add_timeout_option(parser: argparse.ArgumentParser, default: float, what: str) -> None:
    """``--timeout``, shared by every command that talks to a server: the deadline of each whole exchange
    (connection, TLS handshake, headers and body; ``generator/observe/http_exchange.py``)."""
    parser.add_argument("--timeout", type=positive_seconds, default=default, metavar="SECONDS",
                        help=f"seconds {what} may take, the whole of it: connection, headers and body, however "
                             f"slowly the server sends them (default {default:g})")


def http_url(text: str) -> str:
    """A server's base URL (``--url``): http or https, a host, a valid port, nothing that breaks a line."""
    shown = shown_path(text)
    try:
        parts = urlsplit(text)
        port = parts.port  # a port out of range is a ValueError here, not at the connection
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{shown}: not a URL ({exc})") from None
    if parts.scheme not in ("http", "https") or not parts.hostname or any(c.isspace() for c in text) \
            or port == 0:
        raise argparse.ArgumentTypeError(f"{shown}: expected http://HOST[:PORT] or https://HOST[:PORT]")
    return text


def server_name_value(text: str) -> str:
    """``--server-name``: a name given is a name; ``''`` (or blanks) is refused, not taken for the default."""
    if not text.strip():
        raise argparse.ArgumentTypeError(f"{shown_path(repr(text))}: an empty server name: give the host name "
                                         "clients ask for, or leave the option out (the manifest's host)")
    return text


def selected_tracks(args: argparse.Namespace) -> list[Track]:
    """The tracks a command works on: ``--track``'s, else every track of the checkout."""
    every = load_tracks(args.root)
    return every if args.track is None else [pick_track(every, args.track)]


def named(track: Track, tracks: list[Track]) -> str:
    """`` (piste)`` after a command's name when ``tracks`` are several: every line says which."""
    return f" ({track.piste})" if len(tracks) > 1 else ""


def add_root_options(parser: argparse.ArgumentParser) -> None:
    """``--root``: the checkout holding corpus_src/, build/ and manifest/ (default: current directory)."""
    parser.add_argument("--root", type=root_folder, default=Path.cwd(),
                        help="project folder holding corpus_src/, build/ and manifest/ (default: .)")


def add_track_option(parser: argparse.ArgumentParser, what: str = "the track (default: the checkout's first, "
                     "conformite)") -> None:
    """``--track PISTE``: which track of ``ROOT/tracks/`` a command works on (``corpus tracks`` lists them)."""
    parser.add_argument("--track", metavar="PISTE", default=None, help=what)


def base_url_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base-url", default=os.environ.get("CORPUS_BASE_URL", DEFAULT_BASE_URL),
                        help="base URL the canonical URLs and request hashes are built on "
                             f"(default: $CORPUS_BASE_URL or {DEFAULT_BASE_URL})")


def print_problems(problems: Sequence[object], stream: TextIO | None = None) -> None:
    # sys.stderr is looked up at call time, so that redirect_stderr (and pytest's capsys) see the problems.
    for problem in problems:
        print(problem, file=stream or sys.stderr)


def add_render_options(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``render-nginx`` and ``serve``."""
    parser.add_argument("--listen", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None,
                        help="port to listen on (default 8080; 8443 for the frontal of serve --replicas)")
    parser.add_argument("--server-name", default=None, type=server_name_value,
                        help="server_name (default: host of the manifest's base URL)")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--secret-file", type=Path,
                        help="file of accepted secrets, one per line, mode 0600, outside the repository")
    source.add_argument("--secret-env", metavar="NAME",
                        help="environment variable holding the accepted secrets (space or comma separated)")
    parser.add_argument("--tls-cert", type=Path, help="TLS certificate chain (PEM); with --tls-key")
    parser.add_argument("--tls-key", type=Path, help="TLS private key (PEM); plain HTTP when omitted")
    parser.add_argument("--access-log", type=Path, help="access log (default PREFIX/logs/access.log)")
    parser.add_argument("--error-log", type=Path, help="error log (default PREFIX/logs/error.log)")
    parser.add_argument("--maintenance-flag", type=Path,
                        help="file whose existence switches the corpus to 503 (default PREFIX/maintenance)")
    parser.add_argument("--workers", default="auto", help="worker_processes (default auto)")
    parser.add_argument("--worker-user", default=None,
                        help=f"account of the workers when started as root (default {DEFAULT_WORKER_USER})")
    parser.add_argument("--expect-manifest-hash", default=None, metavar="SHA256",
                        help="refuse to serve a build of another release: the release hash over every track "
                             "(docs/operating.md), or the first track's manifest hash (default: each track's "
                             "freeze record when it exists)")


def render_settings(args: argparse.Namespace, prefix: Path, **changes: object) -> Settings:
    """The :class:`Settings` that :func:`add_render_options` (and ``--root``) describe, with ``changes``."""
    values: dict[str, Any] = dict(
        root=args.root, prefix=prefix, listen=args.listen, port=args.port or 8080,
        server_name=args.server_name or "",
        tls_cert=args.tls_cert, tls_key=args.tls_key, secret_file=args.secret_file, secret_env=args.secret_env,
        access_log=args.access_log, error_log=args.error_log, maintenance_flag=args.maintenance_flag,
        worker_processes=args.workers, worker_user=args.worker_user,
        expect_manifest_hash=args.expect_manifest_hash)
    values.update(changes)
    return Settings(**values)


def tracks_for_tasks(root: Path, piste: str | None, task_ids: list[str]) -> tuple[list[Track],
                                                                                 list[tuple[Track, list[str]]]]:
    """Every track of the checkout, and the tracks a command works on with the task ids each one owns.

    ``--track`` selects one; else a task id names its own track (``gen-06`` is générique's: it has the
    shape of its ``enonce.id``); no id: every track, each with all its tasks. An id no selected track's
    pattern takes is a usage error listing the tasks of those tracks."""
    every = load_tracks(root)
    chosen = [pick_track(every, piste)] if piste else every
    if not task_ids:
        return every, [(track, []) for track in chosen]
    owned: dict[str, list[str]] = {}
    unknown = []
    for task_id in task_ids:
        owner = next((t for t in chosen if re.fullmatch(t.task_id, task_id)), None)
        if owner is None:
            unknown.append(task_id)
        else:
            owned.setdefault(owner.piste, []).append(task_id)
    if unknown:
        known = [s.task.id for track in chosen for s in season_or_exit(root, track).statements]
        raise UsageError(f"unknown task(s) {', '.join(unknown)}; tasks: {', '.join(known)}")
    return every, [(track, owned[track.piste]) for track in chosen if track.piste in owned]


def season_or_exit(root: Path, track: Track) -> Season:
    """The season of the track's season sources, or its problems on stderr and exit 1 (shared by every
    season sub-command, ``graph`` included, so they all fail alike)."""
    try:
        return load_season(root / track.trees.season_sources, track)
    except CorpusError as exc:
        print_problems(exc.problems)
        raise Reported(PROBLEM) from None


def built_reader(root: Path, track: Track) -> CorpusReader:
    """A reader of the track's build, or a clear 'run corpus build first' and exit 1."""
    build = root / track.trees.build
    if not (build / file_for(track.referentiel)).is_file():
        print(f"no built corpus in {build}: run 'corpus build' first", file=sys.stderr)
        raise Reported(PROBLEM)
    return CorpusReader(build, track)


def season_close(text: str) -> datetime:
    """``--season-close``: an ISO 8601 UTC instant, checked whether or not ``--proofs`` is given."""
    try:
        return parse_instant(text, "--season-close")
    except AnchorTimeError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--season-close: ")) from None


def salt_files(args: argparse.Namespace) -> tuple[Path | None, tuple[Path, ...]]:
    """``--salt-file``, given once per record of the freeze chain in its order: the record in force's (the
    last), and the replaced records' (the ones before it)."""
    salts: list[Path] = args.salt_file or []
    return (salts[-1] if salts else None), tuple(salts[:-1])


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


def jobs(text: str) -> int:
    """``--jobs``: a number of processes, 1 or more."""
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of processes (1 or more)")
    return int(text)


def add_jobs_option(p: argparse.ArgumentParser, what: str) -> None:
    """``--jobs N``: the processes a close's work is spread over; the bytes are the same whatever N."""
    p.add_argument("--jobs", type=jobs, default=available_cores(), metavar="N",
                   help=f"processes {what} (default: every core, here {available_cores()}); what is written is "
                        "the same whatever N")


def add_rekor_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rekor-key", type=Path, metavar="PEM",
                   help="with a --proofs folder: Rekor's pinned public key (PEM); a 3.x proof that carries its "
                        "Rekor entry (transparency_log.entry) then has it verified offline; otherwise the report "
                        "says Rekor was not checked")


def pins_of(args: argparse.Namespace) -> Pins:
    """The pins :func:`add_pinned_options`, :func:`add_rekor_option`, ``--tsa-ca``/``--tsa-cert`` and
    ``--season-close`` gave (a command without one of them: not given)."""
    keys: list[str] | None = getattr(args, "trust_layer_key", None)
    fingerprint: str | None = getattr(args, "challenge_key_fingerprint", None)
    tsa_ca: Path | None = getattr(args, "tsa_ca", None)
    tsa_cert: Path | None = getattr(args, "tsa_cert", None)
    rekor_key: Path | None = getattr(args, "rekor_key", None)
    close: datetime | None = getattr(args, "season_close", None)
    return Pins(tuple(keys or ()), fingerprint, tsa_ca, tsa_cert, rekor_key, close)


def pins_for(args: argparse.Namespace, root: Path, places: Places) -> Pins:
    """The pins a command judges with: its flags (:func:`pins_of`), else the track's pins file
    (``corpus pin``, ``<freeze folder>/pins.json``): after ``corpus pin`` no command needs a pin flag."""
    return with_pins(pins_of(args), read_pins(root, places))


def trust_layer_url(text: str) -> str:
    """``--trust-layer-url``: an http(s) URL, the only kind of link the pages may carry to a proof."""
    try:
        return check_url(text)
    except PinsError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--trust-layer-url: ")) from None


def trust_layer_url_for(given: str | None, root: Path, places: Places) -> str:
    """The one Trust Layer base URL: the flag, else the pinned one, else the production proxy's."""
    if given is not None:
        return given.rstrip("/")
    pinned = read_pins(root, places)
    return pinned.trust_layer_url if pinned is not None and pinned.trust_layer_url else DEFAULT_TRUST_LAYER_URL
