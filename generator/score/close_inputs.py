"""What a participant hands over at the close, read for the scorer: the submission files and folders, the
``--proofs`` verification file or folder of proofs as Trust Layer serves them, and the pins those proofs are
judged against (the Trust Layer key, the timestamp authority, Rekor's key, the season's window).

Every problem is one line naming the file (:class:`BadFile`, exit 1). The CLI parses the options into
:class:`Pins` and calls :func:`score_options`; ``corpus score``, ``corpus index`` and ``corpus freeze-check``
read the same inputs here, so that they judge them alike.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from generator.base import strict_json
from generator.base.bounded_read import SUBMISSION_LIMIT, ReadRefused, kind_of, read_bounded
from generator.base.errors import GeneratorError, shown_path, unreadable_text
from generator.base.jsonvalue import JsonValue
from generator.base.path_checks import regular_entry
from generator.contract.places import Places
from generator.score.entry import FormatDefects
from generator.score.inputs import ScoreInputError
from generator.score.proofs import ProofJudge, SeasonWindow
from generator.score.verdict import Proofs, check_proofs
from generator.trust_layer.anchor import Anchor
from generator.trust_layer.anchor_time import AnchorTimeError, instant_text, proof_time
from generator.trust_layer.anchor_v3 import parse_time
from generator.trust_layer.proof_v3 import ProofV3, Window
from generator.trust_layer.served_proof import ServedProof, read_served_proof
from generator.trust_layer.trust_proof import ProofError
from generator.trust_layer.tsa_token import Authority


class BadFile(GeneratorError):
    """A file the command was given cannot be used: one line, exit 1."""


def printable(text: str) -> str:
    """``text`` with any undecodable byte of a file name written ``\\xNN``-style, fit for UTF-8 output."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _text(path: Path, data: bytes | None = None) -> str:
    """The UTF-8 text of a participant's file, read bounded (a FIFO, a device or a huge file is refused), or of
    its bytes when they were read already."""
    try:
        data = read_bounded(path, SUBMISSION_LIMIT) if data is None else data
    except ReadRefused as exc:
        raise BadFile(f"{shown_path(path)}: {exc.strerror}") from None
    except OSError as exc:
        raise BadFile(f"{shown_path(path)}: cannot read: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadFile(f"{shown_path(path)}: not UTF-8 text (byte {exc.start})") from None


def _parse(path: Path, what: str = "a submission", data: bytes | None = None) -> tuple[JsonValue, list[str]]:
    """A JSON file and its defects (:func:`strict_json.loads`), or ``file:line:column: message``."""
    text = _text(path, data)
    try:
        return strict_json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadFile(f"{shown_path(path)}:{exc.lineno}:{exc.colno}: json: {exc.msg}") from None
    except ValueError as exc:
        raise BadFile(f"{shown_path(path)}: json: {exc}") from None
    except RecursionError:
        raise BadFile(f"{shown_path(path)}: json: nested too deeply to be {what}") from None


def load_submission(path: Path) -> JsonValue:
    """A submission; one whose JSON has defects is kept as :class:`FormatDefects`, rejected at entry (§4)."""
    value, defects = _parse(path)
    if not defects:
        return value
    task_id = value.get("task_id") if isinstance(value, dict) else None
    clean = isinstance(task_id, str) and "task_id" not in getattr(value, "repeated", ()) \
        and not any(d.startswith("/task_id:") for d in defects)
    return FormatDefects(defects, task_id if clean and isinstance(task_id, str) else None)


def submission_files(paths: list[Path]) -> list[Path]:
    """The files given, and the ``*.json`` files directly inside each folder given, in name order.

    Any other entry of a folder (a FIFO, a dangling link, ``conf-03.JSON``) is named as an error: skipping it
    would show its task as not submitted. Sub-folders are not searched (and not refused)."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            entries = sorted(p for p in path.iterdir() if p.suffix == ".json" or not p.is_dir() or p.is_symlink())
            strays = [p for p in entries if not (p.suffix == ".json" and regular_entry(p))]
            if strays:
                raise BadFile(f"{', '.join(printable(str(p)) for p in strays)}: not a regular *.json file: a "
                              "submission folder holds *.json submissions only: remove or rename "
                              f"{'it' if len(strays) == 1 else 'them'}")
            if not entries:
                raise BadFile(f"{path}: no *.json submission in this folder")
            files += entries
        elif path.is_file():
            files.append(path)
        elif os.path.lexists(path):  # a FIFO, a device, a socket, a dangling link: there, but no submission
            try:
                reason = f"not a regular file ({kind_of(path.stat().st_mode)})"
            except OSError as exc:
                reason = unreadable_text(path, exc).removeprefix(f"{shown_path(path)}: ")
            raise BadFile(f"{printable(str(path))}: {reason}: give a submission file or a folder of them")
        else:
            raise BadFile(f"{path}: no such file or folder")
    return files


@dataclass(frozen=True)
class ProofFolder:
    """``--proofs`` given as a folder of proofs as Trust Layer serves them, one ``<proof_id>.json`` each."""

    path: Path
    proofs: dict[str, ServedProof]


def _suffix(name: str) -> str:
    """``Path(name).suffix``, without making a Path (a season's folder holds hundreds of thousands)."""
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def proof_names(path: Path) -> list[str]:
    """The file names of a proofs folder (``<proof_id>.json``), in name order; any other entry (a link, a FIFO,
    a device, another name) is refused, its link never followed."""
    with os.scandir(path) as found:
        entries = sorted((entry.name, _suffix(entry.name) == ".json" and entry.is_file(follow_symlinks=False))
                         for entry in found)
    strays = [name for name, proof in entries if not proof]
    if strays:
        raise BadFile(f"{', '.join(printable(str(path / name)) for name in strays)}: not a regular *.json file: a "
                      "proofs folder holds <proof_id>.json proofs only")
    if not entries:
        raise BadFile(f"{path}: no <proof_id>.json proof in this folder")
    return [name for name, _ in entries]


def read_proof_file(file: Path, data: bytes | None = None) -> ServedProof:
    """One proof of a proofs folder, as GET /v1/proof/{id} serves it and named by its id (``data``: its bytes,
    when they were read already)."""
    value, defects = _parse(file, "a proof", data)
    if defects:
        raise BadFile(f"{file}: {'; '.join(defects)}")
    try:
        proof = read_served_proof(value)
    except ProofError as exc:
        raise BadFile(f"{file}: {exc}") from None
    if proof.is_pair:
        raise BadFile(f"{file}: an opened pair, not a proof: the folder holds proofs as GET /v1/proof/{{id}} "
                      "serves them (the pairs are the submission's disclosures)")
    if file.stem != proof.proof_id:
        shown = shown_path(proof.proof_id)
        raise BadFile(f"{shown_path(file)}: holds the proof {shown}: name it {shown}.json")
    return proof


def _proof_folder(path: Path) -> ProofFolder:
    return ProofFolder(path, {proof.proof_id: proof for proof in (read_proof_file(path / name)
                                                                 for name in proof_names(path))})


def load_proofs(path: Path) -> Proofs | ProofFolder:
    """The proof verification file, or a :class:`ProofFolder`; a defect in the file (a key twice...) or
    another shape than the object of ``check_proofs`` (``null``, ``[]``, a string) is a file error: it cannot
    be trusted, nor read as absent."""
    if path.is_dir():
        return _proof_folder(path)
    value, defects = _parse(path, "a proofs file")
    if defects:
        raise BadFile(f"{shown_path(path)}: {'; '.join(defects)}")
    try:
        return check_proofs(value)
    except ScoreInputError as exc:
        raise BadFile(f"{shown_path(path)}: {str(exc).removeprefix('proofs: ')}") from None


@dataclass(frozen=True)
class Pins:
    """What the proofs and the anchor are judged against, as a command line gave it or a track's pins file
    states it (``score/season_pins.py``: a PEM path is then the copy in the freeze folder): the pinned Trust
    Layer keys (``--trust-layer-key``, repeated for a rotation), the challenge key's fingerprint, the timestamp
    authority's PEM files, Rekor's key, the season's close and opening, and Trust Layer's base URL."""

    trust_layer_keys: tuple[str, ...] = ()
    fingerprint: str | None = None
    tsa_ca: Path | None = None
    tsa_cert: Path | None = None
    rekor_key: Path | None = None
    season_close: datetime | None = None
    season_opening: datetime | None = None  # pinned (score/season_pins.py); default: the anchor's time
    trust_layer_url: str | None = None  # pinned: where the proofs' public views are served

    def anchor_key(self) -> str | None:
        """The one pinned key an anchor is checked against when ``--trust-layer-key`` is repeated: the first
        given (a rotation concerns the participants' proofs, which verify on any of them); never a key the
        published anchor names."""
        return self.trust_layer_keys[0] if self.trust_layer_keys else None

    def window(self) -> Window | None:
        """``--tsa-ca`` / ``--tsa-cert`` as the window a 3.x anchor given with ``--anchor`` is checked in (the
        published ``corpus-anchor/2`` carries its own)."""
        return Window(*Authority(self.tsa_ca, self.tsa_cert).pems()) if self.tsa_ca is not None else None


def _pem(path: Path, flag: str) -> bytes:
    """A pinned PEM file, read bounded (a FIFO or a huge file is refused in one line)."""
    try:
        return read_bounded(path, SUBMISSION_LIMIT)
    except OSError as exc:
        raise BadFile(f"{path}: cannot read ({flag}): {exc.strerror or exc}") from None


def anchor_opening(published: Anchor | None, places: Places) -> datetime | None:
    """When the season opens: a 3.x anchor's RFC 3161 time (verified when it was published, and again by the
    freeze check), else a 1.2 anchor's time once it passes the anchor's time rule (contract/anchor_time.py)."""
    if published is None:
        return None
    if isinstance(published.proof, ProofV3):
        return parse_time(published.heure)
    fields = published.proof.fields
    try:
        return proof_time(fields.timestamp, fields.upstream_timestamp) if fields is not None else None
    except AnchorTimeError as exc:
        raise BadFile(f"{places.anchor}: proof: {exc}") from None


def check_close(root: Path, places: Places, close: datetime | None,
                pinned_opening: datetime | None = None) -> None:
    """A close (``--season-close`` or pinned) before the season's opening (the pinned opening, else the published
    anchor's time) is refused, one line: no record could be on time, and nothing of such a season is scored."""
    if close is None:
        return
    where = "the pinned opening"
    opening = pinned_opening
    if opening is None and os.path.lexists(root / places.anchor):
        opening, where = anchor_opening(Anchor.read(root / places.anchor), places), f"the time of {places.anchor}"
    if opening is not None and close < opening:
        raise BadFile(f"--season-close {instant_text(close)} is before the season's opening "
                      f"{instant_text(opening)} ({where}): a season closes after it opens; give its close")


def proof_judge(folder: Path, pins: Pins, root: Path, places: Places) -> ProofJudge:
    """What a folder of proofs is judged against: the pinned key (``--trust-layer-key``, else the track's
    ``trust_layer_key``; never the published anchor's), the token times within the season (from the published
    anchor's time, once it passes the time rule, to ``--season-close``), the authority and Rekor's key, each
    checked before any proof is judged."""
    keys = list(pins.trust_layer_keys) or ([places.trust_layer_key] if places.trust_layer_key else [])
    published = Anchor.read(root / places.anchor) if os.path.lexists(root / places.anchor) else None
    if not keys:  # never the key an anchor names
        raise BadFile(f"{shown_path(folder)}: a folder of proofs is verified against the pinned Trust Layer "
                      "key: give --trust-layer-key ed25519:<key> (or pin trust_layer_key in the track's "
                      "track.yaml)")
    for given in (pins.tsa_ca, pins.tsa_cert):
        if given is not None and not given.is_file():
            raise BadFile(f"{given}: no such file (--tsa-ca, --tsa-cert: PEM files of the timestamp authority)")
    authority = Authority(pins.tsa_ca, pins.tsa_cert) if pins.tsa_ca else None
    rekor = _pem(pins.rekor_key, "--rekor-key") if pins.rekor_key is not None else None
    opening = anchor_opening(published, places)
    if pins.season_opening is not None:  # pinned: at or after the anchor's time (season_pins checks it too)
        if opening is not None and pins.season_opening < opening:
            raise BadFile(f"the pinned season opening {pins.season_opening:%Y-%m-%dT%H:%M:%SZ} is before the "
                          f"freeze anchor's time {opening:%Y-%m-%dT%H:%M:%SZ}: the season opens at or after it")
        opening = pins.season_opening
    return ProofJudge(keys, SeasonWindow(authority, opening, pins.season_close, rekor))


def judged_proofs(loaded: Proofs | ProofFolder | None, pins: Pins, root: Path, places: Places) -> Proofs | None:
    """A :class:`ProofFolder` judged (:func:`proof_judge`); a verification file as it is (checked once, for
    every participant)."""
    if not isinstance(loaded, ProofFolder):
        return loaded
    return check_proofs(proof_judge(loaded.path, pins, root, places).verdicts(loaded.proofs))


@dataclass(frozen=True)
class ScoreOptions:
    """``score_submissions``'s options beside the submissions, the root and the track: the proofs' verdicts
    (None: conditions 1 and 2 not verified offline), the salt, the anchor given, the key and fingerprint the
    anchor is checked against and the window of a 3.x anchor given with ``--anchor``."""

    proofs: Proofs | None = None
    salt_file: Path | None = None
    anchor_file: Path | None = None
    trust_layer_key: str | None = None
    fingerprint: str | None = None
    window: Window | None = None
    replaced_salts: tuple[Path, ...] = ()  # a replaced freeze: the salt of each replaced record, in order
    opening: datetime | None = None  # the pinned opening: every replacement of the chain anchored before it


NO_OPTIONS = ScoreOptions()


def score_options(root: Path, places: Places, pins: Pins, loaded_proofs: Proofs | ProofFolder | None,
                  salt_file: Path | None, anchor_file: Path | None) -> ScoreOptions:
    """The options of ``corpus score``'s proof and freeze flags: one place, so that ``corpus index`` scores each
    participant exactly as ``corpus score`` would (``loaded_proofs``: what :func:`load_proofs` read, or None)."""
    check_close(root, places, pins.season_close, pins.season_opening)
    return ScoreOptions(judged_proofs(loaded_proofs, pins, root, places), salt_file, anchor_file,
                        pins.anchor_key(), pins.fingerprint, pins.window(), opening=pins.season_opening)
