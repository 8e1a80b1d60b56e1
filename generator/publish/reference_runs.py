"""A reference run (spec §7.1): executed by ArkForge, its model, version, framework and prompt published, so
that anyone can replay it. The registration of a ``reference`` line carries them (``reference``: ``modele``,
``version``, ``framework``, ``prompt``, the prompt as its text or as a link with the SHA-256 of what it
serves); the index line and the report publish them, marked « rejouable »."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from generator.base.jsonvalue import JsonValue
from generator.base.text_policy import cut
from generator.publish.files import IndexInputError
from generator.publish.wording import has_emoji

FIELDS = ("modele", "version", "framework", "prompt")
REJOUABLE = "rejouable"
MENTION = "Run de référence rejouable : modèle, version, framework et prompt publiés (spec §7.1)."
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_LINK = re.compile(r"https://[A-Za-z0-9.-]+(:[0-9]{1,5})?(/[A-Za-z0-9._~/%-]*)?")
_SHA256 = re.compile(r"[0-9a-f]{64}")
SHORT_LIMIT, PROMPT_LIMIT = 200, 20_000


class PromptJson(TypedDict, total=False):
    texte: str
    lien: str
    sha256: str


class ReferenceJson(TypedDict):
    """What the index line and the report publish of a reference run."""

    modele: str
    version: str
    framework: str
    prompt: PromptJson
    mention: str


@dataclass(frozen=True)
class ReferenceRun:
    modele: str
    version: str
    framework: str
    prompt_text: str | None = None
    prompt_link: str | None = None
    prompt_sha256: str | None = None

    def prompt(self) -> PromptJson:
        if self.prompt_text is not None:
            return {"texte": self.prompt_text}
        assert self.prompt_link is not None and self.prompt_sha256 is not None
        return {"lien": self.prompt_link, "sha256": self.prompt_sha256}

    def to_json(self) -> dict[str, object]:
        """As the registrations file writes it."""
        return {"modele": self.modele, "version": self.version, "framework": self.framework,
                "prompt": dict(self.prompt())}

    def published(self) -> ReferenceJson:
        """As the index line and the report publish it, marked « rejouable »."""
        return {"modele": self.modele, "version": self.version, "framework": self.framework,
                "prompt": self.prompt(), "mention": REJOUABLE}


def _text(path: Path, where: str, value: object, limit: int, multiline: bool = False) -> str:
    if not isinstance(value, str) or not value.strip():
        raise IndexInputError(f"{path}: {where}: expected a non-empty string")
    if len(value) > limit:
        raise IndexInputError(f"{path}: {where}: {len(value)} characters, at most {limit}")
    if _CONTROL.search(value) or (not multiline and "\n" in value):
        raise IndexInputError(f"{path}: {where}: holds a control character; write plain text")
    if has_emoji(value):
        raise IndexInputError(f"{path}: {where}: holds an emoji or a pictograph; none is published (spec §7.3)")
    return value


def read_reference(path: Path, where: str, value: JsonValue) -> ReferenceRun:
    """A reference registration's ``reference`` object, checked field by field (one line naming the field)."""
    if not isinstance(value, dict) or set(value) != set(FIELDS):
        extra = sorted(set(value) - set(FIELDS)) if isinstance(value, dict) else []
        why = f"/{extra[0]}: unknown field" if extra else f": expected an object of {', '.join(FIELDS)}"
        raise IndexInputError(f"{path}: {where}{why} (a reference run publishes its model, version, framework "
                              "and prompt, spec §7.1)")
    modele, version, framework = (_text(path, f"{where}/{name}", value[name], SHORT_LIMIT)
                                  for name in FIELDS[:3])
    prompt = value["prompt"]
    if isinstance(prompt, dict) and set(prompt) == {"texte"}:
        return ReferenceRun(modele, version, framework,
                            prompt_text=_text(path, f"{where}/prompt/texte", prompt["texte"], PROMPT_LIMIT, True))
    if isinstance(prompt, dict) and set(prompt) == {"lien", "sha256"}:
        link, digest = prompt["lien"], prompt["sha256"]
        if not isinstance(link, str) or not _LINK.fullmatch(link):
            raise IndexInputError(f"{path}: {where}/prompt/lien: expected an https URL of a host and a path, got "
                                  f"{cut(link)}")
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise IndexInputError(f"{path}: {where}/prompt/sha256: expected the SHA-256 of what the link serves, "
                                  f"64 lowercase hex digits, got {cut(digest)}")
        return ReferenceRun(modele, version, framework, prompt_link=link, prompt_sha256=digest)
    raise IndexInputError(f"{path}: {where}/prompt: expected {{\"texte\": the prompt}} or {{\"lien\": an https "
                          "URL, \"sha256\": its SHA-256}}")
