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

import numpy as np
from unlabelled_quantile import summarise  # a sibling script, on sys.path

from faithwatch.detectors.calibration import weighted_median

LAMBDAS = (1.0, 0.75, 0.5, 0.25, 0.0)


def shrunk_shift(z: np.ndarray, oof: np.ndarray, w: np.ndarray, lam: float) -> float:
    """lambda times the gap between the domain's median and the training sentences' out-of-fold median."""
    return lam * (float(np.median(z)) - weighted_median(oof, w))


def main() -> None:
    summarise(LAMBDAS, shrunk_shift, "lambda")


if __name__ == "__main__":
    main()
