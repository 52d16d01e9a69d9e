"""The proxy's HTTP app: an OpenAI-compatible ``/v1/chat/completions`` in front of an upstream server.

Clients that know nothing of faithwatch work unchanged: the answer is a normal chat completion (streamed or
not). The verdicts ride along as an extra ``faithwatch`` field: on a chunk after each sentence
(``{sentence, score, features, verdict, latency_ms}``) and on the last chunk (``{summary}``), or, without
streaming, on the completion (``{sentences, summary}``). Upstream errors keep their status and body.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from faithwatch import __version__
from faithwatch.errors import InputError
from faithwatch.monitor import Monitor
from faithwatch.proxy.policies import RUNNERS, Delta, Done, Note, ProxySettings, Run, Scoring
from faithwatch.proxy.request import DEFAULT_MARKERS, RagRequest, split_request
from faithwatch.proxy.upstream import Upstream, UpstreamError
from faithwatch.server.apidocs import api_app
from faithwatch.server.limits import AccessMiddleware, check_api_key, key_matches


def _error(status: int, message: str, kind: str = "invalid_request_error") -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status_code=status)


def annotation(note: Note) -> dict[str, Any]:
    """The ``faithwatch`` field of a sentence's chunk."""
    r = note.report
    return {"sentence": r.text, "index": r.index, "start": r.start, "end": r.end, "score": r.score,
            "verdict": "flagged" if r.flagged else "ok", "features": r.features,
            "latency_ms": round(1000 * note.latency_s, 2)}


def create_proxy_app(monitor: Monitor, upstream: Upstream, settings: ProxySettings | None = None, *,
                     markers: Sequence[str] = DEFAULT_MARKERS, api_key: str | None = None,
                     allowed_hosts: Sequence[str] | None = None) -> FastAPI:
    """Build the proxy around a monitor (the local white-box copy, or ``Monitor("none")``) and an upstream.

    ``allowed_hosts``: the Host names it answers (403 otherwise, against DNS rebinding), ``None`` for any
    (``faithwatch proxy`` defaults to the localhost names on a loopback address, as ``faithwatch serve``). A chat
    request must be sent as JSON (``Content-Type: application/json``; 415 otherwise), so that a web page cannot
    post one cross-site without the browser asking first."""
    check_api_key(api_key)
    settings = settings or ProxySettings()
    scoring = Scoring(monitor)
    marks = (markers[0], markers[1])

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        yield
        await upstream.aclose()
        scoring.shutdown()

    app = api_app(title="faithwatch proxy", version=__version__, lifespan=lifespan,
                  description=f"OpenAI-compatible chat completions of {upstream.base_url}, every sentence scored "
                              f"for faithfulness (policy {settings.policy}).")

    app.add_middleware(AccessMiddleware, allowed_hosts=allowed_hosts)  # the proxy's own key check is below

    @app.middleware("http")
    async def _key(request: Request, call_next: Any) -> Response:
        if api_key and request.url.path.startswith("/v1/") and \
                not key_matches(request.headers.get("authorization", ""), api_key):
            return _error(401, "missing or wrong API key (Authorization: Bearer ...)", "authentication_error")
        return await call_next(request)

    @app.get("/healthz")
    async def healthz() -> dict[str, Any]:
        return {"status": "ok", "version": __version__, "upstream": upstream.base_url,
                "upstream_reachable": await _reachable(upstream), "policy": settings.policy,
                "model_id": monitor.model_id, "detector": monitor.detector.name, "threshold": monitor.threshold,
                "detector_features": monitor.detector_features,
                "features": monitor.feature_names,
                "domain": scoring.recent.status(monitor.detector, settings.resolve("flag", monitor.threshold))}

    @app.get("/v1/models")
    async def models() -> Response:
        try:
            answer = await upstream.client.get(f"{upstream.base_url}/models")
        except Exception as exc:  # noqa: BLE001 - reported to the client
            return _error(502, f"cannot reach the upstream: {exc}", "upstream_error")
        return Response(answer.content, status_code=answer.status_code, media_type="application/json")

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        body = await _json_body(request)
        if isinstance(body, Response):
            return body
        try:
            rag = split_request(body, marks)
        except InputError as exc:
            return _error(400, str(exc))
        if body.get("n") not in (None, 1):  # 1.0 is 1; 0 is no choice at all
            return _error(400, "the faithwatch proxy monitors one choice per request: leave n at 1")
        if rag.context is None:
            return await _unmonitored(upstream, rag, bool(body.get("stream")), marks)
        run = Run(rag, upstream, scoring, settings, client_logprobs=bool(body.get("logprobs")))
        return await _monitored(run, RUNNERS[settings.policy](run), bool(body.get("stream")))

    return app


async def _reachable(upstream: Upstream) -> bool:
    """Whether the upstream answers its model list at all (any HTTP answer, even 401 or 404, means it is up)."""
    try:
        return (await upstream.client.get(f"{upstream.base_url}/models", timeout=2.0)).status_code < 500
    except Exception:  # noqa: BLE001 - reported as unreachable
        return False


async def _json_body(request: Request) -> dict[str, Any] | Response:
    """A chat request's JSON object, or the error to answer (415 for another content type, 400 for bad JSON)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/json" and not kind.endswith("+json"):
        return _error(415, f"send the request as JSON (Content-Type: application/json), not {kind or 'none'!r}")
    try:
        body = await request.json()
    except ValueError:
        return _error(400, "the request body is not JSON")
    if not isinstance(body, dict):
        return _error(400, "the request body must be a JSON object")
    return body


async def _monitored(run: Run, events: AsyncIterator[Any], stream: bool) -> Response:
    """A monitored answer, streamed or collected; upstream failures before anything was sent keep their status."""
    try:
        first = await events.__anext__()
    except UpstreamError as exc:
        return JSONResponse(exc.payload, status_code=exc.status)
    except InputError as exc:
        return _error(400, str(exc))
    if stream:
        return StreamingResponse(_sse(run, first, events), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    try:
        return JSONResponse(await _collect(run, first, events))
    except UpstreamError as exc:
        return JSONResponse(exc.payload, status_code=exc.status)


async def _unmonitored(upstream: Upstream, rag: RagRequest, stream: bool, marks: tuple[str, str]) -> Response:
    """The upstream's answer as it is, with a note that nothing was monitored (no context found)."""
    note = {"monitored": False, "reason": "no context found: give a 'context' field or mark it with "
                                            f"{marks[0]} ... {marks[1]}"}
    try:
        if not stream:
            data = await upstream.complete(rag.body)
            return JSONResponse({**data, "faithwatch": note})

        async def passthrough() -> AsyncIterator[bytes]:
            try:
                async with upstream.stream(rag.body) as chunks:
                    async for chunk in chunks:
                        if any(c.get("finish_reason") for c in chunk.get("choices") or []):
                            chunk = {**chunk, "faithwatch": note}
                        yield _data(chunk)
            except UpstreamError as exc:
                yield _data(exc.payload)
            yield b"data: [DONE]\n\n"

        return StreamingResponse(passthrough(), media_type="text/event-stream")
    except UpstreamError as exc:
        return JSONResponse(exc.payload, status_code=exc.status)


def _data(obj: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(obj, allow_nan=False)}\n\n".encode()


def _base(run: Run, kind: str) -> dict[str, Any]:
    meta = run.meta
    run.meta.setdefault("id", f"chatcmpl-fw-{uuid.uuid4().hex[:16]}")
    return {"id": meta["id"], "object": kind, "created": meta.get("created", int(time.time())),
            "model": meta.get("model", run.rag.body.get("model") or "upstream")}


def _chunk(run: Run, delta: dict[str, Any], finish: str | None = None, logprobs: Any = None,
           extra: dict[str, Any] | None = None) -> bytes:
    choice = {"index": 0, "delta": delta, "logprobs": None if logprobs is None else {"content": logprobs},
              "finish_reason": finish}
    out = {**_base(run, "chat.completion.chunk"), "choices": [choice]}
    if extra is not None:
        out["faithwatch"] = extra
    return _data(out)


async def _sse(run: Run, first: Any, events: AsyncIterator[Any]) -> AsyncIterator[bytes]:
    role_sent = False

    async def all_events() -> AsyncIterator[Any]:
        yield first
        async for event in events:
            yield event

    try:
        async for event in all_events():
            if isinstance(event, Delta):
                if not event.text and not event.logprobs:
                    continue
                delta = {"content": event.text} if role_sent else {"role": "assistant", "content": event.text}
                role_sent = True
                yield _chunk(run, delta, logprobs=event.logprobs)
            elif isinstance(event, Note):
                yield _chunk(run, {}, extra=annotation(event))
            elif isinstance(event, Done):
                yield _chunk(run, {}, finish=event.finish_reason, extra={"summary": event.summary})
    except UpstreamError as exc:
        yield _data(exc.payload)
    except InputError as exc:
        yield _data({"error": {"message": str(exc), "type": "invalid_request_error", "code": 400}})
    finally:
        await events.aclose()
    yield b"data: [DONE]\n\n"


async def _collect(run: Run, first: Any, events: AsyncIterator[Any]) -> dict[str, Any]:
    text, entries, notes, done = [], [], [], None
    event = first
    while True:
        if isinstance(event, Delta):
            text.append(event.text)
            entries += event.logprobs or []
        elif isinstance(event, Note):
            notes.append(annotation(event))
        elif isinstance(event, Done):
            done = event
        try:
            event = await events.__anext__()
        except StopAsyncIteration:
            break
    assert done is not None
    choice = {"index": 0, "message": {"role": "assistant", "content": "".join(text)},
              "logprobs": {"content": entries} if run.client_logprobs else None, "finish_reason": done.finish_reason}
    return {**_base(run, "chat.completion"), "choices": [choice],
            "faithwatch": {"sentences": notes, "summary": done.summary}}
