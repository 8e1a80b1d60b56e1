"""The season's registrations (``corpus-inscriptions/1``), as the season service hands them over at the close.

Read strictly: a field missing, of another type or unknown, two participants with one name, a DID registered
twice, is one line naming the file and the JSON Pointer of the field, and nothing is published. Names are
compared as the report file names are made (:func:`slug`): case, accents and punctuation aside, so that two
participants can never be told apart by a capital or an accent only; and after Unicode normalisation and
confusable folding (:mod:`generator.publish.names`), so that a look-alike name or stack is refused too.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from generator.base.jsonvalue import JsonValue, indented_json
from generator.base.text_policy import cut
from generator.publish.files import IndexInputError, read_json, utc_time
from generator.publish.names import refuse_lookalikes
from generator.publish.reference_runs import ReferenceRun, read_reference
from generator.publish.wording import FORMAT_INSCRIPTIONS, REFERENCE, TABLEAUX, has_emoji

FIELDS = ("agent", "did", "cle_empreinte", "stack", "tableau", "inscrit_le", "verified_did_history")
REFERENCE_FIELD = "reference"  # a reference run's only (spec §7.1): model, version, framework, prompt
DID = re.compile(r"^did:[a-z0-9]+:[A-Za-z0-9._:%-]{1,256}$")  # the submission schema's, bounded
FINGERPRINT = re.compile(r"^[0-9a-f]{64}$")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
NAME_LIMIT, STACK_LIMIT = 80, 300


def slug(name: str) -> str:
    """The report file name of a participant: ASCII letters and digits, words joined by ``-``."""
    plain = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode("ascii").lower()
    return re.sub(r"[^a-z0-9]+", "-", plain).strip("-")[:60].strip("-")


@dataclass(frozen=True)
class Registration:
    """One registration (spec §3.3): the operator's chosen name, the DID, the key's fingerprint and its DID
    history, the declared stack, its table, when."""

    position: int  # in the file's list: the tie-break of two registrations at the same instant
    agent: str
    did: str
    key: str
    stack: str
    tableau: str
    inscrit_le: datetime
    inscrit_le_texte: str
    history: tuple[str, ...]
    reference: ReferenceRun | None = None  # a reference run's published model, version, framework and prompt

    @property
    def slug(self) -> str:
        return slug(self.agent)

    @property
    def where(self) -> str:
        return f"/participants/{self.position}"


def _text(path: Path, where: str, value: object, limit: int, what: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise IndexInputError(f"{path}: {where}: expected {what}, a non-empty string")
    if len(value) > limit:
        raise IndexInputError(f"{path}: {where}: {len(value)} characters, at most {limit}")
    if _CONTROL.search(value):
        raise IndexInputError(f"{path}: {where}: holds a control character; write plain text on one line")
    if has_emoji(value):
        raise IndexInputError(f"{path}: {where}: holds an emoji or a pictograph; none is published (spec §7.3)")
    return value


def _did(path: Path, where: str, value: object) -> str:
    if not isinstance(value, str) or not DID.match(value):
        raise IndexInputError(f"{path}: {where}: expected a DID (did:<method>:<identifier>, as a submission's "
                              f"agent_did), got {cut(value)}")
    return value


def _registration(path: Path, position: int, item: JsonValue) -> Registration:
    where = f"/participants/{position}"
    if not isinstance(item, dict):
        raise IndexInputError(f"{path}: {where}: expected an object with {', '.join(FIELDS)}")
    allowed = (*FIELDS, REFERENCE_FIELD) if item.get("tableau") == REFERENCE else FIELDS
    unknown = sorted(set(item) - set(allowed))
    if unknown:
        raise IndexInputError(f"{path}: {where}/{unknown[0]}: unknown field (the fields are {', '.join(allowed)}; "
                              f"{REFERENCE_FIELD} for a reference run only)")
    missing = [name for name in allowed if name not in item]
    if missing:
        raise IndexInputError(f"{path}: {where}: missing field {missing[0]!r}")
    agent = _text(path, f"{where}/agent", item["agent"], NAME_LIMIT, "the name the operator chose")
    did = _did(path, f"{where}/did", item["did"])
    if not isinstance(item["cle_empreinte"], str) or not FINGERPRINT.match(item["cle_empreinte"]):
        raise IndexInputError(f"{path}: {where}/cle_empreinte: expected the SHA-256 of the API key, 64 lowercase "
                              f"hex digits, got {cut(item['cle_empreinte'])}")
    stack = _text(path, f"{where}/stack", item["stack"], STACK_LIMIT, "the declared stack")
    if item["tableau"] not in TABLEAUX:
        raise IndexInputError(f"{path}: {where}/tableau: expected \"reference\" or \"communaute\", got "
                              f"{cut(item['tableau'])}")
    inscrit_le = item["inscrit_le"]
    when = utc_time(inscrit_le)
    if when is None or not isinstance(inscrit_le, str):
        raise IndexInputError(f"{path}: {where}/inscrit_le: expected a UTC time YYYY-MM-DDTHH:MM:SSZ, got "
                              f"{cut(item['inscrit_le'])}")
    history = item["verified_did_history"]
    if not isinstance(history, list):
        raise IndexInputError(f"{path}: {where}/verified_did_history: expected a list of DIDs (the key's "
                              "binding history, possibly empty)")
    dids = tuple(_did(path, f"{where}/verified_did_history/{n}", d) for n, d in enumerate(history))
    if not slug(agent):
        raise IndexInputError(f"{path}: {where}/agent: {agent!r} has no letter or digit to name its report by")
    reference = read_reference(path, f"{where}/{REFERENCE_FIELD}", item[REFERENCE_FIELD]) \
        if REFERENCE_FIELD in item else None
    return Registration(position, agent, did, item["cle_empreinte"], stack, item["tableau"], when, inscrit_le,
                        dids, reference)


def registrations_bytes(registrations: Sequence[Registration]) -> bytes:
    """The one writer of a ``corpus-inscriptions/1`` file (the season service's, as :func:`read_registrations`
    reads it back): the registrations in their order, indented UTF-8 JSON."""
    return indented_json({"format": FORMAT_INSCRIPTIONS, "participants": [
        {"agent": r.agent, "did": r.did, "cle_empreinte": r.key, "stack": r.stack, "tableau": r.tableau,
         "inscrit_le": r.inscrit_le_texte, "verified_did_history": list(r.history),
         **({REFERENCE_FIELD: r.reference.to_json()} if r.reference is not None else {})} for r in registrations]})


def read_registrations(path: Path) -> list[Registration]:
    """Every registration of the file, checked; one line and nothing published at the first problem."""
    value, defects = read_json(path)
    if defects:
        raise IndexInputError(f"{path}: {defects[0]}")
    if not isinstance(value, dict) or value.get("format") != FORMAT_INSCRIPTIONS:
        raise IndexInputError(f"{path}: /format: expected {FORMAT_INSCRIPTIONS!r} (the season service's "
                              "registrations file)")
    unknown = sorted(set(value) - {"format", "participants"})
    if unknown:
        raise IndexInputError(f"{path}: /{unknown[0]}: unknown field (the fields are format and participants)")
    participants = value.get("participants")
    if not isinstance(participants, list):
        raise IndexInputError(f"{path}: /participants: expected a list of registrations")
    registrations = [_registration(path, n, item) for n, item in enumerate(participants)]
    names: dict[str, Registration] = {}
    dids: dict[str, Registration] = {}
    for r in registrations:
        if r.slug in names:
            first = names[r.slug]
            raise IndexInputError(f"{path}: {r.where}/agent: {r.agent!r} is already the name of {first.where} "
                                  f"({first.agent!r}): two participants with one name (names are compared "
                                  "without case, accents or punctuation)")
        if r.did in dids:
            raise IndexInputError(f"{path}: {r.where}/did: {r.did} is already registered by {dids[r.did].where}: "
                                  "a DID is registered once a season (spec §3.3, §9.1)")
        names[r.slug], dids[r.did] = r, r
    refuse_lookalikes(path, registrations)
    return registrations
