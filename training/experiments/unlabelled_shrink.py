"""Issue 12, calibration: should `calibrate --unlabelled` move a detector only part of the way? (scratch)

`calibrate --unlabelled` shifts the raw log-odds by the whole gap between a new domain's median and the training
sentences' median. That rescues near-extractive summaries (QAGS-CNNDM 0.220 → 0.023) but hurts mostly-unfaithful
dialogue (BEGIN CMU-DoG 0.011 → 0.200), whose median is an unfaithful sentence. A shrunk shift, lambda times the
gap, would trade the two. Same eleven sets and costs as `unlabelled_quantile.py` (six LOO folds, five never-seen
sets; labels never used for the shift).

**The rule, fixed before the first run:** the whole shift (lambda 1) is replaced only by a lambda that keeps more of
the eleven sets within 0.03 (ties: not replaced).

    python training/experiments/cliff_sets.py && python training/experiments/unlabelled_shrink.py   # ~5 min
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
from more_dialogue import labelled_tables  # sibling scripts, on sys.path when this one runs
from unlabelled_quantile import cases, fitted, weighted_quantile

from faithwatch.detectors.calibration import choose_threshold, weighted_balanced_accuracy
from faithwatch.eval.training import raw_scores

LAMBDAS = (1.0, 0.75, 0.5, 0.25, 0.0)


def costs(train: pd.DataFrame, tests: dict[str, pd.DataFrame]) -> dict[str, dict[float, float]]:
    det, oof, w, _ = fitted(train)
    reference = weighted_quantile(oof, w, 0.5)
    out = {}
    for name, test in tests.items():
        y = test.label.to_numpy().astype(int) == 1
        z = raw_scores(det, test)
        best = weighted_balanced_accuracy(det.probability(z), y, choose_threshold(det.probability(z), y))
        out[name] = {}
        for lam in LAMBDAS:
            d = copy.deepcopy(det)
            d.shift(lam * (float(np.median(z)) - reference))
            out[name][lam] = best - weighted_balanced_accuracy(d.probability(z), y, d.threshold)
        print(f"{name.split('/')[-1]:<22} " + " ".join(f"l{lam}: {c:.3f}" for lam, c in out[name].items()), flush=True)
    return out


def main() -> None:
    result = {}
    for train, tests in cases(labelled_tables()):
        result.update(costs(train, tests))
    for lam in LAMBDAS:
        c = [v[lam] for v in result.values()]
        print(f"lambda = {lam}: within 0.03 on {sum(x <= 0.03 for x in c)}/{len(c)}, mean cost {np.mean(c):.3f}, "
              f"worst {max(c):.3f}")


if __name__ == "__main__":
    main()
