"""The sealed key never reaches what is served, and the season artifacts are pure functions of
season_src/conformite/.

No byte of the key may reach build/, and a test proves it. Three independent proofs:

* the corpus built from ``corpus_src/`` alone, in a folder with no ``season_src/`` anywhere, is the
  committed build byte for byte (so the committed manifest hash cannot depend on the key);
* no distinctive string of the key (trap descriptions, shortcut names, the key's own vocabulary) and no
  task statement occurs in any served or served-from file (build/, manifest/, the nginx templates), also
  for a build made right next to ``season_src/``;
* ``season/conformite/cle.json`` and ``season/conformite/taches.json`` are what ``corpus build-season`` makes from
  ``season_src/``, whatever the hash seed, time zone or locale, so the freeze commits to reproducible bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from season_fixtures import ROOT, World, make_world
from trackfix import CONFORMITE, copy_tracks

from generator.reading.season_model import Season, load_season

SEASON_FILES = ("cle.json", "taches.json")


def _corpus_command() -> list[str]:
    script = Path(sys.executable).with_name("corpus")
    return [str(script)] if script.exists() else [sys.executable, "-m", "generator.cli"]


def _env(**changes: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CORPUS_BASE_URL", "LC_ALL", "LANG", "TZ")}
    env.update(changes)
    return env


def corpus(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*_corpus_command(), *args], cwd=cwd, env=env or _env(), capture_output=True,
                          text=True, timeout=120, check=False)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder``, by relative path."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def season() -> Season:
    return load_season(ROOT / "season_src/conformite", CONFORMITE)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """A corpus built in a root that also holds season_src/: proximity must not leak anything."""
    return make_world(tmp_path_factory.mktemp("season-key"))


# -- (a) the corpus alone -------------------------------------------------------------------------------


def test_corpus_built_alone_is_the_committed_build(tmp_path: Path) -> None:
    """``corpus build`` run in a folder holding only a copy of corpus_src/conformite/ reproduces
    build/conformite/ and manifest/conformite/."""
    shutil.copytree(ROOT / "corpus_src/conformite", tmp_path / "corpus_src/conformite")
    copy_tracks(tmp_path)
    result = corpus("build", "--root", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["build", "corpus_src", "manifest", "tracks"]

    committed_hash = (ROOT / "manifest/conformite/manifest.sha256").read_text("ascii").strip()
    built_hash = (tmp_path / "manifest/conformite/manifest.sha256").read_text("ascii").strip()
    assert built_hash == committed_hash
    assert hashlib.sha256((tmp_path / "manifest/conformite/manifest.json").read_bytes()).hexdigest(
        ) == committed_hash
    assert tree(tmp_path / "manifest/conformite") == tree(ROOT / "manifest/conformite")
    built, committed = tree(tmp_path / "build/conformite"), tree(ROOT / "build/conformite")
    assert sorted(built) == sorted(committed)
    assert [name for name in built if built[name] != committed[name]] == []


def test_build_next_to_season_src_is_the_same_build(world: World) -> None:
    """The temporary root of the other season tests has season_src/ beside corpus_src/: same bytes."""
    assert (world.root / "season_src/conformite").is_dir()
    assert tree(world.build) == tree(ROOT / "build/conformite")
    assert tree(world.root / "manifest/conformite") == tree(ROOT / "manifest/conformite")


# -- (b) no distinctive string of the key or of the statements is served ------------------------------


# The key's own vocabulary (its field names), and names that would betray where it lives.
KEY_WORDS = ("famille", "raccourci", "piege", "formes_equivalentes")
KEY_NAMES = ("cle.yaml", "cle.json")


def key_needles(season: Season) -> list[str]:
    """Strings only the key carries: each trap sentence, each shortcut name, the key's field names."""
    needles = {e.piege for e in season.key.values()}
    needles |= {e.raccourci for e in season.key.values() if e.raccourci}
    return sorted(needles | set(KEY_WORDS))


def statement_needles(season: Season) -> list[str]:
    """Strings only the statements carry: each question, each task id."""
    return sorted({s.question for s in season.statements} | {s.task.id for s in season.statements})


def forms(needle: str) -> set[str]:
    """The needle as written, and as JSON would escape it (raw UTF-8 and ASCII-escaped)."""
    return {needle.casefold(), json.dumps(needle, ensure_ascii=False)[1:-1].casefold(),
            json.dumps(needle)[1:-1].casefold()}


def served_files(*roots: Path) -> dict[str, str]:
    """Text of every file under build/, manifest/ and nginx/ (templates) of the given roots."""
    files: dict[str, str] = {}
    for root in roots:
        for folder in ("build", "manifest", "nginx"):
            if (root / folder).is_dir():
                for path, data in tree(root / folder).items():
                    files[f"{root}/{folder}/{path}"] = data.decode("utf-8").casefold()
    return files


def leaks(files: dict[str, str], needles: list[str]) -> list[tuple[str, str]]:
    return [(name, needle) for needle in needles for name, text in files.items()
            if any(form in text for form in forms(needle))]


def test_needles_are_real_strings_of_the_key(season: Season) -> None:
    """Positive control: every key needle occurs in the key artifact, so its absence elsewhere means
    something (a needle mangled by the test itself would pass the leak test vacuously)."""
    key_text = (ROOT / "season/conformite/cle.json").read_text("utf-8").casefold()
    source = (ROOT / "season_src/conformite/cle.yaml").read_text("utf-8").casefold()
    missing = [n for n in key_needles(season) if not any(f in key_text or f in source for f in forms(n))]
    assert missing == []
    assert len({e.piege for e in season.key.values()}) == len(season.key) == 10
    tasks_text = (ROOT / "season/conformite/taches.json").read_text("utf-8").casefold()
    assert [n for n in statement_needles(season) if not any(f in tasks_text for f in forms(n))] == []


def test_no_string_of_the_key_is_served(season: Season, world: World) -> None:
    files = served_files(ROOT, world.root)
    assert any(name.endswith("referentiel.json") for name in files)
    assert len([n for n in files if "/build/" in n]) >= 2 * 150  # both builds scanned
    assert leaks(files, [*key_needles(season), *KEY_NAMES]) == []


def test_no_task_statement_is_served(season: Season, world: World) -> None:
    files = served_files(ROOT, world.root)
    assert leaks(files, statement_needles(season)) == []
    manifest = json.loads((ROOT / "manifest/conformite/manifest.json").read_text("utf-8"))
    paths = [entry["path"] for entry in manifest["resources"]]
    assert paths and not [p for p in paths if p.split("/")[1] in ("season", "taches", "cle", "saison")]
    assert not [name for name in tree(ROOT / "build/conformite") if "season" in name or "taches" in name or "cle"
        in name]


def test_leak_detector_finds_a_planted_trap(season: Season, tmp_path: Path) -> None:
    """The scan itself works: a trap sentence JSON-encoded into a served file is found."""
    piege = season.key["conf-01"].piege
    (tmp_path / "build/conformite").mkdir(parents=True)
    (tmp_path / "build/conformite/x.json").write_text(json.dumps({"note": piege}), "utf-8")
    assert leaks(served_files(tmp_path), key_needles(season)) == [(f"{tmp_path}/build/conformite/x.json", piege)]


# -- (c) the season artifacts ------------------------------------------------------------------------


ENVIRONMENTS = [
    {"PYTHONHASHSEED": "0", "TZ": "UTC", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"},
    {"PYTHONHASHSEED": "4242", "TZ": "Pacific/Kiritimati", "LANG": "fr_FR.UTF-8", "LC_ALL": "fr_FR.UTF-8"},
]


@pytest.fixture(scope="module")
def built_seasons(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, bytes]]:
    """``corpus build-season`` run twice, in fresh roots holding only season_src/, in two environments."""
    outputs = []
    for n, changes in enumerate(ENVIRONMENTS):
        root = tmp_path_factory.mktemp(f"build-season-{n}")
        shutil.copytree(ROOT / "season_src/conformite", root / "season_src/conformite")
        copy_tracks(root)
        result = corpus("build-season", "--root", str(root), cwd=root, env=_env(**changes))
        assert result.returncode == 0, result.stderr
        assert sorted(p.name for p in root.iterdir()) == ["season", "season_src", "tracks"], "writes season/ only"
        outputs.append(tree(root / "season/conformite"))
    return outputs


def test_build_season_reproduces_the_committed_artifacts(built_seasons: list[dict[str, bytes]]) -> None:
    committed = tree(ROOT / "season/conformite")
    assert sorted(committed) == sorted(SEASON_FILES)
    for output in built_seasons:
        assert output == committed


def test_build_season_is_deterministic_across_environments(built_seasons: list[dict[str, bytes]]) -> None:
    first, second = built_seasons
    assert sorted(first) == sorted(SEASON_FILES)
    assert first == second


def test_key_artifact_carries_the_key(season: Season) -> None:
    """What the freeze commits to is the key of cle.yaml, read here from the raw YAML, not the model."""
    artifact = json.loads((ROOT / "season/conformite/cle.json").read_text("utf-8"))
    raw = season.raw_key["taches"]
    assert sorted(artifact["taches"]) == sorted(raw)
    for task_id, entry in raw.items():
        compiled = artifact["taches"][task_id]
        assert (compiled["famille"], compiled["verdict"], compiled["piege"]) == \
            (entry["famille"], entry["verdict"], entry["piege"])
        assert compiled["raccourci"] == entry.get("raccourci")
        assert [(f["ressource"], f["champ"], f["valeur"]) for f in compiled["faits"]] == \
            [(f["ressource"], f["champ"], f["valeur"]) for f in entry["faits"]]


def test_tasks_artifact_types_the_statements(season: Season) -> None:
    artifact = json.loads((ROOT / "season/conformite/taches.json").read_text("utf-8"))
    raw = {t["id"]: t for t in season.raw_tasks["taches"]}
    assert [t["id"] for t in artifact["taches"]] == sorted(raw)
    for task in artifact["taches"]:
        source = raw[task["id"]]
        assert task["assertions"] == {"minimum": int(source["assertions"]["minimum"]),
                                      "plafond": int(source["assertions"]["plafond"])}
        assert (task["entite"], task["activite"], task["date_examen"], task["question"]) == \
            (source["entite"], source["activite"], source["date_examen"], source["question"])
    assert not {"famille", "verdict", "piege", "raccourci", "faits"} & {k for t in artifact["taches"] for k in t}
