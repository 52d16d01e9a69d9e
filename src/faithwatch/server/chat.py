"""``/v1/chat/completions`` of ``faithwatch serve``: the served model as a plain OpenAI-compatible generator.

It lets ``faithwatch proxy`` run offline with the embedded model as its upstream (docs/proxy.md), and offers
what the proxy's FOD policy asks of an upstream: ``n`` choices, a partial assistant message continued
(``continue_final_message``, as vLLM), seeds and per-token ``logprobs``/``top_logprobs``. Generation goes through
the one decoding engine (no signals recorded); it is not monitored.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

import torch
from pydantic import BaseModel, ConfigDict, Field

from faithwatch.decoding.loop import sampling_chooser
from faithwatch.errors import InputError
from faithwatch.models.engine import DecodingEngine, Needs
from faithwatch.models.prompts import PromptPair


def sampler(temperature: float, seed: int) -> Callable[[torch.Tensor], int]:
    """One row's token from its log-probabilities [V]: greedy at temperature 0, else seeded sampling at
    ``temperature`` (the decoding strategies' chooser, so the draw happens where the distribution lives)."""
    choose = sampling_chooser(temperature, torch.Generator().manual_seed(seed))
    return lambda logp: choose(logp[None], None)[0]


class ChatMessage(BaseModel):
    """A chat message (text content)."""

    model_config = ConfigDict(extra="allow")
    role: str
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(p.get("text", "") for p in self.content if p.get("type") == "text")
        return self.content or ""


class ChatRequest(BaseModel):
    """The OpenAI chat-completion fields this server honours; other fields are accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str | None = None
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    n: int = Field(1, ge=1, le=16)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float = Field(1.0, ge=0.0, le=2.0)
    seed: int = Field(0, ge=0, le=2**63 - 1)
    logprobs: bool = False
    top_logprobs: int = Field(0, ge=0, le=20)
    continue_final_message: bool = False
    add_generation_prompt: bool = True

    @property
    def budget(self) -> int | None:
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


def generate_choices(lm: Any, req: ChatRequest, max_tokens: int, check: Callable[[], None],
                     on_delta: Callable[[int, str, list[dict[str, Any]], str | None], None] | None = None
                     ) -> list[dict[str, Any]]:
    """Generate ``req.n`` choices one after the other (choice i samples with seed ``req.seed + i``);
    ``on_delta(index, text, logprob_entries, finish_reason)`` sees each piece as it is decoded, then the end."""
    engine = DecodingEngine(lm, Needs())
    ids = prompt_ids(lm.tokenizer, req)
    prompts = PromptPair(ids, ids, "", "", 0, "")
    choices = []
    for index in range(req.n):
        session = engine.start(prompts)
        choose = sampler(req.temperature, req.seed + index)
        out: list[int] = []
        text, entries, finish = "", [], "length"
        pending: list[dict[str, Any]] = []
        for _ in range(max_tokens):
            check()
            logp = session.next_logprobs()
            token = choose(logp)
            if token in lm.eos_token_ids:
                finish = "stop"
                break
            session.feed([token])
            out.append(token)
            if req.logprobs:
                pending.append(_entry(lm.tokenizer, logp, token, req.top_logprobs))
            decoded = lm.tokenizer.decode(out, skip_special_tokens=True)
            if decoded.endswith("\ufffd"):  # an incomplete character: wait for the next token
                continue
            piece, text = decoded[len(text):], decoded
            entries += pending
            if on_delta is not None:
                on_delta(index, piece, pending, None)
            pending = []
        choices.append({"index": index, "message": {"role": "assistant", "content": text},
                        "logprobs": {"content": entries} if req.logprobs else None, "finish_reason": finish})
        if on_delta is not None:
            on_delta(index, "", [], finish)
    return choices


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
