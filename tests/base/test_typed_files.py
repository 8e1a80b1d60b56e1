"""Files as types: ``PREFIX/conf/settings.json``, the season key and statements as the scorer reads them, and
the ``corpus-score/1`` report. Each is parsed once into a frozen value; a corrupt, empty, wrongly typed or
incomplete one is one line naming the file (and the field), exit 1, never a traceback.

The commands run through ``corpus``'s entry point, ``generator.cli.main.main``, in this process (the installed
console script itself is proven by test_packaging.py and test_cli.py).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_corpus
from nginx_server import rendered_replica
from score_fixtures import HONEST_01, HONEST_02, ScoreWorld, make_score_world, submission
from trackfix import CONFORMITE

from generator.score.inputs import ScoreInputError, load_inputs
from generator.score.render import ReportError, ScoreReport
from generator.score.verdict import check_proofs, proofs_bytes
from generator.serving.rendering.nginx_settings import SettingsFile, SettingsFileError


def corpus(*args: str, cwd: Path | None = None) -> tuple[int, str]:
    return corpus_all([list(args)], cwd)[0]


def corpus_all(commands: list[list[str]], cwd: Path | None = None) -> list[tuple[int, str]]:
    """Run the ``corpus`` commands one after the other; their exit codes and standard errors, in order."""
    return [(ran.returncode, ran.stderr) for ran in (run_corpus(*args, cwd=cwd) for args in commands)]


def one_line(err: str) -> str:
    """The single line of ``err``; fails on a traceback or on several lines."""
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    return lines[0]


# ---------------------------------------------------------------------------------------- settings.json

@pytest.fixture(scope="module")
def prefix() -> Iterator[Path]:
    """A replica prefix rendered by the real ``corpus render-nginx`` from a private copy of the build."""
    with rendered_replica("corpus-typed-") as replica:
        yield replica


def _without(field: str) -> Callable[[dict[str, Any]], Any]:
    def change(data: dict[str, Any]) -> dict[str, Any]:
        data.pop(field)
        return data
    return change


def _with(**values: Any) -> Callable[[dict[str, Any]], Any]:
    def change(data: dict[str, Any]) -> dict[str, Any]:
        data.update(values)
        return data
    return change


# (name, new content from the rendered settings, what the line says after the file name)
SETTINGS_CASES: list[tuple[str, Callable[[dict[str, Any]], Any] | bytes, str]] = [
    ("corrupt", b'{"root": "/srv",\n', ":2:1: not JSON: "),
    ("empty", b"", "empty"),
    ("blank", b"  \n", "empty"),
    ("not UTF-8", b'{"root": "\xff"}', "not UTF-8"),
    ("a list", lambda data: list(data), "expected a JSON object of settings, got a list"),
    ("null", lambda data: None, "expected a JSON object of settings, got null"),
    ("missing root", _without("root"), "root: missing"),
    ("missing prefix", _without("prefix"), "prefix: missing"),
    ("root a number", _with(root=5), "root: expected a path, got an integer"),
    ("port a string", _with(port="8080"), "port: expected an integer, got a string"),
    ("port a boolean", _with(port=True), "port: expected an integer, got a boolean"),
    ("port out of range", _with(port=70000), "port: expected a port from 1 to 65535"),
    ("role unknown", _with(role="proxy"), "role: expected one of replica, frontal"),
    ("upstreams a string", _with(upstreams="127.0.0.1:1"), "upstreams: expected a list of strings"),
    ("tls_resumption a string", _with(tls_resumption="yes"), "tls_resumption: expected true or false"),
    ("manifest hash a number", _with(manifest_hash=1), "manifest_hash: expected a string or null"),
    ("secrets a list", _with(secrets_accepted=[]), "secrets_accepted: expected a count or null"),
    ("peer_tls a list", _with(peer_tls=["ca"]), "peer_tls: expected an object of paths (ca, cert, key; each a "
                                                "string or null), got a list"),
    ("peer_tls an unknown key", _with(peer_tls={"crt": "/x"}), "peer_tls.crt: not a key of the link"),
    ("peer_tls ca a number", _with(peer_tls={"ca": 1}), "peer_tls.ca: expected a path or null, got an integer"),
    ("port an object", _with(port={}), "port: expected an integer, got an object"),
]


@pytest.fixture
def settings_file(prefix: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    """The prefix's settings.json and its rendered content, put back after the test."""
    path = prefix / "conf" / "settings.json"
    original = path.read_bytes()
    try:
        yield path, json.loads(original)
    finally:
        path.write_bytes(original)


# one of each kind runs through the real commands; the whole table through the reader (below)
SETTINGS_COMMAND_CASES = ("corrupt", "empty", "a list", "missing root", "port a string")


def _content(content: Callable[[dict[str, Any]], Any] | bytes, rendered: dict[str, Any]) -> bytes:
    return content if isinstance(content, bytes) else json.dumps(content(dict(rendered))).encode()


@pytest.mark.parametrize(("case", "content", "says"),
                         [pytest.param(*c, id=c[0]) for c in SETTINGS_CASES if c[0] in SETTINGS_COMMAND_CASES])
def test_a_bad_settings_file_is_one_line_naming_it(settings_file: tuple[Path, dict[str, Any]], prefix: Path,
                                                   case: str, content: Any, says: str) -> None:
    path, rendered = settings_file
    path.write_bytes(_content(content, rendered))
    commands = ("verify-build", "reload")
    for command, (code, err) in zip(commands, corpus_all([[c, "--prefix", str(prefix)] for c in commands]),
                                    strict=True):
        line = one_line(err)
        assert code == 1, err
        assert line.startswith(f"corpus {command}: {path}:"), line  # FILE: or FILE:LINE:COLUMN:
        assert says in line, line


@pytest.mark.parametrize(("case", "content", "says"), SETTINGS_CASES, ids=[c[0] for c in SETTINGS_CASES])
def test_every_settings_field_is_checked(settings_file: tuple[Path, dict[str, Any]], case: str, content: Any,
                                         says: str) -> None:
    path, rendered = settings_file
    with pytest.raises(SettingsFileError) as caught:
        SettingsFile.from_bytes(_content(content, rendered), path)
    message = str(caught.value)
    assert message.startswith(f"{path}:") and says in message and "\n" not in message, message


def test_the_rendered_settings_file_reads_back_as_rendered(settings_file: tuple[Path, dict[str, Any]],
                                                            prefix: Path) -> None:
    """Positive control: the file as rendered passes, and its typed form holds what it says."""
    path, rendered = settings_file
    code, err = corpus("verify-build", "--prefix", str(prefix))
    assert code == 0, err
    saved = SettingsFile.read(prefix)
    assert saved.path == path and saved.manifest_hash == rendered["manifest_hash"]
    assert saved.secrets_accepted == rendered["secrets_accepted"] == 1
    assert {k: v for k, v in saved.settings.saved().items()} == \
        {k: v for k, v in rendered.items() if k not in ("manifest_hash", "secrets_accepted", "peer_tls")}
    # keys this version does not know are ignored (a later render may add some); known ones are not
    path.write_text(json.dumps({**rendered, "added_later": {"x": 1}}), "utf-8")
    assert SettingsFile.read(prefix).settings == saved.settings
    # the prefix root being a different build is the build proof's business, not the reader's
    path.write_text(json.dumps({**rendered, "expect_manifest_hash": "0" * 64}), "utf-8")
    code, err = corpus("verify-build", "--prefix", str(prefix))
    assert code == 1 and "refusing to serve another corpus" in one_line(err)


def test_a_settings_file_that_is_a_folder_or_fifo_is_refused(tmp_path: Path) -> None:
    for kind in ("folder", "fifo"):
        settings = tmp_path / kind / "conf" / "settings.json"
        settings.parent.mkdir(parents=True)
        settings.mkdir() if kind == "folder" else __import__("os").mkfifo(settings)
        with pytest.raises(SettingsFileError, match="not a regular file"):
            SettingsFile.read(tmp_path / kind)


def test_render_systemd_names_a_corrupt_settings_file(settings_file: tuple[Path, dict[str, Any]],
                                                      prefix: Path, tmp_path: Path) -> None:
    """A prefix that is not rendered here is fine for render-systemd (--role says what); a corrupt one is not
    silently taken for an unrendered one."""
    path, _ = settings_file
    path.write_text("[]", "utf-8")
    code, err = corpus("render-systemd", "--prefix", str(prefix), "--output", str(tmp_path / "units"))
    assert code == 1 and one_line(err).startswith(f"corpus render-systemd: {path}: expected a JSON object")


# --------------------------------------------------------------------------- season files, as scored

@pytest.fixture(scope="module")
def pristine_world(tmp_path_factory: pytest.TempPathFactory) -> ScoreWorld:
    return make_score_world(tmp_path_factory.mktemp("typed-world") / "root")


@pytest.fixture
def world(pristine_world: ScoreWorld, tmp_path: Path) -> ScoreWorld:
    root = tmp_path / "root"
    shutil.copytree(pristine_world.root, root)
    return ScoreWorld(root)


def _key_entry(data: dict[str, Any]) -> dict[str, Any]:
    return data["taches"]["conf-01"]


SEASON_CASES: list[tuple[str, str, Callable[[dict[str, Any]], Any] | bytes, str]] = [
    ("cle.json", "corrupt", b'{"format": "season-cle/1",\n "saison": }', "season/conformite/cle.json:2:12: not "
                                                                         "JSON"),
    ("cle.json", "empty", b"", "season/conformite/cle.json: empty"),
    ("cle.json", "a list", lambda d: [d], "season/conformite/cle.json: /: "),
    ("cle.json", "missing saison", _without("saison"), "season/conformite/cle.json: /: missing required field: "
                                                       "'saison'"),
    ("cle.json", "verdict a number", lambda d: (_key_entry(d).update(verdict=1), d)[1],
     "season/conformite/cle.json: /taches/conf-01/verdict: "),
    ("cle.json", "a key twice", b'{"format": "season-cle/1", "saison": 1, "saison": 1, "taches": {}}',
     'season/conformite/cle.json: /: the key "saison" appears more than once'),
    ("taches.json", "corrupt", b"{", "season/conformite/taches.json:1:2: not JSON"),
    ("taches.json", "empty", b"\n", "season/conformite/taches.json: empty"),
    ("taches.json", "a string", lambda d: "taches", "season/conformite/taches.json: /: "),
    ("taches.json", "missing taches", _without("taches"),
     "season/conformite/taches.json: /: missing required field: 'taches'"),
    ("taches.json", "saison a string", _with(saison="1"), "season/conformite/taches.json: /saison: '1' is not "
                                                          "of type"),
]


SEASON_COMMAND_CASES = ("cle.json-corrupt", "cle.json-empty", "cle.json-a list", "cle.json-missing saison",
                        "cle.json-verdict a number", "taches.json-a string")


def _spoil(world: ScoreWorld, name: str, content: Callable[[dict[str, Any]], Any] | bytes) -> None:
    path = world.root / "season/conformite" / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(json.dumps(content(json.loads(path.read_text("utf-8"))), ensure_ascii=False), "utf-8")


@pytest.mark.parametrize(("name", "case", "content", "says"), SEASON_CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in SEASON_CASES])
def test_every_season_file_defect_is_named(world: ScoreWorld, name: str, case: str, content: Any,
                                           says: str) -> None:
    _spoil(world, name, content)
    with pytest.raises(ScoreInputError) as caught:
        load_inputs(world.root, CONFORMITE)
    assert str(caught.value).startswith(says) and "\n" not in str(caught.value), str(caught.value)


@pytest.mark.parametrize(("name", "case", "content", "says"),
                         [pytest.param(*c, id=f"{c[0]}-{c[1]}") for c in SEASON_CASES
                          if f"{c[0]}-{c[1]}" in SEASON_COMMAND_CASES])
def test_a_bad_season_file_is_one_line_naming_it(world: ScoreWorld, tmp_path: Path, name: str, case: str,
                                                 content: Any, says: str) -> None:
    _spoil(world, name, content)
    sub = tmp_path / "conf-01.json"
    sub.write_text(json.dumps(submission(world, "conf-01", "conforme", HONEST_01)), "utf-8")
    code, err = corpus("score", str(sub), "--root", str(world.root), cwd=tmp_path)
    line = one_line(err)
    assert code == 1, err
    assert line.startswith(f"corpus score: {says}"), line


# ------------------------------------------------------------------------------------- the score report

@pytest.fixture(scope="module")
def report_bytes(pristine_world: ScoreWorld, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """The --json report of ``corpus score`` on two tasks and a stray submission."""
    world, tmp_path = pristine_world, tmp_path_factory.mktemp("typed-report")
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "conf-01.json").write_text(json.dumps(submission(world, "conf-01", "conforme", HONEST_01)), "utf-8")
    (subs / "conf-02.json").write_text(json.dumps(submission(world, "conf-02", "conforme", HONEST_02)), "utf-8")
    (subs / "stray.json").write_text(json.dumps({"task_id": "conf-99"}), "utf-8")
    out = tmp_path / "report.json"
    code, err = corpus("score", str(subs), "--root", str(world.root), "--json", str(out), cwd=tmp_path)
    assert code == 0, err
    return out.read_bytes()


@pytest.fixture
def report_file(report_bytes: bytes, tmp_path: Path) -> Path:
    path = tmp_path / "report.json"
    path.write_bytes(report_bytes)
    return path


def test_the_report_reads_back_to_its_own_bytes(report_file: Path) -> None:
    data = report_file.read_bytes()
    report = ScoreReport.read(report_file)
    assert report.to_bytes() == data
    assert report.reussite == 1 and [t.tache for t in report.taches] == ["conf-01", "conf-02"]
    assert all(t.fichier and t.fichier.endswith(f"{t.tache}.json") for t in report.taches)
    assert [s.task_id for s in report.hors_saison] == ["conf-99"]
    assert report.hors_saison[0].fichier is not None and report.hors_saison[0].fichier.endswith("stray.json")
    assert report.taches[1].verdict_attendu == "non_conforme" and not report.taches[1].verdict_exact


def _report_edit(change: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
    def edit(data: dict[str, Any]) -> Any:
        change(data)
        return data
    return edit


REPORT_CASES: list[tuple[str, Callable[[dict[str, Any]], Any] | bytes, str]] = [
    ("corrupt", b'{"format": ', ":1:12: not JSON"),
    ("empty", b"", ": empty"),
    ("a list", lambda d: [d], ": /: expected an object"),
    ("other format", _with(format="corpus-score/2"), ": /format: expected 'corpus-score/1'"),
    ("missing reussite", _without("reussite"), ": /reussite: expected a count"),
    ("reussite a string", _with(reussite="1"), ": /reussite: expected a count"),
    ("taux above 1", _report_edit(lambda d: d["overclaim"].update(taux=2)), ": /overclaim/taux: expected a rate"),
    ("a task's fonde a string", _report_edit(lambda d: d["taches"][1].update(fonde="non")),
     ": /taches/1/fonde: expected true or false"),
    ("an assertion without id", _report_edit(lambda d: d["taches"][0]["assertions"][0].pop("id")),
     ": /taches/0/assertions/0/id: expected a string"),
    ("a missing fact without critere", _report_edit(lambda d: d["taches"][1]["faits_manquants"].append({})),
     ": /taches/1/faits_manquants/0/ressource: expected a string"),
]


@pytest.mark.parametrize(("case", "content", "says"), REPORT_CASES, ids=[c[0] for c in REPORT_CASES])
def test_a_bad_report_is_one_error_naming_it(report_file: Path, case: str, content: Any, says: str) -> None:
    if isinstance(content, bytes):
        report_file.write_bytes(content)
    else:
        report_file.write_text(json.dumps(content(json.loads(report_file.read_text("utf-8")))), "utf-8")
    with pytest.raises(ReportError) as caught:
        ScoreReport.read(report_file)
    message = str(caught.value)
    assert message.startswith(f"{report_file}{says}") and "\n" not in message, message


def test_a_verification_file_reads_back_to_its_own_bytes() -> None:
    """The proofs' verdicts (``--proofs FILE``): :func:`check_proofs` then :func:`proofs_bytes` give the bytes."""
    verdicts = {"prf_1": {"valide": True, "identite_liee": False, "motif_1": "", "motif_2": "spec_version 1.2",
                          "heure": "", "hashes_plats": {"request_hash": "ab", "response_hash": "cd"}},
                "prf_2": {"valide": True, "identite_liee": True, "motif_1": "", "motif_2": "", "heure": "t",
                          "hashes_plats": {}, "spec_version": "3.1",
                          "engagements": {"request_hash": "01", "response_hash": None},
                          "non_verifie": ["Rekor"], "incidents": [], "agent_identity": "did:key:z6Mk"},
                "prf_3": {"en_attente": True, "motif": "batch pending"}}
    data = proofs_bytes(check_proofs(verdicts))
    assert proofs_bytes(check_proofs(json.loads(data))) == data
    assert json.loads(data) == verdicts
