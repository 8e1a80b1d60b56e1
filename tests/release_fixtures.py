"""What the release tests share: two builds that differ in a few bodies, their bodies and hashes, and a
switch and rollback under a proxy-like load through a real topology (``corpus release`` and ``corpus
release install`` must both lose no request)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

from corpusfix import apply, copy_fixture, replace
from nginx_server import private_folder, start_topology, topology_secret
from trackfix import CONFORMITE, ROOT, copy_tracks

from generator.cli.main import main
from generator.compiler.pipeline import build
from generator.contract.hashing import sha256_hex
from generator.observe.proxy_client import Answer, Load, fetch, tls_context
from generator.tracks.loader import track_named

BASE_URL = "https://corpus.test"
NEW_ADDRESS = [replace("entites/ENT-0001.yaml", "1 rue de l'Essai", "3 rue de l'Essai")]


def checkout(folder: Path, edits: list[Callable[[Path], None]] = ()) -> Path:  # type: ignore[assignment]
    """A scratch checkout at ``folder``: the fixture corpus (with ``edits``) compiled there, sources removed."""
    folder.mkdir(parents=True)
    build(apply(copy_fixture(folder), edits), folder, BASE_URL, CONFORMITE)
    shutil.rmtree(folder / "corpus_src" / "conformite")
    os.chmod(folder, 0o755)
    return folder


@contextlib.contextmanager
def two_builds(prefix: str) -> Iterator[tuple[Path, Path]]:
    """Two builds of the fixture corpus that differ in a few bodies (an entity's address), in a private
    folder: what a module of release tests switches between."""
    with private_folder(prefix) as folder:
        yield checkout(folder / "a"), checkout(folder / "b", NEW_ADDRESS)


def two_tracks(folder: Path, edits: list[Callable[[Path], None]] = ()) -> Path:  # type: ignore[assignment]
    """A scratch checkout of the repository's two tracks as committed, générique rebuilt with ``edits`` when
    given (a générique-only change: conformité's trees are the committed ones), sources removed."""
    folder.mkdir(parents=True)
    for name in ("build", "manifest"):  # every track's
        shutil.copytree(ROOT / name, folder / name)
    copy_tracks(folder, tracks=("conformite", "generique"))
    if edits:
        src = folder / "corpus_src" / "generique"
        shutil.copytree(ROOT / "corpus_src" / "generique", src)
        base_url = json.loads((ROOT / "manifest" / "generique" / "manifest.json").read_bytes())["base_url"]
        build(apply(src, edits), folder, base_url, track_named(ROOT, "generique"))
        shutil.rmtree(src)
    os.chmod(folder, 0o755)
    return folder


def manifest_files(root: Path) -> dict[str, Path]:
    """Each track's manifest file by the layout docs/tracks.md gives: ``manifest/<piste>/manifest.json``."""
    pistes = sorted(p.name for p in (root / "tracks").iterdir())
    return {piste: root / "manifest" / piste / "manifest.json" for piste in pistes}


def manifest_hash(root: Path) -> str:
    """The first track's (conformité's) manifest hash."""
    return sha256_hex((root / "manifest" / "conformite" / "manifest.json").read_bytes())


def release_name(root: Path) -> str:
    """What docs/operating.md defines a release's name to be: the SHA-256 of the sorted lines
    ``<piste> <manifest hash>\\n`` of every track."""
    lines = sorted(f"{piste} {sha256_hex(file.read_bytes())}\n" for piste, file in manifest_files(root).items())
    return sha256_hex("".join(lines).encode("utf-8"))


def bodies(root: Path) -> dict[str, bytes]:
    """Every served body of every track, by canonical path."""
    out = {}
    for file in manifest_files(root).values():
        manifest = json.loads(file.read_text("utf-8"))
        out.update({e["path"]: (file.parent.parent.parent / "build" / file.parent.name / e["file"]).read_bytes()
                    for e in manifest["resources"]})
    return out


def switch_under_load(work: Path, releases: Path, old: dict[str, bytes], new: dict[str, bytes],
                      switch: list[str]) -> list[tuple[str, Answer]]:
    """Serve ``releases/current`` (old) from two replicas and a frontal, run ``switch`` (the command that
    installs the new release, given every prefix) then ``--rollback`` under load, checking after each that
    every new connection gets the release just switched to; the answers of the whole load, each checked
    to be a 200 with the old or the new bytes, and the first changed path seen both ways."""
    changed = sorted(p for p in old if p in new and old[p] != new[p])
    assert changed, "the two builds must differ somewhere"
    topology = start_topology(work, releases / "current", replicas=2)
    try:
        prefixes = [str(p.settings.prefix) for p in [*topology.replicas, *topology.frontals]]
        args = [arg for prefix in prefixes for arg in ("--prefix", prefix)]
        paths = [*changed, *sorted(p for p in old if p.startswith(("/agrements/", "/entites/")))[:10]]
        context, secret = tls_context(topology.tls.ca), topology_secret(topology)
        with Load(topology.frontal_addresses, paths, secret, context, threads=4, seconds=30) as running:
            running.wait_for(50)
            assert main([*switch, "--releases", str(releases), *args]) == 0
            # the command returned: every new connection now gets the new release
            for path in changed:
                assert fetch(topology.frontal_addresses, path, secret, context).body == new[path]
            running.wait_for(running.count() + 100)
            assert main(["release", "--rollback", "--releases", str(releases), *args]) == 0
            for path in changed:
                assert fetch(topology.frontal_addresses, path, secret, context).body == old[path]
            running.wait_for(running.count() + 100)
    finally:
        topology.stop()
    wrong = [(path, a.status, a.body[:60]) for path, a in running.answers
             if a.status != 200 or a.body not in (old[path], new[path])]
    assert wrong == []
    seen = {a.body for path, a in running.answers if path == changed[0]}
    assert seen == {old[changed[0]], new[changed[0]]}
    return running.answers
