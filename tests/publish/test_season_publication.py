"""The whole season as one test (issue 39, bars/season-publication): both tracks from the freeze to both
publications with no pin flag after ``corpus pin`` and no conversion step, the close publication verified
offline, and every tampered variant refused naming the file (``tests/season_rehearsal.py`` runs it; ``make
rehearsal`` prints it)."""

from __future__ import annotations

import hashlib
import html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_run import run_corpus
from index_community import REFERENCE_RUN, did_of
from season_rehearsal import PISTES, TAMPERED, Season, Verdict, relist, run_season, tampered_verdicts

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command (test authority)")

PIN_FLAGS = ("--trust-layer-key", "--tsa-ca", "--tsa-cert", "--season-close", "--trust-layer-url", "--base-url",
             "--challenge-key-fingerprint", "--rekor-key", "--anchor")


@pytest.fixture(scope="module")
def season(tmp_path_factory: pytest.TempPathFactory) -> Season:
    return run_season(tmp_path_factory.mktemp("season"))


def test_every_step_of_both_tracks_holds(season: Season) -> None:
    assert not season.failed, "\n".join(f"{s.line()}\n{s.ran.stdout[-2000:]}\n{s.ran.stderr[-2000:]}"
                                        for s in season.failed)
    names = [s.name for s in season.steps]
    for piste in PISTES:
        for step in ("freeze", "pin", "freeze-anchor (no pin flag)", "freeze-check (no pin flag)",
                     "publish --opening", "pin the close", "proofs fetch --records (no pin flag)",
                     "index (no pin flag)", "publish --close (no pin flag)", "verify-publication"):
            assert f"{piste}: {step}" in names


def test_no_pin_flag_after_corpus_pin_and_no_conversion(season: Season) -> None:
    """Every command after the pins names none of them (verify-publication's are its reader's own pins), and
    every close command reads the season service's records folder as it is."""
    for step in season.steps:
        if step.args[0] in ("pin", "freeze", "verify-publication"):
            continue
        assert not set(step.args) & set(PIN_FLAGS), step.args
    closing = [s for s in season.steps if s.args[0] in ("index", "proofs")
               or (s.args[0] == "publish" and "--close" in s.args)]
    assert closing and all("--records" in s.args for s in closing)


@pytest.mark.parametrize("piste", PISTES)
def test_score_of_one_participant_over_the_records_is_what_the_index_counted(season: Season, piste: str,
                                                                            tmp_path: Path) -> None:
    publication = season.publications[piste]
    for name, slug in (("Agent Remplaçant", "agent-remplacant"), ("Agent Surconfiant", "agent-surconfiant")):
        out = tmp_path / f"{slug}.json"
        ran = run_corpus("score", "--records", str(season.records[piste]), "--agent", did_of(name), "--track",
                         piste, "--root", str(season.root), "--proofs", str(season.proofs[piste]), "--salt-file",
                         str(season.salts[piste]), "--json", str(out))
        assert ran.returncode == 0, ran.stderr
        assert out.read_bytes() == (publication / "scores" / f"{slug}.json").read_bytes()
        report = json.loads((publication / "rapports" / f"{slug}.json").read_bytes())
        assert json.loads(out.read_bytes()) == report["score_corpus"]


@pytest.mark.parametrize("piste", PISTES)
def test_the_opening_kit_hands_over_the_frozen_bareme_and_statements(season: Season, piste: str) -> None:
    kit = season.work / "opening" / piste
    record = json.loads((kit / "gel/record.json").read_bytes())
    summary = json.loads((kit / "ouverture.json").read_bytes())
    bareme = kit / summary["bareme"]["fichier"]
    assert hashlib.sha256(bareme.read_bytes()).hexdigest() == record["bareme"]["sha256"]
    assert hashlib.sha256((kit / "taches.json").read_bytes()).hexdigest() == record["taches"]["sha256"]
    assert summary["manifest_hash"] == record["manifest_hash"]
    anchor = json.loads((kit / "gel/anchor.json").read_bytes())
    assert [a["proof_id"] for a in summary["ancres"]] == [anchor["proof_id"]]
    assert summary["ouverture"] == anchor["heure"]
    assert not (kit / "cle.json").exists() and not list(kit.rglob("*sel*"))
    assert not list(kit.rglob("manifest.json"))
    page = html.unescape((kit / "LISEZMOI.html").read_text("utf-8"))
    assert '<html lang="fr">' in page and "section de barème" in page and anchor["proof_id"] in page
    checked = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=kit, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("piste", PISTES)
def test_the_close_publication_is_french_names_no_storage_path_and_shows_the_window(season: Season,
                                                                                    piste: str) -> None:
    publication = season.publications[piste]
    index = json.loads((publication / "index.json").read_bytes())
    assert index["ouverture"] and index["cloture"] and index["ouverture"] < index["cloture"]
    page = html.unescape((publication / "index.html").read_text("utf-8"))
    assert f"Ouverture de la saison : {index['ouverture']}. Clôture de la saison : {index['cloture']}." in page
    reference = index["tableaux"]["reference"]["lignes"][1]["reference"]
    assert {k: reference[k] for k in ("modele", "version", "framework", "prompt")} == REFERENCE_RUN
    assert reference["mention"] == "rejouable" and "rejouable" in page
    pages = [html.unescape(p.read_text("utf-8")) for p in publication.rglob("*.html")]
    for english in ("strict JSON equality", "Rekor not checked offline", "fails third-party verification",
                    "serves ", "awaiting anchoring"):
        assert not any(english in text for text in pages), english
    report = json.loads((publication / "rapports/agent-surconfiant.json").read_bytes())
    [unsupported] = report["assertions_non_etayees"]
    assert unsupported["cause"] == "valeur" and "condition 4, égalité JSON stricte" in unsupported["detail_texte"]
    service = season.records[piste]
    stored = {p.relative_to(service).parent.as_posix() for p in service.rglob("*.json")}
    for path in publication.rglob("*"):
        if path.is_file() and path.suffix in (".json", ".html"):
            text = path.read_text("utf-8")
            assert not any(folder in text for folder in stored), path
    assert str(season.work) not in "".join(pages)


@pytest.mark.parametrize("piste", PISTES)
def test_verify_publication_holds_on_the_untouched_folder(season: Season, piste: str) -> None:
    ran = run_corpus(*season.verify_args(season.publications[piste]))
    assert ran.returncode == 0, ran.stdout + ran.stderr
    lines = ran.stdout.splitlines()
    assert all(line.startswith(("ok  ", "note")) for line in lines), ran.stdout
    for words in ("SHA256SUMS:", "manifeste/manifest.json: hash", "sha256(sel ‖ clé) is its key commitment",
                  "gel/anchor.json:", "preuves/:", "the close computed again"):
        assert any(words in line for line in lines), words


@pytest.mark.parametrize("piste", ["conformite"])
def test_every_tampered_variant_is_refused_naming_the_file(season: Season, piste: str) -> None:
    verdicts = tampered_verdicts(season, piste)
    assert {v.variant.split(" (")[0] for v in verdicts} == set(TAMPERED)
    wrong = [f"{v.variant}: {v.file}: {v.line()}\n{v.ran.stdout[-1500:]}" for v in verdicts if not v.refused]
    assert not wrong, "\n".join(wrong)


def test_verify_publication_refuses_another_key_a_foreign_folder_and_never_tracebacks(season: Season,
                                                                                      tmp_path: Path) -> None:
    publication = season.publications["generique"]
    other = run_corpus("verify-publication", str(publication), "--trust-layer-key",
                       "ed25519:A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg", "--tsa-ca",
                       str(season.authority.ca if season.authority else ""))
    assert other.returncode == 1 and "gel/anchor.json" in other.stdout and "Traceback" not in other.stderr
    broken = tmp_path / "broken"
    shutil.copytree(publication, broken)
    (broken / "cloture.json").write_text("{not json", "utf-8")
    (broken / "piste" / "track.yaml").write_text("- not: a track\n", "utf-8")
    relist(broken)
    ran = run_corpus(*season.verify_args(broken))
    assert ran.returncode == 1 and "cloture.json" in ran.stdout and "Traceback" not in ran.stdout + ran.stderr
    assert run_corpus(*season.verify_args(tmp_path / "absent")).returncode == 1
    carried = tmp_path / "carried-code"
    shutil.copytree(publication, carried)
    (carried / "piste" / "evil.py").write_text("raise SystemExit('ran code the folder brought')\n", "utf-8")
    track_file = carried / "piste" / "track.yaml"
    text = track_file.read_text("utf-8")
    track_file.write_text(re.sub(r"(?m)^code: .*$", "code: evil.py", text), "utf-8")
    relist(carried)
    ran = run_corpus(*season.verify_args(carried))
    assert ran.returncode == 1, ran.stdout
    assert "piste/track.yaml: code: evil.py is not a track module" in ran.stdout, ran.stdout


def test_the_freeze_hints_are_complete_commands_for_a_3_1_anchor(season: Season) -> None:
    [freeze] = [s for s in season.steps if s.name == "conformite: freeze"]
    hints = freeze.ran.stderr
    assert re.search(r"corpus pin --track conformite --trust-layer-url \S+ --trust-layer-key ed25519:KEY "
                     r"--challenge-key-file CHALLENGE_KEY_FILE --tsa-ca TSA_CA.pem --tsa-cert TSA_CERT.pem", hints)
    for words in ("curl -sS -X POST https://trust.arkforge.tech/v1/proxy",
                  '-H "X-Api-Key: $(cat CHALLENGE_KEY_FILE)"',
                  '"target": "https://corpus.arkforge.tech/gel", "method": "GET", "payload": {}, ',
                  '"currency": "eur"', "/v1/proof/PROOF_ID/full",
                  "corpus freeze-anchor --track conformite anchor-proof.json"):
        assert words in hints, words


def test_key_fingerprint_prints_the_sha256_never_the_key(tmp_path: Path) -> None:
    key = tmp_path / "key"
    key.write_text("mcp_free_fictive-key-0042\n", "ascii")
    ran = run_corpus("key-fingerprint", str(key))
    assert ran.returncode == 0 and ran.stdout == hashlib.sha256(b"mcp_free_fictive-key-0042").hexdigest() + "\n"
    assert "mcp_free" not in ran.stdout + ran.stderr
    key.write_text("zq-first-9\nzq-second-9\n", "ascii")
    ran = run_corpus("key-fingerprint", str(key))
    assert ran.returncode == 1 and "zq-" not in ran.stderr


def test_a_verdict_names_its_file() -> None:
    """The refusal rule of the tampered variants itself: exit 1, the file named, no traceback."""
    from cli_run import Ran
    assert Verdict("x", "index.json", Ran(1, "FAIL index.json: /a: published 1, computed again 2\n", "")).refused
    assert not Verdict("x", "index.json", Ran(1, "FAIL other\n", "")).refused
    assert not Verdict("x", "index.json", Ran(0, "ok index.json\n", "")).refused


def test_the_documented_registrations_example_is_accepted(tmp_path: Path) -> None:
    """docs/index.md documents the registrations file field by field, with an example corpus index accepts."""
    from generator.publish.registrations import read_registrations

    text = (Path(__file__).resolve().parents[2] / "docs" / "index.md").read_text("utf-8")
    section = text.split("## The registrations file", 1)[1]
    example = section.split("```json\n", 1)[1].split("```", 1)[0]
    path = tmp_path / "inscriptions.json"
    path.write_text(example, "utf-8")
    [reference, community] = read_registrations(path)
    assert reference.reference is not None and reference.reference.published()["mention"] == "rejouable"
    assert community.reference is None and community.history == ("did:key:z6MkAncienDid",)
