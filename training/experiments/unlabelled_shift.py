"""Issue 12: `faithwatch calibrate --unlabelled`: does moving a domain's median onto the training median fix the
threshold without labels?

Each of the seven labelled sets is held out in turn (leave one data set out). The shipped recipe is trained on the
other six plus the augmentation set, as `faithwatch train` does (threshold and reference median from out-of-fold
predictions). On the held-out set it is then shifted (:func:`faithwatch.eval.recalibration.adapt_unlabelled`) on
``k`` randomly drawn responses, their labels unused, and its calibration cost (balanced accuracy at the fold's own
best threshold minus that at the shipped threshold) is measured on the set's *other* responses; 30 draws per ``k``.
"all" shifts on the whole set and measures on it. Reads the text-only feature cache (``faithwatch eval
--text-only`` builds it; about 1 h the first time).

    python training/experiments/unlabelled_shift.py        # ~1 min with the cache
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
from recalibration_curve import DRAWS, RECIPE, SIZES, cached_tables  # the same sets, recipe, sizes, draws

from faithwatch.detectors.calibration import best_balanced_accuracy, weighted_balanced_accuracy
from faithwatch.eval.recalibration import adapt_unlabelled
from faithwatch.eval.training import fit_syncheck, syncheck_scores
from faithwatch.eval.transfer import held_out_names


def cost(detector, table: pd.DataFrame) -> float:
    """Best-threshold balanced accuracy minus that at ``detector``'s threshold, on ``table``'s labelled rows."""
    y = table.label.to_numpy() == 1
    p = syncheck_scores(detector, table)
    return best_balanced_accuracy(p, y) - weighted_balanced_accuracy(p, y,
                                                                                                 detector.threshold)


def main() -> None:
    tables, recipe = cached_tables(), RECIPE
    rng = np.random.default_rng(0)
    print(f"{'held out':<18} {'pooled':>7} {'all':>7}", " ".join(f"{'k=' + str(k):>12}" for k in SIZES),
          "  shift (all)")
    for held in held_out_names(tables):
        train = pd.concat([t for n, t in tables.items() if n != held], ignore_index=True)
        det = fit_syncheck(train, recipe, model_id="text-only", seed=0)
        test = tables[held]
        shifted = copy.deepcopy(det)
        whole = adapt_unlabelled(shifted, test, source=held)
        cells = []
        ids = test.example_id.unique()
        for k in SIZES:
            costs = []
            for _ in range(DRAWS):
                inside = test.example_id.isin(set(rng.choice(ids, k, replace=False))).to_numpy()
                fitted = copy.deepcopy(det)
                if inside.sum() < 20:  # adapt_unlabelled refuses fewer sentences
                    costs.append(cost(fitted, test[~inside]))
                    continue
                adapt_unlabelled(fitted, test[inside], source=held)
                costs.append(cost(fitted, test[~inside]))
            cells.append(f"{np.mean(costs):.3f}±{np.std(costs):.3f}")
        print(f"{held:<18} {cost(det, test):7.4f} {cost(shifted, test):7.4f}", " ".join(f"{c:>12}" for c in cells),
              f"  {whole.shift:+.2f}", flush=True)


if __name__ == "__main__":
    main()
