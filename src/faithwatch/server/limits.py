"""Request-size limit as pure ASGI middleware: 413 on Content-Length, or as soon as a streamed body exceeds it."""

from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyLimitMiddleware:
    """Answer 413 (JSON) to any HTTP request whose body is larger than ``max_body_bytes``."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def _reject(self, send: Send, size: int | None) -> None:
        body = json.dumps({"error": "request_too_large", "max_body_bytes": self.max_body_bytes,
                           "message": f"the request body is larger than {self.max_body_bytes} bytes"
                           + ("" if size is None else f" ({size} bytes)")}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    size = int(value)
                except ValueError:
                    size = None
                if size is not None and size > self.max_body_bytes:
                    await self._reject(send, size)
                    return
        received = 0
        exceeded = False
        answered = False

        async def limited_receive() -> Message:
            # past the limit the app sees a disconnect (so it stops reading) and its answer is replaced by 413
            nonlocal received, exceeded
            if exceeded:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    exceeded = True
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal answered
            if exceeded:
                if not answered:
                    answered = True
                    await self._reject(send, None)
                return
            await send(message)

        await self.app(scope, limited_receive, guarded_send)
        if exceeded and not answered:
            await self._reject(send, None)
