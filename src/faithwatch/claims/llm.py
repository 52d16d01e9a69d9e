"""LLM backends for triplet extraction and the LLM judge: a local Hugging Face chat model, or any
OpenAI-compatible HTTP endpoint (vLLM, Ollama, llama.cpp server, OpenAI).

Both implement :class:`LLMBackend`: ``complete(messages, *, max_tokens, temperature) -> str``, where
``messages`` is a chat (``[{"role": "system"|"user"|"assistant", "content": ...}, ...]``). Failures of
the backend itself (HTTP errors, time-outs, a prompt too long for the model) raise
:class:`LLMBackendError` with a message meant for users; an endpoint that cannot be reached at all
raises :class:`LLMUnavailableError` (a :class:`~faithwatch.errors.ModelNotAvailableError`). The HTTP
backend retries transient failures (connection errors, time-outs, HTTP 429 and 5xx) with exponential
backoff and jitter before raising.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import httpx

from faithwatch.errors import FaithwatchError, InputError, ModelNotAvailableError
from faithwatch.retry import MAX_BACKOFF, MAX_RETRY_AFTER, backoff_delay, check_base_url, is_transient, retry_after

if TYPE_CHECKING:
    from faithwatch.models.loading import LoadedModel

log = logging.getLogger(__name__)

#: a chat message: ``{"role": ..., "content": ...}``
Message = dict[str, str]
#: the environment variable the API key is read from unless told otherwise
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
_ROLES = ("system", "user", "assistant")
_BODY_EXCERPT = 300  # characters of an error body quoted in messages
_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)


def fenced_body(text: str) -> str:
    """An LLM answer's body: the inside of its first markdown code fence (plain or ``json``; an unclosed one runs to
    the end), else the whole answer, stripped."""
    body = text.strip()
    fence = _FENCE.search(body)
    return fence.group(1).strip() if fence and fence.group(1).strip() else body


class LLMBackendError(FaithwatchError):
    """The LLM backend failed (HTTP error, time-out, malformed answer, prompt too long)."""


class LLMUnavailableError(LLMBackendError, ModelNotAvailableError):
    """The LLM endpoint cannot be reached at all (connection refused, unknown host)."""


@runtime_checkable
class LLMBackend(Protocol):
    """Anything that completes a chat: the extractor and the LLM judge only need this."""

    #: shown in outputs, e.g. ``"hf:embedded:smollm2-135m-instruct"`` or ``"openai:my-model@http://..."``
    name: str

    def complete(self, messages: Sequence[Message], *, max_tokens: int, temperature: float) -> str:
        """The assistant's reply to ``messages`` (text only)."""
        ...


def _check_messages(messages: Sequence[Message]) -> list[Message]:
    out = list(messages)
    if not out:
        raise ValueError("messages is empty")
    for i, m in enumerate(out):
        if not isinstance(m, dict) or m.get("role") not in _ROLES or not isinstance(m.get("content"), str):
            raise ValueError(f"messages[{i}] must be {{'role': one of {_ROLES}, 'content': str}}, got {m!r}")
    return out


def _check_generation(max_tokens: int, temperature: float) -> None:
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    if not 0.0 <= temperature <= 2.0:
        raise ValueError(f"temperature must be in [0, 2], got {temperature}")


# ---- local Hugging Face chat model -------------------------------------------------------------


class HFChatBackend:
    """A local causal LM (e.g. the embedded SmolLM2-135M-Instruct from ``load_model(None)``).

    The chat is rendered with the tokenizer's chat template (a plain ``Role: text`` layout when it has
    none). ``temperature == 0`` decodes greedily (deterministic); above 0 it samples. A prompt that
    does not fit the model window raises :class:`LLMBackendError`; the answer budget is cut to what is
    left of the window.
    """

    def __init__(self, lm: LoadedModel) -> None:
        self.lm = lm
        self.name = f"hf:{lm.model_id}"

    def render(self, messages: Sequence[Message]) -> str:
        """The prompt text the model sees."""
        msgs = _check_messages(messages)
        tok = self.lm.tokenizer
        if getattr(tok, "chat_template", None):
            return tok.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
        turns = [f"{m['role'].capitalize()}: {m['content']}" for m in msgs]
        return "\n\n".join(turns) + "\n\nAssistant:"

    def complete(self, messages: Sequence[Message], *, max_tokens: int = 512, temperature: float = 0.0) -> str:
        """The local chat model's reply to ``messages`` (greedy at temperature 0)."""
        import torch
        from transformers import GenerationConfig

        _check_generation(max_tokens, temperature)
        tok = self.lm.tokenizer
        text = self.render(messages)
        # a chat template already holds the special tokens
        ids = tok(text, add_special_tokens=not getattr(tok, "chat_template", None))["input_ids"]
        window = self.lm.max_length
        if len(ids) >= window:
            raise LLMBackendError(
                f"the prompt has {len(ids)} tokens but {self.lm.model_id} has a window of {window}: "
                "shorten the response/reference or use a model with a longer window"
            )
        eos = sorted(self.lm.eos_token_ids)
        pad = tok.pad_token_id if tok.pad_token_id is not None else (eos[0] if eos else 0)
        config = GenerationConfig(
            max_new_tokens=min(max_tokens, window - len(ids)),
            do_sample=temperature > 0,
            temperature=temperature if temperature > 0 else None,
            top_p=None,
            top_k=None,
            eos_token_id=eos or None,
            pad_token_id=pad,
        )
        input_ids = torch.tensor([ids], device=self.lm.device)
        with torch.inference_mode():
            out = self.lm.model.generate(
                input_ids, attention_mask=torch.ones_like(input_ids), generation_config=config
            )
        return tok.decode(out[0, len(ids) :].tolist(), skip_special_tokens=True)


# ---- OpenAI-compatible HTTP endpoint -----------------------------------------------------------


def _sleep(seconds: float) -> None:
    """The default sleep between attempts (a module function so tests can replace it)."""
    time.sleep(seconds)


class _Failure(Exception):
    """One failed attempt: the message for users, whether another attempt may help, and the error
    class to raise when none is left. ``wait`` is the server's ``Retry-After`` (seconds) if any."""

    def __init__(self, message: str, *, retry: bool, error: type[LLMBackendError] = LLMBackendError,
                 wait: float | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.retry = retry
        self.error = error
        self.wait = wait


class OpenAICompatibleBackend:
    """``POST {base_url}/chat/completions`` of any OpenAI-compatible server.

    Args:
        base_url: e.g. ``http://localhost:8000/v1`` (vLLM), ``http://localhost:11434/v1`` (Ollama),
            ``http://localhost:8080/v1`` (llama.cpp server) or ``https://api.openai.com/v1``.
        model: the model name the server expects.
        api_key_env: the environment variable holding the API key; when it is unset or empty no
            ``Authorization`` header is sent (local servers need none). The key itself is never logged.
        timeout: seconds to wait for the whole answer.
        extra_body: more fields of the request body (e.g. ``{"seed": 0}``).
        max_retries: how many times a request is repeated after a transient failure (the connection
            is refused or drops, a time-out, HTTP 429 or 5xx), so at most ``max_retries + 1``
            attempts; ``0`` never retries. Other HTTP errors (400, 401, 404, ...) fail at once.
        backoff: the base wait in seconds before a retry; it doubles with each retry (capped at
            ``MAX_BACKOFF`` seconds), with random jitter between half and all of it. A
            ``Retry-After: N`` header (seconds, capped at ``MAX_RETRY_AFTER``) replaces it.
        sleep: the function that waits between attempts (``time.sleep`` by default; for tests).

    Uses one ``httpx.Client`` per instance (its connections are reused): release it with
    :meth:`close`, or use the backend as a context manager.
    """

    #: the longest exponential backoff between two attempts, in seconds
    MAX_BACKOFF = MAX_BACKOFF
    #: the longest ``Retry-After`` that is honoured, in seconds
    MAX_RETRY_AFTER = MAX_RETRY_AFTER

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key_env: str | None = DEFAULT_API_KEY_ENV,
        timeout: float = 120.0,
        extra_body: dict[str, Any] | None = None,
        max_retries: int = 3,
        backoff: float = 0.5,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        base_url = check_base_url(base_url, "the LLM URL")
        if not model or not str(model).strip():
            raise InputError("an OpenAI-compatible endpoint needs a model name (--llm-model)")
        if timeout <= 0:
            raise InputError(f"the LLM timeout must be > 0 seconds, got {timeout}")
        if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
            raise InputError(f"max_retries must be an integer >= 0, got {max_retries!r}")
        if not backoff >= 0:  # also rejects NaN
            raise InputError(f"the retry backoff must be >= 0 seconds, got {backoff}")
        self.base_url = base_url.strip().rstrip("/")
        self.model = str(model).strip()
        self.api_key_env = api_key_env or None
        self.timeout = float(timeout)
        self.extra_body = dict(extra_body or {})
        self.max_retries = max_retries
        self.backoff = float(backoff)
        self._sleep = sleep if sleep is not None else _sleep
        self.name = f"openai:{self.model}@{self.base_url}"
        self._client: httpx.Client | None = None
        self._client_lock = threading.Lock()

    @property
    def url(self) -> str:
        """The chat completions endpoint of ``base_url``."""
        return f"{self.base_url}/chat/completions"

    # -- the client's lifetime

    def _get_client(self) -> httpx.Client:
        with self._client_lock:
            if self._client is None:
                self._client = httpx.Client(timeout=httpx.Timeout(self.timeout), follow_redirects=True)
            return self._client

    def close(self) -> None:
        """Close the HTTP connections (a later :meth:`complete` opens new ones)."""
        with self._client_lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> OpenAICompatibleBackend:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- requests

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env, "").strip() if self.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def complete(self, messages: Sequence[Message], *, max_tokens: int = 512, temperature: float = 0.0) -> str:
        """The server's reply to ``messages`` (retried on transient errors)."""
        _check_generation(max_tokens, temperature)
        body = {
            **self.extra_body,
            "model": self.model,
            "messages": _check_messages(messages),
            "max_tokens": max_tokens,
            "temperature": temperature,
            "stream": False,
        }
        data = json.dumps(body).encode("utf-8")
        attempts = self.max_retries + 1
        for attempt in range(attempts):
            try:
                return self._content(self._post(data))
            except _Failure as failure:
                if not failure.retry:
                    raise failure.error(failure.message) from None
                if attempt + 1 == attempts:
                    suffix = f" (gave up after {attempts} attempts)" if attempts > 1 else ""
                    raise failure.error(failure.message + suffix) from None
                delay = self._delay(attempt, failure.wait)
                log.warning("%s: %s; retrying in %.2f s (attempt %d of %d)", self.name, failure.message, delay,
                            attempt + 2, attempts)
                self._sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt ``attempt + 2`` (:func:`faithwatch.retry.backoff_delay`)."""
        return backoff_delay(attempt, self.backoff, retry_after)

    def _post(self, data: bytes) -> bytes:
        """One attempt: the body of a 2xx answer, else :class:`_Failure`."""
        try:
            response = self._get_client().post(self.url, content=data, headers=self._headers())
        except httpx.TimeoutException:
            raise _Failure(f"{self.url} did not answer within {self.timeout:g} s", retry=True) from None
        except httpx.ConnectError as exc:
            raise _Failure(f"cannot reach the LLM endpoint {self.url}: {exc}", retry=True,
                           error=LLMUnavailableError) from None
        except httpx.TransportError as exc:  # e.g. the server closed the connection mid-answer
            raise _Failure(f"connection to {self.url} failed: {exc}", retry=True) from None
        if response.is_success:
            return response.content
        transient = is_transient(response.status_code)
        raise _Failure(self._http_error(response), retry=transient,
                       wait=retry_after(response) if transient else None)

    def _http_error(self, response: httpx.Response) -> str:
        detail = response.content.decode("utf-8", "replace").strip()
        msg = f"{self.url} answered HTTP {response.status_code} {response.reason_phrase}".rstrip()
        if detail:
            msg += f": {detail[:_BODY_EXCERPT]}"
        if response.status_code in (401, 403):
            where = f"${self.api_key_env}" if self.api_key_env else "no API key variable"
            state = "set" if self.api_key_env and os.environ.get(self.api_key_env) else "not set"
            msg += f" (the API key is read from {where}, which is {state})"
        elif response.status_code == 404:
            msg += " (check the base URL, which usually ends in /v1, and the model name)"
        return msg

    def _content(self, raw: bytes) -> str:
        try:
            data = json.loads(raw)
            choice = data["choices"][0]
            content = choice["message"]["content"]
        except (json.JSONDecodeError, UnicodeDecodeError, KeyError, IndexError, TypeError):
            excerpt = raw[:_BODY_EXCERPT].decode("utf-8", "replace")
            raise LLMBackendError(f"{self.url} sent an answer that is not a chat completion: {excerpt!r}") from None
        if content is None:  # e.g. a refusal or tool call
            content = ""
        if not isinstance(content, str):
            raise LLMBackendError(f"{self.url}: message content is {type(content).__name__}, expected text")
        if choice.get("finish_reason") == "length":
            log.info("%s: the answer was cut at max_tokens", self.name)
        return content


def get_backend(
    url: str | None = None,
    model: str | None = None,
    *,
    api_key_env: str | None = DEFAULT_API_KEY_ENV,
    timeout: float = 120.0,
    device: str | None = None,
    max_retries: int = 3,
    backoff: float = 0.5,
) -> LLMBackend:
    """An :class:`OpenAICompatibleBackend` when ``url`` is given (``model`` then required; ``timeout``,
    ``max_retries`` and ``backoff`` apply to it), else an :class:`HFChatBackend` over ``model`` (a local
    dir or hub id; ``None``: the embedded SmolLM2)."""
    if url:
        if not model:
            raise InputError("--llm-url needs --llm-model (the model name the endpoint serves)")
        return OpenAICompatibleBackend(url, model, api_key_env=api_key_env, timeout=timeout,
                                       max_retries=max_retries, backoff=backoff)
    from faithwatch.models.loading import load_model

    return HFChatBackend(load_model(model, device=device))
