"""bars/close-hostile: the close's commands under hostile input, the whole campaign, one line a case.

In a temporary folder: a frozen conformité checkout anchored in proof-spec 3.1 by ``corpus freeze-anchor``
(a local RFC 3161 authority, openssl), then every case of ``tests/close_hostile.py``: servers on 127.0.0.1
that trickle or ask for 10^30 seconds, names and stacks that read the same, free text with NUL and bidi
controls, a close before the opening, records from 2099, outputs inside inputs, links, FIFOs and devices in a
proofs folder, a proof of spec 9.9, an anchoring ``/full`` view whose copies contradict its commitments.

    .venv/bin/python bench/close_hostile.py          # one line a case: ok or FAILED; exit 0 when every case is ok
    .venv/bin/python bench/close_hostile.py -v       # and what each command said
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from close_hostile import CASES, make_world, run_case  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="store_true", help="print what each command said")
    args = parser.parse_args()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="close-hostile-") as tmp:
        world = make_world(Path(tmp) / "campaign")
        ok = 0
        for number, name in enumerate(CASES, 1):
            point = CASES[name][0]
            begun = time.monotonic()
            outcome = run_case(world, name)
            ok += outcome.ok
            print(f"{number:2}. [{point}] {name:<68} {'ok' if outcome.ok else 'FAILED'} "
                  f"({time.monotonic() - begun:.1f} s)", flush=True)
            if args.verbose or not outcome.ok:
                print(f"      {outcome.line}", flush=True)
    print(f"bars/close-hostile: {ok}/{len(CASES)} cases ok ({time.monotonic() - started:.0f} s)")
    return 0 if ok == len(CASES) else 1


if __name__ == "__main__":
    sys.exit(main())
