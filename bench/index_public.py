"""bars/index-public: a season's close published, shown on the repository's two tracks.

In a temporary folder: a scratch copy of the checkout, each track frozen and anchored; a community made from
blind answers (``tests/index_community.py``: a reference run; three honest participants, a constant answer,
one that overclaims once, one whose submission was replaced; and a DID linked to another's key); then
``corpus index`` per track, as an operator runs it at the close. It prints what the issue asks to see: each
track's two tables, the constant line first; the overclaimer's unsupported assertion and its cause; the
merged DID; the labels of §7.3 on every page; and the refusal, without ``--brouillon``, on a track that is
not frozen (the repository's own).

    .venv/bin/python bench/index_public.py               # prints; exit 0 when everything shown holds
    .venv/bin/python bench/index_public.py --keep OUT    # and copies the published folders to OUT
"""

from __future__ import annotations

import argparse
import html
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from index_community import CLOSE, frozen_checkout, write_community  # noqa: E402

from generator.cli.main import main as corpus  # noqa: E402
from generator.publish.wording import AI_ACT, CALIBRATION, STACK_DECLAREE  # noqa: E402


def _overclaim(value: Any) -> str:
    return value if isinstance(value, str) else f"{value['non_etayees']}/{value['rendues']}"


def show_track(folder: Path) -> list[str]:
    """The published index of one track, as lines; and what does not hold, as problems."""
    index = json.loads((folder / "index.json").read_bytes())
    problems = []
    print(f"== {index['piste']}: {index['statut']}, gel {index['gel']['statut']} ({index['gel'].get('ancre')}), "
          f"ordre {index['ordre']}")
    for name, table in index["tableaux"].items():
        print(f"  {table['titre']}: {table['etiquette']}")
        for line in table["lignes"]:
            stack = line["stack"]["mention"] if line["stack"] else "-"
            print(f"    {line['agent']:<28} réussite {line['reussite']:>2}/10  overclaim "
                  f"{_overclaim(line['overclaim']):<10} rendues {line['taches_rendues'] or '-':>2}  [{stack}]")
        if table["lignes"][0]["agent"] != "meilleure réponse constante":
            problems.append(f"{index['piste']} {name}: the constant line is not first")
        mentions = {line["stack"]["mention"] for line in table["lignes"][1:]}
        if name == "communaute" and mentions != {STACK_DECLAREE}:
            problems.append(f"{index['piste']}: a community line without {STACK_DECLAREE!r}")
    if index["tableaux"]["reference"]["etiquette"] != CALIBRATION:
        problems.append(f"{index['piste']}: the reference table is not labelled {CALIBRATION!r}")
    report = json.loads((folder / "rapports" / "agent-surconfiant.json").read_bytes())
    for a in report["assertions_non_etayees"]:
        print(f"  Agent Surconfiant, non étayée: {a['tache']} {a['assertion']} {a['ressource']} {a['champ']}: "
              f"cause {a['cause']} ({a['cause_texte']})")
    if [a["cause"] for a in report["assertions_non_etayees"]] != ["valeur"]:
        problems.append(f"{index['piste']}: the overclaimer's cause is not named")
    for merged in index["fusionnes"]:
        print(f"  fusionné: {merged['agent']} {merged['did']} sous {merged['classe_sous']['agent']}: "
              f"{merged['motif']}")
    if [m["agent"] for m in index["fusionnes"]] != ["Agent Lié"]:
        problems.append(f"{index['piste']}: the linked DID is not listed as merged")
    pages = sorted(folder.rglob("*.html"))
    labelled = sum(AI_ACT in html.unescape(p.read_text("utf-8")) for p in pages)
    print(f"  AI Act art. 50 label on {labelled} of {len(pages)} pages")
    if labelled != len(pages):
        problems.append(f"{index['piste']}: a page without the AI Act label")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="copy the published folders there")
    args = parser.parse_args()
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="index-public-") as tmp:
        work = Path(tmp)
        keys = frozen_checkout(work / "checkout")
        for piste, (salt, anchor) in keys.items():
            c = write_community(work / "checkout", piste, work / "service" / piste)
            argv = ["index", "--track", piste, "--submissions", str(c.submissions), "--registrations",
                    str(c.registrations), "--out", str(work / "index"), "--season-close", CLOSE, "--salt-file",
                    str(salt), "--anchor", str(anchor), "--root", str(work / "checkout")]
            if corpus(argv) != 0:
                problems.append(f"{piste}: corpus index failed")
                continue
            problems += show_track(work / "index" / piste)
        c = write_community(ROOT, "conformite", work / "unfrozen")
        print("== refusal on the repository's conformité track, not frozen, without --brouillon:")
        refused = corpus(["index", "--track", "conformite", "--submissions", str(c.submissions), "--registrations",
                          str(c.registrations), "--out", str(work / "refused"), "--season-close", CLOSE,
                          "--root", str(ROOT)])
        print(f"  exit {refused}; written: {(work / 'refused').exists()}")
        if refused == 0 or (work / "refused").exists():
            problems.append("an unfrozen track was published without --brouillon")
        if args.keep:
            shutil.copytree(work / "index", args.keep, dirs_exist_ok=True)
    for problem in problems:
        print(f"PROBLEM: {problem}")
    print("index-public: " + ("every point shown holds" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
