"""An untrained, documented combination of signals, used until a trained detector is configured.

score = weighted mean over the available features of
  0.5 * align_score + 0.2 * mean_prob + 0.1 * min_prob + 0.2 * (1 - mean_entropy)
(absent features are left out and the weights renormalised). It is labelled ``heuristic-v1`` in every
output: it is a sensible prior, not a trained SynCheck aggregator.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from faithwatch.detectors.base import Detector
from faithwatch.errors import InputError

if TYPE_CHECKING:  # it imports torch
    from faithwatch.signals.base import FeatureValue

WEIGHTS: dict[str, tuple[float, bool]] = {  # feature -> (weight, higher means more faithful)
    "align_score": (0.5, True),
    "mean_prob": (0.2, True),
    "min_prob": (0.1, True),
    "mean_entropy": (0.2, False),
}


class HeuristicDetector(Detector):
    """The untrained weighted mean of the module doc (``heuristic-v1``)."""

    name = "heuristic-v1"
    threshold = 0.5

    def score(self, features: Mapping[str, FeatureValue]) -> float:
        """Weighted mean of the available features, in [0, 1] (an error when none is available)."""
        total = weight_sum = 0.0
        for feature, (weight, higher_is_better) in WEIGHTS.items():
            value = features.get(feature)
            if value is None:
                continue
            value = float(value)
            total += weight * (value if higher_is_better else 1.0 - value)
            weight_sum += weight
        if weight_sum == 0:
            raise InputError(f"the heuristic needs at least one of {sorted(WEIGHTS)}; none was computed")
        return min(1.0, max(0.0, total / weight_sum))
