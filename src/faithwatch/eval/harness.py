"""The evaluation harness: a detector and its baselines side by side on labelled data (transfer: eval.transfer)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

from faithwatch.data.loaders import FAITHBENCH_DETECTORS
from faithwatch.data.schema import LabelledExample
from faithwatch.detectors.aggregator import SynCheckDetector
from faithwatch.detectors.framing import floor_table, set_aside
from faithwatch.detectors.lookback_lens import LookbackLens
from faithwatch.eval.metrics import DetectionMetrics, detection_metrics
from faithwatch.eval.training import lookback_matrix, monitor_scores, with_derived
from faithwatch.results import response_score

FLARE = "FLARE (min_prob)"


@dataclass
class DatasetEval:
    """Scores of every method on one data set (``scores``: P(faithful)-like, higher = more faithful)."""

    name: str
    table: pd.DataFrame
    scores: dict[str, np.ndarray] = field(default_factory=dict)
    thresholds: dict[str, float] = field(default_factory=dict)
    logits: np.ndarray | None = None  # the detector's raw log-odds per row (its ``scores`` are their probabilities)

    def metrics(self, n_boot: int, seed: int) -> dict[str, DetectionMetrics]:
        """Detection metrics of every method on this data set (bootstrap over examples)."""
        labels = self.table.label.to_numpy()
        groups = self.table.example_id.to_numpy()
        return {
            method: detection_metrics(labels, 1.0 - s, threshold=unfaithful_threshold(self.thresholds.get(method)),
                                      n_boot=n_boot, seed=seed, groups=groups)
            for method, s in self.scores.items()
        }


def unfaithful_threshold(faithful_threshold: float | None) -> float | None:
    """The threshold on ``1 - score`` at which ``detection_metrics``'s ``>=`` flags exactly the scores below
    ``faithful_threshold``, as the monitor flags (``score < threshold``): a framing line raised to the threshold is
    not flagged."""
    return None if faithful_threshold is None else float(np.nextafter(1.0 - faithful_threshold, np.inf))


def _oriented(values: np.ndarray, direction: int) -> np.ndarray:
    """Map a feature to a 'faithfulness' ranking score (rank-preserving into [0, 1] is not needed for AUROC)."""
    v = values.astype(np.float64) * direction
    lo, hi = v.min(), v.max()
    return (v - lo) / (hi - lo) if hi > lo else np.full_like(v, 0.5)


def score_dataset(
    name: str, table: pd.DataFrame, detector: SynCheckDetector, lens: LookbackLens | None = None
) -> DatasetEval:
    """The detector, FLARE, every SynCheck feature alone, alignment alone, and the Lookback Lens on one table."""
    ev = DatasetEval(name, table)
    with_lid = with_derived(table, detector)  # once: LID and probe inputs derived for the detector and its features
    ev.logits = detector.decision_function(with_lid[detector.meta.feature_names].to_numpy(dtype=np.float64))
    # as in the monitor: a swapped number capped, framing lines never flagged by themselves
    ev.scores[detector.name] = monitor_scores(detector, detector.probability(ev.logits), table)
    ev.thresholds[detector.name] = detector.threshold
    if "min_prob" in table.columns:  # text-only tables have no model signals
        ev.scores[FLARE] = table.min_prob.to_numpy()
    directions = detector.meta.metrics.get("feature_directions", {})
    for feature in detector.meta.feature_names:
        ev.scores[feature] = _oriented(with_lid[feature].to_numpy(), directions.get(feature, 1))
    if lens is not None and "lookback_ratio" in table.columns:
        ev.scores["Lookback Lens"] = floor_table(lens.predict_proba_faithful(lookback_matrix(table)), table,
                                                 lens.threshold)
        ev.thresholds["Lookback Lens"] = lens.threshold
    return ev


def by_source_model(ev: DatasetEval, method: str) -> pd.DataFrame:
    """Sentence-level AUROC of ``method`` per source model (the LLM that wrote the responses); a model whose
    sentences are all of one class keeps its row, with no AUROC (``None``), so that no model drops out unseen."""
    rows = []
    for source, idx in ev.table.groupby("source_model").groups.items():
        part = ev.table.loc[idx]
        scores = ev.scores[method][ev.table.index.get_indexer(idx)]
        one_class = part.label.nunique() < 2
        rows.append({"source_model": source, "n": len(part), "unfaithful": int(part.label.sum()),
                     "auroc": None if one_class else float(roc_auc_score(part.label, 1 - scores))})
    out = pd.DataFrame(rows)
    if len(out):
        out["auroc"] = pd.Series([r["auroc"] for r in rows], dtype=object)  # None stays None, never NaN
    return out


def response_level(examples: Sequence[LabelledExample], table: pd.DataFrame, scores: np.ndarray, *,
                   framing: bool = True) -> pd.DataFrame:
    """Per response: the detector's response score (its lowest sentence score, framing lines and borne-out
    absence notes left out: :func:`faithwatch.results.response_score`; with ``framing=False``, as for a single
    signal, or for a table without ``text``, every sentence counts), the response label, stored detector verdicts."""
    by_id = {e.id: e for e in examples}
    marks = set_aside(table) if framing else np.zeros(len(table), dtype=bool)
    sentences = pd.DataFrame({"example_id": table.example_id, "score": scores, "framing": marks})
    frame = {ex_id: response_score(g.score.tolist(), g.framing.tolist())
             for ex_id, g in sentences.groupby("example_id")}
    rows = []
    for ex_id, score in frame.items():
        ex = by_id[ex_id]
        if ex.response_label is None:
            continue
        row = {"example_id": ex_id, "label": ex.response_label, "score": score, "source_model": ex.source_model}
        for det in FAITHBENCH_DETECTORS:
            if det in ex.meta and ex.meta[det] is not None:
                row[det] = float(ex.meta[det])
        rows.append(row)
    return pd.DataFrame(rows)


def faithbench_comparison(responses: pd.DataFrame, threshold: float, detector_name: str) -> pd.DataFrame:
    """Response-level balanced accuracy of faithwatch and FaithBench's stored detectors on the same samples."""
    cols = [d for d in FAITHBENCH_DETECTORS if d in responses]
    common = responses.dropna(subset=cols)
    y = common.label.to_numpy()
    rows = [{"method": f"faithwatch {detector_name} (min sentence score)",
             "balanced_accuracy": balanced_accuracy_score(y, (common.score < threshold).astype(int)),
             "auroc": roc_auc_score(y, -common.score), "n": len(common)}]
    for det in cols:
        value = common[det].to_numpy()
        # hhem-2.1 is a consistency probability; the others are 0/1 verdicts (1 = consistent)
        predicted = (value < 0.5).astype(int)
        rows.append({"method": det, "balanced_accuracy": balanced_accuracy_score(y, predicted),
                     "auroc": roc_auc_score(y, -value) if det == "hhem-2.1" else None, "n": len(common)})
    return pd.DataFrame(rows)


def load_artifacts(path: Path, model_id: str) -> tuple[SynCheckDetector, LookbackLens | None]:
    """A trained detector folder: the SynCheck aggregator and, when present, its Lookback Lens sub-folder."""
    detector = SynCheckDetector.load(path, expect_model_id=model_id)
    lens_dir = path / "lookback-lens"
    lens = LookbackLens.load(lens_dir, expect_model_id=model_id) if lens_dir.is_dir() else None
    return detector, lens
