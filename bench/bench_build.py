"""Benchmark of ``corpus check`` and ``corpus build`` on a synthetic corpus.

Generates a valid synthetic ``corpus_src/`` of N entities (about 10 served resources each: the entity,
2-3 agréments, 2 attestations, 2-3 avenants, 1-3 pages of bénéficiaires; plus the listes des agréés and
mesures restrictives pages), then measures, each in a fresh interpreter so that peaks do not mix:

- ``ceiling``: merely parsing the same YAML files with ``yaml.load(f, Loader=yaml.CSafeLoader)``;
- ``check``:   :func:`generator.compiler.pipeline.check` (strict load + every validation rule);
- ``build``:   :func:`generator.compiler.pipeline.build` (check + compile + serialise + hash + atomic write).

It reports resources per second, the ratio of ``build`` to the ceiling (the aim is 70 % or more), and the
peak memory of each step above the interpreter's baseline (``ru_maxrss`` after imports), at two corpus
sizes, to show that memory grows no faster than the corpus. ``--profile`` adds a cProfile of the build.

    .venv/bin/python bench/bench_build.py                       # 10,000 and 2,500 entities
    .venv/bin/python bench/bench_build.py --entities 2000 --small 500 --profile
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ACTIVITES = {
    "courtage-en-assurance": "Courtage en assurance",
    "intermediation-en-operations-de-banque": "Intermédiation en opérations de banque",
    "conseil-en-investissements-financiers": "Conseil en investissements financiers",
}
NOMS = ["Vauclair", "Mésange", "Orlandière", "Ferrandel", "Quérel", "Dorvault", "Aubrespin", "Léoville"]
PRENOMS = ["Hélène", "Joël", "Anaïs", "Bastien", "Zoé", "Noël", "Aurélien", "Maëlle"]
LISTE_PAGE_SIZE = 25
MESURES_PAGES = 200


def _date(rng: random.Random, first: int, last: int) -> str:
    return f"{rng.randint(first, last)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def generate(src: Path, entities: int, seed: int = 2026) -> int:
    """Write a valid synthetic corpus_src/ of ``entities`` entities; return the number of served resources.

    The count includes /referentiel and /catalogue, and excludes /_systeme/* and declared absents.
    """
    rng = random.Random(seed)
    (src / "entites").mkdir(parents=True)
    (src / "listes" / "agrees").mkdir(parents=True)
    for name in ("referentiel.yaml", "systeme.yaml"):  # the real ones: their size is the season's
        shutil.copy(ROOT / "corpus_src/conformite" / name, src / name)
    activites = "".join(f"  {slug}: {label}\n" for slug, label in ACTIVITES.items())
    (src / "corpus.yaml").write_text(f"corpus: bench-synthetique\ntitre: Corpus synthétique de mesure\n"
                                     f"activites:\n{activites}", "utf-8")
    listed: dict[str, list[str]] = {slug: [] for slug in ACTIVITES}
    absents: list[str] = []
    resources = 0
    agr = att = avn = 100000
    for n in range(entities):
        eid = f"ENT-{100000 + n}"
        nom = f"{rng.choice(NOMS)}-{n}"
        agrements, attestations, avenants = [], [], []
        for _ in range(rng.choice((2, 3))):
            agr += 1
            slug = rng.choice(list(ACTIVITES))
            agrements.append((f"AGR-{agr}", slug))
            listed[slug].append(f"      - agrement: /agrements/AGR-{agr}\n        entite: /entites/{eid}\n"
                                f"        denomination: Société {nom}\n        statut: actif\n")
        for _ in range(2):
            att += 1
            attestations.append((f"ATT-{att}", []))
        for _ in range(rng.choice((2, 3))):
            avn += 1
            target = rng.choice(attestations)
            target[1].append(f"AVN-{avn}")
            avenants.append((f"AVN-{avn}", target[0]))
        pages = rng.choice((1, 2, 3))
        cited_agrements = [f"/agrements/{a}" for a, _ in agrements]
        if n % 100 == 7:  # a deliberately absent reference now and then
            cited_agrements.append(f"/agrements/AGR-{900000 + n}")
            absents.append(f"/agrements/AGR-{900000 + n}")
        out = [
            "entite:\n", f"  id: {eid}\n", f"  denomination: Société {nom}\n", "  forme_juridique: SAS\n",
            f"  siege: {n} allée des Cormorans, 44990 Port-Hérel\n",
            f"  date_immatriculation: {_date(rng, 1990, 2020)}\n",
            "  statut: active\n", f"  agrements: [{', '.join(cited_agrements)}]\n",
            f"  attestations: [{', '.join(f'/attestations/{a}' for a, _ in attestations)}]\n",
            f"  beneficiaires: /beneficiaires/{eid}/1\n", "\nagrements:\n",
        ]
        for aid, slug in agrements:
            out.append(f"  - id: {aid}\n    entite: /entites/{eid}\n    denomination: Société {nom}\n"
                       f"    activite: {slug}\n    statut: actif\n    date_debut: {_date(rng, 2015, 2022)}\n"
                       f"    date_fin_validite: {_date(rng, 2026, 2030)}\n")
        out.append("\nattestations:\n")
        for aid, its_avenants in attestations:
            out.append(f"  - id: {aid}\n    entite: /entites/{eid}\n"
                       "    type: responsabilite-civile-professionnelle\n"
                       f"    date_emission: {_date(rng, 2024, 2025)}\n"
                       f"    date_fin_validite: {_date(rng, 2026, 2027)}\n"
                       f"    avenants: [{', '.join(f'/avenants/{v}' for v in its_avenants)}]\n")
        out.append("\navenants:\n")
        for vid, aid in avenants:
            out.append(f"  - id: {vid}\n    attestation: /attestations/{aid}\n    objet: prorogation\n"
                       f"    date_effet: {_date(rng, 2025, 2026)}\n"
                       f"    nouvelle_date_fin: {_date(rng, 2027, 2028)}\n"
                       "    activite_exclue: null\n")
        out.append("\nbeneficiaires:\n  statut_declaration: complete\n  pages:\n")
        for page in range(1, pages + 1):
            out.append(f"    - page: {page}\n      entrees:\n")
            for _ in range(rng.choice((1, 2, 3))):
                out.append(f"        - nom: {rng.choice(NOMS)}\n          prenoms: {rng.choice(PRENOMS)}\n"
                           f"          date_naissance: {_date(rng, 1940, 2000)}\n")
        (src / "entites" / f"{eid}.yaml").write_text("".join(out), "utf-8")
        resources += 1 + len(agrements) + len(attestations) + len(avenants) + pages
    for slug, entries in listed.items():
        out = [f"activite: {slug}\npages:\n"]
        for start in range(0, max(len(entries), 1), LISTE_PAGE_SIZE):
            out.append(f"  - page: {start // LISTE_PAGE_SIZE + 1}\n    entrees:\n")
            out.extend(entries[start:start + LISTE_PAGE_SIZE] or ["      []\n"])
            resources += 1
        (src / "listes" / "agrees" / f"{slug}.yaml").write_text("".join(out), "utf-8")
    out = ["pages:\n"]
    for page in range(1, MESURES_PAGES + 1):
        out.append(f"  - page: {page}\n    entrees:\n")
        for k in range(10):
            out.append(f"      - reference: MR-{10000 + page * 10 + k}\n        nom: {rng.choice(NOMS)}\n"
                       f"        prenoms: {rng.choice(PRENOMS)}\n"
                       f"        date_naissance: {_date(rng, 1940, 2000)}\n"
                       f"        motif: Gel des avoirs — décision fictive n° {page}-{k}\n"
                       f"        date_inscription: {_date(rng, 2020, 2025)}\n")
    (src / "listes" / "mesures-restrictives.yaml").write_text("".join(out), "utf-8")
    resources += MESURES_PAGES
    (src / "absents.yaml").write_text("absents:\n" + "".join(
        f"  - chemin: {path}\n    motif: Référence volontairement absente.\n" for path in absents), "utf-8")
    return resources + 2  # /referentiel and /catalogue


# --- one measured step, in its own interpreter -------------------------------------------------------------

def _maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kibibytes


def child(mode: str, src: Path, out: Path) -> None:
    """Run one step and print its figures as one JSON line on stdout.

    Wall time is what an author waits; CPU time (user + system of this process) is also reported
    because it is far less disturbed by other work on a shared machine.
    """
    import yaml

    from generator.base.errors import Severity
    from generator.compiler.pipeline import build, check
    from generator.tracks.loader import track_named
    from generator.tracks.model import DEFAULT_BASE_URL

    CONFORMITE = track_named(ROOT, "conformite")

    files = sorted(src.rglob("*.yaml"))
    baseline = _maxrss_mib()
    wall, cpu = time.perf_counter(), time.process_time()
    served = None
    if mode == "ceiling":
        for path in files:
            with path.open("rb") as handle:
                yaml.load(handle, Loader=yaml.CSafeLoader)  # the C *safe* loader: the ceiling
    elif mode == "check":
        errors = [p for p in check(src, CONFORMITE) if p.severity is Severity.ERROR]
        if errors:
            raise SystemExit(f"synthetic corpus is not valid: {errors[:5]}")
    elif mode == "build":
        shutil.rmtree(out, ignore_errors=True)  # every build run starts from an empty folder
        result = build(src, out, DEFAULT_BASE_URL, CONFORMITE)
        served = sum(b.document.kind == "resource" for b in result.built)
    print(json.dumps({"mode": mode, "wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
                      "peak_mib": _maxrss_mib(), "baseline_mib": baseline, "served": served}))


def run_child(mode: str, src: Path, out: Path) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", mode, str(src), str(out)], capture_output=True,
                          text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{mode} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def profile(src: Path, out: Path, top: int) -> None:
    """cProfile of one build, in a fresh interpreter; prints the top functions by own and cumulative time."""
    shutil.rmtree(out, ignore_errors=True)
    code = "\n".join((
        "import cProfile, pstats, sys",
        "from pathlib import Path",
        "from generator.tracks.model import DEFAULT_BASE_URL",
        "from generator.compiler.pipeline import build",
        "from generator.tracks.loader import track_named",
        f"CONFORMITE = track_named(Path({str(ROOT)!r}), 'conformite')",
        "profiler = cProfile.Profile()",
        "profiler.enable()",
        f"build(Path({str(src)!r}), Path({str(out)!r}), DEFAULT_BASE_URL, CONFORMITE)",
        "profiler.disable()",
        "stats = pstats.Stats(profiler, stream=sys.stdout)",
        f"stats.sort_stats('tottime').print_stats({top})",
        f"stats.sort_stats('cumulative').print_stats({top})",
    ))
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


STEPS = (("ceiling", "ceiling (CSafeLoader)"), ("check", "check"), ("build", "check + build"))


def measure(entities: int, work: Path, repeat: int, out_root: Path | None = None) -> dict:
    """Generate a corpus of ``entities`` and run each step ``repeat`` times (interleaved); keep the fastest."""
    src = work / f"n{entities}" / "corpus_src/conformite"
    started = time.perf_counter()
    resources = generate(src, entities)
    generated = time.perf_counter() - started
    size_mib = sum(p.stat().st_size for p in src.rglob("*.yaml")) / 2**20
    runs: dict[str, list[dict]] = {mode: [] for mode, _ in STEPS}
    for _ in range(repeat):  # interleaved, so that a burst of load elsewhere hits every step alike
        for mode, _ in STEPS:
            runs[mode].append(run_child(mode, src, (out_root or work) / f"n{entities}" / "out"))
    figures: dict = {"entities": entities, "resources": resources, "yaml_mib": size_mib, "generated_s": generated}
    for mode, results in runs.items():
        figures[mode] = {"wall": min(r["wall"] for r in results), "cpu": min(r["cpu"] for r in results),
                         "peak_mib": max(r["peak_mib"] for r in results),
                         "baseline_mib": min(r["baseline_mib"] for r in results)}
        served = {r["served"] for r in results}
        if mode == "build" and served != {resources}:
            raise SystemExit(f"build served {served} resources, expected {resources}")
    return figures


def report(figures: list[dict]) -> None:
    for fig in figures:
        n = fig["resources"]
        print(f"\n{fig['entities']:,} entities, {n:,} resources, {fig['yaml_mib']:.1f} MiB of YAML "
              f"(generated in {fig['generated_s']:.1f} s)")
        print(f"  {'step':<22}{'wall s':>8}{'res/s':>9}{'vs ceiling':>11}{'cpu s':>8}{'res/s':>9}"
              f"{'vs ceiling':>11}{'peak MiB':>10}{'above base':>11}")
        ceiling = fig["ceiling"]
        for mode, label in STEPS:
            r = fig[mode]
            print(f"  {label:<22}{r['wall']:>8.2f}{n / r['wall']:>9,.0f}{ceiling['wall'] / r['wall']:>11.0%}"
                  f"{r['cpu']:>8.2f}{n / r['cpu']:>9,.0f}{ceiling['cpu'] / r['cpu']:>11.0%}"
                  f"{r['peak_mib']:>10.0f}{r['peak_mib'] - r['baseline_mib']:>11.0f}")
    if len(figures) == 2:
        small, large = sorted(figures, key=lambda f: f["entities"])
        corpus_ratio = large["resources"] / small["resources"]
        print(f"\nmemory above baseline, {small['entities']:,} -> {large['entities']:,} entities "
              f"(corpus x{corpus_ratio:.2f}):")
        for mode, label in STEPS:
            grow = [f[mode]["peak_mib"] - f[mode]["baseline_mib"] for f in (small, large)]
            print(f"  {label:<22}{grow[0]:7.0f} MiB -> {grow[1]:5.0f} MiB  (x{grow[1] / max(grow[0], 1):.2f})")


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]))
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--entities", type=int, default=10_000, help="entities of the main corpus (default 10000)")
    ap.add_argument("--small", type=int, default=2_500,
                    help="entities of the second corpus, for memory growth (default 2500; 0 to skip)")
    ap.add_argument("--repeat", type=int, default=1, help="runs per step; the best time is kept (default 1)")
    ap.add_argument("--profile", action="store_true", help="also print a cProfile of one build")
    ap.add_argument("--top", type=int, default=25, help="functions shown by --profile (default 25)")
    ap.add_argument("--keep", type=Path, help="generate into this folder and keep it (default: a temp dir)")
    ap.add_argument("--out-root", type=Path,
                    help="write the builds under this folder instead (e.g. /dev/shm, to leave the disk out)")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="corpus-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    sizes = [args.entities] + ([args.small] if args.small else [])
    try:
        print(f"python {sys.version.split()[0]}, corpus in {work}, builds in {args.out_root or work}, "
              f"{args.repeat} run(s) per step (fastest kept)")
        figures = [measure(n, work, args.repeat, args.out_root) for n in sizes]
        report(figures)
        if args.profile:
            print(f"\ncProfile of one build of {args.entities:,} entities:")
            profile(work / f"n{args.entities}" / "corpus_src/conformite",
                work / f"n{args.entities}" / "out", args.top)
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
        if args.out_root is not None:
            for n in sizes:
                shutil.rmtree(args.out_root / f"n{n}", ignore_errors=True)


if __name__ == "__main__":
    main()
