"""Typed results of monitoring and scoring."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from faithwatch.errors import NonFiniteError


def response_score(scores: Sequence[float], framing: Sequence[bool]) -> float | None:
    """A response's score: the lowest score of its sentences that are not set aside (``framing``: framing lines and
    borne-out absence notes, raised to the threshold; docs/transfer.md "Framing lines", "Absence notes"); a response
    of nothing but such lines keeps the lowest of them; None for no sentence."""
    if len(scores) != len(framing):
        raise ValueError(f"{len(scores)} scores for {len(framing)} sentences")
    claims = [float(x) for x, f in zip(scores, framing, strict=True) if not f]
    return min(claims or [float(x) for x in scores], default=None)


#: what a set-aside line is, as the CLI, the HTML report and `check` name it: a framing line, an absence note
ASIDE_FRAMING = "a line about the answer itself, or without a word"
ASIDE_ABSENCE = "says what the context lacks, or declines to answer"


#: keys :meth:`SentenceReport.to_dict` adds to the fields: derived, so :meth:`SentenceReport.from_dict` drops them
_DERIVED = ("set_aside", "aside_reason")


@dataclass
class SentenceReport:
    """One sentence of a response with its signals and faithfulness score (1 = faithful)."""

    index: int
    text: str
    start: int  # character span in the response, end exclusive
    end: int
    token_start: int  # token span in the response tokens, end exclusive
    token_end: int
    features: dict[str, float | None]  # None = absent (e.g. LID without a reference bank)
    score: float
    flagged: bool  # score below the detector's threshold
    detector: str
    vectors: dict[str, list] = field(default_factory=dict)  # e.g. lookback_ratio [layers][heads]
    #: a line about the answer itself ("Here is a summary:"): never below a threshold by itself (text.is_framing)
    framing: bool = False
    #: says the context lacks a thing no context sentence holds ("The passages do not give its cost."), or declines
    #: to answer ("I cannot answer this from the passages."): set aside as a framing line is (detectors.absence)
    absence: bool = False
    #: tokens at the sentence's end that the alignment model did not read (cut to fit its input): ``align_score``
    #: judged the rest only (:func:`unread_notes`)
    unread_tokens: int = 0

    @property
    def set_aside(self) -> bool:
        """A framing line or a borne-out absence note: never flagged by itself, left out of a response's score."""
        return self.framing or self.absence

    @property
    def aside_reason(self) -> str | None:
        """Why the sentence is :attr:`set_aside` (what the CLI and the HTML report show), None when it is not."""
        if self.framing:
            return f"{ASIDE_FRAMING}: not flagged by itself"
        if self.absence:
            return f"{ASIDE_ABSENCE}: not flagged by itself"
        return None

    def below(self, threshold: float) -> bool:
        """Whether the sentence counts as below ``threshold`` (flagged, or backtracked from): its score is, and it
        is not :attr:`set_aside`."""
        return self.score < threshold and not self.set_aside

    def to_dict(self, vectors: bool = True) -> dict[str, Any]:
        """The fields as JSON-ready values, plus :attr:`set_aside` and :attr:`aside_reason` (so that a client shows
        the reason in the library's own words); ``vectors=False`` leaves out the per-token vectors."""
        out = asdict(self)
        if not vectors:
            out.pop("vectors")
        out["set_aside"] = self.set_aside
        out["aside_reason"] = self.aside_reason
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SentenceReport:
        """The report :meth:`to_dict` wrote (the derived keys are read back from the fields, not trusted)."""
        fields = {k: v for k, v in data.items() if k not in _DERIVED}
        fields.setdefault("vectors", {})
        return cls(**fields)


@dataclass
class MonitorResult:
    """A whole response: text, sentences, and how it was produced."""

    question: str
    context: str
    response: str
    sentences: list[SentenceReport]
    model_id: str
    detector: str
    alignment: str | None
    mode: str  # "live", "teacher-forced" or "streamed" (another model's text, see faithwatch.watch)
    num_tokens: int
    stop_reason: str  # "eos", "max_new_tokens" or "given"
    context_tokens_cut: int = 0
    #: raw per-token records and each token's end offset in ``response`` (kept in memory, not serialised)
    records: Any = field(default=None, repr=False, compare=False)
    token_ends: list[int] = field(default_factory=list, repr=False, compare=False)

    @property
    def score(self) -> float | None:
        """Response score: the minimum sentence score (a response is as faithful as its worst sentence), framing
        lines and borne-out absence notes left out (:func:`response_score`)."""
        return response_score([s.score for s in self.sentences], [s.set_aside for s in self.sentences])

    @property
    def notes(self) -> list[str]:
        """Cautions about these verdicts (:func:`verdict_notes`), empty when there is none."""
        return verdict_notes(self.context, self.sentences, self.context_tokens_cut)

    def to_dict(self, vectors: bool = True) -> dict[str, Any]:
        """JSON form: the fields, the response score, the notes and the sentences (with vectors if ``vectors``)."""
        skip = ("sentences", "records", "token_ends")
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k not in skip}
        out["score"] = self.score
        out["notes"] = self.notes
        out["sentences"] = [s.to_dict(vectors) for s in self.sentences]
        return out


def context_notes(context: str, tokens_cut: int = 0) -> list[str]:
    """Cautions about verdicts on ``context``, empty when there is none: its last ``tokens_cut`` tokens were cut to
    fit the model's window, or it reads as a chat or meeting transcript, where the detector was measured at chance
    (:data:`faithwatch.text.TRANSCRIPT_NOTE`). The scores are the same either way."""
    from faithwatch.text import TRANSCRIPT_NOTE, is_transcript

    out = []
    if tokens_cut:
        out.append(f"the context's last {tokens_cut} tokens were cut to fit the model's window: the sentences were "
                   "judged against the rest only.")
    if is_transcript(context):
        out.append(f"the context reads {TRANSCRIPT_NOTE}")
    return out


def language_notes(context: str | Sequence[str] | None, answer: str | Sequence[str], what: str) -> list[str]:
    """A caution when the context (or passages), or else the answer (called ``what``: "answer", "response"),
    reads as another language than English (:func:`faithwatch.text.other_language`), empty otherwise: faithwatch's
    models read English only. The scores are the same either way."""
    from faithwatch.text import language_note, other_language

    if context and (language := other_language(context)):
        return [language_note("the context", language)]
    if answer and (language := other_language(answer)):
        return [language_note(f"the {what}", language)]
    return []


def unread_notes(sentences: Sequence[SentenceReport]) -> list[str]:
    """A caution for each sentence whose end the alignment model did not read (longer than its input holds), empty
    when there is none."""
    out = []
    for s in sentences:
        if s.unread_tokens:
            words = s.text.split()
            start = " ".join(words[:6]) + (" …" if len(words) > 6 else "")
            out.append(f"the sentence \"{start}\" is longer than the alignment model reads: its last "
                       f"{s.unread_tokens} tokens were not judged by it (align_score is the rest's); split it into "
                       "shorter sentences to have every part judged.")
    return out


def check_notes(passages: Sequence[str], response: str, *, detector: bool) -> list[str]:
    """Cautions about a claim check's verdicts (``faithwatch check``, ``/v1/check``), empty when there is none: the
    passages, read together, read as a chat or meeting transcript (the ``detector`` checker's only: the detector
    was measured at chance there), and :func:`language_notes`."""
    from faithwatch.text import TRANSCRIPT_NOTE, is_transcript

    out = [f"the context reads {TRANSCRIPT_NOTE}"] if detector and is_transcript(passages) else []
    return out + language_notes(passages, response, "response")


def verdict_notes(context: str | None, sentences: Sequence[SentenceReport], tokens_cut: int = 0) -> list[str]:
    """Every caution about an answer's verdicts: its context's (:func:`context_notes`; none without a context), its
    language's (:func:`language_notes`) and its sentences' (:func:`unread_notes`)."""
    return ((context_notes(context, tokens_cut) if context else [])
            + language_notes(context, [s.text for s in sentences], "answer") + unread_notes(sentences))


def check_finite(name: str, value: float) -> float:
    """Return ``value`` or raise :class:`NonFiniteError` naming the feature."""
    if not math.isfinite(value):
        raise NonFiniteError(f"feature '{name}' is {value}; faithwatch does not emit non-finite numbers")
    return value
