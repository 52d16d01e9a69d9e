"""faithwatch's attention function: SDPA for the output, plus lookback-ratio statistics of the newest rows.

The lookback ratio (Lookback Lens, paper 003 §2.1) of head h at layer l for the query that predicts
token y_t is ``A_ctx / (A_ctx + A_new)`` where ``A_ctx`` is the mean attention weight on the prompt
tokens and ``A_new`` the mean weight on the tokens generated so far. Only the last ``rows`` query rows
of batch row 0 (the RAG sequence) are softmaxed here, so no T x T matrix over the context is built.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import torch
from transformers import AttentionInterface
from transformers.integrations.sdpa_attention import sdpa_attention_forward
from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

ATTENTION_NAME = "faithwatch_sdpa"


@dataclass
class LookbackRecorder:
    """Collects per-layer lookback ratios for the newest ``rows`` query positions of batch rows [0, branches)."""

    #: cache positions [0, prompt_len) of the main rows hold the prompt ("context", paper 003); one per branch when
    #: branches were joined from sessions of different lengths (:meth:`EngineSession.join`)
    prompt_len: int | tuple[int, ...]
    rows: int
    branches: int = 1  # the main (RAG) rows come first in the batch (left padding is masked)
    #: optional prompt columns as a device tensor, [1 or branches, 1, 1, cache width] bool: used instead of
    #: ``prompt_len`` (a captured CUDA-graph step builds no tensors from host values)
    ctx: torch.Tensor | None = None
    per_layer: dict[int, torch.Tensor] = field(default_factory=dict)  # layer -> [branches, rows, heads]
    masks: tuple | None = field(default=None, repr=False)  # the current forward pass's masks (see _masks)

    def ratios(self, num_layers: int) -> torch.Tensor:
        """Stacked ratios, shape [branches, rows, layers, heads]."""
        missing = [i for i in range(num_layers) if i not in self.per_layer]
        if missing:
            raise RuntimeError(f"lookback ratios missing for layers {missing}: the model does not route "
                               f"attention through '{ATTENTION_NAME}'")
        return torch.stack([self.per_layer[i] for i in range(num_layers)], dim=2)


# per thread (and task): two models, or one model in two threads, never see each other's recorder
_active: ContextVar[LookbackRecorder | None] = ContextVar("faithwatch_lookback", default=None)


@contextmanager
def recording(recorder: LookbackRecorder | None):
    """Record lookback ratios during the forward passes in this block (``None`` records nothing)."""
    token = _active.set(recorder)
    try:
        yield recorder
    finally:
        _active.reset(token)


def _lookback(module, query, key, attention_mask, scaling, rec: LookbackRecorder) -> torch.Tensor:
    rows, b = min(rec.rows, query.shape[2]), rec.branches
    heads, kv_heads, dim = query.shape[1], key.shape[1], query.shape[3]
    k = key[0:b].float()  # [B, Hkv, kv, D]
    kv_len = k.shape[2]
    # grouped-query attention without copying the keys per query head (repeat_kv): query head h reads KV head
    # h // groups, so the query heads of one KV head are stacked as extra rows of one matmul
    q = query[0:b, :, -rows:, :].float().reshape(b, kv_heads, (heads // kv_heads) * rows, dim)
    scores = torch.matmul(q, k.transpose(-1, -2)).view(b, heads, rows, kv_len)
    scores = scores * (scaling if scaling is not None else dim**-0.5)
    visible, is_ctx, n_ctx, n_new = _masks(rec, attention_mask, rows, kv_len, b, q.device)
    weights = torch.softmax(scores.masked_fill(~visible, float("-inf")), dim=-1)  # [B, H, rows, kv]
    if isinstance(rec.prompt_len, int) and rec.ctx is None:  # the prompt is one leading block of the cache
        a_ctx = weights[..., : rec.prompt_len].sum(-1) / n_ctx
        a_new = weights[..., rec.prompt_len :].sum(-1) / n_new
    else:
        a_ctx = (weights * is_ctx).sum(-1) / n_ctx
        a_new = (weights * ~is_ctx).sum(-1) / n_new
    return (a_ctx / (a_ctx + a_new)).transpose(1, 2)  # [B, rows, H]


def _masks(rec: LookbackRecorder, attention_mask, rows: int, kv_len: int, b: int, device):
    """What each query row sees, which cache positions are prompt, and how many of each it sees; the same for every
    layer of one forward pass, so computed once per pass (keyed on the mask tensor and the shapes)."""
    key = (attention_mask, rows, kv_len, b)
    cached = rec.masks
    if cached is not None and cached[0][0] is attention_mask and cached[0][1:] == key[1:]:
        return cached[1]
    # physical cache positions of the query rows; main rows may hold masked "holes" (tokens fed to a branch that
    # had already finished), so what a query sees comes from the mask, not from positions alone
    q_pos = torch.arange(kv_len - rows, kv_len, device=device)
    kv_pos = torch.arange(kv_len, device=device)
    visible = (kv_pos[None, :] <= q_pos[:, None])[None, None]  # [1, 1, rows, kv]
    if attention_mask is not None:
        m = attention_mask[0:b, :, -rows:, :kv_len]
        visible = visible & (m if m.dtype == torch.bool else m > torch.finfo(m.dtype).min / 2)
    if rec.ctx is not None:
        is_ctx = rec.ctx[..., :kv_len]
    elif isinstance(rec.prompt_len, int):
        is_ctx = (kv_pos < rec.prompt_len)[None, None, None]  # [1, 1, 1, kv]
    else:
        is_ctx = prompt_columns(rec.prompt_len, kv_len, device)
    # prompt and generated tokens visible to each query (fewer prompt tokens in a left-padded batch row)
    n_ctx = (visible & is_ctx).sum(-1).clamp(min=1)
    n_new = (visible & ~is_ctx).sum(-1).clamp(min=1)
    value = (visible, is_ctx, n_ctx, n_new)
    rec.masks = (key, value)
    return value


def prompt_columns(prompt_ends: tuple[int, ...] | list[int], width: int, device) -> torch.Tensor:
    """Which of ``width`` cache columns hold each branch's prompt: [branches, 1, 1, width] bool."""
    ends = torch.tensor(prompt_ends, device=device)
    return (torch.arange(width, device=device)[None] < ends[:, None])[:, None, None]


def faithwatch_attention(module, query, key, value, attention_mask, dropout=0.0, scaling=None, **kwargs):
    """SDPA attention that also records lookback ratios when a recorder is active."""
    rec = _active.get()
    if rec is not None and rec.rows > 0:
        with torch.no_grad():
            rec.per_layer[module.layer_idx] = _lookback(module, query, key, attention_mask, scaling, rec)
    return sdpa_attention_forward(
        module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
    )


def register_attention() -> None:
    """Make ``attn_implementation="faithwatch_sdpa"`` available to transformers (idempotent)."""
    AttentionInterface.register(ATTENTION_NAME, faithwatch_attention)
    AttentionMaskInterface.register(ATTENTION_NAME, sdpa_mask)
