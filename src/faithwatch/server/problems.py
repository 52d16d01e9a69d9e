"""Error answers of the HTTP API: :class:`HTTPProblem` and the mapping of library errors to HTTP statuses."""

from __future__ import annotations

import logging
import math
from typing import Any

from fastapi.responses import JSONResponse

from faithwatch.errors import ContextTooLongError, FaithwatchError, InputError, ModelNotAvailableError
from faithwatch.server.pool import Cancelled, QueueFullError
from faithwatch.text.visible import escaped

log = logging.getLogger(__name__)


class HTTPProblem(Exception):
    """An error answer: status, machine-readable ``error`` and a human message (plus extra fields)."""

    def __init__(self, status: int, error: str, message: str, headers: dict[str, str] | None = None,
                 **extra: Any) -> None:
        super().__init__(message)
        self.status, self.error, self.message, self.headers, self.extra = status, error, message, headers, extra

    def response(self) -> JSONResponse:
        """The JSON answer: error, message and the extra fields, with the status and headers."""
        return JSONResponse({"error": self.error, "message": self.message, **self.extra}, status_code=self.status,
                            headers=self.headers)


def problem_of(exc: BaseException) -> HTTPProblem:
    """Map library errors to HTTP answers."""
    if isinstance(exc, HTTPProblem):
        return exc
    if isinstance(exc, Cancelled):
        return HTTPProblem(504, exc.reason, f"the request was stopped: {exc.reason}")
    if isinstance(exc, ContextTooLongError):
        return HTTPProblem(413, "context_too_long", str(exc))
    if isinstance(exc, InputError):
        return HTTPProblem(422, "invalid_input", str(exc))
    if isinstance(exc, ModelNotAvailableError):
        return HTTPProblem(503, "model_not_available", str(exc))
    if isinstance(exc, FaithwatchError):
        return HTTPProblem(500, type(exc).__name__, str(exc))
    log.exception("internal error", exc_info=exc)
    return HTTPProblem(500, "internal_error", f"{type(exc).__name__}: {exc}")


def queue_full(exc: QueueFullError) -> HTTPProblem:
    """503 with Retry-After: the work queue is full."""
    return HTTPProblem(503, "queue_full", str(exc), headers={"Retry-After": str(exc.retry_after)},
                       queue=exc.stats, retry_after_s=exc.retry_after)


def event_of(problem: HTTPProblem) -> dict[str, Any]:
    """The data of an SSE ``error`` event."""
    return {"error": problem.error, "message": problem.message, "status": problem.status}


def echoable(value: Any) -> Any:
    """``value`` as JSON can carry it, for echoes of rejected input: a non-finite float as a string (JSON has no
    NaN), a lone surrogate in a string or key as its escape ``\\ud800`` (UTF-8 cannot encode it)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str):
        return escaped(value)
    if isinstance(value, dict):
        return {echoable(k): echoable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [echoable(v) for v in value]
    return value
