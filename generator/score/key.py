"""The season files as the scorer reads them: the key's vocabulary, and the shape of ``season/cle.json`` and
``season/taches.json`` checked before a byte of them is used.

``TOUS`` and ``UN_CRITERE`` are the two values of the key's ``fonde_par``, defined here once for the scorer
and for the season code that derives the key. The published shapes are ``season-cle.schema.json`` and
``season-taches.schema.json``, which refer to the source schemas (``cle``, ``taches``) part by part: a key or a
statement file the scorer accepts is one the season compiler could have written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import NotRequired, TypedDict

from generator.base.jsonvalue import JsonValue, json_key, pointer
from generator.documents.schema_checks import schema_message
from generator.documents.schemas import errors
from generator.reading.founding import TOUS
from generator.score.report_json import FactJson, FormJson

KEY_SCHEMA, TASKS_SCHEMA = "season-cle", "season-taches"


def shape_problem(name: str, data: JsonValue, folder: Path) -> str | None:
    """``<JSON Pointer>: <message>`` of the first error of ``data`` against schema ``name`` (in document order,
    with how many more), or None when it conforms. ``folder``: the track's schemas."""
    found = sorted(errors(name, data, folder), key=lambda e: [str(p) for p in e.path])
    if not found:
        return None
    more = f" (and {len(found) - 1} more error(s))" if len(found) > 1 else ""
    return f"{pointer(found[0].path)}: {schema_message(found[0])}{more}"


# ------------------------------------------------------------------------------- the key, typed
# What the scorer reads of season/cle.json once its shape is checked (shape_problem above): every task's
# expected verdict and founding facts as frozen values, so that no scoring step indexes a raw dict.


@dataclass(frozen=True)
class Form:
    """One way of writing a founding fact: the value ``valeur`` served at field ``champ`` of ``ressource``."""

    ressource: str
    champ: str
    valeur: JsonValue  # a JSON string, boolean, null or list of strings (cle.schema.json $defs/fait)

    def triplet(self) -> tuple[str, str, object]:
        """What an étayée assertion must hold to meet this form (strict JSON equality on the value)."""
        return self.ressource, self.champ, json_key(self.valeur)

    def form_json(self) -> FormJson:
        return {"ressource": self.ressource, "champ": self.champ, "valeur": self.valeur}


@dataclass(frozen=True)
class Fact(Form):
    """A founding fact of the key, the criterion it founds, and its equivalent forms (None: not written)."""

    critere: str
    formes_equivalentes: tuple[Form, ...] | None = None

    def forms(self) -> tuple[Form, ...]:
        return (self, *(self.formes_equivalentes or ()))

    def to_json(self) -> FactJson:
        """The fact as the key writes it (and as a report names it missing)."""
        data: FactJson = {"ressource": self.ressource, "champ": self.champ, "valeur": self.valeur,
                          "critere": self.critere}
        if self.formes_equivalentes is not None:
            data["formes_equivalentes"] = [form.form_json() for form in self.formes_equivalentes]
        return data


@dataclass(frozen=True)
class KeyEntry:
    """The key of one task: its family, expected verdict, trap, and what founds the verdict."""

    famille: str
    verdict: str
    piege: str
    faits: tuple[Fact, ...]
    raccourci: str | None = None
    fonde_par: str = TOUS


class KeyEntryJson(TypedDict):
    famille: str
    verdict: str
    piege: str
    faits: list[FactJson]
    raccourci: NotRequired[str | None]
    fonde_par: NotRequired[str]


class KeyJson(TypedDict):
    """``season/cle.json`` of the published shape (``season-cle.schema.json``)."""

    saison: int
    taches: dict[str, KeyEntryJson]


@dataclass(frozen=True)
class Key:
    """``season/cle.json`` as the scorer uses it: the season and one :class:`KeyEntry` per task id."""

    saison: int
    taches: Mapping[str, KeyEntry]

    @classmethod
    def from_json(cls, data: KeyJson) -> Key:
        """The typed key from a document that has the published shape (``shape_problem(KEY_SCHEMA, data)`` is
        None): every field is then of its type, and only converted here."""
        return cls(data["saison"], MappingProxyType({task_id: _key_entry(entry)
                                                     for task_id, entry in data["taches"].items()}))


def _form(data: FormJson) -> Form:
    return Form(data["ressource"], data["champ"], data["valeur"])


def _key_entry(data: KeyEntryJson) -> KeyEntry:
    faits = tuple(Fact(f["ressource"], f["champ"], f["valeur"], f["critere"],
                       None if "formes_equivalentes" not in f else tuple(map(_form, f["formes_equivalentes"])))
                  for f in data["faits"])
    return KeyEntry(data["famille"], data["verdict"], data["piege"], faits, data.get("raccourci"),
                    data.get("fonde_par", TOUS))
