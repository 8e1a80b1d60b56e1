"""A close publication verified offline, from that folder and the keys its reader pins (``corpus
verify-publication``), never from a checkout's trees nor Trust Layer's service.

The checks, one line each, every failure naming the file (and, for a computed document, the first figure that
differs, with both values):

1. the list: every file ``SHA256SUMS`` lists is there with its SHA-256, and no other file;
2. the manifest: ``manifeste/manifest.json`` hashes to ``manifest.sha256`` and to the hash the freeze record
   anchors, and every served body under ``corpus/`` is its manifest entry's bytes;
3. the freeze record: ``sha256(sel ‖ clé)`` is its key commitment, the statements and the barème section
   hash as it says, and every other field is what ``corpus freeze`` writes for these files;
4. the anchor: the proof of the call that served the record, verified against the pinned Trust Layer key and
   timestamp authority (its token's time is the season's opening at the earliest);
5. the proofs: every public view judged offline against the same pins, within the season's window;
6. the freeze chain, when the freeze was replaced before the opening: every kept record and its anchor
   (``gel/remplaces/<n>/``) verified like the one in force against the same pins, each record naming the
   proof_id and SHA-256 of the one it replaces, the anchors in time order and each at or before the opening,
   and every commitment recomputed from its own salt (``gel/remplaces/<n>/sel.hex``); a link removed or altered
   is named;
7. the contestations (spec §9.2): every rectified figure of the index and the reports replayed from the
   published decisions (``gel/contestations/``), every other figure its report's: a figure changed without a
   decision, or a decision removed, is refused naming the file and the participant; an invalidated season
   holds no ranking;
8. the close computed again: every participant scored again with ``corpus score``'s own function, the index,
   the reports (their rectifications included), the scores, ``cloture.json``, the page and the list rebuilt,
   and compared byte for byte.

The folder's files are laid out as a checkout in a private temporary folder (``tracks/<piste>``,
``build/<piste>``...), so that the scorer runs on them exactly as on the operator's checkout.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from generator.base import strict_json
from generator.base.errors import GeneratorError, shown_path
from generator.base.text_policy import cut
from generator.contract.freeze import check_freeze, commitment, read_record, read_salt
from generator.contract.freeze_chain import REPLACED, chain_of
from generator.contract.hashing import sha256_hex
from generator.contract.manifest import Manifest
from generator.publish.close_publication import (
    CLOTURE,
    CONTESTATIONS,
    CORPUS,
    FREEZE,
    INVALIDATION,
    MANIFEST,
    PINNED,
    PROOFS,
    RECORDS,
    REGISTRATIONS,
    SALT,
    SEASON,
    TRACK,
    CloseRequest,
    read_cloture,
    replaced_salt,
    write_close,
)
from generator.publish.contestation import read_contests
from generator.publish.folder_files import SUMS, PublicationError, folder_files, read_published, read_sums
from generator.publish.folder_verdicts import judged_folder
from generator.publish.parallel import ordered_map
from generator.publish.published import read_document
from generator.publish.rectification import by_did, rectification_problems
from generator.publish.season_index import IndexRequest
from generator.publish.wording import INVALIDEE
from generator.score.close_inputs import Pins, score_options
from generator.score.verdict import Proofs
from generator.tracks.loader import load_track
from generator.tracks.model import Track
from generator.trust_layer.anchor_time import instant_text, parse_instant
from generator.trust_layer.freeze_anchor import check_anchor
from generator.trust_layer.freeze_chain import chain_problems
from generator.trust_layer.proof_v3 import Window
from generator.trust_layer.tsa_token import Authority

_PISTE = re.compile(r"[a-z][a-z0-9-]{0,40}")
SHOWN = 12  # failures listed per check; the rest are counted
OWN_CODE = "generator.track_code."  # the only track code a verification runs: the package's own


@dataclass(frozen=True)
class AuditorPins:
    """What the reader pins, never taken from the folder: Trust Layer's key(s) and the timestamp authority's
    CA (its signing certificate and Rekor's key default to the folder's copies: the first must chain to the
    pinned CA, the second only adds a check); the challenge key's fingerprint and the window, when given, must
    be the folder's."""

    keys: tuple[str, ...]
    tsa_ca: Path
    tsa_cert: Path | None = None
    rekor_key: Path | None = None
    fingerprint: str | None = None
    opening: datetime | None = None
    close: datetime | None = None


@dataclass(frozen=True)
class Check:
    ok: bool
    text: str


class _Failed(Exception):
    """A check that found differences: its lines."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines[0] if lines else "")
        self.lines = lines


def _listed(lines: list[str]) -> list[str]:
    return lines[:SHOWN] + ([f"… and {len(lines) - SHOWN} more"] if len(lines) > SHOWN else [])


def first_difference(published: object, computed: object, where: str = "") -> tuple[str, object, object] | None:
    """The JSON Pointer of the first place two JSON values differ, with both values there; None when equal."""
    if isinstance(published, dict) and isinstance(computed, dict):
        for key in sorted(set(published) | set(computed)):
            if key not in published or key not in computed:
                return f"{where}/{key}", published.get(key, "(absent)"), computed.get(key, "(absent)")
            found = first_difference(published[key], computed[key], f"{where}/{key}")
            if found:
                return found
        return None
    if isinstance(published, list) and isinstance(computed, list):
        for n, (a, b) in enumerate(zip(published, computed, strict=False)):
            found = first_difference(a, b, f"{where}/{n}")
            if found:
                return found
        if len(published) != len(computed):
            return f"{where}/{min(len(published), len(computed))}", f"{len(published)} item(s)", \
                f"{len(computed)} item(s)"
        return None
    same = type(published) is type(computed) and published == computed
    return None if same else (where or "/", published, computed)


def difference_text(name: str, published: bytes, computed: bytes) -> str:
    """Where a published file differs from the one computed again: the first figure (JSON) or line."""
    if name.endswith(".json"):
        try:
            found = first_difference(strict_json.document(published), strict_json.document(computed))
        except strict_json.NotJson as exc:
            return f"{name}: {exc.reason}; computed again it is JSON of {len(computed)} bytes"
        if found:
            pointer, was, now = found
            return f"{name}: {pointer}: published {cut(was)}, computed again {cut(now)}"
        return f"{name}: the same JSON value written with other bytes (sha256 {sha256_hex(published)[:16]}…, " \
               f"computed again {sha256_hex(computed)[:16]}…)"
    old, new = published.decode("utf-8", "replace").splitlines(), computed.decode("utf-8", "replace").splitlines()
    for number, (a, b) in enumerate(zip(old, new, strict=False), 1):
        if a != b:
            if name == SUMS:  # '<sha256>  <path>': the path whose SHA-256 differs
                return f"{name}:{number}: {a[66:]}: listed {a[:16]}…, computed again {b[:16]}… ({b[66:]})"
            at = next(i for i, (x, y) in enumerate(zip(a + "\0", b + "\1", strict=False)) if x != y)
            start = max(0, at - 40)
            return (f"{name}:{number}: published …{a[start:start + 100]!r}, computed again "
                    f"…{b[start:start + 100]!r}")
    return f"{name}: {len(old)} line(s) published, {len(new)} computed again"


class _Layout:
    """The folder's files laid out as a checkout in a temporary folder, and the way back to their names."""

    def __init__(self, folder: Path, work: Path, piste: str) -> None:
        self.folder, self.root, self.piste = folder, work / "checkout", piste
        self.salt = work / "sel.hex"
        self.rebuilt = work / "rebuilt" / piste  # the publication computed again, file by file
        self.places: dict[str, str] = {f"tracks/{piste}": TRACK, f"build/{piste}": CORPUS,
                                       f"manifest/{piste}": MANIFEST, f"season/{piste}": SEASON,
                                       f"freeze/{piste}": FREEZE}

    def lay_out(self) -> None:
        self.rebuilt.parent.mkdir()
        for tree, name in self.places.items():
            source = self.folder / name
            target = self.root / tree
            if tree.startswith(("season/", "freeze/")):
                target.mkdir(parents=True)
                wanted = ("taches.json", "cle.json") if name == SEASON else ("record.json", "anchor.json",
                                                                             "invalidation.json")
                _copy(source, target, wanted)
            elif source.is_dir():
                shutil.copytree(source, target, symlinks=True)
        if (self.folder / SALT).is_file():
            self.salt.write_bytes(read_published(self.folder / SALT))
        kept = self.folder / FREEZE / REPLACED  # the chain's replaced records and anchors; their salts apart
        for link in sorted(kept.iterdir()) if kept.is_dir() and not kept.is_symlink() else []:
            if link.is_dir() and not link.is_symlink():
                _copy(link, self.root / f"freeze/{self.piste}/{REPLACED}/{link.name}",
                      ("record.json", "anchor.json"))
                if link.name.isdigit() and (link / "sel.hex").is_file():
                    self.replaced_salt(link.name).write_bytes(read_published(link / "sel.hex"))
        contests = self.folder / CONTESTATIONS
        if contests.is_dir() and not contests.is_symlink():
            _copy(contests, self.root / f"freeze/{self.piste}/contestations",
                  tuple(sorted(p.name for p in contests.iterdir())))

    def replaced_salt(self, number: int | str) -> Path:
        """Where the salt of the chain's replaced record ``number`` is laid out (outside the checkout)."""
        return self.salt.parent / f"sel-{number}.hex"

    def replaced_salts(self, count: int) -> tuple[Path, ...]:
        return tuple(self.replaced_salt(n) for n in range(1, count + 1))

    def shown(self, text: str) -> str:
        """A message with the temporary checkout's paths written as the folder's names."""
        text = text.replace(str(self.salt), SALT)
        text = re.sub(re.escape(str(self.salt.parent)) + r"/sel-([0-9]+)\.hex",
                      lambda found: replaced_salt(int(found[1])), text)
        for tree, name in self.places.items():
            text = text.replace(f"{self.root}/{tree}", name).replace(f"{tree}/", f"{name}/")
        return text.replace(f"{self.folder}/", "")


def _copy(source: Path, target: Path, names: tuple[str, ...]) -> None:
    """The regular files ``names`` of ``source`` copied into ``target`` (made), never through a link."""
    target.mkdir(parents=True, exist_ok=True)
    for file in names:
        if (source / file).is_file() and not (source / file).is_symlink():
            (target / file).write_bytes(read_published(source / file))


def _digest(path: Path) -> str | None:
    """The SHA-256 of a regular file of the folder, read bounded; None for a link or another kind."""
    return sha256_hex(read_published(path)) if path.is_file() and not path.is_symlink() else None


@dataclass
class _Listing:
    """The folder's entries, listed once, and each file's SHA-256 as the list check read it: the later checks
    use them instead of listing and reading the folder again (a season's close holds 50,000 files)."""

    present: dict[str, Path]
    digests: dict[str, str] = field(default_factory=dict)

    def digest(self, name: str) -> str:
        return self.digests.get(name) or sha256_hex(read_published(self.present[name]))


def _check_list(folder: Path, listing: _Listing, jobs: int) -> str:
    """Every listed file there with its SHA-256, no other; each file's own SHA-256 read on ``jobs`` processes
    and kept in ``listing``."""
    sums = read_sums(read_published(folder / SUMS), SUMS)
    present, digests = listing.present, listing.digests
    listed = sorted(sums.items())
    paths = [present.get(name) for name, _ in listed]
    found = ordered_map(lambda n: None if (path := paths[n]) is None else _digest(path), len(listed), jobs, 256)
    problems = []
    for (name, digest), path, actual in zip(listed, paths, found, strict=True):
        if path is None:
            problems.append(f"{name}: listed in {SUMS}, missing")
        elif actual is None:
            problems.append(f"{name}: not a regular file")
        elif (digests.setdefault(name, actual)) != digest:
            problems.append(f"{name}: SHA-256 {actual}, {SUMS} lists {digest}")
    added = sorted(set(present) - set(sums) - {SUMS})
    problems += [f"{name}: not listed in {SUMS} (a file added)" for name in added]
    if problems:
        raise _Failed(_listed(problems))
    return f"{SUMS}: {len(sums)} files, each there with its SHA-256, no other file"


def _check_manifest(layout: _Layout, track: Track) -> str:
    places = track.places
    data = read_published(layout.root / places.manifest_file)
    stated = read_published(layout.root / places.manifest / "manifest.sha256").decode("ascii", "replace").strip()
    record = read_record(layout.root, places)
    problems = []
    if record is not None and record.manifest_hash != sha256_hex(data):
        problems.append(f"{MANIFEST}/manifest.json: its SHA-256 is {sha256_hex(data)}, the freeze record "
                        f"{FREEZE}/record.json anchors {record.manifest_hash}")
    if stated != sha256_hex(data):
        problems.append(f"{MANIFEST}/manifest.sha256: says {cut(stated)}, {MANIFEST}/manifest.json hashes to "
                        f"{sha256_hex(data)}")
    if problems:
        raise _Failed(problems)
    manifest = Manifest.load(layout.root, places.manifest)
    problems = [layout.shown(p) for p in manifest.check_tree(layout.root / places.build)]
    if problems:
        raise _Failed(_listed(problems))
    return (f"{MANIFEST}/manifest.json: hash {manifest.hash}, the one the freeze record anchors; "
            f"{len(manifest.entries)} served bodies under {CORPUS}/, each its entry's bytes")


def _check_record(layout: _Layout, track: Track) -> str:
    places = track.places
    record = read_record(layout.root, places)
    if record is None:
        raise _Failed([f"{FREEZE}/record.json: missing"])
    salt = read_salt(layout.salt)
    key = read_published(layout.root / places.key_file)
    problems = []
    if commitment(salt, key) != record.key_commitment:
        problems.append(f"{SEASON}/cle.json, {SALT}: sha256(sel ‖ clé) = {commitment(salt, key)}, the freeze "
                        f"record {FREEZE}/record.json commits to {record.key_commitment}")
    tasks = sha256_hex(read_published(layout.root / places.tasks_file))
    if tasks != record.tasks_sha256:
        problems.append(f"{SEASON}/taches.json: SHA-256 {tasks}, the freeze record anchors {record.tasks_sha256}")
    if not problems:  # every other field, as corpus freeze writes it for these files
        problems = [layout.shown(p) for p in check_freeze(layout.root, layout.salt, places)]
    if problems:
        raise _Failed(_listed(problems))
    return (f"{FREEZE}/record.json: sha256(sel ‖ clé) is its key commitment {record.key_commitment[:16]}…; the "
            "statements, the barème section and the manifest hash as it anchors them")


def _check_anchor(layout: _Layout, track: Track, pins: Pins) -> str:
    window = Window(*Authority(pins.tsa_ca, pins.tsa_cert).pems()) if pins.tsa_ca else None
    anchor, problems = check_anchor(layout.root, track.places, None, None, pins.anchor_key(), pins.fingerprint,
                                    window)
    if anchor is None:
        raise _Failed([f"{FREEZE}/anchor.json: missing"])
    if problems:
        raise _Failed(_listed([f"{FREEZE}/anchor.json: {layout.shown(p)}" for p in problems]))
    return (f"{FREEZE}/anchor.json: {anchor.proof_id} is the proof of the call that served the record, verified "
            f"against the pinned key and authority ({anchor.v3_words() or 'chain and signature verified'})")


def _check_chain(layout: _Layout, track: Track, pins: Pins) -> str:
    """The freeze chain (spec §8): every replaced record kept with its anchor and salt, each link anchored
    against the pinned key and authority, named by the next, in time order, before the opening; every
    commitment recomputed from its salt."""
    places = track.places
    links = chain_of(layout.root, places)
    named = links[0].record.remplace if links else None
    if named is not None:  # the first record kept names one before it: a link was removed
        return _failed([f"{FREEZE}/{REPLACED}/1/record.json: missing: {FREEZE}/record.json replaces "
                        f"{named.proof_id} (SHA-256 {named.sha256[:16]}…), whose record, anchor and salt the "
                        "publication must hold: a link of the chain was removed"])
    if len(links) < 2:
        return f"{FREEZE}/: one freeze, nothing replaced before the opening"
    salts = layout.replaced_salts(len(links) - 1)
    missing = [f"{replaced_salt(n)}: missing: every salt of the chain is published at the close"
               for n, salt in enumerate(salts, 1) if not salt.is_file()]
    if missing:
        return _failed(missing)
    window = Window(*Authority(pins.tsa_ca, pins.tsa_cert).pems()) if pins.tsa_ca else None
    problems = chain_problems(layout.root, places, salts, pins.anchor_key(), pins.fingerprint, window,
                              pins.season_opening)
    if problems:
        return _failed(_listed([layout.shown(p) for p in problems]))
    opening = instant_text(pins.season_opening) if pins.season_opening else "?"
    ids = ", ".join(str(link.record.remplace.proof_id) for link in links[1:] if link.record.remplace)
    return (f"{FREEZE}/{REPLACED}/: the chain of {len(links)} records: each replaced record ({ids}) anchored "
            "against the pinned key and authority, named by the next with its SHA-256 and motive, anchored in "
            f"time order and before the opening {opening}; each commitment sha256(sel ‖ clé) recomputed "
            "from its salt")


def _failed(lines: list[str]) -> str:
    raise _Failed(lines)


def _check_rectifications(layout: _Layout, track: Track) -> str:
    """Every figure of the index its report's, every rectification the replay of the published decisions
    (spec §9.2); an invalidated season: no ranking (spec §8)."""
    folder = layout.folder
    value = strict_json.document(read_published(folder / "index.json"))
    if isinstance(value, dict) and value.get("statut") == INVALIDEE:
        ranked = [n for n in folder_files(folder) if n.startswith(("rapports/", "scores/", f"{RECORDS}/"))]
        if ranked or not (folder / INVALIDATION).is_file():
            return _failed([f"index.json: the season is invalidated, yet the publication holds "
                            f"{ranked[0] if ranked else 'no ' + INVALIDATION}: an invalidated season is "
                            "published with its invalidation and no ranking (spec §8)"])
        return (f"index.json: the season invalidated ({INVALIDATION}): no ranking, no report, no score "
                "(spec §8)")
    index = read_document(read_published(folder / "index.json"), "corpus-index/1", "index.json")
    paths = [line["rapport"] for table in index["tableaux"].values() for line in table["lignes"]
             if "rapport" in line]
    reports = {path: read_document(read_published(folder / path), "corpus-rapport/1", path)
               for path in paths if (folder / path).is_file()}
    contests = read_contests(layout.root, track)
    problems = rectification_problems(index, reports, by_did(contests))
    if problems:
        return _failed(_listed([layout.shown(p) for p in problems]))
    accepted = sum(c.accepted for c in contests)
    decided = sum(c.decision is not None for c in contests)
    if not contests:
        return "index.json: no contestation; every figure is its report's"
    return (f"{CONTESTATIONS}/: {len(contests)} contestation(s), {decided} decided ({accepted} accepted, "
            f"{decided - accepted} refused): every rectified figure replayed from the published decisions, "
            "beside the original; every other figure its report's")


def _pins(folder: Path, cloture: dict[str, object], given: AuditorPins) -> Pins:
    """The pins the close is judged with: the reader's key(s) and CA; the certificate and Rekor key given or
    the folder's copies; the fingerprint and the window given, each equal to the folder's, or the folder's."""
    def instant(value: object, what: str) -> datetime | None:
        return parse_instant(value, f"{CLOTURE}: /{what}") if value is not None else None
    opening, close = instant(cloture.get("ouverture"), "ouverture"), instant(cloture.get("cloture"), "cloture")
    window = (("ouverture", opening, given.opening), ("cloture", close, given.close))
    problems = [f"{CLOTURE}: /{what}: {instant_text(mine) if mine else None}, the reader pins "
                f"{instant_text(pinned)}"
                for what, mine, pinned in window if pinned is not None and mine != pinned]
    trust_layer = cloture.get("trust_layer")
    stated = trust_layer.get("empreinte_cle_challenge") if isinstance(trust_layer, dict) else None
    if given.fingerprint is not None and stated != given.fingerprint:
        problems.append(f"{CLOTURE}: /trust_layer/empreinte_cle_challenge: {stated}, the reader pins "
                        f"{given.fingerprint}")
    if problems:
        raise _Failed(problems)
    def copy(name: str) -> Path | None:
        path = folder / PINNED / name
        return path if path.is_file() else None
    cert = given.tsa_cert or copy("tsa-cert.pem")
    return Pins(given.keys, given.fingerprint or (stated if isinstance(stated, str) else None), given.tsa_ca, cert,
                given.rekor_key or copy("rekor-key.pem"), close, opening)


def _check_records(listing: _Listing) -> str:
    """Each record under ``soumissions/`` is the one its name records (the start of its bytes' SHA-256)."""
    records = sorted(name for name in listing.present if name.startswith(f"{RECORDS}/"))
    problems = []
    for name in records:
        stated = name.rsplit("_", 1)[-1].removesuffix(".json")
        digest = listing.digest(name)
        if not digest.startswith(stated) or len(stated) != 8:
            problems.append(f"{name}: its bytes' SHA-256 starts {digest[:8]}, its name records {cut(stated)}: the "
                            "record is not the one the season service handed over")
    if problems:
        raise _Failed(_listed(problems))
    return f"{RECORDS}/: {len(records)} records, each the one its name records"


def _check_proofs(layout: _Layout, track: Track, pins: Pins, notes: list[str],
                  jobs: int) -> tuple[str, Proofs | None]:
    folder = layout.folder / PROOFS
    if not folder.is_dir():
        return f"{PROOFS}/: no proof cited", None
    verdicts = judged_folder(folder, pins, layout.root, track.places, jobs)  # once: the rebuild scores with them
    held = failed = pending = 0
    for proof_id, verdict in sorted(verdicts.items()):
        if verdict.get("en_attente") is True:
            pending += 1
        elif verdict.get("valide") is True and verdict.get("identite_liee") is True:
            held += 1
        else:
            failed += 1
            why = verdict.get("motif_1") or verdict.get("motif_2") or "fails"
            notes.append(f"{PROOFS}/{proof_id}.json: conditions 1 and 2 not met: {cut(why, 300)}")
    return (f"{PROOFS}/: {len(verdicts)} public views judged against the pinned key and authority within the "
            f"season: {held} meet conditions 1 and 2, {failed} fail, {pending} pending (the reports must say the "
            "same)"), verdicts


def _check_rebuilt(layout: _Layout, track: Track, pins: Pins, cloture: dict[str, object],
                   proofs: Proofs | None, now: datetime, jobs: int, listing: _Listing) -> str:
    url = cloture.get("trust_layer")
    url = url.get("url") if isinstance(url, dict) else None
    if not isinstance(url, str):
        raise _Failed([f"{CLOTURE}: /trust_layer/url: missing"])
    places = track.places
    salts = layout.replaced_salts(max(len(chain_of(layout.root, places)) - 1, 0))
    options = replace(score_options(layout.root, places, pins, proofs, layout.salt, None), replaced_salts=salts)
    request = IndexRequest(root=layout.root, track=track, submissions=layout.folder / RECORDS,
                           registrations=layout.folder / REGISTRATIONS, close=pins.season_close, draft=False,
                           now=now, trust_layer_url=url, score_options=options, opening=pins.season_opening,
                           jobs=jobs)
    folder = layout.folder / PROOFS
    present = listing.present
    differences: list[tuple[str, str]] = []

    def compare(name: str, data: bytes) -> None:  # each file computed again, as soon as it is
        path = present.get(name)
        if path is None:
            differences.append((name, f"{name}: missing (computed again: {len(data)} bytes)"))
        elif listing.digest(name) != sha256_hex(data):
            differences.append((name, difference_text(name, read_published(path), data)))

    computed = write_close(CloseRequest(request, layout.salt, folder if folder.is_dir() else None, pins, salts),
                           layout.rebuilt, compare)
    last = (".html", CLOTURE, "LISEZMOI.html", SUMS)  # what follows from the rest: said after it
    problems = [text for name, text in sorted(differences) if name not in present]
    problems += [f"{name}: not part of the publication computed again"
                 for name in sorted(set(present) - set(computed))]
    problems += [text for _, text in sorted(((n, t) for n, t in differences if n in present),
                                            key=lambda item: (item[0].endswith(last), item[0]))]
    if problems:
        raise _Failed(_listed(problems))
    reports = sum(n.startswith("rapports/") and n.endswith(".json") for n in computed)
    return (f"the close computed again: {reports} participant(s) scored again, index.json, index.html, the "
            f"reports, the scores, {CLOTURE} and {SUMS}: byte for byte the published files")


@contextmanager
def _laid_out(folder: Path, piste: str) -> Iterator[_Layout]:
    with tempfile.TemporaryDirectory(prefix="verify-publication-") as work:
        layout = _Layout(folder, Path(work), piste)
        layout.lay_out()
        yield layout


_RECOVERABLE = (GeneratorError, OSError, ValueError, KeyError, TypeError, UnicodeError, RecursionError)


def _run(checks: list[Check], step: Callable[[], str], shown: Callable[[str], str] = lambda t: t) -> bool:
    """One check: its line, or each of its failures; a problem of reading is a failure, never a traceback."""
    try:
        checks.append(Check(True, step()))
        return True
    except _Failed as failed:
        checks += [Check(False, shown(line)) for line in failed.lines]
    except _RECOVERABLE as exc:  # a file of the folder that cannot be read as what it should be
        checks.append(Check(False, shown(str(exc) or type(exc).__name__)))
    return False


def verify_publication(folder: Path, given: AuditorPins, now: datetime,
                       jobs: int = 1) -> tuple[list[Check], list[str]]:
    """Every check of the folder, and the notes (proofs that fail, as the reports must say); the proofs judged
    and the participants scored again on ``jobs`` processes (the same checks and lines whatever their number)."""
    checks: list[Check] = []
    notes: list[str] = []
    if not folder.is_dir():
        return [Check(False, f"{shown_path(folder)}: not a folder (give the folder of one track's "
                              "publication)")], []
    listing = _Listing(folder_files(folder))
    _run(checks, lambda: _check_list(folder, listing, jobs))
    cloture: dict[str, object] = {}
    if not _run(checks, lambda: _read_cloture(folder, cloture)):
        return checks, notes
    piste = str(cloture.get("piste"))
    with _laid_out(folder, piste) as layout:
        track_box: list[Track] = []
        if not _run(checks, lambda: _track(layout, track_box), layout.shown):
            return checks, notes
        track = track_box[0]
        _run(checks, lambda: _check_manifest(layout, track), layout.shown)
        _run(checks, lambda: _check_record(layout, track), layout.shown)
        _run(checks, lambda: _check_records(listing), layout.shown)
        pins_box: list[Pins] = []
        if not _run(checks, lambda: _judged_pins(folder, cloture, given, pins_box), layout.shown):
            return checks, notes
        pins = pins_box[0]
        _run(checks, lambda: _check_anchor(layout, track, pins), layout.shown)
        _run(checks, lambda: _check_chain(layout, track, pins), layout.shown)
        _run(checks, lambda: _check_rectifications(layout, track), layout.shown)
        proofs_box: list[Proofs | None] = []
        if _run(checks, lambda: _proofs(layout, track, pins, notes, proofs_box, jobs), layout.shown):
            _run(checks, lambda: _check_rebuilt(layout, track, pins, cloture, proofs_box[0], now, jobs, listing),
                 layout.shown)
    return checks, notes


def _read_cloture(folder: Path, out: dict[str, object]) -> str:
    out.update(read_cloture(read_published(folder / CLOTURE), CLOTURE))
    piste = out.get("piste")
    if not isinstance(piste, str) or not _PISTE.fullmatch(piste):
        raise PublicationError(f"{CLOTURE}: /piste: expected a track's name, got {cut(piste)}")
    return (f"{CLOTURE}: track {piste}, season {out.get('saison')}, from {out.get('ouverture')} to "
            f"{out.get('cloture')}")


def _track(layout: _Layout, out: list[Track]) -> str:
    track = load_track(layout.root / "tracks" / layout.piste / "track.yaml")
    if not track.code.startswith(OWN_CODE) or track.code.endswith(".py"):  # never code the folder brings
        raise PublicationError(f"{TRACK}/track.yaml: code: {shown_path(track.code[:200])} is not a track module "
                               f"of this package ({OWN_CODE}<piste>.logic): a publication is verified with the "
                               "verifier's own code, never with code it carries")
    if track.piste != layout.piste:
        raise PublicationError(f"{TRACK}/track.yaml: piste {track.piste}, the publication's is {layout.piste}")
    out.append(track)
    return f"{TRACK}/track.yaml: the track {track.piste} ({track.title}) read from the folder"


def _judged_pins(folder: Path, cloture: dict[str, object], given: AuditorPins, out: list[Pins]) -> str:
    pins = _pins(folder, cloture, given)
    Authority(pins.tsa_ca or given.tsa_ca, pins.tsa_cert).pems()  # a CA that is no PEM: one line, now
    out.append(pins)
    cert = "none" if pins.tsa_cert is None else "pinned" if given.tsa_cert else "the folder's copy"
    opening = instant_text(pins.season_opening) if pins.season_opening else "?"
    close = instant_text(pins.season_close) if pins.season_close else "?"
    return (f"pins: {len(pins.trust_layer_keys)} Trust Layer key(s) and the authority's CA given by the reader "
            f"(its certificate: {cert}); window {opening} to {close}")


def _proofs(layout: _Layout, track: Track, pins: Pins, notes: list[str], out: list[Proofs | None],
            jobs: int) -> str:
    line, loaded = _check_proofs(layout, track, pins, notes, jobs)
    out.append(loaded)
    return line
