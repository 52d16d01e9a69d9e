"""What the decoding engine records: per-token records, per-step statistics, checkpoints, and their helpers.

:class:`TokenRecords` is what signals read; :class:`Step` holds the newest positions' statistics of one forward
pass, per branch, on the device (log-probabilities) and on the host (the small ones); :class:`Checkpoint` is a
session state to return to. The engine (:mod:`faithwatch.models.engine`) and decoding ahead of the host
(:mod:`faithwatch.models.ahead`) build and read them only through this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import torch


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
    twin_logprob: list[float] = field(default_factory=list)  # log p(chosen token | no-context twin, prefix)
    hidden: list[np.ndarray] = field(default_factory=list)  # [n_layers_recorded, d]
    lookback: list[np.ndarray] = field(default_factory=list)  # [layers, heads]
    hidden_layers: tuple[int, ...] = ()  # the layers stored in ``hidden``, in order

    def __len__(self) -> int:
        return len(self.token_ids)


@dataclass
class Step:
    """Statistics of the newest positions of one forward pass, per branch (position i predicts the next token)."""

    logp: torch.Tensor  # [B, rows, V] main log-probabilities
    twin_logp: torch.Tensor | None  # [B, rows, V]
    entropy: np.ndarray  # [B, rows]
    kl: np.ndarray | None  # [B, rows]
    hidden: np.ndarray | None  # [B, rows, n_layers, d]
    lookback: np.ndarray | None  # [B, rows, L, H]

    def take(self, branches: Sequence[int] | slice = slice(None), rows: slice = slice(None)) -> Step:
        """The given branches' rows."""
        b = list(branches) if not isinstance(branches, slice) else branches

        def pick(x):
            return None if x is None else x[b][:, rows]

        return Step(pick(self.logp), pick(self.twin_logp), pick(self.entropy), pick(self.kl), pick(self.hidden),
                     pick(self.lookback))

    def take_each(self, rows: Sequence[int]) -> Step:
        """Row ``rows[b]`` of every branch b (one position each)."""
        idx = list(rows)
        b = list(range(len(idx)))

        def pick(x):
            return None if x is None else x[b, idx][:, None]

        return Step(pick(self.logp), pick(self.twin_logp), pick(self.entropy), pick(self.kl), pick(self.hidden),
                     pick(self.lookback))


@dataclass(frozen=True)
class Checkpoint:
    """A session state to return to (same branches): lengths, records and the pending distribution."""

    cache_len: int
    main_lens: tuple[int, ...]
    twin_lens: tuple[int, ...]
    n_records: tuple[int, ...]
    pending: Step

    @property
    def main_len(self) -> int:
        """Length of the first row's main (with-context) sequence at the checkpoint."""
        return self.main_lens[0]


def unflatten(flat: np.ndarray, shapes: list[tuple[int, ...] | None]) -> list[np.ndarray | None]:
    """Cut one flat host array into pieces of these shapes (``None``: an absent piece)."""
    out, at = [], 0
    for shape in shapes:
        if shape is None:
            out.append(None)
            continue
        size = int(np.prod(shape))
        out.append(flat[at : at + size].reshape(shape))
        at += size
    return out


def gather_chosen(logp: torch.Tensor, twin_logp: torch.Tensor | None, idx: torch.Tensor) -> torch.Tensor:
    """Log-probabilities of the tokens ``idx`` [B, w] at the first w positions, [1 or 2 (with the twin), B, w]."""
    picked = [logp[:, : idx.shape[1]].gather(2, idx[..., None])[..., 0]]
    if twin_logp is not None:
        picked.append(twin_logp[:, : idx.shape[1]].gather(2, idx[..., None])[..., 0])
    return torch.stack(picked)


def to_host(tensors: list[torch.Tensor | None]) -> list[np.ndarray | None]:
    """The tensors as float32 host arrays, copied in one transfer (one device sync)."""
    present = [t for t in tensors if t is not None]
    if not present:
        return [None] * len(tensors)
    flat = torch.cat([t.float().flatten() for t in present]).cpu().numpy()
    return unflatten(flat, [None if t is None else tuple(t.shape) for t in tensors])


def merge_steps(old: Step, new: Step, active: list[bool]) -> Step:
    """Per branch: ``new`` where active, ``old`` elsewhere."""

    def pick(a, b):
        if a is None:
            return None
        if isinstance(a, torch.Tensor):
            m = torch.tensor(active, device=a.device).view(-1, *([1] * (a.dim() - 1)))
            return torch.where(m, b, a)
        m = np.asarray(active).reshape(-1, *([1] * (a.ndim - 1)))
        return np.where(m, b, a)

    return Step(*(pick(getattr(old, f), getattr(new, f)) for f in
                   ("logp", "twin_logp", "entropy", "kl", "hidden", "lookback")))


def concat_steps(first: Step, second: Step) -> Step:
    """The branches of ``first`` then those of ``second``."""

    def cat(a, b):
        if a is None:
            return None
        return torch.cat([a, b]) if isinstance(a, torch.Tensor) else np.concatenate([a, b])

    return Step(*(cat(getattr(first, f), getattr(second, f)) for f in
                   ("logp", "twin_logp", "entropy", "kl", "hidden", "lookback")))


RECORD_LISTS = ("token_ids", "logprob", "entropy", "kl", "twin_logprob", "hidden", "lookback")


def copy_records(rec: TokenRecords, n: int | None = None) -> TokenRecords:
    """New lists of ``rec``'s first ``n`` records (all of them for None)."""
    return TokenRecords(**{f: getattr(rec, f)[:n] for f in RECORD_LISTS}, hidden_layers=rec.hidden_layers)


def truncate_records(rec: TokenRecords, n: int) -> None:
    """Drop every record of ``rec`` after the first ``n``."""
    for f in RECORD_LISTS:
        values = getattr(rec, f)
        del values[n:]
