"""The statistics shared by evaluation and training: one bootstrap (plain or by cluster), percentile intervals
and one threshold chooser. A leaf module (numpy only), so detectors and eval both use it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from faithwatch.errors import InputError

#: replicates are drawn a block at a time, at most this many counts per block (memory stays bounded)
BLOCK_ELEMENTS = 2_000_000


def group_ids(groups: Sequence[Any] | ArrayLike | None, n: int) -> tuple[NDArray[np.int64] | None, int]:
    """Dense cluster ids ``0..k-1`` for ``groups`` (one per item) and their number; ``(None, n)`` without groups."""
    if groups is None:
        return None, n
    g = np.asarray(list(groups) if not isinstance(groups, np.ndarray) else groups)
    if g.shape != (n,):
        raise InputError(f"groups must have one id per item ({n}), got shape {g.shape}")
    _, gid = np.unique(g, return_inverse=True)
    gid = gid.reshape(-1).astype(np.int64)
    return gid, (int(gid.max()) + 1 if n else 0)


def check_n_boot(n_boot: Any) -> int:
    """``n_boot`` as an int: an :class:`InputError` unless it is a positive whole number (2.5 is not taken as 2)."""
    whole = isinstance(n_boot, (int, float, np.integer, np.floating)) and not isinstance(n_boot, bool) \
        and np.isfinite(n_boot) and int(n_boot) == n_boot
    if not whole or n_boot < 1:
        raise InputError(f"n_boot must be a positive integer, got {n_boot!r}")
    return int(n_boot)


def resample_counts(n: int, n_boot: int, seed: int = 0, groups: Sequence[Any] | ArrayLike | None = None
                    ) -> Iterator[NDArray[np.float64]]:
    """Bootstrap replicates as blocks of counts ``[b, n]``: how often each item is drawn in each replicate.

    With ``groups`` (one cluster id per item) whole clusters are drawn (cluster bootstrap) and each item is counted
    as often as its cluster. Deterministic for a seed.
    """
    n_boot = check_n_boot(n_boot)
    gid, width = group_ids(groups, n)
    rng = np.random.default_rng(seed)
    block = max(1, min(n_boot, BLOCK_ELEMENTS // max(n, width, 1)))
    for start in range(0, n_boot, block):
        b = min(block, n_boot - start)
        draws = rng.integers(0, width, size=(b, width))
        flat = (draws + (np.arange(b, dtype=np.int64) * width)[:, None]).ravel()
        counts = np.bincount(flat, minlength=b * width).reshape(b, width).astype(np.float64)
        yield counts if gid is None else counts[:, gid]


def resample_indices(n: int, n_boot: int, seed: int = 0, groups: Sequence[Any] | ArrayLike | None = None
                     ) -> Iterator[NDArray[np.int64]]:
    """The same replicates as :func:`resample_counts`, one array of row indices each (for statistics that need
    the rows, e.g. correlations)."""
    items = np.arange(n)
    for block in resample_counts(n, n_boot, seed, groups):
        for counts in block:
            yield np.repeat(items, counts.astype(np.int64))


def percentile_ci(samples: ArrayLike, confidence: float = 0.95) -> tuple[float, float]:
    """The percentile interval of bootstrap ``samples``."""
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1), got {confidence!r}")
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(np.asarray(samples, dtype=np.float64), [alpha, 1.0 - alpha])
    return float(low), float(high)


def mean_ci(values: Sequence[float], n_boot: int = 1000, seed: int = 0, confidence: float = 0.95,
            groups: Sequence[Any] | None = None) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean of ``values`` (by cluster with ``groups``); ``None`` for none."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return None
    means = np.concatenate([(c @ x) / c.sum(axis=1) for c in resample_counts(x.size, n_boot, seed, groups)])
    return percentile_ci(means, confidence)


def best_threshold(scores: ArrayLike, positive: ArrayLike, *, sample_weight: ArrayLike | None = None,
                   objective: Literal["balanced_accuracy", "accuracy"] = "balanced_accuracy",
                   single_value: float | None = None) -> float:
    """The threshold ``t`` for "``score >= t`` predicts positive" that maximises ``objective`` (weighted).

    Candidates are the midpoints between consecutive distinct scores, so a new score never sits on the threshold;
    among tied optima the middle one is taken (the widest margin). With fewer than two distinct scores there is
    nothing to separate: ``single_value`` is returned (default: the one score). Choose it on held-out data.
    """
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    y = np.asarray(positive).astype(bool).reshape(-1)
    if s.shape != y.shape or s.size == 0:
        raise InputError(f"need as many labels as scores (got {y.size} and {s.size}), at least one")
    if not np.isfinite(s).all():
        raise InputError("scores contain NaN or infinite values")
    w = np.ones_like(s) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64).reshape(-1)
    if objective == "balanced_accuracy" and (y.all() or not y.any()):
        raise InputError("balanced accuracy needs both classes, got a single class")
    order = np.argsort(s, kind="stable")
    s, y, w = s[order], y[order], w[order]
    distinct, first = np.unique(s, return_index=True)
    if len(distinct) < 2:
        return float(distinct[0] if single_value is None else single_value)
    below = first[1:]  # items scoring below candidate k are those before the (k+1)-th distinct value
    neg_below = np.concatenate([[0.0], np.cumsum(w * ~y)])[below]  # negatives predicted negative
    pos_below = np.concatenate([[0.0], np.cumsum(w * y)])[below]  # positives missed
    pos_total, neg_total = float(np.sum(w * y)), float(np.sum(w * ~y))
    if objective == "balanced_accuracy":
        value = ((pos_total - pos_below) / pos_total + neg_below / neg_total) / 2
    elif objective == "accuracy":
        value = (pos_total - pos_below + neg_below) / (pos_total + neg_total)
    else:
        raise InputError(f"unknown objective {objective!r}")
    best = np.flatnonzero(value >= value.max() - 1e-12)
    return float(((distinct[:-1] + distinct[1:]) / 2)[best[len(best) // 2]])
