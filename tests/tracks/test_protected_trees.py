"""Every track's folders are protected alike: no nginx prefix, picture, panel, artifact or report
lands in générique's trees any more than in conformité's, nor in nginx/ or tracks/."""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

import pytest
from trackfix import ROOT, copy_tracks

from generator.base.output_places import PROTECTED
from generator.base.secret_values import new_secret, write_private
from generator.cli.main import main

# Every kind's folder (each holds every track's tree of that kind), then the two fixed ones
KINDS = ["corpus_src", "season_src", "build", "manifest", "season", "freeze"]
GENERIQUE = [f"{kind}/generique" for kind in KINDS]
PLACES = [*GENERIQUE, "build/conformite", "build", "nginx", "tracks"]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both tracks as committed: sources, builds, seasons."""
    root = tmp_path_factory.mktemp("two-tracks") / "checkout"
    for name in ("corpus_src", "season_src", "build", "manifest", "season", "nginx"):
        shutil.copytree(ROOT / name, root / name)
    copy_tracks(root, tracks=("conformite", "generique"))
    return root


def test_the_protected_trees_are_every_kind_s_folder_plus_nginx_and_tracks() -> None:
    assert set(PROTECTED) == {*KINDS, "nginx", "tracks"}


def _snapshot(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


@pytest.mark.parametrize("place", PLACES)
def test_render_nginx_and_release_pack_refuse_every_track_s_folders(
        checkout: Path, place: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "secret"
    write_private(secret, new_secret() + "\n")
    before = _snapshot(checkout)
    assert main(["render-nginx", "--plain-replica", "--root", str(checkout), "--prefix",
                 str(checkout / place / "px"), "--port", "18097", "--secret-file", str(secret)]) == 1
    err = capsys.readouterr().err
    kind = place.split("/")[0]  # each kind's folder holds every track's tree of that kind
    assert err.count("\n") == 1 and f"inside {kind}/ of the checkout" in err, err
    assert main(["release", "pack", "--root", str(checkout), "--out", str(checkout / place / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"inside {kind}/ of the checkout" in err, err
    assert _snapshot(checkout) == before


@pytest.mark.parametrize("place", [*GENERIQUE, "tracks"])
def test_graph_and_the_panel_refuse_every_track_s_folders(checkout: Path, place: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    before = _snapshot(checkout)
    for argv in (["graph", "gen-01", "--out"], ["check-season", "--track", "generique", "--write-panel"]):
        assert main([*argv, str(checkout / place / "x"), "--root", str(checkout)]) == 2
        err = capsys.readouterr().err
        assert f"inside {place.split('/')[0]}/ of the repository" in err and "run/" in err, err
    assert _snapshot(checkout) == before


@pytest.mark.parametrize("place", PLACES)
def test_serve_refuses_a_state_file_in_every_track_s_folders(checkout: Path, place: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    before = _snapshot(checkout)
    with socket.socket() as busy:  # a state file let through stops at the busy port, never serves
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        argv = ["serve", "--no-build", "--root", str(checkout), "--prefix", str(tmp_path / "px"),
                "--replicas", "1", "--listen", "127.0.0.1", "--port", str(busy.getsockname()[1]),
                "--state-file", str(checkout / place / "x.json")]
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"inside {place.split('/')[0]}/ of the checkout" in err, err
    assert _snapshot(checkout) == before
