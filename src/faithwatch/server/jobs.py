"""Model jobs of the HTTP API: admitted to the bounded work pool, awaited under the request timeout (503 when the
queue is full, 504 past the timeout, 499 when the client disconnects; other errors mapped by
:func:`~faithwatch.server.problems.problem_of`)."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

from fastapi import Request

from faithwatch.server.pool import CancelToken, QueueFullError, WorkPool
from faithwatch.server.problems import HTTPProblem, problem_of, queue_full


@dataclass
class JobRunner:
    """Runs request jobs on ``pool`` under ``request_timeout_s``."""

    pool: WorkPool
    request_timeout_s: float

    def timeout_problem(self) -> HTTPProblem:
        """504: the request ran past the timeout."""
        return HTTPProblem(504, "timeout", f"the request took longer than {self.request_timeout_s} s")

    async def run(self, fn: Callable[[CancelToken], Any], request: Request | None = None) -> Any:
        """Admit ``fn`` to the pool and await it under the request timeout (503 / 504 / mapped errors).

        With ``request`` the connection is polled while the job runs: a client that goes away cancels the token.
        """
        token = CancelToken(self.request_timeout_s)
        try:
            future = self.pool.submit(fn, token)
        except QueueFullError as exc:
            raise queue_full(exc) from None
        return await self.wait(future, token, request)

    async def wait(self, future: Future, token: CancelToken, request: Request | None) -> Any:
        """Await a job's future under the request timeout (504), polling ``request`` for a disconnect (499)."""
        waiter = asyncio.wrap_future(future)
        timeout = self.request_timeout_s
        deadline = time.monotonic() + timeout
        try:
            while True:
                if request is None:
                    return await asyncio.wait_for(asyncio.shield(waiter), timeout)
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise asyncio.TimeoutError
                with contextlib.suppress(asyncio.TimeoutError):
                    return await asyncio.wait_for(asyncio.shield(waiter), min(0.25, remaining))
                if await request.is_disconnected():
                    token.cancel("client disconnected")
                    raise HTTPProblem(499, "client_closed", "the client disconnected")
        except asyncio.TimeoutError:  # not the builtin before Python 3.11
            token.cancel("timeout")
            raise self.timeout_problem() from None
        except asyncio.CancelledError:
            token.cancel("client disconnected")
            raise
        except Exception as exc:  # noqa: BLE001 - mapped to an HTTP answer
            raise problem_of(exc) from None
