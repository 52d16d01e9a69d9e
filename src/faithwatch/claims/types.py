"""Typed results of claim-level checking (RefChecker-style, paper 002).

A response is split into :class:`Claim` objects (at one granularity), each claim gets a
:class:`ClaimVerdict` from a checker, and the verdicts are aggregated into a :class:`ResponseCheck`.
Every number is finite; a value that cannot be computed is ``None``, never NaN or a made-up 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from faithwatch.errors import NonFiniteError

if TYPE_CHECKING:
    from faithwatch.alignment.edits import EditChange

ENTAILMENT, NEUTRAL, CONTRADICTION = "Entailment", "Neutral", "Contradiction"
#: the three verdicts of paper 002 §3.2
LABELS: tuple[str, str, str] = (ENTAILMENT, NEUTRAL, CONTRADICTION)
#: the documented outcome of the default combination rule when one reference passage supports a claim
#: and another contradicts it (see :mod:`faithwatch.claims.checking`)
CONFLICT = "Conflict"
#: every label a claim can get
CLAIM_LABELS: tuple[str, ...] = (*LABELS, CONFLICT)
#: the response-level label of a response with no claims at all (paper 002, Appendix A.4)
ABSTAIN = "Abstain"

#: claim granularities, coarse to fine
GRANULARITIES: tuple[str, ...] = ("response", "sentence", "subsentence", "triplet")


def finite(value: float | None, what: str) -> float | None:
    """``value`` as a float, raising :class:`NonFiniteError` for NaN/inf (``None`` passes)."""
    if value is None:
        return None
    value = float(value)
    if not math.isfinite(value):
        raise NonFiniteError(f"{what} is not finite ({value})")
    return value


@dataclass(frozen=True)
class Claim:
    """A checkable unit of a response.

    ``response_span`` is the character span (end exclusive) of the response the claim comes from,
    or ``None`` when it cannot be located (the triplet extractor refuses such triplets; a claim built by hand
    may have none). ``span_score``
    says how well the span matches: 1.0 for claims cut out of the response, else the share of the
    triplet's content words found in the span.
    """

    text: str
    granularity: str
    response_span: tuple[int, int] | None
    triplet: tuple[str, str, str] | None = None
    span_score: float = 1.0

    def to_dict(self) -> dict[str, Any]:
        """JSON form: text, granularity, triplet and where the claim sits in the response."""
        return {
            "text": self.text,
            "granularity": self.granularity,
            "triplet": list(self.triplet) if self.triplet else None,
            "response_span": list(self.response_span) if self.response_span else None,
            "span_score": round(float(finite(self.span_score, "span_score") or 0.0), 6),
        }


@dataclass(frozen=True)
class Evidence:
    """A span of one reference passage that a verdict rests on.

    ``label`` is what this span says about the claim on its own (its own 3-way verdict) and ``score``
    how strongly (the checker documents its scale; ``None`` when the checker has none, e.g. an LLM
    judge that gave no confidence).
    """

    passage_index: int
    start: int
    end: int
    text: str
    label: str
    score: float | None
    #: what the claim changed in the passage sentence it copies (the detector checker's Contradictions)
    changes: tuple[EditChange, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """JSON form: passage, span, text, label and score (a non-finite score is an error)."""
        score = finite(self.score, "evidence score")
        out: dict[str, Any] = {
            "passage": self.passage_index,
            "start": self.start,
            "end": self.end,
            "text": self.text,
            "label": self.label,
            "score": None if score is None else round(score, 6),
        }
        if self.changes:
            out["changes"] = [c.to_dict() for c in self.changes]
        return out


@dataclass(frozen=True)
class ClaimVerdict:
    """A checker's verdict on one claim: label, confidence, and the evidence it rests on.

    ``confidence`` is in [0, 1] or ``None`` (a checker without any, see its docs). ``scores`` holds
    checker-specific numbers (e.g. the NLI probabilities of the deciding chunk, or the raw alignment
    score).
    """

    claim: Claim
    label: str
    confidence: float | None
    evidence: tuple[Evidence, ...] = ()
    scores: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.label not in CLAIM_LABELS:
            raise ValueError(f"unknown claim label {self.label!r}; expected one of {', '.join(CLAIM_LABELS)}")
        conf = finite(self.confidence, "confidence")
        if conf is not None and not 0.0 <= conf <= 1.0:
            raise ValueError(f"confidence must be in [0, 1], got {conf}")
        for name, value in self.scores.items():
            finite(value, f"score {name!r}")

    def to_dict(self) -> dict[str, Any]:
        """JSON form: the claim's fields, its label and confidence, its evidence and scores."""
        return {
            **self.claim.to_dict(),
            "label": self.label,
            "confidence": None if self.confidence is None else round(self.confidence, 6),
            "evidence": [e.to_dict() for e in self.evidence],
            "scores": {k: round(float(v), 6) for k, v in self.scores.items()},
        }


@dataclass
class ResponseCheck:
    """All claims of one response, their verdicts and the response-level aggregate.

    When extraction failed, ``extraction_error`` says why and ``claims``/``verdicts`` are empty,
    ``aggregate`` and ``hallucination_rate`` are ``None``: a failure never looks like a result.
    A response from which the extractor validly extracted no claim is *abstained*
    (``aggregate`` is ``"Abstain"`` or ``None`` for soft aggregation, ``hallucination_rate`` is ``None``).
    """

    response: str
    claims: list[Claim]
    verdicts: list[ClaimVerdict]
    aggregation: str
    aggregate: str | dict[str, float] | None
    hallucination_rate: float | None
    label_ratios: dict[str, float] | None
    extractor: str
    checker: str
    extraction_error: str | None = None
    #: claims set aside unchecked: framing lines ("Here is a summary:", "I hope this helps!"; text.is_framing)
    framing: list[Claim] = field(default_factory=list)
    #: claims set aside unchecked as the monitor sets them aside: absence notes the passages bear out ("The
    #: passages do not mention the price.") and refusals (detectors.absence.borne_out)
    absence: list[Claim] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the response was checked (extraction succeeded)."""
        return self.extraction_error is None

    @property
    def abstained(self) -> bool:
        """Extraction succeeded but found no claim."""
        return self.ok and not self.claims

    def to_dict(self) -> dict[str, Any]:
        """JSON form of the checked response (a non-finite rate is an error)."""
        rate = finite(self.hallucination_rate, "hallucination rate")
        return {
            "extractor": self.extractor,
            "checker": self.checker,
            "aggregation": self.aggregation,
            "aggregate": self.aggregate,
            "hallucination_rate": None if rate is None else round(rate, 6),
            "label_ratios": self.label_ratios,
            "n_claims": len(self.claims),
            "abstained": self.abstained,
            "extraction_error": self.extraction_error,
            "claims": [v.to_dict() for v in self.verdicts],
            "framing_lines": [c.text for c in self.framing],
            "absence_notes": [c.text for c in self.absence],
        }
