"""``faithwatch eval-alignment``: sentence-level AUROC of ``align_score`` alone, per alignment scorer.

Each scorer's sentence features come from the text alone (``load_labelled(text_only=True)``, cached per scorer):
``align_score`` needs no teacher forcing of the language model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from faithwatch.errors import InputError
from faithwatch.eval.metrics import DetectionMetrics, MetricCI, auroc_difference, detection_metrics
from faithwatch.eval.pipeline import load_labelled, read_labelled

ProgressFn = Callable[[str, int, int], None]


@dataclass
class AlignmentEval:
    """Per data set and scorer: detection metrics of ``1 - align_score`` and the scores behind them."""

    metrics: dict[str, dict[str, DetectionMetrics]] = field(default_factory=dict)  # dataset -> scorer -> m
    curves: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = field(default_factory=dict)
    #: dataset -> scorer -> the scored sentences (example_id, sentence_index, label, score), for paired differences
    scored: dict[str, dict[str, pd.DataFrame]] = field(default_factory=dict)
    n_boot: int = 1000
    seed: int = 0

    def table(self) -> pd.DataFrame:
        """One row per (data set, scorer), with the AUROC difference to the first scorer and its paired bootstrap
        interval, read on the sentences both scored (``n_paired``; whole responses resampled)."""
        rows = []
        for dataset, by_scorer in self.metrics.items():
            first = next(iter(by_scorer))
            for scorer, m in by_scorer.items():
                delta, n_paired = self._delta(dataset, scorer, first) if scorer != first else (None, m.n)
                rows.append({"dataset": dataset, "scorer": scorer, "auroc": m.auroc, "auprc": m.auprc,
                             "delta_auroc_vs_first": delta, "n_paired": n_paired, "n": m.n,
                             "n_unfaithful": m.n_positive})
        return pd.DataFrame(rows)

    def _delta(self, dataset: str, scorer: str, first: str) -> tuple[MetricCI | None, int]:
        keys = ["example_id", "sentence_index"]
        both = self.scored[dataset][scorer].merge(self.scored[dataset][first], on=keys, suffixes=("", "_first"))
        if both.label.nunique() < 2 or not (both.label == both.label_first).all():
            return None, len(both)  # one class only, or the two runs labelled a sentence differently
        delta = auroc_difference(both.label.to_numpy(), both.score.to_numpy(), both.score_first.to_numpy(),
                                 n_boot=self.n_boot, seed=self.seed, groups=both.example_id.to_numpy())
        return delta, len(both)


def evaluate_alignment(datasets: Sequence[str], scorers: Sequence[str], *, data_root: str | None = None,
                       n_boot: int = 1000, seed: int = 0, on_progress: ProgressFn | None = None) -> AlignmentEval:
    """AUROC (response-clustered bootstrap CIs) of each scorer's ``align_score`` on each data set's sentences."""
    from faithwatch.alignment import parse_spec, plain_specs
    from faithwatch.monitor import NO_MODEL, Monitor

    for spec in scorers:  # every spec before the first one's features (up to an hour each)
        if [name for name, _ in parse_spec(spec)] == ["none"]:
            raise InputError(f"'none' gives no align_score to evaluate; choose among {', '.join(plain_specs())}")
    result = AlignmentEval(n_boot=n_boot, seed=seed)
    loaded = read_labelled(list(datasets), data_root=data_root)  # once, and before the first scorer loads
    for spec in scorers:
        # the scorer alone: no language model is loaded (on a fresh machine that would dequantise it for nothing)
        monitor = Monitor(NO_MODEL, alignment=spec, detector="heuristic", signals=["alignment"])
        progress = (lambda name, n, t, _s=spec: on_progress(f"{name} · {_s}", n, t)) if on_progress else None
        data = load_labelled(list(datasets), monitor, on_progress=progress, text_only=True, loaded=loaded)
        for name, d in data.items():
            table = d.sentences.dropna(subset=["align_score"])
            labels = table.label.to_numpy(dtype=int)
            scores = 1.0 - table.align_score.to_numpy(dtype=np.float64)
            result.metrics.setdefault(name, {})[spec] = detection_metrics(
                labels, scores, n_boot=n_boot, seed=seed, groups=table.example_id.to_numpy())
            result.curves.setdefault(name, {})[spec] = (labels, scores)
            result.scored.setdefault(name, {})[spec] = pd.DataFrame({
                "example_id": table.example_id.to_numpy(), "sentence_index": table.sentence_index.to_numpy(),
                "label": labels, "score": scores})
    return result
