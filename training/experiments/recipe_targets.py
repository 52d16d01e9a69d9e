"""Issue 12: the text-only candidate recipes against every detector target at once (docs/transfer.md).

For each recipe: LOO AUROC per held-out set and the worst gain over ``align_score`` (as ``faithwatch select``),
the balanced accuracy at each fold's own out-of-fold threshold and how many folds keep the calibration cost within
0.03 at that threshold and after ``calibrate --unlabelled`` (as ``faithwatch eval --transfer``), and the share of
the blatant-error suite's errors flagged and of its supported sentences passed by the recipe trained on all sets
(the suite is scored, never trained on). Reads the text-only caches that ``faithwatch select --text-only`` builds.

    python training/experiments/recipe_targets.py     # ~7 min on 2 CPU cores once the caches exist
    python training/experiments/recipe_targets.py "NAME" ...   # only the named recipes
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
from aggregator_variants import AUGMENT, SETS  # a sibling script, on sys.path when this one runs

from faithwatch.eval.pairs import load_pairs
from faithwatch.eval.pipeline import extraction_monitor, load_labelled
from faithwatch.eval.training import Recipe, fit_syncheck, syncheck_scores
from faithwatch.eval.transfer import leave_one_out
from faithwatch.signals import SignalContext, build_signals, text_signals

SUITE = "tests/data/blatant.jsonl"
RECIPES = {
    "lr alignment+lexical+edits+tagger C=0.1": Recipe(families=("alignment", "lexical", "edits", "tagger"), C=0.1),
    "lr alignment+edits+tagger": Recipe(families=("alignment", "edits", "tagger")),
    "lr alignment+lexical+edits": Recipe(families=("alignment", "lexical", "edits")),
    "lr alignment+tagger": Recipe(families=("alignment", "tagger")),
    "lr alignment+lexical+tagger": Recipe(families=("alignment", "lexical", "tagger")),
    # outside select's grid, measured afterwards (docs/transfer.md)
    "xgb alignment+lexical+edits+tagger": Recipe(kind="xgb", families=("alignment", "lexical", "edits", "tagger")),
    "lr alignment+lexical+edits+tagger C=0.01": Recipe(families=("alignment", "lexical", "edits", "tagger"), C=0.01),
    # one regression per data set, coefficients averaged (training/experiments/domain_ensemble.py)
    "lr alignment+lexical+edits+tagger C=0.1 averaged": Recipe(families=("alignment", "lexical", "edits", "tagger"),
                                                               C=0.1, pooling="averaged"),
    "lr alignment+lexical+edits+tagger C=0.1 blended": Recipe(families=("alignment", "lexical", "edits", "tagger"),
                                                              C=0.1, pooling="blended"),
    # every training set's features centred on a common median before the fit (Recipe.centering)
    **{f"lr alignment+lexical+edits+tagger C=0.1 {p} centred": Recipe(
        families=("alignment", "lexical", "edits", "tagger"), C=0.1, pooling=p, centering="dataset")
       for p in ("pooled", "averaged", "blended")},
}


def suite_table(scorer) -> pd.DataFrame:
    """The blatant suite's sentences with every text feature (as the monitor computes them)."""
    pairs = load_pairs(SUITE)
    signals = build_signals(text_signals(), SignalContext())
    rows = []
    for p in pairs:
        row = {"align_score": float(scorer.score_many([p.sentence], p.context)[0]), "kind": p.kind,
               "error": p.label == "error"}
        for s in signals:
            row.update(s.from_text([p.sentence], p.context)[0])
        rows.append(row)
    return pd.DataFrame(rows)


def main() -> None:
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    data = load_labelled(list(SETS), monitor, text_only=True, augment=list(AUGMENT))
    tables = {n: d.sentences for n, d in data.items()}
    suite = suite_table(monitor.alignment)
    wanted = sys.argv[1:]  # recipe names to run (default: all)
    for name, recipe in RECIPES.items():
        if wanted and name not in wanted:
            continue
        folds = leave_one_out(tables, recipe, "text-only", lens=False)
        gains = [f.detector - f.singles["align_score"] for f in folds]
        cost = [f.ba_best - f.ba_at_threshold for f in folds]
        shifted = [f.ba_best - f.ba_shifted for f in folds if f.ba_shifted is not None]
        det = fit_syncheck(pd.concat(tables.values(), ignore_index=True), recipe, model_id="text-only")
        flagged = syncheck_scores(det, suite) < det.threshold
        print(f"{name}\n  AUROC " + " ".join(f"{f.held} {f.detector:.3f}" for f in folds)
              + f"; mean {np.mean([f.detector for f in folds]):.3f}, worst gain {min(gains):+.3f}")
        print("  BA at threshold " + " ".join(f"{f.ba_at_threshold:.3f}" for f in folds)
              + f"; mean {np.mean([f.ba_at_threshold for f in folds]):.3f}; calibration <= 0.03 on "
              f"{sum(c <= 0.03 for c in cost)}/{len(cost)} folds, after the unlabelled shift "
              f"{sum(c <= 0.03 for c in shifted)}/{len(shifted)}")
        kinds = {k: round(float(flagged[suite.kind == k].mean()), 2) for k in suite.kind.unique()}
        print(f"  blatant: errors flagged {flagged[suite.error].mean():.3f}, supported passed "
              f"{1 - flagged[~suite.error].mean():.3f}; flagged by kind {kinds}", flush=True)


if __name__ == "__main__":
    main()
