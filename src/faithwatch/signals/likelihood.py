"""Likelihood: min and mean probability of the sentence's tokens (paper 000 A.1)."""

from __future__ import annotations

import numpy as np

from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal


class LikelihoodSignal(Signal):
    name = "likelihood"

    @property
    def feature_names(self) -> list[str]:
        return ["min_prob", "mean_prob"]

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        probs = np.exp(trace.logprob)
        return {"min_prob": float(probs.min()), "mean_prob": float(probs.mean())}
