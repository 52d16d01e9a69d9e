"""Weighted mean of several alignment scorers; every part reads a number written in words in digits
(:func:`~faithwatch.text.digits_for_words`: "three hundred" as "300", in sentence and context alike)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from faithwatch.alignment.base import AlignmentScorer, clamp01, score_pairs_asked, score_pairs_of, validate_inputs
from faithwatch.text import SPELLED_RULE, digits_for_words


class CombinedScorer(AlignmentScorer):
    """Weighted mean of several scorers' scores; named by joining their names with ``+``.

    Args:
        scorers: the scorers to combine (at least one).
        weights: one non-negative finite weight per scorer (not all zero); default: equal weights.
            They are normalised to sum to 1.
    """

    def __init__(self, scorers: Sequence[AlignmentScorer], weights: Sequence[float] | None = None) -> None:
        self.scorers = list(scorers)
        if not self.scorers:
            raise ValueError("CombinedScorer needs at least one scorer")
        raw = [1.0] * len(self.scorers) if weights is None else [float(w) for w in weights]
        if len(raw) != len(self.scorers):
            raise ValueError(f"got {len(raw)} weights for {len(self.scorers)} scorers")
        if any(not math.isfinite(w) or w < 0 for w in raw) or sum(raw) <= 0:
            raise ValueError(f"weights must be finite, non-negative and not all zero, got {raw}")
        total = sum(raw)
        self.weights = [w / total for w in raw]
        self.name = "+".join(s.name for s in self.scorers)
        versions = [str(getattr(s, "version", "") or "") for s in self.scorers]
        #: the parts' versions and how they read numbers in words (feature caches are keyed by it); None when no part
        #: declares one
        self.version = "+".join([*versions, SPELLED_RULE]) if any(versions) else None
        self.precision = "bf16" if any(getattr(s, "precision", None) == "bf16" for s in self.scorers) else None
        self.reads_question = any(getattr(s, "reads_question", False) for s in self.scorers)

    def score_many(self, sentences: Sequence[str], context: str) -> list[float]:
        """Weighted mean of the component scores for each sentence, in [0, 1]."""
        sents = validate_inputs(sentences, context)
        return self.score_pairs([(s, context) for s in sents]) if sents else []

    def unread_tokens(self, sentence: str) -> tuple[int, int]:
        """The part that leaves most of the sentence unread (as the parts read it: numbers in words as digits)."""
        parts = [getattr(s, "unread_tokens", None) for s in self.scorers]
        return max((f(digits_for_words(sentence)) for f in parts if f is not None), default=(0, 0))

    def score_pairs(self, pairs: Sequence[tuple[str, str]], questions: Sequence[str] | None = None) -> list[float]:
        """Weighted mean of the component scores of each (sentence, context) pair; each part batches all pairs.
        With ``questions`` (one per pair), the parts that read questions get them."""
        for sentence, context in pairs:
            validate_inputs([sentence], context)
        pairs = [(digits_for_words(sentence), digits_for_words(context)) for sentence, context in pairs]
        if questions is not None:
            questions = [digits_for_words(q) if q else q for q in questions]
        totals = [0.0] * len(pairs)
        for scorer, weight in zip(self.scorers, self.weights, strict=True):
            scores = (score_pairs_of(scorer)(pairs) if questions is None
                      else score_pairs_asked(scorer, pairs, questions))
            if len(scores) != len(pairs):
                raise ValueError(f"scorer {scorer.name!r} returned {len(scores)} scores for {len(pairs)} pairs")
            for i, s in enumerate(scores):
                totals[i] += weight * s
        return [clamp01(t) for t in totals]
