"""Sources written by a careless or malicious author: each class of defect, one fixture or more.

Every case is the valid fixture plus one hostile edit. The tests assert the complete list of problems
``corpus check`` prints, and that ``corpus build`` refuses with exactly the same errors and leaves the
previous build untouched (check says no exactly when build says no). Cases that only warn must still
build. Nothing here may hang or exhaust memory: the FIFO cases run the real CLI in a subprocess with a
timeout, so a regression fails instead of blocking the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest
from corpusfix import Edit, apply, copy_fixture, problem_lines, replace, write
from season_fixtures import KEY, TASKS, World, edit, edit_in_block, load_problem_lines, make_world, position
from season_fixtures import problem_lines as problem_lines_season
from trackfix import CONFORMITE

from generator.base.errors import CorpusError, Severity
from generator.base.text_policy import MAX_DEPTH, MAX_FILE_BYTES
from generator.compiler.pipeline import build, check
from generator.reading.season_model import MAX_COUNT_DIGITS
from generator.tracks.model import DEFAULT_BASE_URL

E1 = "entites/ENT-0001.yaml"
E2 = "entites/ENT-0002.yaml"
SY = "systeme.yaml"
RF = "referentiel.yaml"
DATE = "    date_debut: 2019-06-15\n"  # ENT-0002's only agrément
DENOMINATION = "  denomination: Cabinet Sans-Bénéficiaires\n"
# When ENT-0002.yaml cannot be loaded, the liste des agréés that cites its entity and agrément says so too.
LOST_ENT2 = tuple(f"corpus_src/conformite/listes/agrees/conseil-en-investissements-financiers.yaml:{line}:9: "
                  f"pages[0].entrees[0].{field}: {path} does not exist and is not declared absent (add it to "
                  "corpus_src/conformite/absents.yaml if the reference is deliberate)"
                  for line, field, path in ((5, "agrement", "/agrements/AGR-0002"),
                                            (6, "entite", "/entites/ENT-0002")))
FJ = "corpus_src/conformite/entites/ENT-0002.yaml:4:20: entite.forme_juridique"
NOT_ALLOWED_TAG = "is not allowed: write the value without a tag (a plain string, or exactly true, false or null)"


def symlink(relative: str, target: str) -> Edit:
    def edit(src: Path) -> None:
        path = src / relative
        if path.exists() or path.is_symlink():
            path.unlink()
        path.symlink_to(target)
    return edit


def outside_link(relative: str, text: str) -> Edit:
    """A valid-looking source written beside ``corpus_src/`` (out of the tree), linked from inside it."""
    def edit(src: Path) -> None:
        target = src.parent / "elsewhere.yaml"
        target.write_text(text, "utf-8")
        (src / relative).symlink_to(target)
    return edit


def linked_folder(relative: str) -> Edit:
    """A source folder moved out of the tree and linked back in: nothing is read through the link."""
    def edit(src: Path) -> None:
        moved = src.parent / "moved-away"
        (src / relative).rename(moved)
        (src / relative).symlink_to(moved)
    return edit


def write_bytes(relative: str, data: bytes) -> Edit:
    def edit(src: Path) -> None:
        (src / relative).write_bytes(data)
    return edit


def mkdir(relative: str) -> Edit:
    def edit(src: Path) -> None:
        (src / relative).mkdir(parents=True)
    return edit


@dataclass(frozen=True)
class Case:
    id: str
    edits: tuple[Edit, ...]
    expected: tuple[str, ...]  # every line corpus check prints, errors and warnings


def case(cid: str, edits: list[Edit], *expected: str) -> Case:
    return Case(cid, tuple(edits), expected)


def _nested(depth: int) -> str:
    return "deep: " + "{a: " * depth + "x" + "}" * depth + "\n"


CASES = [
    # --- silent wrong bytes: patterns are whole-string, nothing follows a date, id, key or path ------------
    case("date-trailing-newline", [replace(E2, DATE, '    date_debut: "2021-02-30\\n"\n')],
         "corpus_src/conformite/entites/ENT-0002.yaml:16:5: agrements[0].date_debut: '2021-02-30\\n' is not a "
         "date: write it "
         'year-month-day, four digits, two and two, joined by hyphens, as "2026-07-01" (a line feed is not '
         "allowed here)"),
    case("date-block-literal", [replace(E2, DATE, "    date_debut: |\n      2021-01-04\n")],
         "corpus_src/conformite/entites/ENT-0002.yaml:16:5: agrements[0].date_debut: '2021-01-04\\n' is not a "
         "date: write it "
         'year-month-day, four digits, two and two, joined by hyphens, as "2026-07-01" (a line feed is not '
         "allowed here)"),
    case("systeme-key-newline", [replace(SY, '"400": {', '"499\\n": {erreur: x, message: y}\n"400": {')],
         "corpus_src/conformite/systeme.yaml:1:1: 499\\n: character U+000A LINE FEED ('\\n') is not allowed in "
         "a key"),
    case("id-escaped-newline", [replace(E2, "  - id: AGR-0002\n", '  - id: "AGR-0002\\n"\n')],
         "corpus_src/conformite/entites/ENT-0002.yaml:7:15: entite.agrements[0]: /agrements/AGR-0002 does not "
         "exist and is "
         "not declared absent (add it to corpus_src/conformite/absents.yaml if the reference is deliberate)",
         "corpus_src/conformite/entites/ENT-0002.yaml:12:5: agrements[0].id: 'AGR-0002\\n' is not an id of "
         "/agrements/: "
         "write one like AGR-0001 (a line feed is not allowed here)", LOST_ENT2[0]),
    # --- unbounded memory or a hang -----------------------------------------------------------------------
    case("billion-laughs", [write("entites/ENT-0009.yaml", 'a: &a ["lol","lol","lol","lol","lol"]\n'
                                  + "".join(f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n"
                                            for p, c in zip("abcdefgh", "bcdefghi", strict=True)))],
         "corpus_src/conformite/entites/ENT-0009.yaml:1:4: a: YAML anchors are not allowed (&a): write each "
         "value out"),
    case("symlink-to-a-source-outside", [outside_link("entites/ENT-0009.yaml", "entite:\n  id: ENT-0009\n")],
         "corpus_src/conformite/entites/ENT-0009.yaml: a symbolic link: sources must be regular files inside "
         "the source "
         "folder (copy the file instead of linking it)"),
    case("linked-folder", [linked_folder("listes/agrees")],
         "corpus_src/conformite/listes/agrees: a symbolic link: sources must be regular files inside the source "
         "folder (copy "
         "the file instead of linking it)"),
    case("symlink-to-dev-zero", [symlink("entites/ENT-0009.yaml", "/dev/zero")],
         "corpus_src/conformite/entites/ENT-0009.yaml: a symbolic link: sources must be regular files inside "
         "the source "
         "folder (copy the file instead of linking it)"),
    case("fixed-file-symlink-out-of-tree", [symlink("absents.yaml", "/etc/hostname")],
         "corpus_src/conformite/absents.yaml: cannot read: a symbolic link: sources must be regular files "
         "inside the source "
         "folder (copy the file instead of linking it)",
         "corpus_src/conformite/entites/ENT-0001.yaml:8:36: entite.agrements[1]: /agrements/AGR-0999 does not "
         "exist and is "
         "not declared absent (add it to corpus_src/conformite/absents.yaml if the reference is deliberate)"),
    case("file-too-large", [write_bytes("entites/ENT-0009.yaml", b"# " + b"x" * MAX_FILE_BYTES + b"\n")],
         f"corpus_src/conformite/entites/ENT-0009.yaml: file larger than {MAX_FILE_BYTES} bytes: split it, or "
         f"ask for the "
         "limit to be raised (docs/authoring.md)"),
    # --- tracebacks instead of messages -------------------------------------------------------------------
    case("recursive-alias", [write("entites/ENT-0009.yaml", "a: &a [*a]\n")],
         "corpus_src/conformite/entites/ENT-0009.yaml:1:4: a: YAML anchors are not allowed (&a): write each "
         "value out"),
    case("deep-mapping", [write("entites/ENT-0009.yaml", _nested(700))],
         f"corpus_src/conformite/entites/ENT-0009.yaml:1:{3 + 4 * MAX_DEPTH}: deep.a.a…: nesting deeper than "
         f"{MAX_DEPTH} "
         f"levels is not allowed (level {MAX_DEPTH + 1} opens here; the nesting starts at line 1, column 7)"),
    case("latin-1-byte", [write_bytes("entites/ENT-0009.yaml", b"entite:\n  siege: 2 rue de l'\xe9glise\n")],
         "corpus_src/conformite/entites/ENT-0009.yaml:2:21: not valid UTF-8: byte(s) \\xe9 invalid continuation "
         "byte (in "
         "Latin-1 it would be 'é': the file is probably Latin-1); save the file as UTF-8"),
    case("utf-16", [write_bytes("entites/ENT-0009.yaml", "entite: {}\n".encode("utf-16"))],
         "corpus_src/conformite/entites/ENT-0009.yaml:1:1: the file is UTF-16 (or UTF-32): save it as UTF-8"),
    # --- check says yes, build says no -------------------------------------------------------------------
    case("deep-list-in-parametres", [replace(RF, "statuts_conformes: [active]\n", "statuts_conformes: [active]\n"
                                             + "      profond: " + "[" * 40 + "x" + "]" * 40 + "\n")],
         f"corpus_src/conformite/referentiel.yaml:8:{12 + MAX_DEPTH}: criteres[0].parametres…: nesting deeper "
         f"than "
         f"{MAX_DEPTH} levels is not allowed (level {MAX_DEPTH + 1} opens here; the nesting starts at line 8, "
         "column 16)"),
    case("ressource-in-referentiel", [replace(RF, "titre: Référentiel de test\n",
                                              "titre: Référentiel de test\nressource: /autre\n")],
         "corpus_src/conformite/referentiel.yaml:2:1: ressource: 'ressource' is written by the compiler (it is "
         "the served "
         "path, /referentiel): remove it from the source"),
    case("table-in-referentiel", [replace(RF, "titre: Référentiel de test\n",
                                          "titre: Référentiel de test\nassertions:\n  regle: r\n"
                                          "  champs_qui_s_affirment: {}\n")],
         "corpus_src/conformite/referentiel.yaml:4:3: assertions.champs_qui_s_affirment: "
         "'champs_qui_s_affirment' is generated by the compiler from the criteria's champs (the table the scorer "
         "applies): remove it from the source"),
    case("statement-not-a-mapping", [replace(RF, "titre: Référentiel de test\n",
                                             "titre: Référentiel de test\nassertions: [r]\n")],
         "corpus_src/conformite/referentiel.yaml:2:1: assertions: 'assertions' is the statement of what may be "
         "asserted: a mapping (regle, formes...), or nothing"),
    case("pages-not-a-list", [replace("listes/agrees/conseil-en-investissements-financiers.yaml",
                                      "pages:\n  - page: 1\n", "pages: true\nx:\n  - page: 1\n")],
         "corpus_src/conformite/listes/agrees/conseil-en-investissements-financiers.yaml:2:1: pages: true is "
         "not of type "
         "'array'",
         "corpus_src/conformite/listes/agrees/conseil-en-investissements-financiers.yaml:3:1: x: unknown field "
         "(not in the "
         "schema of listes-agrees; check its spelling)"),
    case("reference-field-missing", [replace(E2, "    entite: /entites/ENT-0002\n", "")],
         "corpus_src/conformite/entites/ENT-0002.yaml:12:5: agrements[0]: missing required field: 'entite'"),
    # --- a documented rule not enforced: every explicit tag ------------------------------------------------
    case("tag-non-specific", [replace(E2, "  forme_juridique: SARL\n", "  forme_juridique: ! SARL\n")],
         f"{FJ}: explicit tag '!' {NOT_ALLOWED_TAG}", *LOST_ENT2),
    case("tag-non-specific-true", [replace(E2, "  forme_juridique: SARL\n", "  forme_juridique: ! true\n")],
         f"{FJ}: explicit tag '!' {NOT_ALLOWED_TAG}", *LOST_ENT2),
    case("tag-verbatim", [replace(E2, "  forme_juridique: SARL\n",
                                  "  forme_juridique: !<tag:proveit-corpus,implicit:str> SARL\n")],
         f"{FJ}: explicit tag '"
         f"tag:proveit-corpus,implicit:str' {NOT_ALLOWED_TAG}", *LOST_ENT2),
    case("tag-directive", [replace(E2, "entite:\n", "%TAG !e! tag:example.com,2000:\n---\nentite:\n")],
         "corpus_src/conformite/entites/ENT-0002.yaml:1:1: %TAG directives are not allowed: write values "
         "without tags",
         *LOST_ENT2),
    case("tag-private", [replace(E2, "  forme_juridique: SARL\n", "  forme_juridique: !sarl SARL\n")],
         f"{FJ}: explicit tag '!sarl' {NOT_ALLOWED_TAG}", *LOST_ENT2),
    # --- weak messages ---------------------------------------------------------------------------------------
    case("raw-line-separator", [replace(E2, DENOMINATION, "  denomination: Cabinet\u2028Sans\n")],
         "corpus_src/conformite/entites/ENT-0002.yaml:3:24: character U+2028 LINE SEPARATOR ('\\u2028') is not "
         "allowed in a "
         "source: remove it (it is invisible or breaks lines)", *LOST_ENT2),
    case("raw-next-line", [replace(E2, DENOMINATION, "  denomination: Cabinet\x85Sans\n")],
         "corpus_src/conformite/entites/ENT-0002.yaml:3:24: character U+0085 NEXT LINE (NEL) ('\\x85') is not "
         "allowed in a "
         "source: remove it (it is invisible or breaks lines)", *LOST_ENT2),
    case("escaped-bidi-override", [replace(E2, DENOMINATION, '  denomination: "Cabinet \\u202eSans"\n')],
         "corpus_src/conformite/entites/ENT-0002.yaml:3:17: entite.denomination: character U+202E RIGHT-TO-LEFT "
         "OVERRIDE "
         "('\\u202e') is not allowed in a value (docs/authoring.md, Characters)", *LOST_ENT2),
    case("escaped-nul", [replace(E2, DENOMINATION, '  denomination: "Cabinet\\0"\n')],
         "corpus_src/conformite/entites/ENT-0002.yaml:3:17: entite.denomination: character U+0000 NUL ('\\x00') "
         "is not "
         "allowed in a value (docs/authoring.md, Characters)", *LOST_ENT2),
    case("long-value-cut", [replace(E2, "  statut: en-liquidation\n", "  statut: " + "z" * (1 << 20) + "\n")],
         "corpus_src/conformite/entites/ENT-0002.yaml:6:3: entite.statut: '" + "z" * 60 + "'… (1048576 "
                                                                                          "characters) is not "
         "one of ['active', 'en-liquidation', 'en-redressement', 'radiee']"),
    case("page-number-newline", [replace(E1, "    - page: 2\n", '    - page: "2\\n"\n')],
         "corpus_src/conformite/entites/ENT-0001.yaml:50:7: beneficiaires.pages[1].page: '2\\n' is not a page "
         "number: "
         'write a whole number from 1 to 999 in digits, as "2" (a line feed is not allowed here)'),
    case("upper-case-extension", [write("entites/ENT-0009.YAML", "entite: {}\n")],
         "corpus_src/conformite/entites/ENT-0009.YAML: not read: sources end in '.yaml' (lowercase): rename it "
         "ENT-0009.yaml"),
    case("yml-extension", [write("listes/agrees/gestion.yml", "activite: gestion\n")],
         "corpus_src/conformite/listes/agrees/gestion.yml: not read: sources end in '.yaml' (lowercase): rename "
         "it "
         "gestion.yaml"),
    case("unknown-extension", [write("entites/notes.txt", "à faire\n")],
         "corpus_src/conformite/entites/notes.txt: unknown file, not read (this folder holds <name>.yaml files "
         "only)"),
    case("unknown-top-level-file", [write("absent.yaml", "absents: []\n")],
         "corpus_src/conformite/absent.yaml: unknown file, not read (this folder holds corpus.yaml, "
         "referentiel.yaml, "
         "systeme.yaml, absents.yaml)"),
    case("sub-folder", [write("entites/archives/ENT-0009.yaml", "entite: {}\n")],
         "corpus_src/conformite/entites/archives: sub-folder not read: entites has no sub-folders (see "
         "docs/authoring.md)"),
    case("emacs-lock-file", [symlink("entites/.#ENT-0001.yaml", "user@host.12345:1700000000")],
         "warning: corpus_src/conformite/entites/.#ENT-0001.yaml: ignored: an editor lock or autosave file"),
    case("backup-file", [write("entites/ENT-0001.yaml~", "entite: {}\n"), write("listes/.x.yaml.swp", "")],
         "warning: corpus_src/conformite/entites/ENT-0001.yaml~: ignored: an editor backup or swap file",
         "warning: corpus_src/conformite/listes/.x.yaml.swp: ignored: an editor backup or swap file"),
    # --- accepted without a word: decided, and said ---------------------------------------------------------
    case("nfd-value", [replace(E2, DENOMINATION, "  denomination: " + unicodedata.normalize(
        "NFD", "Cabinet Sans-Bénéficiaires") + "\n")],
         "corpus_src/conformite/entites/ENT-0002.yaml:3:17: entite.denomination: text not in Unicode NFC form "
         "(write "
         "composed characters, e.g. 'é' as one character); see docs/authoring.md", *LOST_ENT2),
    case("nfc-nfd-keys", [replace(RF, "      statuts_conformes: [active]\n", "      statuts_conformes: [active]\n"
                                  "      clé: a\n      " + unicodedata.normalize("NFD", "clé") + ": b\n")],
         "corpus_src/conformite/referentiel.yaml:9:7: "
         f"criteres[0].parametres.{unicodedata.normalize('NFD', 'clé')}: key "
         "not in Unicode NFC form; its NFC form is already a key at line 8"),
    case("end-before-start", [replace(E2, "date_fin_validite: 2029-06-14\n", "date_fin_validite: 2018-06-14\n")],
         "warning: corpus_src/conformite/entites/ENT-0002.yaml:17:5: agrements[0].date_fin_validite: 2018-06-14 "
         "is before "
         "date_debut 2019-06-15 (served as written; make sure the trap is intended)"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_check_names_the_problem(case: Case, tmp_path: Path) -> None:
    src = apply(copy_fixture(tmp_path), case.edits)
    assert problem_lines(src) == list(case.expected)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_build_refuses_exactly_what_check_reports(case: Case, tmp_path: Path) -> None:
    """Parity: build fails with check's errors (and nothing else), or succeeds when check has none."""
    pristine = copy_fixture(tmp_path / "pristine")
    out = tmp_path / "out"
    build(pristine, out, DEFAULT_BASE_URL, CONFORMITE)
    before = _tree(out)
    src = apply(copy_fixture(tmp_path / "edited"), case.edits)
    errors = [str(p) for p in check(src, CONFORMITE) if p.severity is Severity.ERROR]
    if not errors:
        build(src, out, DEFAULT_BASE_URL, CONFORMITE)
        return
    with pytest.raises(CorpusError) as info:
        build(src, out, DEFAULT_BASE_URL, CONFORMITE)
    assert [str(p) for p in info.value.problems] == errors
    assert _tree(out) == before


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _cli(args: list[str], root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "generator.cli", *args, "--root", str(root)], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(Path.cwd())})


@pytest.mark.parametrize("relative", ["entites/ENT-0009.yaml", "absents.yaml"])
def test_fifo_named_like_a_source_does_not_hang(relative: str, tmp_path: Path) -> None:
    src = copy_fixture(tmp_path)
    path = src / relative
    if path.exists():
        path.unlink()
    os.mkfifo(path)
    for command in ("check", "build"):
        result = _cli([command], tmp_path)  # a hang fails on the subprocess timeout instead of blocking
        assert result.returncode == 1
        assert f"corpus_src/conformite/{relative}: " in result.stderr and "not a regular file" in result.stderr
        assert "Traceback" not in result.stderr
    assert not (tmp_path / "build/conformite").exists()


@pytest.mark.parametrize("base_url", ["", "https://corpus example", "https://corpus.example\n",
                                      "https://corpus.example?x=1", "https://corpus.example#top",
                                      "ftp://corpus.example", "https://user@corpus.example",
                                      "https://corpus.example:99999", "https://corpus.example:0",
                                      "https://corpus.example:08080", "https://corpus.example:",
                                      "https://-bad-.example", "https://bad-.example", "https://corpus..example",
                                      "https://" + "a" * 64 + ".example", "https://" + "a." * 2500 + "example",
                                      "https://256.1.1.1", "https://1.2.3", "https://01.2.3.4", "https://[::g]",
                                      "https://corpus.example/p/../q", "https://corpus.example/./q",
                                      "https://corpus.example/p//q", "https://corpus.example/p/"])
def test_odd_base_url_is_refused(base_url: str, tmp_path: Path) -> None:
    src = copy_fixture(tmp_path)
    with pytest.raises(CorpusError) as info:
        build(src, tmp_path, base_url, CONFORMITE)
    [problem] = info.value.problems
    assert str(problem).startswith("--base-url: ") and "is not a base URL" in str(problem)
    assert "\n" not in str(problem) and len(str(problem)) < 400
    assert not (tmp_path / "build/conformite").exists() and not (tmp_path / "manifest/conformite").exists()


@pytest.mark.parametrize("base_url", ["https://corpus.example", "http://127.0.0.1:8080", "https://h.example/c-1",
                                      "https://corpus.example:65535/a.b/c~d", "http://[::1]:1",
                                      "https://" + "a" * 63 + ".example", "https://x-1.y2.example"])
def test_plain_base_urls_build(base_url: str, tmp_path: Path) -> None:
    build(copy_fixture(tmp_path), tmp_path, base_url, CONFORMITE)
    assert (tmp_path / "manifest/conformite/manifest.json").is_file()


def test_no_case_is_a_no_op(tmp_path: Path) -> None:
    """Every hostile edit changes what check says about the valid fixture (which says nothing)."""
    assert problem_lines(copy_fixture(tmp_path)) == []
    assert all(c.expected for c in CASES)



# --- season sources: the same loader, the same whole-string rules ------------------------------------------------

@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    return make_world(tmp_path_factory.mktemp("hostile-season"))


QUOTED = '"conf-01\\n"'  # as written in the YAML: a double-quoted key with an escaped line feed


def test_key_task_id_with_a_newline_is_refused(world: World, tmp_path: Path) -> None:
    """``"conf-01\\n"`` would reach season/conformite/cle.json, the file the freeze commits to."""
    key = edit(world.key_text(), "\n  conf-01:\n", f"\n  {QUOTED}:\n")
    lines = load_problem_lines(world, tmp_path, key=key)
    assert lines == [f"{KEY}:{position(key, QUOTED)}: taches.conf-01\\n: character U+000A LINE FEED ('\\n') "
                     "is not allowed in a key"]


def test_count_of_5001_digits_is_a_message(world: World, tmp_path: Path) -> None:
    digits = "9" * 5001
    tasks = edit_in_block(world.tasks_text(), "  - id: conf-01\n", 'minimum: "2"', f'minimum: "{digits}"')
    lines = load_problem_lines(world, tmp_path, tasks=tasks)
    assert lines == [f"{TASKS}:{position(tasks, 'minimum')}: taches[0].assertions.minimum: '{'9' * 60}'… "
                     f"(5001 characters) is not a count of at most {MAX_COUNT_DIGITS} digits"]


def test_task_naming_a_missing_entity_is_reported_once(world: World, tmp_path: Path) -> None:
    tasks = edit_in_block(world.tasks_text(), "  - id: conf-01\n", "entite: /entites/ENT-4102",
                          "entite: /entites/ENT-9999")
    lines = problem_lines_season(world, tmp_path, tasks=tasks)
    about = [line for line in lines if "conf-01" in line]
    assert about == [f"{TASKS}:{position(tasks, 'entite: /entites/ENT-9999')}: taches[0].entite: task conf-01 "
                     "names /entites/ENT-9999, which the built corpus does not serve (existe: false): name an "
                     "entity of corpus_src/conformite/entites/, or add ENT-9999 there and rebuild; the task's "
                     "other checks "
                     "are skipped"]
