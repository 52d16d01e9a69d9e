"""The candidate recipes of `recipe_targets.py` on the two CLIFF sets, which no recipe trains on (scratch).

Each recipe is trained on the six labelled sets and the augmentation set (as `training/default_detector.sh` trains
the shipped one, with its out-of-fold threshold) and scored on CLIFF's XSum and CNN/DM summaries
(`cliff_sets.py` writes them). Printed per set: AUROC, gain over `align_score`, balanced accuracy at the recipe's
threshold and at the set's best one, and after `calibrate --unlabelled` on the set (labels unused).

    python training/experiments/cliff_sets.py && python training/experiments/cliff_recipes.py ["NAME" ...]
"""

from __future__ import annotations

import copy
import sys

import pandas as pd
from faith_tune_loo import tables_and_data  # sibling scripts, on sys.path when this one runs
from recipe_targets import RECIPES
from sklearn.metrics import roc_auc_score

from faithwatch.detectors.calibration import best_balanced_accuracy, weighted_balanced_accuracy
from faithwatch.eval.pipeline import extraction_monitor, load_labelled
from faithwatch.eval.recalibration import adapt_unlabelled
from faithwatch.eval.training import fit_syncheck, syncheck_scores

CLIFF = ["build/extra-data/cliff-xsum.jsonl", "build/extra-data/cliff-cnndm.jsonl"]


def main(wanted: list[str]) -> None:
    tables, _, _ = tables_and_data()
    train = pd.concat(tables.values(), ignore_index=True)
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    cliff = {n.split("/")[-1].removesuffix(".jsonl"): d.sentences[d.sentences.label.notna()].reset_index(drop=True)
             for n, d in load_labelled(CLIFF, monitor, text_only=True).items()}
    for name, t in cliff.items():
        print(f"{name}: align_score {roc_auc_score(t.label, -t.align_score):.3f}")
    for name, recipe in RECIPES.items():
        if wanted and name not in wanted:
            continue
        det = fit_syncheck(train, recipe, model_id="text-only")
        parts = []
        for set_name, t in cliff.items():
            y = t.label.to_numpy().astype(int) == 1
            p = syncheck_scores(det, t)
            ba = weighted_balanced_accuracy(p, y, det.threshold)
            best = best_balanced_accuracy(p, y)
            shifted = copy.deepcopy(det)
            adapt_unlabelled(shifted, t, source=set_name)
            ba_s = weighted_balanced_accuracy(syncheck_scores(shifted, t), y, shifted.threshold)
            auc = roc_auc_score(y, -p)
            parts.append(f"{set_name} {auc:.3f} ({auc - roc_auc_score(y, -t.align_score):+.3f}) BA {ba:.3f}/"
                         f"{best:.3f} shifted {ba_s:.3f}")
        print(f"{name}\n  " + "\n  ".join(parts), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
