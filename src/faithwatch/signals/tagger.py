"""Word-level support from the LSS tagger (paper 004): each word of a sentence read against the whole context.

Text only (no model pass). The shipped tagger (:func:`faithwatch.nli.tagger.load_tagger`) loads on first use
and is shared by every signal in the process. Features, from the words' support probabilities:

* ``tag_min_content``: the weakest content word (a word with a number or a non-stop word; all words if none);
  one wrong date or name in an otherwise supported sentence pulls it down;
* ``tag_mean``: the mean word support;
* ``tag_lss``: the share of words at or above the tagger's threshold (the sentence's LSS score).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from faithwatch.claims.lss import content_words, split_words
from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal
from faithwatch.text import MARKUP_RULE, SPELLED_RULE, digits_for_words, strip_markup, strip_preamble

#: the features, in order
TAGGER_FEATURES = ("tag_min_content", "tag_mean", "tag_lss")
#: part of the signal's version: the sentence is tagged without its answer preamble (:func:`strip_preamble`)
PREAMBLE_RULE = "preamble1"


@lru_cache(maxsize=4)
def shared_tagger(device: str = "cpu") -> Any:
    """The shipped LSS tagger on ``device``, loaded once per process."""
    from faithwatch.nli.tagger import load_tagger

    return load_tagger(device=device)


def tagger_features(probs: np.ndarray, words: Sequence[str], threshold: float) -> dict[str, float]:
    """:data:`TAGGER_FEATURES` of one sentence from its words' support probabilities."""
    content = np.array(content_words(words), dtype=bool)
    weakest = probs[content].min() if content.any() else probs.min()
    return {"tag_min_content": float(weakest), "tag_mean": float(probs.mean()),
            "tag_lss": float((probs >= threshold).mean())}


class TaggerSignal(Signal):
    """Emits :data:`TAGGER_FEATURES`; all sentences of a call go through the tagger in one batched run."""

    name = "tagger"
    text_only = True
    cached = True

    def __init__(self, tagger: Any = None, device: str = "cpu") -> None:
        self._tagger = tagger
        self.device = device

    @property
    def tagger(self) -> Any:
        """The tagger (the shipped one, loaded on first use, unless one was given)."""
        if self._tagger is None:
            self._tagger = shared_tagger(self.device)
        return self._tagger

    @property
    def version(self) -> str:
        """Identifies the features' values (the tagger's name and adapter checksum, that answer preambles are left
        out, the markup rule and how numbers in words are read): part of cache keys."""
        return f"{self.tagger.version}+{PREAMBLE_RULE}+{MARKUP_RULE}+{SPELLED_RULE}"

    @property
    def precision(self) -> str | None:
        """``"bf16"`` when the tagger computes in bf16 (part of cache keys), else ``None``."""
        return "bf16" if getattr(self.tagger, "precision", None) == "bf16" else None

    @property
    def feature_names(self) -> list[str]:
        """The tagger's features (:data:`TAGGER_FEATURES`)."""
        return list(TAGGER_FEATURES)

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        """The tagger's features of one sentence (:meth:`compute_many`)."""
        return self.compute_many([trace])[0]

    def compute_many(self, traces: Sequence[SentenceTrace]) -> list[dict[str, FeatureValue]]:
        """The tagger's features of each sentence against its context, all in one run of the tagger."""
        return self._features([t.sentence.text for t in traces], [t.context for t in traces])

    def from_text(self, texts: list[str], context: str, question: str = "") -> list[dict[str, float]]:
        """Features of several sentences of one context (no trace needed; the tagger does not read the question)."""
        return self._features(texts, [context] * len(texts))

    def from_pairs(self, texts: Sequence[str], contexts: Sequence[str],
                   questions: Sequence[str] | None = None) -> list[dict[str, float]]:
        """Features of (sentence, context) pairs, all in one batched tagger run (questions are not read)."""
        return self._features(texts, contexts)

    def _features(self, texts: Sequence[str], contexts: Sequence[str]) -> list[dict[str, float]]:
        if not texts:
            return []
        # the claim without its answer preamble, numbers in words in digits; a sentence with no word is read as "."
        words = [split_words(strip_preamble(digits_for_words(strip_markup(t)))) or ["."] for t in texts]
        contexts = [digits_for_words(c) for c in contexts]
        probs = self.tagger.word_probabilities(words, contexts, split_long=True)  # long sentences in parts
        threshold = float(self.tagger.threshold)
        return [tagger_features(p, w, threshold) for p, w in zip(probs, words, strict=True)]
