"""Speed of the vectorised bootstrap of ``detection_metrics`` against a plain per-replicate sklearn loop, same run.

    python bench/bootstrap.py                      # n=5000 items, 1000 replicates, groups of 5
    python bench/bootstrap.py --n 20000 --boot 2000

The baseline resamples the arrays explicitly and calls sklearn's ``roc_auc_score``, ``average_precision_score`` and
``balanced_accuracy_score`` once per replicate (what the vectorised code must equal); it runs ``--baseline-boot``
replicates and is scaled to ``--boot``. Prints the median of ``--repeats`` runs after a warm-up, and the ratio
vectorised / baseline per replicate (lower is better), ungrouped and with the cluster bootstrap.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
from sklearn.metrics import average_precision_score, balanced_accuracy_score, roc_auc_score

from faithwatch.eval.metrics import detection_metrics


def data(n: int, seed: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """Labels with a positive rate of ~0.3 and scores that separate them partially (as in the tests)."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.3).astype(int)
    return y, rng.normal(size=n) + y


def naive(y: np.ndarray, s: np.ndarray, threshold: float, n_boot: int, groups: np.ndarray | None, seed: int) -> None:
    """The plain bootstrap: resample (whole groups when given), then sklearn on the resampled arrays."""
    rng = np.random.default_rng(seed)
    members = None if groups is None else [np.flatnonzero(groups == g) for g in np.unique(groups)]
    for _ in range(n_boot):
        if members is None:
            idx = rng.integers(0, len(y), len(y))
        else:
            idx = np.concatenate([members[g] for g in rng.integers(0, len(members), len(members))])
        yy, ss = y[idx], s[idx]
        if yy.min() == yy.max():
            continue
        roc_auc_score(yy, ss)
        average_precision_score(yy, ss)
        balanced_accuracy_score(yy, (ss >= threshold).astype(int))


def median_time(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000, help="items (sentences)")
    ap.add_argument("--boot", type=int, default=1000, help="replicates of detection_metrics")
    ap.add_argument("--baseline-boot", type=int, default=50, help="replicates of the sklearn loop (scaled)")
    ap.add_argument("--group-size", type=int, default=5, help="items per group of the cluster bootstrap")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    y, s = data(args.n)
    groups = np.arange(args.n) // args.group_size
    print(f"n={args.n}, {args.boot} replicates (baseline: {args.baseline_boot}, scaled), "
          f"groups of {args.group_size}, median of {args.repeats}")
    for label, g in (("ungrouped", None), (f"grouped ({int(groups.max()) + 1} groups)", groups)):
        fast = median_time(lambda g=g: detection_metrics(y, s, threshold=0.5, n_boot=args.boot, seed=0, groups=g),
                           args.repeats)
        slow = median_time(lambda g=g: naive(y, s, 0.5, args.baseline_boot, g, 0), args.repeats)
        slow_scaled = slow * args.boot / args.baseline_boot
        print(f"{label:24s} vectorised {fast:7.3f} s   sklearn loop {slow_scaled:7.3f} s (est.)   "
              f"ratio {fast / slow_scaled:.3f}x ({slow_scaled / fast:.0f}x faster)")


if __name__ == "__main__":
    main()
