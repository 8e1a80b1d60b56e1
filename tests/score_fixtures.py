"""A small season of its own for the scorer tests, and hashes computed independently of the code under test.

:func:`make_score_world` builds the compiler's minimal valid corpus (``tests/fixtures/valid``) with a
référentiel whose criteria declare the probant fields of spec §5.7, then writes
``season/conformite/taches.json`` and ``season/conformite/cle.json`` by hand: two tasks, a key with a link fact,
its reverse and whole-array forms. The season under revision in ``season_src/conformite/`` is never read, so
these tests do not move when it does.

Hashes follow CONTRACT §2 with ``hashlib`` and ``json`` only: the request hash of the canonical URL, the
response hash of ``json.loads`` of the built bytes. Nothing is taken from the manifest or from
``generator.contract.hashing``.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trackfix import CONFORMITE, copy_tracks

from generator.compiler.pipeline import build
from generator.tracks.model import DEFAULT_BASE_URL

FIXTURES = Path(__file__).resolve().parent / "fixtures"
NONCE = "ab" * 32

REFERENTIEL = """\
titre: Référentiel de test du scorer
criteres:
  - id: C1
    libelle: Entité.
    regle: La fiche existe et son statut est conforme.
    parametres: {statuts_conformes: [active]}
    champs:
      /entites/: [/existe, /statut]
  - id: C2
    libelle: Agrément.
    regle: Un agrément de l'activité, en cours de validité, actif, et listé.
    parametres: {statuts_conformes: [actif]}
    champs:
      /entites/: [/agrements, /agrements/<n>]
      /agrements/: [/existe, /entite, /activite, /statut, /date_debut, /date_fin_validite]
      /listes/agrees/: [/entrees/<n>/agrement, /entrees/<n>/entite, /entrees/<n>/statut]
  - id: C3
    libelle: Attestation.
    regle: Une attestation en cours de validité, avenants appliqués.
    parametres: {type_requis: responsabilite-civile-professionnelle}
    champs:
      /entites/: [/attestations, /attestations/<n>]
      /attestations/: [/existe, /entite, /type, /date_emission, /date_fin_validite, /avenants, /avenants/<n>]
      /avenants/: [/existe, /attestation, /objet, /date_effet, /nouvelle_date_fin, /activite_exclue]
  - id: C4
    libelle: Bénéficiaires.
    regle: Aucun bénéficiaire sur la liste des mesures restrictives.
    parametres: {statut_declaration_requis: complete}
    champs:
      /beneficiaires/: [/statut_declaration, /entrees/<n>/nom, /entrees/<n>/prenoms,
                        /entrees/<n>/date_naissance, /page_suivante]
      /mesures-restrictives/: [/entrees/<n>/nom, /entrees/<n>/prenoms, /entrees/<n>/date_naissance]
precedence:
  - si: un critère est établi faux
    verdict: non_conforme
  - si: sinon, un critère n'est pas établissable
    verdict: indeterminable
  - si: sinon
    verdict: conforme
"""

TASKS = {
    "format": "season-taches/1", "saison": 1, "piste": "conformite", "referentiel": "/referentiel",
    "taches": [
        {"id": "conf-01", "entite": "/entites/ENT-0001", "activite": "courtage-en-assurance",
         "date_examen": "2026-02-15", "question": "ENT-0001 ?", "assertions": {"minimum": 2, "plafond": 4}},
        {"id": "conf-02", "entite": "/entites/ENT-0002", "activite": "conseil-en-investissements-financiers",
         "date_examen": "2026-02-15", "question": "ENT-0002 ?", "assertions": {"minimum": 2, "plafond": 4}},
    ],
}

LINK = {"ressource": "/entites/ENT-0001", "champ": "/agrements/0", "valeur": "/agrements/AGR-0001",
        "critere": "C2",
        "formes_equivalentes": [
            {"ressource": "/agrements/AGR-0001", "champ": "/entite", "valeur": "/entites/ENT-0001"},
            {"ressource": "/entites/ENT-0001", "champ": "/agrements",
             "valeur": ["/agrements/AGR-0001", "/agrements/AGR-0999"]}]}
END_DATE = {"ressource": "/agrements/AGR-0001", "champ": "/date_fin_validite", "valeur": "2026-03-31",
            "critere": "C2", "formes_equivalentes": []}
STATUT_02 = {"ressource": "/entites/ENT-0002", "champ": "/statut", "valeur": "en-liquidation", "critere": "C1",
             "formes_equivalentes": []}

KEY = {
    "format": "season-cle/1", "saison": 1,
    "taches": {
        "conf-01": {"famille": "controle", "verdict": "conforme", "piege": "-", "raccourci": None,
                    "fonde_par": "tous", "faits": [LINK, END_DATE]},
        "conf-02": {"famille": "P2", "verdict": "non_conforme", "piege": "-", "raccourci": None,
                    "fonde_par": "tous", "faits": [STATUT_02]},
    },
}


def canonical(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def expected_request_hash(path: str, base_url: str = DEFAULT_BASE_URL) -> str:
    request = {"target": base_url + path, "method": "GET", "payload": {}, "amount": 0.0, "currency": "eur"}
    return hashlib.sha256(canonical(request).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ScoreWorld:
    root: Path

    def bytes_of(self, path: str) -> bytes:
        return (self.root / "build/conformite" / (path.lstrip("/") + ".json")).read_bytes()

    def doc(self, path: str) -> Any:
        return json.loads(self.bytes_of(path))

    def response_hash(self, path: str) -> str:
        return hashlib.sha256(canonical(json.loads(self.bytes_of(path))).encode("utf-8")).hexdigest()

    def disclosure(self, request_of: str, response_of: str | None = None) -> dict[str, Any]:
        return {"request_hash": {"nonce": NONCE, "value": expected_request_hash(request_of)},
                "response_hash": {"nonce": NONCE, "value": self.response_hash(response_of or request_of)}}


def make_score_world(dest: Path) -> ScoreWorld:
    src = dest / "corpus_src/conformite"
    shutil.copytree(FIXTURES / "valid" / "corpus_src", src)
    copy_tracks(dest)
    (src / "referentiel.yaml").write_text(REFERENTIEL, "utf-8")
    build(src, dest, DEFAULT_BASE_URL, CONFORMITE)
    (dest / "season/conformite").mkdir(parents=True)
    (dest / "season/conformite/taches.json").write_text(json.dumps(TASKS, ensure_ascii=False, indent=2), "utf-8")
    (dest / "season/conformite/cle.json").write_text(json.dumps(KEY, ensure_ascii=False, indent=2), "utf-8")
    return ScoreWorld(dest)


Claim = tuple[str, str, Any]


def submission(world: ScoreWorld, task_id: str, verdict: str, claims: list[Claim],
               responses: dict[int, str] | None = None) -> dict[str, Any]:
    """A §4 submission, each claim cited with its own honest proof (``responses``: index -> other body)."""
    assertions, disclosures = [], {}
    for index, (resource, field, value) in enumerate(claims):
        proof_id = f"prf_{index:04d}"
        disclosures[proof_id] = world.disclosure(resource, (responses or {}).get(index))
        assertions.append({"id": f"a{index + 1}", "claim": {"resource": resource, "field": field, "value": value},
                           "proof_ids": [proof_id]})
    return {"season": 1, "track": "conformite", "task_id": task_id, "agent_did": "did:key:z6MkTest",
            "verdict": verdict, "assertions": assertions, "disclosures": disclosures,
            "narrative": "ignored"}


def edited(data: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(data)
    out.update(changes)
    return out


# Honest and founded: the link (entity side) and the end date.
HONEST_01: list[Claim] = [("/entites/ENT-0001", "/agrements/0", "/agrements/AGR-0001"),
                          ("/agrements/AGR-0001", "/date_fin_validite", "2026-03-31")]
HONEST_02: list[Claim] = [("/entites/ENT-0002", "/statut", "en-liquidation"),
                          ("/agrements/AGR-0002", "/statut", "suspendu")]


def anchor_of(root: Path, path: str = "/gel", proof_id: str = "prf_20261202_013023_a0c401") -> dict[str, Any]:
    """The opened pair of a proof that anchored ``root``'s freeze record by ``GET <base URL><path>``, its two
    hashes derived here from CONTRACT.md §2 (the record's bytes parsed and canonicalised), not by the code."""
    record = json.loads((root / "freeze/conformite/record.json").read_bytes())
    response = hashlib.sha256(json.dumps(record, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return {"proof_id": proof_id, "request_hash": {"nonce": NONCE, "value": expected_request_hash(path)},
            "response_hash": {"nonce": NONCE, "value": response}}


def write_anchor(root: Path, folder: Path, **kwargs: Any) -> Path:
    anchor = folder / "anchor.json"
    anchor.write_text(json.dumps(anchor_of(root, **kwargs)), "utf-8")
    return anchor
