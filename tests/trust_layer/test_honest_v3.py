"""The one-pass check of an honest 3.1 proof (``trust_layer/honest_v3.py``, issue 43) gives the verdict the full
path gives (``read_v3``, ``condition_1``, ``identity_problem``, ``verdict_v3``) on every proof it accepts, accepts
the honest ones, and leaves every other to the full path: each kind of proof the scorer names, each field of
another shape, and random edits of honest views."""

from __future__ import annotations

import copy
import json
import random
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from proof_issuer import Issued, Issuer, RekorLog
from trust_layer_fixtures import Authority

from generator.score.close_inputs import BadFile, read_proof_file
from generator.score.proofs import ProofJudge, SeasonWindow
from generator.score.verdict import Verdict
from generator.trust_layer.tsa_token import Authority as Pinned

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="no openssl command (test authority)")

DID = "did:key:z6MkHonestParticipant"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("honest")
    authority = Authority(tmp / "tsa")
    issuer = Issuer(authority)
    proofs = [issuer.proof("ab" * 32, f"{n:02x}" * 32, agent_did=DID, proof_id=f"prf_20261205_100000_{n:06x}")
              for n in range(9)]
    issuer.close_batch(proofs[:7], others=3)
    issuer.rekor = RekorLog()
    issuer.close_batch(proofs[7:8])
    issuer.rekor = None
    return {"tmp": tmp, "authority": authority, "issuer": issuer, "proofs": proofs}


def _judge(world: dict[str, Any], *, opening: datetime | None = None, closing: datetime | None = None,
           tsa: bool = True, keys: list[str] | None = None) -> ProofJudge:
    authority = world["authority"]
    pinned = Pinned(authority.ca, authority.cert) if tsa else None
    now = datetime.now(UTC)
    return ProofJudge(keys or [world["issuer"].key],
                      SeasonWindow(pinned, opening or now - timedelta(days=1), closing or now + timedelta(days=1)))


def both(judge: ProofJudge, view: dict[str, Any] | str, folder: Path, proof_id: str) -> tuple[Verdict | None,
                                                                                               Verdict | str]:
    """``(the one-pass verdict or None, the full path's verdict or its refusal)`` of one proof file."""
    path = folder / f"{proof_id}.json"
    path.write_text(view if isinstance(view, str) else json.dumps(view), "utf-8")
    data = path.read_bytes()
    try:
        full: Verdict | str = judge.verdict(read_proof_file(path))
    except BadFile as exc:
        full = f"refused: {exc}"
    return judge.honest(data, proof_id), full


def agree(judge: ProofJudge, view: dict[str, Any] | str, folder: Path, proof_id: str) -> Verdict | None:
    fast, full = both(judge, view, folder, proof_id)
    if fast is not None:
        assert fast == full, (fast, full)
        assert list(fast) == list(full) if isinstance(full, dict) else False
    return fast


def test_honest_proofs_are_judged_in_one_pass_as_the_full_path_judges_them(world: dict[str, Any],
                                                                           tmp_path: Path) -> None:
    judge = _judge(world)
    for proof in world["proofs"][:7]:
        assert agree(judge, proof.public(), tmp_path, proof.proof_id) is not None
    compact = json.dumps(world["proofs"][0].public(), separators=(",", ":"))
    assert agree(judge, compact, tmp_path, world["proofs"][0].proof_id) is not None
    no_close = _judge(world, closing=None)
    no_close.season = SeasonWindow(no_close.season.authority, no_close.season.opening, None)
    assert agree(no_close, world["proofs"][1].public(), tmp_path, world["proofs"][1].proof_id) is not None


def _flip(text: str) -> str:
    return text[:-1] + ("0" if text[-1] != "0" else "1")


EDITS: list[tuple[str, Any]] = [
    ("flipped commitment", lambda v: v["commitments"].__setitem__("seller", _flip(v["commitments"]["seller"]))),
    ("bare hashes", lambda v: v["commitments"].update({k: h[7:] for k, h in v["commitments"].items()})),
    ("capital hex", lambda v: v["hashes"].__setitem__("chain", v["hashes"]["chain"].upper())),
    ("prefixed path", lambda v: v["batch_anchor"].__setitem__(
        "audit_path", [f"sha256:{h}" for h in v["batch_anchor"]["audit_path"]])),
    ("overstated tree_size", lambda v: v["batch_anchor"].__setitem__("tree_size", 64)),
    ("path one too long", lambda v: v["batch_anchor"]["audit_path"].append(v["batch_anchor"]["audit_path"][0])),
    ("path one too short", lambda v: v["batch_anchor"]["audit_path"].pop()),
    ("uneven commitments", lambda v: v["commitments"].update(  # 70 and 72 characters, 142 in all
        seller=v["commitments"]["seller"][:-1],
        timestamp="sha256:" + v["commitments"]["seller"][-1] + v["commitments"]["timestamp"][7:])),
    ("base64 signature", lambda v: v.__setitem__("arkforge_signature", v["arkforge_signature"][:-1] + "+")),
    ("bool leaf_index", lambda v: v["batch_anchor"].__setitem__("leaf_index", True)),
    ("leaf out of range", lambda v: v["batch_anchor"].__setitem__("leaf_index", v["batch_anchor"]["tree_size"])),
    ("pending", lambda v: v.__setitem__("batch_anchor", {"status": "pending"})),
    ("no batch", lambda v: v.pop("batch_anchor")),
    ("no token", lambda v: v["timestamp_authority"].pop("tsr_base64")),
    ("spec 3.0", lambda v: v.__setitem__("spec_version", "3.0")),
    ("spec 3.2", lambda v: v.__setitem__("spec_version", "3.2")),
    ("another pubkey", lambda v: v.__setitem__("arkforge_pubkey", "ed25519:" + "A" * 43)),
    ("no pubkey", lambda v: v.pop("arkforge_pubkey")),
    ("no signature", lambda v: v.pop("arkforge_signature")),
    ("short signature", lambda v: v.__setitem__("arkforge_signature", v["arkforge_signature"][:-2])),
    ("verified null", lambda v: v["disclosed"]["agent_identity_verified"].__setitem__("value", None)),
    ("flat identity differs", lambda v: v.__setitem__("agent_identity", "did:key:z6MkOther")),
    ("flat request altered", lambda v: v["hashes"].__setitem__("request", "sha256:" + "0" * 64)),
    ("disclosed extra field", lambda v: v["disclosed"]["agent_identity"].__setitem__("extra", 1)),
    ("disclosed capital nonce", lambda v: v["disclosed"]["agent_identity"].__setitem__(
        "nonce", v["disclosed"]["agent_identity"]["nonce"].upper())),
    ("owner's pairs", lambda v: v.update({"commitment_nonces": {}, "chain_data": {}})),
    ("timestamp a number", lambda v: v.__setitem__("timestamp", 1)),
    ("log a list", lambda v: v.__setitem__("transparency_log", [])),
    ("log not verified", lambda v: v["transparency_log"].__setitem__("status", "failed")),
    ("no log", lambda v: v.__setitem__("transparency_log", None)),
    ("another proof_id", lambda v: v.__setitem__("proof_id", "prf_20261205_100000_ffffff")),
    ("empty commitments", lambda v: v.__setitem__("commitments", {})),
]


@pytest.mark.parametrize(("name", "edit"), EDITS, ids=[e[0] for e in EDITS])
def test_every_other_proof_is_left_to_the_full_path_or_judged_alike(world: dict[str, Any], tmp_path: Path,
                                                                    name: str, edit: Any) -> None:
    proof: Issued = world["proofs"][2]
    view = proof.public()
    edit(view)
    agree(_judge(world), view, tmp_path, proof.proof_id)


HONEST_SPELLINGS: list[tuple[str, Any]] = [
    ("a commitment bare", lambda v: v["commitments"].__setitem__("seller", v["commitments"]["seller"][7:])),
    ("every commitment bare", lambda v: v["commitments"].update({k: h[7:] for k, h in v["commitments"].items()})),
    ("flat hashes bare", lambda v: v["hashes"].update(request=v["hashes"]["request"][7:])),
    ("chain and root bare", lambda v: (v["hashes"].update(chain=v["hashes"]["chain"][7:]),
                                       v["batch_anchor"].update(root=v["batch_anchor"]["root"][7:]))),
]


@pytest.mark.parametrize(("name", "edit"), HONEST_SPELLINGS, ids=[e[0] for e in HONEST_SPELLINGS])
def test_each_spelling_of_a_hash_is_judged_in_one_pass(world: dict[str, Any], tmp_path: Path, name: str,
                                                       edit: Any) -> None:
    proof: Issued = world["proofs"][5]
    view = proof.public()
    edit(view)
    assert agree(_judge(world), view, tmp_path, proof.proof_id) is not None


def test_texts_the_strict_reader_refuses_are_left_to_it(world: dict[str, Any], tmp_path: Path) -> None:
    proof: Issued = world["proofs"][3]
    text = json.dumps(proof.public())
    for spoiled in (text.replace('"is_demo": false', '"is_demo": false, "is_demo": true'),
                    text.replace('"seller":', '"seller" :'),
                    text.replace('"views_count": 0', '"views_count": 1e400'), text + "x", "\ufeff" + text,
                    text.replace('"is_demo": false', '"is_demo": "\\ud800"')):
        fast, full = both(_judge(world), spoiled, tmp_path, proof.proof_id)
        assert fast is None or fast == full


def test_windows_and_pins_the_proof_does_not_meet(world: dict[str, Any], tmp_path: Path) -> None:
    proof: Issued = world["proofs"][4]
    later = datetime.now(UTC) + timedelta(hours=1)
    for judge in (_judge(world, opening=later, closing=later + timedelta(days=1)),
                  _judge(world, closing=datetime.now(UTC) - timedelta(days=1),
                         opening=datetime.now(UTC) - timedelta(days=2)),
                  _judge(world, tsa=False), _judge(world, keys=[Issuer(None).key]),
                  _judge(world, keys=[Issuer(None).key, world["issuer"].key])):
        agree(judge, proof.public(), tmp_path, proof.proof_id)
    carried = world["proofs"][7]  # its batch carries its Rekor entry
    assert agree(_judge(world), carried.public(), tmp_path, carried.proof_id) is None


def _mutations(value: Any, rng: random.Random) -> Any:
    """``value`` with one place changed to another JSON value or a nearby string."""
    value = copy.deepcopy(value)
    node, path = value, []
    while isinstance(node, dict | list) and node and rng.random() < 0.75:
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        path.append(key)
        node = node[key]
    replacement = rng.choice([None, True, 0, 1.5, "", "x", [], {}, _flip(node) if isinstance(node, str) and node
                              else "y", (node or "z") if isinstance(node, str) else -1])
    if not path:
        return replacement
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = replacement
    return value


def test_random_edits_of_honest_views(world: dict[str, Any], tmp_path: Path) -> None:
    rng = random.Random(43)
    judge = _judge(world)
    for n in range(300):
        proof: Issued = world["proofs"][n % 7]
        agree(judge, _mutations(proof.public(), rng), tmp_path, proof.proof_id)
