"""A bounded work pool with explicit admission, and cancellation tokens checked between tokens.

Admission is explicit: at most ``workers`` jobs run and at most ``queue_size`` wait; a job beyond that is
refused at once with :class:`QueueFullError` (the server answers 503 with ``Retry-After``), never parked
behind a hidden lock. The counters are what ``/healthz`` and the 503 body report.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


class Cancelled(Exception):
    """A job stopped early: the client went away or the request ran past its deadline."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class CancelToken:
    """Set by the request side (disconnect, timeout), checked by the worker (between tokens, records)."""

    def __init__(self, timeout_s: float | None = None) -> None:
        self._event = threading.Event()
        self.reason: str | None = None
        self.deadline = None if timeout_s is None else time.monotonic() + timeout_s

    def cancel(self, reason: str) -> None:
        """Ask the job to stop; the first reason wins."""
        if not self._event.is_set():
            self.reason = reason
            self._event.set()

    @property
    def cancelled(self) -> bool:
        """Whether the job was cancelled."""
        return self._event.is_set()

    def check(self) -> None:
        """Raise :class:`Cancelled` if the job was cancelled or its deadline has passed."""
        if not self._event.is_set() and self.deadline is not None and time.monotonic() > self.deadline:
            self.cancel("timeout")
        if self._event.is_set():
            raise Cancelled(self.reason or "cancelled")


class QueueFullError(Exception):
    """The pool is at capacity; ``stats`` and ``retry_after`` go into the 503 answer."""

    def __init__(self, stats: dict[str, Any], retry_after: int) -> None:
        taken, places = stats["waiting"] + stats["running"], stats["queue_size"] + stats["workers"]
        super().__init__(f"the work queue is full ({taken} of {places} places taken: {stats['workers']} "
                         f"worker(s) and {stats['queue_size']} waiting)")
        self.stats = stats
        self.retry_after = retry_after


class WorkPool:
    """``workers`` threads and a waiting room of ``queue_size`` jobs; :meth:`submit` refuses beyond that."""

    def __init__(self, workers: int = 1, queue_size: int = 8) -> None:
        if workers < 1 or queue_size < 0:
            raise ValueError("workers must be >= 1 and queue_size >= 0")
        self.workers = workers
        self.queue_size = queue_size
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="faithwatch-worker")
        self._lock = threading.Lock()
        self._admitted = 0  # waiting + running
        self._running = 0
        self._completed = 0
        self._rejected = 0
        self._mean_s: float | None = None  # moving average of job durations, for Retry-After

    def stats(self) -> dict[str, Any]:
        """Queue depth and limits, as reported by /healthz and in 503 bodies."""
        with self._lock:
            return self._stats()

    def _stats(self) -> dict[str, Any]:
        return {
            "waiting": self._admitted - self._running, "running": self._running, "queue_size": self.queue_size,
            "workers": self.workers, "completed": self._completed, "rejected": self._rejected,
            "mean_job_s": None if self._mean_s is None else round(self._mean_s, 4),
        }

    def submit(self, fn: Callable[[CancelToken], T], token: CancelToken) -> Future[T]:
        """Admit ``fn(token)`` or raise :class:`QueueFullError`; a job cancelled while waiting never runs."""
        with self._lock:
            if self._admitted >= self.workers + self.queue_size:
                self._rejected += 1
                stats = self._stats()
                waves = (stats["waiting"] + 1) / self.workers
                retry = max(1, math.ceil((self._mean_s or 1.0) * waves))
                raise QueueFullError(stats, retry)
            self._admitted += 1
        try:
            future = self._executor.submit(self._run, fn, token)
        except RuntimeError:  # shut down
            with self._lock:
                self._admitted -= 1
            raise
        future.add_done_callback(self._done)
        return future

    def _run(self, fn: Callable[[CancelToken], T], token: CancelToken) -> T:
        with self._lock:
            self._running += 1
        start = time.monotonic()
        try:
            token.check()  # cancelled or timed out while waiting: do not start
            return fn(token)
        finally:
            took = time.monotonic() - start
            with self._lock:
                self._running -= 1
                self._completed += 1
                self._mean_s = took if self._mean_s is None else 0.8 * self._mean_s + 0.2 * took

    def _done(self, _future: Future) -> None:
        with self._lock:
            self._admitted -= 1

    def shutdown(self) -> None:
        """Drop waiting jobs and stop taking new ones (running jobs finish on their own)."""
        self._executor.shutdown(wait=False, cancel_futures=True)
