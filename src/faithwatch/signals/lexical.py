"""Lexical evidence: the separate surface checks of the lexical scorer, as features.

``align_score`` folds them into one number with fixed weights; here a trained aggregator weighs them itself:
content-word and bigram support fractions, and counts of the sentence's numbers, entities and content words
that the context lacks. Text only (no model pass), so teacher-forced tables can add them after extraction
(:meth:`LexicalSignal.from_text`).
"""

from __future__ import annotations

from faithwatch.alignment.lexical import EVIDENCE_FEATURES, LexicalScorer
from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal


class LexicalSignal(Signal):
    """Emits :data:`~faithwatch.alignment.lexical.EVIDENCE_FEATURES` for each sentence."""

    name = "lexical"
    text_only = True

    def __init__(self) -> None:
        self.scorer = LexicalScorer()

    @property
    def feature_names(self) -> list[str]:
        return list(EVIDENCE_FEATURES)

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        return dict(self.scorer.evidence(trace.sentence.text, trace.context))

    def from_text(self, texts: list[str], context: str) -> list[dict[str, float]]:
        """Features of several sentences of one context (no trace needed)."""
        return [self.scorer.evidence(t, context) for t in texts]
