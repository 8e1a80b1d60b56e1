"""bars/replaced-freeze-and-contestation (issue 41): a freeze replaced before the opening and scored through the
chain; both publications showing the chain; a contestation accepted and one refused, the close published again
with the rectification beside the original, ``corpus verify-publication`` holding on it and refusing a figure
changed without a decision, a decision removed and a link of the chain removed; a replacement after the
opening refused and the invalidated season published and verified.

In a temporary folder (``--keep DIR`` keeps it), on a local stand-in of Trust Layer's API
(``tests/season_rehearsal.py``, proof-spec 3.1, a local RFC 3161 authority), ``tests/replaced_rehearsal.py``
runs conformité's season: ``corpus freeze``, ``corpus pin`` and the anchoring call; the opening pinned a few
seconds ahead; ``corpus freeze --replaces`` (no ``--opening``: the pinned one) and the new record anchored;
``freeze-check`` with both salts; ``corpus publish --opening``; once the season has opened, the community of
``tests/index_community.py`` (its overclaimer's second task overclaimed too), every claim proved; the close;
``proofs fetch``, ``publish --close`` with both salts, ``verify-publication``; two contestations and their
decisions; ``publish --close`` again and ``verify-publication``; then, on a copy of the checkout, a replacement
after the opening refused, ``corpus season invalidate``, ``publish --close`` and ``verify-publication``.
This script prints every step, what each publication shows, and the offline check of each tampered copy.

    .venv/bin/python bench/replaced_freeze_and_contestation.py               # prints; exit 0 when all holds
    .venv/bin/python bench/replaced_freeze_and_contestation.py --keep OUT    # and keeps the folders in OUT

Needs the openssl command (the test authority) and the committed build.
"""

from __future__ import annotations

import argparse
import html
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from cli_run import Ran, run_corpus  # noqa: E402
from replaced_rehearsal import MOTIF, Replaced, load, overclaimer_line, run_replaced_season  # noqa: E402
from season_rehearsal import kept, relist  # noqa: E402


def figures(line: Any) -> str:
    o = line["overclaim"]
    return f"réussite {line['reussite']}/10, overclaim {o['non_etayees']}/{o['rendues']}, rendues " \
           f"{line['taches_rendues']}/10"


def verified(s: Replaced, folder: Path, shown: int = 0) -> Ran:
    """``corpus verify-publication`` on ``folder``, its ``shown`` first failing (or every ok) lines printed."""
    ran = run_corpus(*s.verify_args(folder))
    lines = ran.stdout.splitlines()
    failing = [ln for ln in lines if ln.startswith("FAIL")]
    for line in (failing[:shown] if failing else lines) if shown else []:
        print(f"    {line[:230]}")
    return ran


def tampered(s: Replaced, name: str, change: Callable[[Path], None]) -> Ran:
    """A copy of the rectified publication, changed and its SHA256SUMS written again, as a forger would."""
    copy = s.work / "tampered" / name / "conformite"
    shutil.copytree(s.publication, copy)
    change(copy)
    relist(copy)
    return verified(s, copy, 2)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    problems: list[str] = []

    def expect(ok: bool, what: str) -> None:
        print(f"  [{'ok' if ok else 'FAILED'}] {what}")
        if not ok:
            problems.append(what)

    with kept(args.keep) as work:
        print("running the season (about half a minute: the opening is pinned a few seconds ahead) ...")
        s = run_replaced_season(work / "season", print)
        by_name = {step.name: step for step in s.steps}

        print("== 1. a freeze replaced before the pinned opening, checked and scored through the chain")
        for step in s.steps[:next(i for i, st in enumerate(s.steps) if st.name == "publish --opening") + 1]:
            expect(step.ok, step.line()[5:])
        said = by_name["freeze --replaces (the pinned opening)"].ran.stderr
        print("  " + next(line for line in said.splitlines() if "replaced before" in line))

        print("== 2. the opening kit lists every proof_id of the chain with its motive")
        summary = load(s.kit / "ouverture.json")
        for a in summary["ancres"]:
            print(f"  ancre {a['numero']}: {a['proof_id']} à {a['heure']} ({a['fichier']})"
                  + (f", remplace {a['remplace']} : {a['motif']}" if a["remplace"] else ""))
        page = html.unescape((s.kit / "LISEZMOI.html").read_text("utf-8"))
        expect([a["proof_id"] for a in summary["ancres"]] == s.proof_ids and MOTIF in page
               and all(p in page for p in s.proof_ids), "ouverture.json and LISEZMOI.html name both proof_ids and "
                                                       "the motive; gel/remplaces/1/ holds the replaced record")

        print("== 3. the close: every record, anchor and salt of the chain, verified offline")
        for name in ("proofs fetch --records", "publish --close (both salts)", "verify-publication"):
            expect(by_name[name].ok, by_name[name].line()[5:])
        for link in load(s.first_publication / "cloture.json")["gel"]["chaine"]:
            print(f"  chaîne {link['numero']}: {link['releve']}, {link['ancre']}, {link['sel']}: "
                  f"{link['proof_id']}" + (" (en vigueur)" if link["en_vigueur"] else ""))
        original = overclaimer_line(load(s.first_publication / "index.json"))
        print(f"  Agent Surconfiant: {figures(original)}")

        print("== 4. contestations (§9.2): one accepted, one refused; the close published again")
        for step in s.steps:
            if step.name.startswith(("contest ", "publish --close again", "verify-publication (rectified)")):
                expect(step.ok, step.line()[5:])
        index = load(s.publication / "index.json")
        line = overclaimer_line(index)
        rect = line["rectification"]
        print(f"  Agent Surconfiant, original kept: {figures(line)}")
        print(f"  rectifié le {rect['le']}: {figures(rect['figures'])} "
              f"({', '.join(c['contestation'] + ' : ' + c['motif'] for c in rect['contestations'])})")
        for c in index["contestations"]:
            print(f"  {c['contestation']} {c['tache']} {c['assertion']} ({c['cause']}): {c['decision']} le "
                  f"{c['decidee_le']} par {c['par']} : {c['motif']}")
        expect(figures(line) == figures(original), "the original figures kept on the line, the rectification "
                                                   "beside them")

        print("== 5. the offline check: corpus verify-publication on the rectified close publication")
        ran = verified(s, s.publication, 20)
        expect(ran.returncode == 0, "verify-publication holds: the chain verified, the rectified figures replayed "
                                    "from the published decisions, the whole close computed again")

        def figure(folder: Path) -> None:
            value = load(folder / "index.json")
            overclaimer_line(value)["reussite"] += 1
            (folder / "index.json").write_text(json.dumps(value, ensure_ascii=False, indent=2) + "\n", "utf-8")
        ran = tampered(s, "figure", figure)
        expect(ran.returncode == 1 and "a figure changed without a decision" in ran.stdout,
               "a figure changed without a decision: refused, naming index.json and the figure")
        ran = tampered(s, "decision", lambda f: (f / "gel/contestations/c001.decision.json").unlink())
        expect(ran.returncode == 1 and "no accepted decision makes it" in ran.stdout,
               "a decision removed: refused, naming index.json and the report")
        ran = tampered(s, "link", lambda f: shutil.rmtree(f / "gel/remplaces/1"))
        expect(ran.returncode == 1 and "gel/remplaces/1/record.json: missing" in ran.stdout,
               "a link of the chain removed: refused, naming it")

        print("== 6. after the opening: a replacement refused, the season invalidated and published so")
        refused = by_name["freeze --replaces after the opening: refused"]
        print(f"  {refused.ran.stderr.strip()[:300]}")
        for name in ("freeze --replaces after the opening: refused", "season invalidate",
                     "publish --close (invalidated)"):
            expect(by_name[name].ok, by_name[name].line()[5:])
        invalid = load(s.invalidated / "index.json")
        print(f"  index.json: statut {invalid['statut']}, {invalid['invalidation']}")
        ran = verified(s, s.invalidated, 20)
        ranking = (s.invalidated / "rapports").exists()
        expect(ran.returncode == 0 and invalid["statut"] == "invalidee" and not ranking,
               "the invalidation published, no ranking, verify-publication holding on it")
        if args.keep:
            print(f"kept in {args.keep}")
    print("holds" if not problems else f"FAILED: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
