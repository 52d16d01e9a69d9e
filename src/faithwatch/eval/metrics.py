"""Detection metrics for sentence-level unfaithfulness, with bootstrap confidence intervals.

Conventions
-----------
* ``labels``: 1 = unfaithful (the positive class), 0 = faithful.
* ``unfaithful_scores``: higher = more likely unfaithful. faithwatch's own sentence scores are *faithfulness*
  scores (1 = faithful); turn them around explicitly with :func:`unfaithfulness_scores` — the functions here never
  guess the direction.

Confidence intervals are 95% (by default) percentile bootstrap intervals. With ``groups`` (e.g. the example / response
id of each sentence) the bootstrap resamples whole groups (a cluster bootstrap): sentences of one response share a
context, a question and a generator state, so they are correlated, and resampling them independently understates the
uncertainty. Replicates that draw a single class are skipped; how many were used is reported (``n_boot_used``).

The bootstrap is vectorised: each replicate is represented by how many times it draws every item (a count vector),
and AUROC / average precision / balanced accuracy are computed as count-weighted statistics over the distinct score
values, for a block of replicates at a time. This gives exactly what sklearn returns on the explicitly resampled arrays.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import rankdata
from sklearn.metrics import average_precision_score, balanced_accuracy_score, roc_auc_score, roc_curve

from faithwatch import stats
from faithwatch.errors import InputError

__all__ = [
    "DetectionMetrics",
    "MetricCI",
    "RocPoints",
    "auroc_by_column",
    "best_threshold",
    "detection_metrics",
    "roc_points",
    "unfaithfulness_scores",
]

# upper bound on the elements of one (replicates x items) block, to bound memory (~16 MB per float64 array)


@dataclass
class MetricCI:
    """A point estimate with the bounds of its confidence interval."""

    value: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        """The three numbers as a dict (``value``, ``low``, ``high``)."""
        return asdict(self)


@dataclass
class DetectionMetrics:
    """Detection quality of an unfaithfulness score against binary labels (1 = unfaithful)."""

    auroc: MetricCI
    auprc: MetricCI  # average precision; its chance level is the positive rate n_positive / n, not 0.5
    balanced_accuracy: MetricCI | None  # None when no threshold was given
    n: int
    n_positive: int
    threshold: float | None
    n_boot: int = 0  # bootstrap replicates drawn
    n_boot_used: int = 0  # replicates with both classes, from which the intervals were taken
    n_groups: int | None = None  # number of resampled groups (None: items were resampled individually)
    confidence: float = 0.95
    #: balanced accuracy at this set's own best threshold (given a threshold; chosen on the set itself, so an upper
    #: bound): what ``faithwatch calibrate`` on labelled data of the domain could reach
    best_balanced_accuracy: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict; metrics are nested ``{"value", "low", "high"}`` dicts, a missing metric is ``None``."""
        return asdict(self)

    def to_flat_dict(self) -> dict[str, Any]:
        """One flat row (``auroc``, ``auroc_low``, ``auroc_high``, ...), handy for a table."""
        out: dict[str, Any] = {}
        for name in ("auroc", "auprc", "balanced_accuracy"):
            ci: MetricCI | None = getattr(self, name)
            out[name] = None if ci is None else ci.value
            out[f"{name}_low"] = None if ci is None else ci.low
            out[f"{name}_high"] = None if ci is None else ci.high
        for name in ("best_balanced_accuracy", "n", "n_positive", "threshold", "n_boot", "n_boot_used", "n_groups",
                     "confidence"):
            out[name] = getattr(self, name)
        return out


class RocPoints(NamedTuple):
    """``(fpr, tpr, thresholds)`` of a ROC curve; unpack it like a tuple or use the attributes."""

    fpr: NDArray[np.float64]
    tpr: NDArray[np.float64]
    thresholds: NDArray[np.float64]


def unfaithfulness_scores(scores: ArrayLike, *, higher_means: Literal["faithful", "unfaithful"]) -> NDArray[np.float64]:
    """Orient scores so that higher = more likely unfaithful, the direction every metric here expects.

    ``higher_means="faithful"`` (faithwatch's sentence scores in [0, 1]) returns ``1 - scores``; ``"unfaithful"``
    returns the scores unchanged. The direction is a required argument on purpose: it is never inferred.
    """
    s = np.asarray(scores, dtype=np.float64)
    if higher_means == "faithful":
        return 1.0 - s
    if higher_means == "unfaithful":
        return s.copy()
    raise InputError(f"higher_means must be 'faithful' or 'unfaithful', got {higher_means!r}")


def _check_inputs(labels: ArrayLike, scores: ArrayLike) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Validate and convert labels (0/1, both present) and scores (finite, same length)."""
    y_raw = np.asarray(labels)
    s = np.asarray(scores, dtype=np.float64)
    if y_raw.ndim != 1 or s.ndim != 1:
        raise InputError(f"labels and scores must be 1-D, got shapes {y_raw.shape} and {s.shape}")
    if len(y_raw) != len(s):
        raise InputError(f"labels and scores differ in length: {len(y_raw)} vs {len(s)}")
    if len(s) == 0:
        raise InputError("no items: labels and scores are empty")
    try:
        y_float = y_raw.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"labels must be 0/1 (1 = unfaithful), got dtype {y_raw.dtype}") from exc
    if not np.all((y_float == 0) | (y_float == 1)):
        bad = np.unique(y_raw[~((y_float == 0) | (y_float == 1))])[:5]
        raise InputError(f"labels must be 0/1 (1 = unfaithful); found other values, e.g. {bad.tolist()}")
    y = y_float.astype(np.int64)
    n_pos = int(y.sum())
    if n_pos == 0 or n_pos == len(y):
        only = "unfaithful (1)" if n_pos else "faithful (0)"
        raise InputError(
            f"labels have a single class (all {len(y)} are {only}); AUROC, AUPRC and balanced accuracy need both"
        )
    finite = np.isfinite(s)
    if not finite.all():
        idx = np.flatnonzero(~finite)
        raise InputError(
            f"scores must be finite: {len(idx)} of {len(s)} are NaN or infinite (first at index {int(idx[0])})"
        )
    return y, s


def _check_threshold(threshold: float | None) -> float | None:
    if threshold is None:
        return None
    t = float(threshold)
    if not np.isfinite(t):
        raise InputError(f"threshold must be finite, got {threshold!r}")
    return t


def _weighted_stats(
    counts: NDArray[np.float64],
    y: NDArray[np.int64],
    s: NDArray[np.float64],
    pred: NDArray[np.bool_] | None,
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64] | None, NDArray[np.bool_]]:
    """AUROC, average precision and balanced accuracy of each row of item weights ``counts`` (replicates x items).

    Returns ``(auroc, ap, balanced_accuracy or None, valid)``; rows without both classes are not valid (their
    values are meaningless and must be dropped).
    """
    # aggregate the weights by distinct score value (ascending); ties then get the usual half credit
    levels, inv = np.unique(s, return_inverse=True)
    order = np.argsort(inv, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(inv[order]) != 0])
    c_sorted = counts[:, order]
    pos = np.add.reduceat(c_sorted * y[order], starts, axis=1)  # (B, K) positives per level
    tot = np.add.reduceat(c_sorted, starts, axis=1)
    neg = tot - pos
    n1 = pos.sum(axis=1)
    n0 = neg.sum(axis=1)
    valid = (n1 > 0) & (n0 > 0)
    n1_safe = np.where(n1 > 0, n1, 1.0)
    n0_safe = np.where(n0 > 0, n0, 1.0)

    # AUROC = P(score_pos > score_neg) + 0.5 P(tie), i.e. the Mann-Whitney statistic with mid-ranks
    neg_below = np.cumsum(neg, axis=1) - neg
    auroc = (pos * (neg_below + 0.5 * neg)).sum(axis=1) / (n1_safe * n0_safe)

    # average precision (sklearn's step-wise definition): sum over levels, descending, of dRecall * precision
    pos_d, tot_d = pos[:, ::-1], tot[:, ::-1]
    tp = np.cumsum(pos_d, axis=1)
    flagged = np.cumsum(tot_d, axis=1)
    precision = np.divide(tp, flagged, out=np.zeros_like(tp), where=flagged > 0)
    ap = (pos_d * precision).sum(axis=1) / n1_safe

    bacc = None
    if pred is not None:
        tp_t = counts @ (y * pred).astype(np.float64)
        tn_t = counts @ ((1 - y) * ~pred).astype(np.float64)
        bacc = 0.5 * (tp_t / n1_safe + tn_t / n0_safe)
    return auroc, ap, bacc, valid


def _ci(values: NDArray[np.float64], point: float, confidence: float) -> MetricCI:
    low, high = stats.percentile_ci(values, confidence)
    return MetricCI(value=float(point), low=low, high=high)


def detection_metrics(
    labels: ArrayLike,
    unfaithful_scores: ArrayLike,
    *,
    threshold: float | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    groups: ArrayLike | None = None,
    confidence: float = 0.95,
) -> DetectionMetrics:
    """AUROC, AUPRC (average precision) and, given a threshold, balanced accuracy, each with a bootstrap CI.

    Args:
        labels: 1 = unfaithful, 0 = faithful; both classes must be present.
        unfaithful_scores: higher = more likely unfaithful (see :func:`unfaithfulness_scores`); must be finite.
        threshold: if given, an item is predicted unfaithful when ``unfaithful_scores >= threshold`` and balanced
            accuracy is reported, next to the balanced accuracy at the set's own best threshold (a point estimate;
            the gap is what the given threshold costs on this set); otherwise both are ``None``.
        n_boot: bootstrap replicates (>= 1).
        seed: seed of the ``numpy.random.Generator`` that draws the replicates (results are deterministic).
        groups: optional group id per item (e.g. the response / example id of each sentence). When given, whole
            groups are resampled with replacement (cluster bootstrap), which accounts for the correlation of
            sentences within a response; the point estimates are unchanged.
        confidence: coverage of the percentile intervals (default 0.95).

    Point estimates come from ``sklearn.metrics`` on the data as given. Bootstrap replicates containing a single
    class are skipped; ``n_boot_used`` says how many were kept.

    Raises:
        ValueError (:class:`faithwatch.errors.InputError`): single-class labels, non-0/1 labels, non-finite scores,
            mismatched lengths, a non-finite threshold, bad ``n_boot`` / ``confidence``, or no usable replicate.
    """
    y, s = _check_inputs(labels, unfaithful_scores)
    t = _check_threshold(threshold)
    n_boot = stats.check_n_boot(n_boot)
    if not 0.0 < confidence < 1.0:
        raise InputError(f"confidence must be in (0, 1), got {confidence!r}")
    n = len(y)

    gid, n_width = stats.group_ids(groups, n)
    n_groups = None if gid is None else n_width

    # point estimates
    auroc = float(roc_auc_score(y, s))
    auprc = float(average_precision_score(y, s))
    pred = None if t is None else s >= t
    bacc = None if pred is None else float(balanced_accuracy_score(y, pred.astype(np.int64)))
    best_pred = None if pred is None else s >= stats.best_threshold(s, y)  # the set's own optimum
    best_bacc = None if best_pred is None else float(balanced_accuracy_score(y, best_pred.astype(np.int64)))

    # bootstrap, a block of replicates at a time
    boot_auroc, boot_ap, boot_bacc, boot_valid = [], [], [], []
    for counts in stats.resample_counts(n, n_boot, seed, groups):
        a, p, ba, valid = _weighted_stats(counts, y, s, pred)
        boot_auroc.append(a)
        boot_ap.append(p)
        boot_valid.append(valid)
        if ba is not None:
            boot_bacc.append(ba)
    valid = np.concatenate(boot_valid)
    n_used = int(valid.sum())
    if n_used == 0:
        raise InputError(
            f"none of the {n_boot} bootstrap replicates drew both classes "
            f"({int(y.sum())} positives among {n} items{'' if n_groups is None else f' in {n_groups} groups'})"
        )

    return DetectionMetrics(
        auroc=_ci(np.concatenate(boot_auroc)[valid], auroc, confidence),
        auprc=_ci(np.concatenate(boot_ap)[valid], auprc, confidence),
        balanced_accuracy=None if bacc is None else _ci(np.concatenate(boot_bacc)[valid], bacc, confidence),
        n=n,
        n_positive=int(y.sum()),
        threshold=t,
        n_boot=n_boot,
        n_boot_used=n_used,
        n_groups=n_groups,
        confidence=float(confidence),
        best_balanced_accuracy=best_bacc,
    )


def auroc_difference(
    labels: ArrayLike,
    unfaithful_a: ArrayLike,
    unfaithful_b: ArrayLike,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    groups: ArrayLike | None = None,
    confidence: float = 0.95,
) -> MetricCI:
    """AUROC of scores ``a`` minus AUROC of scores ``b`` on the same items, with a paired bootstrap interval.

    Both scores are read on the same replicates (whole ``groups`` at a time when given, as in
    :func:`detection_metrics`), so the interval is that of the difference, narrower than two separate intervals
    would suggest. Replicates with a single class are skipped. Raises ``InputError`` on the inputs
    :func:`detection_metrics` refuses or when the two score vectors differ in length.
    """
    y, a = _check_inputs(labels, unfaithful_a)
    _, b = _check_inputs(labels, unfaithful_b)
    n_boot = stats.check_n_boot(n_boot)
    point = float(roc_auc_score(y, a) - roc_auc_score(y, b))
    diffs = []
    for counts in stats.resample_counts(len(y), n_boot, seed, groups):
        auc_a, _, _, valid = _weighted_stats(counts, y, a, None)
        auc_b = _weighted_stats(counts, y, b, None)[0]
        diffs.append((auc_a - auc_b)[valid])
    kept = np.concatenate(diffs)
    if kept.size == 0:
        raise InputError(f"none of the {n_boot} bootstrap replicates drew both classes")
    return _ci(kept, point, confidence)


def auroc_by_column(labels: ArrayLike, scores: ArrayLike) -> NDArray[np.float64]:
    """The AUROC of every column of ``scores`` (items x columns) against ``labels``, in one pass.

    The Mann-Whitney form: the ranks of the positives' scores (ties share their mean rank) summed, less their least
    possible sum, over the pairs. This is what ``roc_auc_score`` gives column by column, without its per-call checks.

    Raises:
        ValueError (:class:`faithwatch.errors.InputError`): what :func:`detection_metrics` refuses (single-class or
            non-0/1 labels, non-finite scores, mismatched lengths), or ``scores`` not 2-D.
    """
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2:
        raise InputError(f"scores must be 2-D (items x columns), got shape {matrix.shape}")
    y, _ = _check_inputs(labels, np.zeros(len(matrix)))  # the labels; the scores are checked below
    if not np.isfinite(matrix).all():
        rows, cols = np.nonzero(~np.isfinite(matrix))
        raise InputError(f"scores must be finite: {len(rows)} are NaN or infinite (first in column {int(cols[0])}, "
                         f"row {int(rows[0])})")
    n_pos = int(y.sum())
    n_neg = len(y) - n_pos
    rank_sum = rankdata(matrix, axis=0)[y == 1].sum(axis=0)
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def best_threshold(labels: ArrayLike, unfaithful_scores: ArrayLike) -> float:
    """The threshold ``t`` maximising the balanced accuracy of ``unfaithful_scores >= t``
    (:func:`faithwatch.stats.best_threshold`: a midpoint between observed scores, the middle of tied optima).
    Choose it on held-out data, not on the evaluation set.
    """
    y, s = _check_inputs(labels, unfaithful_scores)
    return stats.best_threshold(s, y)


def roc_points(labels: ArrayLike, unfaithful_scores: ArrayLike) -> RocPoints:
    """ROC curve points ``(fpr, tpr, thresholds)`` for plotting (sklearn's ``roc_curve``, intermediate points dropped).

    ``thresholds[0]`` is ``+inf`` (nothing flagged), following sklearn; fpr and tpr are always finite.
    """
    y, s = _check_inputs(labels, unfaithful_scores)
    fpr, tpr, thr = roc_curve(y, s)
    return RocPoints(fpr.astype(np.float64), tpr.astype(np.float64), thr.astype(np.float64))
