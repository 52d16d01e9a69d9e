"""Uncertainty: entropy of the full next-token distribution, normalised by log |V| (paper 000 A.1)."""

from __future__ import annotations

from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal


class EntropySignal(Signal):
    """Entropy of the next-token distributions over the sentence."""

    name = "entropy"

    @property
    def feature_names(self) -> list[str]:
        """``max_entropy`` and ``mean_entropy``."""
        return ["max_entropy", "mean_entropy"]

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        """Largest and mean entropy (nats) over the sentence's tokens."""
        h = trace.entropy
        return {"max_entropy": float(h.max()), "mean_entropy": float(h.mean())}
