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

import hmac
import json
import threading
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, quote

from fastapi import Depends, FastAPI, Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.security import HTTPBearer

from faithwatch._version import __version__
from faithwatch.alignment import CHECK_SCORER, plain_specs
from faithwatch.errors import InputError
from faithwatch.server.apidocs import api_app
from faithwatch.server.context_limits import ContextLimits
from faithwatch.server.domain import RecentScores
from faithwatch.server.jobs import JobRunner
from faithwatch.server.limits import KEY_COOKIE, AccessMiddleware, BodyLimitMiddleware, check_api_key
from faithwatch.server.pool import WorkPool
from faithwatch.server.problems import HTTPProblem, echoable
from faithwatch.server.routes_chat import add_chat_routes
from faithwatch.server.routes_claims import add_claims_routes, default_checker
from faithwatch.server.routes_live import add_live_routes
from faithwatch.server.state import ServerState

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


def _built(monitor: Any) -> Any:
    """The Monitor to serve: ``monitor`` itself, ``Monitor()`` for None, or what a factory returns; one without a
    language model is an :class:`InputError` (serve's routes write answers)."""
    if monitor is None:
        from faithwatch.monitor import Monitor

        monitor = Monitor
    if callable(monitor) and not hasattr(monitor, "lm"):
        monitor = monitor()
    if getattr(monitor, "lm", None) is None:
        raise InputError("faithwatch serve needs a language model: its routes write answers (/v1/monitor, "
                         "/v1/generate, /v1/chat/completions). To score given text without one: faithwatch score "
                         "--model none, faithwatch check, or faithwatch proxy --model none in front of a served model")
    return monitor


def _add_login_routes(app: FastAPI, api_key: str) -> None:
    """``/login``: a form that stores the API key as a same-origin cookie for the web page."""

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
    check_api_key(api_key)
    if isinstance(allowed_hosts, str):
        allowed_hosts = [h for h in allowed_hosts.split(",") if h.strip()]
    if check_alignment not in plain_specs():
        raise InputError(f"check_alignment must be one of {', '.join(plain_specs())}")
    monitor = _built(monitor)
    pool = WorkPool(workers=workers, queue_size=queue_size)
    recent = RecentScores()  # the latest sentences answered: /healthz's domain
    model_lock = threading.Lock()
    live = _live_batch(monitor, batch_rows, model_lock)
    limits = {"max_body_bytes": max_body_bytes, "max_context_tokens": max_context_tokens,
              "max_new_tokens": max_new_tokens, "max_records": max_records, "request_timeout_s": request_timeout_s}
    state = ServerState(
        monitor=monitor, pool=pool, live=live, model_lock=model_lock, recent=recent,
        guard=ContextLimits(monitor, recent, max_context_tokens, max_new_tokens),
        jobs=JobRunner(pool, request_timeout_s), queue_size=queue_size, max_records=max_records,
        check_default=default_checker(monitor, check_checker), check_alignment=check_alignment)

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
        # FastAPI's own answer, except that a rejected NaN / infinity or lone surrogate is echoed escaped (else: 500)
        return JSONResponse({"detail": echoable(jsonable_encoder(exc.errors()))}, status_code=422)

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
            "alignment": getattr(alignment, "name", None), "check_checker": state.check_default,
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
        _add_login_routes(app, api_key)
    add_live_routes(app, state, v1)
    add_chat_routes(app, state, v1)
    add_claims_routes(app, state, v1)
    return app

