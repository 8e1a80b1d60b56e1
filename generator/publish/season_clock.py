"""The instants the season service recorded, checked against the command's own clock (spec §7.4).

A submission received, or a registration made, after the instant ``corpus index`` runs cannot have been
recorded yet: the season service's clock is wrong, or the file was written by hand. Such a record is never
scored, in a draft (where, without ``--season-close``, the last one received would count) nor at the close
(where it would be listed as received after it): it is refused, one line naming the file, the field and the
instant, and nothing is written.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from pathlib import Path

from generator.publish.files import IndexInputError
from generator.publish.registrations import Registration
from generator.publish.submissions import Received
from generator.trust_layer.anchor_time import instant_text


def refuse_future(registrations_file: Path, registrations: Iterable[Registration], received: Iterable[Received],
                  now: datetime) -> None:
    """:class:`IndexInputError` for the first registration or submission recorded after ``now``."""
    clock = f"this command's clock ({instant_text(now)}): a record from the future cannot be scored; the season " \
            "service's clock or the file is wrong"
    for r in registrations:
        if r.inscrit_le > now:
            raise IndexInputError(f"{registrations_file}: {r.where}/inscrit_le: {r.inscrit_le_texte} is after "
                                  f"{clock}")
    for s in received:
        if s.recu_le > now:
            raise IndexInputError(f"{s.path}: /recu_le: {s.recu_le_texte} is after {clock}")
