"""Claim-level checking, RefChecker-style (paper 002): extract claims from a response at one of four
granularities, check each against reference passages (Entailment / Neutral / Contradiction), and
aggregate per response and per model / data set. See ``docs/claims.md``.

Quick start::

    from faithwatch.claims import AlignmentChecker, SegmentExtractor, check_response
    from faithwatch.alignment import LexicalScorer

    result = check_response(answer, [passage_1, passage_2], SegmentExtractor("sentence"),
                            AlignmentChecker(LexicalScorer()))
    for v in result.verdicts:
        print(v.label, v.confidence, v.claim.text, v.claim.response_span)
"""

from faithwatch.claims.aggregation import AGGREGATIONS, GroupSummary, aggregate, hallucination_rate, summarize
from faithwatch.claims.checking import (
    COMBINE_RULES,
    AlignmentChecker,
    Checker,
    CheckError,
    CheckerSpec,
    NLIChecker,
    get_checker,
    merge_verdicts,
)
from faithwatch.claims.extraction import (
    ClaimExtractor,
    ExtractionError,
    SegmentExtractor,
    TripletExtractor,
    get_extractor,
    parse_triplets,
)
from faithwatch.claims.llm import (
    HFChatBackend,
    LLMBackend,
    LLMBackendError,
    LLMUnavailableError,
    OpenAICompatibleBackend,
    get_backend,
)
from faithwatch.claims.llm_judge import LLMJudgeChecker
from faithwatch.claims.pipeline import ClaimsBatchSummary, check_file, check_response
from faithwatch.claims.types import (
    ABSTAIN,
    CLAIM_LABELS,
    CONFLICT,
    CONTRADICTION,
    ENTAILMENT,
    GRANULARITIES,
    LABELS,
    NEUTRAL,
    Claim,
    ClaimVerdict,
    Evidence,
    ResponseCheck,
)

__all__ = [
    "ABSTAIN",
    "AGGREGATIONS",
    "CLAIM_LABELS",
    "COMBINE_RULES",
    "CONFLICT",
    "CONTRADICTION",
    "ENTAILMENT",
    "GRANULARITIES",
    "LABELS",
    "NEUTRAL",
    "AlignmentChecker",
    "CheckError",
    "Checker",
    "CheckerSpec",
    "Claim",
    "ClaimExtractor",
    "ClaimVerdict",
    "ClaimsBatchSummary",
    "Evidence",
    "ExtractionError",
    "GroupSummary",
    "HFChatBackend",
    "LLMBackend",
    "LLMBackendError",
    "LLMJudgeChecker",
    "LLMUnavailableError",
    "NLIChecker",
    "OpenAICompatibleBackend",
    "ResponseCheck",
    "SegmentExtractor",
    "TripletExtractor",
    "aggregate",
    "check_file",
    "check_response",
    "get_backend",
    "get_checker",
    "get_extractor",
    "hallucination_rate",
    "merge_verdicts",
    "parse_triplets",
    "summarize",
]
