"""Semantic alignment: ``align_score`` of the sentence against the context, from any alignment scorer."""

from __future__ import annotations

from collections.abc import Sequence

from faithwatch.alignment.base import AlignmentScorer, score_pairs_asked
from faithwatch.errors import FaithwatchError
from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal

#: float rounding a score may carry past [0, 1] (clipped); anything further is a scorer's error
SLACK = 1e-6


class AlignmentSignal(Signal):
    """Emits ``align_score`` in [0, 1] (``None`` when no scorer is configured)."""

    name = "alignment"

    def __init__(self, scorer: AlignmentScorer | None) -> None:
        self.scorer = scorer

    @property
    def feature_names(self) -> list[str]:
        return ["align_score"]

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        return self.compute_many([trace])[0]

    def compute_many(self, traces: Sequence[SentenceTrace]) -> list[dict[str, FeatureValue]]:
        if self.scorer is None or not traces:
            return [{"align_score": None} for _ in traces]
        # sentences of different records (contexts) together: a scorer with a model batches them in one run
        pairs = [(trace.sentence.text, trace.context) for trace in traces]
        scores = [float(x) for x in score_pairs_asked(self.scorer, pairs, [trace.question for trace in traces])]
        if len(scores) != len(pairs):
            raise FaithwatchError(f"the alignment scorer {self.scorer.name!r} gave {len(scores)} scores for "
                                  f"{len(pairs)} sentences")
        bad = [x for x in scores if not -SLACK <= x <= 1.0 + SLACK]  # NaN fails too
        if bad:
            raise FaithwatchError(f"the alignment scorer {self.scorer.name!r} gave {bad[0]}, outside [0, 1]")
        return [{"align_score": min(1.0, max(0.0, x))} for x in scores]
