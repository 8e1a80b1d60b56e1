"""``corpus graph``: the pictures hold exactly a task's graph, mark what is absent and what founds the key,
and stay out of every served folder.

The tasks drawn are a small fixture season written here (two tasks on the test corpus of
``tests/fixtures/valid``, judged by the repository's real ``/referentiel``), so the expected nodes, links
and calls below are read off the fixture's YAML by hand, not taken from the code under test; only the
last test draws the real season, as a smoke test.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from types import SimpleNamespace

import pytest
from cli_run import run_corpus
from season_fixtures import ROOT, edit
from trackfix import CONFORMITE, copy_tracks

from generator.cli.main import main
from generator.compiler.pipeline import build
from generator.drawing.task_drawing import Highlight, attribute, draw_task
from generator.reading.graph import task_graph
from generator.reading.reader import CorpusReader, Fact
from generator.reading.season_model import load_season
from generator.track_code.conformite.evaluator import evaluate
from generator.tracks.model import DEFAULT_BASE_URL

SVG = "{http://www.w3.org/2000/svg}"
DENOMINATION = "Société \"Érable\" d'Essai & <Fils>"
QUESTION = "L'entité « Érable » dite \"d'Essai\" & <Fils> est-elle conforme au 15 juin 2026 ?"

TASKS = f"""saison: 1
piste: conformite
taches:
  - id: conf-01
    entite: /entites/ENT-0001
    activite: courtage-en-assurance
    date_examen: 2026-06-15
    question: '{QUESTION.replace("'", "''")}'
    assertions: {{minimum: "2", plafond: "4"}}
  - id: conf-02
    entite: /entites/ENT-0002
    activite: conseil-en-investissements-financiers
    date_examen: 2026-06-15
    question: Le cabinet est-il conforme ?
    assertions: {{minimum: "3", plafond: "6"}}
"""
KEY = """saison: 1
taches:
  conf-01:
    famille: P1
    verdict: indeterminable
    piege: L'agrément "de secours" d'Érable & <Fils> est absent ; le premier a expiré.
    faits:
      - ressource: /entites/ENT-0001
        champ: /agrements/1
        valeur: /agrements/AGR-0999
        critere: C2
      - {ressource: /agrements/AGR-0999, champ: /existe, valeur: false, critere: C2}
      - {ressource: /agrements/AGR-0001, champ: /date_fin_validite, valeur: "2026-03-31", critere: C2}
  conf-02:
    famille: P2
    verdict: non_conforme
    piege: La fiche est en liquidation.
    faits:
      - {ressource: /entites/ENT-0002, champ: /statut, valeur: en-liquidation, critere: C1}
"""

# The graph of conf-01 read off tests/fixtures/valid/corpus_src by hand (spec §5.2).
PROPER = {"/entites/ENT-0001", "/agrements/AGR-0001", "/agrements/AGR-0999", "/attestations/ATT-0001",
          "/avenants/AVN-0001", "/avenants/AVN-0002", "/beneficiaires/ENT-0001/1", "/beneficiaires/ENT-0001/2"}
COMMON = {"/listes/agrees/courtage-en-assurance/1", "/listes/agrees/courtage-en-assurance/2",
          "/mesures-restrictives/1"}
# (source, pointer, target); the back-links (/entite, /attestation) fold into the link they answer.
EDGES = {
    ("/entites/ENT-0001", "/agrements/0", "/agrements/AGR-0001"),
    ("/entites/ENT-0001", "/agrements/1", "/agrements/AGR-0999"),
    ("/entites/ENT-0001", "/attestations/0", "/attestations/ATT-0001"),
    ("/entites/ENT-0001", "/beneficiaires", "/beneficiaires/ENT-0001/1"),
    ("/attestations/ATT-0001", "/avenants/0", "/avenants/AVN-0001"),
    ("/attestations/ATT-0001", "/avenants/1", "/avenants/AVN-0002"),
    ("/beneficiaires/ENT-0001/1", "/page_suivante", "/beneficiaires/ENT-0001/2"),
    ("/listes/agrees/courtage-en-assurance/1", "/page_suivante", "/listes/agrees/courtage-en-assurance/2"),
    ("/listes/agrees/courtage-en-assurance/2", "/entrees/0/agrement", "/agrements/AGR-0001"),
    ("/listes/agrees/courtage-en-assurance/2", "/entrees/0/entite", "/entites/ENT-0001"),
}
# The reference reading by hand: C2 reads AGR-0001 (expired at 2026-06-15, so its list entry is not
# sought), then the absent AGR-0999, then the liste des agréés whole (a literal reader of C2 reads it,
# whatever the agréments turn out to be); C3 the attestation and both avenants; C4 both pages, then the list.
CALLS = ["/entites/ENT-0001", "/agrements/AGR-0001", "/agrements/AGR-0999",
         "/listes/agrees/courtage-en-assurance/1", "/listes/agrees/courtage-en-assurance/2",
         "/attestations/ATT-0001", "/avenants/AVN-0001", "/avenants/AVN-0002", "/beneficiaires/ENT-0001/1",
         "/beneficiaires/ENT-0001/2", "/mesures-restrictives/1"]


def make_fixture(root: Path, tasks: str = TASKS, key: str = KEY) -> Path:
    """A project root: the test corpus (denomination with quotes, apostrophe, ampersand, angle brackets),
    the real référentiel, and the two-task season above (or the given one); corpus built."""
    src = root / "corpus_src/conformite"
    shutil.copytree(ROOT / "tests" / "fixtures" / "valid" / "corpus_src", src)
    copy_tracks(root)
    shutil.copy(ROOT / "corpus_src/conformite/referentiel.yaml", src / "referentiel.yaml")
    entity = src / "entites" / "ENT-0001.yaml"
    entity.write_text(edit(entity.read_text("utf-8"), "denomination: Société Érable-Test",
                           "denomination: '" + DENOMINATION.replace("'", "''") + "'"), "utf-8")
    (root / "season_src/conformite").mkdir(parents=True)
    (root / "season_src/conformite/taches.yaml").write_text(tasks, "utf-8")
    (root / "season_src/conformite/cle.yaml").write_text(key, "utf-8")
    build(src, root, DEFAULT_BASE_URL, CONFORMITE)
    return root


@pytest.fixture(scope="module")
def fixture_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_fixture(tmp_path_factory.mktemp("graph-world"))


@pytest.fixture(scope="module")
def drawn(fixture_root: Path) -> Path:
    """The fixture season drawn by the command, default output folder."""
    assert main(["graph", "--root", str(fixture_root)]) == 0
    return fixture_root / "run" / "graphs" / "conformite"  # each track into a folder named after it


def svg_parts(svg: Path) -> tuple[dict[str, ET.Element], dict[str, ET.Element]]:
    """Nodes by their <title> and edges by their id, as graphviz writes them (<g class="node|edge ...">)."""
    tree = ET.parse(svg)
    nodes, edges = {}, {}
    for g in tree.iter(f"{SVG}g"):
        classes = g.get("class", "").split()
        if "node" in classes:
            title = g.findtext(f"{SVG}title")
            assert title not in nodes, f"node {title} drawn twice"
            nodes[title] = g
        elif "edge" in classes:
            assert g.get("id") not in edges
            edges[g.get("id")] = g
    return nodes, edges


def texts(g: ET.Element) -> str:
    return " | ".join(t.text or "" for t in g.iter(f"{SVG}text"))


def tooltip(g: ET.Element) -> str:
    return " ".join(a.get("{http://www.w3.org/1999/xlink}title", "") for a in g.iter(f"{SVG}a"))


def test_svg_holds_exactly_the_graph(drawn: Path, fixture_root: Path) -> None:
    nodes, edges = svg_parts(drawn / "conf-01.svg")
    assert set(nodes) == PROPER | COMMON
    season = load_season(fixture_root / "season_src/conformite", CONFORMITE)
    graph = task_graph(CorpusReader(fixture_root / "build/conformite", CONFORMITE), season.statements[0].task)
    assert set(nodes) == set(graph.proper | graph.common)  # and the season's own graph agrees
    assert set(edges) == {f"{s}#{p}" for s, p, _ in EDGES}
    for source, pointer, target in EDGES:
        edge = edges[f"{source}#{pointer}"]
        assert edge.findtext(f"{SVG}title") == f"{source}->{target}"
        assert pointer in texts(edge)  # labelled by the pointer that carries the link
    for path in PROPER:
        assert "propre" in nodes[path].get("class", "").split()
    for path in COMMON:
        assert "liste-commune" in nodes[path].get("class", "").split()


def test_absent_resource_is_marked(drawn: Path) -> None:
    nodes, edges = svg_parts(drawn / "conf-01.svg")
    absent = [t for t, g in nodes.items() if "absent" in g.get("class", "").split()]
    assert absent == ["/agrements/AGR-0999"]
    assert "existe: false" in tooltip(nodes["/agrements/AGR-0999"])
    assert "stroke-dasharray" in ET.tostring(nodes["/agrements/AGR-0999"], encoding="unicode")
    assert "vers-absent" in edges["/entites/ENT-0001#/agrements/1"].get("class", "").split()
    assert "stroke-dasharray" not in ET.tostring(nodes["/agrements/AGR-0001"], encoding="unicode")


def test_founding_facts_are_highlighted_per_criterion(drawn: Path) -> None:
    nodes, edges = svg_parts(drawn / "conf-01.svg")
    founding = {t for t, g in nodes.items() if "fondement" in g.get("class", "").split()}
    assert founding == {"/agrements/AGR-0001", "/agrements/AGR-0999"}
    expired = nodes["/agrements/AGR-0001"]
    assert "fondement-C2" in expired.get("class", "").split()
    assert "C2 non établissable *" in texts(expired)
    assert '/date_fin_validite = "2026-03-31"' in texts(expired)
    assert "/existe = false" in texts(nodes["/agrements/AGR-0999"])
    link = edges["/entites/ENT-0001#/agrements/1"]
    assert "fondement-C2" in link.get("class", "").split()
    assert "fondement" not in edges["/entites/ENT-0001#/agrements/0"].get("class", "").split()
    nodes2, _ = svg_parts(drawn / "conf-02.svg")
    assert "fondement-C1" in nodes2["/entites/ENT-0002"].get("class", "").split()
    assert '/statut = "en-liquidation"' in texts(nodes2["/entites/ENT-0002"])
    assert "C1 faux *" in texts(nodes2["/entites/ENT-0002"])


def test_calls_are_numbered_in_order(drawn: Path) -> None:
    nodes, _ = svg_parts(drawn / "conf-01.svg")
    called = {t for t, g in nodes.items() if "appel" in g.get("class", "").split()}
    assert called == set(CALLS)
    for rank, path in enumerate(CALLS, 2):  # call 1 is /referentiel, read first and not drawn
        assert texts(nodes[path]).split(" | ")[0] == str(rank), path
        assert f"appel n° {rank} " in tooltip(nodes[path])


def test_texts_are_escaped(drawn: Path) -> None:
    dot = (drawn / "conf-01.dot").read_text("utf-8")
    assert "Société &quot;Érable&quot; d&#x27;Essai &amp; &lt;Fils&gt;" in dot
    assert DENOMINATION not in dot
    nodes, _ = svg_parts(drawn / "conf-01.svg")
    assert DENOMINATION in texts(nodes["/entites/ENT-0001"])  # and graphviz read it back whole
    page = (drawn / "index.html").read_text("utf-8")
    assert "&quot;d&#x27;Essai&quot; &amp; &lt;Fils&gt;" in page and "<Fils>" not in page
    assert "&quot;de secours&quot; d&#x27;Érable &amp; &lt;Fils&gt;" in page


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.links += [v for k, v in attrs if k in ("href", "src", "data") and v]


def test_index_links_every_task(drawn: Path) -> None:
    parser = _Links()
    parser.feed((drawn / "index.html").read_text("utf-8"))
    pictures = {link for link in parser.links if not link.startswith("#")}
    assert pictures == {"conf-01.svg", "conf-02.svg", "../index.html"}  # and the index of every track
    assert all((drawn / p).is_file() for p in pictures)
    page = (drawn / "index.html").read_text("utf-8")
    for cells in ("<td>P1</td><td>indeterminable</td><td>indeterminable</td><td>2–4</td>",
                  "<td>P2</td><td>non_conforme</td><td>non_conforme</td><td>3–6</td>"):
        assert cells in page


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_pictures_never_land_in_served_folders(tmp_path: Path) -> None:
    root = make_fixture(tmp_path / "w")
    before = {name: _tree(root / name / "conformite") for name in ("build", "manifest")}
    assert before["build"] and before["manifest"]
    assert main(["graph", "--root", str(root)]) == 0
    for name in ("build", "manifest"):
        assert _tree(root / name / "conformite") == before[name]
    inputs = [root / name for name in ("build", "manifest", "corpus_src", "season_src", "tracks")]
    written = sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                     if p.is_file() and not any(p.is_relative_to(folder) for folder in inputs))
    names = ("conf-01.dot", "conf-01.svg", "conf-02.dot", "conf-02.svg", "index.html")
    assert written == [*(f"run/graphs/conformite/{n}" for n in names), "run/graphs/index.html"]
    for bad in ("build", "build/conformite/graphs", "manifest/conformite/x", "nginx", "season",
        "build/conformite/../build/y"):
        assert main(["graph", "--root", str(root), "--out", str(root / bad)]) == 2
        assert _tree(root / "build/conformite") == before["build"] and _tree(
            root / "manifest/conformite") == before["manifest"]
    assert not (root / "build/conformite/graphs").exists() and not (root / "nginx").exists()


def test_out_is_only_run_or_outside_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--out`` is an allow-list: a folder under ROOT/run/ or outside ROOT, judged after resolving symlinks;
    the root itself (``.``, ``""``), ``releases/``, ``docs/``, ``run`` itself and a symlink into the tree
    are refused and leave the tracked tree as it was."""
    root = make_fixture(tmp_path / "w")
    (root / "docs").mkdir()
    outside = tmp_path / "elsewhere"
    (tmp_path / "link-to-root").symlink_to(root)
    (root / "run").mkdir()
    (root / "run" / "to-docs").symlink_to(root / "docs")
    monkeypatch.chdir(root)
    before = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    refused = [".", "", str(root), "releases", "releases/v1", "docs", "docs/x", "run", "run/../docs",
               "run/to-docs", "run/to-docs/x", str(tmp_path / "link-to-root"),
               str(tmp_path / "link-to-root" / "x")]
    for bad in refused:
        assert main(["graph", "conf-01", "--root", str(root), "--out", bad]) == 2, bad
        assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == before, bad
    result = run_corpus("graph", "conf-01", "--root", str(root), "--out", ".")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "inside the repository root" in result.stderr and "under run/" in result.stderr
    result = run_corpus("graph", "conf-01", "--root", str(root), "--out", "releases")
    assert result.returncode == 2 and "inside releases/ of the repository" in result.stderr
    result = run_corpus("graph", "conf-01", "--root", str(root), "--out", "")
    assert result.returncode == 2 and "empty" in result.stderr
    for good in ("run/g", "run/deep/er", str(outside)):
        assert main(["graph", "conf-01", "--root", str(root), "--out", good]) == 0, good
    assert (root / "run" / "g" / "conformite" / "conf-01.svg").is_file()
    assert (root / "run" / "deep" / "er" / "conformite" / "index.html").is_file()
    assert (outside / "conformite" / "conf-01.svg").is_file()
    assert not (root / "conf-01.svg").exists() and not (root / "index.html").exists()


def _corpus(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``corpus graph`` as a user runs it, in an environment of its own: the console script, its real stderr
    and exit status."""
    script = Path(sys.executable).parent / "corpus"
    return subprocess.run([str(script), "graph", *args], capture_output=True, text=True, timeout=60, check=False,
                          env=env)


def test_bad_out_and_unknown_task_are_clear(fixture_root: Path, tmp_path: Path) -> None:
    result = run_corpus("graph", "--root", str(fixture_root), "--out", str(fixture_root / "build/conformite/pics"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "inside build/" in result.stderr and "run/" in result.stderr
    assert not (fixture_root / "build/conformite/pics").exists()
    result = run_corpus("graph", "conf-01", "conf-77", "--root", str(fixture_root), "--out", str(tmp_path / "o"))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "unknown task(s) conf-77; tasks: conf-01, conf-02" in result.stderr
    assert not (tmp_path / "o").exists()
    (tmp_path / "file").write_text("x")
    result = run_corpus("graph", "--root", str(fixture_root), "--out", str(tmp_path / "file"))
    assert result.returncode == 2 and "not a folder" in result.stderr and "Traceback" not in result.stderr


def test_missing_dot_is_a_clear_error(fixture_root: Path, tmp_path: Path) -> None:
    result = _corpus("--root", str(fixture_root), "--out", str(tmp_path / "o"),
                     env={"PATH": str(tmp_path), "LANG": "C.UTF-8"})  # a PATH without dot
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "'dot' is not installed" in result.stderr and "make setup" in result.stderr
    assert not (tmp_path / "o").exists()


def test_same_inputs_same_dot_bytes(fixture_root: Path, tmp_path: Path) -> None:
    other = make_fixture(tmp_path / "elsewhere")  # another path, another build of the same sources
    assert main(["graph", "--root", str(fixture_root), "--out", str(tmp_path / "a")]) == 0
    assert main(["graph", "conf-01", "--root", str(other), "--out", str(tmp_path / "b")]) == 0
    assert (tmp_path / "a" / "conformite" / "conf-01.dot").read_bytes() == \
        (tmp_path / "b" / "conformite" / "conf-01.dot").read_bytes()


def test_png_format(fixture_root: Path, tmp_path: Path) -> None:
    assert main(["graph", "conf-02", "--root", str(fixture_root), "--out", str(tmp_path), "--format", "png"]) == 0
    assert (tmp_path / "conformite" / "conf-02.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert 'src="conf-02.png"' in (tmp_path / "conformite" / "index.html").read_text("utf-8")


def test_a_criterion_named_by_the_key_wins(fixture_root: Path) -> None:
    """A founding fact is drawn under the criterion the key names, with that criterion's state."""
    season = load_season(fixture_root / "season_src/conformite", CONFORMITE)
    reader = CorpusReader(fixture_root / "build/conformite", CONFORMITE)
    evaluation = evaluate(season.statements[0].task, reader)
    fact = Fact("/agrements/AGR-0001", "/date_fin_validite", "2026-03-31")
    as_c2 = attribute(SimpleNamespace(fact=fact, forms=(fact,), critere="C2"),
        evaluation)  # type: ignore[arg-type]
    assert isinstance(as_c2, Highlight)  # one criterion per key fact: no tuple, no "unattributed"
    assert (as_c2.critere, as_c2.etat, as_c2.text) == ("C2", "non_etablissable", "C2 non établissable")
    named = attribute(SimpleNamespace(fact=fact, forms=(fact,), critere="C3"),
        evaluation)  # type: ignore[arg-type]
    assert (named.critere, named.etat, named.text) == ("C3", "etabli", "C3 établi")
    array = Fact("/entites/ENT-0001", "/agrements", ["/agrements/AGR-0001", "/agrements/AGR-0999"])
    entry = season.key["conf-01"]
    whole = dataclasses.replace(entry, faits=(dataclasses.replace(entry.faits[0], fact=array, equivalents=()),))
    drawing = draw_task(season.statements[0], whole, reader)
    marked = {e.pointer for e in drawing.edges if e.marks}
    assert marked == {"/agrements/0", "/agrements/1"}  # a whole-array fact marks every link it holds


def test_an_absent_entity_is_drawn_alone_with_the_common_lists(tmp_path: Path) -> None:
    tasks = TASKS + """  - id: conf-03
    entite: /entites/ENT-0999
    activite: courtage-en-assurance
    date_examen: 2026-06-15
    question: La fiche existe-t-elle ?
    assertions: {minimum: "2", plafond: "4"}
"""
    key = KEY + """  conf-03:
    famille: P1
    verdict: indeterminable
    piege: Fiche absente.
    faits:
      - {ressource: /entites/ENT-0999, champ: /existe, valeur: false, critere: C1}
"""
    root = make_fixture(tmp_path / "w", tasks, key)
    assert main(["graph", "conf-03", "--root", str(root)]) == 0
    nodes, edges = svg_parts(root / "run" / "graphs" / "conformite" / "conf-03.svg")
    assert set(nodes) == {"/entites/ENT-0999", *COMMON}
    assert set(edges) == {"/listes/agrees/courtage-en-assurance/1#/page_suivante"}
    classes = nodes["/entites/ENT-0999"].get("class", "").split()
    assert {"absent", "appel", "fondement-C1"} <= set(classes)
    assert "C1 non établissable *" in texts(nodes["/entites/ENT-0999"])


def test_draws_the_real_season(tmp_path: Path) -> None:
    """Smoke test: every task of the committed season is drawn, and the index links each picture."""
    if not (ROOT / "build/conformite/referentiel.json").is_file():
        pytest.skip("no committed build")
    assert main(["graph", "--root", str(ROOT), "--out", str(tmp_path)]) == 0
    ids = [s.task.id for s in load_season(ROOT / "season_src/conformite", CONFORMITE).statements]
    page = (tmp_path / "conformite" / "index.html").read_text("utf-8")
    for task_id in ids:
        nodes, _ = svg_parts(tmp_path / "conformite" / f"{task_id}.svg")
        assert nodes and f'href="{task_id}.svg"' in page
    assert "(spec §5.2)</h1>" in page and "Ressources propres à l&#x27;entité" in page
    # the other track beside it, in its own folder, with its own title, legend and cluster labels
    other = (tmp_path / "generique" / "index.html").read_text("utf-8")
    assert "(spec §6.2)</h1>" in other and "Fiches produit (ressources d&#x27;option)" in other
    assert "entité" not in other
    dot = (tmp_path / "generique" / "gen-06.dot").read_text("utf-8")
    assert 'label="Fiches fournisseur"' in dot and "supplier" not in dot
    top = (tmp_path / "index.html").read_text("utf-8")
    assert 'href="conformite/index.html"' in top and 'href="generique/index.html"' in top
    for svg in [*(tmp_path / "conformite").glob("*.svg"), *(tmp_path / "generique").glob("*.svg")]:
        width = ET.parse(svg).getroot().get("width", "")  # fits a 1400 px window (1050 pt)
        assert width.endswith("pt") and float(width[:-2]) <= 1050, (svg.name, width)
