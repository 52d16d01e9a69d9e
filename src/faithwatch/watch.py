"""Scoring a response that arrives as text from another model (a served model's stream), sentence by sentence.

:class:`StreamWatch` is what ``faithwatch proxy`` keeps per stream. Each text piece is appended; the words that
can no longer change their tokenisation (everything before the last word) are tokenised and fed to the
monitor's engine by teacher forcing (the one engine path, with the no-context twin, lookback, LID and hidden
states as the signals declare), and the same sentence tracker as live decoding decides which sentences are
final. A final sentence is scored at once. Fed in any pieces, the sentences and features equal
:meth:`Monitor.score` of the whole text (a test checks this). Without a model (``Monitor("none")``), sentences are
split from the characters and only model-free signals run. Upstream log-probabilities, when reported, feed the
``api`` signal.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from faithwatch.errors import InputError
from faithwatch.models.records import TokenRecords
from faithwatch.results import MonitorResult, SentenceReport
from faithwatch.sentences import Sentence, SentenceTracker
from faithwatch.signals.base import UpstreamToken

if TYPE_CHECKING:
    from faithwatch.monitor import Monitor

_LAST_WORD = re.compile(r"\s\S*\Z")  # the whitespace before the last (possibly unfinished) word, to the end


def stable_end(text: str) -> int:
    """Characters of ``text`` whose tokens cannot change when more text follows: up to the whitespace before the
    last word (a word-level pre-tokeniser never merges across it)."""
    match = _LAST_WORD.search(text)
    return match.start() if match else 0


class StreamWatch:
    """One response being watched: :meth:`add` text pieces, then :meth:`finish`; each returns the sentences that
    became final, scored. ``latencies`` holds the seconds each sentence cost (teacher forcing and scoring the call
    that made it final, shared among the sentences it finalised), in order."""

    def __init__(self, monitor: Monitor, question: str, context: str, *, instruction: str | None = None,
                 reserve: int | None = None) -> None:
        self.monitor, self.question = monitor, question
        lm = monitor.lm
        self.prompts = monitor._prompts(question, context, reserve or monitor.max_new_tokens, instruction)
        self.context = self.prompts.context
        self.tracker = SentenceTracker(lm.tokenizer if lm is not None else None)  # type: ignore[arg-type]
        needs_run = lm is not None and not monitor.model_free
        self.session = monitor.engine.start(self.prompts) if needs_run else None
        self.text = ""
        self.upstream: list[UpstreamToken] = []
        self.reports: list[SentenceReport] = []
        self.latencies: list[float] = []
        self._fed_chars = 0
        self._fed_ids: list[int] = []
        self._finished = False

    @property
    def records(self) -> TokenRecords:
        """The token records of what has been fed."""
        return self.session.records if self.session is not None else TokenRecords(token_ids=list(self._fed_ids))

    def add(self, text: str, logprobs: Sequence[tuple[str, float, Sequence[float]]] = ()) -> list[SentenceReport]:
        """Append a piece of the response (and the upstream's ``(token, logprob, top_logprobs)`` for it)."""
        if self._finished:
            raise InputError("this response is finished; start another watch")
        at = self.upstream[-1].end if self.upstream else 0
        for token, logprob, top in logprobs:
            self.upstream.append(UpstreamToken(token, at, at + len(token), float(logprob), tuple(map(float, top))))
            at += len(token)
        self.text += text
        if not self.tracker.may_end(self.text):  # no sentence can end yet: feed later, in one chunk
            return []
        start = time.perf_counter()
        return self._timed(self._advance(stable_end(self.text)), start)

    def finish(self) -> list[SentenceReport]:
        """The response ended: every remaining sentence is final."""
        if self._finished:
            return []
        start = time.perf_counter()
        out = self._advance(len(self.text))
        self._finished = True
        return self._timed(out + self._score(self.tracker.finish()), start)

    def result(self, stop: str = "given") -> MonitorResult:
        """Everything scored so far, as :meth:`Monitor.score` returns it."""
        return self.monitor._result(self.question, self.context, self.tracker, self.reports, self.prompts,
                                    "streamed", stop, self.records)

    def _advance(self, end: int) -> list[SentenceReport]:
        if end <= self._fed_chars:
            return []
        piece = self.text[self._fed_chars : end]
        self._fed_chars = end
        lm = self.monitor.lm
        if lm is None:
            return self._score(self.tracker.add_text(piece))
        ids = list(lm.tokenizer(self.text[:end], add_special_tokens=False)["input_ids"])
        if ids[: len(self._fed_ids)] == self._fed_ids:
            new = ids[len(self._fed_ids) :]
        else:  # a tokeniser that re-merged across the cut: the new piece on its own
            new = list(lm.tokenizer(piece, add_special_tokens=False)["input_ids"])
        self._fed_ids += new
        if self.session is not None:
            from faithwatch.monitor import TEACHER_FORCING_CHUNK

            for i in range(0, len(new), TEACHER_FORCING_CHUNK):
                self.session.feed(new[i : i + TEACHER_FORCING_CHUNK])
        return self._score(self.tracker.add(new))

    def _score(self, sentences: list[Sentence]) -> list[SentenceReport]:
        if not sentences:
            return []
        reports = self.monitor._reports(sentences, self.records, self.question, self.context, self.upstream)
        self.reports += reports
        return reports

    def _timed(self, reports: list[SentenceReport], start: float) -> list[SentenceReport]:
        """Each sentence's latency: the call that made it final (feeding and scoring), shared among its
        sentences."""
        if reports:
            took = (time.perf_counter() - start) / len(reports)
            self.latencies += [took] * len(reports)
        return reports
