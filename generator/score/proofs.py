"""Submissions' proofs as Trust Layer serves them, judged offline for conditions 1 and 2 (spec §4.1).

``--proofs`` may be a folder of proof JSONs, one per ``proof_id``. Each becomes the verdict the scorer reads
(``{"valide", "identite_liee"}``, as a third-party verification file gives it) with the reasons in words.
One dispatch on ``spec_version``: from 3.0 on (the season's proxy) :func:`verdict_v3` reads the public view
(``generator/contract/proof_v3.py``: commitments root, signature on a pinned key, batch inclusion, the batch
root's RFC 3161 token within the season; condition 2 from ``disclosed``) and leaves ``engagements`` and the
opened DID to the assertion, which holds the submission's pairs and ``agent_did``. Below 3.0,
:func:`verdict_of`: chain hash and Ed25519 signature against the pinned key, the token over the chain (a
proof whose token is still ``submitted`` is en attente), and an identity that no anchor covers, not
receivable for condition 2. The proof's time is always the RFC 3161 token's (never Trust Layer's
``timestamp``), within the season (from the anchor's time to the close, when given); without an authority,
the verdict says its time was not verified offline. A pending proof is neither valid nor invalid:
``{"en_attente": true}``, and the submission citing it gets no score until the scoring is replayed.
"""


from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from generator.score.verdict import Proofs, Verdict
from generator.trust_layer.honest_v3 import Honest, PinnedKeys, honest_v3
from generator.trust_layer.proof_v3 import (
    IDENTITY_FROM,
    ProofV3,
    Window,
    condition_1,
    flat_incidents,
    identity_problem,
    version_of,
)
from generator.trust_layer.rekor_entry import load_rekor_key
from generator.trust_layer.trust_proof import TrustProof, verification_problems
from generator.trust_layer.tsa_token import Authority, TokenError, token_time, verified_time

AnyProof = TrustProof | ProofV3


@dataclass(frozen=True)
class SeasonWindow:
    """The window a proof's token time must fall in (bounds included), and the authority that signs it."""

    authority: Authority | None = None
    opening: datetime | None = None  # the anchor's time: the season opens after it
    closing: datetime | None = None
    rekor_pem: bytes | None = None  # --rekor-key: Rekor's public key, for entries a proof carries


def _time(proof: TrustProof, season: SeasonWindow, window: Window | None) -> tuple[str, str]:
    """``(problem, note)`` on the proof's time: a problem fails condition 1; the note says what was checked.
    ``window``: the authority's PEMs read once (:func:`window_of`), else read here."""
    unverified = ": the proof's time within the season is not verified offline"
    if proof.tsr_base64 is None:
        return "", "it carries no RFC 3161 token" + unverified
    if season.authority is None:
        return "", "its RFC 3161 token is not verified (no --tsa-ca given)" + unverified
    try:
        if window is None or window.ca_pem is None:
            when = token_time(proof.tsr_base64, proof.chain or "", season.authority)
        else:
            when = verified_time(proof.tsr_base64, bytes.fromhex(proof.chain or ""), window.ca_pem,
                                 window.cert_pem, str(season.authority.ca_file))
    except TokenError as exc:
        return str(exc), ""
    shown = when.strftime("%Y-%m-%dT%H:%M:%SZ")
    if season.opening is not None and when < season.opening:
        return f"timestamp_authority: RFC 3161 time {shown} is before the season opened " \
               f"({season.opening:%Y-%m-%dT%H:%M:%SZ}, the anchor's time)", ""
    if season.closing is not None and when > season.closing:
        return (f"timestamp_authority: RFC 3161 time {shown} is after the close "
                f"({season.closing:%Y-%m-%dT%H:%M:%SZ})"), ""
    close = "" if season.closing is not None else " (the close not checked: no --season-close)"
    return "", f"its RFC 3161 time {shown} verifies (rfc3161-client) within the season{close}"


def verdict_of(proof: TrustProof, pinned_key: str, season: SeasonWindow | None = None,
               window: Window | None = None) -> Verdict:
    """The verdict on one 1.2 proof: conditions 1 and 2, each with why in one sentence (``window``: the
    season's authority read once, :func:`window_of`)."""
    problems = verification_problems(proof, pinned_key)  # no fingerprint: a participant calls with their key
    if not problems and proof.awaiting_token:
        return {"en_attente": True,
                "motif": "timestamp_authority.status is submitted: Trust Layer has not got its RFC 3161 token "
                         "yet, so its time is not anchored; replay the scoring once the proof carries it"}
    problem, time = ("", "") if problems else _time(proof, season or SeasonWindow(), window)
    problems += [problem] if problem else []
    version = version_of(proof.spec_version)
    shown = proof.spec_version or "absent"
    if version is None or version < IDENTITY_FROM:
        identity = (f"spec_version {shown} is below 3.1: the identity it carries is covered by no anchor, not "
                    "receivable for condition 2 (spec §4.1)")
    else:
        identity = (f"spec_version {shown}: its disclosed identity block is not opened offline by this scorer "
                    "(condition 2 not established)")
    return {"valide": not problems, "identite_liee": False,
            "motif_1": problems[0].removeprefix(f"proof {proof.proof_id}: ") if problems else "",
            "motif_2": identity, "heure": time,
            "hashes_plats": {"request_hash": proof.request_hash, "response_hash": proof.response_hash}}


def window_of(season: SeasonWindow) -> Window:
    """The season as a 3.x check takes it: the pinned authority's PEM bytes read once."""
    ca, cert = season.authority.pems() if season.authority is not None else (None, None)
    rekor = load_rekor_key(season.rekor_pem) if season.rekor_pem is not None else None
    return Window(ca, cert, season.opening, season.closing, rekor)


def verdict_v3(proof: ProofV3, keys: Sequence[str], window: Window) -> Verdict:
    """The verdict on one 3.x proof (spec §4.1): condition 1 on the public view; condition 2 from ``disclosed``
    (the DID is compared with the submission's per assertion); ``engagements`` and ``hashes_plats`` let the
    assertion check that the submission's pairs open the anchored commitments and report a flat hash that
    differs as a Trust Layer incident."""
    check = condition_1(proof, keys, window)
    if check.pending and not check.problems:
        return {"en_attente": True,
                "motif": f"batch_anchor.status is pending: {proof.proof_id}'s batch is not closed, so nothing "
                         "anchors it yet; replay the scoring once the batch is anchored"}
    identity = identity_problem(proof)
    heure = f"its RFC 3161 time {check.time:%Y-%m-%dT%H:%M:%SZ} verifies within the season" if check.time else ""
    verdict: Verdict = {
        "valide": not check.problems, "identite_liee": not identity,
        "motif_1": check.problems[0] if check.problems else "", "motif_2": identity, "heure": heure,
        "hashes_plats": {side: proof.flat[side] for side in ("request_hash", "response_hash")
                         if side in proof.flat},
        "spec_version": proof.spec_version,
        "engagements": {side: proof.commitments.get(side) for side in ("request_hash", "response_hash")},
        "non_verifie": check.unchecked, "incidents": flat_incidents(proof)}
    if not identity:
        verdict["agent_identity"] = proof.disclosed["agent_identity"].value
    return verdict


def honest_verdict(honest: Honest, times: dict[datetime, str] | None = None) -> Verdict:
    """:func:`verdict_v3`'s verdict on an honest 3.x proof, from what :func:`honest_v3` verified of it: the
    same fields, in the same order, worded alike. ``times``: each token time's words, written once (a batch's
    proofs share their token's time)."""
    heure = times.get(honest.time) if times is not None else None
    if heure is None:
        heure = f"its RFC 3161 time {honest.time:%Y-%m-%dT%H:%M:%SZ} verifies within the season"
        if times is not None:
            if len(times) > 1 << 12:
                times.clear()
            times[honest.time] = heure
    return {"valide": True, "identite_liee": True, "motif_1": "", "motif_2": "", "heure": heure,
            "hashes_plats": honest.flat, "spec_version": honest.spec_version, "engagements": honest.engagements,
            "non_verifie": honest.unchecked, "incidents": [], "agent_identity": honest.agent_identity}


class ProofJudge:
    """The pins a folder's proofs are judged against (the keys, the season window), and each proof judged
    (:func:`verdict_v3` from 3.0 on, :func:`verdict_of` before); the window is read once, at the first proof."""

    def __init__(self, keys: Sequence[str], season: SeasonWindow) -> None:
        self.keys, self.season = list(keys), season
        self._window: Window | None = None
        self._pinned: PinnedKeys | None = None
        self._times: dict[datetime, str] = {}  # honest_verdict's words for each token time

    def honest(self, data: bytes, proof_id: str) -> Verdict | None:
        """The verdict on a proof file's bytes when it is an honest 3.1 proof through and through
        (:func:`~generator.trust_layer.honest_v3.honest_v3`, one pass near the cryptographic floor); None:
        read it and judge it (:meth:`verdict`), which says why it is not."""
        pinned = self._pinned
        if pinned is None:
            pinned = self._pinned = PinnedKeys(self.keys)
        found = honest_v3(data, proof_id, pinned, self.window)
        return honest_verdict(found, self._times) if found is not None else None

    @property
    def window(self) -> Window:
        """The pinned authority's PEMs and Rekor's key read and checked (:func:`window_of`), once."""
        if self._window is None:
            self._window = window_of(self.season)
        return self._window

    def verdict(self, proof: AnyProof) -> Verdict:
        """One proof judged: a 1.2 proof against the first pinned key, a 3.x one against any (a rotation)."""
        if isinstance(proof, ProofV3):
            return verdict_v3(proof, self.keys, self.window)
        return verdict_of(proof, self.keys[0], self.season, self.window)

    def verdicts(self, proofs: dict[str, AnyProof]) -> Proofs:
        """Each proof judged, by ``proof_id``; the pinned PEMs read and checked before any proof is."""
        self.window  # noqa: B018  # an unusable pin is one line before any proof is judged
        return {proof_id: self.verdict(proof) for proof_id, proof in sorted(proofs.items())}


def verdicts(proofs: dict[str, AnyProof], pinned_keys: str | Sequence[str],
             season: SeasonWindow | None = None) -> Proofs:
    """Each proof of a ``--proofs`` folder judged (:func:`verdict_of`, :func:`verdict_v3` from 3.0 on), by
    ``proof_id``; a 1.2 proof against the first pinned key, a 3.x one against any (a key rotation)."""
    keys = [pinned_keys] if isinstance(pinned_keys, str) else list(pinned_keys)
    return ProofJudge(keys, season or SeasonWindow()).verdicts(proofs)
