"""Labelled faithfulness data in one shape: a response with labelled character spans."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from faithwatch.tasks import QA_INSTRUCTION

SpanLabel = Literal["unfaithful", "faithful", "excluded"]


@dataclass(frozen=True)
class LabelledSpan:
    """A character span of the response and its label."""

    start: int
    end: int
    label: SpanLabel
    annotator: str | None = None


@dataclass
class LabelledExample:
    """One (context, question, response) with labels.

    ``spans`` label parts of the response. A sentence of the response is unfaithful if it overlaps an
    unfaithful span (it contains one or is contained in one), excluded if it overlaps only excluded
    spans, faithful if it overlaps faithful spans, and otherwise gets ``default_label``.
    ``response_label`` is the label of the whole response (1 unfaithful, 0 faithful, None = none).
    """

    dataset: str
    id: str
    context: str
    question: str
    response: str
    instruction: str = QA_INSTRUCTION
    spans: list[LabelledSpan] = field(default_factory=list)
    default_label: int | None = 0
    response_label: int | None = None
    source_model: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


def sentence_label(example: LabelledExample, start: int, end: int, min_unfaithful: int = 1) -> int | None:
    """Label of the response sentence [start, end): 1 unfaithful, 0 faithful, None excluded/unknown.

    ``min_unfaithful``: how many distinct annotators must mark an unfaithful span in the sentence
    (1 = any annotator; spans without an annotator count as one each).
    """
    hits = [s for s in example.spans if min(end, s.end) - max(start, s.start) > 0]
    bad = [s for s in hits if s.label == "unfaithful"]
    voters = {s.annotator if s.annotator is not None else f"#{i}" for i, s in enumerate(bad)}
    if len(voters) >= min_unfaithful and bad:
        return 1
    if bad or any(s.label == "excluded" for s in hits):
        return None  # a minority marked it, or only "excluded" labels: leave it out
    if any(s.label == "faithful" for s in hits):
        return 0
    return example.default_label
