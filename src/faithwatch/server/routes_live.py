"""The model routes of the HTTP API: ``/v1/monitor`` (live monitoring as Server-Sent Events), ``/v1/score``
(teacher forcing, a batch with per-record errors) and ``/v1/generate`` (a decoding strategy); one-beam requests are
rows of the live batch when the server has one (see :mod:`faithwatch.server.app`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from typing import Any

import torch
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse

from faithwatch.errors import InputError
from faithwatch.server.chat import sampler
from faithwatch.server.jobs import JobRunner
from faithwatch.server.pool import Cancelled, CancelToken, QueueFullError
from faithwatch.server.problems import HTTPProblem, event_of, problem_of, queue_full
from faithwatch.server.schemas import GenerateRequest, MonitorRequest, ScoreRequest
from faithwatch.server.state import ServerState

_KEEPALIVE_S = 10.0
#: a stream whose job has sent no ``summary`` / ``error`` this long after the request timeout is ended by the
#: server with a ``timeout`` error event (the job itself stops at the timeout, before its next token)
_STREAM_GRACE_S = 1.0


def _stream_summary(result: Any, admitted: float) -> dict[str, Any]:
    """The ``summary`` event of a /v1/monitor stream: the result without what the stream already sent."""
    summary = result.to_dict(vectors=False)
    for key in ("sentences", "context", "question"):
        summary.pop(key, None)
    summary["elapsed_s"] = round(time.monotonic() - admitted, 4)
    return summary


def _sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, allow_nan=False)}\n\n".encode()



async def _event_stream(events: asyncio.Queue, request: Request, token: CancelToken, deadline: float,
                        jobs: JobRunner) -> AsyncIterator[bytes]:
    """A /v1/monitor job's events as Server-Sent Events until its ``summary`` or ``error``, with keep-alives; ends
    with a ``timeout`` error a grace after ``deadline`` (monotonic) and stops the job when the client goes."""
    idle = 0.0
    try:
        while True:
            # the timeout holds whatever the job does (waiting in the queue, stuck): the job stops itself at the
            # deadline; a grace later the stream ends on its own
            left = deadline + _STREAM_GRACE_S - time.monotonic()
            if left <= 0:
                token.cancel("timeout")
                yield _sse("error", event_of(jobs.timeout_problem()))
                return
            try:
                kind, data = await asyncio.wait_for(events.get(), timeout=min(0.25, left))
            except asyncio.TimeoutError:  # not the builtin before Python 3.11
                if await request.is_disconnected():
                    token.cancel("client disconnected")
                    return
                idle += min(0.25, left)
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


def add_live_routes(app: FastAPI, state: ServerState, v1: dict[str, Any]) -> None:
    """Add ``/v1/monitor``, ``/v1/score`` and ``/v1/generate`` to ``app`` (``v1``: the routes' common options)."""
    _add_monitor(app, state, v1)
    _add_score(app, state, v1)
    _add_generate(app, state, v1)


def _admit_live(state: ServerState, submit: Callable[[], Future]) -> Future:
    """Submit a row to the live batch, or answer 503 when its rows and ``queue_size`` waiting places are taken."""
    live = state.live
    if live.rows + live.waiting >= live.max_rows + state.queue_size:
        stats = {"waiting": live.waiting, "running": live.rows, "queue_size": state.queue_size,
                 "workers": live.max_rows, "rows_in_flight": live.rows}
        raise queue_full(QueueFullError(stats, retry_after=1))
    return submit()


# --- live monitoring (SSE) -------------------------------------------------------------------------------------
def _add_monitor(app: FastAPI, state: ServerState, v1: dict[str, Any]) -> None:
    """``/v1/monitor``: a pool job, or a row of the live batch when the server has one; the same events either way."""
    guard, jobs = state.guard, state.jobs

    @app.post("/v1/monitor", summary="Generate and stream scored sentences (text/event-stream)",
              response_class=StreamingResponse, **v1,
              responses={200: {"content": {"text/event-stream": {}},
                               "description": "events: start, sentence, summary, error"}})
    async def monitor_stream(body: MonitorRequest, request: Request) -> StreamingResponse:
        guard.check_context(body.context)
        guard.check_new_tokens(body.max_new_tokens)
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        token = CancelToken(jobs.request_timeout_s)
        admitted = time.monotonic()

        def push(kind: str, data: Any) -> None:
            if kind == "sentence":
                state.recent.add([data.get("score")])
            with contextlib.suppress(RuntimeError):  # the loop is gone (server shutting down)
                loop.call_soon_threadsafe(events.put_nowait, (kind, data))

        if state.live is None:
            _submit_monitor_job(state, body, token, push, admitted)
        else:
            _submit_monitor_row(state, body, token, push, admitted)
        return StreamingResponse(_event_stream(events, request, token, admitted + jobs.request_timeout_s, jobs),
                                 media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


def _submit_monitor_job(state: ServerState, body: MonitorRequest, token: CancelToken,
                        push: Callable[[str, Any], None], admitted: float) -> None:
    """A /v1/monitor stream as a job of the work pool: every failure is the stream's last event."""

    def job(tok: CancelToken) -> None:
        push("start", {"queue_wait_s": round(time.monotonic() - admitted, 4)})
        try:  # every failure of the job is the stream's last event
            base = sampler(body.temperature, body.seed)

            def choose(logp: torch.Tensor) -> int:
                tok.check()  # disconnect / timeout: stop before the next token
                return base(logp)

            with state.model_lock:
                tok.check()
                result = state.monitor.generate(
                    body.question, body.context, max_new_tokens=body.max_new_tokens, choose=choose,
                    on_sentence=lambda report: push("sentence", report.to_dict(vectors=False)),
                    **({} if body.instruction is None else {"instruction": body.instruction}),
                )
            push("summary", _stream_summary(result, admitted))
        except Exception as exc:  # noqa: BLE001 - reported on the stream
            push("error", event_of(problem_of(exc)))

    def on_done(future: Future) -> None:
        """The failures that ``job`` cannot report: dropped by a shutdown, or stopped before it ran (the
        pool raises :class:`Cancelled` for a job that timed out or lost its client while waiting)."""
        if future.cancelled():
            push("error", {"error": "cancelled", "status": 503, "message": "the server is stopping"})
        elif future.exception() is not None:
            push("error", event_of(problem_of(future.exception())))

    try:
        future = state.pool.submit(job, token)
    except QueueFullError as exc:
        raise queue_full(exc) from None
    future.add_done_callback(on_done)


def _submit_monitor_row(state: ServerState, body: MonitorRequest, token: CancelToken,
                        push: Callable[[str, Any], None], admitted: float) -> None:
    """A /v1/monitor stream as a row of the live batch: the same events as a pool job."""
    base = sampler(body.temperature, body.seed)

    def started() -> None:
        token.check()  # cancelled or timed out while waiting: never starts
        push("start", {"queue_wait_s": round(time.monotonic() - admitted, 4)})

    def choose(logp: torch.Tensor) -> int:
        token.check()  # disconnect / timeout: the row leaves before its next token
        return base(logp)

    def done(future: Future) -> None:
        exc = future.exception()
        if exc is not None:
            push("error", event_of(problem_of(exc)))
            return
        push("summary", _stream_summary(future.result(), admitted))

    _admit_live(state, lambda: state.live.submit(
        body.question, body.context, max_new_tokens=body.max_new_tokens, choose=choose, on_start=started,
        on_sentence=lambda report: push("sentence", report.to_dict(vectors=False)),
        instruction=body.instruction)).add_done_callback(done)


# --- teacher forcing ----------------------------------------------------------------------------------------------
def _add_score(app: FastAPI, state: ServerState, v1: dict[str, Any]) -> None:
    """``/v1/score``: a batch of records in one pool job, each answered with its result or its own error."""

    @app.post("/v1/score", summary="Score given responses by teacher forcing (a batch; per-record errors)", **v1)
    async def score(body: ScoreRequest) -> dict[str, Any]:
        if len(body.records) > state.max_records:
            raise HTTPProblem(413, "too_many_records", f"{len(body.records)} records; at most {state.max_records} "
                              "per request")

        def job(tok: CancelToken) -> list[dict[str, Any]]:
            out = []
            for record in body.records:
                tok.check()
                try:
                    out.append({"id": record.id, "ok": True, "result": _score_one(state, record)})
                except Cancelled:
                    raise
                except Exception as exc:  # noqa: BLE001 - per-record error
                    problem = problem_of(exc)
                    out.append({"id": record.id, "ok": False,
                                "error": {"error": problem.error, "message": problem.message,
                                          "status": problem.status}})
            return out

        results = await state.jobs.run(job)
        ok = sum(r["ok"] for r in results)
        return {"results": results, "ok": ok, "failed": len(results) - ok}


def _score_one(state: ServerState, record: Any) -> dict[str, Any]:
    """One /v1/score record's result (an :class:`InputError` for a blank field or a context over the limit)."""
    problems = record.problems()
    if problems:
        raise InputError("; ".join(problems))
    state.guard.check_context(record.context)
    with state.model_lock:
        extra = {} if record.instruction is None else {"instruction": record.instruction}
        result = state.monitor.score(record.question, record.context, record.response, **extra).to_dict(vectors=False)
    state.recent.add_sentences(result)
    return result


# --- guided decoding ----------------------------------------------------------------------------------------------
def _add_generate(app: FastAPI, state: ServerState, v1: dict[str, Any]) -> None:
    """``/v1/generate``: a one-beam strategy as a row of the live batch when the server has one, else a pool job."""
    guard = state.guard

    @app.post("/v1/generate", summary="Answer with a decoding strategy; returns the answer and its trace",
              **v1)
    async def generate(body: GenerateRequest, request: Request) -> dict[str, Any]:
        guard.check_context(body.context)
        # unset parameters: the strategy's defaults, the token budget within the server's limit
        params = body.model_dump(exclude={"question", "context", "strategy", "instruction"}, exclude_unset=True)
        params.setdefault("max_new_tokens", min(body.max_new_tokens, guard.max_new_tokens))
        guard.check_new_tokens(params["max_new_tokens"])
        if state.live is not None:
            result = await _generate_row(state, body, params, request)
            if result is not None:
                return result
        return await state.jobs.run(lambda tok: _generate_job(state, body, params, tok), request)


async def _generate_row(state: ServerState, body: GenerateRequest, params: dict[str, Any],
                        request: Request) -> dict[str, Any] | None:
    """A one-beam strategy (greedy, abstain, cad, adacad) as a row of the live batch; None for another strategy."""
    from faithwatch.decoding.strategies import one_beam_plan

    try:
        plan = one_beam_plan(body.strategy, **params)
    except Exception as exc:  # noqa: BLE001 - bad parameters: the same answer as a pool job's
        raise problem_of(exc) from None
    if plan is None:
        return None
    token = CancelToken(state.jobs.request_timeout_s)
    future = _admit_live(state, lambda: state.live.submit_strategy(
        body.question, body.context, plan, check=token.check, on_start=token.check, instruction=body.instruction))
    done = await state.jobs.wait(future, token, request)
    result = done.to_dict(vectors=False)
    state.recent.add_sentences(result)
    return result


def _generate_job(state: ServerState, body: GenerateRequest, params: dict[str, Any],
                  tok: CancelToken) -> dict[str, Any]:
    """A strategy run in the work pool, stopped before the next forward step on disconnect or timeout."""
    from faithwatch.decoding.strategies import generate as run_strategy

    with state.model_lock:
        tok.check()
        engine = getattr(state.monitor, "engine", None)
        if engine is not None:
            engine.before_step = tok.check  # disconnect / timeout: stop before the next forward step
        try:
            result = run_strategy(state.monitor, body.question, body.context, body.strategy,
                                  instruction=body.instruction, **params)
        finally:
            if engine is not None:
                engine.before_step = None
    out = result.to_dict(vectors=False)
    state.recent.add_sentences(out)
    return out
