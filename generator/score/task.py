"""One task's result (spec §5.7): rejected, rendered or not, verdict exact, verdict fondé, missing facts.

Rendered: at least the minimum of counted assertions (instrument defects do not count), and at least half
the minimum, rounded up, on resources proper to the entity. Fondé: every founding fact of the key is met
by an étayée assertion in one of its forms (strict JSON equality on the value), or, when the key says
``fonde_par: un_critere``, every fact of one deciding criterion. A task succeeds when it is rendered, its
verdict is exact and fondé.

A submission rejected at entry or at the close is not scored (spec §4): its verdict is not judged
(``verdict_exact: false``, whatever it says) and no fact is reported missing. A pending one likewise, until
it is replayed.
"""

from __future__ import annotations

from generator.base.jsonvalue import JsonValue, json_key
from generator.reading.founding import UN_CRITERE
from generator.score.assertion import DEFAUT, ETAYEE, NON_ETAYEE, AssertionResult, assess
from generator.score.close import close_problems
from generator.score.entry import admitted, entry_problems
from generator.score.inputs import ScoringInputs, Statement
from generator.score.key import KeyEntry
from generator.score.report_json import FactJson, TaskJson
from generator.score.verdict import Proofs

RENDUE, NON_RENDUE, REJETEE_ENTREE, REJETEE_CLOTURE = "rendue", "non_rendue", "rejetee_entree", "rejetee_cloture"
EN_ATTENTE = "en_attente"  # cites a proof whose batch is not anchored yet: no score, replay later (spec §4.1)


def missing_facts(key_entry: KeyEntry, etayees: list[AssertionResult]) -> list[FactJson]:
    """Founding facts of the key that no étayée assertion meets in any of their forms.

    With ``fonde_par: un_critere`` (several criteria decide, each enough on its own), the facts form one
    group per ``critere`` and a single fully met group founds the verdict; otherwise the missing facts of
    the group closest to being met are named (the first criterion on a tie)."""
    held = {(a.resource, a.field, json_key(a.value)) for a in etayees}
    groups: dict[str, list[FactJson]] = {}
    every: list[FactJson] = []
    for fact in key_entry.faits:
        missing = groups.setdefault(fact.critere, [])
        if not any(form.triplet() in held for form in fact.forms()):
            missing.append(fact.to_json())
            every.append(missing[-1])
    if key_entry.fonde_par == UN_CRITERE and groups:
        return min(groups.values(), key=len)
    return every


def _half_up(n: int) -> int:
    return (n + 1) // 2


def _result(statement: Statement, key_entry: KeyEntry, submission: JsonValue,
            statut: str, motif: str, assertions: list[AssertionResult], proofs_verified: bool,
            rejets: list[str] | None = None) -> TaskJson:
    verdict = submission.get("verdict") if isinstance(submission, dict) else None
    judged = statut in (RENDUE, NON_RENDUE)  # a rejected submission is not scored; a pending one not yet
    exact = judged and isinstance(verdict, str) and verdict == key_entry.verdict
    etayees = [a for a in assertions if a.statut == ETAYEE]
    manquants = missing_facts(key_entry, etayees) if judged else []
    fonde = judged and not manquants
    return {
        "tache": statement.task.id, "statut": statut, "motif": motif,
        "verdict": verdict if isinstance(verdict, str) else None, "verdict_attendu": key_entry.verdict,
        "verdict_exact": exact, "fonde": fonde, "reussie": statut == RENDUE and exact and fonde,
        "faits_manquants": manquants, "minimum": statement.minimum, "plafond": statement.plafond,
        "comptees": sum(a.statut != DEFAUT for a in assertions),
        "non_etayees": sum(a.statut == NON_ETAYEE for a in assertions),
        "defauts_instrument": sum(a.statut == DEFAUT for a in assertions),
        "rejets": rejets or [],
        "assertions": [a.as_dict(proofs_verified) for a in assertions],
    }


def score_task(statement: Statement, key_entry: KeyEntry, submission: JsonValue,
               inputs: ScoringInputs, proofs: Proofs | None) -> TaskJson:
    """The report entry of one task, from its submission (None: nothing was submitted)."""
    verified = proofs is not None
    if submission is None:
        return _result(statement, key_entry, None, NON_RENDUE, "no submission", [], verified)
    rejets = entry_problems(submission, inputs)
    if rejets:
        return _result(statement, key_entry, submission, REJETEE_ENTREE, "rejected at entry (spec §4)", [],
                       verified, rejets)
    shaped = admitted(submission)
    rejets = close_problems(shaped, inputs)
    if rejets:
        return _result(statement, key_entry, submission, REJETEE_CLOTURE, "rejected at the close (spec §5.7)",
                       [], verified, rejets)
    pending = sorted({p for a in shaped["assertions"] for p in a["proof_ids"]
                      if proofs is not None and (proofs.get(p) or {}).get("en_attente") is True})
    if pending and proofs is not None:  # pending names only proofs of ``proofs``, each an en_attente verdict
        why = sorted({m for p in pending if isinstance(m := proofs[p].get("motif"), str)})
        return _result(statement, key_entry, submission, EN_ATTENTE, f"cites {', '.join(pending)}, awaiting "
                       "anchoring: no score for this submission until it is replayed (spec §4.1)"
                       + "".join(f" ({m})" for m in why), [], verified)
    graph = inputs.graph(statement.task.id)
    assertions = [assess(a, shaped["disclosures"], inputs, proofs, a["claim"]["resource"] in graph.proper,
                         shaped.get("agent_did")) for a in shaped["assertions"]]
    counted = [a for a in assertions if a.statut != DEFAUT]
    own = sum(a.proper for a in counted)
    needed_own = _half_up(statement.minimum)
    if len(counted) < statement.minimum:
        motif = (f"{len(counted)} counted assertion(s) for a minimum of {statement.minimum} "
                 "(instrument defects do not count)")
        return _result(statement, key_entry, submission, NON_RENDUE, motif, assertions, verified)
    if own < needed_own:
        motif = (f"{own} counted assertion(s) on resources proper to the entity, {needed_own} needed (half the "
                 f"minimum of {statement.minimum}, rounded up; spec §5.7)")
        return _result(statement, key_entry, submission, NON_RENDUE, motif, assertions, verified)
    return _result(statement, key_entry, submission, RENDUE, "rendered", assertions, verified)
