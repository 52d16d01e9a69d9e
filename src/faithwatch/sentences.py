"""Sentence segmentation of decoded text with character offsets, token by token (pysbd).

The same tracker runs while streaming and when teacher forcing, so both see identical sentences.
A sentence is final only when the splitter is sure: a following sentence has begun with at least one
complete word, or the generation ended. The splitter is asked when a possible sentence end arrives and again at
each token while one to :data:`RESPLIT_WORDS` complete words follow the last one: a boundary is confirmed by
the first word after it, and asking at every other token only made pysbd repeat its answer (the same sentences
on every response of the labelled sets, in about half the time; docs/scale.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from faithwatch.detok import IncrementalText
from faithwatch.text import segmenter, sentence_spans

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

_BOUNDARY_CHARS = re.compile(r"[.!?…。！？\n:;\"')\]]")
_COMPLETE_WORD = re.compile(r"\w+[\s,;:.!?]")
#: complete words after the last possible sentence end beyond which the tail is not split again
RESPLIT_WORDS = 2


@dataclass(frozen=True)
class Sentence:
    """A sentence of the response: its text, character span and the generated tokens that form it."""

    index: int
    text: str
    start: int  # character offsets into the response text, end exclusive
    end: int
    token_start: int  # token indices into the response tokens, end exclusive
    token_end: int


@dataclass(frozen=True)
class Tracked:
    """A finished response as :class:`SentenceTracker` tracks it: its sentences, text, token ids and the character
    end of each token (what a teacher-forced result needs from the tracker)."""

    sentences: list[Sentence]
    text: str
    ids: list[int]
    token_ends: list[int]


def track(tokenizer: PreTrainedTokenizerBase, token_ids: Sequence[int]) -> Tracked:
    """Track a finished response token by token, as teacher forcing does (the sentences live decoding emits)."""
    tracker = SentenceTracker(tokenizer)
    sentences = tracker.add(token_ids) + tracker.finish()
    return Tracked(sentences, tracker.text, list(tracker.ids), list(tracker.token_ends))


class SentenceTracker:
    """Turns a growing list of response token ids into final sentences."""

    def __init__(self, tokenizer: PreTrainedTokenizerBase, language: str = "en", incremental: bool = True) -> None:
        """``incremental=False`` decodes every token again (:class:`~faithwatch.detok.IncrementalText`'s
        reference, for checks)."""
        self.tokenizer = tokenizer
        self._seg = segmenter(language)
        self._detok = IncrementalText(tokenizer, incremental=incremental)
        self.text = ""
        self._token_ends: list[int] = []  # character end offset of each token
        self._final_end = 0  # characters before this offset belong to final sentences
        self._count = 0

    def add(self, token_ids: Sequence[int]) -> list[Sentence]:
        """Add tokens one by one; return the sentences that became final."""
        done: list[Sentence] = []
        for token in token_ids:
            text = self._detok.add(token)
            new_from = self._resync(text)
            self._token_ends.append(len(text))
            if self._worth_splitting(text, new_from):
                done.extend(self._split(final=False))
        return done

    def _resync(self, text: str) -> int:
        """Take ``text`` as the decoded text; return where it starts to differ from the previous one (a decoder
        may rewrite earlier text): token ends beyond that point are pulled back to it."""
        new_from = len(self.text)
        if not text.startswith(self.text):
            new_from = len(_common_prefix(self.text, text))
            self._token_ends = [min(e, new_from) for e in self._token_ends]
        self.text = text
        return new_from

    def _worth_splitting(self, text: str, new_from: int) -> bool:
        """A possible sentence end after the final sentences that is new (from ``new_from`` on) or followed by 1 to
        RESPLIT_WORDS complete words (a sentence end waits for the next sentence's first complete word)."""
        last = -1
        for m in _BOUNDARY_CHARS.finditer(text, self._final_end):
            last = m.end()
        return last > new_from or (last >= 0 and 1 <= len(_COMPLETE_WORD.findall(text, last)) <= RESPLIT_WORDS)

    @property
    def ids(self) -> list[int]:
        """The response's token ids so far."""
        return self._detok.ids

    @property
    def final_end(self) -> int:
        """Characters of :attr:`text` that belong to final sentences."""
        return self._final_end

    def may_end(self, text: str) -> bool:
        """Whether ``text`` (the tracked text and what follows) holds a possible sentence end after the final
        sentences: only then can more text make a sentence final."""
        return bool(_BOUNDARY_CHARS.search(text, self._final_end))

    @property
    def token_ends(self) -> list[int]:
        """Character end offset of each token in :attr:`text`."""
        return self._token_ends

    def add_text(self, text: str) -> list[Sentence]:
        """Character mode (a tracker made without a tokenizer): add text; return the sentences that became final.

        "Tokens" are characters: ``token_start``/``token_end`` equal ``start``/``end``.
        """
        if self.tokenizer is not None:
            raise TypeError("add_text is for a tracker without a tokenizer; use add(token_ids)")
        begin = len(self.text)
        self.text += text
        self._token_ends.extend(range(begin + 1, len(self.text) + 1))
        return self._split(final=False) if _BOUNDARY_CHARS.search(self.text, self._final_end) else []

    @classmethod
    def split_text(cls, text: str, language: str = "en") -> list[Sentence]:
        """The sentences of a finished text, split as the tracker splits a generation that ended.

        Without a tokenizer, "tokens" are characters: ``token_start``/``token_end`` equal ``start``/``end``.
        """
        tracker = cls(None, language)  # type: ignore[arg-type]  # no decoding: the text is given whole
        tracker.text = text
        tracker._token_ends = list(range(1, len(text) + 1))
        return tracker.finish()

    def finish(self) -> list[Sentence]:
        """End of generation: every remaining sentence is final."""
        if self.tokenizer is not None and self.ids:  # the incremental text, checked once against a full decode
            full = self._detok.full()
            if full != self.text:
                self._resync(full)
                self._token_ends[-1] = len(full)
        return self._split(final=True)

    def _split(self, final: bool) -> list[Sentence]:
        tail = self.text[self._final_end :]
        if tail.endswith("\ufffd") and not final:  # an incomplete multi-byte character
            return []
        spans = [s for s in self._seg.segment(tail) if s.sent.strip()]
        if not final:
            if len(spans) < 2 or not _COMPLETE_WORD.search(tail[spans[-1].start :]):
                return []
            spans = spans[:-1]
        base = self._final_end
        out = [self._sentence(base + start, base + end) for start, end in sentence_spans(tail, pieces=spans)]
        if out:
            self._final_end = out[-1].end if final else self._final_end + spans[-1].end
        return out

    def _sentence(self, start: int, end: int) -> Sentence:
        ends = self._token_ends
        starts = [0, *ends[:-1]]
        tokens = [i for i, (s, e) in enumerate(zip(starts, ends, strict=True)) if e > start and s < end]
        sentence = Sentence(self._count, self.text[start:end], start, end, tokens[0], tokens[-1] + 1)
        self._count += 1
        return sentence


class GenerationRule:
    """:meth:`Monitor.generate <faithwatch.monitor.Monitor.generate>`'s rule (alone or as a live batch row): every
    token but EOS is fed, sentences come from a :class:`SentenceTracker`, the answer ends at EOS or after ``budget``
    tokens. ``take`` a chosen token (the sentences it closes, whether to feed it), then ``fed`` once it is fed."""

    def __init__(self, tokenizer, eos, budget: int) -> None:
        self.tracker = SentenceTracker(tokenizer)
        self.eos, self.budget = eos, budget
        self.stop = ""

    @property
    def done(self) -> bool:
        """Whether the answer has ended (``stop`` says why)."""
        return bool(self.stop)

    def take(self, token: int) -> tuple[list[Sentence], bool]:
        """Take a chosen token: the sentences it closes (all at EOS) and whether to feed it."""
        if token in self.eos:
            self.stop = "eos"
            return self.tracker.finish(), False
        return [], True

    def fed(self, token: int) -> list[Sentence]:
        """After a token is fed: the sentences it closes (the rest at the token budget)."""
        sentences = self.tracker.add([token])
        if len(self.tracker.ids) >= self.budget:
            self.stop = "max_new_tokens"
            sentences += self.tracker.finish()
        return sentences


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]
