"""Lexical evidence: the separate surface checks of the lexical scorer, as features.

``align_score`` folds them into one number with fixed weights; here a trained aggregator weighs them itself:
content-word and bigram support fractions, and counts of the sentence's numbers, entities and content words
that the context lacks. Text only (no model pass), so teacher-forced tables can add them after extraction
(:meth:`~faithwatch.signals.base.TextEvidenceSignal.from_text`).
"""

from __future__ import annotations

from faithwatch.alignment.lexical import EVIDENCE_FEATURES, LexicalScorer
from faithwatch.signals.base import TextEvidenceSignal


class LexicalSignal(TextEvidenceSignal):
    """Emits :data:`~faithwatch.alignment.lexical.EVIDENCE_FEATURES` for each sentence."""

    name = "lexical"
    features = EVIDENCE_FEATURES

    def make_scorer(self) -> LexicalScorer:
        """The lexical support scorer."""
        return LexicalScorer()
