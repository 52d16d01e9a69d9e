"""Issue 12: how many labelled responses of a new domain does `faithwatch calibrate` need?

For each of the seven labelled sets in turn (leave one data set out): the shipped recipe is trained on the other
six plus the augmentation set, with its threshold from out-of-fold predictions, as `faithwatch train` does. On the
held-out set it is then re-calibrated (:func:`faithwatch.eval.recalibration.recalibrate`) on ``k`` randomly drawn
labelled responses, and its balanced accuracy is measured on the *other* responses of that set; 30 draws per ``k``.
Reads the text-only feature cache (``faithwatch eval --text-only`` builds it; about 1 h the first time).

    python training/experiments/recalibration_curve.py        # ~5 min with the cache
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd

from faithwatch.detectors.calibration import best_balanced_accuracy, weighted_balanced_accuracy
from faithwatch.eval.pipeline import extraction_monitor, load_labelled
from faithwatch.eval.recalibration import recalibrate
from faithwatch.eval.training import Recipe, fit_syncheck, syncheck_scores
from faithwatch.eval.transfer import held_out_names

SETS = ("faithbench", "qags-cnndm", "begin-dev", "training/data/ragtruth-qa.jsonl",
        "training/data/ragtruth-summary.jsonl", "training/data/q2-wow.jsonl", "training/data/ragtruth-data2txt.jsonl")
AUGMENT = ("training/data/synthetic-edits.jsonl",)
SIZES = (10, 25, 50, 100)
DRAWS = 30


def cached_tables() -> dict[str, pd.DataFrame]:
    """The labelled sentence tables of :data:`SETS` and :data:`AUGMENT`, from the text-only cache."""
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    data = load_labelled(list(SETS), monitor, text_only=True, augment=list(AUGMENT))
    return {n: d.sentences.reset_index(drop=True) for n, d in data.items()}


#: the shipped recipe, read from training/recipe.json (run from the repository root)
RECIPE = Recipe.from_dict(json.loads(Path("training/recipe.json").read_text(encoding="utf-8"))["recipe"])


def main() -> None:
    tables, recipe = cached_tables(), RECIPE
    rng = np.random.default_rng(0)
    print(f"{'held out':<18} {'BA at thr.':>10} {'BA best':>8}", " ".join(f"{'k=' + str(k):>12}" for k in SIZES))
    for held in held_out_names(tables):
        train = pd.concat([t for n, t in tables.items() if n != held], ignore_index=True)
        det = fit_syncheck(train, recipe, model_id="text-only", seed=0)
        test = tables[held]
        y = test.label.to_numpy() == 1
        p = syncheck_scores(det, test)
        cells = []
        ids = test.example_id.unique()
        for k in SIZES:
            bas = []
            while len(bas) < DRAWS:
                inside = test.example_id.isin(set(rng.choice(ids, k, replace=False))).to_numpy()
                if min(y[inside].sum(), (~y[inside]).sum()) < 5:
                    continue  # too few of a class to calibrate on (recalibrate refuses it)
                fitted = copy.deepcopy(det)
                recalibrate(fitted, test[inside], source=held)
                rest = syncheck_scores(fitted, test[~inside])
                bas.append(weighted_balanced_accuracy(rest, y[~inside], fitted.threshold))
            cells.append(f"{np.mean(bas):.3f}±{np.std(bas):.3f}")
        best = best_balanced_accuracy(p, y)
        print(f"{held:<18} {weighted_balanced_accuracy(p, y, det.threshold):10.3f} {best:8.3f}",
              " ".join(f"{c:>12}" for c in cells), flush=True)


if __name__ == "__main__":
    main()
