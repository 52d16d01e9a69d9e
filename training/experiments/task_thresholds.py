"""Issue 12, calibration: one threshold per task kind (summary, dialogue, QA) instead of one for all.

The shipped threshold maximises balanced accuracy over the out-of-fold predictions of every training set
pooled. Here each held-out set takes the threshold chosen the same way on the out-of-fold predictions of the
training sets of its own kind only (summary: FaithBench, QAGS-CNNDM, RAGTruth summaries; dialogue: BEGIN, Q²;
QA: RAGTruth QA), falling back to the pooled threshold when no training set shares its kind. Scores, AUROC and
the probability map are unchanged; only the threshold moves. The never-seen sets (CLIFF XSum and CNN/DM as
summaries, CMU-DoG and Topical-Chat as dialogue; data-to-text has no sibling kind, so it is not scored) take
the kind thresholds of the detector trained on all six sets.

Rule, committed before the run: adopt per-kind thresholds only if (1) the LOO folds within 0.03 of their best
balanced accuracy rise from 4 of 6, (2) no LOO fold's calibration cost rises by more than 0.01, and (3) the
never-seen sets' mean calibration cost does not rise.

    python training/experiments/task_thresholds.py     # ~3 min with the text caches
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from aggregator_variants import AUGMENT, SETS  # a sibling script, on sys.path when this one runs

from faithwatch.data.loaders import dataset_name
from faithwatch.detectors.calibration import best_balanced_accuracy, choose_threshold, weighted_balanced_accuracy
from faithwatch.eval.pipeline import extraction_monitor, load_labelled
from faithwatch.eval.training import Recipe, fit_syncheck, out_of_fold_logits, raw_scores, sample_weights, train_only

RECIPE = Recipe(families=("alignment", "lexical", "edits", "tagger"), C=0.1, pooling="averaged",
                centering="dataset")
KIND = {dataset_name(k): v for k, v in {
    "faithbench": "summary", "qags-cnndm": "summary", "training/data/ragtruth-summary.jsonl": "summary",
        "begin-dev": "dialogue", "training/data/q2-wow.jsonl": "dialogue", "training/data/ragtruth-qa.jsonl": "qa",
        "build/extra-data/cliff-xsum.jsonl": "summary", "build/extra-data/cliff-cnndm.jsonl": "summary",
        "training/data/begin-dev-cmu.tsv": "dialogue", "training/data/begin-dev-tc.tsv": "dialogue"}.items()}
NEVER_SEEN = [p for p in ("build/extra-data/cliff-xsum.jsonl", "build/extra-data/cliff-cnndm.jsonl",
                          "training/data/begin-dev-cmu.tsv", "training/data/begin-dev-tc.tsv") if Path(p).exists()]


def kind_thresholds(train: pd.DataFrame, det) -> dict[str, float]:
    """The threshold chosen on the out-of-fold predictions of each kind's training sets."""
    real = ~train_only(train)
    oof = out_of_fold_logits(train, RECIPE, "text-only")[real]
    held = train[real].reset_index(drop=True)
    p = det.probability(oof)
    w = sample_weights(held, RECIPE.weighting)
    kinds = held.dataset.map(lambda d: KIND.get(dataset_name(str(d)))).to_numpy()
    out = {}
    for k in set(kinds) - {None}:
        m = kinds == k
        out[k] = choose_threshold(p[m], held.label.to_numpy()[m] == 1, w[m])
    return out


def costs(det, table: pd.DataFrame, threshold: float) -> tuple[float, float]:
    """Calibration cost at the pooled and at ``threshold``."""
    p = det.probability(raw_scores(det, table))
    y = table.label.to_numpy() == 1
    best = best_balanced_accuracy(p, y)
    return best - weighted_balanced_accuracy(p, y, det.threshold), best - weighted_balanced_accuracy(p, y, threshold)


def main() -> None:
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    data = load_labelled(list(SETS), monitor, text_only=True, augment=list(AUGMENT))
    tables = {n: d.sentences for n, d in data.items()}
    print("held out | kind | pooled thr | kind thr | cost pooled | cost kind")
    rows = []
    for held in SETS:
        train = pd.concat([t for n, t in tables.items() if n != dataset_name(held)], ignore_index=True)
        det = fit_syncheck(train, RECIPE, model_id="text-only")
        thr = kind_thresholds(train, det).get(KIND[dataset_name(held)], det.threshold)
        a, b = costs(det, tables[dataset_name(held)], thr)
        rows.append((a, b))
        print(f"{held} | {KIND[dataset_name(held)]} | {det.threshold:.3f} | {thr:.3f} | {a:.3f} | {b:.3f}")
    a, b = np.array(rows).T
    print(f"LOO within 0.03: pooled {int((a <= 0.03).sum())}/6, kind {int((b <= 0.03).sum())}/6; "
          f"largest rise {np.max(b - a):+.3f}")
    if NEVER_SEEN:
        train = pd.concat(tables.values(), ignore_index=True)
        det = fit_syncheck(train, RECIPE, model_id="text-only")
        thr = kind_thresholds(train, det)
        print("kind thresholds, all six sets:", {k: round(v, 3) for k, v in thr.items()}, "pooled", det.threshold)
        extra = load_labelled(NEVER_SEEN, monitor, text_only=True)
        ns = []
        for name, d in extra.items():
            a, b = costs(det, d.sentences, thr.get(KIND[dataset_name(name)], det.threshold))
            ns.append((a, b))
            print(f"never seen {name}: cost pooled {a:.3f}, kind {b:.3f}")
        a, b = np.array(ns).T
        print(f"never-seen mean cost: pooled {a.mean():.3f}, kind {b.mean():.3f}")


if __name__ == "__main__":
    main()
