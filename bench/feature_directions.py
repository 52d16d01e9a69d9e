"""Picking every feature's direction on a training table: scikit-learn's ``roc_auc_score`` column by column (the
code before 2026-12-06) against :func:`faithwatch.eval.metrics.auroc_by_column`, one rank pass over the table, in the
same run. ``faithwatch eval --transfer`` picks directions once per fit (282 fits).

The table is random, of a LOO training table's size (rows, features, class balance), with scores rounded so that
ties occur as they do in count features; the AUROCs and directions of both are compared.

    python bench/feature_directions.py
    python bench/feature_directions.py --rows 20000 --features 40
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    from sklearn.metrics import roc_auc_score

    from faithwatch.eval.metrics import auroc_by_column

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=12000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds of each, alternating")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    y = (rng.random(args.rows) < 0.3).astype(int)
    table = np.round(rng.normal(size=(args.rows, args.features)) + rng.normal(size=args.features) * y[:, None] * 0.3, 1)
    times: dict[str, list[float]] = {"sklearn": [], "faithwatch": []}
    for _ in range(args.rounds):
        start = time.perf_counter()
        theirs = np.array([roc_auc_score(y, table[:, j]) for j in range(args.features)])
        times["sklearn"].append(time.perf_counter() - start)
        start = time.perf_counter()
        ours = auroc_by_column(y, table)
        times["faithwatch"].append(time.perf_counter() - start)
    best = {k: min(v) * 1e3 for k, v in times.items()}
    same = int(((theirs > 0.5) == (ours > 0.5)).sum())
    print(f"{args.rows} rows x {args.features} features: roc_auc_score per column {best['sklearn']:.1f} ms, "
          f"auroc_by_column {best['faithwatch']:.1f} ms ({best['sklearn'] / best['faithwatch']:.1f}x as fast; best of "
          f"{args.rounds}); largest AUROC difference {np.abs(theirs - ours).max():.1e}; "
          f"{same} of {args.features} directions the same")


if __name__ == "__main__":
    main()
