"""Releases and build proofs: switch and roll back under load, and replicas that refuse a wrong build."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from corpusfix import replace
from nginx_server import private_folder, start_topology, topology_secret
from release_fixtures import (
    bodies,
    manifest_hash,
    release_name,
    switch_under_load,
    two_builds,
    two_tracks,
)
from trackfix import copy_tracks

from generator.base.secret_values import new_secret, write_private
from generator.cli.main import main
from generator.observe.proxy_client import fetch, tls_context
from generator.serving.instances.serve import served_name
from generator.serving.tls.tls_local import make_local_tls


@pytest.fixture(scope="module")
def builds() -> Iterator[tuple[Path, Path]]:
    with two_builds("corpus-releases-") as pair:
        yield pair


@pytest.fixture
def work() -> Iterator[Path]:
    with private_folder("corpus-release-run-") as folder:
        yield folder




def test_release_switch_and_rollback_under_load(builds: tuple[Path, Path], work: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    a, b = builds
    releases = work / "releases"
    assert main(["release", "--root", str(a), "--releases", str(releases)]) == 0
    assert os.readlink(releases / "current") == release_name(a)
    switch_under_load(work, releases, bodies(a), bodies(b), ["release", "--root", str(b)])
    assert os.readlink(releases / "current") == release_name(a)
    assert os.readlink(releases / "previous") == release_name(b)
    err = capsys.readouterr().err
    assert f"{release_name(b)} is current (previous {release_name(a)})" in err
    assert "each answers with the new" in err


# a générique-only change: one product's price
CHEAPER = [replace("produits/PRD-32011.yaml", 'prix_unitaire_ht: "39.80"', 'prix_unitaire_ht: "38.90"')]


def test_a_generique_only_change_is_a_new_release_switched_and_rolled_back_under_load(
        work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Both tracks, générique changed alone: a new release name (the release hash names every track),
    installed beside the old one, switched and rolled back under a proxy-like load (a new connection per
    request) with no failed request, conformité's bodies the same bytes throughout."""
    a, b = two_tracks(work / "a"), two_tracks(work / "b", CHEAPER)
    assert manifest_hash(a) == manifest_hash(b) and release_name(a) != release_name(b)
    old, new = bodies(a), bodies(b)
    assert sorted(p for p in old if old[p] != new.get(p)) == ["/generique/produits/PRD-32011"]
    releases = work / "releases"
    assert main(["release", "--root", str(a), "--releases", str(releases)]) == 0
    answers = switch_under_load(work, releases, old, new, ["release", "--root", str(b)])
    failed = [(path, answer.status) for path, answer in answers if answer.status != 200]
    conformite = [(path, answer) for path, answer in answers if not path.startswith("/generique/")]
    assert failed == [] and len(conformite) >= 100
    assert all(answer.body == old[path] == new[path] for path, answer in conformite)
    with capsys.disabled():  # the figures, shown with pytest -s
        print(f"\ngénérique-only release under load: {len(answers)} requests, {len(failed)} failed, "
              f"{len(conformite)} to conformité", file=sys.stderr)
    assert sorted(os.listdir(releases)) == sorted([release_name(a), release_name(b), "current", "previous"])
    assert os.readlink(releases / "current") == release_name(a)
    assert os.readlink(releases / "previous") == release_name(b)
    assert f"{release_name(b)} is current (previous {release_name(a)})" in capsys.readouterr().err


def _tampered(source: Path, dest: Path) -> Path:
    shutil.copytree(source / "build" / "conformite", dest / "build" / "conformite")
    copy_tracks(dest)
    shutil.copytree(source / "manifest" / "conformite", dest / "manifest" / "conformite")
    copy_tracks(dest)
    os.chmod(dest, 0o755)
    return dest


def _render_replica(root: Path, work: Path, *extra: str) -> int:
    secret = work / "secret"
    write_private(secret, new_secret() + "\n")
    return main(["render-nginx",
                 "--plain-replica", "--root", str(root), "--prefix", str(work / "prefix"), "--port", "18181",
                 "--secret-file", str(secret), *extra])


def test_a_replica_refuses_a_tampered_build(builds: tuple[Path, Path], work: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    a, _b = builds
    root = _tampered(a, work / "root")
    assert _render_replica(root, work) == 0
    target = next((root / "build" / "conformite" / "entites").iterdir())
    target.write_bytes(target.read_bytes().replace(b"Test", b"Tset", 1))
    assert _render_replica(root, work) == 1
    assert f"{target}: bytes differ from the manifest entry" in capsys.readouterr().err
    # the same through `corpus serve --replicas`: no nginx starts, exit 1
    assert main(["serve", "--root", str(root), "--no-build", "--replicas", "1", "--prefix",
                 str(work / "serve")]) == 1
    assert "bytes differ from the manifest entry" in capsys.readouterr().err
    # and through a release: nothing installed
    assert main(["release", "--root", str(root), "--releases", str(work / "releases")]) == 1
    assert not (work / "releases").exists() or not any((work / "releases").iterdir())


def test_a_replica_refuses_an_extra_file_or_another_manifest(builds: tuple[Path, Path], work: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    a, b = builds
    root = _tampered(a, work / "root")
    (root / "build" / "conformite" / "entites" / "ENT-9999.json").write_text("{}\n")
    assert _render_replica(root, work) == 1
    assert "build/conformite/entites/ENT-9999.json: not in the manifest" in capsys.readouterr().err
    (root / "build" / "conformite" / "entites" / "ENT-9999.json").unlink()
    assert _render_replica(root, work, "--expect-manifest-hash", manifest_hash(b)) == 1
    assert f"differs from {manifest_hash(b)} expected by --expect-manifest-hash" in capsys.readouterr().err
    assert _render_replica(root, work, "--expect-manifest-hash", manifest_hash(a)) == 0
    assert _render_replica(root, work, "--expect-manifest-hash", release_name(b)) == 1
    assert f"release {release_name(a)} (manifest hash {manifest_hash(a)} of the track conformite) differs from " \
           f"{release_name(b)} expected by --expect-manifest-hash" in capsys.readouterr().err
    assert _render_replica(root, work, "--expect-manifest-hash", release_name(a)) == 0
    # a freeze record names the expected manifest when no hash is given
    (root / "freeze" / "conformite").mkdir(parents=True)
    (root / "freeze" / "conformite" / "record.json").write_text(json.dumps({"manifest_hash": manifest_hash(b)}))
    assert _render_replica(root, work) == 1
    assert "freeze/conformite/record.json" in capsys.readouterr().err


def test_rollback_needs_a_previous_release(builds: tuple[Path, Path], work: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["release", "--root", str(builds[0]), "--releases", str(work / "r")]) == 0
    assert main(["release", "--rollback", "--releases", str(work / "r")]) == 1
    assert "nothing to roll back to" in capsys.readouterr().err


def test_prefix_commands_verify_build_and_reload(builds: tuple[Path, Path], work: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """What the systemd units run: the replica's start check and the reload that waits, by prefix alone."""
    a, _b = builds
    root = _tampered(a, work / "root")
    old, new = new_secret(), new_secret()
    topology = start_topology(work / "topology", root, replicas=1, secrets=[old])
    try:
        replica, frontal = topology.replicas[0].settings, topology.frontals[0].settings
        assert main(["verify-build", "--prefix", str(replica.prefix)]) == 0
        assert capsys.readouterr().err == ("corpus verify-build: every track's build matches its manifest: "
                                           f"release {release_name(root)} (conformite {manifest_hash(root)})\n")
        assert main(["verify-build", "--prefix", str(frontal.prefix)]) == 1
        write_private(topology.secret_file, f"{old}\n{new}\n")
        for settings in (replica, frontal):
            assert main(["reload", "--prefix", str(settings.prefix)]) == 0
        context = tls_context(topology.tls.ca)
        path = sorted(bodies(root))[-1]
        for _ in range(10):  # no wait: the command returned once the new configuration answered
            assert fetch(topology.frontal_addresses, path, new, context).status == 200
        assert "only the new configuration answers now" in capsys.readouterr().err
        target = next((root / "build" / "conformite" / "entites").iterdir())
        target.write_bytes(target.read_bytes() + b" ")
        assert main(["verify-build", "--prefix", str(replica.prefix)]) == 1
        assert f"{target}: bytes differ" in capsys.readouterr().err
    finally:
        topology.stop()


# ------------------------------------------------------------------ releases that never leave a half-state

def test_releases_must_be_a_folder(builds: tuple[Path, Path], work: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    a, _b = builds
    (work / "file").write_text("x")
    for path in ("/dev/null", str(work / "file")):
        assert main(["release", "--root", str(a), "--releases", path]) == 1
        kind = "a device" if path == "/dev/null" else "a file"
        assert capsys.readouterr().err == (f"corpus release: {Path(path).resolve()}: {kind}, not a folder: "
                                           "--releases names the folder that holds the releases\n")
    assert (work / "file").read_text() == "x"


def test_a_release_folder_of_the_old_layout_is_never_used_as_one_of_the_new(
        builds: tuple[Path, Path], work: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A release installed before the move to <kind>/<piste> has the same name (the release hash: nothing
    served changed) but conformité's trees at the root and a track file that listed them: it is refused, never
    switched to as a release of today's layout, and left as it was."""
    a, _b = builds
    releases = work / "releases"
    old = releases / release_name(a)
    for kind in ("build", "manifest"):  # the old layout: conformité's trees at the root of the release
        shutil.copytree(a / kind / "conformite", old / kind)
    copy_tracks(old)
    definition = old / "tracks" / "conformite" / "track.yaml"
    old_text = definition.read_text("utf-8").replace("principale: true\n", "") + "arbres:\n  build: build\n"
    definition.write_text(old_text, "utf-8")
    before = sorted(p.relative_to(old).as_posix() for p in old.rglob("*"))
    assert main(["release", "--root", str(a), "--releases", str(releases)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{old}: a release of the layout before <kind>/<piste>" in err, err
    assert not (releases / "current").exists()
    assert sorted(p.relative_to(old).as_posix() for p in old.rglob("*")) == before


def test_an_install_that_loses_the_race_uses_the_winners_identical_copy(builds: tuple[Path, Path],
                                                                         work: Path) -> None:
    """Two installs of one build at once: the second rename finds the target already there. A real
    second install runs at that very moment (placed by an audit hook on the first one's rename)."""
    import sys

    from generator.serving.releases.release import install

    a, _b = builds
    releases = work / "releases"
    pid = os.fork()
    if pid == 0:  # the child: its audit hook dies with it
        try:
            raced: list[bool] = []

            def hook(event: str, args: tuple[object, ...]) -> None:
                if event == "os.rename" and ".install-" in str(args[0]) and not raced:
                    raced.append(True)
                    install(a, releases)  # the other run wins the rename

            sys.addaudithook(hook)
            target = install(a, releases)
            name = release_name(a)
            ok = raced and target == releases / name and sorted(os.listdir(releases)) == [name]
            os._exit(0 if ok else 4)
        except BaseException:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    assert bodies(releases / release_name(a)) == bodies(a)


def _replica_prefix(root: Path, work: Path, *source: str) -> Path:
    prefix = work / "prefix"
    assert main(["render-nginx",
                 "--plain-replica", "--root", str(root), "--prefix", str(prefix), "--port", "18182", *source]) == 0
    return prefix


def test_a_prefix_that_cannot_take_the_release_stops_it_before_the_switch(
        builds: tuple[Path, Path], work: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    a, b = builds
    releases = work / "releases"
    assert main(["release", "--root", str(a), "--releases", str(releases)]) == 0
    capsys.readouterr()
    # a prefix that does not exist
    assert main(["release", "--root", str(b), "--releases", str(releases), "--prefix", "/nonexistent"]) == 1
    err = capsys.readouterr().err
    assert "--prefix /nonexistent: /nonexistent/conf/settings.json: not found: render the prefix first" in err
    assert os.readlink(releases / "current") == release_name(a) and not (releases / "previous").exists()
    # a prefix rendered with --secret-env, the variable gone when the release re-renders it
    monkeypatch.setenv("CORPUS_TEST_RELEASE_SECRET", new_secret())
    prefix = _replica_prefix(releases / "current", work, "--secret-env", "CORPUS_TEST_RELEASE_SECRET")
    conf = {p.name: p.read_bytes() for p in (prefix / "conf").iterdir()}
    monkeypatch.delenv("CORPUS_TEST_RELEASE_SECRET")
    assert main(["release", "--root", str(b), "--releases", str(releases), "--prefix", str(prefix)]) == 1
    err = capsys.readouterr().err
    assert f"--prefix {prefix}: $CORPUS_TEST_RELEASE_SECRET is not set" in err
    assert os.readlink(releases / "current") == release_name(a) and not (releases / "previous").exists()
    assert {p.name: p.read_bytes() for p in (prefix / "conf").iterdir()} == conf


def test_a_failure_after_the_switch_rolls_everything_back(builds: tuple[Path, Path], work: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """The replica takes the release, then the frontal's files cannot be written (its conf/nginx.conf has
    become a folder): ``current`` goes back and the replica is rendered and reloaded with the old one."""
    a, b = builds
    old, new = bodies(a), bodies(b)
    changed = sorted(p for p in old if p in new and old[p] != new[p])
    releases = work / "releases"
    assert main(["release", "--root", str(a), "--releases", str(releases)]) == 0
    topology = start_topology(work, releases / "current", replicas=1)
    try:
        replica, frontal = topology.replicas[0].settings, topology.frontals[0].settings
        frontal.nginx_conf.unlink()
        frontal.nginx_conf.mkdir()  # the running frontal does not care; writing its new config will fail
        context, secret = tls_context(topology.tls.ca), topology_secret(topology)
        capsys.readouterr()
        assert main(["release", "--root", str(b), "--releases", str(releases), "--prefix", str(replica.prefix),
                     "--prefix", str(frontal.prefix)]) == 1
        err = capsys.readouterr().err
        assert f"{frontal.nginx_conf}: exists and is not a regular file" in err
        assert f"rolled back: current is {release_name(a)} again" in err
        assert os.readlink(releases / "current") == release_name(a) and not (releases / "previous").exists()
        for path in changed:
            assert fetch(topology.frontal_addresses, path, secret, context).body == old[path]
        assert json.loads(replica.settings_file.read_text())["manifest_hash"] == manifest_hash(a)
    finally:
        topology.stop()


def test_reload_and_release_say_a_certificate_ending_soon(builds: tuple[Path, Path], work: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A reload is when a renewed certificate is taken: one that ends within WARN_DAYS days is said by
    ``reload`` and by ``release`` as ``render-nginx`` says it (a warning, exit 0), and it is served."""
    a, b = builds
    releases = work / "releases"
    assert main(["release", "--root", str(a), "--releases", str(releases)]) == 0
    topology = start_topology(work / "topology", releases / "current", replicas=1)
    try:
        frontal = topology.frontals[0].settings
        names = [*(host for host, _ in topology.frontal_addresses),
                 served_name(releases / "current", work / "topology", "")]
        soon = make_local_tls(work / "renewed", names, days=5)  # the renewal, into the files the frontal names
        shutil.copy(soon.cert, topology.tls.cert)
        shutil.copy(soon.key, topology.tls.key)
        capsys.readouterr()
        assert main(["reload", "--prefix", str(frontal.prefix)]) == 0
        err = capsys.readouterr().err
        warned = f"warning: --tls-cert {topology.tls.cert}: expires in 4 days"
        assert err.startswith(f"corpus reload: {warned}") and "reloaded" in err.splitlines()[-1], err
        path = sorted(bodies(a))[-1]
        assert fetch(topology.frontal_addresses, path, topology_secret(topology),
                     tls_context(soon.ca)).status == 200
        assert main(["release", "--root", str(b), "--releases", str(releases), "--prefix",
                     str(frontal.prefix)]) == 0
        err = capsys.readouterr().err
        assert err.startswith(f"corpus release: --prefix {frontal.prefix}: {warned}"), err
        assert f"{release_name(b)} is current" in err.splitlines()[-1]
    finally:
        topology.stop()
