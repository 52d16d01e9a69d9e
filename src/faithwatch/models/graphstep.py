"""The one-token decode step of a static-cache session, replayed as a CUDA graph.

On a GPU a decode step of a small model is bound by kernel launches, not arithmetic: the forward pass of the main
and twin rows, the lookback ratios and the signal statistics launch hundreds of small kernels per token. With a
static KV cache every tensor of that step has a fixed shape and address, so the whole step (forward pass,
log-probabilities, entropy, KL, hidden states, lookback ratios) is captured once per cache and batch shape and
replayed for each token. Inputs go into static buffers (token ids, positions, the attention mask as a 4-D boolean
mask over the cache's width); the step's small statistics come back to the host in one transfer. On a CPU the same
static-shape step runs eagerly, which is what the CPU tests compare with the default path.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import count
from typing import TYPE_CHECKING

import torch

from faithwatch.models.attention import prompt_columns

if TYPE_CHECKING:
    from faithwatch.models.engine import EngineSession

_serials = count()


def cache_serial(cache) -> int:
    """A number that identifies a cache object for as long as it lives (captured graphs are keyed on it)."""
    serial = getattr(cache, "_faithwatch_serial", None)
    if serial is None:
        serial = next(_serials)
        cache._faithwatch_serial = serial
    return serial


@dataclass
class _Captured:
    """Static inputs of one captured step, its outputs and the graph (``None``: run eagerly, e.g. on a CPU)."""

    ids: torch.Tensor  # [R, 1]
    pos: torch.Tensor  # [R, 1]
    mask: torch.Tensor  # [R, 1, 1, W] bool
    ctx: torch.Tensor | None  # [B, 1, 1, W] bool: the prompt's columns of each main row
    cache: object  # kept alive: the graph writes into its tensors
    graph: torch.cuda.CUDAGraph | None = None
    outputs: tuple | None = None
    ctx_ends: tuple[int, ...] = ()  # the prompt ends ``ctx`` holds

    def load(self, ids: torch.Tensor, pos: torch.Tensor, mask: torch.Tensor, prompt_ends: list[int]) -> None:
        self.ids.copy_(ids)
        self.pos.copy_(pos)
        self.mask.copy_(mask[:, None, None, :] != 0)
        if self.ctx is not None and tuple(prompt_ends) != self.ctx_ends:
            self.ctx.copy_(prompt_columns(prompt_ends, self.ctx.shape[-1], self.ctx.device))
            self.ctx_ends = tuple(prompt_ends)


class StepGraphs:
    """An engine's captured one-token steps and the static caches they write to, shared by its sessions.

    A step is keyed by the cache it writes to and the batch shape; the prompt columns of the lookback ratios are an
    input, so sessions of other prompt lengths replay the same graph. A pooled cache is lent to one live session at
    a time. At most ``keep`` caches are pooled (the least recently used one is dropped with its graphs).
    ``captures`` counts the graphs captured so far."""

    def __init__(self, device: torch.device, keep: int = 8) -> None:
        self.cuda = device.type == "cuda"
        self.keep = keep
        self._steps: OrderedDict[tuple, _Captured] = OrderedDict()
        self._caches: OrderedDict[int, object] = OrderedDict()  # serial -> cache, least recently used first
        self.captures = 0

    def cache_for(self, session: EngineSession, rows: int, width: int, make: Callable[[], object]):
        """A pooled static cache of ``rows`` x ``width`` that no other live session holds, or a new one."""
        for serial, cache in reversed(self._caches.items()):
            if (cache.layers[0].max_cache_len, cache.layers[0].batch_size) != (width, rows):  # all initialised
                continue
            holder = cache._faithwatch_holder()
            if holder is None or holder is session or holder._cache is not cache:
                self._caches.move_to_end(serial)
                break
        else:
            cache = make()
            self._caches[cache_serial(cache)] = cache
            while len(self._caches) > self.keep:
                old, _ = self._caches.popitem(last=False)
                for key in [k for k in self._steps if k[0] == old]:
                    del self._steps[key]
        cache._faithwatch_holder = weakref.ref(session)
        return cache

    @torch.inference_mode()
    def step(self, session: EngineSession, ids: torch.Tensor, pos: torch.Tensor, mask: torch.Tensor) -> tuple:
        """Run one decode step (ids/pos [R, 1] for the main and twin rows, mask [R, W] over the cache's width);
        returns (logp, twin_logp, entropy, kl, hidden, lookback) on the device, as ``EngineSession._forward``."""
        key = (cache_serial(session._cache), tuple(mask.shape), session.branches)
        cap = self._steps.get(key)
        if cap is None:
            cap = self._new(session, key, ids, pos, mask)
        else:
            self._steps.move_to_end(key)
            cap.load(ids, pos, mask, session._prompt_ends)
            if cap.graph is not None:
                cap.graph.replay()
            else:
                cap.outputs = self._body(session, cap)
        logp, twin_logp, entropy, kl, hidden, lookback = cap.outputs
        if cap.graph is not None:  # the graph overwrites its outputs at the next replay
            logp = logp.clone()
            twin_logp = None if twin_logp is None else twin_logp.clone()
        return logp, twin_logp, entropy, kl, hidden, lookback

    @staticmethod
    def _body(session: EngineSession, cap: _Captured) -> tuple:
        logits, hidden, lookback = session._run(cap.ids, cap.pos, 1, cap.mask, ctx=cap.ctx)
        return (*session._device_stats(logits), hidden, lookback)

    def _new(self, session: EngineSession, key: tuple, ids: torch.Tensor, pos: torch.Tensor,
             mask: torch.Tensor) -> _Captured:
        rows, width = mask.shape
        device = mask.device
        ctx = (torch.zeros(session.branches, 1, 1, width, dtype=torch.bool, device=device) if session.needs.lookback
               else None)
        cap = _Captured(ids.clone(), pos.clone(), torch.zeros(rows, 1, 1, width, dtype=torch.bool, device=device),
                        ctx, session._cache)
        cap.load(ids, pos, mask, session._prompt_ends)
        if not self.cuda:
            cap.outputs = self._body(session, cap)
        else:
            self._capture(session, cap)
        self._steps[key] = cap
        return cap

    def _capture(self, session: EngineSession, cap: _Captured) -> None:
        """Warm up on a side stream (this runs the step once), rewind the cache, capture, then replay: the replay
        computes this step again, so its outputs come from the graph itself."""
        layers = session._cache.layers
        lengths = [layer.cumulative_length.clone() for layer in layers]
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            self._body(session, cap)
        torch.cuda.current_stream().wait_stream(stream)
        for layer, n in zip(layers, lengths, strict=True):
            layer.cumulative_length.copy_(n)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            cap.outputs = self._body(session, cap)
        cap.graph = graph
        self.captures += 1
        graph.replay()
