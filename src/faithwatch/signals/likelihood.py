"""Likelihood: min and mean probability of the sentence's tokens (paper 000 A.1), and the same in log space.

``min_logprob`` / ``mean_logprob`` (nats) keep the resolution that raw probabilities lose near 0, where the
probability of a surprising token lives; ``mean_logprob`` is minus the log-perplexity of the sentence.
"""

from __future__ import annotations

import numpy as np

from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal


class LikelihoodSignal(Signal):
    """Token probabilities of the sentence (min and mean, as probabilities and log-probabilities)."""

    name = "likelihood"

    @property
    def feature_names(self) -> list[str]:
        """``min_prob``, ``mean_prob``, ``min_logprob`` and ``mean_logprob``."""
        return ["min_prob", "mean_prob", "min_logprob", "mean_logprob"]

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        """Smallest and mean token probability of the sentence, and the same for log-probabilities."""
        logp = trace.logprob
        probs = np.exp(logp)
        return {"min_prob": float(probs.min()), "mean_prob": float(probs.mean()),
                "min_logprob": float(logp.min()), "mean_logprob": float(logp.mean())}
