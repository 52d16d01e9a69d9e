"""Black-box likelihood and entropy from a served model's reported log-probabilities (OpenAI ``logprobs``).

For a model faithwatch does not run itself (``faithwatch proxy``): the chosen-token probabilities and the top-k
entropy of the tokens the upstream API reported for the sentence. They are named ``api_*`` so that they are never
mistaken for the white-box features of a local model: the top-k entropy renormalises the k reported alternatives
and is a lower bound of the full entropy. Absent (``None``) when the upstream sent no log-probabilities.
"""

from __future__ import annotations

import math

import numpy as np

from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal

API_FEATURES = ("api_min_prob", "api_mean_prob", "api_mean_logprob", "api_max_topk_entropy")


def topk_entropy(top_logprobs: tuple[float, ...]) -> float | None:
    """Entropy (nats) of the renormalised top-k alternatives; ``None`` without any."""
    if not top_logprobs:
        return None
    lp = np.asarray(top_logprobs, dtype=np.float64)
    p = np.exp(lp - lp.max())
    p /= p.sum()
    return float(-(p * np.log(np.clip(p, 1e-300, None))).sum())


class UpstreamSignal(Signal):
    """Emits :data:`API_FEATURES` from :attr:`SentenceTrace.upstream`; reads no local model output."""

    name = "api"

    @property
    def feature_names(self) -> list[str]:
        """The upstream log-probability features (:data:`API_FEATURES`)."""
        return list(API_FEATURES)

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        """Likelihood and top-k entropy of the sentence's tokens as the upstream reported them (None without any)."""
        tokens = trace.upstream_tokens
        if not tokens:
            return dict.fromkeys(API_FEATURES)
        logprobs = np.asarray([t.logprob for t in tokens], dtype=np.float64)
        entropies = [e for e in (topk_entropy(t.top_logprobs) for t in tokens) if e is not None]
        return {
            "api_min_prob": float(math.exp(logprobs.min())),
            "api_mean_prob": float(np.exp(logprobs).mean()),
            "api_mean_logprob": float(logprobs.mean()),
            "api_max_topk_entropy": max(entropies) if entropies else None,
        }
