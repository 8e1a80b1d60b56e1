"""A season whose freeze was replaced before the opening, published and contested (issue 41, point 3;
bars/replaced-freeze-and-contestation), against the local stand-in of Trust Layer's API of
``tests/season_rehearsal.py``.

In a scratch checkout, for conformité only: ``corpus freeze``; ``corpus pin`` (the stand-in, the test
authority, the challenge key's file) and the anchoring call through the stand-in's proxy; the season's opening
pinned a few seconds ahead (``corpus pin --season-opening``); ``corpus freeze --replaces`` with no
``--opening`` (the pinned one is taken) and the new record anchored the same way; ``freeze-check`` with both
salts; ``corpus publish --opening``; once the season has opened, the community of ``tests/index_community.py``
(its overclaimer's second task overclaimed too), every claim proved in proof-spec 3.1; the close pinned;
``proofs fetch``, ``publish --close`` with both salts and ``verify-publication``; two contestations of the
overclaimer, one accepted and one refused, and the close published again with the rectification beside the
original figures, verified again. Then, on a copy of the checkout: a replacement after the opening refused,
``corpus season invalidate`` and the invalidated season published and verified.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from cli_run import Ran
from index_community import did_of, write_community
from season_rehearsal import (
    LATE,
    Say,
    Season,
    StandInProxy,
    _late_after,
    _prove_records,
    _served,
    anchor_call,
    set_up,
)

PISTE = "conformite"
MOTIF = ("appliquer le verdict fondé et retirer /page_suivante des listes communes (conformite-bareme-v3) ; "
         "corpus et clé de réponses inchangés")
OVERCLAIMER = "Agent Surconfiant"
OPENS_IN = 12  # seconds from the first anchor to the pinned opening: the replacement and its anchor fit before
ACCEPTED = "la valeur affirmée est celle que sert le corpus figé"
REFUSED = "la valeur affirmée diffère du corpus figé"


@dataclass
class Replaced(Season):
    """The replaced season: its two salts, the chain's proof_ids, the publications and the invalidated copy."""

    chain_salts: list[Path] = field(default_factory=list)
    proof_ids: list[str] = field(default_factory=list)
    opening: str = ""
    kit: Path = field(init=False)
    first_publication: Path = field(init=False)
    publication: Path = field(init=False)
    invalidated: Path = field(init=False)
    contested: list[tuple[str, str, str]] = field(default_factory=list)  # (task, assertion, cause)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.kit = self.work / "opening" / PISTE
        self.first_publication = self.work / "publication-first" / PISTE
        self.publication = self.work / "publication" / PISTE
        self.invalidated = self.work / "publication-invalidated" / PISTE

    def salt_args(self) -> list[str]:
        return [a for s in self.chain_salts for a in ("--salt-file", str(s))]


def _proof_id(path: Path) -> str:
    return str(json.loads(path.read_bytes())["proof_id"])


def _wait_until(moment: datetime) -> None:
    while datetime.now(UTC) <= moment:
        time.sleep(0.2)


def _overclaim_twice(records: Path) -> None:
    """The overclaimer's second task claims a value the corpus does not serve too (before its proofs)."""
    did = did_of(OVERCLAIMER)
    mine = sorted(p for p in records.rglob("*.json")
                  if json.loads(p.read_bytes())["soumission"]["agent_did"] == did)
    envelope = json.loads(mine[1].read_bytes())
    claim = envelope["soumission"]["assertions"][-1]["claim"]
    claim["value"] = f"{claim['value']}-bis" if isinstance(claim["value"], str) else [claim["value"]]
    mine[1].write_text(json.dumps(envelope, ensure_ascii=False, indent=1), "utf-8")


def run_replaced_season(work: Path, say: Say = lambda _: None) -> Replaced:
    """The replaced season from the first freeze to the invalidated copy; every step kept in ``steps``."""
    s = Replaced(work)
    issuer, authority, key_file = set_up(s)
    root = ["--root", str(s.root), "--track", PISTE]
    with StandInProxy(issuer, _served(s.root)) as proxy:
        say(f"stand-in Trust Layer API at {proxy.url} (key {issuer.key})")
        s.chain_salts = [work / "conformite-1.salt", work / "conformite-2.salt"]
        s.salts[PISTE] = s.chain_salts[0]
        s.corpus("freeze", "freeze", *root, "--salt-file", str(s.chain_salts[0]))
        s.corpus("pin", "pin", *root, "--trust-layer-url", proxy.url, "--trust-layer-key", issuer.key,
                 "--challenge-key-file", str(key_file), "--tsa-ca", str(authority.ca), "--tsa-cert",
                 str(authority.cert))
        first = anchor_call(s, proxy, PISTE, say, "-1")
        s.proof_ids.append(_proof_id(first))
        s.corpus("freeze-anchor (the first record)", "freeze-anchor", *root, str(first))
        opening = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=OPENS_IN)
        s.opening = f"{opening:%Y-%m-%dT%H:%M:%SZ}"
        s.corpus("pin the opening", "pin", *root, "--season-opening", s.opening)
        time.sleep(1.1)  # the replacement's anchor is stamped a second after the first one's at least
        s.corpus("freeze --replaces (the pinned opening)", "freeze", *root, "--salt-file", str(s.chain_salts[1]),
                 "--replaces", s.proof_ids[0], "--motif", MOTIF)
        second = anchor_call(s, proxy, PISTE, say, "-2")
        s.proof_ids.append(_proof_id(second))
        s.corpus("freeze-anchor (the replacing record)", "freeze-anchor", *root, str(second))
        s.corpus("freeze-check (both salts, no pin flag)", "freeze-check", *root, *s.salt_args())
        s.corpus("freeze-check (the last salt only): refused", "freeze-check", *root, "--salt-file",
                 str(s.chain_salts[1]), expect=1)
        s.corpus("publish --opening", "publish", "--opening", *root, "--out", str(work / "opening"))
        say(f"  chain {' -> '.join(s.proof_ids)}; the season opens at {s.opening}")
        _wait_until(opening)  # the community's proofs are stamped within the season
        community = write_community(s.root, PISTE, work / "service" / PISTE)
        s.records[PISTE], s.registrations[PISTE] = community.submissions, community.registrations
        _overclaim_twice(community.submissions)
        _prove_records(community.submissions, issuer, proxy, 0)
        close = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=2)
        _late_after(s.records[PISTE], close)
        s.corpus("pin the close", "pin", *root, "--season-close", f"{close:%Y-%m-%dT%H:%M:%SZ}")
        _wait_until(close + LATE)  # the late record too is in the past: none from the future
        s.proofs[PISTE] = work / "proofs" / PISTE
        s.corpus("proofs fetch --records", "proofs", "fetch", "--records", str(s.records[PISTE]), "--track", PISTE,
                 "--out", str(s.proofs[PISTE]), "--root", str(s.root))
    _publish(s, "publish --close (both salts)", s.first_publication.parent)
    s.corpus("verify-publication", *s.verify_args(s.first_publication))
    _contest(s)
    _publish(s, "publish --close again (the rectification beside the original)", s.publication.parent)
    s.corpus("verify-publication (rectified)", *s.verify_args(s.publication))
    _invalidate(s)
    return s


def _publish(s: Replaced, name: str, out: Path, root: Path | None = None) -> Ran:
    return s.corpus(name, "publish", "--close", "--root", str(root or s.root), "--track", PISTE, "--records",
                    str(s.records[PISTE]), "--registrations", str(s.registrations[PISTE]), "--proofs",
                    str(s.proofs[PISTE]), *s.salt_args(), "--out", str(out))


def _contest(s: Replaced) -> None:
    """Two of the overclaimer's assertions contested on the day the score was published; the first accepted,
    the second refused."""
    index = json.loads((s.first_publication / "index.json").read_bytes())
    line = next(ln for t in index["tableaux"].values() for ln in t["lignes"] if ln["did"] == did_of(OVERCLAIMER))
    report = json.loads((s.first_publication / line["rapport"]).read_bytes())
    s.contested = [(t["tache"], a["id"], a["cause"]) for t in report["taches"] for a in t["assertions"]
                   if a["cause"]][:2]
    root = ["--root", str(s.root), "--track", PISTE]
    for task, ident, cause in s.contested:
        s.corpus(f"contest add {task} {ident} ({cause})", "contest", "add", *root, "--index",
                 str(s.first_publication), "--did", did_of(OVERCLAIMER), "--tache", task, "--assertion", ident,
                 "--cause", cause)
    s.corpus("contest decide c001: acceptee", "contest", "decide", *root, "--contestation", "c001", "--decision",
             "acceptee", "--statut", "etayee", "--motif", ACCEPTED, "--par", "Jury PROVE IT")
    s.corpus("contest decide c002: refusee", "contest", "decide", *root, "--contestation", "c002", "--decision",
             "refusee", "--motif", REFUSED, "--par", "Jury PROVE IT")


def _invalidate(s: Replaced) -> None:
    """On a copy of the checkout: after the opening, a replacement refused naming the way out; the season
    invalidated, published with no ranking and verified."""
    other = s.work / "checkout-invalidated"
    shutil.copytree(s.root, other)
    root = ["--root", str(other), "--track", PISTE]
    s.corpus("freeze --replaces after the opening: refused", "freeze", *root, "--salt-file",
             str(s.work / "conformite-3.salt"), "--replaces", s.proof_ids[1], "--motif", "un barème corrigé",
             expect=1)
    s.corpus("season invalidate", "season", "invalidate", *root, "--motif",
             "le barème a été modifié après l'ouverture de la saison")
    s.corpus("publish --close (invalidated)", "publish", "--close", *root, *s.salt_args(), "--out",
             str(s.invalidated.parent))
    s.corpus("verify-publication (invalidated)", *s.verify_args(s.invalidated))


def load(path: Path) -> Any:
    return json.loads(path.read_bytes())


def overclaimer_line(index: Any) -> Any:
    return next(ln for t in index["tableaux"].values() for ln in t["lignes"] if ln["did"] == did_of(OVERCLAIMER))
