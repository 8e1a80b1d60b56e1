"""bars/season-publication (``make rehearsal``): a whole season of both tracks, from the freeze to its two
publications, as its operator runs it, against a local stand-in of Trust Layer's API.

In a temporary folder (``--keep DIR`` keeps it): a scratch checkout of the repository's built tracks; for each
track ``corpus freeze``, ``corpus pin`` (the stand-in's URL and key, a local RFC 3161 authority, the challenge
key's file), the anchoring call through the stand-in's ``POST /v1/proxy`` with the challenge's key and its
``/full`` view saved, ``corpus freeze-anchor`` and ``freeze-check`` with no pin flag, ``corpus publish
--opening``; a community made from blind answers (``tests/index_community.py``), every claim proved in
proof-spec 3.1, each record as the season service writes it; the close pinned; then ``corpus proofs fetch
--records``, ``corpus index``, ``corpus publish --close`` and ``corpus verify-publication``, all without a pin
flag nor a conversion step. Then each tampered variant of the publication (some with ``SHA256SUMS`` written
again over the change, as a forger would), each of which ``verify-publication`` must refuse naming the file.

    .venv/bin/python bench/season_publication.py            # prints every step; exit 0 when everything holds
    .venv/bin/python bench/season_publication.py --keep run/rehearsal

Needs the openssl command (the test authority) and the committed build.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from cli_run import run_corpus  # noqa: E402
from season_rehearsal import PISTES, Season, kept, run_season, tampered_verdicts  # noqa: E402


def _overclaim(value: object) -> str:
    return value if isinstance(value, str) else f"{value['non_etayees']}/{value['rendues']}"  # type: ignore[index]


def show_publication(s: Season, piste: str) -> None:
    folder = s.publications[piste]
    index = json.loads((folder / "index.json").read_bytes())
    print(f"== {piste}: {index['statut']}, ouverture {index['ouverture']}, clôture {index['cloture']}, gel "
          f"{index['gel']['statut']} ({index['gel'].get('ancre')}); {sum(1 for _ in folder.rglob('*'))} entries")
    for table in index["tableaux"].values():
        print(f"  {table['titre']}: {table['etiquette']}")
        for line in table["lignes"]:
            extra = f"  [{line['reference']['modele']} {line['reference']['version']}, " \
                    f"{line['reference']['mention']}]" if line.get("reference") else ""
            print(f"    {line['agent']:<28} réussite {line['reussite']:>2}/10  overclaim "
                  f"{_overclaim(line['overclaim']):<10}{extra}")
    verify = run_corpus(*s.verify_args(folder))
    print(f"  verify-publication: exit {verify.returncode}")
    for line in verify.stdout.splitlines():
        print(f"    {line[:200]}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    problems: list[str] = []
    started = time.monotonic()
    with kept(args.keep) as work:
        s = run_season(work, print)
        print("== the season's steps (no pin flag after corpus pin; the records folder as it is):")
        for step in s.steps:
            print(f"  {step.line()}")
            if not step.ok:
                problems.append(f"{step.name}: exit {step.ran.returncode}")
        elapsed = time.monotonic() - started
        for piste in PISTES:
            if piste in s.publications:
                show_publication(s, piste)
        for piste in PISTES:
            if piste not in s.publications:
                continue
            print(f"== tampered variants of the {piste} publication:")
            for verdict in tampered_verdicts(s, piste):
                print(f"  {verdict.variant:<48} {verdict.file[:60]:<60} {verdict.line()[:150]}")
                if not verdict.refused:
                    problems.append(f"{piste}: {verdict.variant} not refused")
    print(f"season from freeze to verified publications, both tracks: {elapsed:.1f} s")
    for problem in problems:
        print(f"PROBLEM: {problem}")
    print("season-publication: " + ("everything shown holds" if not problems else f"{len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
