"""The whole path from sources to files: load, validate, compile, serialise, write (one transaction)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from generator.base.errors import CorpusError, ManifestError, Problem, Severity
from generator.base.transaction import Say, Transaction, stderr_notice
from generator.compiler.compile import compile_documents
from generator.compiler.output import Built, serialise
from generator.compiler.sources import load_sources
from generator.compiler.validate import validate
from generator.contract.freeze import guard_manifest, read_record
from generator.contract.manifest import MANIFEST_FILE, Manifest
from generator.tracks.loader import load_tracks
from generator.tracks.model import Track, file_for

SHOWN_PATHS = 10  # how many changed paths a build names before "and N more"


@dataclass(frozen=True)
class Changes:
    """Which served bodies a build changed against the manifest it replaced (by path and SHA-256)."""

    changed: tuple[str, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    first: bool = False  # there was no previous build (or its manifest could not be read)

    @classmethod
    def between(cls, before: Manifest | None, after: Manifest) -> Changes:
        if before is None:
            return cls(first=True)
        old = {e.path: e.sha256 for e in before.entries}
        new = {e.path: e.sha256 for e in after.entries}
        return cls(tuple(sorted(p for p in new.keys() & old.keys() if new[p] != old[p])),
                   tuple(sorted(new.keys() - old.keys())), tuple(sorted(old.keys() - new.keys())))

    def text(self, limit: int = SHOWN_PATHS) -> str:
        """One line an author reads after a build: how many bodies changed, and which (up to ``limit``)."""
        if self.first:
            return "no previous build to compare with"
        paths = [*self.changed, *self.added, *self.removed]
        if not paths:
            return "no served body changed since the previous build"
        kinds = ", ".join(f"{len(group)} {word}" for group, word in ((self.changed, "changed"),
                          (self.added, "added"), (self.removed, "removed")) if group)
        shown = ", ".join(paths[:limit]) + (f" and {len(paths) - limit} more" if len(paths) > limit else "")
        count = "1 served body differs" if len(paths) == 1 else f"{len(paths)} served bodies differ"
        return f"{count} from the previous build ({kinds}): {shown}"


@dataclass(frozen=True)
class BuildResult:
    built: list[Built]
    manifest: Manifest
    warnings: list[Problem]
    build_dir: str  # the track's trees, relative to the checkout: build/<piste>
    manifest_dir: str  # manifest/<piste>
    changes: Changes = Changes(first=True)  # against the build it replaced (set by :func:`build`)

    @property
    def manifest_hash(self) -> str:
        return self.manifest.hash

    def trees(self) -> dict[str, dict[str, bytes]]:
        """The two committed folders, as ``{folder: {relative file: bytes}}``."""
        return {self.build_dir: {file_for(b.document.path): b.data for b in self.built},
                self.manifest_dir: self.manifest.files()}


@contextmanager
def _cyclic_gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while the sources are loaded, validated, compiled and written.

    The pipeline allocates millions of small containers that all stay alive until it ends, and every
    automatic collection walks them again: that was a third of the CPU time of checking a 10,000-entity
    corpus. They form no reference cycles (a test counts the cyclic garbage left: none), so pausing the
    collector frees nothing later; reference counting still frees everything as usual.

    When the collector is resumed, what the run left alive (a build's bodies, its manifest) goes straight to
    the oldest generation (``gc.freeze`` then ``gc.unfreeze``, two list splices): otherwise the first young
    collections would walk those millions of objects one after the other, a tenth of a build's CPU time. Done
    only when nothing else holds objects frozen, so that no caller's ``gc.freeze`` is undone here.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


@_cyclic_gc_paused()
def check(src: Path, track: Track) -> list[Problem]:
    """Every problem of the sources, errors and warnings, cause first (see :meth:`Validator.run`)."""
    sources = load_sources(src, track)
    problems, _ = validate(sources, track)
    return problems


@_cyclic_gc_paused()
def compile_build(src: Path, base_url: str, track: Track) -> BuildResult:
    """Compile in memory; raise :class:`CorpusError` with every error when the sources are not valid."""
    sources = load_sources(src, track)
    problems, index = validate(sources, track)
    errors = [p for p in problems if p.severity is Severity.ERROR]
    if errors:
        raise CorpusError(errors, keep_order=True)  # validate's order: cause first
    documents = compile_documents(sources, index, base_url, track)
    out = serialise(documents, track.trees.build, base_url)
    if out.problems:
        raise CorpusError(out.problems)
    assert sources.corpus is not None
    manifest = Manifest.create(sources.corpus.data[track.corpus_key], base_url, out.entries)
    return BuildResult(out.built, manifest, [p for p in problems if p.severity is Severity.WARNING],
                       track.trees.build, track.trees.manifest)


@_cyclic_gc_paused()
def build(src: Path, out: Path, base_url: str, track: Track, *, wait: bool = True,
          say: Say = stderr_notice) -> BuildResult:
    """Compile the track's trees (``out/build``, ``out/manifest``) as one transaction; refuse to change a
    frozen season.

    The builder lock is taken before the sources are read: of two builds, the second waits (or, with
    ``wait=False``, refuses) and then compiles the sources as the first left them.
    """
    with Transaction(out, wait=wait, say=say) as transaction:
        read_record(out, track.places)  # a corrupt freeze record stops the build before the sources are read
        result = compile_build(src, base_url, track)
        guard_manifest(out, result.manifest, track.places)
        before = _previous(out, track)  # under the builder lock: the build this one replaces
        transaction.commit(result.trees())
    return replace(result, changes=Changes.between(before, result.manifest))


def _previous(out: Path, track: Track) -> Manifest | None:
    """The manifest a build replaces, or None when there is none (or it cannot be read: nothing to compare)."""
    try:
        return Manifest.read(out / track.trees.manifest / MANIFEST_FILE)
    except ManifestError:
        return None


def ensure_build(root: Path, base_url: str) -> str:
    """Compile each track's sources in memory; rebuild its build and manifest only if they differ. Returns
    what happened, a line per track.

    Comparing bytes, not mtimes, is exact whatever git or a copy did to the timestamps, and leaves an
    up-to-date build untouched. The rebuild goes through :func:`generator.compiler.pipeline.build`, so whatever
    guards a build (atomic swap, a frozen season) guards this one too.
    """
    said = []
    tracks = load_tracks(root)
    for track in tracks:
        named = f"{track.piste}: " if len(tracks) > 1 else ""
        src = root / track.trees.sources
        result = compile_build(src, base_url, track)
        if all(_tree_matches(root / name, files) for name, files in result.trees().items()):
            said.append(f"{named}{track.trees.build}/ is up to date (manifest hash {result.manifest_hash})")
            continue
        result = build(src, root, base_url, track)
        said.append(f"{named}built {len(result.built)} files (manifest hash {result.manifest_hash})")
    return "\n".join(said)


def _tree_matches(folder: Path, files: dict[str, bytes]) -> bool:
    if not folder.is_dir():
        return False
    on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
    if on_disk != set(files):
        return False
    return all((folder / name).read_bytes() == data for name, data in files.items())
