"""Signed context influence: log p(y_t | x, c, prefix) - log p(y_t | x, prefix) per chosen token.

The pointwise quantity CAD amplifies. Unlike the KL of :mod:`contrastive` it has a direction: it is negative
where the context argues *against* the token the response chose (the model would rather say it without the
context), which is what an unsupported token looks like. Per sentence: ``min_pci``, ``mean_pci`` (nats) and
``neg_pci_pos``, the number of tokens below ``-threshold``.
"""

from __future__ import annotations

import numpy as np

from faithwatch.models.records import Needs
from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal

#: tokens whose context influence is below -NEG_PCI_THRESHOLD nats count in ``neg_pci_pos``
NEG_PCI_THRESHOLD = 1.0


class InfluenceSignal(Signal):
    """Signed pointwise context influence of the sentence's tokens (needs the twin pass)."""

    name = "influence"

    def __init__(self, threshold: float = NEG_PCI_THRESHOLD) -> None:
        self.threshold = threshold

    @property
    def needs(self) -> Needs:
        """The context-free twin pass."""
        return Needs(twin=True)

    @property
    def feature_names(self) -> list[str]:
        """``min_pci``, ``mean_pci`` and ``neg_pci_pos``."""
        return ["min_pci", "mean_pci", "neg_pci_pos"]

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        """Smallest and mean context influence (nats) over the sentence's tokens, and the number below -threshold."""
        pci = trace.logprob - trace.twin_logprob
        return {
            "min_pci": float(pci.min()),
            "mean_pci": float(pci.mean()),
            "neg_pci_pos": float(np.sum(pci < -self.threshold)),
        }
