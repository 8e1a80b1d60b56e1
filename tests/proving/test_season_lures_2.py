"""bars/season-lures-2: what may be asserted, said once and positively, from the scorer's own table; the last
lures of season 1 (issue 42).

Read as a participant reads: the served référentiel's ``assertions`` (its rule, the table
``champs_qui_s_affirment``, the shapes it names, the content rule of common lists), the served bodies, the
barème section the participant is handed. Each test states one property on both tracks:

1. the table served is the one the scorer applies, the criteria's ``champs``, ``track.yaml``'s ``probants``
   and the barème section's own table, and one sentence says that any other pointer rejects the submission,
   where every task statement sends the reader; no other sentence lists what may not be asserted;
2. the pointer shapes are decided once, alike on both tracks (:func:`shape_problems`), every element of an
   assertable array is assertable, and the statement names each rejected shape;
3. every JSON Pointer into every served body of each task's graph, with its served value, is accepted by the
   scorer exactly when the statement says so; the reader's own shapes, in an otherwise honest submission
   scored by ``corpus score``'s code, get the statement's answer;
4. each référentiel cites only paragraphs of the barème section its participants are handed;
5. the realism points (a registration's grace period, ATT-8386 / AVN-7247, conf-07's cause, PRD-35054's
   catalogue price, the catalogue notice's C6 sentence).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

import pytest
from trackfix import CONFORMITE, GENERIQUE, ROOT

from generator.contract.manifest import Manifest
from generator.reading.reader import pointer_pattern
from generator.reading.season_model import load_season
from generator.score import make_submission, score_submissions
from generator.score.close import close_problems
from generator.score.inputs import ScoringInputs, load_inputs
from generator.tracks.assertable import STATEMENT, TABLE, consumed_fields, shape_problems
from generator.tracks.model import Track

TRACKS = [CONFORMITE, GENERIQUE]
ids = [t.piste for t in TRACKS]


def _body(track: Track, path: str) -> Any:
    return json.loads((ROOT / track.trees.build / (path.lstrip("/") + ".json")).read_bytes())


def _referentiel(track: Track) -> dict[str, Any]:
    return _body(track, track.referentiel)  # type: ignore[no-any-return]


def _served_table(track: Track) -> dict[str, set[str]]:
    return {prefix: set(patterns) for prefix, patterns in _referentiel(track)[STATEMENT][TABLE].items()}


def _section_table(track: Track) -> dict[str, set[str]]:
    """The barème section's table of probant fields, as its reader sees it (rows `| `/prefix/` | `a`, `b` |`)."""
    rows = re.findall(r"^\| `(/[a-z/-]+/)` \| (.+) \|$", (ROOT / track.bareme.file).read_text("utf-8"), re.M)
    return {prefix: set(re.findall(r"`([^`]+)`", cells)) for prefix, cells in rows}


_INPUTS: dict[str, ScoringInputs] = {}


def _inputs(track: Track) -> ScoringInputs:
    if track.piste not in _INPUTS:
        _INPUTS[track.piste] = load_inputs(ROOT, track)
    return _INPUTS[track.piste]


# --- 1. one table, one rule ---------------------------------------------------------------------------------

@pytest.mark.parametrize("track", TRACKS, ids=ids)
def test_the_table_served_is_the_scorers_the_criterias_the_tracks_and_the_sections(track: Track) -> None:
    served = _served_table(track)
    assert served == {prefix: set(p) for prefix, p in _inputs(track).champs.items()}
    assert served == {prefix: set(p) for prefix, p in consumed_fields(_referentiel(track)).items()}
    assert served == {c.prefix: set(c.probant) for c in track.collections if c.probant}
    assert served == _section_table(track)


@pytest.mark.parametrize("track", TRACKS, ids=ids)
def test_one_sentence_where_every_reader_is_sent_says_any_other_pointer_rejects_the_submission(
        track: Track) -> None:
    ref = _referentiel(track)
    regle = " ".join(ref[STATEMENT]["regle"].split())
    assert "champs_qui_s_affirment" in regle and "Tout autre pointeur fait rejeter la soumission entière" in regle
    assert list(ref).index(STATEMENT) == list(ref).index("objet") + 1  # read right after what a task is
    for statement in load_season(ROOT / track.trees.season_sources, track).statements:
        assert track.referentiel in statement.question, statement.task.id  # every reader is sent there
    # The scattered lists of what may not be asserted are gone: only the statement speaks of rejection.
    outside = json.dumps({k: v for k, v in ref.items() if k != STATEMENT}, ensure_ascii=False)
    assert not re.search(r"ne s'affirme(nt)? pas|rejeter la soumission", outside), \
        re.findall(r"[^.]{0,80}(?:ne s'affirme|rejeter la soumission)[^.]{0,40}", outside)


# --- 2. the shapes, decided once ----------------------------------------------------------------------------

def _pointers(value: Any, pointer: str = "") -> Iterator[tuple[str, Any]]:
    """Every JSON Pointer into ``value`` (the empty one first) with the value it names."""
    yield pointer, value
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _pointers(inner, f"{pointer}/{key.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield from _pointers(inner, f"{pointer}/{index}")


def _graph_bodies(track: Track) -> Iterator[tuple[str, str, Any]]:
    """(task id, path, parsed body) of every served body of each task's graph."""
    inputs = _inputs(track)
    for task_id in sorted(inputs.statements):
        for path in sorted(inputs.graph(task_id).paths):
            yield task_id, path, inputs.document(path)


@pytest.mark.parametrize("track", TRACKS, ids=ids)
def test_the_pointer_shapes_are_decided_once_and_alike_on_both_tracks(track: Track) -> None:
    table = {prefix: frozenset(p) for prefix, p in _served_table(track).items()}
    assert shape_problems(track, table) == []
    # An element of an array may be asserted wherever its whole array may: every assertable array served.
    missing = set()
    for _, path, body in _graph_bodies(track):
        prefix = _inputs(track).reader.collection_prefix(path)
        for pointer, value in _pointers(body):
            pattern = pointer_pattern(pointer)
            assertable = table.get(prefix, frozenset())
            if isinstance(value, list) and pattern in assertable and f"{pattern}/<n>" not in assertable:
                missing.add((prefix, pattern))
    assert missing == set()


@pytest.mark.parametrize("track", TRACKS, ids=ids)
def test_the_statement_names_each_rejected_shape(track: Track) -> None:
    formes = " ".join(" ".join(_referentiel(track)[STATEMENT]["formes"]).split())
    for shape in ("/entrees/<n>", "(/entrees)", "ressource", "page_suivante", "message", "existe",
                  "pointeur vide", "élément d'un tableau"):
        assert shape in formes, shape
    contenu = " ".join(_referentiel(track)[STATEMENT]["contenu"].split())
    assert "concerne" in contenu


# --- 3. every pointer ---------------------------------------------------------------------------------------

def _concerns(track: Track, task_id: str, path: str, pointer: str) -> bool:
    """The content rule as the statement's ``contenu`` words it, read apart from the scorer's code."""
    task = _inputs(track).statements[task_id].task
    parts = pointer.split("/")
    if track.piste == "generique" or len(parts) < 3 or parts[1] != "entrees":
        return True
    entry = _body(track, path)["entrees"][int(parts[2])]
    if path.startswith("/listes/agrees/"):
        return bool(entry["entite"] == task.entite)
    if path.startswith("/mesures-restrictives/"):
        owners, page = set(), _body(track, task.entite)["beneficiaires"]
        while page:
            body = _body(track, page)
            owners |= {(e["nom"], e["prenoms"]) for e in body.get("entrees", [])}
            page = body.get("page_suivante")
        return (entry["nom"], entry["prenoms"]) in owners
    return True


def _statement_accepts(track: Track, task_id: str, path: str, pointer: str) -> bool:
    table = _served_table(track)
    prefix = _inputs(track).reader.collection_prefix(path)
    return pointer_pattern(pointer) in table.get(prefix, set()) and _concerns(track, task_id, path, pointer)


@pytest.mark.parametrize("track", TRACKS, ids=ids)
def test_every_pointer_into_every_served_body_of_each_task_graph_gets_the_statements_answer(track: Track) -> None:
    inputs = _inputs(track)
    counts = {True: 0, False: 0}
    differ = []
    for task_id, path, body in _graph_bodies(track):
        for pointer, value in _pointers(body):
            submission = {"task_id": task_id,
                          "assertions": [{"claim": {"resource": path, "field": pointer, "value": value}}]}
            scorer = close_problems(submission, inputs) == []
            says = _statement_accepts(track, task_id, path, pointer)
            counts[says] += 1
            if scorer != says:
                differ.append(f"{task_id} {path} {pointer!r}: scorer {scorer}, statement {says}")
    assert differ == []
    assert counts[True] > 100 and counts[False] > 100, counts


def _honest(track: Track, task_id: str) -> tuple[str, list[tuple[str, str, Any]]]:
    entry = json.loads((ROOT / track.trees.season / "cle.json").read_bytes())["taches"][task_id]
    return entry["verdict"], [(f["ressource"], f["champ"], f["valeur"]) for f in entry["faits"]]


# The reader's shapes (issue 42) and others of the same kinds: (task, resource, pointer, accepted?).
READER_SHAPES = {
    "conformite": [
        ("conf-07", "/beneficiaires/ENT-2264/1", "/entrees/1", False),          # a whole owner entry
        ("conf-07", "/mesures-restrictives/3", "/entrees/2", False),             # a whole sanctions entry
        ("conf-07", "/mesures-restrictives/3", "/entrees", False),               # the entries' array
        ("conf-07", "/beneficiaires/ENT-2264/1", "/page_suivante", True),       # an entity's own page
        ("conf-07", "/beneficiaires/ENT-2264/1", "/page", False),
        ("conf-07", "/beneficiaires/ENT-2264/1", "/entite", False),              # a page header
        ("conf-07", "/mesures-restrictives/1", "/page_suivante", False),        # a common list
        ("conf-05", "/listes/agrees/conseil-en-investissements-financiers/1", "/page_suivante", False),
        ("conf-05", "/entites/ENT-1879", "/agrements", True),                   # a whole array of links
        ("conf-05", "/entites/ENT-1879", "/ressource", False),
        ("conf-05", "/entites/ENT-1879", "", False),                             # the whole document
        ("conf-02", "/avenants/AVN-7690", "/message", False),                   # an absent body's message
        ("conf-02", "/avenants/AVN-7690", "/existe", True),
        ("conf-02", "/attestations/ATT-6806", "/avenants/0", True),              # an element of an array of links
        ("conf-07", "/entites/ENT-2264", "/agrements/0", True),
    ],
    "generique": [
        ("gen-09", "/generique/produits/PRD-35054", "/normes/1", True),         # ISO 9241-307, gen-09's standard
        ("gen-09", "/generique/produits/PRD-35054", "/normes", True),
        ("gen-09", "/generique/produits/PRD-35054", "/tarif/observations", False),
        ("gen-09", "/generique/fournisseurs/FRN-4372", "/departements_livres/2", True),  # "67"
        ("gen-09", "/generique/catalogues/ecrans-bureautiques/1", "/entrees/1", False),
        ("gen-09", "/generique/catalogues/ecrans-bureautiques/1", "/entrees", False),
        ("gen-09", "/generique/catalogues/ecrans-bureautiques/1", "/page_suivante", False),
        ("gen-07", "/generique/catalogues/gants-de-protection/1", "/page_suivante", False),  # to the answer
        ("gen-07", "/generique/catalogues/gants-de-protection/2", "/entrees/0/produit", True),
        ("gen-07", "/generique/catalogues/gants-de-protection/2", "/page", False),
        ("gen-07", "/generique/produits/PRD-34038", "/message", False),
        ("gen-07", "/generique/produits/PRD-34038", "/existe", True),
        ("gen-07", "/generique/produits/PRD-34095", "/reference", False),
        ("gen-05", "/generique/fournisseurs/FRN-4271", "/references/0", True),
        ("gen-06", "/generique/fournisseurs/FRN-4135", "/annexes/0", True),
    ],
}


def _reader_cases() -> Iterator[Any]:
    for track in TRACKS:
        for task_id, resource, pointer, accepted in READER_SHAPES[track.piste]:
            yield pytest.param(track, task_id, resource, pointer, accepted,
                               id=f"{task_id}:{resource}:{pointer or 'empty'}")


@pytest.mark.parametrize(("track", "task_id", "resource", "pointer", "accepted"), list(_reader_cases()))
def test_the_readers_shapes_in_an_honest_submission_get_the_statements_answer(
        track: Track, task_id: str, resource: str, pointer: str, accepted: bool) -> None:
    from generator.reading.reader import resolve_pointer

    verdict, facts = _honest(track, task_id)
    value = resolve_pointer(_body(track, resource), pointer)
    claims = facts if (resource, pointer) in {f[:2] for f in facts} else [*facts, (resource, pointer, value)]
    submission = make_submission(Manifest.load(ROOT, track.trees.manifest), task_id, verdict, claims,
                                 piste=track.piste)
    report = score_submissions([submission], root=ROOT, track=track)
    row = next(t for t in report["taches"] if t["tache"] == task_id)
    assert _statement_accepts(track, task_id, resource, pointer) is accepted
    if accepted:
        assert (row["statut"], row["reussie"], row["non_etayees"]) == ("rendue", True, 0), row
    else:
        assert row["statut"] == "rejetee_cloture", row
        said = " ".join(row["rejets"])
        assert f"{pointer} of {resource}" in said or "empty pointer" in said, said


# --- 4. the barème sections a participant holds ------------------------------------------------------------

def _held(track: Track) -> set[str]:
    """The paragraphs of the track's barème section, the file handed to participants with its SHA-256."""
    text = (ROOT / track.bareme.file).read_text("utf-8")
    return set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", text, re.M))


@pytest.mark.parametrize("track", TRACKS, ids=ids)
def test_each_referentiel_cites_only_paragraphs_of_the_section_its_participants_hold(track: Track) -> None:
    held = _held(track)
    assert len(held) > 8
    cited: dict[str, set[str]] = {}
    build = ROOT / track.trees.build
    for file in sorted(build.rglob("*.json")):
        text = json.dumps(json.loads(file.read_bytes()), ensure_ascii=False)
        for paragraph in re.findall(r"§\s?(\d+(?:\.\d+)?)", text):
            cited.setdefault(paragraph, set()).add(file.relative_to(build).as_posix())
    assert cited and set(cited) <= held, {p: f for p, f in cited.items() if p not in held}
    objet = " ".join(_referentiel(track)["objet"].split())
    assert track.bareme.section in objet  # the section is named, so a reader knows which document to open


# --- 5. realism ---------------------------------------------------------------------------------------------

CONF_BUILD = ROOT / CONFORMITE.trees.build
EXAMEN = date(2026, 10, 15)


def _agrements() -> list[dict[str, Any]]:
    docs = [json.loads(p.read_bytes()) for p in sorted((CONF_BUILD / "agrements").glob("*.json"))]
    return [d for d in docs if d.get("existe") is not False]


def test_the_register_states_the_grace_period_that_keeps_conf_01s_registration_actif() -> None:
    grace = 30
    stated = []
    for agr in _agrements():
        end = date.fromisoformat(agr["date_fin_validite"])
        note = agr.get("observations", "")
        if agr["statut"] == "retire" and "Retiré du registre" in note:
            assert "délai de trente jours qui suit son échéance" in note and "statut actif" in note, note
            retired = end + timedelta(days=grace + 1)
            assert "Retiré du registre le 1er" in note and str(retired.year) in note, note
            assert retired.day == 1, (agr["ressource"], retired)  # the day after the grace period
            stated.append(agr["ressource"])
        elif agr["statut"] == "actif" and end < EXAMEN:
            assert (EXAMEN - end).days <= grace, agr["ressource"]  # within the register's own practice
    assert len(stated) == 4
    conf_01 = _body(CONFORMITE, "/agrements/AGR-5113")
    assert (conf_01["statut"], conf_01["date_fin_validite"]) == ("actif", "2026-09-30")  # the trap is kept


_PATH_IN_TEXT = re.compile(r"/(?:generique/)?[a-z-]+/[A-Za-z0-9-]+")
_LINK = re.compile(r"(?:/[A-Za-z0-9-]+)+")


@pytest.mark.parametrize("track", TRACKS, ids=ids)
def test_no_document_holds_a_corpus_path_inside_its_text(track: Track) -> None:
    """A link is a whole value (a field that names a resource); the prose of a register, an insurer's
    attestation or a catalogue names no corpus path: the world it describes does not know the corpus."""
    build = ROOT / track.trees.build
    found = []
    for file in sorted(build.rglob("*.json")):
        body = json.loads(file.read_bytes())
        if body["ressource"] in (track.referentiel, track.catalogue) or body["ressource"].startswith("/_systeme/"):
            continue
        found += [(body["ressource"], pointer, value[:80]) for pointer, value in _pointers(body)
                  if isinstance(value, str) and not _LINK.fullmatch(value) and _PATH_IN_TEXT.search(value)]
    assert found == []


def test_att_8386_names_what_it_guaranteed_when_issued_and_avn_7247_says_its_exclusion_in_time() -> None:
    att, avn = _body(CONFORMITE, "/attestations/ATT-8386"), _body(CONFORMITE, "/avenants/AVN-7247")
    assert "Intermédiation en opérations de banque" in att["activites_garanties"]
    assert "2026" not in att["activites_garanties"] and "avenant" not in att["activites_garanties"]
    assert att["date_emission"] < avn["date_effet"]
    retrait = _body(CONFORMITE, "/agrements/AGR-6681")  # the firm's IOBSP registration, retired before
    assert retrait["statut"] == "retire" and "1er juillet 2026" in retrait["observations"]
    assert "1er septembre 2026" in avn["observations"] and "1er juillet 2026" in avn["observations"]
    assert avn["date_effet"] == "2026-09-01" and avn["activite_exclue"] == "intermediation-en-operations-de-banque"


def test_conf_07s_cause_of_indeterminable_has_one_gloss_in_the_referentiel() -> None:
    ref = _referentiel(CONFORMITE)
    text = " ".join(json.dumps(ref, ensure_ascii=False).split())
    assert text.count("source absente au sens du barème (§5.3)") == 1
    c4 = " ".join(next(c["regle"] for c in ref["criteres"] if c["id"] == "C4").split())
    assert "n'est pas complete (incomplete ou en-cours-de-verification) est une source absente" in c4
    assert _body(CONFORMITE, "/beneficiaires/ENT-2264/1")["statut_declaration"] == "incomplete"


def test_prd_35054s_low_catalogue_price_is_explained_in_a_field_never_asserted_and_the_trap_is_kept() -> None:
    sheet = _body(GENERIQUE, "/generique/produits/PRD-35054")
    page = _body(GENERIQUE, "/generique/catalogues/ecrans-bureautiques/1")
    entry = next(e for e in page["entrees"] if e["produit"] == "/generique/produits/PRD-35054")
    note = sheet["tarif"]["observations"]
    assert "159,00 € HT" in note and "1er septembre 2026" in note
    assert sheet["tarif"]["debut_validite"] == "2026-09-01"
    assert "/tarif/observations" not in _served_table(GENERIQUE)["/generique/produits/"]
    budget = next(s.task.budget_unitaire_ht for s in load_season(ROOT / GENERIQUE.trees.season_sources,
                                                                   GENERIQUE).statements if s.task.id == "gen-10")
    assert float(entry["prix_catalogue_ht"]) <= float(budget) < float(sheet["tarif"]["prix_unitaire_ht"])
    assert "observations" not in json.dumps(page)  # the catalogue, where the lure is, says nothing of it


def test_the_catalogue_notice_states_c6_with_its_precedence() -> None:
    pages = sorted((ROOT / GENERIQUE.trees.build / "generique" / "catalogues").rglob("*.json"))
    assert pages
    for file in pages:
        notice = " ".join(json.loads(file.read_bytes())["avertissement"].split())
        assert "(C6 du référentiel d'achat), à moins qu'un cas antérieur dans l'ordre des conditions C1 à C7 ne " \
               "l'écarte d'abord" in notice, file
