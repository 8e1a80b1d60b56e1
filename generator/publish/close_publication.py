"""The close published as one folder per track that anyone verifies offline (spec §2, §4.1, §7, §8.3): the
index and the reports, and everything needed to compute them again, with the SHA-256 of every file.

``corpus publish --close`` writes it; ``corpus verify-publication`` (:mod:`generator.publish.verify_publication`)
reads nothing else. Every file is either an input copied as it stands (the season service's records counted
or listed, the proofs' public views they cite, the registrations, the answer key and its salt, the freeze
record and its anchor, the manifest and the served bodies, the track's definition with its barème section,
the pins) or computed from those inputs by :func:`write_close` (the index, the reports, each participant's
``corpus-score/1``, ``cloture.json``, the French page and ``SHA256SUMS``), which the verification runs again
and compares byte for byte.

A freeze replaced before the opening is published whole: every kept record of the chain with its anchor and
its salt (``gel/remplaces/<n>/record.json``, ``anchor.json``, ``sel.hex``), listed in ``cloture.json`` with each
proof_id and motive. An invalidated season publishes its invalidation (``gel/invalidation.json``), the index
that says so and no ranking (no report, no score, no record: as ``corpus index``), with the chain, the key
and every salt. Every contestation and its decision (spec §9.2) are copied as recorded
(``gel/contestations/``): the index and the reports computed from them hold each rectification beside the
original figures, which the verification replays from these very files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from generator.base import strict_json
from generator.base.transaction import make_dir, write_file
from generator.contract.freeze import check_freeze, read_record, read_salt
from generator.contract.hashing import sha256_hex
from generator.contract.invalidation import invalidation_path, read_invalidation
from generator.contract.manifest import Manifest
from generator.publish.contestation import contest_folder
from generator.publish.files import IndexInputError
from generator.publish.folder_files import (
    README,
    REPLACED,
    SUMS,
    PublicationError,
    chain_paragraph,
    folder_files,
    page,
    published_link,
    read_published,
    sums_text,
    tree_files,
)
from generator.publish.parallel import ordered_map
from generator.publish.published import formatted, read_document
from generator.publish.records import published_record
from generator.publish.registrations import registrations_bytes
from generator.publish.season_index import IndexRequest, Routed, index_writer, instant, publication_close
from generator.publish.submissions import Received
from generator.score.close_inputs import Pins
from generator.score.render import ScoreReport
from generator.trust_layer.anchor import Anchor
from generator.trust_layer.freeze_chain import ChainEntryJson, chain_entries, chain_problems
from generator.trust_layer.trust_proof import PROOF_ID

FORMAT = "corpus-cloture/1"
CLOTURE = "cloture.json"
PINNED = "epingles"  # the pinned PEM files, as the operator pinned them (corpus pin)
# Where each input is in the folder.
TRACK, CORPUS, MANIFEST, SEASON, FREEZE = "piste", "corpus", "manifeste", "saison", "gel"
RECORDS, PROOFS, REGISTRATIONS, SCORES = "soumissions", "preuves", "inscriptions.json", "scores"
SALT = f"{SEASON}/sel.hex"
INVALIDATION, CONTESTATIONS = f"{FREEZE}/invalidation.json", f"{FREEZE}/contestations"


def replaced_salt(number: int) -> str:
    """Where the salt of the chain's replaced record ``number`` is published, beside its record and anchor."""
    return f"{REPLACED}/{number}/sel.hex"


@dataclass(frozen=True)
class CloseRequest:
    """What ``corpus publish --close`` is given: ``corpus index``'s request (the checkout, the track, the records
    folder, the registrations, the close, the opening, the Trust Layer URL, the scorer's options), the salt, the
    folder of the proofs' public views and the pins the proofs were judged against."""

    index: IndexRequest
    salt_file: Path
    proofs: Path | None
    pins: Pins
    replaced_salts: tuple[Path, ...] = ()  # a replaced freeze: each replaced record's salt, in the chain's order


Emit = Callable[[str, bytes], None]  # what becomes of each file of a close computed: written, or compared


class _Folder:
    """A publication being made: each file handed to ``emit`` as soon as it is ready (by default, written below
    ``out``), its SHA-256 kept for ``SHA256SUMS``, its bytes let go: a close of ten thousand participants is
    never held in memory. The index and its reports are written below ``out`` by the index's writer first."""

    def __init__(self, out: Path, emit: Emit | None = None) -> None:
        self.out = out
        self.sums: dict[str, str] = {}
        self._folders = {""}
        self._emit = emit

    def put(self, name: str, data: bytes) -> None:
        """One file of the publication; the same bytes under the same name twice are one file."""
        digest = sha256_hex(data)
        if self.sums.get(name) == digest:
            return
        if self._emit is not None:
            self._emit(name, data)
        else:
            self._write(name, data)
        self.sums[name] = digest

    def _write(self, name: str, data: bytes) -> None:
        folder = name.rpartition("/")[0]
        if folder not in self._folders:
            parts = folder.split("/")
            for depth in range(1, len(parts) + 1):
                made = "/".join(parts[:depth])
                if made not in self._folders and not (self.out / made).is_dir():
                    make_dir(self.out / made)
                self._folders.add(made)
        write_file(self.out / name, data)

    def take(self) -> None:
        """Every file the index's writer made below ``out`` (the index and its reports), as part of it."""
        for name, path in folder_files(self.out).items():
            data = path.read_bytes()
            if self._emit is not None:
                self._emit(name, data)
            self.sums[name] = sha256_hex(data)

    def read(self, name: str) -> bytes:
        return (self.out / name).read_bytes()


def _cited(submission: object) -> set[str]:
    """The proof ids a record's submission cites, of the proxy's form only (they name files)."""
    assertions = submission.get("assertions") if isinstance(submission, dict) else None
    ids: set[str] = set()
    for a in assertions if isinstance(assertions, list) else []:
        cited = a.get("proof_ids") if isinstance(a, dict) else None
        if isinstance(cited, list):
            ids |= {p for p in cited if isinstance(p, str) and PROOF_ID.fullmatch(p)}
    return ids


def _record(slug: str, received: Received) -> tuple[str, bytes, set[str]]:
    """A listed record: its published name, its bytes, the proof ids its submission cites."""
    data = read_published(received.path)
    value, _ = strict_json.loads(data)  # routed already: JSON, its defects the scorer's
    return (published_record(slug, received), data,
            _cited(value.get("soumission") if isinstance(value, dict) else None))


def _records_and_proofs(req: CloseRequest, routed: Routed, folder: _Folder) -> None:
    """Every record counted or listed for a ranked participant (kept, replaced, received after the close),
    under its published name, and the public view of every proof they cite that the proofs folder holds; the
    records as the index routed them, read on ``jobs`` processes, written here in order."""
    folder.put(REGISTRATIONS, registrations_bytes(routed.registrations))
    listed: list[tuple[str, Received]] = []
    for turn in routed.turns:
        slug, selection = turn.participant.ranked.slug, turn.selection
        listed += [(slug, r) for r in [*selection.kept, *(old for old, _ in selection.replaced), *selection.late]]
        listed += [(m.registration.slug, r) for m in turn.participant.merged
                   for r in routed.by_did.get(m.registration.did, [])]
    cited: set[str] = set()
    for name, data, ids in ordered_map(lambda n: _record(*listed[n]), len(listed), req.index.jobs, 64):
        folder.put(name, data)  # a merged DID's records too: its index line counts them (§9.1)
        cited |= ids
    if req.proofs is not None:
        for proof_id in sorted(cited):
            path = req.proofs / f"{proof_id}.json"
            if os.path.lexists(path):
                folder.put(f"{PROOFS}/{proof_id}.json", read_published(path))


def _checkout_files(req: CloseRequest) -> dict[str, bytes]:
    """The frozen inputs from the checkout: the track, the served bodies and the manifest, the statements, the
    key and its salt, the freeze record and its anchor, the pinned PEM files."""
    ix = req.index
    root, track, places = ix.root, ix.track, ix.track.places
    manifest = Manifest.load(root, places.manifest)
    files = tree_files(root, f"tracks/{track.piste}", TRACK)
    files |= {f"{CORPUS}/{entry.file}": entry.read_checked(root / places.build) for entry in manifest.entries}
    files |= {f"{MANIFEST}/{name}": data for name, data in manifest.files().items()}
    files[f"{SEASON}/taches.json"] = read_published(root / places.tasks_file)
    files[f"{SEASON}/cle.json"] = read_published(root / places.key_file)
    files[SALT] = (read_salt(req.salt_file).hex() + "\n").encode("ascii")
    files[f"{FREEZE}/record.json"] = read_published(root / places.record)
    files[f"{FREEZE}/anchor.json"] = read_published(root / places.anchor)
    files |= _chain_files(req, chain_entries(root, places))
    if os.path.lexists(root / invalidation_path(places)):
        files[INVALIDATION] = read_published(root / invalidation_path(places))
    contests = root / contest_folder(track)
    if os.path.isdir(contests):  # every contestation and decision, as recorded (read_contests checks them)
        files |= {f"{CONTESTATIONS}/{name}": read_published(contests / name)
                  for name in sorted(os.listdir(contests))}
    for path, name in ((req.pins.tsa_ca, "tsa-ca.pem"), (req.pins.tsa_cert, "tsa-cert.pem"),
                       (req.pins.rekor_key, "rekor-key.pem")):
        if path is not None:
            files[f"{PINNED}/{name}"] = read_published(path)
    return files


def _chain_files(req: CloseRequest, chain: list[ChainEntryJson]) -> dict[str, bytes]:
    """Each replaced record of the chain, its anchor and its salt (one ``--salt-file`` per record, in the
    chain's order, the one in force last), under ``gel/remplaces/<n>/``."""
    replaced = [e for e in chain if not e["en_vigueur"]]
    if len(req.replaced_salts) != len(replaced):
        raise PublicationError(f"the freeze chain of {req.index.track.piste} holds {len(chain)} records: give "
                               f"--salt-file once per record, in the chain's order ({len(req.replaced_salts) + 1} "
                               "given); every salt of the chain is published at the close")
    root = req.index.root
    files: dict[str, bytes] = {}
    for entry, salt in zip(replaced, req.replaced_salts, strict=True):
        record_name, anchor_name = published_link(entry)
        files[record_name] = read_published(root / entry["gel"])
        if anchor_name is not None and entry["ancre"] is not None:
            files[anchor_name] = read_published(root / entry["ancre"])
        files[replaced_salt(entry["numero"])] = (read_salt(salt).hex() + "\n").encode("ascii")
    return files


def _chain_json(chain: list[ChainEntryJson]) -> list[dict[str, object]]:
    """The chain as ``cloture.json`` lists it: each record, its anchor and salt in the folder, its proof_id,
    time and motive."""
    out: list[dict[str, object]] = []
    for e in chain:
        record_name, anchor_name = published_link(e)
        out.append({"numero": e["numero"], "releve": record_name, "sha256_releve": e["sha256"],
                    "ancre": anchor_name, "sel": SALT if e["en_vigueur"] else replaced_salt(e["numero"]),
                    "proof_id": e["proof_id"], "heure": e["heure"], "en_vigueur": e["en_vigueur"],
                    "remplace": e["remplace"], "motif": e["motif"]})
    return out


def _score(folder: _Folder, name: str) -> bytes:
    report = read_document(folder.read(name), "corpus-rapport/1", name)
    return ScoreReport.from_json(report["score_corpus"], name).to_bytes()


def _scores(folder: _Folder, jobs: int) -> None:
    """Each ranked participant's ``corpus-score/1``, as ``corpus score --json`` writes it, from its report (read
    on ``jobs`` processes, written here in order)."""
    names = sorted(n for n in folder.sums if n.startswith("rapports/") and n.endswith(".json"))
    for name, data in zip(names, ordered_map(lambda n: _score(folder, names[n]), len(names), jobs, 32),
                          strict=True):
        folder.put(f"{SCORES}/{name.removeprefix('rapports/')}", data)


def _cloture(req: CloseRequest, files: Mapping[str, str], index_bytes: bytes) -> bytes:
    """``cloture.json``: the close at a glance, from the index and the names of the files (``files``: by name)."""
    ix = req.index
    index = strict_json.document(index_bytes)
    assert isinstance(index, dict)
    record = read_record(ix.root, ix.track.places)
    anchor = Anchor.read(ix.root / ix.track.places.anchor)
    assert record is not None
    invalidation = read_invalidation(ix.root, ix.track.places)
    names = [n.removeprefix(f"{CONTESTATIONS}/") for n in files if n.startswith(f"{CONTESTATIONS}/")]
    def pinned(name: str) -> str | None:
        return f"{PINNED}/{name}" if f"{PINNED}/{name}" in files else None
    document = {
        "format": FORMAT, "piste": ix.track.piste, "saison": index["saison"], "titre": ix.track.title,
        "statut": index["statut"],
        "ouverture": instant(ix.opening) if ix.opening else None,
        "cloture": instant(ix.close) if ix.close else None,
        "trust_layer": {"url": ix.trust_layer_url, "cles": list(req.pins.trust_layer_keys),
                        "empreinte_cle_challenge": anchor.fingerprint},
        "autorite_horodatage": {"ca": pinned("tsa-ca.pem"), "certificat": pinned("tsa-cert.pem")},
        "rekor": pinned("rekor-key.pem"),
        "gel": {"releve": f"{FREEZE}/record.json", "ancre": f"{FREEZE}/anchor.json", "proof_id": anchor.proof_id,
                "manifest_hash": record.manifest_hash, "engagement_cle": record.key_commitment,
                "chaine": _chain_json(chain_entries(ix.root, ix.track.places))},
        "invalidation": None if invalidation is None else {
            "fichier": INVALIDATION, "invalidee_le": invalidation.le, "motif": invalidation.motif,
            "gel_en_vigueur": invalidation.gel_en_vigueur, "gels": invalidation.gels},
        "contestations": {"demandes": sum(not n.endswith(".decision.json") for n in names),
                          "decisions": sum(n.endswith(".decision.json") for n in names)},
        "participants": sum(n.startswith(f"{SCORES}/") for n in files),
        "soumissions": sum(n.startswith(f"{RECORDS}/") for n in files),
        "preuves": sum(n.startswith(f"{PROOFS}/") for n in files)}
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def read_cloture(data: bytes, source: str) -> dict[str, object]:
    """``cloture.json`` read back (strict JSON of its format), for the verification."""
    return formatted(data, FORMAT, source)


def _readme(req: CloseRequest, files: Iterable[str]) -> bytes:
    ix = req.index
    piste, titre = ix.track.piste, ix.track.title
    names = set(files)
    rows = [(CLOTURE, "la clôture en un coup d'œil : piste, saison, ouverture et clôture, l'URL de Trust Layer et "
                      "ses clés épinglées, l'autorité d'horodatage, la chaîne des relevés gelés et leurs ancres, "
                      "l'invalidation s'il y a lieu, les comptes"),
            ("index.json, index.html", "l'index public de la piste (spec §7) : deux tableaux jamais fusionnés, "
                                       "la ligne de la meilleure réponse constante en tête ; chaque rectification "
                                       "à côté du chiffre d'origine"),
            ("rapports/<agent>.json, .html", "le rapport de chaque participant classé (spec §7.5) : chaque tâche, "
                                             "chaque assertion et la cause de chaque assertion non étayée"),
            (f"{SCORES}/<agent>.json", "le rapport corpus-score/1 de chaque participant, tel que corpus score "
                                       "l'écrit"),
            (REGISTRATIONS, "les inscriptions (corpus-inscriptions/1) : nom, DID, empreinte de la clé, stack, "
                            "tableau, date, historique de liaison (spec §9.1)"),
            (f"{RECORDS}/<agent>/…", "chaque soumission comptée ou listée, telle que le service de saison l'a "
                                     "enregistrée : {\"recu_le\", \"soumission\"} (spec §4, §7.4)"),
            (f"{PROOFS}/<proof_id>.json", "la vue publique de chaque preuve citée, telle que GET /v1/proof/{id} "
                                          "la sert (spec §4.1)"),
            (f"{SEASON}/taches.json, {SEASON}/cle.json, {SALT}",
             "les énoncés, la clé de réponses et son sel : sha256(sel ‖ clé) est l'engagement du relevé gelé"),
            (f"{FREEZE}/record.json, {FREEZE}/anchor.json",
             "le relevé gelé en vigueur (spec §8) et la preuve Trust Layer qui l'ancre, avec son jeton RFC 3161"),
            (f"{REPLACED}/<n>/record.json, anchor.json, sel.hex",
             "chaque relevé remplacé avant l'ouverture, dans l'ordre de la chaîne, son ancre et son sel : "
             "chacun recalcule son engagement sha256(sel ‖ clé)"),
            (INVALIDATION, "l'invalidation de la saison (spec §8) : quand, pourquoi, le gel en vigueur ; aucun "
                           "classement n'est publié"),
            (f"{CONTESTATIONS}/c<NNN>.json, c<NNN>.decision.json",
             "chaque contestation (spec §9.2) et sa décision humaine, telles qu'enregistrées : les chiffres "
             "rectifiés de l'index et des rapports en sont rejoués"),
            (f"{MANIFEST}/manifest.json, manifest.sha256", "le manifeste du corpus : chaque corps servi et ses "
                                                          "hashes ; son SHA-256 est ancré par le relevé"),
            (f"{CORPUS}/…", "chaque corps servi par le corpus, octet pour octet"),
            (f"{TRACK}/…", "la définition de la piste (track.yaml, schémas) et la section de barème gelée"),
            (f"{PINNED}/…", "les certificats épinglés de l'autorité d'horodatage (et la clé Rekor s'il y a lieu)"),
            (SUMS, "le SHA-256 de chaque fichier du dossier (sha256sum -c SHA256SUMS)")]
    def present(row: tuple[str, str]) -> bool:
        first = row[0].split(",")[0].split("<")[0].removesuffix("…").rstrip("/")
        return first == SUMS or any(n.startswith(first) for n in names)
    rows = [row for row in rows if present(row)]
    paragraphs = [
        "Ce dossier suffit à vérifier la clôture de la piste hors ligne, sans le dépôt ni Trust Layer : "
        "recalculer l'engagement sha256(sel ‖ clé) de chaque relevé de la chaîne et le hash du manifeste contre "
        "les relevés ancrés, vérifier chaque ancre et chaque preuve, rescorer chaque participant, rejouer chaque "
        "rectification depuis les décisions publiées, reconstruire l'index et comparer ses octets.",
        f"Commande : corpus verify-publication <ce dossier> --trust-layer-key ed25519:<clé de Trust Layer> "
        "--tsa-ca <CA de l'autorité d'horodatage> (les clés épinglées de votre côté, jamais prises dans le "
        f"dossier). Piste : {piste}."]
    said = chain_paragraph(chain_entries(ix.root, ix.track.places))
    paragraphs += [said] if said else []
    invalidation = read_invalidation(ix.root, ix.track.places)
    if invalidation is not None:
        paragraphs.append(f"La saison a été invalidée le {invalidation.le} : {invalidation.motif}. Un changement "
                          "en cours de saison n'est pas une correction : il invalide la saison (spec §8). Aucun "
                          "classement n'est publié ; la clé, les sels et la chaîne des gels le sont.")
    else:
        paragraphs.append("Aucun chemin de stockage du service de saison n'y figure : chaque soumission porte un "
                          "nom de publication (tâche, heure de réception, début de son SHA-256).")
    decided = sum(n.startswith(f"{CONTESTATIONS}/") and n.endswith(".decision.json") for n in names)
    if decided:
        paragraphs.append(f"{decided} contestation(s) décidée(s) (spec §9.2) : chaque rectification acceptée "
                          "figure à côté du chiffre d'origine, conservé et marqué rectifié, avec sa date et son "
                          "motif ; les contestations refusées sont listées avec leur motif.")
    return page(f"{titre} : publication de la clôture", paragraphs, rows)


def _frozen_and_anchored(req: CloseRequest) -> None:
    """An invalidated season is published without its close having passed (spec §8: publish it, close the
    season), but frozen and anchored, with every salt of the chain recomputing its commitment."""
    ix = req.index
    places = ix.track.places
    missing = [str(p) for p in (places.record, places.anchor) if not os.path.lexists(ix.root / p)]
    if missing:
        raise PublicationError(f"the track {ix.track.piste} is not frozen and anchored ({' and '.join(missing)} "
                               "missing): nothing is published before the freeze and its anchor")
    o = ix.score_options
    problems = check_freeze(ix.root, req.salt_file, places)
    problems += chain_problems(ix.root, places, req.replaced_salts, o.trust_layer_key, o.fingerprint, o.window,
                               o.opening)
    if problems:
        raise PublicationError(f"the freeze check fails, nothing is published: {problems[0]}")


def write_close(req: CloseRequest, out: Path, emit: Emit | None = None) -> dict[str, str]:
    """Every file of ``<out>/<piste>/``, each as soon as it is ready, written into ``out`` (made here: it must not
    exist) or, with ``emit``, handed to it (the index and its reports are written into ``out`` all the same); the
    SHA-256 of each, by its path there. Everything that can refuse the close does before ``out`` is made (the
    index's own refusals included)."""
    ix = req.index
    if ix.draft:
        raise IndexInputError("a close publication is never a draft: give the close (pinned, or --season-close)")
    invalidated = read_invalidation(ix.root, ix.track.places) is not None  # its invalidation, no ranking (§8)
    if invalidated:
        _frozen_and_anchored(req)
    else:
        publication_close(ix)  # frozen, anchored and closed: refused before anything is computed
    write, routed = index_writer(ix)
    write(out)
    folder = _Folder(out, emit)
    folder.take()
    index_bytes = folder.read("index.json")
    if routed is not None:
        _scores(folder, ix.jobs)
        _records_and_proofs(req, routed, folder)
    for name, data in _checkout_files(req).items():
        folder.put(name, data)
    folder.put(CLOTURE, _cloture(req, folder.sums, index_bytes))
    folder.put(README, _readme(req, folder.sums))
    folder.put(SUMS, sums_text(folder.sums))
    return folder.sums
