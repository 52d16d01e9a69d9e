"""Lookback ratio per layer and head (paper 003 §2.1), averaged over the sentence's tokens."""

from __future__ import annotations

from faithwatch.models.records import Needs
from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal


class LookbackSignal(Signal):
    """Emits ``lookback_ratio`` (a [layers, heads] array) and its mean ``lookback_mean``."""

    name = "lookback"

    @property
    def needs(self) -> Needs:
        """The lookback ratios of every head."""
        return Needs(lookback=True)

    @property
    def feature_names(self) -> list[str]:
        """``lookback_mean`` and ``lookback_ratio`` (a vector of every head's)."""
        return ["lookback_mean", "lookback_ratio"]

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        """Every head's lookback ratio averaged over the sentence's tokens, and their mean."""
        ratios = trace.lookback.mean(axis=0)  # [layers, heads]
        return {"lookback_mean": float(ratios.mean()), "lookback_ratio": ratios}
