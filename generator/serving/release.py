"""Releases: a verified build installed as ``releases/<manifest hash>/``, switched in atomically.

A release folder holds ``build/`` and ``manifest/`` exactly as proven (:func:`prove_build`), named by the
manifest hash so that two releases can never be confused and an installed one is never rewritten.
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
from dataclasses import dataclass, replace
from pathlib import Path
from secrets import token_hex

from generator.base.atomic_file import write_atomic
from generator.base.errors import GeneratorError, os_error_text
from generator.compiler.track_file import TRACKS_DIR, load_tracks, track_named
from generator.contract.build_proof import prove_build
from generator.contract.places import Places
from generator.serving.nginx_process import reload_and_wait, running_pid
from generator.serving.nginx_render import Rendered, render_checked, write
from generator.serving.nginx_settings import RenderError, Settings, SettingsFile, read_settings

CURRENT = "current"
PREVIOUS = "previous"


def releases_folder(path: Path) -> Path:
    """``path`` as a folder of releases, created if missing; anything else there is refused by name."""
    if (path.exists() or path.is_symlink()) and not path.is_dir():
        raise RenderError(f"{path}: not a folder (--releases names the folder that holds the releases)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RenderError(f"{exc.filename or path}: cannot create the releases folder: {exc.strerror}") from None
    return path


def install(root: Path, releases: Path, expect: str | None = None) -> Path:
    """Copy ``root``'s proven build into ``releases/<hash>/`` (kept if already there and still intact).

    Two installs of the same build at once both copy; the first rename wins and the second finds the
    target in place: it proves it and uses it, as if it had been installed before.
    """
    tracks = load_tracks(root)
    places = tracks[0].places  # the first track names the release; every track's build goes with it
    digest = prove_build(root, expect, places).hash
    others = [track.places for track in tracks[1:]]
    for other in others:
        prove_build(root, None, other)

    def proven(folder: Path) -> None:
        prove_build(folder, digest, places)
        for other in others:
            prove_build(folder, None, other)

    target = releases / digest
    if target.is_dir():
        proven(target)
        carry_records(root, target, [places, *others])
        return target
    releases_folder(releases)
    staging = releases / f".install-{digest}-{os.getpid()}-{token_hex(4)}"
    try:
        names = [name for p in (places, *others) for name in (p.build, p.manifest)]
        for name in (*names, TRACKS_DIR):  # the tracks say which paths they serve
            shutil.copytree(root / name, staging / name)
        proven(staging)  # the copy, not only the source
        carry_records(root, staging, [places, *others])
        os.chmod(staging, 0o755)
        try:
            staging.rename(target)
        except OSError as exc:
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY) or not target.is_dir():
                raise
            proven(target)  # installed meanwhile by another run: the same bytes, proven
    except OSError as exc:
        raise RenderError(f"{exc.filename or target}: cannot install the release: {exc.strerror}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def carry_records(root: Path, release: Path, every: list[Places]) -> None:
    """Each track's freeze record, when it exists, goes with the release: the vhost serves it for its
    anchoring (spec §8.3). A release installed before the freeze gets it added, never changed otherwise."""
    for places in every:
        source = root / places.record
        if not source.is_file():
            continue
        data = source.read_bytes()
        target = release / places.record
        if target.is_file() and target.read_bytes() == data:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, data, mode=0o644)


def link(releases: Path, name: str) -> Path | None:
    path = releases / name
    return releases / os.readlink(path) if path.is_symlink() else None


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
    if old is not None and old.name != target.name:
        _point(releases, PREVIOUS, old)
    _point(releases, CURRENT, target)
    return old


def rollback_target(releases: Path) -> tuple[Path, Path]:
    """The (previous, current) releases that ``--rollback`` swaps, the previous one proven intact."""
    old, back = link(releases, CURRENT), link(releases, PREVIOUS)
    if old is None or back is None or not back.is_dir():
        raise RenderError(f"{releases}: nothing to roll back to (no '{PREVIOUS}' release)")
    prove_build(back, back.name, track_named(back, None).places)
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
            raise RenderError(f"--prefix {prefix}: {exc}") from None
        if running_pid(settings.prefix) is None:
            raise RenderError(f"--prefix {prefix}: no nginx running from it (no live pid in logs/nginx.pid): "
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


def release(releases: Path, target: Path, prefixes: list[Path], *, rollback: bool = False) -> list[int]:
    """Prepare every prefix, point ``current`` at ``target``, then write and reload each prefix.

    ``previous`` becomes the release that was current (when it differs). A failure after the switch puts
    ``current`` and ``previous`` back, renders the prefixes already touched with their previous settings
    and reloads them, then raises saying so. Returns the reloaded masters' pids.
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
        return apply(prepared, touched)
    except BaseException as exc:  # Ctrl-C too: never leave current on a release the prefixes do not serve
        _point(releases, CURRENT, before[0])
        _point(releases, PREVIOUS, before[1])
        unrestored = _restore(touched)
        if not isinstance(exc, (GeneratorError, OSError)):
            raise
        reason = str(exc) if isinstance(exc, GeneratorError) else os_error_text(exc)
        note = "; could not restore " + "; ".join(unrestored) if unrestored else ""
        raise RenderError(f"{reason}\nrolled back: {CURRENT} is {before[0].name if before[0] else 'absent'} "
                          f"again, and the {len(touched)} prefix(es) already changed were rendered and reloaded "
                          f"with their previous settings{note}") from None
