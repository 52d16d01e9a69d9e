"""Hidden states of a sentence's last token at chosen layers (opt-in: for building LID banks and probes)."""

from __future__ import annotations

from collections.abc import Sequence

from faithwatch.models.engine import Needs
from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal


class HiddenStateSignal(Signal):
    """Emits ``hidden_layer_<l>`` vectors (not part of the default signal set)."""

    name = "hidden"

    def __init__(self, layers: Sequence[int]) -> None:
        self.layers = tuple(layers)

    @property
    def needs(self) -> Needs:
        return Needs(hidden_layers=self.layers)

    @property
    def feature_names(self) -> list[str]:
        return [f"hidden_layer_{layer}" for layer in self.layers]

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        hidden, recorded = trace.last_hidden, trace.records.hidden_layers
        return {f"hidden_layer_{layer}": hidden[recorded.index(layer)].copy() for layer in self.layers}
