"""The LLM judge checker (``--checker llm``): an LLM judges each (claim, passage) pair and answers schema-validated
JSON with a quote of its evidence (paper 002 §4.2, RefChecker's prompt adapted from Appendix B.2). Either backend of
:mod:`faithwatch.claims.llm`; passages are combined by the rules of :mod:`faithwatch.claims.checking`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from faithwatch.claims.checking import (
    DEFAULT_COMBINE,
    CheckError,
    PassageVerdict,
    check_rule,
    merge_verdicts,
    validate_references,
)
from faithwatch.claims.llm import LLMBackend, Message, fenced_body
from faithwatch.claims.spans import find_quote, locate, sentence_around
from faithwatch.claims.types import CONTRADICTION, ENTAILMENT, NEUTRAL, Claim, ClaimVerdict, Evidence
from faithwatch.errors import InputError

JUDGE_SYSTEM = """You check a claim against a reference passage and answer with JSON only.

Decide how the passage relates to the claim:
- "Entailment": the passage states the claim or directly implies it.
- "Contradiction": the passage states something that makes the claim false.
- "Neutral": the passage is unrelated to the claim or lacks the information to verify it.
Do NOT use your own knowledge: compare the claim with the passage only. A claim written as \
(subject, predicate, object) is one statement.
Answer with one JSON object and no other text:
{"label": "Entailment" or "Neutral" or "Contradiction", "quote": the shortest exact quote of the \
passage your label rests on (null for Neutral), "confidence": a number from 0 to 1}"""

JUDGE_USER = "{question}Passage:\n{passage}\n\nClaim: {claim}"

#: the in-context examples (user turn, assistant answer), one per label
JUDGE_EXAMPLES: tuple[tuple[str, str], ...] = (
    ("Passage:\nThe museum opens at nine and closes at six. Entry is free on Sundays.\n\n"
     "Claim: (museum, closes at, six)",
     '{"label": "Entailment", "quote": "closes at six", "confidence": 0.95}'),
    ("Passage:\nThe museum opens at nine and closes at six. Entry is free on Sundays.\n\n"
     "Claim: (museum, opens at, ten)",
     '{"label": "Contradiction", "quote": "opens at nine", "confidence": 0.9}'),
    ("Passage:\nThe museum opens at nine and closes at six. Entry is free on Sundays.\n\n"
     "Claim: (museum, founded in, 1920)",
     '{"label": "Neutral", "quote": null, "confidence": 0.8}'),
)

JUDGE_RETRY = (
    "Your answer could not be used: {error}\n"
    'Answer again with only the JSON object {{"label": ..., "quote": ..., "confidence": ...}}.'
)


class Judgement(BaseModel):
    """The schema of the LLM judge's answer."""

    model_config = ConfigDict(extra="ignore")
    label: Literal["Entailment", "Neutral", "Contradiction"]
    quote: str | None = None
    confidence: float | None = Field(default=None, ge=0.0, le=1.0)

    @field_validator("label", mode="before")
    @classmethod
    def _label_case(cls, value: Any) -> Any:
        if isinstance(value, str):
            canon = {lab.lower(): lab for lab in (ENTAILMENT, NEUTRAL, CONTRADICTION)}
            return canon.get(value.strip().lower(), value)
        return value


def parse_judgement(text: str) -> Judgement:
    """Parse and validate the judge's answer (a JSON object; code fences and prose around it are ignored).

    Raises ``ValueError`` with a message meant to be shown to the LLM.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the answer is empty")
    body = fenced_body(text)
    start = body.find("{")
    if start < 0:
        raise ValueError("no JSON object found in the answer")
    try:
        value, _ = json.JSONDecoder().raw_decode(body, start)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc.msg} at character {exc.pos}") from None
    try:
        return Judgement.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "answer"
        raise ValueError(f"'{where}': {first['msg']}") from None


class LLMJudgeChecker:
    """An LLM judges each (claim, passage) pair (paper 002 §4.2, prompt adapted from Appendix B.2).

    The answer must validate against :class:`Judgement`; an invalid one is sent back with the error
    at most ``max_retries`` times, then :class:`CheckError` is raised (no verdict is invented).
    Passages are combined by ``combine``. Confidence is the LLM's *self-reported* confidence (``None``
    when it gave none) - not a calibrated probability. Evidence: the quoted span located in the
    passage (case/whitespace-insensitive); when the quote is missing or not verbatim, the passage
    sentence sharing most words with the claim, and ``scores["quote_found"]`` is 0.
    """

    def __init__(
        self,
        backend: LLMBackend,
        combine: str = DEFAULT_COMBINE,
        max_retries: int = 2,
        max_tokens: int = 256,
        temperature: float = 0.0,
    ) -> None:
        if max_retries < 0:
            raise InputError(f"max_retries must be >= 0, got {max_retries}")
        self.backend = backend
        self.combine = check_rule(combine)
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.name = f"llm:{backend.name}"

    def config(self) -> dict[str, Any]:
        """What the verdicts depend on besides the name (a resumed batch output refuses another)."""
        return {"combine": self.combine, "max_tokens": self.max_tokens, "temperature": self.temperature}

    def messages(self, claim: Claim, passage: str, question: str | None = None) -> list[Message]:
        """The chat of the first attempt for one (claim, passage) pair."""
        q = f"Question: {question.strip()}\n\n" if question and question.strip() else ""
        claim_text = f"({', '.join(claim.triplet)})" if claim.triplet else claim.text
        examples = [{"role": role, "content": text} for pair in JUDGE_EXAMPLES
                    for role, text in zip(("user", "assistant"), pair, strict=True)]
        return [
            {"role": "system", "content": JUDGE_SYSTEM},
            *examples,
            {"role": "user", "content": JUDGE_USER.format(question=q, passage=passage.strip(), claim=claim_text)},
        ]

    def judge(self, claim: Claim, passage: str, question: str | None = None) -> Judgement:
        """The validated judgement of one pair; raises :class:`CheckError` after the last attempt."""
        first = self.messages(claim, passage, question)
        messages = first
        errors: list[str] = []
        for _ in range(self.max_retries + 1):
            raw = self.backend.complete(messages, max_tokens=self.max_tokens, temperature=self.temperature)
            try:
                return parse_judgement(raw)
            except ValueError as exc:
                errors.append(str(exc))
                messages = [*first, {"role": "assistant", "content": raw[:4000]},
                            {"role": "user", "content": JUDGE_RETRY.format(error=exc)}]
        raise CheckError(f"the LLM judge ({self.backend.name}) gave no valid verdict for claim {claim.text!r} "
                         f"after {len(errors)} attempt(s): {errors[-1]}")

    def check(
        self, claims: Sequence[Claim], references: str | Sequence[str], question: str | None = None
    ) -> list[ClaimVerdict]:
        """A verdict per claim from the LLM judge's answer for each passage, merged across passages."""
        refs = validate_references(references)
        out: list[ClaimVerdict] = []
        for claim in claims:
            passages: list[PassageVerdict] = []
            found: list[float] = []
            for p, passage in enumerate(refs):
                j = self.judge(claim, passage, question)
                span = find_quote(j.quote, passage) if j.quote else None
                found.append(1.0 if span else 0.0)
                if span is None:  # fall back to the sentence sharing most words with the claim
                    span = sentence_around(locate(claim.text, passage)[0], passage)
                ev = Evidence(p, span[0], span[1], passage[span[0] : span[1]], j.label, j.confidence) if span else None
                # for a Neutral verdict, show the passage where the judge found something to quote
                relevance = found[-1] + (j.confidence or 0.0) / 2
                passages.append(PassageVerdict(j.label, j.confidence, ev, relevance=relevance))
            label, conf, evidence = merge_verdicts(passages, self.combine)
            out.append(ClaimVerdict(claim, label, conf, evidence, {"quote_found": min(found) if found else 0.0}))
        return out
