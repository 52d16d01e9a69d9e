"""Semantic alignment: ``align_score`` of the sentence against the context, from any alignment scorer."""

from __future__ import annotations

from collections.abc import Sequence

from faithwatch.alignment.base import AlignmentScorer, checked_scores, score_pairs_asked
from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal
from faithwatch.text import strip_markup


class AlignmentSignal(Signal):
    """Emits ``align_score`` in [0, 1] (``None`` when no scorer is configured)."""

    name = "alignment"

    def __init__(self, scorer: AlignmentScorer | None) -> None:
        self.scorer = scorer

    @property
    def feature_names(self) -> list[str]:
        """``align_score``."""
        return ["align_score"]

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        """``align_score`` of one sentence (:meth:`compute_many`)."""
        return self.compute_many([trace])[0]

    def compute_many(self, traces: Sequence[SentenceTrace]) -> list[dict[str, FeatureValue]]:
        """``align_score`` of each sentence (markup stripped) against its context, all in one run of the scorer; None
        without a scorer."""
        if self.scorer is None or not traces:
            return [{"align_score": None} for _ in traces]
        # sentences of different records (contexts) together: a scorer with a model batches them in one run
        pairs = [(strip_markup(trace.sentence.text), trace.context) for trace in traces]  # without markup
        scores = score_pairs_asked(self.scorer, pairs, [trace.question for trace in traces])
        return [{"align_score": x} for x in checked_scores(self.scorer.name, scores, len(pairs))]
