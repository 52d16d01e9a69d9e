"""The decoding engine: one forward path for live decoding and for teacher forcing.

A session holds the KV cache of the RAG prompt and, when a signal needs it, of the no-context twin,
batched as row 1 of the same forward pass (left-padded), so the twin costs no extra model call.
``feed(tokens)`` runs the model on tokens that were chosen live (one at a time) or given (a chunk):
for each fed token it records what the active signals declared they need, from the distribution that
predicted it. Everything downstream is a pure function of these records (:mod:`faithwatch.models.records`).
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from transformers import DynamicCache, StaticCache
from transformers.cache_utils import StaticLayer

from faithwatch.errors import ContextTooLongError, InputError
from faithwatch.models.ahead import GREEDY, Ahead, OnDevice, collect, launch
from faithwatch.models.attention import LookbackRecorder, recording
from faithwatch.models.graphstep import StepGraphs
from faithwatch.models.loading import LoadedModel
from faithwatch.models.prompts import PromptPair, groups_in_order
from faithwatch.models.records import (
    Checkpoint,
    Needs,
    Step,
    TokenRecords,
    concat_steps,
    copy_records,
    gather_chosen,
    merge_steps,
    to_host,
    truncate_records,
)

#: columns a static KV cache grows by when it is full (shapes change once per block, not once per token)
STATIC_BLOCK = 256


def _decoder_layers(model: torch.nn.Module) -> torch.nn.ModuleList:
    n = model.config.num_hidden_layers
    for module in model.modules():
        if isinstance(module, torch.nn.ModuleList) and len(module) == n:
            return module
    raise RuntimeError(f"cannot find the {n} decoder layers of {type(model).__name__}")


class DecodingEngine:
    """Runs a loaded causal LM and records per-token signal inputs."""

    def __init__(self, lm: LoadedModel, needs: Needs, static_cache: bool = False, cuda_graph: bool = False) -> None:
        bad = [layer for layer in needs.hidden_layers if not 1 <= layer <= lm.num_layers]
        if bad:
            raise InputError(f"hidden layers {bad} out of range 1..{lm.num_layers} for {lm.model_id}")
        self.lm = lm
        self.needs = needs
        self._layers = _decoder_layers(lm.model) if needs.hidden_layers else None
        #: the KV cache argument's name: ``cache`` in newer transformers 5 releases (``past_key_values`` before)
        params = inspect.signature(lm.model.forward).parameters
        self.cache_arg = "cache" if "cache" in params else "past_key_values"
        #: called before every forward step of every session; it may raise to stop (e.g. a server cancel token)
        self.before_step: Callable[[], None] | None = None
        #: with ``cuda_graph``: the captured one-token steps and their pooled caches
        #: (:mod:`faithwatch.models.graphstep`; on a CPU the same static-shape step runs eagerly)
        self.graphs = StepGraphs(lm.device) if cuda_graph else None
        #: :meth:`start_forced` rewinds the last session when the prompt is the same (False: always prefill)
        self.reuse_prompts = True
        #: :meth:`start_forced`'s last session: (prompt key, session, checkpoint after the prompt)
        self._forced: tuple[tuple, EngineSession, Checkpoint] | None = None
        #: decode into a preallocated KV cache (``transformers.StaticCache``) that grows in blocks of
        #: ``STATIC_BLOCK`` columns: fixed tensor shapes, what CUDA graphs / ``torch.compile`` need. The prompt is
        #: prefilled as usual and then copied in; the records equal the dynamic cache's (tested). Implied by
        #: ``cuda_graph``.
        self.static_cache = static_cache = static_cache or cuda_graph
        if static_cache and any(type(layer) is not StaticLayer
                                for layer in StaticCache(config=lm.model.config, max_cache_len=1).layers):
            raise InputError(f"static_cache supports full-attention models only; {lm.model_id} has sliding-window "
                             "or other cache layers (use the default dynamic cache)")

    def start(self, prompts: PromptPair) -> EngineSession:
        """Prefill the prompt(s) and return a session ready to choose the first token."""
        self._forced = None  # another session may now reuse pooled caches
        return EngineSession(self, prompts)

    def start_many(self, prompts: Sequence[PromptPair]) -> EngineSession:
        """Prefill N independent prompts as one batch (left-padded and masked): a session with N branches, one per
        prompt, for teacher forcing many records per forward pass (:meth:`EngineSession.feed_many`). Identical
        prompts are prefilled once and their branches share that prefill (copies of its cache rows)."""
        if not prompts:
            raise InputError("start_many needs at least one prompt")
        self._forced = None
        order, firsts = groups_in_order(p.key for p in prompts)
        unique = [prompts[i] for i in firsts]
        session = EngineSession(self, unique[0]) if len(unique) == 1 else EngineSession(self, unique)
        session.select(order)
        return session

    def start_forced(self, prompts: PromptPair) -> EngineSession:
        """A session for teacher forcing one record. When the previous call had the same prompts and no other
        session was started since, its session is rewound to the end of the prompt instead of prefilling it again
        (records that share a prompt, e.g. several answers to one question); the records it handed out before stay
        as they were. Not with CUDA graphs, whose pooled caches other sessions reuse in place."""
        key = prompts.key
        memo = self._forced
        if self.reuse_prompts and memo is not None and memo[0] == key and memo[1].branches == 1:
            memo[1].restore(memo[2], detach=True)
            return memo[1]
        session = self.start(prompts)
        if self.graphs is None and self.reuse_prompts:
            self._forced = (key, session, session.checkpoint())
        return session


class EngineSession:
    """One generation: KV caches, per-token records, and the distribution for the next token.

    A session starts with one branch; ``fork``/``select`` turn it into B branches that share the prefix's KV
    cache and advance in lockstep (``feed_branches``), e.g. candidate sentences sampled as one batch. Batch rows
    are [main_0 .. main_B-1, twin_0 .. twin_B-1].
    """

    def __init__(self, engine: DecodingEngine, prompts: PromptPair | Sequence[PromptPair]) -> None:
        self.engine = engine
        self.lm = engine.lm
        self.needs = engine.needs
        many = list(prompts) if not isinstance(prompts, PromptPair) else [prompts]
        self.prompt_len = max(len(p.rag_ids) for p in many)  # physical: shorter prompts are left-padded
        self.branch_records = [TokenRecords(hidden_layers=self.needs.hidden_layers) for _ in many]
        self._closed = False  # see cut()
        self._cache = DynamicCache()
        self._cache_len = self.prompt_len  # physical cache length (branches may hold masked holes)
        #: per branch: the physical cache column where its prompt ends (all equal unless sessions were joined)
        self._prompt_ends = [self.prompt_len] * len(many)
        if len(many) == 1:
            self._prefill_one(many[0])
        else:
            self._prefill_many(many)
        if engine.static_cache:
            self._set_kv(self._kv())  # re-homed in a static cache with room for the next block

    def _prefill_one(self, prompts: PromptPair) -> None:
        device = self.lm.device
        main = torch.tensor(prompts.rag_ids, device=device)[None]
        self._mask = torch.ones_like(main)
        self._main_lens, self._twin_lens = [self.prompt_len], [0]
        logits, hidden, lookback = self._run(main, torch.arange(self.prompt_len, device=device)[None], 1, self._mask)
        if self.needs.twin:
            logits = torch.cat([logits, self._prefill_twins([prompts.twin_ids])])
        self._pending = self._host_step(*self._device_stats(logits), hidden, lookback)

    def _prefill_many(self, many: list[PromptPair]) -> None:
        """The main rows, left-padded to the longest prompt (masked; positions start at 0), then the twins as a
        second pass of their own width (no padding to the main length), joined as rows below the mains."""
        self._main_lens = [len(p.rag_ids) for p in many]
        self._twin_lens = [0] * len(many)
        ids, self._mask, pos = _left_padded([p.rag_ids for p in many], self.prompt_len, self.lm.device)
        logits, hidden, lookback = self._run(ids, pos, 1, self._mask)
        if self.needs.twin:
            logits = torch.cat([logits, self._prefill_twins([p.twin_ids for p in many])])
        self._pending = self._host_step(*self._device_stats(logits), hidden, lookback)

    def _prefill_twins(self, twins: list[list[int]]) -> torch.Tensor:
        """Prefill the no-context twins alone (left-padded to the longest twin), then join their KV caches to the
        main ones as the rows below them, left-padded to the main length; the mask hides all padding."""
        width = max(len(t) for t in twins)
        pad = self.prompt_len - width
        if pad < 0:
            raise ValueError("the no-context twin prompt is longer than the RAG prompt")
        ids, mask, pos = _left_padded(twins, width, self.lm.device)
        cache = DynamicCache()
        with torch.inference_mode():
            out = self.lm.model(input_ids=ids, attention_mask=mask if len(twins) > 1 else None, position_ids=pos,
                                use_cache=True, logits_to_keep=1, **{self.engine.cache_arg: cache})
        for main_layer, twin_layer in zip(self._cache.layers, cache.layers, strict=True):
            main_layer.keys = torch.cat([main_layer.keys, torch.nn.functional.pad(twin_layer.keys, (0, 0, pad, 0))])
            main_layer.values = torch.cat(
                [main_layer.values, torch.nn.functional.pad(twin_layer.values, (0, 0, pad, 0))]
            )
        self._mask = torch.cat([self._mask, torch.nn.functional.pad(mask, (pad, 0))])
        self._twin_lens = [len(t) for t in twins]
        return out.logits[:, -1:, :].float()

    # --- public API -------------------------------------------------------------------------------------
    @property
    def branches(self) -> int:
        """Number of parallel branches."""
        return len(self.branch_records)

    @property
    def records(self) -> TokenRecords:
        """Records of the (single) branch."""
        self._single("records")
        return self.branch_records[0]

    @property
    def position(self) -> int:
        """Tokens in the RAG sequence so far (prompt + fed tokens) of the single branch."""
        self._single("position")
        return self._main_lens[0]

    @property
    def positions(self) -> list[int]:
        """Tokens in each branch's RAG sequence so far."""
        return list(self._main_lens)

    def next_logprobs(self) -> torch.Tensor:
        """Log-probabilities of the next token given the RAG prompt and the tokens fed so far, [V]."""
        self._single("next_logprobs")
        return self._pending.logp[0, 0]

    def next_twin_logprobs(self) -> torch.Tensor:
        """The same without the context (needs ``Needs(twin=True)``), [V]."""
        self._single("next_twin_logprobs")
        return self.branch_twin_logprobs()[0]

    def branch_logprobs(self) -> torch.Tensor:
        """Next-token log-probabilities of every branch, [B, V]."""
        return self._pending.logp[:, 0]

    def branch_twin_logprobs(self) -> torch.Tensor:
        """Next-token log-probabilities of every branch without the context, [B, V]."""
        if self._pending.twin_logp is None:
            raise RuntimeError("this session runs no twin pass; enable a signal that needs it")
        return self._pending.twin_logp[:, 0]

    def feed(self, token_ids: Sequence[int]) -> None:
        """Append tokens (chosen live or given) to the single branch, record their signals, advance the caches."""
        self._single("feed")
        tokens = [int(t) for t in token_ids]
        if tokens:
            self._feed(np.asarray([tokens], dtype=np.int64))

    def feed_branches(self, token_ids: Sequence[int], active: Sequence[bool] | None = None) -> None:
        """Append one token to every active branch (``token_ids[b]`` to branch b).

        Inactive branches (e.g. a candidate sentence that already ended) are left as they are: the token fed to
        their batch row is masked out, their position does not advance and nothing is recorded.
        """
        if len(token_ids) != self.branches or (active is not None and len(active) != self.branches):
            raise ValueError(f"{len(token_ids)} tokens for {self.branches} branches")
        flags = [True] * self.branches if active is None else [bool(a) for a in active]
        if any(flags):
            self._feed(np.asarray([[int(t)] for t in token_ids], dtype=np.int64), flags)

    def feed_many(self, token_ids: Sequence[Sequence[int]]) -> None:
        """Append its own tokens to every branch (``token_ids[b]`` to branch b, any lengths, empty allowed) in one
        forward pass: shorter rows are padded with masked tokens, and only real tokens are recorded."""
        if len(token_ids) != self.branches:
            raise ValueError(f"{len(token_ids)} token lists for {self.branches} branches")
        rows = [[int(t) for t in seq] for seq in token_ids]
        k = max((len(r) for r in rows), default=0)
        if k == 0:
            return
        ids = np.zeros((len(rows), k), dtype=np.int64)
        for b, row in enumerate(rows):
            ids[b, : len(row)] = row
        self._feed(ids, counts=[len(r) for r in rows])

    def select(self, branches: Sequence[int]) -> None:
        """Keep the given branches, in this order (repeats allowed: ``fork`` is ``select`` with repeats)."""
        idx = [int(b) for b in branches]
        if not idx or any(not 0 <= b < self.branches for b in idx):
            raise ValueError(f"branch indices {idx} out of range for {self.branches} branches")
        if idx == list(range(self.branches)):
            return  # keeping every branch in place: no cache copy (greedy selects its one branch per sentence)
        rows = idx + ([self.branches + b for b in idx] if self.needs.twin else [])
        index = torch.tensor(rows, device=self.lm.device)
        self._set_kv([(k.index_select(0, index), v.index_select(0, index)) for k, v in self._kv()])
        self._mask = self._mask.index_select(0, index)
        self._pending = self._pending.take(idx)
        self._main_lens = [self._main_lens[b] for b in idx]
        self._twin_lens = [self._twin_lens[b] for b in idx]
        self._prompt_ends = [self._prompt_ends[b] for b in idx]
        self.branch_records = [copy_records(self.branch_records[b]) for b in idx]

    def join(self, other: EngineSession) -> None:
        """Append the branches of ``other`` (a session of the same engine, e.g. a request that arrived while these
        branches decode) after this session's. The shorter cache is left-padded (masked), so every branch keeps
        its positions, records and next distribution: what it computes next equals what it would alone."""
        if other.engine is not self.engine:
            raise ValueError("only sessions of the same engine can be joined")
        width = max(self._cache_len, other._cache_len)
        pad_a, pad_b = width - self._cache_len, width - other._cache_len
        a, b = self.branches, other.branches

        def merge(x: torch.Tensor, y: torch.Tensor, dim: int) -> torch.Tensor:
            pads = [0, 0] * (x.dim() - 1 - dim)
            x = torch.nn.functional.pad(x, (*pads, pad_a, 0))
            y = torch.nn.functional.pad(y, (*pads, pad_b, 0))
            if not self.needs.twin:
                return torch.cat([x, y])
            return torch.cat([x[:a], y[:b], x[a:], y[b:]])  # rows: mains, then twins

        self._set_kv([(merge(k, k2, 2), merge(v, v2, 2))
                      for (k, v), (k2, v2) in zip(self._kv(), other._kv(), strict=True)])
        self._mask = merge(self._mask, other._mask, 1)
        self._pending = concat_steps(self._pending, other._pending)
        self._main_lens += other._main_lens
        self._twin_lens += other._twin_lens
        self._prompt_ends = [e + pad_a for e in self._prompt_ends] + [e + pad_b for e in other._prompt_ends]
        self._cache_len = width
        self.branch_records += other.branch_records

    def trim(self) -> int:
        """Drop leading cache columns that every row masks (left by branches that were dropped with
        :meth:`select`); returns how many. Earlier checkpoints cannot be restored after a trim."""
        used = torch.nonzero(self._mask.any(0))
        first = int(used[0]) if len(used) else 0
        if first:
            self._set_kv([(k[:, :, first:], v[:, :, first:]) for k, v in self._kv()])
            self._mask = self._mask[:, first:]
            self._cache_len -= first
            self._prompt_ends = [e - first for e in self._prompt_ends]
        return first

    def fork(self, n: int) -> None:
        """Repeat every branch ``n`` times (branch b becomes branches b*n .. b*n+n-1), sharing the cache."""
        self.select([b for b in range(self.branches) for _ in range(n)])

    def checkpoint(self) -> Checkpoint:
        """The current state, to :meth:`restore` later (e.g. to backtrack over a rejected sentence)."""
        return Checkpoint(self._cache_len, tuple(self._main_lens), tuple(self._twin_lens),
                          tuple(len(r) for r in self.branch_records), self._pending)

    def restore(self, cp: Checkpoint, *, detach: bool = False) -> None:
        """Return to a checkpoint taken with the same branches: later tokens are dropped from caches and records
        (``detach``: from copies of the records, so that records handed out before stay as they are)."""
        drop = self._cache_len - cp.cache_len
        if drop < 0 or len(cp.main_lens) != self.branches:
            raise ValueError("the checkpoint is not an earlier state of these branches")
        if drop:
            with torch.inference_mode():  # a static cache's length counter is an inference tensor
                self._cache.crop(-drop)  # transformers 5: a negative count removes that many tokens
            self._mask = self._mask[:, : cp.cache_len]
        self._cache_len, self._pending = cp.cache_len, cp.pending
        self._main_lens, self._twin_lens = list(cp.main_lens), list(cp.twin_lens)
        if detach:  # new lists of the records the checkpoint keeps
            self.branch_records = [copy_records(r, n) for r, n in zip(self.branch_records, cp.n_records, strict=True)]
        else:
            for rec, n in zip(self.branch_records, cp.n_records, strict=True):
                truncate_records(rec, n)

    # --- internals --------------------------------------------------------------------------------------
    def _kv(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per layer: the keys and values of the cache's used columns [rows, kv_heads, cache_len, head_dim]."""
        n = self._cache_len
        return [(layer.keys[:, :, :n], layer.values[:, :, :n]) for layer in self._cache.layers]

    @torch.inference_mode()
    def _set_kv(self, kv: list[tuple[torch.Tensor, torch.Tensor]], need: int = 0) -> None:
        """Replace the cache's contents by ``kv``; a static cache gets room for at least ``need`` columns."""
        if not self.engine.static_cache:
            for layer, (k, v) in zip(self._cache.layers, kv, strict=True):
                layer.keys, layer.values = k, v
            return
        used = kv[0][0].shape[2]
        need = max(need, used)
        room = min((need // STATIC_BLOCK + 1) * STATIC_BLOCK, max(self.lm.max_length, need))

        def make() -> StaticCache:
            return StaticCache(config=self.lm.model.config, max_cache_len=room)

        # with CUDA graphs, pooled caches are reused in place, so the graphs captured on them stay valid (FOD's
        # fork and select move between a few batch shapes; the next request reuses them)
        graphs = self.engine.graphs
        cache = graphs.cache_for(self, kv[0][0].shape[0], room, make) if graphs is not None else make()
        for layer, (k, v) in zip(cache.layers, kv, strict=True):
            if not layer.is_initialized:
                layer.lazy_initialization(k, v)
            elif cache is self._cache:  # kv may be views of this very cache (trim): copy them out first
                k, v = k.clone(), v.clone()
            layer.keys[:, :, :used] = k
            layer.values[:, :, :used] = v
            layer.cumulative_length.fill_(used)
        self._cache = cache

    def launch(self, n: int, choose: OnDevice = GREEDY) -> Ahead:
        """Choose ``n`` tokens on the device (greedy by default) and feed them without a host sync per token;
        :meth:`collect` records them as ``n`` calls of ``feed`` would (:mod:`faithwatch.models.ahead`). Launches
        chain; collect them in order, and feed nothing else until they are collected."""
        self._check_open(launched=True)
        return launch(self, n, choose)

    def collect(self, ahead: Ahead) -> list[int]:
        """Record the tokens of a :meth:`launch` (waiting for its copy to the host) and return them."""
        return collect(self, ahead)

    def cut(self, n: int) -> None:
        """Keep the records of the first ``n`` tokens and close the session: its cache still holds the tokens after
        them (e.g. those decoded ahead past an end of sequence), so feeding it again is an error."""
        self._single("cut")
        truncate_records(self.branch_records[0], n)
        self._closed = True

    def _check_open(self, launched: bool = False) -> None:
        """Refuse a cut session, and (unless ``launched`` steps may chain) one with greedy steps not collected."""
        if self._closed:
            raise RuntimeError("this session was cut; start a new one")
        if not launched and not isinstance(self._pending.entropy, np.ndarray):
            raise RuntimeError("collect the launched greedy steps before feeding the session again")

    def _model_mask(self, new: int) -> torch.Tensor:
        """The attention mask the model sees: with a static cache, padded with zeros to the cache's full width
        (growing the cache first when ``new`` more columns would not fit)."""
        if not isinstance(self._cache, StaticCache):  # dynamic, or a static session's prefill
            return self._mask
        width = self._cache.layers[0].max_cache_len
        if self._cache_len + new > width:
            self._set_kv(self._kv(), self._cache_len + new)
            width = self._cache.layers[0].max_cache_len
        return torch.nn.functional.pad(self._mask, (0, width - self._mask.shape[1]))

    def _single(self, what: str) -> None:
        if self.branches != 1:
            raise RuntimeError(f"{what} needs a single-branch session; this one has {self.branches} branches")

    def _feed(self, ids: np.ndarray, active: list[bool] | None = None, counts: list[int] | None = None) -> None:
        """ids: [B, k] token ids per branch (on the host). ``active`` (k == 1): which branches take their token;
        ``counts``: how many of its k tokens each branch takes (a prefix; the rest are masked padding).

        Token ids, positions and mask columns go to the device in one copy; the step's statistics and the chosen
        tokens' log-probabilities come back in one copy (one device sync per step)."""
        self._check_open()
        if self.engine.before_step is not None:
            self.engine.before_step()
        k, b = ids.shape[1], self.branches
        if counts is None:
            counts = [k * bool(a) for a in (active or [True] * b)]
        flags = [c > 0 for c in counts]
        longest = max(n + c for n, c in zip(self._main_lens, counts, strict=True))
        if longest > self.lm.max_length:
            raise ContextTooLongError(f"{longest} tokens exceed the model window of {self.lm.max_length}")
        steps = np.arange(k)
        rows = ids
        pos = np.add.outer(np.asarray(self._main_lens, dtype=np.int64), steps)
        keep = (steps[None] < np.asarray(counts)[:, None]).astype(np.int64)  # [B, k]
        if self.needs.twin:
            rows = np.concatenate([ids, ids])
            pos = np.concatenate([pos, np.add.outer(np.asarray(self._twin_lens, dtype=np.int64), steps)])
            keep = np.concatenate([keep, keep])
        dev_ids, dev_pos, dev_keep = torch.from_numpy(np.stack([rows, pos, keep])).to(self.lm.device)
        self._mask = torch.cat([self._mask, dev_keep], 1)
        given = self._pending
        first = gather_chosen(given.logp, given.twin_logp, dev_ids[:b, :1])  # before the step: the graph reuses buffers
        logp, twin_logp, entropy, kl, hidden, lookback = self._forward(dev_ids, dev_pos, rows=k)
        later = None
        if k > 1:
            twin_first = None if twin_logp is None else twin_logp[:, : k - 1]
            later = gather_chosen(logp[:, : k - 1], twin_first, dev_ids[:b, 1:])
        host = to_host([entropy, kl, hidden, lookback, first, later])
        step = Step(logp, twin_logp, *host[:4])
        self._cache_len += k
        self._main_lens = [n + c for n, c in zip(self._main_lens, counts, strict=True)]
        self._twin_lens = [n + c for n, c in zip(self._twin_lens, counts, strict=True)]
        tokens = [row[:c].tolist() for row, c in zip(ids, counts, strict=True)]
        self._record(given, [t[:1] for t in tokens], flags, host[4])
        if k > 1:
            self._record(step.take(rows=slice(0, k - 1)), [t[1:] for t in tokens], flags, host[5])
        if all(c == k for c in counts):
            self._pending = step.take(rows=slice(k - 1, k))
        else:  # each branch's next distribution follows its own last token
            last = step.take_each([max(c - 1, 0) for c in counts])
            self._pending = merge_steps(given, last, flags)

    def _forward(self, ids: torch.Tensor, pos: torch.Tensor, rows: int) -> tuple:
        """The step on the device: (logp, twin_logp, entropy, kl, hidden, lookback) of the newest ``rows``."""
        mask = self._model_mask(ids.shape[1])  # (grows a full static cache first)
        if rows == 1 and self.engine.graphs is not None:
            return self.engine.graphs.step(self, ids, pos, mask)
        logits, hidden, lookback = self._run(ids, pos, rows, mask)
        return (*self._device_stats(logits), hidden, lookback)

    @torch.inference_mode()
    def _run(self, ids: torch.Tensor, pos: torch.Tensor, rows: int, mask: torch.Tensor,
             ctx: torch.Tensor | None = None):
        """One model call on all rows; returns the newest ``rows`` logits, hidden states [B, rows, layers, d] and
        lookback ratios [B, rows, L, H], on the device (no host copy: a captured step runs this too)."""
        needs = self.needs
        b = len(self.branch_records)
        captured: dict[int, torch.Tensor] = {}
        hooks = []
        if needs.hidden_layers:
            for layer in needs.hidden_layers:
                module = self.engine._layers[layer - 1]
                hooks.append(module.register_forward_hook(_capture(captured, layer, rows, b)))
        ends = self._prompt_ends
        prompt_len = ends[0] if len(set(ends)) == 1 else tuple(ends)
        recorder = (LookbackRecorder(prompt_len=prompt_len, rows=rows, branches=b, ctx=ctx) if needs.lookback
                    else None)
        try:
            with recording(recorder):
                out = self.lm.model(
                    input_ids=ids,
                    attention_mask=mask,
                    position_ids=pos,
                    use_cache=True,
                    logits_to_keep=rows,
                    **{self.engine.cache_arg: self._cache},
                )
        finally:
            for hook in hooks:
                hook.remove()
        hidden = torch.stack([captured[layer] for layer in needs.hidden_layers], 2) if needs.hidden_layers else None
        lookback = recorder.ratios(self.lm.num_layers) if recorder else None
        return out.logits[:, -rows:, :].float(), hidden, lookback

    @torch.inference_mode()
    def _device_stats(self, logits: torch.Tensor):
        """Per-position log-probabilities (main and twin rows), entropy and KL, on the device."""
        b = len(self.branch_records)
        logp = torch.log_softmax(logits[:b], dim=-1)
        probs = logp.exp()
        entropy = -(probs * logp).sum(-1) / math.log(logp.shape[-1])
        if not self.needs.twin:
            return logp, None, entropy, None
        twin_logp = torch.log_softmax(logits[b:], dim=-1)
        kl = (probs * (logp - twin_logp)).sum(-1).clamp(min=0.0)
        return logp, twin_logp, entropy, kl

    @staticmethod
    def _host_step(logp, twin_logp, entropy, kl, hidden, lookback) -> Step:
        """The step with its small per-position statistics copied to the host (one transfer)."""
        return Step(logp, twin_logp, *to_host([entropy, kl, hidden, lookback]))

    def _record(self, step: Step, tokens: list[list[int]], active: list[bool], chosen: np.ndarray | None) -> None:
        """Record branch b's ``tokens[b]`` from the first ``len(tokens[b])`` positions of ``step``; ``chosen``: the
        tokens' log-probabilities gathered by :func:`gather_chosen` (main, and twin when present), on the host."""
        if chosen is None or not any(active):
            return
        chosen, twin = chosen[0], (chosen[1] if len(chosen) > 1 else None)
        for b, rec in enumerate(self.branch_records):
            n = len(tokens[b])
            if not active[b] or n == 0:
                continue
            rec.token_ids.extend(tokens[b])
            rec.logprob.extend(chosen[b, :n].tolist())
            rec.entropy.extend(step.entropy[b, :n].tolist())
            if step.kl is not None:
                rec.kl.extend(step.kl[b, :n].tolist())
            if twin is not None:
                rec.twin_logprob.extend(twin[b, :n].tolist())
            if step.hidden is not None:
                rec.hidden.extend(step.hidden[b, :n])
            if step.lookback is not None:
                rec.lookback.extend(step.lookback[b, :n])


def _left_padded(seqs: list[list[int]], width: int, device) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Token ids, attention mask and positions of ``seqs`` left-padded to ``width`` (positions start at 0)."""
    ids = torch.zeros(len(seqs), width, dtype=torch.long, device=device)
    mask = torch.zeros_like(ids)
    pos = torch.zeros_like(ids)
    for row, seq in enumerate(seqs):
        pad = width - len(seq)
        ids[row, pad:] = torch.tensor(seq, device=device)
        mask[row, pad:] = 1
        pos[row, pad:] = torch.arange(len(seq), device=device)
    return ids, mask, pos


def _capture(store: dict[int, torch.Tensor], layer: int, rows: int, branches: int):
    def hook(_module, _inputs, output):
        hidden = output[0] if isinstance(output, (tuple, list)) else output
        store[layer] = hidden[:branches, -rows:, :].detach()

    return hook
