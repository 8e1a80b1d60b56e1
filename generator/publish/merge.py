"""Who is one participant (spec §9.1): DIDs linked to one key, at registration or in the key's binding
history (``verified_did_history``), form a single participant, and only the first registration is ranked.

Neither the IP address nor the email enters it, and two keys sharing no DID stay two participants (§10):
the link is the key alone. A key's DIDs are those registered with it and those of its history; any two
registrations whose DIDs meet in one key's DIDs are one participant, and the link is followed through
(a DID of key A's history registered with key B links A's and B's registrations). The first registration
is the earliest ``inscrit_le``, then the first in the file.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from generator.publish.registrations import Registration


@dataclass(frozen=True)
class Merged:
    """A registration that is not ranked: its DID is linked to the ranked one's by ``keys``."""

    registration: Registration
    keys: tuple[str, ...]

    def motif(self, ranked: Registration) -> str:
        keys = ", ".join(f"{k[:16]}…" for k in self.keys)
        return (f"DID lié par la clé {keys} (inscription ou historique de liaison verified_did_history) au DID "
                f"{ranked.did}, inscrit le {ranked.inscrit_le_texte} sous le nom {ranked.agent} : un seul "
                "participant, seule la première inscription est classée (spec §9.1)")


@dataclass(frozen=True)
class Participant:
    ranked: Registration
    merged: tuple[Merged, ...]


def _key_dids(registrations: list[Registration]) -> dict[str, set[str]]:
    """Each key's DIDs: those registered with it and those of its binding history."""
    dids: dict[str, set[str]] = defaultdict(set)
    for r in registrations:
        dids[r.key] |= {r.did, *r.history}
    return dids


def participants(registrations: list[Registration]) -> list[Participant]:
    """The participants, in registration order (their ranked registration's), each with those merged into it."""
    parent = list(range(len(registrations)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    registered: dict[str, list[int]] = defaultdict(list)  # each DID's registrations (linear: a season has 10^4)
    for n, r in enumerate(registrations):
        registered[r.did].append(n)
    members = {key: sorted({n for did in dids for n in registered.get(did, ())})
               for key, dids in _key_dids(registrations).items()}
    linking: dict[int, list[str]] = defaultdict(list)  # the keys that link each registration to another
    for key, found in members.items():
        if len(found) > 1:
            for n in found:
                linking[n].append(key)
    for found in members.values():
        for n in found[1:]:
            parent[find(n)] = find(found[0])
    groups: dict[int, list[int]] = defaultdict(list)
    for n in range(len(registrations)):
        groups[find(n)].append(n)
    out = []
    for group in groups.values():
        first, *rest = sorted(group, key=lambda n: (registrations[n].inscrit_le, n))
        merged = tuple(Merged(registrations[n], tuple(sorted(linking[n]))) for n in rest)
        out.append(Participant(registrations[first], merged))
    return sorted(out, key=lambda p: (p.ranked.inscrit_le, p.ranked.position))
