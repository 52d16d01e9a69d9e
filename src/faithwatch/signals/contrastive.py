"""Context influence: KL(p(.|x,c,prefix) || p(.|x,prefix)) per token (paper 000 §3.2, A.1).

The second distribution comes from a genuinely context-free twin prompt run alongside decoding.
``mean_contrastive_kl`` is the mean KL in nats; ``large_kl_pos`` counts tokens with KL > 3.0.
"""

from __future__ import annotations

from faithwatch.models.records import Needs
from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal


class ContrastiveSignal(Signal):
    """Context-vs-no-context KL of the sentence's tokens (needs the twin pass)."""

    name = "contrastive"

    def __init__(self, large_kl_threshold: float = 3.0) -> None:
        self.large_kl_threshold = large_kl_threshold

    @property
    def needs(self) -> Needs:
        """The context-free twin pass."""
        return Needs(twin=True)

    @property
    def feature_names(self) -> list[str]:
        """``mean_contrastive_kl`` and ``large_kl_pos``."""
        return ["mean_contrastive_kl", "large_kl_pos"]

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        """Mean KL (nats) over the sentence's tokens and the number of tokens above the large-KL threshold."""
        kl = trace.kl
        return {
            "mean_contrastive_kl": float(kl.mean()),
            "large_kl_pos": float((kl > self.large_kl_threshold).sum()),
        }
