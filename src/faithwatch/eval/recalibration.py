"""Re-calibrating a trained detector to a new domain from a few labelled responses of that domain.

A threshold chosen on the training data sets does not carry over to every domain. The shipped detector ranks
QAGS-CNNDM's sentences well (AUROC 0.81), but its near-extractive unfaithful sentences score as high as faithful
ones elsewhere, so at the shipped threshold its balanced accuracy there is 0.54 against 0.75 at that set's own best
threshold; on RAGTruth data-to-text (JSON contexts, never trained on) it flags 93% of the sentences (see
docs/transfer.md). :func:`recalibrate` keeps the aggregator's weights and refits only what turns its raw log-odds
into a decision: the probability map, the threshold and the false-accept quantiles
(:meth:`~faithwatch.detectors.aggregator.SynCheckDetector.calibrate`), on the user's own labelled sentences.

Without labels, :func:`adapt_unlabelled` moves the probability map so that the domain's median raw log-odds
lands on the training data's (the detector's reference): the decision rule is kept and only its origin moves.
Measured with leave one data set out over seven sets (docs/transfer.md), this takes the calibration cost within
0.03 on six folds instead of two. It assumes a share of unfaithful sentences like the training data's: where most
sentences really are unfaithful (BEGIN's CMU-DoG dialogue, 78%) it raises their scores and lets them through, so
`calibrate` warns when the detector flagged most sentences before the shift
(:func:`faithwatch.detectors.calibration.shift_caveat`).
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from faithwatch.detectors.aggregator import SynCheckDetector
from faithwatch.detectors.calibration import MIN_UNLABELLED, weighted_balanced_accuracy
from faithwatch.errors import InputError
from faithwatch.eval.training import monitor_scores, raw_scores

#: fewer labelled sentences than this in either class give no usable threshold
MIN_PER_CLASS = 5
#: below this many labelled responses the new threshold is noisy (measured in docs/transfer.md): warn
FEW_RESPONSES = 25
#: fewer unfaithful sentences make noisy false-accept quantiles (calibrate warns)
FEW_UNFAITHFUL = 20


def _finite_logits(detector: SynCheckDetector, table: pd.DataFrame, source: str) -> np.ndarray:
    """``detector``'s raw log-odds of ``table``'s rows; InputError if any is not finite."""
    z = raw_scores(detector, table)
    if not np.all(np.isfinite(z)):
        raise InputError(f"{source}: {int((~np.isfinite(z)).sum())} sentences have non-finite detector scores")
    return z


def _scores(detector: SynCheckDetector, z: np.ndarray, table: pd.DataFrame) -> np.ndarray:
    """P(faithful) of ``table``'s rows as the monitor gives it (:func:`~faithwatch.eval.training.monitor_scores`)."""
    return monitor_scores(detector, detector.probability(z), table)


class _Summary:
    def to_dict(self) -> dict:
        """JSON-ready."""
        return asdict(self)


@dataclass(frozen=True)
class Recalibration(_Summary):
    """What :func:`recalibrate` changed. ``ba_*`` are on the calibration sentences themselves, so ``ba_after`` is
    in-sample (its threshold was chosen on them)."""

    source: str
    n_responses: int
    n_sentences: int
    n_unfaithful: int
    threshold_before: float
    threshold_after: float
    flagged_before: float
    flagged_after: float
    ba_before: float
    ba_after: float


def recalibrate(detector: SynCheckDetector, table: pd.DataFrame, source: str) -> Recalibration:
    """Refit ``detector``'s probability map and threshold on the labelled sentence rows ``table`` (in place).

    Both classes weigh the same. Raises :class:`InputError` when either class has fewer than
    :data:`MIN_PER_CLASS` sentences.
    """
    if "label" not in table.columns or table.empty:
        raise InputError(f"{source}: no labelled sentences to calibrate on (for responses without labels, "
                         "use `faithwatch calibrate --unlabelled`)")
    unfaithful = table.label.to_numpy() == 1
    n_bad, n_good = int(unfaithful.sum()), int((~unfaithful).sum())
    if min(n_bad, n_good) < MIN_PER_CLASS:
        raise InputError(f"{source}: calibration needs at least {MIN_PER_CLASS} faithful and {MIN_PER_CLASS} "
                         f"unfaithful labelled sentences, got {n_good} and {n_bad}")
    z = _finite_logits(detector, table, source)
    before_p, before_t = _scores(detector, z, table), detector.threshold
    detector.calibrate(z, unfaithful)
    after_p = _scores(detector, z, table)
    result = Recalibration(
        source=source, n_responses=int(table.example_id.nunique()), n_sentences=len(table), n_unfaithful=n_bad,
        threshold_before=float(before_t), threshold_after=float(detector.threshold),
        flagged_before=float(np.mean(before_p < before_t)), flagged_after=float(np.mean(after_p < detector.threshold)),
        ba_before=weighted_balanced_accuracy(before_p, unfaithful, before_t),
        ba_after=weighted_balanced_accuracy(after_p, unfaithful, detector.threshold),
    )
    detector.meta.params["threshold_from"] = f"re-calibrated on {source}"
    detector.meta.metrics["recalibration"] = result.to_dict()
    return result


@dataclass(frozen=True)
class DomainShift(_Summary):
    """What :func:`adapt_unlabelled` changed: the domain's median raw log-odds against the detector's reference."""

    source: str
    n_responses: int
    n_sentences: int
    reference_logit: float
    domain_median_logit: float
    shift: float  # the domain's median minus the reference: subtracted from every raw log-odds
    threshold: float
    flagged_before: float
    flagged_after: float


def adapt_unlabelled(detector: SynCheckDetector, table: pd.DataFrame, source: str,
                     logits: np.ndarray | None = None) -> DomainShift:
    """Shift ``detector`` (in place) so that the median raw log-odds of the sentence rows ``table`` (no labels
    needed) maps where the training sentences' median did. ``logits``: the rows' raw log-odds, if already computed.

    Raises :class:`InputError` for fewer than :data:`MIN_UNLABELLED` sentences, non-finite scores, or a detector
    trained before the reference was recorded.
    """
    reference = detector.reference_logit
    if reference is None:
        raise InputError(f"{detector.name} records no reference log-odds (trained before calibrate --unlabelled "
                         "existed); retrain it with `faithwatch train`")
    if len(table) < MIN_UNLABELLED:
        raise InputError(f"{source}: unlabelled calibration needs at least {MIN_UNLABELLED} sentences, "
                         f"got {len(table)}")
    z = _finite_logits(detector, table, source) if logits is None else np.asarray(logits, dtype=np.float64)
    before = float(np.mean(_scores(detector, z, table) < detector.threshold))
    median = float(np.median(z))
    detector.shift(median - reference)
    result = DomainShift(
        source=source, n_responses=int(table.example_id.nunique()), n_sentences=len(table),
        reference_logit=reference, domain_median_logit=median, shift=median - reference,
        threshold=float(detector.threshold), flagged_before=before,
        flagged_after=float(np.mean(_scores(detector, z, table) < detector.threshold)),
    )
    detector.meta.params["threshold_from"] = f"{reference_origin(detector)}, shifted to the median of {source}"
    detector.meta.metrics["domain_shift"] = result.to_dict()
    return result


def reference_origin(detector: SynCheckDetector) -> str:
    """What the detector's threshold and reference log-odds were fitted on: the training sets' out-of-fold
    predictions, or the sentences of a labelled :func:`recalibrate` (as ``meta.params["threshold_from"]`` says)."""
    was = str(detector.meta.params.get("threshold_from") or "out-of-fold predictions")
    return was.split(", shifted to the median of ")[0]  # a new shift replaces an earlier one


def balanced_accuracy_after_shift(detector: SynCheckDetector, table: pd.DataFrame, source: str,
                                  logits: np.ndarray | None = None) -> float | None:
    """Sentence balanced accuracy on ``table`` (labelled rows) of a copy of ``detector`` shifted by
    :func:`adapt_unlabelled` to the same rows: what ``calibrate --unlabelled`` would give there (labels are read
    only to score it). None when the rows are too few to place a median or the detector records no reference."""
    shifted = copy.deepcopy(detector)
    z = _finite_logits(detector, table, source) if logits is None else np.asarray(logits, dtype=np.float64)
    try:
        adapt_unlabelled(shifted, table, source=source, logits=z)
    except InputError:
        return None
    return weighted_balanced_accuracy(_scores(shifted, z, table), table.label.to_numpy() == 1, shifted.threshold)
