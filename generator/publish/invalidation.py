"""An invalidated season published (spec §8): "Un changement en cours de saison n'est pas une correction : il
invalide la saison. La seule réponse est de le publier, de clore la saison, et de repartir."

Once ``corpus season invalidate`` has recorded it (``<freeze folder>/invalidation.json``), ``corpus index``
publishes the invalidation and no ranking: ``index.json`` (``corpus-index/1``, ``"statut": "invalidee"``) says
that the season was invalidated, when and why, with the freeze in force then, and holds no table and no
report; ``index.html`` says the same in French. No score is computed: nothing is ranked.
"""

from __future__ import annotations

from pathlib import Path

from generator.base.jsonvalue import indented_json
from generator.contract.invalidation import Invalidation
from generator.publish.html import render_invalidated
from generator.publish.published import InvalidatedIndexJson
from generator.publish.wording import AI_ACT, FORMAT_INDEX, INVALIDEE, INVALIDEE_TEXTE
from generator.score.inputs import load_statements
from generator.tracks.model import Track


def invalidated_index(root: Path, track: Track, invalidation: Invalidation) -> dict[str, bytes]:
    """The files of ``<out>/<piste>/`` for an invalidated season: ``index.json`` and ``index.html`` only."""
    saison = load_statements(root, track).saison
    document: InvalidatedIndexJson = {
        "format": FORMAT_INDEX, "piste": track.piste, "saison": saison, "statut": INVALIDEE,
        "etiquetage_ai_act": AI_ACT, "titre": track.title,
        "invalidation": {"invalidee_le": invalidation.le, "motif": invalidation.motif,
                         "gel_en_vigueur": invalidation.gel_en_vigueur, "gels": invalidation.gels},
        "texte": INVALIDEE_TEXTE}
    return {"index.json": indented_json(document),
            "index.html": render_invalidated(document).encode("utf-8")}
