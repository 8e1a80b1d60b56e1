"""The ``corpus`` command: help texts, ``show``, ``manifest-hash`` and ``check``'s exit status."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from corpusfix import apply, copy_fixture, replace
from trackfix import copy_tracks

from generator.base.errors import BuildLocked, GeneratorError, TreeWriteError
from generator.cli.main import main, parser

ROOT = Path(__file__).resolve().parents[2]
COMPILER_COMMANDS = ("build", "check", "manifest-hash", "show")


def _subcommands() -> list[str]:
    """Every registered sub-command, tool modules included."""
    actions = [a for a in parser()._actions if a.__class__.__name__ == "_SubParsersAction"]
    return sorted(actions[0].choices)


def test_compiler_commands_are_registered() -> None:
    assert set(COMPILER_COMMANDS) <= set(_subcommands())


@pytest.mark.parametrize("command", _subcommands())
def test_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([command, "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: corpus {command}")
    assert len(out.splitlines()) >= 4  # a description, not only a usage line


@pytest.mark.parametrize(("name", "says"), [("a-file", "not a folder"), ("missing", "no such folder")])
def test_root_that_is_not_a_folder_is_one_line(name: str, says: str, tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    """--root naming a file is said to be one, not reported as a season without its source files."""
    (tmp_path / "a-file").write_text("x")
    root = tmp_path / name
    for command in ("check-season", "check", "log-report"):
        with pytest.raises(SystemExit) as info:
            main([command, "--root", str(root), *(["x.log"] if command == "log-report" else [])])
        assert info.value.code == 2
        err = capsys.readouterr().err
        assert err == f"corpus {command}: argument --root: {root}: {says} (--help for usage)\n"


def test_top_level_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert all(command in out for command in COMPILER_COMMANDS)


def test_console_script_runs() -> None:
    script = Path(sys.executable).parent / "corpus"
    if not script.exists():
        pytest.skip("console script not installed next to this interpreter")
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0 and "check" in result.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("cli")
    copy_fixture(root)
    assert main(["build", "--root", str(root), "--base-url", "https://corpus.arkforge.tech"]) == 0
    return root


def test_show_prints_body_then_entry(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "/entites/ENT-0001", "--root", str(built)]) == 0
    out = capsys.readouterr().out
    body = (built / "build/conformite/entites/ENT-0001.json").read_text("utf-8")
    assert out.startswith(body)
    head, entry_text = out[len(body):].split("\n", 1)
    assert head == "--- manifest entry ---"
    entry = json.loads(entry_text)
    manifest = json.loads((built / "manifest/conformite/manifest.json").read_text("utf-8"))
    assert entry == next(e for e in manifest["resources"] if e["path"] == "/entites/ENT-0001")
    assert entry["sha256"] == hashlib.sha256(body.encode("utf-8")).hexdigest()


def test_show_accepts_a_path_without_leading_slash(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", "_systeme/403", "--root", str(built)]) == 0
    assert '"ressource": "/_systeme/403"' in capsys.readouterr().out


@pytest.mark.parametrize("path", ["/entites/ENT-0001/", "/entites/ENT-0001.json", "/entites/ENT-4242"])
def test_show_refuses_what_is_not_in_the_manifest(built: Path, path: str,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", path, "--root", str(built)]) == 1
    captured = capsys.readouterr()
    assert captured.out == "" and "is not in the manifest" in captured.err


def test_manifest_hash(built: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["manifest-hash", "--root", str(built)]) == 0
    printed = capsys.readouterr().out
    recorded = (built / "manifest/conformite/manifest.sha256").read_text("ascii")
    assert printed == recorded
    assert printed.strip() == hashlib.sha256((built / "manifest/conformite/manifest.json").read_bytes(
        )).hexdigest()


def test_manifest_hash_of_the_committed_manifest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["manifest-hash", "--root", str(ROOT)]) == 0
    assert capsys.readouterr().out.strip() == hashlib.sha256(
        (ROOT / "manifest/conformite/manifest.json").read_bytes()).hexdigest()


def test_manifest_hash_without_a_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy_tracks(tmp_path)
    assert main(["manifest-hash", "--root", str(tmp_path)]) == 1
    assert "run 'corpus build' first" in capsys.readouterr().err


def test_check_exit_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = copy_fixture(tmp_path)
    assert main(["check", "--root", str(tmp_path)]) == 0
    assert capsys.readouterr().err == "corpus check: 0 error(s), 0 warning(s)\n"
    apply(src, [replace("entites/ENT-0002.yaml", "statut: suspendu", "statut: suspended")])
    assert main(["check", "--root", str(tmp_path)]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "corpus_src/conformite/entites/ENT-0002.yaml:15:5: agrements[0].statut: 'suspended' is not one of "
        "['actif', "
        "'suspendu', 'retire']",
        "corpus check: 1 error(s), 0 warning(s)"]
    assert not (tmp_path / "build/conformite").exists()  # check writes nothing


def test_check_of_the_committed_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    """Every track of the checkout is checked, each named, each clean."""
    assert main(["check", "--root", str(ROOT)]) == 0
    assert capsys.readouterr().err.splitlines() == ["corpus check (conformite): 0 error(s), 0 warning(s)",
                                                    "corpus check (generique): 0 error(s), 0 warning(s)"]


def test_build_reports_and_exits_nonzero_on_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    apply(copy_fixture(tmp_path), [replace("entites/ENT-0002.yaml", "statut: suspendu", "statut: suspended")])
    assert main(["build", "--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "agrements[0].statut: 'suspended' is not one of" in err
    assert err.endswith("corpus build: 1 error(s); build/conformite/ and manifest/conformite/ left unchanged\n")
    assert not (tmp_path / "build/conformite").exists()


WRITE_ERROR = "/x/.corpus-txn/stage/build/a.json: cannot write: No space left on device; build/ left unchanged"


@pytest.mark.parametrize(("raised", "code", "line"), [
    (TreeWriteError(WRITE_ERROR), 1, f"corpus build: {WRITE_ERROR}"),
    (BuildLocked("another build (pid 7) holds /x/.corpus.lock"), 1,
     "corpus build: another build (pid 7) holds /x/.corpus.lock"),
    (KeyboardInterrupt(), 130, "corpus build: interrupted"),
])
def test_every_error_of_the_project_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str], raised: BaseException,
                                                code: int, line: str) -> None:
    """The CLI catches the base class of the project's errors: one line, exit 1, never a traceback."""
    import generator.cli.build

    def fail(*args: object, **kwargs: object) -> None:
        raise raised

    monkeypatch.setattr(generator.cli.build, "build", fail)
    copy_tracks(tmp_path)
    assert main(["build", "--root", str(tmp_path)]) == code
    assert capsys.readouterr().err.splitlines() == [line]


def test_project_errors_share_one_base() -> None:
    from generator.base.errors import CorpusError, FreezeRecordError, FrozenMismatch, ManifestError
    from generator.base.secret_values import SecretError
    from generator.base.transaction import TransactionError
    from generator.observe.verify import VerifyError

    for error in (CorpusError, FrozenMismatch, FreezeRecordError, ManifestError, TreeWriteError, BuildLocked,
                  SecretError, TransactionError, VerifyError):
        assert issubclass(error, GeneratorError), error


def test_help_states_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    """One convention for every command (docs/architecture.md), said where a user looks first."""
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "exit codes: 0 success; 1 the command ran and found a problem" in text
    assert "2 usage error" in text and "--fail-on-defect found an instrument defect" in text


@pytest.mark.parametrize("argv, code", [
    (["check", "--no-such-option"], 2),  # argparse
    (["evaluate", "conf-99"], 2),  # a value the command refuses before working
    (["score", "missing.json"], 1),  # an input that is not there
])
def test_one_exit_code_convention(argv: list[str], code: int, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        got = main([*argv, "--root", str(ROOT)])
    except SystemExit as exc:
        got = exc.code
    assert got == code, capsys.readouterr().err


def test_the_makefile_has_no_track_list_of_its_own() -> None:
    """The commands work on every track of tracks/ themselves: the Makefile names none."""
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text("utf-8")
    tracks = [p.name for p in (Path(__file__).resolve().parents[2] / "tracks").iterdir()]
    assert len(tracks) >= 2
    assert not [name for name in tracks if name in makefile], "a track named in the Makefile"
    assert "$(BIN)/corpus check-season $(if $(TRACK),--track $(TRACK))" in makefile
