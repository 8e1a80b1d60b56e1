"""A season's close to publish, for ``corpus index``: a community made from blind answers, and a frozen,
anchored scratch checkout of both tracks.

The community (issue 32, bars/index-public), for one track: a reference run and six community participants,
each answering from the recorded blind readings (``tests/fixtures/blind/<piste>/``, agents that never saw the
key), every claim cited with an honest proof of its own (its proof ids carry the participant's tag):

- three honest ones (the readings as recorded; on a track with fewer readings, the same claims in another
  order);
- one constant answer: the most frequent verdict of the key everywhere, the first reading's claims;
- one that overclaims once: the first reading, one value changed on its first task (cause ``valeur``);
- one whose first task was replaced: a wrong verdict received first, the reading's later, and one more
  received after the close (not counted);
- and one more registration whose DID is in the first honest participant's key history: merged (§9.1).

Run as a script, it writes the community of a track to a folder: ``python tests/index_community.py OUT``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))

from trackfix import ROOT, copy_tracks

from generator.contract.freeze import freeze
from generator.contract.manifest import Manifest
from generator.score import make_submission
from generator.tracks.loader import track_named

BLIND = ROOT / "tests" / "fixtures" / "blind"
CLOSE = "2026-11-30T18:00:00Z"
BEFORE = "2026-11-2{day}T{hour:02d}:00:00Z"
LATE = "2026-12-01T09:00:00Z"
NONCE = "cd" * 32
CHALLENGE_PROOF = "prf_20261002_090000_4e1c2a"

# Fictional stacks (no real model, framework or vendor): names the tests look for in negative categories.
STACKS = {
    "Run de référence Orfeo": "Orfeo 3.1 (Atelier Néris), cadre Lanterne 0.9, prompt publié",
    "Agent Honnête 1": "Orfeo 3.1 (Atelier Néris), cadre Lanterne 0.9",
    "Agent Honnête 2": "Calisto 2 (Studio Verlaine), scripts maison",
    "Agent Honnête 3": "Tessel 7b (Fonderie Aubrac), cadre Lanterne 1.0",
    "Agent Constant": "Calisto 2 mini (Studio Verlaine)",
    "Agent Surconfiant": "Brume 4 (Maison Ostrander), cadre Quadrille",
    "Agent Remplaçant": "Tessel 7b (Fonderie Aubrac), scripts maison",
    "Agent Lié": "Orfeo 3.1 (Atelier Néris), cadre Lanterne 0.9",
}
# The reference run's published model, version, framework and prompt (spec §7.1), all fictional.
REFERENCE_RUN = {"modele": "Orfeo", "version": "3.1", "framework": "Lanterne 0.9",
                 "prompt": {"texte": "Lis /referentiel, puis chaque ressource du graphe de la tâche ; rends le "
                                     "verdict et une assertion par fait fondateur, chacune avec sa preuve."}}
VENDOR_WORDS = ("Orfeo", "Néris", "Calisto", "Verlaine", "Tessel", "Aubrac", "Brume", "Ostrander", "Lanterne",
                "Quadrille")


def did_of(name: str) -> str:
    return "did:key:z6Mk" + hashlib.sha256(name.encode()).hexdigest()[:40]


def key_of(name: str) -> str:
    return hashlib.sha256(f"cle-api-{name}".encode()).hexdigest()


def readings(piste: str) -> list[dict[str, dict[str, Any]]]:
    """Each recorded blind reading of the track: task id -> the agent's verdict and claims."""
    out = []
    for folder in sorted(p for p in (BLIND / piste).iterdir() if p.is_dir()):
        out.append({f.stem: json.loads(f.read_bytes()) for f in sorted(folder.glob("*.json"))})
    return out


def constant_verdict(root: Path, piste: str) -> str:
    """The key's most frequent verdict (ties: alphabetical), counted here from season/conformite/cle.json."""
    track = track_named(root, piste)
    key = json.loads((root / track.trees.season / "cle.json").read_bytes())["taches"]
    counts: dict[str, int] = {}
    for entry in key.values():
        counts[entry["verdict"]] = counts.get(entry["verdict"], 0) + 1
    return min(counts, key=lambda v: (-counts[v], v))


@dataclass
class Community:
    """What the season service hands over for one track, written under ``folder``."""

    piste: str
    folder: Path
    registrations: Path
    submissions: Path
    names: list[str] = field(default_factory=list)

    def did(self, name: str) -> str:
        return did_of(name)


def _tagged(submission: dict[str, Any], tag: str) -> dict[str, Any]:
    """Each proof id made the participant's own (``prf_<tag>_...``): two participants never share a proof."""
    renamed = {p: f"prf_{tag}_{p.removeprefix('prf_')}" for p in submission["disclosures"]}
    submission["disclosures"] = {renamed[p]: d for p, d in submission["disclosures"].items()}
    for a in submission["assertions"]:
        a["proof_ids"] = [renamed[p] for p in a["proof_ids"]]
    return submission


class _Writer:
    def __init__(self, root: Path, piste: str, submissions: Path) -> None:
        track = track_named(root, piste)
        self.manifest = Manifest.load(root, track.trees.manifest)
        self.piste, self.submissions, self.count = piste, submissions, 0

    def write(self, name: str, task: str, verdict: str, claims: list[tuple[str, str, Any]], when: str,
              narrative: str = "") -> dict[str, Any]:
        sub = make_submission(self.manifest, task, verdict, claims, piste=self.piste, agent_did=did_of(name))
        sub = _tagged(sub, hashlib.sha256(name.encode()).hexdigest()[:8])
        sub["narrative"] = narrative or f"Verdict {verdict} sur {task}, chaque fait retenu porté par une " \
                                        "assertion."
        self.count += 1
        folder = self.submissions / when[:10] / hashlib.sha256(name.encode()).hexdigest()[:6]
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{task}-{self.count:03d}.json"
        path.write_text(json.dumps({"recu_le": when, "soumission": sub}, ensure_ascii=False, indent=1), "utf-8")
        return sub


def claims_of(answer: dict[str, Any]) -> list[tuple[str, str, Any]]:
    return [(a["resource"], a["field"], a["value"]) for a in answer["assertions"]]


def write_community(root: Path, piste: str, folder: Path) -> Community:
    """The community of one track, its registrations and its submissions, under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    subs = folder / "soumissions"
    w = _Writer(root, piste, subs)
    blind = readings(piste)
    constant = constant_verdict(root, piste)
    first = blind[0]
    honest = ["Agent Honnête 1", "Agent Honnête 2", "Agent Honnête 3"]
    for n, name in enumerate(["Run de référence Orfeo", *honest]):
        reading = blind[n % len(blind)]
        for day, task in enumerate(sorted(reading)):
            claims = claims_of(reading[task])
            if n >= len(blind):
                claims = claims[::-1] if n % 2 else claims[1:] + claims[:1]
            w.write(name, task, reading[task]["verdict"], claims, BEFORE.format(day=day % 8, hour=8 + n))
    for day, task in enumerate(sorted(first)):
        w.write("Agent Constant", task, constant, claims_of(first[task]), BEFORE.format(day=day % 8, hour=14))
    for day, task in enumerate(sorted(first)):
        claims = claims_of(first[task])
        if day == 0:
            resource, pointer, value = claims[0]
            claims[0] = (resource, pointer, f"{value}-bis" if isinstance(value, str) else [value])
        w.write("Agent Surconfiant", task, first[task]["verdict"], claims, BEFORE.format(day=day % 8, hour=15))
    for day, task in enumerate(sorted(first)):
        answer = first[task]
        if day == 0:
            wrong = next(v for v in [*track_named(root, piste).verdicts, constant] if v != answer["verdict"])
            w.write("Agent Remplaçant", task, wrong, claims_of(answer), BEFORE.format(day=0, hour=7),
                    "Première lecture, remplacée.")
            w.write("Agent Remplaçant", task, answer["verdict"], claims_of(answer), BEFORE.format(day=1, hour=7))
            w.write("Agent Remplaçant", task, wrong, claims_of(answer), LATE, "Reçue après la clôture.")
        else:
            w.write("Agent Remplaçant", task, answer["verdict"], claims_of(answer), BEFORE.format(day=day % 8,
                                                                                                   hour=16))
    task = sorted(first)[1]
    w.write("Agent Lié", task, first[task]["verdict"], claims_of(first[task]), BEFORE.format(day=3, hour=17))
    order = ["Run de référence Orfeo", *honest, "Agent Constant", "Agent Surconfiant", "Agent Remplaçant",
             "Agent Lié"]
    participants = []
    for n, name in enumerate(order):
        history = [did_of("Agent Lié")] if name == "Agent Honnête 1" else []
        participants.append({"agent": name, "did": did_of(name), "cle_empreinte": key_of(name),
                             "stack": STACKS[name], "tableau": "reference" if n == 0 else "communaute",
                             "inscrit_le": f"2026-10-0{1 + n}T09:00:00Z", "verified_did_history": history,
                             **({"reference": REFERENCE_RUN} if n == 0 else {})})
    registrations = folder / "inscriptions.json"
    registrations.write_text(json.dumps({"format": "corpus-inscriptions/1", "participants": participants},
                                        ensure_ascii=False, indent=1), "utf-8")
    return Community(piste, folder, registrations, subs, order)


# ------------------------------------------------------------------ a frozen, anchored scratch checkout


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode("utf-8")


def record_pair(root: Path, piste: str) -> dict[str, Any]:
    """The opened pair of the call that anchored the track's freeze record, its hashes derived here from
    CONTRACT.md §2 (the request of base URL + the record's served path; the record's bytes canonicalised)."""
    track = track_named(root, piste)
    base_url = json.loads((root / track.trees.manifest / "manifest.json").read_bytes())["base_url"]
    request = {"target": base_url + track.places.served_record, "method": "GET", "payload": {}, "amount": 0.0,
               "currency": "eur"}
    record = json.loads((root / track.places.record).read_bytes())
    return {"proof_id": CHALLENGE_PROOF,
            "request_hash": {"nonce": NONCE, "value": hashlib.sha256(_canonical(request)).hexdigest()},
            "response_hash": {"nonce": NONCE, "value": hashlib.sha256(_canonical(record)).hexdigest()}}


def frozen_checkout(dest: Path, pistes: tuple[str, ...] = ("conformite", "generique")) -> dict[str, tuple[Path,
                                                                                                          Path]]:
    """A copy of the checkout's built trees and tracks, each track of ``pistes`` frozen (its salt written
    beside, outside the checkout) and its anchor given as an opened pair: piste -> (salt file, anchor)."""
    every = ("conformite", "generique")
    for piste in every:
        trees = track_named(ROOT, piste).trees
        for tree in (trees.build, trees.manifest, trees.season):
            shutil.copytree(ROOT / tree, dest / tree)
    copy_tracks(dest, tracks=every)
    out = {}
    for piste in pistes:
        track = track_named(dest, piste)
        salt = dest.parent / f"{piste}.salt"
        freeze(dest, dest / track.bareme.file, salt, track.places)
        anchor = dest.parent / f"{piste}-anchor.json"
        anchor.write_text(json.dumps(record_pair(dest, piste)), "utf-8")
        out[piste] = (salt, anchor)
    return out


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "run/index-community")
    for name in ("conformite", "generique"):
        made = write_community(ROOT, name, target / name)
        print(f"{name}: {made.registrations} and {made.submissions}")
