"""The sentence-vs-context alignment interface ("semantic alignment" signal, ``align_score``)."""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from faithwatch.text.visible import is_blank


class AlignmentScorer(ABC):
    """Scores how well each sentence is supported by a context, in [0, 1].

    Implementations must return finite values in [0, 1] and raise ``ValueError`` on
    empty input rather than returning a number that looks like a result.
    """

    #: registry name, e.g. ``"lexical"``; shown in outputs so users know which scorer ran
    name: str = "base"
    #: ``"bf16"`` when a model part computes in bf16 (its scores differ slightly from fp32's: feature caches are
    #: keyed by it), else ``None``
    precision: str | None = None
    #: whether the scorer reads the question as well (its ``score_pairs`` takes ``questions``); most read only the
    #: context
    reads_question: bool = False

    @abstractmethod
    def score_many(self, sentences: Sequence[str], context: str) -> list[float]:
        """Score several sentences against one context (one value per sentence)."""

    def score(self, sentence: str, context: str) -> float:
        """Score one sentence against a context."""
        return self.score_many([sentence], context)[0]

    def unread_tokens(self, sentence: str) -> tuple[int, int]:
        """(tokens at the end of ``sentence`` that the scorer does not read, the sentence's tokens): a model with a
        bounded input cuts an over-long sentence and judges the rest; (0, 0) for a scorer that reads it all."""
        return 0, 0

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Score (sentence, context) pairs with different contexts (e.g. the sentences of a batch of records), one
        value per pair in order. Scorers with a model override this to run all pairs in one batched call."""
        out: list[float] = [0.0] * len(pairs)
        by_context: dict[str, list[int]] = {}
        for i, (_, context) in enumerate(pairs):
            by_context.setdefault(context, []).append(i)
        for context, idx in by_context.items():
            for i, score in zip(idx, self.score_many([pairs[i][0] for i in idx], context), strict=True):
                out[i] = score
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def score_pairs_of(scorer: Any) -> Callable[[Sequence[tuple[str, str]]], list[float]]:
    """``scorer.score_pairs``, or for a duck-typed scorer with only ``score_many`` the base class's grouping by
    context (:meth:`AlignmentScorer.score_pairs`)."""
    return getattr(scorer, "score_pairs", None) or partial(AlignmentScorer.score_pairs, scorer)


def score_pairs_asked(scorer: Any, pairs: Sequence[tuple[str, str]], questions: Sequence[str]) -> list[float]:
    """Scores of (sentence, context) pairs, each with the question its answer was asked for: a scorer that reads
    questions (``reads_question``) gets them, any other scores the pairs alone (:func:`score_pairs_of`)."""
    if len(questions) != len(pairs):
        raise ValueError(f"got {len(questions)} questions for {len(pairs)} pairs")
    if getattr(scorer, "reads_question", False):
        return scorer.score_pairs(pairs, questions=questions)
    return score_pairs_of(scorer)(pairs)


def validate_inputs(sentences: Sequence[str], context: str) -> list[str]:
    """Check the arguments of :meth:`AlignmentScorer.score_many` and return the sentences as a list.

    Raises ``ValueError`` for an empty/blank context or a blank sentence, and ``TypeError``
    for non-string input (a bare ``str`` passed as ``sentences`` is rejected too, since it
    would otherwise be scored character by character).
    """
    if isinstance(sentences, str):
        raise TypeError("sentences must be a sequence of strings, not a single str; use score() for one")
    if not isinstance(context, str):
        raise TypeError(f"context must be a str, got {type(context).__name__}")
    if is_blank(context):
        raise ValueError("context is empty (no visible character): there is nothing to align the sentences against")
    out = list(sentences)
    for i, s in enumerate(out):
        if not isinstance(s, str):
            raise TypeError(f"sentences[{i}] must be a str, got {type(s).__name__}")
        if is_blank(s):
            raise ValueError(f"sentences[{i}] is empty or blank; cannot score it")
    return out


#: float rounding a score may carry past [0, 1] (clipped); anything further is a scorer's error
SLACK = 1e-6


def checked_scores(name: str, scores: Sequence[float], n: int, what: str = "sentences") -> list[float]:
    """The ``n`` scores a scorer called ``name`` gave, each in [0, 1] (float rounding clipped). A wrong count, a
    NaN or a value outside [0, 1] is a :class:`~faithwatch.errors.FaithwatchError` naming the scorer (a plug-in's
    bug must not pass as a verdict)."""
    from faithwatch.errors import FaithwatchError

    out = [float(x) for x in scores]
    if len(out) != n:
        raise FaithwatchError(f"the alignment scorer {name!r} gave {len(out)} scores for {n} {what}")
    bad = [x for x in out if not -SLACK <= x <= 1.0 + SLACK]  # NaN fails too
    if bad:
        raise FaithwatchError(f"the alignment scorer {name!r} gave {bad[0]}, outside [0, 1]")
    return [min(1.0, max(0.0, x)) for x in out]


def clamp01(value: float) -> float:
    """Clip a score to [0, 1], raising ``ValueError`` if it is NaN (never let a NaN through)."""
    if math.isnan(value):
        raise ValueError("alignment score is NaN")
    return min(1.0, max(0.0, float(value)))
