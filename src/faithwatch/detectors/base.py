"""The detector interface: per-sentence features -> faithfulness score in [0, 1] (1 = faithful)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # it imports torch
    from faithwatch.signals.base import FeatureValue


class Detector(ABC):
    """Maps a sentence's features to a faithfulness score in [0, 1]."""

    #: shown in every report next to the score
    name: str = "detector"
    #: scores below this are flagged unfaithful
    threshold: float = 0.5

    @abstractmethod
    def score(self, features: Mapping[str, FeatureValue]) -> float:
        """Faithfulness score of one sentence."""
