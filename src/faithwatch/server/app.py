"""The faithwatch HTTP API (FastAPI): live monitoring as Server-Sent Events, scoring, guided decoding, claims.

Concurrency, explicitly:

* every model job goes through one bounded :class:`~faithwatch.server.pool.WorkPool` — ``workers`` threads and
  at most ``queue_size`` waiting jobs. A request beyond that is answered **503** with ``Retry-After`` and a JSON
  body giving the queue depth and limits; nothing waits silently behind a lock.
* the model itself is not thread-safe for concurrent decoding, so model calls hold ``model_lock`` inside the
  worker. With ``workers > 1`` the extra workers serve jobs that do not need the model (``/v1/check``) while
  a model job runs; model jobs themselves run one at a time, in admission order.
* with ``batch_rows`` > 1, ``/v1/monitor`` streams and ``/v1/generate`` requests of a one-beam strategy (greedy,
  abstain, cad, adacad) are rows of one live batch instead (continuous batching: they join and leave between
  tokens; ``batch_rows`` rows and ``queue_size`` waiting, then 503). A batch step holds ``model_lock``.
* ``/healthz`` reports the queue (waiting, running, limits, rejected, mean job time) and the rows in flight.

Access: with ``api_key`` every ``/v1/*`` route needs ``Authorization: Bearer <key>`` (or the key cookie set by
``POST /login``; **401** otherwise); ``allowed_hosts`` refuses other Host headers with **403** (DNS rebinding).

Limits: request bodies above ``max_body_bytes`` get **413** (Content-Length or the streamed length);
a context above ``max_context_tokens`` gets **413**, and so do the passages of ``/v1/check`` together above
``max_context_tokens`` or the model window (or their tail is cut, with the monitor's ``truncate_context``);
a request past ``request_timeout_s`` gets **504** (or an ``error`` event on a stream, which then ends, also
when the job is still waiting in the queue). A client that disconnects from ``/v1/monitor`` stops its
generation before the next token, and one that disconnects from ``/v1/generate`` stops its decoding search
before the next forward step (the server polls the connection while the job runs). ``/v1/score`` stops between
records; ``/v1/check`` is only dropped if it is still waiting when cancelled (a running check finishes, its
result is discarded).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import threading
import time
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import Future
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, quote

import torch
from fastapi import Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from fastapi.security import HTTPBearer

from faithwatch._version import __version__
from faithwatch.alignment import CHECK_SCORER, plain_specs
from faithwatch.errors import InputError
from faithwatch.results import context_notes
from faithwatch.server.apidocs import api_app
from faithwatch.server.chat import ChatRequest, completion, generate_choices, sampler
from faithwatch.server.context_limits import ContextLimits
from faithwatch.server.domain import RecentScores
from faithwatch.server.jobs import JobRunner
from faithwatch.server.limits import KEY_COOKIE, AccessMiddleware, BodyLimitMiddleware
from faithwatch.server.pool import Cancelled, CancelToken, QueueFullError, WorkPool
from faithwatch.server.problems import HTTPProblem, event_of, finite, problem_of, queue_full
from faithwatch.server.schemas import CheckRequest, GenerateRequest, MonitorRequest, ScoreRequest

_KEEPALIVE_S = 10.0
#: a stream whose job has sent no ``summary`` / ``error`` this long after the request timeout is ended by the
#: server with a ``timeout`` error event (the job itself stops at the timeout, before its next token)
_STREAM_GRACE_S = 1.0
_LOGIN_PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>faithwatch: API key</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font: 15px system-ui, sans-serif; margin: 40px">
<h1 style="font-size: 18px">faithwatch</h1>
<p>This server needs an API key. It is kept in this browser as a cookie for this site only.</p>
<form method="post" action="login"><input name="key" type="password" autocomplete="current-password" required
 autofocus size="40" aria-label="API key"> <button type="submit">Continue</button></form></body></html>
"""


def _live_batch(monitor: Any, rows: int, lock: threading.Lock) -> Any:
    """The continuous batch of /v1/monitor streams, for a real Monitor with a model and ``rows`` > 1."""
    from faithwatch.live_batch import LiveBatch
    from faithwatch.models.engine import DecodingEngine

    if rows < 1:
        raise InputError(f"batch_rows must be at least 1, got {rows}")
    if rows == 1 or not isinstance(getattr(monitor, "engine", None), DecodingEngine):  # e.g. a test double
        return None
    return LiveBatch(monitor, max_rows=rows, lock=lock)


def _stream_summary(result: Any, admitted: float) -> dict[str, Any]:
    """The ``summary`` event of a /v1/monitor stream: the result without what the stream already sent."""
    summary = result.to_dict(vectors=False)
    for key in ("sentences", "context", "question"):
        summary.pop(key, None)
    summary["elapsed_s"] = round(time.monotonic() - admitted, 4)
    return summary


def _sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, allow_nan=False)}\n\n".encode()


#: the checkers /v1/check offers
CHECKERS = ("detector", "alignment")


def _check_default(monitor: Any, check_checker: str | None) -> str:
    """The default checker of /v1/check (see :func:`create_app`), refused where the served detector cannot do it."""
    text_only = not getattr(monitor, "detector_reads_model", True)
    if check_checker is None:
        return "detector" if text_only else "alignment"
    if check_checker not in CHECKERS:
        raise InputError(f"check_checker must be one of {', '.join(CHECKERS)}, got {check_checker!r}")
    if check_checker == "detector" and not text_only:
        raise InputError(f"the detector checker needs a detector that reads text only; the served detector "
                         f"{getattr(monitor.detector, 'name', '?')!r} reads the language model")
    return check_checker


def create_app(
    monitor: Any = None,
    *,
    max_body_bytes: int = 1_000_000,
    max_context_tokens: int | None = None,
    max_new_tokens: int = 512,
    max_records: int = 64,
    queue_size: int = 8,
    workers: int = 1,
    batch_rows: int = 16,
    request_timeout_s: float = 120.0,
    check_alignment: str = CHECK_SCORER,
    check_checker: str | None = None,
    api_key: str | None = None,
    allowed_hosts: Sequence[str] | None = None,
) -> FastAPI:
    """Build the app around a :class:`~faithwatch.monitor.Monitor`.

    ``monitor``: a Monitor, a zero-argument callable returning one (e.g. ``Monitor`` itself, or a
    ``functools.partial`` of it), or ``None`` for ``Monitor()`` (the embedded model). It is built at once.
    ``max_new_tokens`` caps what a request may ask for; ``max_records`` caps a /v1/score batch;
    ``check_checker`` is the default checker of ``/v1/check``: ``"detector"`` (the served detector's verdict, the
    one ``/v1/monitor`` gives; it must read text only) or ``"alignment"`` (``check_alignment``, thresholded);
    ``None``: ``"detector"`` where the served detector reads text only, else ``"alignment"``.
    ``batch_rows``: concurrent ``/v1/monitor`` streams and ``/v1/generate`` requests of a one-beam strategy
    (greedy, abstain, cad, adacad) decode together as rows of one engine batch (continuous batching,
    :class:`~faithwatch.live_batch.LiveBatch`; at most ``queue_size`` more wait for a row); 1 runs them one at a
    time through the work pool, as other model jobs (FOD, rerank and lookback always do).
    ``api_key``: if given, every ``/v1/*`` route needs ``Authorization: Bearer <api_key>`` (401 otherwise);
    ``/``, ``/healthz``, ``/docs`` and ``/openapi.json`` stay open, and ``/login`` lets a browser store the key
    as a same-origin cookie for the web page. ``allowed_hosts``: the Host names the server answers (403
    otherwise; ``*.example.org`` for subdomains); ``None`` answers any (``faithwatch serve`` defaults to the
    localhost names when it listens on a loopback address).
    """
    if api_key is not None and not api_key.strip():
        raise InputError("the API key is empty; give a non-empty key or none")
    if isinstance(allowed_hosts, str):
        allowed_hosts = [h for h in allowed_hosts.split(",") if h.strip()]
    if monitor is None:
        from faithwatch.monitor import Monitor

        monitor = Monitor
    if callable(monitor) and not hasattr(monitor, "lm"):
        monitor = monitor()
    if check_alignment not in plain_specs():
        raise InputError(f"check_alignment must be one of {', '.join(plain_specs())}")
    check_default = _check_default(monitor, check_checker)
    pool = WorkPool(workers=workers, queue_size=queue_size)
    recent = RecentScores()  # the latest sentences answered: /healthz's domain
    model_lock = threading.Lock()
    live = _live_batch(monitor, batch_rows, model_lock)
    check_lock = threading.Lock()
    scorers: dict[str, Any] = {}  # one alignment scorer (and model) per spec name; thresholds are per call
    text_checker: list[Any] = []  # the detector checker, built on first use
    guard = ContextLimits(monitor, recent, max_context_tokens, max_new_tokens)
    jobs = JobRunner(pool, request_timeout_s)
    limits = {"max_body_bytes": max_body_bytes, "max_context_tokens": max_context_tokens,
              "max_new_tokens": max_new_tokens, "max_records": max_records, "request_timeout_s": request_timeout_s}

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        pool.shutdown()
        if live is not None:
            live.close()

    app = api_app(
        title="faithwatch", version=__version__, lifespan=lifespan,
        description="Faithfulness monitoring of retrieval-augmented generation. Limits: "
                    f"{json.dumps(limits)}. A full work queue answers 503 with Retry-After.",
    )
    app.add_middleware(BodyLimitMiddleware, max_body_bytes=max_body_bytes)
    # outermost: the Host and the key are checked before the body is read
    app.add_middleware(AccessMiddleware, api_key=api_key, allowed_hosts=allowed_hosts)
    app.state.monitor, app.state.pool, app.state.limits = monitor, pool, limits
    app.state.live, app.state.model_lock = live, model_lock
    # declares the key in the OpenAPI schema, so that /docs offers "Authorize"; AccessMiddleware enforces it
    v1: dict[str, Any] = {"dependencies": [Depends(HTTPBearer(auto_error=False, description="the server's "
                                                                "--api-key"))]} if api_key else {}

    @app.exception_handler(HTTPProblem)
    async def _on_problem(_request: Request, exc: HTTPProblem) -> JSONResponse:
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def _on_invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own answer, except that a rejected NaN / infinity is echoed as a string (else: 500)
        return JSONResponse({"detail": finite(jsonable_encoder(exc.errors()))}, status_code=422)

    # --- pages and health -------------------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def index() -> HTMLResponse:
        page = resources.files("faithwatch.server").joinpath("static/index.html").read_text(encoding="utf-8")
        return HTMLResponse(page)

    @app.get("/healthz", summary="Model, detector, queue depth and limits")
    async def healthz() -> dict[str, Any]:
        detector = getattr(monitor, "detector", None)
        alignment = getattr(monitor, "alignment", None)
        # sentences are flagged below the monitor's threshold (the detector's, or one for a false-accept rate)
        threshold = getattr(monitor, "threshold", getattr(detector, "threshold", None))
        return {
            "status": "ok", "version": __version__, "model_id": monitor.lm.model_id,
            "detector": getattr(detector, "name", None),
            "threshold": threshold,
            "detector_features": list(getattr(monitor, "detector_features", [])),
            "alignment": getattr(alignment, "name", None), "check_checker": check_default,
            "queue": pool.stats(), "limits": limits,
            "live_batch": None if live is None else {
                "rows_in_flight": live.rows, "waiting": live.waiting, "max_rows": live.max_rows,
                "queue_size": queue_size, "steps": live.steps,
                "mean_rows_per_step": round(live.row_steps / live.steps, 3) if live.steps else None},
            "model_calls": "serialised by one lock (a live batch takes it per token); admission is bounded",
            "api_key_required": api_key is not None,
            "domain": recent.status(detector, threshold),
        }

    if api_key is not None:
        @app.get("/login", response_class=HTMLResponse, include_in_schema=False)
        async def login_page() -> HTMLResponse:
            return HTMLResponse(_LOGIN_PAGE)

        @app.post("/login", include_in_schema=False)
        async def login(request: Request) -> Response:
            """Check the key of the login form and keep it in a same-origin cookie for the web page."""
            form = parse_qs((await request.body()).decode("utf-8", "replace"))
            given = (form.get("key") or [""])[0]
            if not hmac.compare_digest(given.encode("utf-8"), api_key.encode("utf-8")):
                raise HTTPProblem(401, "unauthorized", "wrong API key")
            response = RedirectResponse("./", status_code=303)
            response.set_cookie(KEY_COOKIE, quote(api_key, safe=""), httponly=True, samesite="strict",
                                secure=request.url.scheme == "https", path="/")
            return response

    # --- live monitoring (SSE) ---------------------------------------------------------------------------------
    @app.post("/v1/monitor", summary="Generate and stream scored sentences (text/event-stream)",
              response_class=StreamingResponse, **v1,
              responses={200: {"content": {"text/event-stream": {}},
                               "description": "events: start, sentence, summary, error"}})
    async def monitor_stream(body: MonitorRequest, request: Request) -> StreamingResponse:
        guard.check_context(body.context)
        guard.check_new_tokens(body.max_new_tokens)
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        token = CancelToken(request_timeout_s)
        admitted = time.monotonic()

        def push(kind: str, data: Any) -> None:
            if kind == "sentence":
                recent.add([data.get("score")])
            with contextlib.suppress(RuntimeError):  # the loop is gone (server shutting down)
                loop.call_soon_threadsafe(events.put_nowait, (kind, data))

        def job(tok: CancelToken) -> None:
            push("start", {"queue_wait_s": round(time.monotonic() - admitted, 4)})
            try:  # every failure of the job is the stream's last event
                base = sampler(body.temperature, body.seed)

                def choose(logp: torch.Tensor) -> int:
                    tok.check()  # disconnect / timeout: stop before the next token
                    return base(logp)

                with model_lock:
                    tok.check()
                    result = monitor.generate(
                        body.question, body.context, max_new_tokens=body.max_new_tokens, choose=choose,
                        on_sentence=lambda report: push("sentence", report.to_dict(vectors=False)),
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

        if live is None:
            try:
                future = pool.submit(job, token)
            except QueueFullError as exc:
                raise queue_full(exc) from None
            future.add_done_callback(on_done)
        else:
            submit_live(body, token, push, admitted)

        async def stream() -> AsyncIterator[bytes]:
            idle = 0.0
            try:
                while True:
                    # the timeout holds whatever the job does (waiting in the queue, stuck): the job stops itself
                    # at the deadline; a grace later the stream ends on its own
                    left = admitted + request_timeout_s + _STREAM_GRACE_S - time.monotonic()
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

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    def submit_live(body: MonitorRequest, token: CancelToken, push: Callable[[str, Any], None],
                    admitted: float) -> None:
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

        admit_live(lambda: live.submit(
            body.question, body.context, max_new_tokens=body.max_new_tokens, choose=choose, on_start=started,
            on_sentence=lambda report: push("sentence", report.to_dict(vectors=False)))).add_done_callback(done)

    def admit_live(submit: Callable[[], Future]) -> Future:
        """Submit a row to the live batch, or answer 503 when its rows and ``queue_size`` waiting places are taken."""
        if live.rows + live.waiting >= live.max_rows + queue_size:
            stats = {"waiting": live.waiting, "running": live.rows, "queue_size": queue_size,
                     "workers": live.max_rows, "rows_in_flight": live.rows}
            raise queue_full(QueueFullError(stats, retry_after=1))
        return submit()

    # --- teacher forcing ----------------------------------------------------------------------------------------
    @app.post("/v1/score", summary="Score given responses by teacher forcing (a batch; per-record errors)", **v1)
    async def score(body: ScoreRequest) -> dict[str, Any]:
        if len(body.records) > max_records:
            raise HTTPProblem(413, "too_many_records", f"{len(body.records)} records; at most {max_records} per "
                              "request")

        def one(record) -> dict[str, Any]:
            problems = record.problems()
            if problems:
                raise InputError("; ".join(problems))
            guard.check_context(record.context)
            with model_lock:
                extra = {} if record.instruction is None else {"instruction": record.instruction}
                result = monitor.score(record.question, record.context, record.response, **extra).to_dict(vectors=False)
            recent.add_sentences(result)
            return result

        def job(tok: CancelToken) -> list[dict[str, Any]]:
            out = []
            for record in body.records:
                tok.check()
                try:
                    out.append({"id": record.id, "ok": True, "result": one(record)})
                except Cancelled:
                    raise
                except Exception as exc:  # noqa: BLE001 - per-record error
                    problem = problem_of(exc)
                    out.append({"id": record.id, "ok": False,
                                "error": {"error": problem.error, "message": problem.message,
                                          "status": problem.status}})
            return out

        results = await jobs.run(job)
        ok = sum(r["ok"] for r in results)
        return {"results": results, "ok": ok, "failed": len(results) - ok}

    # --- guided decoding ------------------------------------------------------------------------------------------
    @app.post("/v1/generate", summary="Answer with a decoding strategy; returns the answer and its trace",
              **v1)
    async def generate(body: GenerateRequest, request: Request) -> dict[str, Any]:
        guard.check_context(body.context)
        guard.check_new_tokens(body.max_new_tokens)
        from faithwatch.decoding.strategies import generate as run_strategy

        params = body.model_dump(exclude={"question", "context", "strategy"}, exclude_unset=True)  # strategy defaults
        if live is not None:
            from faithwatch.decoding.strategies import one_beam_plan

            try:
                plan = one_beam_plan(body.strategy, **params)
            except Exception as exc:  # noqa: BLE001 - bad parameters: the same answer as a pool job's
                raise problem_of(exc) from None
            if plan is not None:  # greedy, abstain, cad, adacad: a row of the live batch
                token = CancelToken(request_timeout_s)
                future = admit_live(lambda: live.submit_strategy(body.question, body.context, plan, check=token.check,
                                                                 on_start=token.check))
                result = (await jobs.wait(future, token, request)).to_dict(vectors=False)
                recent.add_sentences(result)
                return {**result, "notes": context_notes(body.context)}

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
            out = result.to_dict(vectors=False)
            recent.add_sentences(out)
            return {**out, "notes": context_notes(body.context)}

        return await jobs.run(job, request)

    # --- claims --------------------------------------------------------------------------------------------------
    def scorer_for(alignment: str) -> Any:
        """The one alignment scorer of a spec, built on first use (call under ``check_lock``)."""
        if alignment not in scorers:
            from faithwatch import alignment as scorers_module

            device = str(getattr(monitor.lm, "device", "cpu"))
            try:
                scorer = scorers_module.get_scorer(alignment, device=device)
            except ValueError as exc:
                raise InputError(str(exc)) from None
            if scorer is None:
                raise InputError("the alignment checker needs an alignment scorer, not 'none'")
            scorers[alignment] = scorer
        return scorers[alignment]

    @app.get("/v1/models", summary="The served model, as OpenAI's model list (for clients that list models "
             "first)", **v1)
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": monitor.lm.model_id, "object": "model", "created": 0,
                                             "owned_by": "faithwatch"}]}

    @app.post("/v1/chat/completions", summary="OpenAI-compatible chat completions of the served model "
              "(unmonitored; the upstream of `faithwatch proxy`, docs/proxy.md)", **v1)
    async def chat_completions(body: ChatRequest, request: Request) -> Response:
        budget = body.budget or max_new_tokens
        guard.check_new_tokens(budget)
        model_id = monitor.lm.model_id

        def run(tok: CancelToken, on_delta: Any = None) -> list[dict[str, Any]]:
            with model_lock:
                return generate_choices(monitor.lm, body, budget, tok.check, on_delta)

        if not body.stream:
            return JSONResponse(completion(model_id, await jobs.run(run, request)))
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        token = CancelToken(request_timeout_s)
        base = {"id": completion(model_id, [])["id"], "object": "chat.completion.chunk", "created": int(time.time()),
                "model": model_id}

        def push(item: dict[str, Any] | None) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is gone (server shutting down)
                loop.call_soon_threadsafe(events.put_nowait, item)

        def on_delta(index: int, text: str, entries: list[dict[str, Any]], finish: str | None) -> None:
            delta = {"content": text} if text else {}
            choice = {"index": index, "delta": delta, "finish_reason": finish,
                      "logprobs": {"content": entries} if body.logprobs and entries else None}
            push({**base, "choices": [choice]})

        def job(tok: CancelToken) -> None:
            try:
                push({**base, "choices": [{"index": i, "delta": {"role": "assistant", "content": ""},
                                           "finish_reason": None} for i in range(body.n)]})
                run(tok, on_delta)
            except Exception as exc:  # noqa: BLE001 - reported on the stream, as OpenAI does
                problem = problem_of(exc)
                push({"error": {"message": problem.message, "type": problem.error, "code": problem.status}})
            push(None)

        try:
            future = pool.submit(job, token)
        except QueueFullError as exc:
            raise queue_full(exc) from None
        future.add_done_callback(lambda f: push(None) if f.cancelled() or f.exception() else None)

        async def stream() -> AsyncIterator[bytes]:
            try:
                while True:
                    item = await events.get()
                    if item is None:
                        break
                    yield f"data: {json.dumps(item, allow_nan=False)}\n\n".encode()
                yield b"data: [DONE]\n\n"
            finally:  # closed early (the client went away): stop generating
                token.cancel("client disconnected")

        return StreamingResponse(stream(), media_type="text/event-stream", headers={"Cache-Control": "no-cache"})

    def detector_checker() -> Any:
        """The served detector as a claim checker, text only (call under ``check_lock``): its own model-free
        signals and alignment scorer, the served monitor's flag threshold."""
        if not text_checker:
            from faithwatch.claims.checking import DEFAULT_COMBINE
            from faithwatch.claims.detector_check import DetectorChecker
            from faithwatch.monitor import NO_MODEL, Monitor
            from faithwatch.signals import is_model_free

            scorer = getattr(monitor, "alignment", None)
            text = Monitor(NO_MODEL, detector=monitor.detector, alignment=scorer.name if scorer else "none",
                           signals=[s.name for s in monitor.signals if is_model_free(s.name)],
                           device=str(getattr(monitor.lm, "device", "cpu")))
            text.threshold = monitor.threshold
            text_checker.append(DetectorChecker(text, DEFAULT_COMBINE))
        return text_checker[0]

    @app.post("/v1/check", summary="Extract claims and check each against the context(s)", **v1)
    async def check(body: CheckRequest) -> dict[str, Any]:
        from faithwatch.claims.checking import AlignmentChecker
        from faithwatch.claims.extraction import get_extractor
        from faithwatch.claims.pipeline import check_response

        kind = body.checker or check_default
        given = body.model_fields_set
        if kind == "detector":
            if getattr(monitor, "detector_reads_model", True):
                raise HTTPProblem(422, "invalid_input", f"the served detector {monitor.detector.name!r} reads the "
                                  "language model, so it cannot check text alone; use checker 'alignment'")
            stray = sorted({"alignment", "entail_threshold", "contradict_threshold"} & given)
            if stray:
                raise HTTPProblem(422, "invalid_input", f"{', '.join(stray)} {'apply' if len(stray) > 1 else 'applies'}"
                                  " to checker 'alignment' only; the detector checker flags at the served detector's "
                                  "threshold")
        alignment = body.alignment or check_alignment
        if kind == "alignment" and alignment not in plain_specs():  # no arbitrary model ids from clients
            raise HTTPProblem(422, "invalid_input", f"alignment must be one of {', '.join(plain_specs())}")
        if not body.contradict_threshold < body.entail_threshold:
            raise HTTPProblem(422, "invalid_input", "thresholds must satisfy contradict_threshold < "
                              f"entail_threshold, got {body.contradict_threshold} and {body.entail_threshold}")
        single = isinstance(body.contexts, str)
        passages, chars_cut = guard.fit_passages([body.contexts] if single else list(body.contexts))
        contexts: str | list[str] = passages[0] if single and passages else passages

        def job(tok: CancelToken) -> dict[str, Any]:
            with check_lock:
                tok.check()
                # alignment thresholds are parameters of the call: a light wrapper around the cached scorer
                checker = (detector_checker() if kind == "detector" else
                           AlignmentChecker(scorer_for(alignment), body.entail_threshold, body.contradict_threshold))
                result = check_response(body.response, contexts, get_extractor(body.extractor), checker,
                                        question=body.question, aggregation=body.aggregation)
            out = {**result.to_dict(), "context_chars_cut": chars_cut}
            if kind == "detector":  # the served detector's scores: /healthz's domain, as `faithwatch check` notes
                recent.add((c.get("scores") or {}).get("detector_score") for c in out.get("claims") or [])
                recent.add_context(passages)
            return out

        return await jobs.run(job)

    return app

