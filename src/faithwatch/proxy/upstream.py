"""The upstream OpenAI-compatible server: chat completions over httpx, streamed or not, with retries and
time-outs (:mod:`faithwatch.retry`); its errors pass through to the proxy's client with their status."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import httpx

from faithwatch.retry import backoff_delay, check_base_url, is_transient, retry_after

log = logging.getLogger(__name__)
_EXCERPT = 300


class UpstreamError(Exception):
    """The upstream failed: ``status`` and ``payload`` (an OpenAI-style error object) go to the client."""

    def __init__(self, status: int, message: str, payload: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.payload = payload or {"error": {"message": message, "type": "upstream_error", "code": status}}


class Upstream:
    """Chat completions of ``base_url`` (e.g. ``http://localhost:8000/v1``).

    ``model`` fills in (or, with ``force_model``, replaces) the request's model. ``timeout``: seconds to connect
    and between two received chunks. ``retries``: extra attempts on connection errors (a connect time-out
    included), 429 and 5xx before the answer starts. An upstream that accepted the request but sent no answer
    within ``timeout`` is not asked again (it is busy, not unreachable), and a stream that broke after it started
    is never replayed. Each method takes ``on_call``, called once per request it sends (the proxy counts one
    answer's calls with it).
    """

    def __init__(self, base_url: str, *, api_key: str | None = None, model: str | None = None,
                 force_model: bool = False, timeout: float = 60.0, retries: int = 2, backoff: float = 0.5,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.base_url = check_base_url(base_url, "the upstream URL").rstrip("/")
        self.model, self.force_model = model, force_model
        self.retries, self.backoff = retries, backoff
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.client = httpx.AsyncClient(timeout=httpx.Timeout(timeout), headers=headers, transport=transport)

    @property
    def url(self) -> str:
        """The chat completions endpoint of ``base_url``."""
        return f"{self.base_url}/chat/completions"

    def prepare(self, body: dict[str, Any]) -> dict[str, Any]:
        """The body with the configured model."""
        if self.model and (self.force_model or not body.get("model")):
            body = {**body, "model": self.model}
        return body

    async def complete(self, body: dict[str, Any], on_call: Callable[[], None] | None = None) -> dict[str, Any]:
        """One non-streamed chat completion (JSON)."""
        async with self._open({**self.prepare(body), "stream": False}, on_call) as response:
            raw = await response.aread()
        try:
            data = json.loads(raw)
            if not isinstance(data, dict) or not isinstance(data.get("choices"), list):
                raise ValueError("no choices")
        except (ValueError, UnicodeDecodeError):
            raise UpstreamError(502, f"the upstream sent an answer that is not a chat completion: "
                                     f"{raw[:_EXCERPT].decode('utf-8', 'replace')!r}") from None
        return data

    @asynccontextmanager
    async def stream(self, body: dict[str, Any], on_call: Callable[[], None] | None = None
                     ) -> AsyncIterator[AsyncIterator[dict[str, Any]]]:
        """Stream a chat completion: yields an iterator of parsed chunks; leaving the block closes the upstream
        connection (so a client that went away stops the upstream's generation).

        An upstream that ignores ``stream`` and sends one JSON chat completion is read as one chunk. A stream that
        ends without ``[DONE]`` and without a ``finish_reason`` (cut off), or an answer that is neither an event
        stream nor a chat completion (a web page at the wrong URL), raises :class:`UpstreamError` (502): never an
        empty or partial answer passed off as complete."""
        async with self._open({**self.prepare(body), "stream": True}, on_call) as response:
            yield self._chunks(response)

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self.client.aclose()

    async def _chunks(self, response: httpx.Response) -> AsyncIterator[dict[str, Any]]:
        events, finished, other = 0, False, []  # data lines seen, a finish_reason seen, the other lines' start
        try:
            async for line in response.aiter_lines():
                if not line.startswith("data:"):
                    if sum(map(len, other)) < 65536:
                        other.append(line)  # comments, event names, keep-alives; or not an event stream at all
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    return
                events += 1
                try:
                    chunk = json.loads(data)
                except ValueError:
                    raise UpstreamError(502, f"the upstream sent malformed JSON in its stream: {data[:_EXCERPT]!r}"
                                        ) from None
                if not isinstance(chunk, dict):
                    raise UpstreamError(502, f"the upstream sent a chunk that is not an object: {data[:_EXCERPT]!r}")
                if "error" in chunk and "choices" not in chunk:  # an error reported inside the stream
                    message = (chunk["error"] or {}).get("message", "error") if isinstance(chunk["error"], dict) \
                        else str(chunk["error"])
                    text = f"the upstream failed mid-stream: {message}"
                    raise UpstreamError(502, text, {"error": {"message": text, "type": "upstream_error",
                                                              "code": 502, "upstream": chunk["error"]}})
                finished = finished or any(isinstance(c, dict) and c.get("finish_reason")
                                           for c in chunk.get("choices") or [])
                yield chunk
            if not events:
                yield _as_chunk("\n".join(other))
            elif not finished:
                raise UpstreamError(502, "the upstream's stream ended without [DONE] or a finish_reason: the answer "
                                         "may be cut off")
        except httpx.TimeoutException:
            raise UpstreamError(504, f"the upstream stopped sending for longer than {self._read_timeout()} s"
                                ) from None
        except httpx.TransportError as exc:
            raise UpstreamError(502, f"the upstream connection broke mid-stream: {exc}") from None

    def _read_timeout(self) -> float | None:
        return self.client.timeout.read

    @asynccontextmanager
    async def _open(self, body: dict[str, Any], on_call: Callable[[], None] | None = None
                    ) -> AsyncIterator[httpx.Response]:
        attempts = self.retries + 1
        for attempt in range(attempts):
            last = attempt + 1 == attempts
            if on_call is not None:
                on_call()
            request = self.client.build_request("POST", self.url, json=body)
            try:
                response = await self.client.send(request, stream=True)
            except (httpx.ConnectTimeout, httpx.PoolTimeout):
                failure = UpstreamError(504, f"cannot connect to the upstream {self.url} within "
                                             f"{self.client.timeout.connect} s")
                wait = None
            except httpx.TimeoutException:  # connected, but no answer: busy, so not asked again
                raise UpstreamError(504, f"the upstream {self.url} did not answer within "
                                         f"{self._read_timeout()} s") from None
            except httpx.TransportError as exc:
                failure, wait = UpstreamError(502, f"cannot reach the upstream {self.url}: {exc}"), None
            else:
                if response.is_success:
                    try:
                        yield response
                    finally:
                        await response.aclose()
                    return
                raw = await response.aread()
                await response.aclose()
                failure = _http_error(response.status_code, raw)
                if not is_transient(response.status_code):
                    raise failure
                wait = retry_after(response)
            if last:
                raise failure
            delay = backoff_delay(attempt, self.backoff, wait)
            log.warning("upstream: %s; retrying in %.2f s (attempt %d of %d)", failure, delay, attempt + 2, attempts)
            await asyncio.sleep(delay)


def _as_chunk(text: str) -> dict[str, Any]:
    """A stream request answered without events: one chat completion (an upstream that ignores ``stream``) as one
    chunk; anything else is an :class:`UpstreamError`."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not all(isinstance(c, dict) and isinstance(c.get("message"), dict)
                                                for c in choices):
        raise UpstreamError(502, "the upstream answered with neither an event stream nor a chat completion: "
                                 f"{text[:_EXCERPT]!r}")
    delta = [{"index": c.get("index", 0), "delta": {"role": "assistant", "content": c["message"].get("content") or ""},
              "logprobs": c.get("logprobs"), "finish_reason": c.get("finish_reason") or "stop"} for c in choices]
    return {**{k: v for k, v in data.items() if k != "choices"}, "choices": delta}


def _http_error(status: int, raw: bytes) -> UpstreamError:
    text = raw[:_EXCERPT].decode("utf-8", "replace")
    try:
        payload = json.loads(raw)
    except ValueError:
        payload = None
    if not isinstance(payload, dict) or "error" not in payload:
        payload = {"error": {"message": text or f"HTTP {status}", "type": "upstream_error", "code": status}}
    return UpstreamError(status, f"the upstream answered HTTP {status}: {text}", payload)
