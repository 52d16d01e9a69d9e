"""The signal interface: a unit declares what it needs recorded and maps a sentence trace to features."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from faithwatch.models.records import Needs, TokenRecords
from faithwatch.sentences import Sentence
from faithwatch.text import strip_markup

#: a feature value: a scalar, ``None`` for "absent" (e.g. LID with no reference bank), or a vector
FeatureValue = float | None | np.ndarray


@dataclass(frozen=True)
class UpstreamToken:
    """A token as another model's API reported it (OpenAI ``logprobs``): its text, the character span it covers
    in the response, its log-probability and the top alternatives' log-probabilities (may be empty)."""

    text: str
    start: int
    end: int
    logprob: float
    top_logprobs: tuple[float, ...] = ()


@dataclass
class SentenceTrace:
    """Everything recorded for one sentence of a response, plus the inputs it was generated from."""

    sentence: Sentence
    records: TokenRecords
    question: str
    context: str
    #: the upstream model's tokens of the whole response, when a served model reported log-probabilities
    upstream: Sequence[UpstreamToken] = ()

    @property
    def upstream_tokens(self) -> list[UpstreamToken]:
        """The upstream tokens that overlap this sentence's characters."""
        s = self.sentence
        return [t for t in self.upstream if t.end > s.start and t.start < s.end]

    def _pick(self, values: list) -> np.ndarray:
        return np.asarray(values[self.sentence.token_start : self.sentence.token_end])

    @property
    def logprob(self) -> np.ndarray:
        """Log-probabilities of the sentence's tokens."""
        return self._pick(self.records.logprob)

    @property
    def entropy(self) -> np.ndarray:
        """Entropies of the next-token distribution at the sentence's tokens."""
        return self._pick(self.records.entropy)

    @property
    def kl(self) -> np.ndarray:
        """KL divergences between the with- and without-context distributions at the sentence's tokens."""
        return self._pick(self.records.kl)

    @property
    def twin_logprob(self) -> np.ndarray:
        """Log-probabilities of the sentence's tokens without the context."""
        return self._pick(self.records.twin_logprob)

    @property
    def lookback(self) -> np.ndarray:
        """Lookback ratios at the sentence's tokens."""
        return self._pick(self.records.lookback)

    @property
    def last_hidden(self) -> np.ndarray:
        """Hidden states [n_layers_recorded, d] at the step that produced the sentence's last token."""
        return self.records.hidden[self.sentence.token_end - 1]

    @property
    def mean_hidden(self) -> np.ndarray:
        """Hidden states [n_layers_recorded, d] averaged over the sentence's tokens."""
        steps = self.records.hidden[self.sentence.token_start : self.sentence.token_end]
        return np.mean(np.stack(steps).astype(np.float64), axis=0)


class Signal(ABC):
    """A family of per-sentence features (paper 000 Table 4 names)."""

    name: str = "signal"
    #: features depend on the sentence text and context alone (tables add them after extraction: :meth:`from_text`)
    text_only: bool = False
    #: a costly text signal: labelled tables cache its features under its ``version`` (eval.text_features)
    cached: bool = False

    @property
    def needs(self) -> Needs:
        """What the engine must record for this signal."""
        return Needs()

    @property
    @abstractmethod
    def feature_names(self) -> list[str]:
        """Names of the features this signal emits, in order."""

    @abstractmethod
    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        """Features of one sentence."""

    def compute_many(self, traces: Sequence[SentenceTrace]) -> list[dict[str, FeatureValue]]:
        """Features of several sentences (override to batch)."""
        return [self.compute(t) for t in traces]

    def from_text(self, texts: list[str], context: str, question: str = "") -> list[dict[str, float]]:
        """Features of several sentences of one context (and the question they answer) without a trace
        (``text_only`` signals only)."""
        raise NotImplementedError(f"signal {self.name!r} needs a model trace")

    def from_pairs(self, texts: Sequence[str], contexts: Sequence[str],
                   questions: Sequence[str] | None = None) -> list[dict[str, float]]:
        """Features of (sentence, its context[, its question]) without a trace; override to batch across contexts."""
        qs = [""] * len(texts) if questions is None else list(questions)
        out: list[dict[str, float]] = [{} for _ in texts]
        groups: dict[tuple[str, str], list[int]] = {}
        for i, key in enumerate(zip(contexts, qs, strict=True)):
            groups.setdefault(key, []).append(i)
        for (context, question), idx in groups.items():
            for i, row in zip(idx, self.from_text([texts[i] for i in idx], context, question), strict=True):
                out[i] = row
        return out


class TextEvidenceSignal(Signal):
    """A text-only signal whose features are ``scorer.evidence(sentence, context)`` of a per-signal scorer."""

    text_only = True
    #: the features ``evidence`` returns, in order
    features: tuple[str, ...] = ()

    def __init__(self) -> None:
        self.scorer = self.make_scorer()

    def make_scorer(self):  # noqa: ANN201 - any object with evidence(sentence, context) -> dict
        """The scorer whose ``evidence`` gives the features."""
        raise NotImplementedError

    @property
    def feature_names(self) -> list[str]:
        """The scorer's evidence features (:attr:`features`)."""
        return list(self.features)

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        """The scorer's evidence of the sentence (markup stripped) against its context and question."""
        return dict(self._evidence(trace.sentence.text, trace.context, trace.question))

    def from_text(self, texts: list[str], context: str, question: str = "") -> list[dict[str, float]]:
        """Features of several sentences of one context (no trace needed)."""
        return [self._evidence(t, context, question) for t in texts]

    def _evidence(self, text: str, context: str, question: str) -> dict[str, float]:
        text = strip_markup(text)  # list markers, citations, emphasis, link targets: no words of the claim
        # the question goes only to a scorer that reads it (reads_question)
        if getattr(self.scorer, "reads_question", False):
            return self.scorer.evidence(text, context, question)
        return self.scorer.evidence(text, context)
