"""What every published document of one track's close shares: the track, the season, published or draft,
the freeze, the close, and the head fields each JSON document starts with (§7.3, §7.4 labels included)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from generator.publish.published import Head
from generator.publish.wording import AI_ACT, BROUILLON, BROUILLON_TEXTE, PUBLIE
from generator.score.report_json import GelJson


@dataclass(frozen=True)
class Publication:
    piste: str
    titre: str  # the track's title
    saison: int
    brouillon: bool
    cloture: str | None  # the close (--season-close), ISO 8601 UTC
    gel: GelJson  # corpus score's freeze status
    trust_layer_url: str  # where a proof's public view is served: <url>/v1/proof/<proof_id>
    conditions_1_2: str = "non_verifiees_hors_ligne"  # corpus score's: were proofs verified (--proofs)?
    ouverture: str | None = None  # the opening (pinned, else the freeze anchor's token time), ISO 8601 UTC

    @property
    def statut(self) -> str:
        return BROUILLON if self.brouillon else PUBLIE

    def head(self, form: str) -> Head:
        """The first fields of a document: format, track, season, status, and the labels of §7.3-7.4."""
        if self.brouillon:
            return {"format": form, "piste": self.piste, "saison": self.saison, "statut": self.statut,
                    "brouillon": BROUILLON_TEXTE, "etiquetage_ai_act": AI_ACT}
        return {"format": form, "piste": self.piste, "saison": self.saison, "statut": self.statut,
                "etiquetage_ai_act": AI_ACT}

    def proof_link(self, proof_id: str) -> str:
        """The proof's public view (spec §4.1: what anyone reads to replay the scoring)."""
        return f"{self.trust_layer_url.rstrip('/')}/v1/proof/{quote(proof_id, safe='')}"
