"""``faithwatch eval-alignment``: sentence-level AUROC of ``align_score`` alone, per alignment scorer.

Each scorer's features come from the extraction cache; a scorer not cached yet reuses another scorer's
cache and recomputes only ``align_score`` (see :func:`faithwatch.eval.features.derive_alignment`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from faithwatch.eval.metrics import DetectionMetrics, detection_metrics
from faithwatch.eval.pipeline import extraction_monitor, load_labelled

ProgressFn = Callable[[str, int, int], None]


@dataclass
class AlignmentEval:
    """Per data set and scorer: detection metrics of ``1 - align_score`` and the scores behind them."""

    metrics: dict[str, dict[str, DetectionMetrics]] = field(default_factory=dict)  # dataset -> scorer -> m
    curves: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = field(default_factory=dict)

    def table(self) -> pd.DataFrame:
        """One row per (data set, scorer), with the AUROC difference to the first scorer."""
        rows = []
        for dataset, by_scorer in self.metrics.items():
            first = next(iter(by_scorer.values())).auroc.value
            for scorer, m in by_scorer.items():
                rows.append({"dataset": dataset, "scorer": scorer, "auroc": m.auroc, "auprc": m.auprc,
                             "delta_auroc_vs_first": m.auroc.value - first, "n": m.n, "n_unfaithful": m.n_positive})
        return pd.DataFrame(rows)


def evaluate_alignment(datasets: Sequence[str], scorers: Sequence[str], *, model: str | None = None,
                       data_root: str | None = None, n_boot: int = 1000, seed: int = 0,
                       on_progress: ProgressFn | None = None) -> AlignmentEval:
    """AUROC (response-clustered bootstrap CIs) of each scorer's ``align_score`` on each data set's sentences."""
    result = AlignmentEval()
    lm = None
    for spec in scorers:
        monitor = extraction_monitor(lm if lm is not None else model, spec)
        lm = monitor.lm  # load the language model once
        progress = (lambda name, n, t, _s=spec: on_progress(f"{name} · {_s}", n, t)) if on_progress else None
        data = load_labelled(list(datasets), monitor, data_root=data_root, on_progress=progress)
        for name, d in data.items():
            table = d.sentences.dropna(subset=["align_score"])
            labels = table.label.to_numpy(dtype=int)
            scores = 1.0 - table.align_score.to_numpy(dtype=np.float64)
            result.metrics.setdefault(name, {})[spec] = detection_metrics(
                labels, scores, n_boot=n_boot, seed=seed, groups=table.example_id.to_numpy())
            result.curves.setdefault(name, {})[spec] = (labels, scores)
    return result
