"""Near-copy edit evidence: the changes a sentence made to the context sentence it restates, as features.

Text only (no model pass), so teacher-forced tables add it after extraction like ``lexical``.
"""

from __future__ import annotations

from faithwatch.alignment.edits import EDIT_FEATURES, EditScorer
from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal


class EditSignal(Signal):
    """Emits :data:`~faithwatch.alignment.edits.EDIT_FEATURES` for each sentence."""

    name = "edits"
    text_only = True

    def __init__(self) -> None:
        self.scorer = EditScorer()

    @property
    def feature_names(self) -> list[str]:
        return list(EDIT_FEATURES)

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        return dict(self.scorer.evidence(trace.sentence.text, trace.context))

    def from_text(self, texts: list[str], context: str) -> list[dict[str, float]]:
        """Features of several sentences of one context (no trace needed)."""
        return [self.scorer.evidence(t, context) for t in texts]
