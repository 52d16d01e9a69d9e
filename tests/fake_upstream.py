"""A scripted OpenAI-compatible upstream for the proxy tests: streams given pieces (with or without
log-probabilities), fails on request (HTTP status, mid-stream, malformed JSON, silence), and answers ``n`` /
``continue_final_message`` requests from a continuation script."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse


@dataclass
class Script:
    """What the upstream answers."""

    pieces: list[str] = field(default_factory=lambda: ["The tower", " is in Paris.", " It is 330", " metres tall."])
    logprobs: bool = False
    status: int | None = None  # answer this HTTP status (once per request) instead
    fail_times: int = 0  # answer ``status`` this many times, then normally
    break_after: int | None = None  # an error event after this many pieces
    malformed_after: int | None = None  # a line of broken JSON after this many pieces
    stall_after: int | None = None  # stop sending (keep the connection) after this many pieces
    delay: float = 0.0  # seconds between pieces
    hang: float = 0.0  # seconds before answering at all (no headers)
    page: bool = False  # answer 200 with an HTML page (a wrong URL)
    no_stream: bool = False  # ignore ``stream``: answer one JSON completion
    cut: bool = False  # end the stream after the pieces without a finish_reason or [DONE]
    continue_with: Callable[[str, int], str] | None = None  # (prefix, choice index) -> continuation text
    requests: list[dict[str, Any]] = field(default_factory=list)
    closed_early: list[int] = field(default_factory=list)  # streams whose client went away before the end
    failures: int = 0


def _chunk(piece: str, index: int, logprobs: bool, finish: str | None = None) -> str:
    choice: dict[str, Any] = {"index": index, "delta": {"content": piece} if piece else {},
                              "finish_reason": finish}
    if logprobs and piece:
        choice["logprobs"] = {"content": [{"token": piece, "logprob": -0.25,
                                           "top_logprobs": [{"token": piece, "logprob": -0.25},
                                                            {"token": "x", "logprob": -1.5}]}]}
    obj = {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1, "model": "fake",
           "choices": [choice]}
    return f"data: {json.dumps(obj)}\n\n"


def fake_upstream(script: Script) -> FastAPI:
    app = FastAPI()

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "fake", "object": "model"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        body = await request.json()
        script.requests.append(body)
        if script.hang:
            await asyncio.sleep(script.hang)
        if script.page:
            return Response("<html><body>Log in</body></html>", media_type="text/html")
        if script.status is not None and script.failures < (script.fail_times or 10**9):
            script.failures += 1
            return JSONResponse({"error": {"message": f"scripted {script.status}", "type": "server_error"}},
                                status_code=script.status)
        messages = body["messages"]
        if body.get("continue_final_message") and script.continue_with is not None:
            prefix = messages[-1]["content"]
            texts = [script.continue_with(prefix, i) for i in range(int(body.get("n") or 1))]
        elif script.continue_with is not None and not body.get("stream"):
            texts = [script.continue_with("", i) for i in range(int(body.get("n") or 1))]
        else:
            texts = ["".join(script.pieces)]
        if not body.get("stream") or script.no_stream:
            return JSONResponse({"id": "chatcmpl-fake", "object": "chat.completion", "created": 1, "model": "fake",
                                 "choices": [{"index": i, "message": {"role": "assistant", "content": t},
                                              "finish_reason": "stop"} for i, t in enumerate(texts)]})
        number = len(script.requests)

        async def stream():
            done = False
            try:
                for i, piece in enumerate(script.pieces):
                    if script.break_after == i:
                        yield f"data: {json.dumps({'error': {'message': 'scripted failure'}})}\n\n"
                        done = True
                        return
                    if script.malformed_after == i:
                        yield "data: {not json\n\n"
                        done = True
                        return
                    if script.stall_after == i:
                        await asyncio.sleep(30)
                    yield _chunk(piece, 0, script.logprobs or bool(body.get("logprobs")))
                    await asyncio.sleep(script.delay)
                if script.cut:
                    done = True
                    return
                yield _chunk("", 0, False, "stop")
                yield "data: [DONE]\n\n"
                done = True
            finally:
                if not done:
                    script.closed_early.append(number)

        return StreamingResponse(stream(), media_type="text/event-stream")

    return app
