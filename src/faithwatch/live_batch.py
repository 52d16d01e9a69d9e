"""Continuous batching of live generations: concurrent requests decode as rows of one engine batch.

A request joins the running batch between two tokens (its prompt is prefilled alone, then its KV cache is joined
to the batch's, :meth:`~faithwatch.models.engine.EngineSession.join`) and leaves when it ends: end of sequence,
its token budget, or an error of its own (a chooser that raises, e.g. a cancelled request). A row is either a
:meth:`Monitor.generate <faithwatch.monitor.Monitor.generate>` call or a one-beam decoding strategy (greedy,
abstain, cad, adacad: :func:`~faithwatch.decoding.strategies.generate`); every row computes what that call would
compute for it alone (tested), so its sentences, scores and result are the same; only the forward passes are shared.

One thread runs the batch. ``lock`` (optional) is held for each step, so other model work can interleave.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from faithwatch.decoding.loop import BeamStepper
from faithwatch.errors import InputError
from faithwatch.models.engine import EngineSession
from faithwatch.results import SentenceReport
from faithwatch.sentences import GenerationRule

if TYPE_CHECKING:
    from faithwatch.decoding.strategies import OneBeamPlan
    from faithwatch.models.prompts import PromptPair
    from faithwatch.monitor import Monitor, TokenChooser

#: a row's token choice from its main and (if the engine runs it) no-context next-token log-probs, [V] each
RowChooser = Callable[[torch.Tensor, "torch.Tensor | None"], int]


@dataclass
class _Row:
    """One request: its inputs, its rule (sentences and stop), its reports, and the future of its result."""

    question: str
    context: str
    budget: int
    choose: RowChooser
    on_sentence: Callable[[SentenceReport], None] | None
    future: Future[Any]
    on_start: Callable[[], None] | None = None
    plan: OneBeamPlan | None = None  # a one-beam strategy; None: Monitor.generate
    instruction: str | None = None  # None: the monitor's
    prompts: PromptPair | None = None
    rule: Any = None  # GenerationRule or BeamStepper, made when the row starts
    reports: list[SentenceReport] = field(default_factory=list)


class LiveBatch:
    """Runs many :meth:`Monitor.generate` calls and one-beam strategies as one batch that requests join and leave
    between tokens.

    ``max_rows``: rows decoded together (requests beyond wait in :attr:`waiting` until a row is free);
    ``lock``: held around each step (prefills and one token for every row).
    """

    def __init__(self, monitor: Monitor, *, max_rows: int = 16, lock: threading.Lock | None = None) -> None:
        if monitor.lm is None:
            raise InputError("live batching needs a monitor with a language model")
        if max_rows < 1:
            raise InputError(f"max_rows must be at least 1, got {max_rows}")
        self.monitor = monitor
        self.max_rows = max_rows
        self._lock = lock
        self._waiting: deque[_Row] = deque()
        self._rows: list[_Row] = []
        self._session: EngineSession | None = None
        self._wake = threading.Condition()
        self._closed = False
        self._thread: threading.Thread | None = None
        #: forward steps run and rows decoded in them (their ratio is the mean batch size)
        self.steps = 0
        self.row_steps = 0

    # --- public -------------------------------------------------------------------------------------------
    def submit(self, question: str, context: str, *, max_new_tokens: int | None = None, choose: TokenChooser | None
               = None, on_sentence: Callable[[SentenceReport], None] | None = None,
               on_start: Callable[[], None] | None = None, instruction: str | None = None) -> Future:
        """Queue a generation; the future holds its :class:`MonitorResult` (or the error that stopped it).
        From the batch thread: ``on_start`` when it gets a row (it may raise to drop the request, e.g. one
        cancelled while waiting), ``on_sentence`` with each sentence the moment it is final. ``instruction``
        as in :meth:`Monitor.generate`."""
        from faithwatch.monitor import greedy

        budget = self.monitor.max_new_tokens if max_new_tokens is None else max_new_tokens
        if budget < 1:
            raise InputError(f"max_new_tokens must be at least 1, got {budget}")
        pick = choose or greedy
        return self._queue(_Row(question, context, budget, lambda logp, _twin: pick(logp), on_sentence, Future(),
                                on_start, instruction=instruction))

    def submit_strategy(self, question: str, context: str, plan: OneBeamPlan, *,
                        check: Callable[[], None] | None = None, on_start: Callable[[], None] | None = None,
                        instruction: str | None = None) -> Future:
        """Queue a one-beam decoding strategy (:func:`~faithwatch.decoding.strategies.one_beam_plan`); the future
        holds its :class:`~faithwatch.decoding.types.DecodingResult`, equal to what
        :func:`~faithwatch.decoding.strategies.generate` returns. ``check`` runs before each of its tokens and may
        raise to drop it (e.g. its client went away); ``on_start`` and ``instruction`` as in :meth:`submit`."""

        def choose(logp: torch.Tensor, twin: torch.Tensor | None) -> int:
            if check is not None:
                check()
            return int(plan.chooser(logp[None], None if twin is None else twin[None])[0])

        return self._queue(_Row(question, context, plan.params.max_new_tokens, choose, None, Future(), on_start, plan,
                                instruction))

    def _queue(self, row: _Row) -> Future:
        with self._wake:
            if self._closed:
                raise RuntimeError("this batch is closed")
            self._waiting.append(row)
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="faithwatch-live-batch", daemon=True)
                self._thread.start()
            self._wake.notify()
        return row.future

    @property
    def rows(self) -> int:
        """Requests decoding now."""
        return len(self._rows)

    @property
    def waiting(self) -> int:
        """Requests waiting for a free row."""
        return len(self._waiting)

    def close(self) -> None:
        """Stop taking requests; the batch thread ends when its rows and waiting requests are done."""
        with self._wake:
            self._closed = True
            self._wake.notify()

    # --- the batch thread ----------------------------------------------------------------------------------
    def _loop(self) -> None:
        while True:
            with self._wake:
                while not self._waiting and not self._rows:
                    if self._closed:
                        return
                    self._wake.wait()
            try:
                if self._lock is not None:
                    with self._lock:
                        self._step()
                else:
                    self._step()
            except BaseException as exc:  # noqa: BLE001 - a failed forward pass fails its rows, not the thread
                for row in self._rows:
                    _fail(row, exc)
                self._rows, self._session = [], None

    def _admit(self) -> None:
        """Give free rows to waiting requests: their prompts are prefilled together, then joined to the batch."""
        group: list[_Row] = []
        while len(self._rows) + len(group) < self.max_rows:
            with self._wake:
                if not self._waiting:
                    break
                row = self._waiting.popleft()
            if not row.future.set_running_or_notify_cancel():
                continue
            try:
                if row.on_start is not None:
                    row.on_start()
                row.prompts = self.monitor._prompts(row.question, row.context, row.budget, row.instruction)
            except BaseException as exc:  # noqa: BLE001 - this request's error
                _fail(row, exc)
                continue
            row.context = row.prompts.context  # cut with truncate_context: alignment sees what the model saw
            row.rule = self._rule(row)
            group.append(row)
        if not group:
            return
        try:
            session = self.monitor.engine.start_many([row.prompts for row in group])
        except BaseException as exc:  # noqa: BLE001 - these requests' error
            for row in group:
                _fail(row, exc)
            return
        if self._session is None:
            self._session = session
        else:
            self._session.join(session)
        self._rows.extend(group)

    def _rule(self, row: _Row) -> Any:
        lm = self.monitor.lm
        if row.plan is None:
            return GenerationRule(lm.tokenizer, lm.eos_token_ids, row.budget)
        return BeamStepper(lm.tokenizer, lm.eos_token_ids, row.budget, row.plan.params.max_sentence_tokens)

    def _step(self) -> None:
        """Admit waiting requests, then choose and feed one token for every row."""
        self._admit()
        if not self._rows:
            return
        session = self._session
        logp = session.branch_logprobs()
        twin = session.branch_twin_logprobs() if session.needs.twin else None
        keep, tokens, closed, ending = [], [], [], []
        for b, row in enumerate(self._rows):
            try:
                token = row.choose(logp[b], None if twin is None else twin[b])
                sentences, feed = row.rule.take(token)
            except BaseException as exc:  # noqa: BLE001 - this row's error (e.g. its request was cancelled)
                _fail(row, exc)
                continue
            if feed:
                keep.append(b)
                tokens.append(token)
                closed.append(sentences)
            else:  # it ends here: score what is left with its records as they are
                ending.append((row, sentences, session.branch_records[b]))
        self._retain(keep)
        if tokens:
            self._session.feed_branches(tokens)
            self.steps += 1
            self.row_steps += len(tokens)
        groups = [(sentences, records, row.question, row.context) for row, sentences, records in ending]
        fed = list(zip(self._rows, tokens, closed, strict=True))
        for row, token, before in fed:
            before.extend(row.rule.fed(token))
        groups += [(before, self._session.branch_records[b], row.question, row.context)
                   for b, (row, _token, before) in enumerate(fed)]
        rows = [row for row, *_ in ending] + self._rows
        for row, group, reports in zip(rows, groups, self.monitor._reports_each(groups), strict=True):
            if isinstance(reports, BaseException):
                _fail(row, reports)
                continue
            self._emit(row, reports)
            if row.rule.done:
                self._resolve(row, group[1])
        self._retain([b for b, row in enumerate(self._rows) if not row.future.done()])

    @staticmethod
    def _emit(row: _Row, reports: list[SentenceReport]) -> None:
        for report in reports:
            row.reports.append(report)
            if row.on_sentence is not None:
                row.on_sentence(report)

    def _retain(self, keep: list[int]) -> None:
        """Keep these rows (indices into the current rows); the batch shrinks (and its cache is trimmed)."""
        if len(keep) == len(self._rows):
            return
        self._rows = [self._rows[b] for b in keep]
        if not keep:
            self._session = None
            return
        self._session.select(keep)
        self._session.trim()

    def _resolve(self, row: _Row, records) -> None:
        try:
            if row.plan is None:
                result = self.monitor._result(row.question, row.context, row.rule.tracker, row.reports, row.prompts,
                                              "live", row.rule.stop, records)
            else:
                result = row.plan.result(self.monitor, row.prompts, list(row.rule.ids), row.reports, row.rule.stop)
        except BaseException as exc:  # noqa: BLE001
            _fail(row, exc)
            return
        row.future.set_result(result)


def _fail(row: _Row, exc: BaseException) -> None:
    if not row.future.done():
        row.future.set_exception(exc)
