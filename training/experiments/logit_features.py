"""Issue 12: do the shipped recipe's two model probabilities transfer better as log-odds? (scratch)

``align_score`` (the NLI model's entailment probability, mixed with lexical and embedding support) and
``tag_min_content`` (the LSS tagger's support probability of the weakest content word) are probabilities, and the
shipped recipe reads them as they are, robust-scaled. Near 1 a probability saturates: 0.99 and 0.9999 are 0.0099
apart as probabilities and 4.6 apart as log-odds, and a linear model over the raw value cannot tell them apart.
The issue asks for log-odds where features are probabilities ("Use log probabilities (and log-odds) instead of raw
probabilities"); the LM features took it, these two never did. Their log-odds, ``log(p / (1 - p))`` with ``p``
clipped to [1e-4, 1 - 1e-4], replace them in the shipped recipe, nothing else changed (a monotone transform: each
one alone ranks exactly as before, so ``align_score``'s reference AUROC is the same).

**The candidates and the rule, written before the first run** (the rule of ``fusion_features.py``): two candidates,
(1) both in log-odds, (2) ``align_score`` alone in log-odds. Each is worth building only if, against the shipped
recipe in the same run, (1) the worst LOO gain over ``align_score`` rises by at least 0.003, (2) the mean LOO AUROC
falls by at most 0.0005, (3) no set falls by more than 0.002. Screened on the 150-response sample first; one that
fails there is not measured further.

    PYTHONPATH=training/experiments python training/experiments/logit_features.py --per-set 150   # ~1 min
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from aggregator_variants import shipped_recipe
from fusion_features import load_screen, print_aurocs
from scipy.special import logit

from faithwatch.eval.transfer import held_out_aurocs

EPS = 1e-4


def in_log_odds(t: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """``t`` with ``columns`` replaced by their log-odds (clipped to [EPS, 1 - EPS] first)."""
    return t.assign(**{c: logit(np.clip(t[c].to_numpy(dtype=np.float64), EPS, 1 - EPS)) for c in columns})


def main() -> None:
    data = load_screen(__doc__)
    tables = {n: d.sentences.reset_index(drop=True) for n, d in data.items()}
    recipe = shipped_recipe()
    runs = {"shipped": tables,
            "both log-odds": {n: in_log_odds(t, ("align_score", "tag_min_content")) for n, t in tables.items()},
            "align_score log-odds": {n: in_log_odds(t, ("align_score",)) for n, t in tables.items()}}
    print_aurocs(tables, {k: held_out_aurocs(t, recipe, "text-only") for k, t in runs.items()})


if __name__ == "__main__":
    main()
