"""A proof's verdict (spec §4.1): what the scorer reads of each cited proof for conditions 1 and 2, from a
third-party verification file (``--proofs FILE``) or judged here from a folder of proofs (:mod:`proofs`).

:class:`Verdict` is its shape (open: a hand-written file may add fields, the scorer reads those it knows);
:func:`check_proofs` is the one reader of a verification file, and :func:`proofs_bytes` the one writer of
one (a verification file as ``corpus score --proofs`` reads it back).
"""

from __future__ import annotations

import json
from typing import TypedDict, TypeGuard

from generator.base.errors import shown_path
from generator.base.jsonvalue import JsonValue, indented_json
from generator.score.inputs import ScoreInputError


class Verdict(TypedDict, total=False):
    """One proof's verdict: ``valide`` and ``identite_liee`` (with why, ``motif_1``/``motif_2``, and the
    token's time, ``heure``), or ``en_attente`` (and why, ``motif``) for a proof whose batch is not anchored
    yet. A 3.x verdict adds the commitments the submission's pairs must open (``engagements``), the flat
    hashes, what was not verified offline, the Trust Layer incidents and the opened ``agent_identity``."""

    valide: bool
    identite_liee: bool
    motif_1: str
    motif_2: str
    heure: str
    hashes_plats: dict[str, str | None]
    spec_version: str | None
    engagements: dict[str, str | None]
    non_verifie: list[str]
    incidents: list[str]
    agent_identity: JsonValue
    en_attente: bool
    motif: str


Proofs = dict[str, Verdict]  # by proof_id


def _optional_fields_fit(verdict: dict[object, object]) -> bool:
    """What a 3.x verdict adds beside ``valide`` and ``identite_liee``, when present, has its shape (a
    hand-written verification file must fail in one line here, not as a traceback while scoring)."""
    engagements = verdict.get("engagements", {})
    lists = (verdict.get(name, []) for name in ("incidents", "non_verifie"))
    return isinstance(engagements, dict) and all(isinstance(v, str | None) for v in engagements.values()) \
        and all(isinstance(items, list) and all(isinstance(i, str) for i in items) for items in lists)


def _is_verdict(verdict: object) -> TypeGuard[Verdict]:
    """``{"valide": bool, "identite_liee": bool}`` (3.x fields of their shape), or ``{"en_attente": true}``
    (and a ``motif`` string)."""
    if not isinstance(verdict, dict):
        return False
    verified = isinstance(verdict.get("valide"), bool) and isinstance(verdict.get("identite_liee"), bool)
    pending = verdict.get("en_attente") is True and set(verdict) <= {"en_attente", "motif"} \
        and isinstance(verdict.get("motif", ""), str)
    return (verified and _optional_fields_fit(verdict)) or pending


class CheckedProofs(dict[str, Verdict]):
    """Verdicts :func:`check_proofs` has checked, never changed since (its callers hand them on as they are): a
    close scores every participant with the same ones, and checking its thousands of verdicts again for each
    participant made the close quadratic (1,000 participants of 35 proofs each: 35 million checks)."""


def check_proofs(proofs: object) -> Proofs:
    """The third-party verification: ``{"<proof_id>": {"valide": bool, "identite_liee": bool}}``, or
    ``{"en_attente": true}`` (and why, a ``motif``) for a proof whose batch is not anchored yet; the same
    :class:`CheckedProofs` when given one."""
    if isinstance(proofs, CheckedProofs):
        return proofs
    if not isinstance(proofs, dict):
        raise ScoreInputError('proofs: expected an object {"<proof_id>": {"valide": bool, "identite_liee": bool}}')
    checked = CheckedProofs()
    for proof_id, verdict in proofs.items():
        if _is_verdict(verdict):
            checked[proof_id] = verdict
            continue
        verified = isinstance(verdict, dict) and isinstance(verdict.get("valide"), bool) \
            and isinstance(verdict.get("identite_liee"), bool)
        if verified:
            raise ScoreInputError(f"proofs: {shown_path(proof_id)}: \"engagements\" must be an object of hex "
                                  "strings (or null), \"incidents\" and \"non_verifie\" lists of strings, got "
                                  f"{shown_path(json.dumps(verdict))}")
        raise ScoreInputError(f"proofs: {shown_path(proof_id)}: expected {{\"valide\": true|false, "
                              f"\"identite_liee\": true|false}} or {{\"en_attente\": true}} (and, if given, a "
                              f"\"motif\" string), got {shown_path(json.dumps(verdict))}")
    return checked


def proofs_bytes(proofs: Proofs) -> bytes:
    """A verification file: the verdicts by proof_id, indented UTF-8 JSON, one newline at the end."""
    return indented_json(proofs)
