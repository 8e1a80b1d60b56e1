"""The freeze record (spec §8, CONTRACT §5): what the pre-registration anchors, and the build guard.

``freeze/record.json`` holds the manifest hash, the SHA-256 of the frozen barème section and the
answer-key commitment ``sha256(salt ‖ key bytes)``. The 32-byte salt lives in a file outside the
repository and is published only at the close. Once the record exists, any build that would change a
byte of ``manifest/``, or of ``season/cle.json``, fails loudly instead of writing.
"""

from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.errors import FrozenMismatch
from generator.hashing import sha256_hex
from generator.output import MANIFEST_FILE

RECORD = Path("freeze") / "record.json"
FORMAT = "corpus-freeze/1"
KEY_FILE = Path("season") / "cle.json"
BAREME_FILE = Path("spec") / "conformite-bareme-v3.section-5.txt"  # byte-exact copy of the published section
# Published with the spec (CONTRACT §5): the only barème section this season may be frozen with.
PUBLISHED_BAREME_SHA256 = "960a7374f4d905eff4a38a1cc800bd6e75e8ded891b5c6242da139ecb7da51f1"
SALT_BYTES = 32


def read_record(root: Path) -> dict[str, Any] | None:
    path = root / RECORD
    return json.loads(path.read_text("utf-8")) if path.is_file() else None


def commitment(salt: bytes, key: bytes) -> str:
    """``sha256(salt ‖ key bytes)``: without the salt, ten verdicts among three fall to brute force."""
    return sha256_hex(salt + key)


def load_or_make_salt(path: Path, root: Path) -> bytes:
    """Read a hex salt, or create one (mode 0600); refuse a path inside the repository."""
    resolved, repo = path.resolve(), root.resolve()
    if resolved == repo or repo in resolved.parents:
        raise ValueError(f"{path} is inside the repository: the salt must never enter it")
    if path.exists():
        salt = bytes.fromhex(path.read_text("ascii").strip())
        if len(salt) != SALT_BYTES:
            raise ValueError(f"{path} does not hold a {SALT_BYTES}-byte hex salt")
        return salt
    salt = secrets.token_bytes(SALT_BYTES)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(salt.hex() + "\n")
    return salt


@dataclass(frozen=True)
class FreezeInputs:
    manifest_hash: str
    bareme_sha256: str
    key_commitment: str
    corpus: str


def record_bytes(inputs: FreezeInputs) -> bytes:
    record = {"format": FORMAT, "corpus": inputs.corpus, "manifest_hash": inputs.manifest_hash,
              "bareme": {"section": "conformite-bareme-v3", "sha256": inputs.bareme_sha256},
              "cle": {"fichier": KEY_FILE.as_posix(), "engagement": inputs.key_commitment,
                      "sel": "32 octets aléatoires, hors du dépôt, publiés à la clôture"}}
    return (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def freeze(root: Path, bareme: Path, salt_file: Path) -> bytes:
    """Write ``freeze/record.json`` from the committed manifest, the barème section and the key."""
    if (root / RECORD).exists():
        raise FrozenMismatch(f"{RECORD} already exists: a season is frozen once (delete the record only to "
                             "start a new season)")
    bareme_hash = sha256_hex(bareme.read_bytes())
    if bareme_hash != PUBLISHED_BAREME_SHA256:
        raise FrozenMismatch(f"{bareme} hashes to {bareme_hash}, not to the published barème section "
                             f"{PUBLISHED_BAREME_SHA256}")
    manifest = (root / "manifest" / MANIFEST_FILE).read_bytes()
    salt = load_or_make_salt(salt_file, root)
    data = record_bytes(FreezeInputs(sha256_hex(manifest), bareme_hash,
                                     commitment(salt, (root / KEY_FILE).read_bytes()),
                                     json.loads(manifest)["corpus"]))
    (root / RECORD).parent.mkdir(exist_ok=True)
    (root / RECORD).write_bytes(data)
    return data


def guard_manifest(root: Path, new_manifest: bytes) -> None:
    """Refuse a build whose manifest differs from the frozen one, naming the resources that change."""
    record = read_record(root)
    if record is None or sha256_hex(new_manifest) == record["manifest_hash"]:
        return
    changed = _changed_paths(root / "manifest" / MANIFEST_FILE, new_manifest)
    raise FrozenMismatch(f"the season is frozen ({RECORD}, manifest hash {record['manifest_hash']}); this "
                         f"build would give {sha256_hex(new_manifest)} and change: "
                         + (", ".join(changed) or "the manifest itself"))


def guard_key(root: Path, new_key: bytes) -> None:
    """Refuse to rewrite ``season/cle.json`` once frozen (its commitment is anchored)."""
    path = root / KEY_FILE
    if read_record(root) is not None and path.is_file() and path.read_bytes() != new_key:
        raise FrozenMismatch(f"the season is frozen ({RECORD}): {KEY_FILE} would change, and its commitment "
                             "is anchored")


def _changed_paths(old_file: Path, new_manifest: bytes, limit: int = 20) -> list[str]:
    def entries(data: bytes) -> dict[str, str]:
        return {e["path"]: e["sha256"] for e in json.loads(data)["resources"]}

    old = entries(old_file.read_bytes()) if old_file.is_file() else {}
    new = entries(new_manifest)
    changed = sorted(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))
    return changed[:limit] + ([f"... ({len(changed) - limit} more)"] if len(changed) > limit else [])


def check_freeze(root: Path, salt_file: Path | None) -> list[str]:
    """What the scorer checks before scoring (spec §8.5): the record against the repository."""
    record = read_record(root)
    if record is None:
        return [f"{RECORD} not found: the season is not frozen"]
    problems = []
    manifest_hash = sha256_hex((root / "manifest" / MANIFEST_FILE).read_bytes())
    if manifest_hash != record["manifest_hash"]:
        problems.append(f"manifest hash {manifest_hash} differs from the frozen {record['manifest_hash']}")
    if record["bareme"]["sha256"] != PUBLISHED_BAREME_SHA256:
        problems.append("the record's barème hash is not the published one")
    if salt_file is not None:
        salt = bytes.fromhex(salt_file.read_text("ascii").strip())
        if commitment(salt, (root / KEY_FILE).read_bytes()) != record["cle"]["engagement"]:
            problems.append(f"sha256(salt ‖ {KEY_FILE}) differs from the frozen commitment")
    return problems
