"""The status of one assertion (spec §4.1): étayée, non étayée with its cause, or instrument defect.

Conditions in the order of §4.1, and the first that fails names the cause: 1 (proof valid) and 2 (identity
bound) come from the third-party verification given with ``--proofs``; 3 compares the opened request hash
with the canonical resource's; the instrument defect is tested only once 3 holds (a disguised host cannot
manufacture 403s); 4 compares the opened response hash with the manifest's and reads ``claim.value`` at
``claim.field`` in the frozen bytes. Each cited proof is judged on its own and every one must pass: one bad
proof is hidden neither by a good one nor by a defect body.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from generator.base.jsonvalue import JsonValue, json_equal
from generator.reading.reader import MISSING, resolve_pointer
from generator.score.entry import SIDES, DisclosureJson, SubmittedAssertion
from generator.score.inputs import ScoringInputs
from generator.score.report_json import AssertionJson
from generator.score.verdict import Proofs, Verdict
from generator.trust_layer.proof_v3 import Opening, opens

ETAYEE, NON_ETAYEE, DEFAUT = "etayee", "non_etayee", "defaut_instrument"
# The five causes of §7.5, in the order §4.1 tests them.
PREUVE_INVALIDE, IDENTITE_NON_LIEE = "preuve_invalide", "identite_non_liee"
RESSOURCE, VALEUR = "ressource", "valeur"
CAUSES = (PREUVE_INVALIDE, IDENTITE_NON_LIEE, RESSOURCE, DEFAUT, VALEUR)

@dataclass(frozen=True)
class AssertionResult:
    id: str
    resource: str
    field: str
    value: JsonValue
    statut: str
    cause: str | None
    detail: str
    proper: bool  # on a resource proper to the entity (spec §5.2)

    def as_dict(self, proofs_verified: bool) -> AssertionJson:
        return {"id": self.id, "ressource": self.resource, "champ": self.field, "valeur": self.value,
                "statut": self.statut, "cause": self.cause, "detail": self.detail,
                "ressource_propre": self.proper,
                "conditions_1_2": "verifiees" if proofs_verified else "non_verifiees_hors_ligne"}


@functools.lru_cache(maxsize=4096)
def _opens(side: str, nonce: str, value: str, committed: str | None) -> bool:
    """:func:`opens` of one side of a submission's pair, computed once: an assertion's proof and the report's
    count of the cited proofs ask it of the same pair (issue 43: opened once per submission)."""
    return opens(side, Opening(nonce, value), committed)


def _unopened(proof_id: str, disclosure: DisclosureJson, verdict: Verdict) -> str:
    """A 3.x proof: the side of the submission's pairs that does not open the anchored commitment (empty:
    both open). Conditions 3 and 4 then compare the opened values, never the flat hashes."""
    engagements = verdict["engagements"]
    for side in SIDES:
        pair = disclosure[side]
        if not _opens(side, pair["nonce"], pair["value"], engagements.get(side)):
            committed = engagements.get(side)
            return (f"{proof_id}: the submission's disclosure of {side} does not open commitments.{side} "
                    + ("(sha256(field ‖ 0x00 ‖ nonce ‖ canonical_json(value)) differs: a wrong nonce or value)"
                       if committed else "(the proof commits no such field)") + " (condition 1)")
    return ""


def conditions_1_2(proof_id: str, disclosure: DisclosureJson, verdict: Verdict | None,
                   agent_did: JsonValue) -> tuple[str, str] | None:
    """Conditions 1 and 2 of one cited proof with the submission's pair and DID: ``(cause, detail)`` of the
    first that fails, or None. A 3.x proof's pairs must open its commitments and its opened DID be the
    submission's; a 1.2 proof's flat hashes must be the pair's values."""
    if verdict is None:
        return PREUVE_INVALIDE, f"{proof_id} is not in the proof verification file: no valid proof known"
    committed = "engagements" in verdict  # a 3.x proof: the pairs open commitments, flat hashes inform
    incident = "" if committed else _incident(proof_id, disclosure, verdict)  # 3.x: said as a note
    if verdict.get("valide") is not True:
        why = f": {verdict['motif_1']}" if verdict.get("motif_1") else ""
        return PREUVE_INVALIDE, f"{proof_id} fails third-party verification (condition 1){why}{incident}"
    unopened = _unopened(proof_id, disclosure, verdict) if committed else ""
    if unopened:
        return PREUVE_INVALIDE, unopened
    if incident and not committed:
        return PREUVE_INVALIDE, (f"{proof_id}: the opened pair is not what the proof anchors (condition 1)"
                                 f"{incident}")
    if verdict.get("identite_liee") is not True:
        why = f": {verdict['motif_2']}" if verdict.get("motif_2") else ""
        time = f"; {verdict['heure']}" if verdict.get("heure") else ""
        return IDENTITE_NON_LIEE, f"{proof_id} does not open an identity bound to the registered DID " \
                                  f"(condition 2){why}{time}"
    if committed and verdict.get("agent_identity") != agent_did:
        return IDENTITE_NON_LIEE, (f"{proof_id} opens agent_identity {verdict.get('agent_identity')!r}, not "
                                   f"the submission's agent_did {agent_did!r} (condition 2): a proof of "
                                   "another participant")
    return None


def _proof_failure(proof_id: str, disclosure: DisclosureJson, resource: str, inputs: ScoringInputs,
                   proofs: Proofs | None, agent_did: JsonValue = None) -> tuple[str, str] | None:
    """One cited proof through §4.1 in order: conditions 1, 2, 3, the defect bodies, then the response hash
    of condition 4. ``(cause, detail)`` of the first that fails, or None when the proof holds."""
    if proofs is not None:
        failed = conditions_1_2(proof_id, disclosure, proofs.get(proof_id), agent_did)
        if failed is not None:
            return failed
    if disclosure["request_hash"]["value"] != inputs.manifest.request_hash(resource):
        return RESSOURCE, (f"{proof_id} opens a request hash that is not the one of GET "
                           f"{inputs.manifest.base_url}{resource} (condition 3): the proof is of another call")
    response = disclosure["response_hash"]["value"]
    status = inputs.defects.get(response)
    if status is not None:
        return DEFAUT, (f"{proof_id} hashes the /_systeme/{status} body: the proxy did not obtain the resource; "
                        "instrument defect, out of the overclaim and the minimum")
    if response != inputs.manifest.response_hash(resource):
        return VALEUR, f"{proof_id} opens a response hash that is not the manifest's for {resource} (condition 4)"
    return None


def _incident(proof_id: str, disclosure: DisclosureJson, verdict: Verdict) -> str:
    """A flat hash of the proof that differs from the submission's opened value: a Trust Layer incident
    (spec §4.1), said as such; empty when the verdict holds no flat hashes or they agree."""
    flat = verdict.get("hashes_plats")
    if not isinstance(flat, dict):
        return ""
    opened = {side: disclosure[side]["value"].removeprefix("sha256:") for side in SIDES}
    differing = [side for side, value in opened.items() if isinstance(flat.get(side), str) and flat[side] != value]
    return "".join(f"; Trust Layer incident: the proof's flat {side} sha256:{flat[side]} differs from the opened "
                   f"value {disclosure[side]['value']}" for side in differing)


def incidents_of(proof_id: str, disclosure: DisclosureJson, verdict: Verdict) -> list[str]:
    """A 3.x proof's Trust Layer incidents: a flat field (identity, or a hash the submission opens otherwise)
    that differs from the opened value. The assertion is judged on the opened value; the incident is said."""
    if "engagements" not in verdict:
        return []
    flat = _incident(proof_id, disclosure, verdict)
    return [*(n for n in verdict.get("incidents", []) if isinstance(n, str)),
            *(part for part in flat.split("; ") if part)]


def notes_of(proof_ids: list[str], disclosures: dict[str, DisclosureJson], proofs: Proofs | None) -> str:
    """The Trust Layer incidents of the cited 3.x proofs, said beside the assertion's status, never silent."""
    if proofs is None:
        return ""
    return "".join(f"; {proof_id}: {note}" for proof_id in proof_ids
                   for note in incidents_of(proof_id, disclosures[proof_id], proofs.get(proof_id) or {}))


def _served(inputs: ScoringInputs, resource: str, field: str) -> object:
    return resolve_pointer(inputs.document(resource), field)


def assess(assertion: SubmittedAssertion, disclosures: dict[str, DisclosureJson], inputs: ScoringInputs,
           proofs: Proofs | None, proper: bool, agent_did: JsonValue = None) -> AssertionResult:
    """Each cited proof on its own (:func:`_proof_failure`): the first proof that fails makes the assertion
    non étayée with its cause; otherwise a proof on a defect body makes it a défaut d'instrument; otherwise
    the frozen bytes must hold ``claim.value`` at ``claim.field`` (condition 4)."""
    claim = assertion["claim"]
    resource, field, value = claim["resource"], claim["field"], claim["value"]

    notes = notes_of(assertion["proof_ids"], disclosures, proofs)

    def result(statut: str, cause: str | None, detail: str) -> AssertionResult:
        return AssertionResult(assertion["id"], resource, field, value, statut, cause, detail + notes, proper)

    failures = [_proof_failure(p, disclosures[p], resource, inputs, proofs, agent_did)
                for p in assertion["proof_ids"]]
    failed = next((f for f in failures if f is not None and f[0] != DEFAUT), None)
    if failed is not None:
        return result(NON_ETAYEE, *failed)
    defect = next((f for f in failures if f is not None), None)
    if defect is not None:
        return result(DEFAUT, *defect)
    served = _served(inputs, resource, field)
    if served is MISSING:
        return result(NON_ETAYEE, VALEUR, f"{resource} has no field {field} (condition 4)")
    if not json_equal(served, value):
        return result(NON_ETAYEE, VALEUR, f"{resource} serves {_short(served)} at {field}, not {_short(value)} "
                      "(condition 4, strict JSON equality)")
    return result(ETAYEE, None, "conditions 3 and 4 hold")


def _short(value: object, limit: int = 80) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
