"""Hidden states of a sentence at chosen layers (opt-in: for building LID banks and training probes).

``hidden_layer_<l>`` is the state of the sentence's last token at the LID layers; ``hidden_mean_layer_<l>`` the
mean over the sentence's tokens at the probe layers (what the hidden-state probe reads).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from faithwatch.models.records import Needs
from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal


class HiddenStateSignal(Signal):
    """Emits ``hidden_layer_<l>`` and ``hidden_mean_layer_<m>`` vectors (not part of the default signal set)."""

    name = "hidden"

    def __init__(self, layers: Sequence[int], mean_layers: Sequence[int] = ()) -> None:
        self.layers = tuple(layers)
        self.mean_layers = tuple(mean_layers)

    @property
    def needs(self) -> Needs:
        """The hidden states of the layers it reads."""
        return Needs(hidden_layers=tuple(sorted(set(self.layers) | set(self.mean_layers))))

    @property
    def feature_names(self) -> list[str]:
        """One vector per layer of ``layers`` (last token) and of ``mean_layers`` (sentence mean)."""
        return [f"hidden_layer_{layer}" for layer in self.layers] + [
            f"hidden_mean_layer_{layer}" for layer in self.mean_layers]

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        """The last token's hidden state at each of ``layers`` and the sentence's mean at each of ``mean_layers``."""
        recorded = trace.records.hidden_layers
        out: dict[str, FeatureValue] = {}
        last = trace.last_hidden
        for layer in self.layers:
            out[f"hidden_layer_{layer}"] = last[recorded.index(layer)].copy()
        if self.mean_layers:
            mean = trace.mean_hidden
            for layer in self.mean_layers:
                out[f"hidden_mean_layer_{layer}"] = mean[recorded.index(layer)].astype(np.float32)
        return out
