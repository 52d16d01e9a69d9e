"""Claim extraction at four granularities (paper 002 §3.2, §5.1): response, sentence, sub-sentence,
and knowledge triplet ``(head, relation, tail)``.

* ``response`` - the whole response is one claim;
* ``sentence`` - pysbd sentences;
* ``subsentence`` - clause-like pieces of the sentences, cut by a deterministic heuristic
  (:func:`faithwatch.claims.spans.subsentence_spans`; paper 002 notes that sub-sentences are hard to
  define - these never overlap);
* ``triplet`` - an LLM (:mod:`faithwatch.claims.llm`) writes the response as a JSON list of
  ``[subject, predicate, object]`` triplets (prompt adapted from paper 002, Appendix B.1). The answer is
  validated against a schema (pydantic), and each triplet must share a word with the response; an invalid answer
  is sent back with the validation error, at
  most ``max_retries`` times, then :class:`ExtractionError` is raised. Each triplet is mapped back to
  the response span holding its words (:func:`faithwatch.claims.spans.locate`).

The first three cut the response itself, so their spans are exact (``span_score`` 1.0).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Annotated, Any, Protocol, runtime_checkable

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, StringConstraints, TypeAdapter, ValidationError

from faithwatch.claims.llm import LLMBackend, Message, fenced_body
from faithwatch.claims.spans import content_keys, locate, sentence_spans, subsentence_spans
from faithwatch.claims.types import GRANULARITIES, Claim
from faithwatch.errors import FaithwatchError, InputError
from faithwatch.text.visible import is_blank

#: how many times an invalid LLM answer is sent back for correction (so at most 3 calls per response)
DEFAULT_MAX_RETRIES = 2
#: answer budget of one extraction call; doubled on a retry after an answer that was cut off
DEFAULT_MAX_TOKENS = 512
_MAX_ITEM_CHARS = 500

TRIPLET_SYSTEM = """You extract knowledge triplets from text and answer with JSON only.

Given a question and a response to it, write the knowledge stated in the response as \
(subject, predicate, object) triplets, conditioned on the question.
This is an EXTRACTION task: do not judge whether the response is true, only write down what it states.
- One triplet per piece of knowledge; together the triplets cover every fact in the response, \
without overlapping or repeating each other.
- Use the words of the response; replace pronouns by the entity they refer to.
- Opinions, speculation, questions and refusals are not facts. If the response states no fact, answer [].
Answer with a JSON list only, and no other text: each triplet is a list of three non-empty strings \
[subject, predicate, object]."""

#: the in-context example (a user turn and the assistant's answer)
TRIPLET_EXAMPLE: tuple[str, str] = (
    "Question: Who designed the Eiffel Tower and when was it finished?\n"
    "Response: The Eiffel Tower was designed by the company of Gustave Eiffel. It was finished in 1889 "
    "and is 330 metres tall.",
    '[["Eiffel Tower", "designed by", "the company of Gustave Eiffel"], '
    '["Eiffel Tower", "finished in", "1889"], ["Eiffel Tower", "height", "330 metres"]]',
)

TRIPLET_USER = "Question: {question}\nResponse: {response}"

TRIPLET_RETRY = (
    "Your answer could not be used: {error}\n"
    "Answer again for the same response with only the JSON list of [subject, predicate, object] "
    "triplets, and nothing else."
)

_Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=_MAX_ITEM_CHARS)]


class _TripletObject(BaseModel):
    """A triplet written as an object: ``{"subject"|"head", "predicate"|"relation", "object"|"tail"}``."""

    model_config = ConfigDict(coerce_numbers_to_str=True)
    head: _Text = Field(validation_alias=AliasChoices("head", "subject"))
    relation: _Text = Field(validation_alias=AliasChoices("relation", "predicate"))
    tail: _Text = Field(validation_alias=AliasChoices("tail", "object"))


#: the schema of one triplet: ``[subject, predicate, object]`` (numbers accepted as text) or the object form
TRIPLET_SCHEMA: TypeAdapter[Any] = TypeAdapter(
    tuple[_Text, _Text, _Text] | _TripletObject, config=ConfigDict(coerce_numbers_to_str=True)
)


class TripletFormatError(ValueError):
    """An LLM answer that is not a valid list of triplets; ``truncated`` when it looks cut off."""

    def __init__(self, message: str, truncated: bool = False) -> None:
        super().__init__(message)
        self.truncated = truncated


class ExtractionError(FaithwatchError):
    """The extractor gave no usable answer after every allowed attempt.

    ``attempts`` holds the raw answers and ``errors`` why each was rejected.
    """

    def __init__(self, message: str, attempts: Sequence[str] = (), errors: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.attempts = list(attempts)
        self.errors = list(errors)


def _unclosed(text: str, start: int) -> bool:
    """Whether the JSON starting at ``start`` ends inside a string or with brackets left open (cut off)."""
    depth, in_string, escaped = 0, False, False
    for ch in text[start:]:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
        elif ch in "]}":
            depth -= 1
            if depth == 0:
                return False
    return in_string or depth > 0


def _decode_first(text: str) -> Any:
    """The first JSON list/object in ``text`` (prose before or after it is ignored)."""
    decoder = json.JSONDecoder()
    starts = [m.start() for m in re.finditer(r"[\[{]", text)][:50]
    if not starts:
        raise TripletFormatError("no JSON list found in the answer")
    worst: json.JSONDecodeError | None = None
    for start in starts:
        if worst is not None and start < worst.pos:
            continue  # inside a list that failed to parse: its inner lists are not the answer
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError as exc:
            if worst is None or exc.pos > worst.pos:  # the attempt that got furthest explains best
                worst = exc
            continue
        return value
    assert worst is not None
    cut_off = _unclosed(text, starts[0])
    detail = "the JSON is cut off before its end" if cut_off else f"{worst.msg} at character {worst.pos}"
    raise TripletFormatError(f"invalid JSON: {detail}", truncated=cut_off)


def _longer_list_joined(item: Any) -> Any:
    """``[s, p, o, more, ...]`` (every item a non-empty string or a number) as ``[s, p, "o more ..."]``: a claim's text
    joins its items anyway, so nothing is lost (small LLMs often add a qualifier, e.g. ``[..., "1887", "to 1889"]``).
    Anything else is returned as it is, for the schema to judge."""
    if not isinstance(item, list) or len(item) <= 3:
        return item
    if not all(isinstance(x, (str, int, float)) and not isinstance(x, bool) and str(x).strip() for x in item):
        return item
    return [item[0], item[1], " ".join(str(x).strip() for x in item[2:])]


def parse_triplets(text: str) -> list[tuple[str, str, str]]:
    """Parse and validate an LLM answer into ``(head, relation, tail)`` triplets.

    Accepted: a JSON list of ``[s, p, o]`` lists (or ``{"subject", "predicate", "object"}`` objects; a longer list's
    items after the predicate are joined into the object), optionally inside a markdown code fence, with prose
    before/after it, or wrapped as ``{"triplets": [...]}``. Duplicates (ignoring case) are dropped. ``[]`` is a valid
    answer (no claim).
    Raises :class:`TripletFormatError` naming the problem, meant to be shown to the LLM.
    """
    if not isinstance(text, str) or not text.strip():
        raise TripletFormatError("the answer is empty")
    body = fenced_body(text)
    value = _decode_first(body)
    if isinstance(value, dict):
        inner = next((value[k] for k in ("triplets", "claims", "triples") if k in value), None)
        if not isinstance(inner, list):
            if {"subject", "predicate", "object"} <= set(value) or {"head", "relation", "tail"} <= set(value):
                inner = [value]
            else:
                raise TripletFormatError("expected a JSON list of triplets, got an object with keys "
                                         f"{sorted(value)[:5]}")
        value = inner
    problems: list[str] = []
    out: list[tuple[str, str, str]] = []
    seen: set[tuple[str, str, str]] = set()
    for i, item in enumerate(value):
        try:
            parsed = TRIPLET_SCHEMA.validate_python(_longer_list_joined(item))
        except ValidationError:
            shown = json.dumps(item, ensure_ascii=False)
            shown = shown if len(shown) <= 80 else shown[:77] + "..."
            problems.append(f"item {i + 1} is {shown}, not [subject, predicate, object] (three non-empty strings)")
            continue
        triplet = (parsed.head, parsed.relation, parsed.tail) if isinstance(parsed, _TripletObject) else parsed
        key = tuple(x.lower() for x in triplet)
        if key not in seen:
            seen.add(key)
            out.append(tuple(triplet))
    if problems:
        more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        raise TripletFormatError("; ".join(problems[:3]) + more)
    return out


def _grounded(triplets: list[tuple[str, str, str]], response: str) -> list[tuple[str, str, str]]:
    """``triplets``, refused (:class:`TripletFormatError`) when one shares no content word with ``response``: not a
    claim of the response (small LLMs copy the prompt's worked example, or answer the question themselves)."""
    said = content_keys(response)
    stray = [(i, t) for i, t in enumerate(triplets, start=1) if not content_keys(" ".join(t)) & said]
    if stray:
        shown = "; ".join(f"item {i} {json.dumps(list(t), ensure_ascii=False)[:80]}" for i, t in stray[:3])
        raise TripletFormatError(f"{shown}: no word of {'it' if len(stray) == 1 else 'them'} is in the response; "
                                 "write only what the response states")
    return triplets


@runtime_checkable
class ClaimExtractor(Protocol):
    """Splits a response into claims."""

    #: one of :data:`~faithwatch.claims.types.GRANULARITIES`
    granularity: str

    def extract(self, response: str, question: str | None = None) -> list[Claim]:
        """The claims of ``response``; raises :class:`ExtractionError` when it cannot tell."""
        ...


def _check_response(response: str) -> None:
    if not isinstance(response, str) or is_blank(response):
        raise InputError("the response is empty (no visible character): there is no claim to check")


class SegmentExtractor:
    """Claims cut out of the response: ``response``, ``sentence`` or ``subsentence`` granularity."""

    def __init__(self, granularity: str = "sentence", language: str = "en") -> None:
        if granularity not in ("response", "sentence", "subsentence"):
            raise InputError(f"SegmentExtractor granularity must be response, sentence or subsentence, "
                             f"got {granularity!r}")
        self.granularity = granularity
        self.language = language
        self.name = granularity

    def extract(self, response: str, question: str | None = None) -> list[Claim]:
        """The response cut into claims at this extractor's granularity (whole, sentences or sub-sentences), with their
        spans."""
        _check_response(response)
        if self.granularity == "response":
            lead = len(response) - len(response.lstrip())
            spans = [(lead, lead + len(response.strip()))]
        elif self.granularity == "sentence":
            spans = sentence_spans(response, self.language)
        else:
            spans = subsentence_spans(response, self.language)
        return [Claim(response[s:e], self.granularity, (s, e)) for s, e in spans]


class TripletExtractor:
    """Knowledge triplets written by an LLM (paper 002 §4.1), validated, retried, mapped to spans.

    Args:
        backend: any :class:`~faithwatch.claims.llm.LLMBackend`.
        max_retries: how many times an invalid answer is sent back with the validation error.
        max_tokens: answer budget of a call (doubled, up to 4x, after an answer that was cut off).
        temperature: 0 decodes greedily.
    """

    granularity = "triplet"

    def __init__(
        self,
        backend: LLMBackend,
        max_retries: int = DEFAULT_MAX_RETRIES,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        temperature: float = 0.0,
    ) -> None:
        if max_retries < 0:
            raise InputError(f"max_retries must be >= 0, got {max_retries}")
        if max_tokens < 1:
            raise InputError(f"max_tokens must be >= 1, got {max_tokens}")
        self.backend = backend
        self.max_retries = max_retries
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.name = f"triplet ({backend.name})"

    def messages(self, response: str, question: str | None = None) -> list[Message]:
        """The chat sent to the LLM on the first attempt."""
        q = question.strip() if question and question.strip() else "(none)"
        return [
            {"role": "system", "content": TRIPLET_SYSTEM},
            {"role": "user", "content": TRIPLET_EXAMPLE[0]},
            {"role": "assistant", "content": TRIPLET_EXAMPLE[1]},
            {"role": "user", "content": TRIPLET_USER.format(question=q, response=response.strip())},
        ]

    def extract_triplets(self, response: str, question: str | None = None) -> list[tuple[str, str, str]]:
        """The validated triplets (no spans); raises :class:`ExtractionError` after the last attempt."""
        _check_response(response)
        first = self.messages(response, question)
        messages = first
        budget = self.max_tokens
        attempts: list[str] = []
        errors: list[str] = []
        for _ in range(self.max_retries + 1):
            raw = self.backend.complete(messages, max_tokens=budget, temperature=self.temperature)
            try:
                return _grounded(parse_triplets(raw), response)
            except TripletFormatError as exc:
                attempts.append(raw)
                errors.append(str(exc))
                if exc.truncated:
                    budget = min(budget * 2, self.max_tokens * 4)
                # only the latest bad answer goes back, so the chat does not grow with each retry
                messages = [*first, {"role": "assistant", "content": raw[:4000]},
                            {"role": "user", "content": TRIPLET_RETRY.format(error=exc)}]
        raise ExtractionError(
            f"triplet extraction failed after {len(attempts)} attempt(s) with {self.backend.name}: {errors[-1]}",
            attempts, errors,
        )

    def extract(self, response: str, question: str | None = None) -> list[Claim]:
        """One claim per triplet the LLM extracts, located in the response."""
        claims: list[Claim] = []
        units = sentence_spans(response)
        for triplet in self.extract_triplets(response, question):
            text = " ".join(triplet)
            span, coverage = locate(text, response, units, focus=f"{triplet[1]} {triplet[2]}")
            claims.append(Claim(text, "triplet", span, triplet=triplet, span_score=coverage))
        return claims


def get_extractor(
    granularity: str,
    backend: LLMBackend | None = None,
    *,
    max_retries: int = DEFAULT_MAX_RETRIES,
    max_tokens: int = DEFAULT_MAX_TOKENS,
) -> ClaimExtractor:
    """The extractor of a granularity (``triplet`` needs an LLM ``backend``)."""
    if granularity not in GRANULARITIES:
        raise InputError(f"unknown extractor {granularity!r}; choose one of {', '.join(GRANULARITIES)}")
    if granularity == "triplet":
        if backend is None:
            raise InputError("the triplet extractor needs an LLM backend")
        return TripletExtractor(backend, max_retries=max_retries, max_tokens=max_tokens)
    return SegmentExtractor(granularity)
