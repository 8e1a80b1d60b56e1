"""Contestation (spec §9.2, issue 41) and an invalidated season (§8) at the close: on a frozen scratch checkout
and the community of ``tests/index_community.py`` with one more overclaim, ``corpus contest add`` records a
contestation checked against the published report, ``corpus contest decide`` its decision, and ``corpus
index`` republishes the index and the report with the rectification beside the original figure; the offline
check replays it and refuses a figure changed without a decision. ``corpus season invalidate`` then makes the
index publish the invalidation and no ranking.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from index_community import CLOSE, Community, frozen_checkout, write_community

from generator.cli.main import main
from generator.publish.contestation import read_contests
from generator.publish.published import IndexJson, RapportJson
from generator.publish.rectification import by_did, rectification_problems, replay
from generator.score.report_json import ScoreJson
from generator.tracks.loader import track_named

PISTE = "conformite"
OVERCLAIMER = "Agent Surconfiant"


@dataclass
class Close:
    root: Path
    salt: Path
    anchor: Path
    community: Community
    out: Path

    def index(self, *more: str, root: Path | None = None) -> int:
        return main(["index", "--track", PISTE, "--submissions", str(self.community.submissions),
                     "--registrations", str(self.community.registrations), "--out", str(self.out), "--salt-file",
                     str(self.salt), "--anchor", str(self.anchor), "--root", str(root or self.root),
                     "--season-close", CLOSE, *more])

    @property
    def published(self) -> Path:
        return self.out / PISTE

    def contest(self, *args: str) -> int:
        return main(["contest", *args, "--track", PISTE, "--root", str(self.root)])

    def add(self, did: str, task: str, assertion: str, cause: str, le: str = "2026-12-03") -> int:
        return self.contest("add", "--index", str(self.published), "--did", did, "--tache", task,
                            "--assertion", assertion, "--cause", cause, "--le", le)


def _overclaim_twice(community: Community) -> None:
    """The overclaimer's second task received with one more value changed (cause valeur), before the close."""
    folder = community.submissions
    tag = hashlib.sha256(OVERCLAIMER.encode()).hexdigest()[:6]
    second = sorted(p for p in folder.rglob("*.json") if p.parent.name == tag)[1]
    envelope = json.loads(second.read_bytes())
    claim = envelope["soumission"]["assertions"][-1]["claim"]
    claim["value"] = f"{claim['value']}-bis" if isinstance(claim["value"], str) else [claim["value"]]
    second.write_text(json.dumps(envelope, ensure_ascii=False, indent=1), "utf-8")


@pytest.fixture(scope="module")
def close(tmp_path_factory: pytest.TempPathFactory) -> Close:
    tmp = tmp_path_factory.mktemp("contest")
    salt, anchor = frozen_checkout(tmp / "checkout", (PISTE,))[PISTE]
    community = write_community(tmp / "checkout", PISTE, tmp / "service")
    _overclaim_twice(community)
    made = Close(tmp / "checkout", salt, anchor, community, tmp / "publie")
    assert made.index() == 0
    return made


def _load(path: Path) -> Any:
    return json.loads(path.read_bytes())


def _line(index: dict[str, Any], did: str) -> dict[str, Any]:
    return next(line for t in index["tableaux"].values() for line in t["lignes"] if line["did"] == did)


def _caused(close: Close) -> tuple[str, list[tuple[str, str, str]]]:
    index = _load(close.published / "index.json")
    did = close.community.did(OVERCLAIMER)
    report = _load(close.published / _line(index, did)["rapport"])
    return did, [(t["tache"], a["id"], a["cause"]) for t in report["taches"] for a in t["assertions"]
                 if a["cause"]]


def _contest_files(close: Close) -> dict[str, bytes]:
    folder = close.root / "freeze" / PISTE / "contestations"
    return {p.name: p.read_bytes() for p in folder.glob("*")} if folder.is_dir() else {}


def test_bad_contestations_are_one_line_and_write_nothing(close: Close,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    did, caused = _caused(close)
    task, assertion, cause = caused[0]
    before = _contest_files(close)
    for args, said in [
        ((did, task, assertion, cause, "2026-12-15"), "after the window closed"),
        ((did, task, assertion, cause, "2026-11-29"), "before the score was published"),
        ((did, task, "", cause), "names no assertion"),
        ((did, task, assertion, "bareme"), "the barème (frozen) and the corpus (frozen)"),
        ((did, task, assertion, "identite_non_liee"), "shows the cause"),
        (("did:key:z6Mkinconnu", task, assertion, cause), "no ranked participant"),
        ((did, task, "a99", cause), "holds no such assertion"),
        ((did, "conf-99", assertion, cause), "no such task"),
    ]:
        assert close.add(*args) == 1
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and said in err[0], (said, err)
    assert _contest_files(close) == before
    assert close.contest("decide", "--contestation", "c404", "--decision", "refusee", "--motif", "x", "--par",
                         "Jury", "--le", "2026-12-05") == 1
    assert "unknown" in capsys.readouterr().err


def test_accepted_and_refused_contestations_are_published_beside_the_original(
        close: Close, capsys: pytest.CaptureFixture[str]) -> None:
    did, caused = _caused(close)
    assert len(caused) == 2, caused
    original_index = _load(close.published / "index.json")
    original = _line(original_index, did)
    (t1, a1, c1), (t2, a2, c2) = caused
    assert close.add(did, t1, a1, c1, "2026-12-03") == 0
    assert close.add(did, t2, a2, c2, "2026-12-04") == 0
    assert close.add(did, t1, a1, c1, "2026-12-05") == 1  # the same assertion twice
    assert "already contested (c001)" in capsys.readouterr().err
    assert close.contest("decide", "--contestation", "c001", "--decision", "acceptee", "--statut", "etayee",
                         "--motif", "la valeur servie était celle affirmée : hash de réponse recalculé à tort",
                         "--par", "Jury PROVE IT", "--le", "2026-12-20") == 0
    assert close.contest("decide", "--contestation", "c002", "--decision", "refusee", "--motif",
                         "la valeur affirmée n'est pas celle du corpus figé", "--par", "Jury PROVE IT",
                         "--le", "2027-01-10") == 0
    assert "OVERDUE" in capsys.readouterr().err  # 37 days after the request: recorded, said overdue
    assert close.contest("decide", "--contestation", "c001", "--decision", "refusee", "--motif", "x", "--par",
                         "Autre", "--le", "2026-12-21") == 1
    assert "already decided" in capsys.readouterr().err
    assert close.index() == 0
    index = _load(close.published / "index.json")
    line = _line(index, did)
    for name in ("reussite", "overclaim", "taches_rendues"):  # the original kept
        assert line[name] == original[name]
    rect = line["rectification"]
    assert rect["le"] == "2026-12-20" and [c["contestation"] for c in rect["contestations"]] == ["c001"]
    assert rect["figures"]["overclaim"]["non_etayees"] == original["overclaim"]["non_etayees"] - 1
    assert [(c["contestation"], c["decision"]) for c in index["contestations"]] == [("c001", "acceptee"),
                                                                                   ("c002", "refusee")]
    assert index["contestations"][1]["motif"] == "la valeur affirmée n'est pas celle du corpus figé"
    assert index["contestations"][1]["dans_le_delai"] is False
    report = _load(close.published / line["rapport"])
    assert report["rectification"] == rect and len(report["contestations"]) == 2
    page = (close.published / "index.html").read_text("utf-8")
    assert "rectifié le 2026-12-20" in page and "refusée le 2027-01-10" in page
    assert "est pas celle du corpus figé" in page  # the refused one, with its motive
    assert "rectifié le 2026-12-20" in (close.published / line["preuves"]).read_text("utf-8")
    # the offline check: the rectified figures replayed from the decisions
    paths = [ln["rapport"] for t in index["tableaux"].values() for ln in t["lignes"] if "rapport" in ln]
    reports = {p: cast(RapportJson, _load(close.published / p)) for p in paths}
    decisions = by_did(read_contests(close.root, track_named(close.root, PISTE)))
    assert rectification_problems(cast(IndexJson, index), reports, decisions) == []
    silent = json.loads(json.dumps(index))
    _line(silent, did)["reussite"] += 1  # a figure changed without a decision
    assert any("without a decision" in p for p in rectification_problems(silent, reports, decisions))
    assert rectification_problems(cast(IndexJson, index), reports, {})  # a rectification with no decision


def test_the_replay_follows_the_scorer(close: Close) -> None:
    """Replayed with no change, each report's figures are the scorer's own."""
    index = _load(close.published / "index.json")
    for table in index["tableaux"].values():
        for line in table["lignes"][1:]:
            score = cast(ScoreJson, _load(close.published / line["rapport"])["score_corpus"])
            assert replay(score, {}) == {"reussite": score["reussite"], "taches_rendues": score["taches_rendues"],
                                         "overclaim": score["overclaim"]}


def test_an_invalidated_season_publishes_no_ranking(close: Close, tmp_path: Path) -> None:
    root = tmp_path / "checkout"
    shutil.copytree(close.root, root)
    assert main(["season", "invalidate", "--track", PISTE, "--root", str(root), "--motif",
                 "le barème a changé pendant la saison"]) == 0
    out = tmp_path / "out"
    assert Close(root, close.salt, close.anchor, close.community, out).index() == 0
    files = sorted(p.relative_to(out / PISTE).as_posix() for p in (out / PISTE).rglob("*") if p.is_file())
    assert files == ["index.html", "index.json"]
    index = _load(out / PISTE / "index.json")
    assert index["statut"] == "invalidee" and "tableaux" not in index
    assert index["invalidation"]["motif"] == "le barème a changé pendant la saison"
    page = (out / PISTE / "index.html").read_text("utf-8")
    assert "Saison invalidée le " in page and "le barème a changé pendant la saison" in page
