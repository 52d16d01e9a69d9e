"""The OpenAI-compatible routes of the HTTP API: ``/v1/models`` and ``/v1/chat/completions`` (the served model,
unmonitored: the upstream of ``faithwatch proxy``, docs/proxy.md)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

from faithwatch.server.chat import ChatRequest, completion, generate_choices
from faithwatch.server.pool import CancelToken, QueueFullError
from faithwatch.server.problems import problem_of, queue_full
from faithwatch.server.state import ServerState


def add_chat_routes(app: FastAPI, state: ServerState, v1: dict[str, Any]) -> None:
    """Add ``/v1/models`` and ``/v1/chat/completions`` to ``app`` (``v1``: the routes' common options)."""
    monitor, pool, model_lock, guard, jobs = state.monitor, state.pool, state.model_lock, state.guard, state.jobs
    max_new_tokens, request_timeout_s = guard.max_new_tokens, jobs.request_timeout_s

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
