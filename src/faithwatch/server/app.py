"""The faithwatch HTTP API (FastAPI): live monitoring as Server-Sent Events, scoring, guided decoding, claims.

Concurrency, explicitly:

* every model job goes through one bounded :class:`~faithwatch.server.pool.WorkPool` — ``workers`` threads and
  at most ``queue_size`` waiting jobs. A request beyond that is answered **503** with ``Retry-After`` and a JSON
  body giving the queue depth and limits; nothing waits silently behind a lock.
* the model itself is not thread-safe for concurrent decoding, so model calls hold ``model_lock`` inside the
  worker. With ``workers > 1`` the extra workers serve jobs that do not need the model (``/v1/check``) while
  a model job runs; model jobs themselves run one at a time, in admission order.
* ``/healthz`` reports the queue (waiting, running, limits, rejected, mean job time).

Limits: request bodies above ``max_body_bytes`` get **413** (Content-Length or the streamed length);
a context above ``max_context_tokens`` gets **413**; a request past ``request_timeout_s`` gets **504** (or an
``error`` event on a stream). A client that disconnects from ``/v1/monitor`` stops its generation before the
next token, and one that disconnects from ``/v1/generate`` stops its decoding search before the next forward
step (the server polls the connection while the job runs). ``/v1/score`` stops between records; ``/v1/check``
is only dropped if it is still waiting when cancelled (a running check finishes, its result is discarded).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any

import torch
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse

from faithwatch._version import __version__
from faithwatch.alignment import CHECK_SCORER, plain_specs
from faithwatch.errors import ContextTooLongError, FaithwatchError, InputError, ModelNotAvailableError
from faithwatch.server.limits import BodyLimitMiddleware
from faithwatch.server.pool import Cancelled, CancelToken, QueueFullError, WorkPool
from faithwatch.server.schemas import CheckRequest, GenerateRequest, MonitorRequest, ScoreRequest

log = logging.getLogger(__name__)

_KEEPALIVE_S = 10.0


class HTTPProblem(Exception):
    """An error answer: status, machine-readable ``error`` and a human message (plus extra fields)."""

    def __init__(self, status: int, error: str, message: str, headers: dict[str, str] | None = None,
                 **extra: Any) -> None:
        super().__init__(message)
        self.status, self.error, self.message, self.headers, self.extra = status, error, message, headers, extra

    def response(self) -> JSONResponse:
        return JSONResponse({"error": self.error, "message": self.message, **self.extra}, status_code=self.status,
                            headers=self.headers)


def _problem_of(exc: BaseException) -> HTTPProblem:
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


def _queue_full(exc: QueueFullError) -> HTTPProblem:
    return HTTPProblem(503, "queue_full", str(exc), headers={"Retry-After": str(exc.retry_after)},
                       queue=exc.stats, retry_after_s=exc.retry_after)


def _sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, allow_nan=False)}\n\n".encode()


def _sampler(temperature: float, seed: int) -> Callable[[torch.Tensor], int]:
    if temperature <= 0:
        return lambda logp: int(torch.argmax(logp))
    generator = torch.Generator().manual_seed(seed)

    def sample(logp: torch.Tensor) -> int:
        probs = torch.softmax(logp.float() / temperature, dim=-1)
        return int(torch.multinomial(probs, 1, generator=generator))

    return sample


def create_app(
    monitor: Any = None,
    *,
    max_body_bytes: int = 1_000_000,
    max_context_tokens: int | None = None,
    max_new_tokens: int = 512,
    max_records: int = 64,
    queue_size: int = 8,
    workers: int = 1,
    request_timeout_s: float = 120.0,
    check_alignment: str = CHECK_SCORER,
) -> FastAPI:
    """Build the app around a :class:`~faithwatch.monitor.Monitor`.

    ``monitor``: a Monitor, a zero-argument callable returning one (e.g. ``Monitor`` itself, or a
    ``functools.partial`` of it), or ``None`` for ``Monitor()`` (the embedded model). It is built at once.
    ``max_new_tokens`` caps what a request may ask for; ``max_records`` caps a /v1/score batch;
    ``check_alignment`` is the default scorer of ``/v1/check``.
    """
    if monitor is None:
        from faithwatch.monitor import Monitor

        monitor = Monitor
    if callable(monitor) and not hasattr(monitor, "lm"):
        monitor = monitor()
    if check_alignment not in plain_specs():
        raise InputError(f"check_alignment must be one of {', '.join(plain_specs())}")
    pool = WorkPool(workers=workers, queue_size=queue_size)
    model_lock = threading.Lock()
    check_lock = threading.Lock()
    checkers: dict[tuple, Any] = {}
    limits = {"max_body_bytes": max_body_bytes, "max_context_tokens": max_context_tokens,
              "max_new_tokens": max_new_tokens, "max_records": max_records, "request_timeout_s": request_timeout_s}

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        pool.shutdown()

    app = FastAPI(
        title="faithwatch", version=__version__, lifespan=lifespan,
        description="Faithfulness monitoring of retrieval-augmented generation. Limits: "
                    f"{json.dumps(limits)}. A full work queue answers 503 with Retry-After.",
    )
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=max_body_bytes)
    app.state.monitor, app.state.pool, app.state.limits = monitor, pool, limits

    @app.exception_handler(HTTPProblem)
    async def _on_problem(_request: Request, exc: HTTPProblem) -> JSONResponse:
        return exc.response()

    # --- helpers ---------------------------------------------------------------------------------------------
    def check_context(context: str) -> None:
        if max_context_tokens is None:
            return
        n = len(monitor.lm.tokenizer(context, add_special_tokens=False)["input_ids"])
        if n > max_context_tokens:
            raise HTTPProblem(413, "context_too_long", f"the context has {n} tokens; this server accepts at most "
                              f"{max_context_tokens}", context_tokens=n, max_context_tokens=max_context_tokens)

    def check_new_tokens(n: int | None) -> None:
        if n is not None and n > max_new_tokens:
            raise HTTPProblem(422, "invalid_input", f"max_new_tokens={n} is above this server's limit "
                              f"{max_new_tokens}")

    async def run_job(fn: Callable[[CancelToken], Any], request: Request | None = None) -> Any:
        """Admit ``fn`` to the pool and await it under the request timeout (503 / 504 / mapped errors).

        With ``request`` the connection is polled while the job runs: a client that goes away cancels the token.
        """
        token = CancelToken(request_timeout_s)
        try:
            future = pool.submit(fn, token)
        except QueueFullError as exc:
            raise _queue_full(exc) from None
        waiter = asyncio.wrap_future(future)
        deadline = time.monotonic() + request_timeout_s
        try:
            while True:
                if request is None:
                    return await asyncio.wait_for(asyncio.shield(waiter), request_timeout_s)
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
            raise HTTPProblem(504, "timeout", f"the request took longer than {request_timeout_s} s") from None
        except asyncio.CancelledError:
            token.cancel("client disconnected")
            raise
        except Exception as exc:  # noqa: BLE001 - mapped to an HTTP answer
            raise _problem_of(exc) from None

    # --- pages and health -------------------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index() -> HTMLResponse:
        page = resources.files("faithwatch.server").joinpath("static/index.html").read_text(encoding="utf-8")
        return HTMLResponse(page)

    @app.get("/healthz", summary="Model, detector, queue depth and limits")
    async def healthz() -> dict[str, Any]:
        detector = getattr(monitor, "detector", None)
        alignment = getattr(monitor, "alignment", None)
        return {
            "status": "ok", "version": __version__, "model_id": monitor.lm.model_id,
            "detector": getattr(detector, "name", None), "threshold": getattr(detector, "threshold", None),
            "alignment": getattr(alignment, "name", None), "queue": pool.stats(), "limits": limits,
            "model_calls": "serialised by one lock inside the workers; admission is the bounded queue",
        }

    # --- live monitoring (SSE) ---------------------------------------------------------------------------------
    @app.post("/v1/monitor", summary="Generate and stream scored sentences (text/event-stream)",
              response_class=StreamingResponse,
              responses={200: {"content": {"text/event-stream": {}},
                               "description": "events: start, sentence, summary, error"}})
    async def monitor_stream(body: MonitorRequest, request: Request) -> StreamingResponse:
        check_context(body.context)
        check_new_tokens(body.max_new_tokens)
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        token = CancelToken(request_timeout_s)
        admitted = time.monotonic()

        def push(kind: str, data: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone (server shutting down)
                loop.call_soon_threadsafe(events.put_nowait, (kind, data))

        def job(tok: CancelToken) -> None:
            push("start", {"queue_wait_s": round(time.monotonic() - admitted, 4)})
            base = _sampler(body.temperature, body.seed)

            def choose(logp: torch.Tensor) -> int:
                tok.check()  # disconnect / timeout: stop before the next token
                return base(logp)

            try:
                with model_lock:
                    tok.check()
                    result = monitor.generate(
                        body.question, body.context, max_new_tokens=body.max_new_tokens, choose=choose,
                        on_sentence=lambda report: push("sentence", report.to_dict(vectors=False)),
                    )
                summary = result.to_dict(vectors=False)
                for key in ("sentences", "context", "question"):
                    summary.pop(key, None)
                summary["elapsed_s"] = round(time.monotonic() - admitted, 4)
                push("summary", summary)
            except Exception as exc:  # noqa: BLE001 - reported on the stream
                problem = _problem_of(exc)
                push("error", {"error": problem.error, "message": problem.message, "status": problem.status})

        try:
            future = pool.submit(job, token)
        except QueueFullError as exc:
            raise _queue_full(exc) from None
        future.add_done_callback(lambda f: f.cancelled() and push("error", {"error": "cancelled", "status": 503,
                                                                           "message": "the server is stopping"}))

        async def stream() -> AsyncIterator[bytes]:
            idle = 0.0
            try:
                while True:
                    try:
                        kind, data = await asyncio.wait_for(events.get(), timeout=0.25)
                    except asyncio.TimeoutError:  # not the builtin before Python 3.11
                        if await request.is_disconnected():
                            token.cancel("client disconnected")
                            return
                        idle += 0.25
                        if idle >= _KEEPALIVE_S:
                            idle = 0.0
                            yield b": keepalive\n\n"
                        continue
                    idle = 0.0
                    yield _sse(kind, data)
                    if kind in ("summary", "error"):
                        return
            finally:  # closed early (disconnect, cancellation): stop the generation
                token.cancel("client disconnected")

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    # --- teacher forcing ----------------------------------------------------------------------------------------
    @app.post("/v1/score", summary="Score given responses by teacher forcing (a batch; per-record errors)")
    async def score(body: ScoreRequest) -> dict[str, Any]:
        if len(body.records) > max_records:
            raise HTTPProblem(413, "too_many_records", f"{len(body.records)} records; at most {max_records} per "
                              "request")

        def one(record) -> dict[str, Any]:
            problems = record.problems()
            if problems:
                raise InputError("; ".join(problems))
            check_context(record.context)
            with model_lock:
                extra = {} if record.instruction is None else {"instruction": record.instruction}
                return monitor.score(record.question, record.context, record.response, **extra).to_dict(vectors=False)

        def job(tok: CancelToken) -> list[dict[str, Any]]:
            out = []
            for record in body.records:
                tok.check()
                try:
                    out.append({"id": record.id, "ok": True, "result": one(record)})
                except Cancelled:
                    raise
                except Exception as exc:  # noqa: BLE001 - per-record error
                    problem = _problem_of(exc)
                    out.append({"id": record.id, "ok": False,
                                "error": {"error": problem.error, "message": problem.message,
                                          "status": problem.status}})
            return out

        results = await run_job(job)
        ok = sum(r["ok"] for r in results)
        return {"results": results, "ok": ok, "failed": len(results) - ok}

    # --- guided decoding ------------------------------------------------------------------------------------------
    @app.post("/v1/generate", summary="Answer with a decoding strategy; returns the answer and its trace")
    async def generate(body: GenerateRequest, request: Request) -> dict[str, Any]:
        check_context(body.context)
        check_new_tokens(body.max_new_tokens)
        from faithwatch.decoding.strategies import generate as run_strategy

        params = body.model_dump(exclude={"question", "context", "strategy"}, exclude_unset=True)  # strategy defaults

        def job(tok: CancelToken) -> dict[str, Any]:
            with model_lock:
                tok.check()
                engine = getattr(monitor, "engine", None)
                if engine is not None:
                    engine.before_step = tok.check  # disconnect / timeout: stop before the next forward step
                try:
                    result = run_strategy(monitor, body.question, body.context, body.strategy, **params)
                finally:
                    if engine is not None:
                        engine.before_step = None
            return result.to_dict(vectors=False)

        return await run_job(job, request)

    # --- claims --------------------------------------------------------------------------------------------------
    @app.post("/v1/check", summary="Extract claims and check each against the context(s)")
    async def check(body: CheckRequest) -> dict[str, Any]:
        from faithwatch.claims.checking import CheckerSpec, get_checker
        from faithwatch.claims.extraction import get_extractor
        from faithwatch.claims.pipeline import check_response

        alignment = body.alignment or check_alignment
        if alignment not in plain_specs():  # no arbitrary model ids from clients
            raise HTTPProblem(422, "invalid_input", f"alignment must be one of {', '.join(plain_specs())}")
        for passage in [body.contexts] if isinstance(body.contexts, str) else body.contexts:
            check_context(passage)
        key = (alignment, body.entail_threshold, body.contradict_threshold)

        def job(tok: CancelToken) -> dict[str, Any]:
            with check_lock:
                tok.check()
                if key not in checkers:
                    device = str(getattr(monitor.lm, "device", "cpu"))
                    checkers[key] = get_checker(CheckerSpec(
                        kind="alignment", alignment=alignment, entail_threshold=body.entail_threshold,
                        contradict_threshold=body.contradict_threshold, device=device))
                result = check_response(body.response, body.contexts, get_extractor(body.extractor), checkers[key],
                                        question=body.question, aggregation=body.aggregation)
            return result.to_dict()

        return await run_job(job)

    return app

