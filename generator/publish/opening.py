"""The participant's kit at the opening (spec §8.3, docs/season.md "What is published when"): what every
participant is handed before the season opens, and what they check later that nothing moved.

``corpus publish --opening --track T --out DIR`` writes ``DIR/<piste>/``: the barème section exactly as frozen
(its SHA-256 the record's), the task statements (their SHA-256 the record's), the freeze record, its anchor
(the proof as published, with its ``proof_id`` and RFC 3161 token), the manifest hash, the pinned Trust Layer
key, URL and authority, the season's window, a page in French saying what each file is, and ``SHA256SUMS``.
Nothing that reveals an answer: neither the key, nor the salt, nor the manifest (it marks the absents).

A freeze replaced before the opening (spec §8: "les deux proof_id sont publiés ensemble avec le motif du
remplacement") is handed over whole: ``ancres`` lists every record of the chain in its order, each with its
proof_id, its time and the motive of the replacement it made; each replaced record and its anchor are in
``gel/remplaces/<n>/``, and the French page names every proof_id with its motive.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from generator.contract.freeze import check_freeze, read_record
from generator.contract.hashing import sha256_hex
from generator.publish.folder_files import (
    README,
    REPLACED,
    SUMS,
    PublicationError,
    chain_paragraph,
    page,
    published_link,
    read_published,
    sums_bytes,
)
from generator.publish.season_index import instant
from generator.score.close_inputs import Pins
from generator.score.inputs import load_statements
from generator.tracks.model import Track
from generator.trust_layer.anchor import Anchor
from generator.trust_layer.freeze_chain import ChainEntryJson, chain_entries, chain_problems

FORMAT = "corpus-ouverture/1"
OUVERTURE = "ouverture.json"
BAREME, TACHES, RECORD, ANCHOR, PINNED = "bareme", "taches.json", "gel/record.json", "gel/anchor.json", "epingles"
@dataclass(frozen=True)
class OpeningRequest:
    root: Path
    track: Track
    pins: Pins
    trust_layer_url: str
    opening: datetime | None  # the pinned opening, else the anchor's token time


def opening_files(req: OpeningRequest) -> dict[str, bytes]:
    """Every file of the kit, by its path under ``<out>/<piste>/``; refused (one line) unless the track is
    frozen and anchored and the frozen files are what the record anchors."""
    root, track, places = req.root, req.track, req.track.places
    record = read_record(root, places)
    anchor_path = root / places.anchor
    if record is None or not anchor_path.is_file():
        raise PublicationError(f"the track {track.piste} is not frozen and anchored ({places.record} and "
                               f"{places.anchor}): the kit hands over the frozen barème and statements with the "
                               "anchor's proof_id; run corpus freeze, then corpus freeze-anchor")
    problems = check_freeze(root, None, places)
    if not problems and req.pins.anchor_key() is not None:  # each kept link anchored, before the opening
        problems = chain_problems(root, places, None, req.pins.anchor_key(), req.pins.fingerprint,
                                  req.pins.window(), req.opening)
    if problems:
        raise PublicationError(f"the freeze check fails, no kit is written: {problems[0]}")
    bareme = read_published(root / places.bareme_file)
    if sha256_hex(bareme) != record.bareme_sha256:
        raise PublicationError(f"{places.bareme_file}: SHA-256 {sha256_hex(bareme)} is not the record's "
                               f"{record.bareme_sha256}: the kit hands over the section exactly as frozen")
    anchor = Anchor.read(anchor_path)
    bareme_name = f"{BAREME}/{Path(places.bareme_file).name}"
    files = {bareme_name: bareme, TACHES: read_published(root / places.tasks_file),
             RECORD: read_published(root / places.record), ANCHOR: read_published(anchor_path)}
    chain = chain_entries(root, places)
    for entry in chain:
        if not entry["en_vigueur"]:  # a replaced record and its anchor, byte for byte as kept
            record_name, anchor_name = published_link(entry)
            files[record_name] = read_published(root / entry["gel"])
            if anchor_name is not None and entry["ancre"] is not None:
                files[anchor_name] = read_published(root / entry["ancre"])
    for path, name in ((req.pins.tsa_ca, "tsa-ca.pem"), (req.pins.tsa_cert, "tsa-cert.pem"),
                       (req.pins.rekor_key, "rekor-key.pem")):
        if path is not None:
            files[f"{PINNED}/{name}"] = read_published(path)
    url = req.trust_layer_url
    document = {
        "format": FORMAT, "piste": track.piste, "saison": load_statements(root, track).saison,
        "titre": track.title,
        "ouverture": instant(req.opening) if req.opening else None,
        "cloture": instant(req.pins.season_close) if req.pins.season_close else None,
        "manifest_hash": record.manifest_hash,
        "bareme": {"section": places.bareme_section, "fichier": bareme_name, "sha256": record.bareme_sha256},
        "taches": {"fichier": TACHES, "sha256": record.tasks_sha256},
        "engagement_cle": record.key_commitment,
        "ancres": [_anchor_entry(entry, url) for entry in chain],
        "trust_layer": {"url": url, "cles": list(req.pins.trust_layer_keys),
                        "empreinte_cle_challenge": anchor.fingerprint},
        "autorite_horodatage": {"ca": f"{PINNED}/tsa-ca.pem" if req.pins.tsa_ca else None,
                                "certificat": f"{PINNED}/tsa-cert.pem" if req.pins.tsa_cert else None}}
    files[OUVERTURE] = (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    files[README] = _readme(track, bareme_name, anchor.proof_id, record.manifest_hash, document, chain)
    files[SUMS] = sums_bytes(files)
    return files


def _anchor_entry(entry: ChainEntryJson, url: str) -> dict[str, object]:
    """One record of the chain as the kit lists it: its anchor's proof_id, time and public view, the files,
    and, for a replacement, the proof_id it replaced and why."""
    record_name, anchor_name = published_link(entry)
    proof_id = entry["proof_id"]
    return {"numero": entry["numero"], "proof_id": proof_id, "heure": entry["heure"], "fichier": anchor_name,
            "releve": record_name, "sha256_releve": entry["sha256"], "en_vigueur": entry["en_vigueur"],
            "remplace": entry["remplace"], "motif": entry["motif"],
            "vue_publique": f"{url}/v1/proof/{proof_id}" if proof_id else None}


def _readme(track: Track, bareme_name: str, proof_id: str, manifest_hash: str,
            document: dict[str, object], chain: list[ChainEntryJson]) -> bytes:
    rows = [(OUVERTURE, "l'ouverture en un coup d'œil : piste, saison, fenêtre de la saison, hash du manifeste, "
                        "SHA-256 du barème et des énoncés, engagement de la clé, proof_id de l'ancre, clés et URL "
                        "de Trust Layer épinglées"),
            (bareme_name, f"la section de barème « {track.bareme.section} » exactement telle que gelée : son "
                          "SHA-256 est celui du relevé gelé"),
            (TACHES, "les énoncés des tâches (entité, date d'examen, minimum et plafond d'assertions) : leur "
                     "SHA-256 est celui du relevé gelé"),
            (RECORD, "le relevé gelé (corpus-freeze/2) : hash du manifeste, du barème, des énoncés et engagement "
                     "sha256(sel ‖ clé) de la clé de réponses, publiée avec son sel à la clôture"),
            (ANCHOR, f"l'ancre du relevé : la preuve Trust Layer {proof_id} de l'appel qui a servi le relevé, son "
                     "jeton RFC 3161 et l'autorité épinglée ; la saison s'ouvre à l'heure de ce jeton au plus "
                     "tôt"),
            (f"{REPLACED}/<n>/record.json, anchor.json", "chaque relevé remplacé avant l'ouverture et son ancre, "
                                                         "tels que conservés, dans l'ordre de la chaîne"),
            (f"{PINNED}/…", "les certificats de l'autorité d'horodatage épinglée (et la clé Rekor s'il y a lieu)"),
            (SUMS, "le SHA-256 de chaque fichier de ce dossier (sha256sum -c SHA256SUMS)")]
    if len(chain) < 2:
        rows = [row for row in rows if not row[0].startswith(REPLACED)]
    said = chain_paragraph(chain)
    return page(f"{track.title} : dossier du participant à l'ouverture", [
        "Ce dossier est remis à chaque participant avant l'ouverture de la saison. Il permet de vérifier, à la "
        "clôture, que rien n'a bougé : le barème, les énoncés, le manifeste et la clé de réponses sont ancrés par "
        f"le relevé gelé, lui-même ancré par la preuve Trust Layer {proof_id} (spec §8.3).",
        *([said] if said else []),
        f"Hash du manifeste du corpus : {manifest_hash}. Le manifeste lui-même est publié à la clôture "
        "seulement : il désigne les ressources volontairement absentes.",
        f"Ouverture : {document['ouverture'] or 'non fixée'} ; clôture : {document['cloture'] or 'non fixée'}.",
        "La clé de réponses et son sel ne sont pas dans ce dossier : ils sont publiés à la clôture, et chacun "
        "recalcule alors l'engagement sha256(sel ‖ clé) contre le relevé."], rows)
