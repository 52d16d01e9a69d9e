"""Calibrating a detector on out-of-fold predictions: a probability map, a threshold, and false-accept control.

A detector's raw output is a log-odds of "faithful". Fitted on the very data it saw, it is over-confident, and a
threshold chosen there does not carry over to a new data set. So :func:`faithwatch.eval.training.fit_syncheck`
first predicts every training sentence *out of fold* (each data set by a model trained on the others), then:

* :class:`PlattCalibration` maps the raw log-odds to a calibrated P(faithful) (logistic regression on the pooled
  out-of-fold log-odds; Platt 1999);
* :func:`choose_threshold` picks the threshold that maximises balanced accuracy on the calibrated out-of-fold
  scores, every data set weighted equally;
* :func:`false_accept_threshold` gives the threshold that accepts at most a stated share of unfaithful sentences,
  from the out-of-fold scores of the unfaithful ones (a split-conformal quantile), so a user can say what they
  tolerate (``--max-false-accept 0.1``);
* :func:`weighted_median` of the out-of-fold log-odds is the detector's *reference*: a domain whose median
  log-odds lies elsewhere can be shifted back to it without labels (``faithwatch calibrate --unlabelled``), and
  :func:`domain_offset` says how far a batch of scored sentences lies from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit
from sklearn.metrics import balanced_accuracy_score

from faithwatch.errors import InputError
from faithwatch.stats import best_threshold

#: unlabelled sentences needed to place a domain's median at all, and below which it is noisy (warn)
MIN_UNLABELLED, FEW_UNLABELLED = 20, 200
#: a batch whose median raw log-odds lies this far from the detector's reference gets a hint towards
#: `calibrate --unlabelled` (rule and measurement: training/experiments/shift_hint.py, docs/transfer.md)
SHIFT_HINT = 1.0
#: flagged before an unlabelled shift at or above this share: the shift may be wrong (:func:`shift_caveat`)
MOSTLY_FLAGGED = 0.5


@dataclass
class PlattCalibration:
    """P(faithful) = sigmoid(a · z + b) for a raw faithfulness log-odds z."""

    a: float = 1.0
    b: float = 0.0

    @classmethod
    def fit(cls, z: np.ndarray, unfaithful: np.ndarray, sample_weight: np.ndarray | None = None) -> PlattCalibration:
        """Fit on out-of-fold log-odds ``z`` and labels (True/1 = unfaithful); ``a`` is kept positive."""
        from scipy.optimize import minimize

        z = np.asarray(z, dtype=np.float64)
        t = 1.0 - np.asarray(unfaithful, dtype=np.float64)  # target: faithful
        w = np.ones_like(z) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        w = w / w.sum()

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            s = theta[0] * z + theta[1]
            p = expit(s)
            value = float(np.sum(w * (np.logaddexp(0.0, s) - t * s)))
            g = w * (p - t)
            return value, np.array([np.sum(g * z), np.sum(g)])

        res = minimize(loss, np.array([1.0, 0.0]), jac=True, method="L-BFGS-B", bounds=[(1e-3, None), (None, None)])
        return cls(a=float(res.x[0]), b=float(res.x[1]))

    def __call__(self, z: np.ndarray) -> np.ndarray:
        """P(faithful) of raw log-odds ``z``."""
        return expit(self.a * np.asarray(z, dtype=np.float64) + self.b)

    def logit(self, p: float) -> float:
        """The raw log-odds whose calibrated probability is ``p``."""
        return (math.log(p / (1.0 - p)) - self.b) / self.a


def weighted_median(values: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The weighted median of ``values`` (the lower one where the cumulative weight is exactly half)."""
    v = np.asarray(values, dtype=np.float64)
    w = np.ones_like(v) if weights is None else np.asarray(weights, dtype=np.float64)
    if v.size == 0 or w.shape != v.shape or not np.all(np.isfinite(v)) or np.any(w < 0) or w.sum() <= 0:
        raise InputError("a weighted median needs finite values and non-negative weights of the same length")
    order = np.argsort(v, kind="stable")
    cum = np.cumsum(w[order])
    return float(v[order][np.searchsorted(cum, cum[-1] / 2.0)])


def group_weights(groups: np.ndarray, unfaithful: np.ndarray) -> np.ndarray:
    """Weights that give every group (data set) the same total, split equally between its two classes.

    A group with a single class gets the group's whole share on that class. Weights average 1.
    """
    groups = np.asarray(groups)
    labels = np.asarray(unfaithful).astype(bool)
    w = np.zeros(len(groups), dtype=np.float64)
    for g in np.unique(groups):
        in_g = groups == g
        classes = [c for c in (True, False) if np.any(in_g & (labels == c))]
        for c in classes:
            cell = in_g & (labels == c)
            w[cell] = 1.0 / (len(classes) * cell.sum())
    return w * len(w) / w.sum()


def weighted_balanced_accuracy(p_faithful: np.ndarray, unfaithful: np.ndarray, threshold: float,
                               sample_weight: np.ndarray | None = None) -> float:
    """Mean of the (weighted) recall on unfaithful (score < threshold) and on faithful (score >= threshold)
    (sklearn's ``balanced_accuracy_score``)."""
    flagged = np.asarray(p_faithful, dtype=np.float64) < threshold
    return float(balanced_accuracy_score(np.asarray(unfaithful).astype(bool), flagged, sample_weight=sample_weight))


def choose_threshold(p_faithful: np.ndarray, unfaithful: np.ndarray, sample_weight: np.ndarray | None = None) -> float:
    """Threshold on P(faithful) maximising (weighted) balanced accuracy (flag when score < threshold).

    Candidates are midpoints between consecutive distinct scores, so the result lies strictly inside (0, 1);
    among tied optima the middle one is taken (the widest margin).
    """
    return best_threshold(p_faithful, ~np.asarray(unfaithful).astype(bool), sample_weight=sample_weight,
                          single_value=0.5)


def best_balanced_accuracy(p_faithful: np.ndarray, unfaithful: np.ndarray,
                           sample_weight: np.ndarray | None = None) -> float:
    """Balanced accuracy at the scores' own best threshold (:func:`choose_threshold`): the upper bound that a
    threshold's calibration cost is measured against."""
    threshold = choose_threshold(p_faithful, unfaithful, sample_weight)
    return weighted_balanced_accuracy(p_faithful, unfaithful, threshold, sample_weight)


def false_accept_threshold(unfaithful_scores: np.ndarray, rate: float) -> float:
    """Threshold that accepts (score >= threshold) at most ``rate`` of unfaithful sentences like these.

    Split-conformal: with n out-of-fold scores of unfaithful sentences, the threshold is just above their
    ⌈(n + 1)(1 − rate)⌉-th smallest, so a new exchangeable unfaithful sentence is accepted with probability at
    most ``rate``. A rate too small for n points gives a threshold above every score (everything is flagged).
    """
    if not 0.0 < rate < 1.0:
        raise InputError(f"the false-accept rate must lie strictly between 0 and 1, got {rate}")
    s = np.sort(np.asarray(unfaithful_scores, dtype=np.float64))
    if s.size == 0:
        raise InputError("no out-of-fold scores of unfaithful sentences to set a false-accept threshold from")
    k = math.ceil((s.size + 1) * (1.0 - rate))
    if k > s.size:
        return float(np.nextafter(s[-1], np.inf))
    return float(np.nextafter(s[k - 1], np.inf))


@dataclass(frozen=True)
class DomainOffset:
    """Where a batch's sentences sit against a detector's reference: their median raw log-odds, less any shift the
    detector already carries, minus the reference; and the share flagged."""

    n_sentences: int
    offset: float
    flagged: float

    def hint(self) -> str | None:
        """A note for the user when ``|offset|`` >= :data:`SHIFT_HINT` (None otherwise)."""
        if abs(self.offset) < SHIFT_HINT:
            return None
        side = "below" if self.offset < 0 else "above"
        return (f"these {self.n_sentences} sentences score {abs(self.offset):.1f} log-odds {side} the detector's "
                f"training sets (median), and {self.flagged:.0%} are flagged. If most of your responses are "
                "faithful, `faithwatch calibrate --unlabelled` moves the threshold to your domain (docs/transfer.md, "
                "\"Without labels\"); if many are not, keep it.")


def shift_caveat(flagged_before: float) -> str | None:
    """A warning for an unlabelled shift of sentences that the detector mostly flagged, else ``None``: the shift
    cannot tell a domain whose scores all run low (mend it) from responses that are mostly unfaithful (hide them)."""
    if flagged_before < MOSTLY_FLAGGED:
        return None
    return (f"the detector flagged {flagged_before:.0%} of these sentences before the shift. If they score low "
            "because your domain writes differently, the shift mends that; if most of them really are unfaithful, "
            "it lets them through (measured on a dialogue set with 78% unfaithful: docs/transfer.md). Label a few "
            "dozen responses and calibrate with labels to tell which")


def domain_offset(detector: object, probabilities: np.ndarray, threshold: float | None = None) -> DomainOffset | None:
    """:class:`DomainOffset` of sentences that ``detector`` scored ``probabilities`` (P(faithful)), flagged below
    ``threshold`` (default: the detector's); None for a detector without a probability map or reference, or for
    fewer than :data:`FEW_UNLABELLED` sentences (the median is noisy below that)."""
    calibration = getattr(detector, "calibration", None)
    reference = getattr(detector, "reference_logit", None)
    p = np.asarray(probabilities, dtype=np.float64)
    p = p[np.isfinite(p)]
    if calibration is None or reference is None or len(p) < FEW_UNLABELLED:
        return None
    median = calibration.logit(float(np.clip(np.median(p), 1e-9, 1.0 - 1e-9)))  # the map is monotone
    offset = median - detector.applied_shift - reference
    threshold = detector.threshold if threshold is None else threshold
    return DomainOffset(n_sentences=len(p), offset=offset, flagged=float(np.mean(p < threshold)))
