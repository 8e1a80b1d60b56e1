"""Releases: a verified build installed as ``releases/<release hash>/``, switched in atomically.

A release folder holds every track's build and manifest exactly as proven (:func:`prove_release`), named by
the release hash, one hash over every track's manifest hash (:func:`release_hash`, docs/operating.md), so
that two releases can never be confused, a change to any track is a new release, and an installed one is
never rewritten.
``releases/current`` is a symbolic link, replaced with one ``rename`` (atomic on POSIX): a reader sees
the old target or the new one, never a mix. ``releases/previous`` keeps the one before, for
``--rollback``. Every ``--prefix`` (a rendered replica or frontal) is rendered for the new release and
checked by ``nginx -t`` *before* the switch, so that a prefix that cannot take it stops the command with
nothing changed; after the switch each is written and reloaded, and a failure there puts the links and
the prefixes already changed back. The command returns once every nginx answers with the new
configuration. Old workers finish their requests from the old folder, which stays on disk: a request
gets the old release's bytes or the new one's, never a mix.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from secrets import token_hex

from generator.base.atomic_file import write_new
from generator.base.bounded_read import PUBLISHED_LIMIT, kind_of, read_bounded
from generator.base.errors import CorpusError, DeployError, GeneratorError, os_error_text
from generator.contract.build_proof import prove_release
from generator.contract.freeze import FreezeRecord
from generator.contract.hashing import sha256_hex
from generator.contract.manifest import Manifest, release_hash
from generator.contract.places import Places
from generator.serving.instances.nginx_process import reload_and_wait, running_pid
from generator.serving.instances.nginx_write import render_checked, write
from generator.serving.rendering.nginx_render import Rendered
from generator.serving.rendering.nginx_settings import Settings, SettingsFile, read_settings
from generator.tracks.loader import TRACKS_DIR, load_tracks

CURRENT = "current"
PREVIOUS = "previous"
FILE_MODE, DIR_MODE = 0o644, 0o755  # a release is read by nginx's workers, whatever the installer's umask


def folder_for(path: Path, role: str) -> Path:
    """``path`` as a folder, created if missing; a file, a dangling link, a FIFO or a device there is refused
    by name, with ``role`` saying what the option names (``--out names the folder ...``)."""
    if (path.exists() or path.is_symlink()) and not path.is_dir():
        mode = path.stat().st_mode if path.exists() else None
        what = "a dangling symbolic link" if mode is None else "a file" if stat.S_ISREG(mode) else kind_of(mode)
        raise DeployError(f"{path}: {what}, not a folder: {role}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DeployError(f"{exc.filename or path}: cannot create the folder: {role}: {exc.strerror}") from None
    return path


def releases_folder(path: Path) -> Path:
    """``--releases``: the folder that holds the releases (:func:`folder_for`)."""
    return folder_for(path, "--releases names the folder that holds the releases")


@dataclass(frozen=True)
class Proven:
    """One track of a release: where its files are, and its manifest as proven against its build."""

    places: Places
    manifest: Manifest


def prove_tracks(root: Path, expect: str | None = None, by: str = "--expect-manifest-hash") -> list[Proven]:
    """Every track of ``root`` (its ``tracks/``), each build proven against its manifest; ``expect`` is the
    release hash (or the first track's manifest hash), else each track's freeze record when it has one."""
    every = track_places(root)
    return [Proven(places, manifest) for places, manifest in zip(every, prove_release(root, expect, every, by),
                                                                 strict=True)]


def release_name(proven: list[Proven]) -> str:
    """The release hash over every proven track's manifest hash: the name of its folder and artifact."""
    return release_hash({p.places.piste: p.manifest.hash for p in proven})


def track_places(root: Path) -> list[Places]:
    """Where each track of ``root`` (its ``tracks/``) keeps its files; a track file that does not load is one
    line naming it (the first problem, and how many more)."""
    try:
        return [track.places for track in load_tracks(root)]
    except CorpusError as exc:
        more = f" (and {len(exc.problems) - 1} more)" if len(exc.problems) > 1 else ""
        raise DeployError(f"{root}: {exc.problems[0]}{more}") from None


def carried(proven: list[Proven], root: Path) -> list[str]:
    """The checkout-relative folders and files a release holds: every track's build/ and manifest/, its
    freeze record when ``root`` has one, and ``tracks/`` (the tracks say which paths they serve)."""
    names = [name for p in proven for name in (p.places.build, p.places.manifest)] + [TRACKS_DIR]
    names += [p.places.record.as_posix() for p in proven if (root / p.places.record).is_file()]
    return list(dict.fromkeys(names))


def copy_release(root: Path, dest: Path, names: list[str]) -> None:
    """Copy ``names`` from ``root`` into the new folder ``dest``: folders and regular files only, each file
    read bounded (a FIFO or a device in a build is refused by name, never waited on), modes 0755/0644
    whatever the umask, so that nginx's workers can read the release."""
    def copy(source: Path, target: Path) -> None:
        info = source.lstat()
        if stat.S_ISDIR(info.st_mode):
            target.mkdir()
            os.chmod(target, DIR_MODE)
            for child in sorted(os.listdir(source)):
                copy(source / child, target / child)
        elif stat.S_ISREG(info.st_mode):
            write_new(target, read_bounded(source, PUBLISHED_LIMIT, follow_symlinks=False), FILE_MODE)
        else:
            raise DeployError(f"{source}: {kind_of(info.st_mode)}, not a file or folder: a release holds only "
                              "those; remove it and release again")

    dest.mkdir()
    for name in names:
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        copy(root / name, dest / name)
    for folder in (dest, *(p for p in dest.rglob("*") if p.is_dir())):
        os.chmod(folder, DIR_MODE)


def check_same(folder: Path, proven: list[Proven], found_there: list[Proven] | None = None) -> None:
    """``folder`` holds these very tracks, each build proven against the same manifest: what a release folder
    of that name must be before it is used (another track's build under the same name is refused).
    ``found_there``: ``folder``'s tracks as just proven, not to prove them twice."""
    found = {p.places.piste: p.manifest.hash for p in found_there or prove_tracks(folder)}
    wanted = {p.places.piste: p.manifest.hash for p in proven}
    for piste in sorted(found.keys() | wanted.keys()):
        if found.get(piste) != wanted.get(piste):
            raise DeployError(f"{folder}: track {piste} is at manifest {found.get(piste) or 'absent'} there, not "
                              f"{wanted.get(piste) or 'absent'}: a release folder is never rewritten; move that "
                              "folder away (unless current or previous name it) and install again")


def release_target(releases: Path, name: str) -> Path:
    """``releases/<name>``: absent, or a release folder; anything else there is refused by name."""
    target = releases / name
    if (target.exists() or target.is_symlink()) and (target.is_symlink() or not target.is_dir()):
        kind = "a symbolic link" if target.is_symlink() else kind_of(target.stat().st_mode)
        raise DeployError(f"{target}: {kind}, not a release folder: corpus release writes only folders there; "
                          "move it away and install again")
    return target


def staging_folder(releases: Path, name: str) -> Path:
    """A private name beside the releases, for a copy that becomes ``releases/<name>`` in one rename."""
    return releases / f".install-{name}-{os.getpid()}-{token_hex(4)}"


@contextmanager
def staged(releases: Path, target: Path) -> Iterator[Path]:
    """A staging folder for ``target`` (``releases`` made first), removed whatever happens; an OS error
    while filling or settling it is one line naming the file."""
    releases_folder(releases)
    staging = staging_folder(releases, target.name)
    try:
        yield staging
    except OSError as exc:
        raise DeployError(f"{exc.filename or target}: cannot install the release: {exc.strerror}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def settle(staging: Path, target: Path, proven: list[Proven]) -> None:
    """Rename the proven ``staging`` copy to ``target``. Two installs of the same build at once both copy; the
    first rename wins and the second finds the target in place: it checks it and uses it."""
    os.chmod(staging, DIR_MODE)
    try:
        staging.rename(target)
    except OSError as exc:
        if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY) or not target.is_dir():
            raise
        check_same(target, proven)  # installed meanwhile by another run: the same bytes, proven


def reuse_release(source: Path, target: Path, proven: list[Proven]) -> Path:
    """The release folder ``target`` already there, used for ``source``'s ``proven`` tracks (a checkout or an
    unpacked artifact): the same builds, still intact, the same track definitions, and ``source``'s freeze
    records carried into it."""
    refuse_old_layout(target)
    check_same(target, proven)
    check_same_definitions(source, target)
    carry_records(source, target, proven)
    return target


def install(root: Path, releases: Path, expect: str | None = None) -> Path:
    """Copy ``root``'s proven build (every track's) into ``releases/<release hash>/``; a folder already there
    is used if it holds the same tracks, still intact."""
    proven = prove_tracks(root, expect)
    check_records(root, proven)
    target = release_target(releases, release_name(proven))
    if target.is_dir():
        return reuse_release(root, target, proven)
    with staged(releases, target) as staging:
        copy_release(root, staging, carried(proven, root))
        check_same(staging, proven)  # the copy, not only the source
        settle(staging, target, proven)
    return target


def check_record(data: bytes, source: str, proven: Proven, root: Path | None = None) -> None:
    """A freeze record that may travel with ``proven``'s track: what ``corpus freeze`` writes for this very
    build, byte for byte (strict JSON, :class:`FreezeRecord`), anchoring its manifest hash, its corpus and
    the published barème section, and (``root`` holding the season) the SHA-256 of its task statements. Its
    key commitment is checked as it can be without the salt: the record is the one written for it, and a
    release that holds one never takes another (:func:`carry_records`)."""
    places, manifest = proven.places, proven.manifest
    record = FreezeRecord.from_bytes(data, source)  # a corrupt record is one line naming it
    wrong = [f"manifest_hash {record.manifest_hash}, not the track's {manifest.hash}"
             if record.manifest_hash != manifest.hash else "",
             f"corpus {record.corpus!r}, not the manifest's {manifest.corpus!r}"
             if record.corpus != manifest.corpus else "",
             f"bareme.sha256 {record.bareme_sha256}, not the published {places.bareme_sha256}"
             if record.bareme_sha256 != places.bareme_sha256 else ""]
    tasks = root / places.tasks_file if root is not None else None
    if tasks is not None and tasks.is_file():
        held = sha256_hex(read_bounded(tasks, PUBLISHED_LIMIT))
        wrong.append(f"taches.sha256 {record.tasks_sha256}, not {places.tasks_file}'s {held}"
                     if held != record.tasks_sha256 else "")
    if not any(wrong) and replace(record, places=places).to_bytes() != data:
        wrong.append("not byte for byte what corpus freeze writes for this track")
    problems = [w for w in wrong if w]
    if problems:
        raise DeployError(f"{source}: the freeze record of the track {places.piste} says {'; '.join(problems)}: "
                          "it is not this release's record; restore the track's record from git (it is committed "
                          "and anchored), never rewrite it by hand")


def check_records(root: Path, proven: list[Proven]) -> None:
    """Every track's freeze record in ``root`` checked (:func:`check_record`): a release is packed, copied or
    installed only with records that hold for its tracks, whatever ``--expect-manifest-hash`` says."""
    for one in proven:
        path = root / one.places.record
        if path.exists() or path.is_symlink():
            check_record(_published_bytes(path), str(path), one, root)


def _published_bytes(path: Path) -> bytes:
    """A record's (or a track file's) bytes, bounded, never through a link; an OSError is one line naming it."""
    try:
        return read_bounded(path, PUBLISHED_LIMIT, follow_symlinks=False)
    except OSError as exc:
        raise DeployError(os_error_text(exc)) from None


def carry_records(root: Path, release: Path, proven: list[Proven]) -> None:
    """Each track's freeze record, when ``root`` has one, goes with the release: the vhost serves it for its
    anchoring (spec §8.3). A release installed before the freeze gets it added once, and only a record that
    holds against that release's own trees (:func:`check_record` on its manifest); a release that already
    holds a record never gets another (refused by name), and a record is never replaced."""
    for one in proven:
        source = root / one.places.record
        if not (source.exists() or source.is_symlink()):
            continue
        data = _published_bytes(source)
        target = release / one.places.record
        if target.exists() or target.is_symlink():
            if _published_bytes(target) == data:
                continue
            raise DeployError(f"{target}: the release already holds a freeze record of the track "
                              f"{one.places.piste}, and {source} is another: a release folder is never rewritten, "
                              "its record included; restore the track's record from git (it is anchored)")
        held = Proven(one.places, Manifest.load(release, one.places.manifest))
        check_record(data, str(source), held)
        _add_new(target, data)


def _add_new(target: Path, data: bytes) -> None:
    """Create ``target`` with ``data`` all at once, never over a file: written aside, then hard-linked to its
    name (``link`` fails on any existing name, a file that appeared meanwhile included)."""
    if not target.parent.is_dir():
        target.parent.mkdir(parents=True)
        os.chmod(target.parent, DIR_MODE)
    temporary = target.with_name(f".{target.name}.{token_hex(6)}.tmp")
    write_new(temporary, data, FILE_MODE)
    try:
        os.link(temporary, target)
    except FileExistsError:
        raise DeployError(f"{target}: appeared while the record was being added: a release's record is never "
                          "replaced; install again") from None
    finally:
        temporary.unlink(missing_ok=True)


def refuse_old_layout(release: Path) -> None:
    """A release folder of the layout before ``<kind>/<piste>`` (a manifest at ``manifest/manifest.json``, a
    track's trees under ``generique/``) bears the same name as today's release of the same bytes: it is
    never used as one (docs/operating.md, "The checkout before and after the move")."""
    for old in (release / "manifest" / "manifest.json", release / "generique"):
        if os.path.lexists(old):
            raise DeployError(f"{release}: a release of the layout before <kind>/<piste> "
                              f"({old.relative_to(release)} is there): never used as a release of today's layout; "
                              "move that folder away (unless current or previous name it) and release again")


def check_same_definitions(root: Path, release: Path) -> None:
    """``root``'s track definitions (``tracks/``) are the installed release's, byte for byte: they say what the
    release serves and where, so a release folder used again is never one with other definitions."""
    def files(base: Path) -> dict[str, Path]:
        return {p.relative_to(base).as_posix(): p for p in (base / TRACKS_DIR).rglob("*") if not p.is_dir()}

    mine, theirs = files(root), files(release)
    for rel in sorted(mine.keys() | theirs.keys()):
        same = rel in mine and rel in theirs and _published_bytes(mine[rel]) == _published_bytes(theirs[rel])
        if not same:
            held = "differs from the one given" if rel in mine and rel in theirs else \
                "is not in the one given" if rel in theirs else "is missing, the one given has it"
            raise DeployError(f"{release / rel}: this track definition of the installed release {held}: a release "
                              "folder is never rewritten, its track definitions included; give the release its "
                              "own definitions, or move that folder away (unless current or previous name it) and "
                              "install again")


def link(releases: Path, name: str) -> Path | None:
    """The release ``releases/name`` points at (``None``: no link). Anything but a link there is refused by
    name: replacing it would lose what an operator put there, following it would serve it."""
    path = releases / name
    if path.is_symlink():
        return releases / os.readlink(path)
    if path.exists():
        raise DeployError(f"{path}: {kind_of(path.stat().st_mode)}, not a symbolic link: corpus release keeps "
                          f"{name} as a link to a release folder; move it away, then release again")
    return None


def _point(releases: Path, name: str, target: Path | None) -> None:
    """Make ``releases/name`` point at ``target`` in one rename (relative link: the folder can move);
    ``None`` removes the link (what stood before a first release)."""
    if target is None:
        (releases / name).unlink(missing_ok=True)
        return
    tmp = releases / f".{name}.{os.getpid()}.{token_hex(4)}.tmp"
    os.symlink(target.name, tmp)
    try:
        os.replace(tmp, releases / name)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def switch(releases: Path, target: Path) -> Path | None:
    """``current`` -> target, ``previous`` -> the old current; return the old current."""
    old = link(releases, CURRENT)
    if old is not None and old.is_dir() and old.name != target.name:  # a dangling current is no release
        _point(releases, PREVIOUS, old)
    _point(releases, CURRENT, target)
    return old


def rollback_target(releases: Path) -> tuple[Path, Path]:
    """The (previous, current) releases that ``--rollback`` swaps, the previous one proven intact."""
    old, back = link(releases, CURRENT), link(releases, PREVIOUS)
    if old is None or back is None:
        raise DeployError(f"{releases}: nothing to roll back to (no '{PREVIOUS}' release)")
    if not back.is_dir():
        raise DeployError(f"{releases / PREVIOUS}: points at {back.name}, which is not a release folder here "
                          "(removed?): nothing to roll back to; install the release wanted instead")
    prove_tracks(back, back.name, "the release folder's name")
    return back, old


@dataclass(frozen=True)
class Prepared:
    """One prefix rendered for the new release and checked by ``nginx -t``, not yet written."""

    prefix: Path
    before: SettingsFile  # its settings.json as it was: what a roll back renders again
    settings: Settings
    rendered: Rendered


def _settings_for(saved: SettingsFile, target: Path) -> Settings:
    expect = target.name if saved.settings.role == "replica" else None
    return replace(saved.settings, root=target, expect_manifest_hash=expect).resolved()


def prepare(prefixes: list[Path], target: Path) -> list[Prepared]:
    """Read, render for ``target`` and ``nginx -t`` every prefix, and check that its nginx runs.

    All of it happens before the switch: a prefix that cannot take the release stops the command with
    ``current`` untouched. (A rendered config points at the release folder itself, not at the link.)
    """
    prepared = []
    for prefix in prefixes:
        try:
            saved = read_settings(prefix)
            settings = _settings_for(saved, target)
            rendered = render_checked(settings, None)
        except GeneratorError as exc:
            raise DeployError(f"--prefix {prefix}: {exc}") from None
        if running_pid(settings.prefix) is None:
            raise DeployError(f"--prefix {prefix}: no nginx running from it (no live pid in logs/nginx.pid): "
                              "start it, or leave it out")
        prepared.append(Prepared(prefix, saved, settings, rendered))
    return prepared


def apply(prepared: list[Prepared], touched: list[Prepared]) -> list[int]:
    """Write and reload each prepared prefix in order; return the pids. ``touched`` collects each prefix
    as its files start to change, so that a caller can undo them after a failure."""
    pids: list[int] = []
    for item in prepared:
        touched.append(item)
        write(item.settings, item.rendered)
        pids.append(reload_and_wait(item.settings))
    return pids


def _restore(touched: list[Prepared]) -> list[str]:
    """Render and reload each touched prefix with its settings from before; return what could not be."""
    failed = []
    for item in reversed(touched):
        try:
            settings = item.before.settings.resolved()
            write(settings, render_checked(settings, None))
            reload_and_wait(settings)
        except (GeneratorError, OSError) as exc:
            failed.append(f"{item.prefix}: {exc}")
    return failed


@dataclass(frozen=True)
class Reloaded:
    """What a release did to the prefixes: the reloaded masters, and what their renders warned of."""

    pids: list[int]
    warnings: list[str]  # a TLS certificate of a prefix ending soon, each naming its prefix


def release(releases: Path, target: Path, prefixes: list[Path], *, rollback: bool = False) -> Reloaded:
    """Prepare every prefix, point ``current`` at ``target``, then write and reload each prefix.

    ``previous`` becomes the release that was current (when it differs). A failure after the switch puts
    ``current`` and ``previous`` back, renders the prefixes already touched with their previous settings
    and reloads them, then raises saying so. Returns the reloaded masters' pids and each prefix's warnings
    (``render-nginx`` says the same ones).
    """
    prepared = prepare(prefixes, target)
    before = link(releases, CURRENT), link(releases, PREVIOUS)
    touched: list[Prepared] = []
    try:
        if rollback:
            _point(releases, CURRENT, target)
            _point(releases, PREVIOUS, before[0])
        else:
            switch(releases, target)
        pids = apply(prepared, touched)
    except BaseException as exc:  # Ctrl-C too: never leave current on a release the prefixes do not serve
        _point(releases, CURRENT, before[0])
        _point(releases, PREVIOUS, before[1])
        unrestored = _restore(touched)
        if not isinstance(exc, (GeneratorError, OSError)):
            raise
        reason = str(exc) if isinstance(exc, GeneratorError) else os_error_text(exc)
        note = "; could not restore " + "; ".join(unrestored) if unrestored else ""
        raise DeployError(f"{reason}\nrolled back: {CURRENT} is {before[0].name if before[0] else 'absent'} "
                          f"again, and the {len(touched)} prefix(es) already changed were rendered and reloaded "
                          f"with their previous settings{note}") from None
    return Reloaded(pids, [f"--prefix {item.prefix}: {warning}" for item in prepared
                           for warning in item.rendered.warnings])
