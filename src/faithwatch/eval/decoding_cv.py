"""Cross-validated decoding thresholds: τ1/τ2 of FOD (or τ1 of rerank-coverage) chosen without looking at the items they
are scored on.

The grid is read through the strategy's registry ``reads``: a strategy that reads τ1 alone (rerank-coverage, fod-bt)
runs once per distinct τ1. Every grid point is run once on every item (through
:func:`faithwatch.eval.decoding.evaluate_strategies`, so runs are cached and resumable). The items are then split into
``folds`` folds; for each fold the grid point with the best counterfactual success on the *other* folds is chosen, and
the fold's items are scored with it. The reported success is the mean over items of their out-of-fold outcome. Agreeing
items (context = common knowledge) are scored with the same per-fold choice, as the do-no-harm check; they never
influence the choice.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from faithwatch.decoding.counterfactual import QAItem
from faithwatch.errors import InputError
from faithwatch.eval.decoding import evaluate_strategies, strategy_reads

#: the (tau1, tau2) grid searched by default (scores are calibrated probabilities of "faithful")
DEFAULT_GRID: tuple[tuple[float, float], ...] = ((0.5, 0.5), (0.5, 0.6), (0.6, 0.6), (0.6, 0.7), (0.7, 0.7),
                                                 (0.7, 0.85))


@dataclass
class CVResult:
    """Out-of-fold outcomes of one strategy."""

    strategy: str
    rows: pd.DataFrame  # one row per item: fold, chosen grid point, success, common_hit, abstained, agrees
    grid: pd.DataFrame  # in-sample success of every grid point (for reference only)
    chosen: dict[int, dict[str, float]] = field(default_factory=dict)  # fold -> the τ the strategy reads

    def summary(self) -> dict[str, Any]:
        """One row of the strategy table: success, common-answer and abstention rates with the cross-validated tau."""
        cf = self.rows[~self.rows.agrees]
        ag = self.rows[self.rows.agrees]
        return {"strategy": f"{self.strategy} (τ cross-validated)", "n": len(cf),
                "success_rate": float(cf.success.mean()), "common_rate": float(cf.common_hit.mean()),
                "abstention_rate": float(cf.abstained.mean()),
                "agree_success_rate": float(ag.success.mean()) if len(ag) else None,
                "generated_tokens": float(self.rows.generated_tokens.mean()),
                "chosen": "; ".join(f"fold {k}: " + " ".join(f"{_SYMBOL[n]}={x:g}" for n, x in v.items())
                                    for k, v in sorted(self.chosen.items()))}


_SYMBOL = {"tau1": "τ1", "tau2": "τ2"}


def taus_read(strategy: str) -> list[str]:
    """The thresholds ("tau1", "tau2") that ``strategy`` reads (:func:`faithwatch.eval.decoding.strategy_reads`)."""
    return [k for k in _SYMBOL if strategy_reads(strategy, k)]


def tau_points(strategy: str, grid: Sequence[tuple[float, float]]) -> list[dict[str, float]]:
    """The distinct settings of ``grid`` that ``strategy`` can tell apart: its (τ1, τ2) pairs projected on the
    thresholds it reads (:func:`taus_read`), in grid order."""
    keys = taus_read(strategy)
    if not keys:
        raise InputError(f"strategy '{strategy}' reads neither tau1 nor tau2: nothing to cross-validate")
    points = dict.fromkeys(tuple((k, v) for k, v in zip(_SYMBOL, p, strict=True) if k in keys) for p in grid)
    return [dict(p) for p in points]


def fold_of(items: Sequence[QAItem], folds: int, seed: int = 0) -> dict[str, int]:
    """A fixed random fold per item id."""
    order = np.random.default_rng(seed).permutation(len(items))
    return {items[i].id: int(k % folds) for k, i in enumerate(order)}


def cv_items(items: Sequence[QAItem], folds: int = 4) -> list[QAItem]:
    """The items that τ cross-validation reads (the counterfactual ones); fewer than ``folds`` whose context
    disagrees with common knowledge is an :class:`InputError`."""
    items = [i for i in items if i.is_counterfactual]
    if len([i for i in items if not i.agrees]) < folds:
        raise InputError(f"cross-validation needs at least {folds} counterfactual items (with context_answers "
                         "that differ from common_answers)")
    return items


def cross_validate_tau(monitor: Any, items: Sequence[QAItem], strategy: str = "fod", *,
                       grid: Sequence[tuple[float, float]] = DEFAULT_GRID, folds: int = 4, seed: int = 0,
                       params: Mapping[str, Any] | None = None, cache_path: str | None = None,
                       on_progress: Callable[[int, int, str, str], None] | None = None,
                       **kwargs: Any) -> CVResult:
    """Run ``strategy`` at every (τ1, τ2) of ``grid`` it can tell apart (:func:`tau_points`) and score each item
    with the τ chosen on the other folds."""
    items = cv_items(items, folds)
    if not grid:
        raise InputError("the τ grid is empty")
    points = tau_points(strategy, grid)
    outcome: list[dict[str, dict]] = []
    for point in points:
        ev = evaluate_strategies(monitor, items, [strategy], params={**dict(params or {}), **point},
                                 cache_path=cache_path, on_progress=on_progress, **kwargs)
        outcome.append({r["id"]: r for r in ev.rows if not r.get("error")})
    fold = fold_of([i for i in items], folds, seed)
    rows, chosen = [], {}
    for k in range(folds):
        def train_success(j: int, k: int = k) -> float:
            vals = [float(r["success"]) for i, r in outcome[j].items() if fold[i] != k and not r.get("agrees")]
            return float(np.mean(vals)) if vals else 0.0

        best = max(range(len(points)), key=lambda j: (train_success(j), -j))
        chosen[k] = points[best]
        for item in items:
            if fold[item.id] != k or item.id not in outcome[best]:
                continue
            r = outcome[best][item.id]
            rows.append({"id": item.id, "fold": k, **points[best], "agrees": item.agrees,
                         "success": bool(r["success"]), "common_hit": bool(r["common_hit"]),
                         "abstained": bool(r["abstained"]), "generated_tokens": r["generated_tokens"],
                         "answer": r["answer"]})
    grid_rows = []
    for point, out in zip(points, outcome, strict=True):
        rs = list(out.values())
        grid_rows.append({**point,
                          "success_rate (in-sample)": float(np.mean([r["success"] for r in rs if not r["agrees"]])),
                          "agree_success_rate": float(np.mean([r["success"] for r in rs if r["agrees"]]))
                          if any(r["agrees"] for r in rs) else None})
    return CVResult(strategy, pd.DataFrame(rows), pd.DataFrame(grid_rows), chosen)
