"""Issue 12, calibration: when should a batch run point the user to `calibrate --unlabelled`? (scratch)

`faithwatch score` and `check` apply the pooled threshold to any domain. Where a domain's raw log-odds sit far from
the training sentences' (QAGS-CNNDM +2.6, RAGTruth data-to-text -2.8), that threshold costs up to 0.24 of balanced
accuracy, and the unlabelled shift recovers most of it; where they sit close, the shift costs a little. A batch run
knows its sentences' median raw log-odds, so it can say how far they are from the detector's reference.

For each of the eleven sets of `unlabelled_quantile.py` (six LOO folds, five never-trained-on sets): the median
shift, the share flagged at the pooled threshold, the calibration cost at the pooled threshold and after the
shift, and the share of unfaithful sentences (shown, never used).

**The rule, fixed before the first run:** the hint fires when |shift| >= 1.0 log-odds (one unit, chosen a priori).
It is built only if (a) on the sets where it fires the shift lowers the calibration cost on a majority of them, and
(b) on the sets where it does not fire the pooled threshold's cost is within 0.03 on a majority of them.

    python training/experiments/cliff_sets.py && python training/experiments/shift_hint.py   # ~5 min
"""

from __future__ import annotations

import copy

import numpy as np
from more_dialogue import labelled_tables
from unlabelled_quantile import cases, fitted, weighted_quantile  # sibling scripts, on sys.path when this one runs

from faithwatch.detectors.calibration import best_balanced_accuracy, weighted_balanced_accuracy
from faithwatch.eval.training import raw_scores

HINT = 1.0


def main() -> None:
    rows = []
    for train, tests in cases(labelled_tables()):
        det, oof, w, _ = fitted(train)
        reference = weighted_quantile(oof, w, 0.5)
        for name, test in tests.items():
            y = test.label.to_numpy().astype(int) == 1
            z = raw_scores(det, test)
            p = det.probability(z)
            best = best_balanced_accuracy(p, y)
            pooled = best - weighted_balanced_accuracy(p, y, det.threshold)
            shift = float(np.median(z)) - reference
            d = copy.deepcopy(det)
            d.shift(shift)
            shifted = best - weighted_balanced_accuracy(d.probability(z), y, d.threshold)
            rows.append((name.split("/")[-1], shift, float(np.mean(p < det.threshold)), pooled, shifted, y.mean()))
            print(f"{rows[-1][0]:<22} shift {shift:+.2f} flagged {rows[-1][2]:.2f} cost pooled {pooled:.3f} "
                  f"shifted {shifted:.3f} unfaithful {y.mean():.2f} hint {abs(shift) >= HINT}", flush=True)
    fires = [r for r in rows if abs(r[1]) >= HINT]
    quiet = [r for r in rows if abs(r[1]) < HINT]
    a = sum(r[4] < r[3] for r in fires)
    b = sum(r[3] <= 0.03 for r in quiet)
    print(f"fires on {len(fires)}: the shift lowers the cost on {a}; quiet on {len(quiet)}: pooled within 0.03 on {b}")
    print("rule met" if a * 2 > len(fires) and b * 2 > len(quiet) else "rule not met")


if __name__ == "__main__":
    main()
