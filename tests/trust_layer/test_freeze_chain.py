"""A freeze replaced before the opening (spec §8, issue 41): ``corpus freeze --replaces`` keeps the record in
force and its anchor in ``<freeze folder>/remplaces/<n>/`` and writes a record naming them and the motive;
``freeze-check`` and ``score`` follow the chain (each link anchored, its salt, the proof_id and SHA-256 named);
after the opening a replacement is refused and the season can only be invalidated; bad input is one line with
nothing written. Proofs are made here (``trust_layer_fixtures``), hashes from CONTRACT.md §2
(``score_fixtures``), never from the code under test.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from score_fixtures import HONEST_01, ScoreWorld, anchor_of, make_score_world, submission
from trackfix import CONFORMITE
from trust_layer_fixtures import FINGERPRINT, TrustLayer

from generator.cli.main import main
from generator.contract.freeze import freeze

FIRST, SECOND = "prf_20261202_013023_ae4117", "prf_20261203_100000_be5228"
FUTURE = "2099-01-01T00:00:00Z"
MOTIF = "barème v3 : verdict fondé appliqué, /page_suivante retirée des listes communes"


def _listing(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted((root / "freeze").rglob("*")) if p.is_file()}


def _proof(root: Path, tl: TrustLayer, proof_id: str, timestamp: str, folder: Path) -> Path:
    pair = anchor_of(root)
    proof = tl.proof(pair["request_hash"]["value"], pair["response_hash"]["value"], proof_id=proof_id,
                     timestamp=timestamp)
    path = folder / f"{proof_id}.json"
    path.write_text(json.dumps(proof), "utf-8")
    return path


def _anchor(root: Path, proof: Path, tl: TrustLayer) -> int:
    return main(["freeze-anchor", "--track", "conformite", "--root", str(root), str(proof),
                 "--trust-layer-key", tl.key, "--challenge-key-fingerprint", FINGERPRINT])


def _replace(root: Path, salt: Path, proof_id: str, *more: str) -> int:
    return main(["freeze", "--track", "conformite", "--root", str(root), "--salt-file", str(salt),
                 "--replaces", proof_id, *more])


class Chain:
    def __init__(self, world: ScoreWorld, tl: TrustLayer, salts: list[Path]) -> None:
        self.world, self.tl, self.salts = world, tl, salts

    @property
    def root(self) -> Path:
        root: Path = self.world.root
        return root

    def check(self, *salts: Path) -> int:
        return main(["freeze-check", "--root", str(self.root), "--trust-layer-key", self.tl.key,
                     *[a for s in salts for a in ("--salt-file", str(s))]])


@pytest.fixture()
def anchored(tmp_path: Path) -> Chain:
    """A world frozen and anchored once (the proof at 2026-12-02, before now)."""
    world = make_score_world(tmp_path / "world")
    tl = TrustLayer()
    salt = tmp_path / "salt-1.hex"
    freeze(world.root, world.root / CONFORMITE.bareme.file, salt, CONFORMITE.places)
    assert _anchor(world.root, _proof(world.root, tl, FIRST, "2026-12-02T01:30:23Z", tmp_path), tl) == 0
    return Chain(world, tl, [salt])


@pytest.fixture()
def replaced(anchored: Chain, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Chain:
    """The first record replaced before a pinned opening, the new one anchored at 2026-12-03."""
    root = anchored.root
    first_record = (root / "freeze/conformite/record.json").read_bytes()
    first_anchor = (root / "freeze/conformite/anchor.json").read_bytes()
    salt = tmp_path / "salt-2.hex"
    assert _replace(root, salt, FIRST, "--motif", MOTIF, "--opening", FUTURE) == 0
    err = capsys.readouterr().err
    assert f"{FIRST} replaced before the opening" in err and "remplaces/1" in err, err
    kept = root / "freeze/conformite/remplaces/1"
    assert (kept / "record.json").read_bytes() == first_record  # kept byte for byte, never rewritten
    assert (kept / "anchor.json").read_bytes() == first_anchor
    assert not (root / "freeze/conformite/anchor.json").exists()  # the new record awaits its own anchor
    record = json.loads((root / "freeze/conformite/record.json").read_bytes())
    assert record["remplace"] == {"proof_id": FIRST, "sha256": hashlib.sha256(first_record).hexdigest(),
                                  "motif": MOTIF}
    assert record["cle"]["engagement"] != json.loads(first_record)["cle"]["engagement"]  # a new salt
    assert _anchor(root, _proof(root, anchored.tl, SECOND, "2026-12-03T10:00:00Z", tmp_path), anchored.tl) == 0
    capsys.readouterr()
    return Chain(anchored.world, anchored.tl, [*anchored.salts, salt])


def test_the_chain_is_checked_and_scored_with_every_salt(replaced: Chain, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    assert replaced.check(*replaced.salts) == 0, capsys.readouterr().err
    assert replaced.check(replaced.salts[-1]) == 1  # one salt for two records
    assert "give --salt-file once per record" in capsys.readouterr().err
    assert replaced.check(*reversed(replaced.salts)) == 1  # not in the chain's order
    assert "cle.engagement" in capsys.readouterr().err
    sub = tmp_path / "conf-01.json"
    sub.write_text(json.dumps(submission(replaced.world, "conf-01", "conforme", HONEST_01)), "utf-8")
    report = tmp_path / "report.json"
    salts = [a for s in replaced.salts for a in ("--salt-file", str(s))]
    assert main(["score", str(sub), "--root", str(replaced.root), *salts, "--json", str(report),
                 "--trust-layer-key", replaced.tl.key]) == 0
    assert json.loads(report.read_text("utf-8"))["gel"]["ancre"] == SECOND
    assert main(["score", str(sub), "--root", str(replaced.root), "--salt-file", str(replaced.salts[-1]),
                 "--trust-layer-key", replaced.tl.key]) == 1
    assert "REFUSED" in capsys.readouterr().err


@pytest.mark.parametrize("tamper", ["kept record", "kept anchor", "named hash", "named proof_id", "gap"])
def test_a_tampered_chain_is_refused(replaced: Chain, tamper: str, capsys: pytest.CaptureFixture[str]) -> None:
    folder = replaced.root / "freeze/conformite"
    if tamper == "kept record":
        path = folder / "remplaces/1/record.json"
        path.write_bytes(path.read_bytes().replace(b"conformite-bareme", b"conformite-bareme "))
    elif tamper == "kept anchor":
        path = folder / "remplaces/1/anchor.json"
        document = json.loads(path.read_bytes())
        document["proof"]["arkforge_signature"] = document["proof"]["arkforge_signature"][:-4] + "AAAA"
        path.write_text(json.dumps(document, indent=2), "utf-8")
    elif tamper in ("named hash", "named proof_id"):
        path = folder / "record.json"
        record = json.loads(path.read_bytes())
        record["remplace"]["sha256" if tamper == "named hash" else "proof_id"] = (
            "0" * 64 if tamper == "named hash" else "prf_20261202_013023_000000")
        path.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", "utf-8")
    else:
        (folder / "remplaces/1").rename(folder / "remplaces/2")
    assert replaced.check(*replaced.salts) == 1
    err = capsys.readouterr().err
    assert ("FAILED" in err or len(err.splitlines()) == 1) and "Traceback" not in err, err


def test_after_the_opening_a_replacement_is_refused_and_the_season_invalidated(
        anchored: Chain, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = anchored.root
    before = _listing(root)
    # no pinned opening: the season opened at its anchor's time (2026-12-02), now is after it
    assert _replace(root, tmp_path / "salt-2.hex", FIRST, "--motif", MOTIF) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "il invalide la saison" in err[0] and "corpus season invalidate" in err[0], err
    assert _replace(root, tmp_path / "salt-2.hex", FIRST, "--motif", MOTIF, "--opening",
                    "2026-12-02T12:00:00Z") == 1
    assert "the pinned opening" in capsys.readouterr().err
    assert _listing(root) == before and not (tmp_path / "salt-2.hex").exists()
    assert main(["season", "invalidate", "--track", "conformite", "--root", str(root), "--motif", " "]) == 1
    assert "--motif is empty" in capsys.readouterr().err
    assert main(["season", "invalidate", "--track", "conformite", "--root", str(root), "--motif",
                 "le barème a changé en cours de saison"]) == 0
    made = json.loads((root / "freeze/conformite/invalidation.json").read_bytes())
    assert made["motif"] == "le barème a changé en cours de saison" and made["gel_en_vigueur"] == FIRST
    assert made["format"] == "corpus-invalidation/1" and made["invalidee_le"].endswith("Z")
    assert main(["season", "invalidate", "--track", "conformite", "--root", str(root), "--motif", "x"]) == 1
    assert "already invalidated" in capsys.readouterr().err
    assert _replace(root, tmp_path / "salt-3.hex", FIRST, "--motif", MOTIF, "--opening", FUTURE) == 1
    assert "invalidated" in capsys.readouterr().err


@pytest.mark.parametrize(("args", "said"), [
    (["--replaces", "prf_20261130_000000_abcdef", "--motif", MOTIF], "unknown"),
    (["--replaces", FIRST, "--motif", "  "], "--motif is empty"),
    (["--replaces", FIRST], "--replaces needs --motif"),
    (["--motif", MOTIF], "go with --replaces"),
])
def test_bad_replacements_are_one_line_and_write_nothing(anchored: Chain, tmp_path: Path, args: list[str],
                                                         said: str, capsys: pytest.CaptureFixture[str]) -> None:
    before = _listing(anchored.root)
    code = main(["freeze", "--track", "conformite", "--root", str(anchored.root), "--salt-file",
                 str(tmp_path / "new.hex"), *args, "--opening" if "--replaces" in args else "--bareme",
                 FUTURE if "--replaces" in args else str(anchored.root / CONFORMITE.bareme.file)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code in (1, 2) and len(err) == 1 and said in err[0], err
    assert _listing(anchored.root) == before


def test_a_replaced_proof_id_is_not_in_force(replaced: Chain, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    before = _listing(replaced.root)
    assert _replace(replaced.root, tmp_path / "salt-3.hex", FIRST, "--motif", MOTIF, "--opening", FUTURE) == 1
    err = capsys.readouterr().err
    assert "not in force" in err and SECOND in err, err
    assert _replace(replaced.root, replaced.salts[-1], SECOND, "--motif", MOTIF, "--opening", FUTURE) == 1
    assert "the salt of the record it replaces" in capsys.readouterr().err
    assert _listing(replaced.root) == before


def test_a_replacement_waits_for_the_anchor(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    world = make_score_world(tmp_path / "world")
    freeze(world.root, world.root / CONFORMITE.bareme.file, tmp_path / "s.hex", CONFORMITE.places)
    assert _replace(world.root, tmp_path / "t.hex", FIRST, "--motif", MOTIF, "--opening", FUTURE) == 1
    assert "is not anchored" in capsys.readouterr().err


def test_the_chain_as_a_publication_lists_it(replaced: Chain) -> None:
    """What the opening kit and the close publication show (issue 39 wires it): every record, anchor, motive."""
    from generator.trust_layer.freeze_chain import chain_entries

    entries = chain_entries(replaced.root, CONFORMITE.places)
    assert [(e["numero"], e["proof_id"], e["en_vigueur"], e["remplace"]) for e in entries] == [
        (1, FIRST, False, None), (2, SECOND, True, FIRST)]
    assert entries[1]["motif"] == MOTIF and entries[0]["gel"] == "freeze/conformite/remplaces/1/record.json"
    assert entries[0]["heure"] == "2026-12-02T01:30:23Z" and entries[1]["heure"] == "2026-12-03T10:00:00Z"
    assert entries[0]["sha256"] == json.loads((replaced.root / "freeze/conformite/record.json").read_bytes())[
        "remplace"]["sha256"]


def _pin_opening(root: Path, opening: str) -> None:
    """The season's opening as ``corpus pin`` writes it, or (a later hand edit) as a pins file may say it."""
    pins = root / "freeze/conformite/pins.json"
    if not pins.exists():
        assert main(["pin", "--track", "conformite", "--root", str(root), "--season-opening", opening]) == 0
        return
    document = json.loads(pins.read_bytes())
    document["saison"]["ouverture"] = opening
    pins.write_text(json.dumps(document, indent=2) + "\n", "utf-8")


def test_the_replacement_takes_the_pinned_opening(anchored: Chain, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """No --opening: the one pinned with corpus pin is taken (and --opening overrides it)."""
    root = anchored.root
    _pin_opening(root, "2026-12-02T12:00:00Z")  # after the first anchor, before now
    capsys.readouterr()
    before = _listing(root)
    assert _replace(root, tmp_path / "salt-2.hex", FIRST, "--motif", MOTIF) == 1
    err = capsys.readouterr().err
    assert "opened at 2026-12-02T12:00:00Z (the pinned opening)" in err and "il invalide la saison" in err, err
    _pin_opening(root, FUTURE)
    assert _replace(root, tmp_path / "salt-2.hex", FIRST, "--motif", MOTIF, "--opening",
                    "2026-12-02T12:00:00Z") == 1  # the flag overrides the pins
    assert "opened at 2026-12-02T12:00:00Z" in capsys.readouterr().err
    assert {k: v for k, v in _listing(root).items() if not k.endswith("pins.json")} == \
        {k: v for k, v in before.items() if not k.endswith("pins.json")}
    assert _replace(root, tmp_path / "salt-2.hex", FIRST, "--motif", MOTIF) == 0
    assert f"replaced before the opening ({FUTURE})" in capsys.readouterr().err


def test_freeze_check_and_the_scorer_hold_the_chain_to_the_pinned_opening(
        replaced: Chain, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The replacement anchored at 2026-12-03T10:00:00Z: an opening pinned at it holds, one before it (a pins
    file edited after the replacement) is refused by freeze-check and the scorer alike."""
    root = replaced.root
    _pin_opening(root, "2026-12-03T10:00:00Z")
    assert replaced.check(*replaced.salts) == 0, capsys.readouterr().err
    _pin_opening(root, "2026-12-03T09:00:00Z")
    assert replaced.check(*replaced.salts) == 1
    err = capsys.readouterr().err
    assert "anchored at 2026-12-03T10:00:00Z, after the season's opening 2026-12-03T09:00:00Z" in err, err
    sub = tmp_path / "conf-01.json"
    sub.write_text(json.dumps(submission(replaced.world, "conf-01", "conforme", HONEST_01)), "utf-8")
    salts = [a for s in replaced.salts for a in ("--salt-file", str(s))]
    assert main(["score", str(sub), "--root", str(root), *salts, "--trust-layer-key", replaced.tl.key]) == 1
    assert "after the season's opening" in capsys.readouterr().err
