"""Results of guided decoding: the answer and a trace of every candidate considered."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from faithwatch.results import SentenceReport

EventKind = Literal["accept", "backtrack", "candidate", "prune", "keep", "drop", "select", "refuse", "stop"]

#: what an abstaining strategy answers instead (the refusal is explicit: ``DecodingResult.refused``)
REFUSAL = "I cannot answer this faithfully from the given context."

#: why FOD does not keep a sentence that says one already in its answer again (``no_repeat``)
REPEATED = "repeats a sentence already in the answer"


@dataclass
class TraceEvent:
    """One decision of a strategy: a candidate sentence (or chunk), its score, and what happened to it."""

    kind: EventKind
    step: int  # sentence (or chunk) position in the answer, 0-based
    text: str = ""
    score: float | None = None
    beam: int | None = None  # the beam / sample the candidate belongs to
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON form: every field."""
        return asdict(self)


@dataclass
class DecodingResult:
    """An answer from a decoding strategy, with its scored sentences and the trace of the search."""

    strategy: str
    answer: str
    refused: bool
    sentences: list[SentenceReport]
    trace: list[TraceEvent] = field(default_factory=list)
    num_tokens: int = 0  # tokens of the returned answer
    generated_tokens: int = 0  # every token the search generated (candidates included)
    stop_reason: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    detector: str = ""
    context_tokens_cut: int = 0  # the context's last tokens, cut to fit the model's window (``truncate_context``)
    #: cautions about the verdicts (:func:`faithwatch.results.verdict_notes`), empty when there is none
    notes: list[str] = field(default_factory=list)

    @property
    def mean_score(self) -> float | None:
        """Mean sentence score of the answer."""
        return sum(s.score for s in self.sentences) / len(self.sentences) if self.sentences else None

    def closest(self) -> TraceEvent | None:
        """The best-scored sentence the search considered (kept, pruned or backtracked from): what came nearest to
        passing when the answer is a refusal; None when nothing was scored."""
        scored = [e for e in self.trace if e.score is not None and e.text.strip()]
        return max(scored, key=lambda e: e.score, default=None)

    def to_dict(self, vectors: bool = False) -> dict[str, Any]:
        """JSON form: the fields, the mean score, the sentences (with their vectors if ``vectors``) and the trace."""
        out = {k: v for k, v in asdict(self).items() if k not in ("sentences", "trace")}
        out["mean_score"] = self.mean_score
        out["sentences"] = [s.to_dict(vectors) for s in self.sentences]
        out["trace"] = [e.to_dict() for e in self.trace]
        closest = self.closest()
        out["closest"] = None if closest is None else closest.to_dict()
        return out
