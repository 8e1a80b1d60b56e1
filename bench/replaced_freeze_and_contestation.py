"""bars/replaced-freeze-and-contestation (issue 41): a freeze replaced before the opening and scored through the
chain; a replacement after the opening refused and the invalidation published; a contestation accepted and one
refused, the index republished with the rectification beside the original, its offline check holding and
refusing a figure changed without a decision.

In a temporary folder: a scratch copy of the checkout, conformité frozen; its record anchored by a Trust Layer
1.2 proof made here with a key of its own (``tests/trust_layer_fixtures.py``), then replaced before a pinned
opening (new salt, the motive of spec §8's example) and the new record anchored; the community of
``tests/index_community.py`` with its overclaimer's second task overclaimed too; ``corpus index`` with both
salts; two contestations and their decisions; ``corpus index`` again; then on a copy, a replacement after the
opening refused, ``corpus season invalidate`` and ``corpus index`` once more.

    .venv/bin/python bench/replaced_freeze_and_contestation.py               # prints; exit 0 when all holds
    .venv/bin/python bench/replaced_freeze_and_contestation.py --keep OUT    # and keeps the folders in OUT
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from index_community import CLOSE, frozen_checkout, record_pair, write_community  # noqa: E402
from trust_layer_fixtures import FINGERPRINT, TrustLayer  # noqa: E402

from generator.cli.main import main as corpus  # noqa: E402
from generator.publish.contestation import read_contests  # noqa: E402
from generator.publish.published import IndexJson, RapportJson  # noqa: E402
from generator.publish.rectification import by_did, rectification_problems  # noqa: E402
from generator.tracks.loader import track_named  # noqa: E402
from generator.trust_layer.freeze_chain import chain_entries  # noqa: E402

PISTE = "conformite"
FIRST, SECOND = "prf_20261202_013023_ae4117", "prf_20261203_100000_be5228"
MOTIF = ("appliquer le verdict fondé et retirer /page_suivante des listes communes (conformite-bareme-v3) ; "
         "corpus et clé de réponses inchangés")


def run(*args: str) -> tuple[int, str]:
    """``corpus ARGS`` in this process: its exit code and what it printed (stderr and stdout)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = corpus(list(args))
    return code, (err.getvalue() + out.getvalue()).strip()


def anchor(root: Path, tl: TrustLayer, proof_id: str, timestamp: str, folder: Path) -> None:
    pair = record_pair(root, PISTE)
    proof = tl.proof(pair["request_hash"]["value"], pair["response_hash"]["value"], proof_id=proof_id,
                     timestamp=timestamp)
    path = folder / f"{proof_id}.json"
    path.write_text(json.dumps(proof), "utf-8")
    code, said = run("freeze-anchor", "--track", PISTE, "--root", str(root), str(path), "--trust-layer-key",
                     tl.key, "--challenge-key-fingerprint", FINGERPRINT)
    assert code == 0, said


def load(path: Path) -> Any:
    return json.loads(path.read_bytes())


def line_of(index: Any, did: str) -> Any:
    return next(ln for t in index["tableaux"].values() for ln in t["lignes"] if ln["did"] == did)


def figures(line: Any) -> str:
    o = line["overclaim"]
    return f"réussite {line['reussite']}/10, overclaim {o['non_etayees']}/{o['rendues']}, rendues " \
           f"{line['taches_rendues']}/10"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="copy the checkout and the published folders here")
    args = parser.parse_args()
    problems: list[str] = []

    def expect(ok: bool, what: str) -> None:
        print(f"  [{'ok' if ok else 'FAILED'}] {what}")
        if not ok:
            problems.append(what)

    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        root = tmp / "checkout"
        salt1, _ = frozen_checkout(root, (PISTE,))[PISTE]
        tl = TrustLayer()
        print("== 1. a freeze replaced before the opening, scored through the chain")
        anchor(root, tl, FIRST, "2026-12-02T01:30:23Z", tmp)
        salt2 = tmp / "conformite-2.salt"
        code, said = run("freeze", "--track", PISTE, "--root", str(root), "--salt-file", str(salt2), "--replaces",
                         FIRST, "--motif", MOTIF, "--opening", "2099-01-01T00:00:00Z")
        print("  " + next(s for s in said.splitlines() if "replaced before" in s))
        expect(code == 0, "corpus freeze --replaces: the replaced record and its anchor kept in remplaces/1/")
        anchor(root, tl, SECOND, "2026-12-03T10:00:00Z", tmp)
        for e in chain_entries(root, track_named(root, PISTE).places):
            print(f"  chaîne {e['numero']}: {e['gel']} ancré par {e['proof_id']} à {e['heure']}"
                  + (f", remplace {e['remplace']} : {e['motif']}" if e["remplace"] else "")
                  + (" (en vigueur)" if e["en_vigueur"] else ""))
        code, said = run("freeze-check", "--track", PISTE, "--root", str(root), "--salt-file", str(salt1),
                         "--salt-file", str(salt2), "--trust-layer-key", tl.key)
        expect(code == 0 and said.endswith("passed"), "freeze-check with both salts, in the chain's order: passed")
        code, said = run("freeze-check", "--track", PISTE, "--root", str(root), "--salt-file", str(salt2),
                         "--trust-layer-key", tl.key)
        expect(code == 1 and "once per record" in said, "freeze-check with the last salt only: refused")
        community = write_community(root, PISTE, tmp / "service")
        did = community.did("Agent Surconfiant")
        second = sorted(p for p in community.submissions.rglob("*.json") if did_folder(p, "Agent Surconfiant"))[1]
        envelope = load(second)
        claim = envelope["soumission"]["assertions"][-1]["claim"]
        claim["value"] = f"{claim['value']}-bis" if isinstance(claim["value"], str) else [claim["value"]]
        second.write_text(json.dumps(envelope, ensure_ascii=False), "utf-8")
        out = tmp / "publie"
        index_args = ["index", "--track", PISTE, "--submissions", str(community.submissions), "--registrations",
                      str(community.registrations), "--out", str(out), "--salt-file", str(salt1), "--salt-file",
                      str(salt2), "--trust-layer-key", tl.key, "--root", str(root), "--season-close", CLOSE]
        code, said = run(*index_args)
        index = load(out / PISTE / "index.json")
        expect(code == 0 and index["gel"]["ancre"] == SECOND,
               f"corpus index through the chain: gel {index['gel']['statut']}, ancre {index['gel'].get('ancre')}")
        original = line_of(index, did)
        print(f"  Agent Surconfiant: {figures(original)}")

        print("== 2. contestations (§9.2): one accepted, one refused; the index republished")
        report = load(out / PISTE / original["rapport"])
        caused = [(t["tache"], a["id"], a["cause"]) for t in report["taches"] for a in t["assertions"]
                  if a["cause"]]
        for n, (task, ident, cause) in enumerate(caused):
            code, said = run("contest", "add", "--track", PISTE, "--root", str(root), "--index", str(out / PISTE),
                             "--did", did, "--tache", task, "--assertion", ident, "--cause", cause, "--le",
                             f"2026-12-0{3 + n}")
            expect(code == 0, said)
        code, said = run("contest", "add", "--track", PISTE, "--root", str(root), "--index", str(out / PISTE),
                         "--did", did, "--tache", caused[0][0], "--assertion", caused[0][1], "--cause", "bareme",
                         "--le", "2026-12-05")
        expect(code == 1, f"the barème contested: {said}")
        code, said = run("contest", "add", "--track", PISTE, "--root", str(root), "--index", str(out / PISTE),
                         "--did", did, "--tache", caused[0][0], "--assertion", caused[0][1], "--cause",
                         caused[0][2], "--le", "2026-12-20")
        expect(code == 1, f"after 14 days: {said}")
        code, said = run("contest", "decide", "--track", PISTE, "--root", str(root), "--contestation", "c001",
                         "--decision", "acceptee", "--statut", "etayee", "--motif",
                         "la valeur affirmée est celle que sert le corpus figé", "--par", "Jury PROVE IT",
                         "--le", "2026-12-20")
        expect(code == 0, said)
        code, said = run("contest", "decide", "--track", PISTE, "--root", str(root), "--contestation", "c002",
                         "--decision", "refusee", "--motif", "la valeur affirmée diffère du corpus figé",
                         "--par", "Jury PROVE IT", "--le", "2026-12-21")
        expect(code == 0, said)
        code, said = run("contest", "decide", "--track", PISTE, "--root", str(root), "--contestation", "c002",
                         "--decision", "acceptee", "--statut", "etayee", "--motif", "x", "--par", "Autre",
                         "--le", "2026-12-22")
        expect(code == 1, f"a second decision: {said}")
        code, said = run(*index_args)
        index = load(out / PISTE / "index.json")
        line = line_of(index, did)
        rect = line["rectification"]
        print(f"  Agent Surconfiant, original kept: {figures(line)}")
        print(f"  rectifié le {rect['le']}: {figures(rect['figures'])} "
              f"({', '.join(c['contestation'] + ' : ' + c['motif'] for c in rect['contestations'])})")
        for c in index["contestations"]:
            print(f"  {c['contestation']} {c['tache']} {c['assertion']} ({c['cause']}): {c['decision']} le "
                  f"{c['decidee_le']} par {c['par']} : {c['motif']}")
        expect(code == 0 and figures(line) == figures(original), "the original figures kept on the line")
        page = (out / PISTE / "index.html").read_text("utf-8")
        expect(f"rectifié le {rect['le']}" in page and "refusée le 2026-12-21" in page,
               "index.html shows the rectification beside the original and the refused contestation")
        paths = [ln["rapport"] for t in index["tableaux"].values() for ln in t["lignes"] if "rapport" in ln]
        reports = {p: cast(RapportJson, load(out / PISTE / p)) for p in paths}
        decisions = by_did(read_contests(root, track_named(root, PISTE)))
        found = rectification_problems(cast(IndexJson, index), reports, decisions)
        expect(found == [], "offline check: the rectified figures replayed from the decisions")
        tampered = json.loads(json.dumps(index))
        line_of(tampered, did)["reussite"] -= 1
        found = rectification_problems(tampered, reports, decisions)
        expect(any("without a decision" in p for p in found), f"a figure changed without a decision: {found[:1]}")

        print("== 3. after the opening: a replacement refused, the season invalidated and published so")
        other = tmp / "invalidated"
        shutil.copytree(root, other)
        code, said = run("freeze", "--track", PISTE, "--root", str(other), "--salt-file", str(tmp / "c3.salt"),
                         "--replaces", SECOND, "--motif", "un barème corrigé", "--opening", "2026-12-04T00:00:00Z")
        print(f"  {said}")
        expect(code == 1 and "il invalide la saison" in said and "season invalidate" in said,
               "the replacement after the opening refused, naming the way out")
        code, said = run("season", "invalidate", "--track", PISTE, "--root", str(other), "--motif",
                         "le barème a été modifié après l'ouverture de la saison")
        expect(code == 0, said)
        code, said = run(*[a if a != str(root) else str(other) for a in index_args[:-2]], "--out",
                         str(tmp / "publie-invalide"), "--season-close", CLOSE)
        published = tmp / "publie-invalide" / PISTE
        invalid = load(published / "index.json")
        print(f"  index.json: statut {invalid['statut']}, {invalid['invalidation']}")
        expect(code == 0 and invalid["statut"] == "invalidee" and "tableaux" not in invalid
               and not (published / "rapports").exists(), "the invalidation published, no ranking")
        if args.keep:
            shutil.rmtree(args.keep, ignore_errors=True)
            shutil.copytree(tmp, args.keep, ignore=shutil.ignore_patterns("*.salt"))
            print(f"kept in {args.keep}")
    print("holds" if not problems else f"FAILED: {len(problems)} problem(s)")
    return 1 if problems else 0


def did_folder(path: Path, name: str) -> bool:
    """A submission file of ``name`` (the community writes each participant's under its own folder)."""
    return path.parent.name == hashlib.sha256(name.encode()).hexdigest()[:6]


if __name__ == "__main__":
    raise SystemExit(main())
