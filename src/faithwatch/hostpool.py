"""Sentence tracking of teacher-forced records in worker processes (``Monitor.score_many(host_workers=N)``).

Tracking needs only a record's token ids and the tokenizer, so it can run before and during the forward passes,
on other CPU cores: on a GPU it is most of the host work that bounds batched scoring (docs/scale.md). pysbd is
pure Python, so threads would not run it in parallel; the workers are spawned processes (no fork of a process
that holds torch threads), each with its own copy of the tokenizer.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from faithwatch.errors import FaithwatchError, InputError
from faithwatch.sentences import Tracked, track

_tokenizer: Any = None  # the worker process's tokenizer


def _init(tokenizer: Any) -> None:
    global _tokenizer
    _tokenizer = tokenizer


def _track(token_ids: list[int]) -> Tracked:
    return track(_tokenizer, token_ids)


class TrackingPool:
    """``workers`` processes that track finished responses (:func:`faithwatch.sentences.track`)."""

    def __init__(self, tokenizer: Any, workers: int) -> None:
        if workers < 1:
            raise InputError(f"host workers must be at least 1, got {workers}")
        self.workers = workers
        self._executor = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_init, initargs=(tokenizer,))

    def submit(self, token_ids: Sequence[int]) -> Future[Tracked]:
        """Track one response in a worker; the future's result equals ``track(tokenizer, token_ids)``."""
        return self._executor.submit(_track, [int(t) for t in token_ids])

    @staticmethod
    def result(future: Future[Tracked]) -> Tracked:
        """A submitted response's tracking; a worker that could not start or died is reported as such."""
        try:
            return future.result()
        except BrokenProcessPool as exc:
            raise FaithwatchError(f"the sentence-tracking worker processes failed ({exc}); score without "
                                  "host workers (--host-workers 0)") from exc

    def close(self) -> None:
        """Stop the workers (pending work is cancelled)."""
        self._executor.shutdown(wait=True, cancel_futures=True)
