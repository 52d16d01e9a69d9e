"""The decoding engine: one forward path for live decoding and for teacher forcing.

A session holds the KV cache of the RAG prompt and, when a signal needs it, of the no-context twin,
batched as row 1 of the same forward pass (left-padded), so the twin costs no extra model call.
``feed(tokens)`` runs the model on tokens that were chosen live (one at a time) or given (a chunk):
for each fed token it records what the active signals declared they need, from the distribution that
predicted it. Everything downstream is a pure function of these records.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch
from transformers import DynamicCache

from faithwatch.errors import ContextTooLongError, InputError
from faithwatch.models.attention import LookbackRecorder, recording
from faithwatch.models.loading import LoadedModel
from faithwatch.models.prompts import PromptPair


@dataclass(frozen=True)
class Needs:
    """What the active signals need the engine to record per token."""

    twin: bool = False
    hidden_layers: tuple[int, ...] = ()  # 1-based decoder layer indices (output of layer l)
    lookback: bool = False

    def __or__(self, other: Needs) -> Needs:
        return Needs(
            twin=self.twin or other.twin,
            hidden_layers=tuple(sorted(set(self.hidden_layers) | set(other.hidden_layers))),
            lookback=self.lookback or other.lookback,
        )


@dataclass
class TokenRecords:
    """Per generated token: what the signals consume. Arrays grow as tokens are fed."""

    token_ids: list[int] = field(default_factory=list)
    logprob: list[float] = field(default_factory=list)  # log p(chosen token | RAG prompt, prefix)
    entropy: list[float] = field(default_factory=list)  # entropy of the full distribution / log |V|
    kl: list[float] = field(default_factory=list)  # KL(with context || without context), nats
    hidden: list[np.ndarray] = field(default_factory=list)  # [n_layers_recorded, d]
    lookback: list[np.ndarray] = field(default_factory=list)  # [layers, heads]
    hidden_layers: tuple[int, ...] = ()  # the layers stored in ``hidden``, in order

    def __len__(self) -> int:
        return len(self.token_ids)


@dataclass
class _Step:
    """Statistics of the newest positions of one forward pass (row i predicts the token after it)."""

    logp: torch.Tensor  # [rows, V] main log-probabilities
    twin_logp: torch.Tensor | None
    entropy: np.ndarray
    kl: np.ndarray | None
    hidden: np.ndarray | None  # [rows, n_layers, d]
    lookback: np.ndarray | None  # [rows, L, H]

    def row(self, i: int) -> _Step:
        return _slice(self, i, i + 1)


def _decoder_layers(model: torch.nn.Module) -> torch.nn.ModuleList:
    n = model.config.num_hidden_layers
    for module in model.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == n:
            return module
    raise RuntimeError(f"cannot find the {n} decoder layers of {type(model).__name__}")


class DecodingEngine:
    """Runs a loaded causal LM and records per-token signal inputs."""

    def __init__(self, lm: LoadedModel, needs: Needs) -> None:
        bad = [layer for layer in needs.hidden_layers if not 1 <= layer <= lm.num_layers]
        if bad:
            raise InputError(f"hidden layers {bad} out of range 1..{lm.num_layers} for {lm.model_id}")
        self.lm = lm
        self.needs = needs
        self._layers = _decoder_layers(lm.model) if needs.hidden_layers else None

    def start(self, prompts: PromptPair) -> EngineSession:
        """Prefill the prompt(s) and return a session ready to choose the first token."""
        return EngineSession(self, prompts)


class EngineSession:
    """One generation: KV caches, per-token records, and the distribution for the next token."""

    def __init__(self, engine: DecodingEngine, prompts: PromptPair) -> None:
        self.engine = engine
        self.lm = engine.lm
        self.needs = engine.needs
        self.prompt_len = len(prompts.rag_ids)
        self.records = TokenRecords(hidden_layers=self.needs.hidden_layers)
        self._cache = DynamicCache()
        device = self.lm.device
        main = torch.tensor(prompts.rag_ids, device=device)[None]
        self._mask = torch.ones_like(main)
        self._lengths = [self.prompt_len]
        logits, hidden, lookback = self._run(main, torch.arange(self.prompt_len, device=device)[None], rows=1)
        if self.needs.twin:
            twin_logits = self._prefill_twin(prompts.twin_ids)
            logits = torch.cat([logits, twin_logits])
        self._pending = self._stats(logits, hidden, lookback)

    def _prefill_twin(self, twin_ids: list[int]) -> torch.Tensor:
        """Prefill the twin alone (no padding cost), then join its KV cache to the main one as batch row 1."""
        pad = self.prompt_len - len(twin_ids)
        if pad < 0:
            raise ValueError("the no-context twin prompt is longer than the RAG prompt")
        device = self.lm.device
        cache = DynamicCache()
        with torch.inference_mode():
            out = self.lm.model(
                input_ids=torch.tensor([twin_ids], device=device),
                position_ids=torch.arange(len(twin_ids), device=device)[None],
                past_key_values=cache, use_cache=True, logits_to_keep=1,
            )
        for main_layer, twin_layer in zip(self._cache.layers, cache.layers, strict=True):
            # left-pad the twin's keys/values to the main length; the mask hides the padding
            main_layer.keys = torch.cat([main_layer.keys, torch.nn.functional.pad(twin_layer.keys, (0, 0, pad, 0))])
            main_layer.values = torch.cat(
                [main_layer.values, torch.nn.functional.pad(twin_layer.values, (0, 0, pad, 0))]
            )
        mask = torch.ones(2, self.prompt_len, dtype=torch.long, device=device)
        mask[1, :pad] = 0
        self._mask = mask
        self._lengths = [self.prompt_len, len(twin_ids)]
        return out.logits[:, -1:, :].float()

    # --- public API -------------------------------------------------------------------------------------
    @property
    def position(self) -> int:
        """Tokens in the RAG sequence so far (prompt + fed tokens)."""
        return self._lengths[0]

    def next_logprobs(self) -> torch.Tensor:
        """Log-probabilities of the next token given the RAG prompt and the tokens fed so far, [V]."""
        return self._pending.logp[0]

    def next_twin_logprobs(self) -> torch.Tensor:
        """The same without the context (needs ``Needs(twin=True)``), [V]."""
        if self._pending.twin_logp is None:
            raise RuntimeError("this session runs no twin pass; enable a signal that needs it")
        return self._pending.twin_logp[0]

    def feed(self, token_ids: Sequence[int]) -> None:
        """Append tokens (chosen live or given), record their signals and advance the caches."""
        tokens = [int(t) for t in token_ids]
        if not tokens:
            return
        if self.position + len(tokens) > self.lm.max_length:
            raise ContextTooLongError(
                f"{self.position + len(tokens)} tokens exceed the model window of {self.lm.max_length}"
            )
        device = self.lm.device
        batch = len(self._lengths)
        ids = torch.tensor(tokens, device=device)[None].expand(batch, -1)
        pos = torch.stack([torch.arange(n, n + len(tokens)) for n in self._lengths]).to(device)
        self._mask = torch.cat([self._mask, torch.ones(batch, len(tokens), dtype=torch.long, device=device)], 1)
        given = self._pending
        step = self._forward(ids, pos, rows=len(tokens))
        self._lengths = [n + len(tokens) for n in self._lengths]
        self._record(given, tokens[:1])
        if len(tokens) > 1:
            self._record(_slice(step, 0, len(tokens) - 1), tokens[1:])
        self._pending = step.row(len(tokens) - 1)

    # --- internals --------------------------------------------------------------------------------------
    def _forward(self, ids: torch.Tensor, pos: torch.Tensor, rows: int) -> _Step:
        return self._stats(*self._run(ids, pos, rows))

    @torch.inference_mode()
    def _run(self, ids: torch.Tensor, pos: torch.Tensor, rows: int):
        """One model call on all rows; returns the newest ``rows`` logits, hidden states and lookback ratios."""
        needs = self.needs
        captured: dict[int, torch.Tensor] = {}
        hooks = []
        if needs.hidden_layers:
            for layer in needs.hidden_layers:
                module = self.engine._layers[layer - 1]
                hooks.append(module.register_forward_hook(_capture(captured, layer, rows)))
        recorder = LookbackRecorder(prompt_len=self.prompt_len, rows=rows) if needs.lookback else None
        try:
            with recording(recorder):
                out = self.lm.model(
                    input_ids=ids,
                    attention_mask=self._mask,
                    position_ids=pos,
                    past_key_values=self._cache,
                    use_cache=True,
                    logits_to_keep=rows,
                )
        finally:
            for hook in hooks:
                hook.remove()
        hidden = None
        if needs.hidden_layers:
            hidden = torch.stack([captured[layer] for layer in needs.hidden_layers], 1).float().cpu().numpy()
        lookback = recorder.ratios(self.lm.num_layers).float().cpu().numpy() if recorder else None
        return out.logits[:, -rows:, :].float(), hidden, lookback

    @torch.inference_mode()
    def _stats(self, logits: torch.Tensor, hidden, lookback) -> _Step:
        """Per-position statistics from the logits of the main row (0) and the twin row (1)."""
        logp = torch.log_softmax(logits[0], dim=-1)
        entropy = -(logp.exp() * logp).sum(-1) / math.log(logp.shape[-1])
        twin_logp = kl = None
        if self.needs.twin:
            twin_logp = torch.log_softmax(logits[1], dim=-1)
            kl = (logp.exp() * (logp - twin_logp)).sum(-1).clamp(min=0.0).cpu().numpy()
        return _Step(logp, twin_logp, entropy.cpu().numpy(), kl, hidden, lookback)

    def _record(self, step: _Step, tokens: list[int]) -> None:
        rec = self.records
        idx = torch.tensor(tokens, device=step.logp.device)
        rec.token_ids.extend(tokens)
        rec.logprob.extend(step.logp.gather(1, idx[:, None])[:, 0].cpu().tolist())
        rec.entropy.extend(step.entropy.tolist())
        if step.kl is not None:
            rec.kl.extend(step.kl.tolist())
        if step.hidden is not None:
            rec.hidden.extend(step.hidden)
        if step.lookback is not None:
            rec.lookback.extend(step.lookback)


def _slice(step: _Step, start: int, stop: int) -> _Step:
    pick = slice(start, stop)
    return _Step(
        step.logp[pick],
        None if step.twin_logp is None else step.twin_logp[pick],
        step.entropy[pick],
        None if step.kl is None else step.kl[pick],
        None if step.hidden is None else step.hidden[pick],
        None if step.lookback is None else step.lookback[pick],
    )


def _capture(store: dict[int, torch.Tensor], layer: int, rows: int):
    def hook(_module, _inputs, output):
        hidden = output[0] if isinstance(output, (tuple, list)) else output
        store[layer] = hidden[0, -rows:, :].detach()

    return hook
