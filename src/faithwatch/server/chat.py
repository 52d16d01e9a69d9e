"""``/v1/chat/completions`` of ``faithwatch serve``: the served model as a plain OpenAI-compatible generator.

It lets ``faithwatch proxy`` run offline with the embedded model as its upstream (docs/proxy.md), and offers
what the proxy's FOD policy asks of an upstream: ``n`` choices, a partial assistant message continued
(``continue_final_message``, as vLLM), seeds and per-token ``logprobs``/``top_logprobs``. Generation goes through
the one decoding engine (no signals recorded); it is not monitored.
"""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator, model_validator

from faithwatch.decoding.loop import sampling_chooser
from faithwatch.detok import IncrementalText
from faithwatch.errors import InputError
from faithwatch.models.prompts import PromptPair
from faithwatch.models.records import Needs
from faithwatch.params import JsonFloat, JsonInt
from faithwatch.text.visible import require_text


def sampler(temperature: float, seed: int) -> Callable[[torch.Tensor], int]:
    """One row's token from its log-probabilities [V]: greedy at temperature 0, else seeded sampling at
    ``temperature`` (the decoding strategies' chooser, so the draw happens where the distribution lives)."""
    choose = sampling_chooser(temperature, torch.Generator().manual_seed(seed))
    return lambda logp: choose(logp[None], None)[0]


class ChatMessage(BaseModel):
    """A chat message (text content)."""

    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None

    @field_validator("content")
    @classmethod
    def _text_parts_only(cls, value: str | list[dict[str, Any]] | None) -> str | list[dict[str, Any]] | None:
        """The served model reads text: a part of another type (an image, audio) is refused, not dropped."""
        for part in value if isinstance(value, list) else ():
            if part.get("type") != "text" or not isinstance(part.get("text"), str):
                raise ValueError(f"content parts must be {{'type': 'text', 'text': str}}; faithwatch serve reads "
                                 f"text only, got type {part.get('type')!r}")
        for text in [value] if isinstance(value, str) else [p["text"] for p in value or ()]:
            require_text(text, "the content")  # an InputError is a ValueError: pydantic reports it
        return value

    def text(self) -> str:
        """The message's text (the text parts of a list content, joined)."""
        if isinstance(self.content, list):
            return "".join(p.get("text", "") for p in self.content if p.get("type") == "text")
        return self.content or ""


#: sampling and output fields this server cannot honour, each with the values that ask for nothing (what clients
#: send by default); any other value is refused (422) rather than ignored
_NEUTRAL: dict[str, tuple[Any, ...]] = {
    "top_p": (None, 1), "top_k": (None, 0, -1), "min_p": (None, 0), "frequency_penalty": (None, 0),
    "presence_penalty": (None, 0), "repetition_penalty": (None, 1), "logit_bias": (None, {}),
    "response_format": (None, {"type": "text"}), "tool_choice": (None, "none", "auto"),
}


class ChatRequest(BaseModel):
    """The OpenAI chat-completion fields this server honours; other fields are accepted and ignored, except
    ``stop`` sequences and the sampling and output fields of :data:`_NEUTRAL` set to anything but their neutral
    value (``top_p`` 0.9, a ``response_format`` of JSON, a required tool call), which it cannot honour and refuses
    (422) rather than run past. Without a ``seed``, each request draws one (as OpenAI: sampled answers differ
    between requests)."""

    model_config = ConfigDict(extra="allow")
    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    stream: StrictBool = False  # strict, as OpenAI's: "stream": "no" is an error, not read as a word
    n: JsonInt = Field(1, ge=1, le=16)
    max_tokens: JsonInt | None = Field(None, ge=1)
    max_completion_tokens: JsonInt | None = Field(None, ge=1)
    temperature: JsonFloat = Field(1.0, ge=0.0, le=2.0)
    seed: JsonInt | None = Field(None, ge=0, le=2**63 - 1)
    logprobs: StrictBool = False
    top_logprobs: JsonInt = Field(0, ge=0, le=20)
    continue_final_message: StrictBool = False
    add_generation_prompt: StrictBool = True
    stop: str | list[str] | None = None

    @field_validator("stop")
    @classmethod
    def _no_stop(cls, value: str | list[str] | None) -> None:
        if value:
            raise ValueError("stop sequences are not supported by faithwatch serve: leave 'stop' out (use max_tokens)")
        return None

    @model_validator(mode="after")
    def _nothing_unhonoured(self) -> ChatRequest:
        asked = [f"{k} {v!r}" for k, v in (self.model_extra or {}).items()
                 if k in _NEUTRAL and not any(v == n and type(v) is not bool for n in _NEUTRAL[k])]
        if asked:
            raise ValueError(f"faithwatch serve samples from the plain distribution and writes text only: it cannot "
                             f"honour {', '.join(asked)} (leave {'it' if len(asked) == 1 else 'them'} out)")
        return self

    def model_post_init(self, _context: Any) -> None:
        """Draw a seed when the request gives none (the answer then says which)."""
        if self.seed is None:
            self.seed = secrets.randbelow(2**62)

    @property
    def budget(self) -> int | None:
        """The token budget asked for: ``max_completion_tokens``, else ``max_tokens``."""
        return self.max_completion_tokens or self.max_tokens


def prompt_ids(tokenizer: Any, req: ChatRequest) -> list[int]:
    """The chat template applied to the messages (continuing the final assistant message if asked)."""
    messages = [{"role": m.role, "content": m.text()} for m in req.messages]
    if req.continue_final_message and messages[-1]["role"] != "assistant":
        raise InputError("continue_final_message needs the last message to be the assistant's")
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=(
            req.add_generation_prompt and not req.continue_final_message),
            continue_final_message=req.continue_final_message)
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])  # the template holds the specials
    text = "\n".join(f"{m['role']}: {m['content']}" for m in messages)
    if not req.continue_final_message:
        text += "\nassistant:"
    return list(tokenizer(text)["input_ids"])


@dataclass
class _Choice:
    """One choice being generated: its tokens, the text sent so far and the log-prob entries not yet sent."""

    index: int
    choose: Callable[[torch.Tensor], int]
    detok: IncrementalText  # the tokens fed so far and their text
    text: str = ""  # the text sent so far
    entries: list[dict[str, Any]] = field(default_factory=list)
    pending: list[dict[str, Any]] = field(default_factory=list)
    finish: str | None = None


def generate_choices(lm: Any, req: ChatRequest, max_tokens: int, check: Callable[[], None],
                     on_delta: Callable[[int, str, list[dict[str, Any]], str | None], None] | None = None
                     ) -> list[dict[str, Any]]:
    """Generate ``req.n`` choices together, as branches of one engine session sharing the prompt's cache. Choice i
    samples with seed ``req.seed + i``, so it is the choice a request with ``n=1`` and that seed gets, up to the
    float differences of a batched row (a draw near a bin edge may then differ). ``on_delta(index, text,
    logprob_entries, finish_reason)`` sees each piece as it is decoded, then each choice's end (choices
    interleave)."""
    from faithwatch.models.engine import DecodingEngine  # imports transformers: not before a request

    engine = DecodingEngine(lm, Needs())
    ids = prompt_ids(lm.tokenizer, req)
    session = engine.start(PromptPair(ids, ids, "", "", 0, ""))
    if req.n > 1:
        session.fork(req.n)
    seed = req.seed or 0  # drawn at validation when the request gave none
    choices = [_Choice(i, sampler(req.temperature, seed + i), IncrementalText(lm.tokenizer)) for i in range(req.n)]
    for _ in range(max_tokens):
        check()
        logp = session.branch_logprobs()
        tokens = [0] * len(choices)
        for c in choices:
            if c.finish is not None:
                continue
            tokens[c.index] = c.choose(logp[c.index])
            if tokens[c.index] in lm.eos_token_ids:
                _end(c, "stop", on_delta)
        live = [c.finish is None for c in choices]
        if not any(live):
            break
        session.feed_branches(tokens, live)
        for c in choices:
            if c.finish is None:
                _advance(lm.tokenizer, c, tokens[c.index], logp[c.index], req, on_delta)
    for c in choices:
        if c.finish is None:
            _end(c, "length", on_delta)
    return [{"index": c.index, "message": {"role": "assistant", "content": c.text},
             "logprobs": {"content": c.entries} if req.logprobs else None, "finish_reason": c.finish}
            for c in choices]


def _advance(tokenizer: Any, c: _Choice, token: int, logp: torch.Tensor, req: ChatRequest,
             on_delta: Callable | None) -> None:
    """Record a fed token; send the text it completes (an incomplete character waits for the next token)."""
    if req.logprobs:
        c.pending.append(_entry(tokenizer, logp, token, req.top_logprobs))
    decoded = c.detok.add(token)
    if decoded.endswith("\ufffd"):
        return
    piece, c.text = decoded[len(c.text):], decoded
    c.entries += c.pending
    if on_delta is not None:
        on_delta(c.index, piece, c.pending, None)
    c.pending = []


def _end(c: _Choice, finish: str, on_delta: Callable | None) -> None:
    c.finish = finish
    if on_delta is not None:
        on_delta(c.index, "", [], finish)


def _entry(tokenizer: Any, logp: torch.Tensor, token: int, top: int) -> dict[str, Any]:
    entry: dict[str, Any] = {"token": tokenizer.decode([token]), "logprob": float(logp[token])}
    if top:
        values, indices = torch.topk(logp, top)
        entry["top_logprobs"] = [{"token": tokenizer.decode([int(i)]), "logprob": float(v)}
                                 for v, i in zip(values.tolist(), indices.tolist(), strict=True)]
    return entry


def completion(model_id: str, choices: list[dict[str, Any]]) -> dict[str, Any]:
    """A ``chat.completion`` object."""
    return {"id": f"chatcmpl-{uuid.uuid4().hex[:20]}", "object": "chat.completion", "created": int(time.time()),
            "model": model_id, "choices": choices}
