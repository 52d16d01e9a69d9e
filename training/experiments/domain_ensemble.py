"""Issue 12: does an ensemble of per-data-set models transfer better than one model trained on the pooled sets?

The transfer matrix of ``faithwatch eval --transfer`` shows single-set models scoring some held-out sets better
than the pooled leave-one-out model (QAGS-CNNDM: 0.82-0.85 against 0.815). This measures, on the same LOO folds
and text-only cache, the shipped recipe trained once per remaining data set (each with the augmentation set, as
the shipped detector is) and the mean of their log-odds, against the pooled model, and the library's
``Recipe.pooling`` variants (averaged, blended: one linear model on the pooled scaling). Prints LOO AUROC per
held-out set and the worst gain over ``align_score``.

    python training/experiments/domain_ensemble.py     # a minute or two once the text cache exists
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
from aggregator_variants import AUGMENT, SETS  # a sibling script, on sys.path when this one runs
from sklearn.metrics import roc_auc_score

from faithwatch.eval.pipeline import extraction_monitor, load_labelled
from faithwatch.eval.training import Recipe, fit_syncheck, raw_scores, train_only
from faithwatch.eval.transfer import held_out_names

RECIPE = Recipe(families=("alignment", "lexical", "edits", "tagger"), C=0.1)  # the shipped families, pooled


def auroc(test: pd.DataFrame, faithful: np.ndarray) -> float:
    return float(roc_auc_score(test.label.to_numpy(), -faithful))


def z(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Standardised on the model's own training scores, so that no member dominates the mean by its scale."""
    return (values - reference.mean()) / (reference.std() + 1e-12)


def main() -> None:
    monitor = extraction_monitor(None, "nli-minilm+lexical+embedding")
    data = load_labelled(list(SETS), monitor, text_only=True, augment=list(AUGMENT))
    tables = {n: d.sentences.reset_index(drop=True) for n, d in data.items()}
    aug = pd.concat([t for t in tables.values() if train_only(t).all()], ignore_index=True)
    rows = []
    for held in held_out_names(tables):
        test = tables[held]
        others = [n for n in held_out_names(tables) if n != held]
        pooled = fit_syncheck(pd.concat([tables[n] for n in others] + [aug], ignore_index=True), RECIPE,
                              model_id="text-only", calibrate=False)
        members, members_z = [], []
        for name in others:
            train = pd.concat([tables[name], aug], ignore_index=True)
            det = fit_syncheck(train, RECIPE, model_id="text-only", calibrate=False)
            scores = raw_scores(det, test)
            members.append(scores)
            members_z.append(z(scores, raw_scores(det, train)))
        train = pd.concat([tables[n] for n in others] + [aug], ignore_index=True)
        shared = {p: fit_syncheck(train, replace(RECIPE, pooling=p), model_id="text-only", calibrate=False)
                  for p in ("averaged", "blended")}  # one linear model each (Recipe.pooling)
        rows.append({"held out": held, "align_score": auroc(test, test.align_score.to_numpy()),
                     **{f"{p}, shared scaling": auroc(test, raw_scores(d, test)) for p, d in shared.items()},
                     "pooled": auroc(test, raw_scores(pooled, test)),
                     "ensemble, mean log-odds": auroc(test, np.mean(members, axis=0)),
                     "ensemble, mean z": auroc(test, np.mean(members_z, axis=0)),
                     **{f"only {n}": auroc(test, s) for n, s in zip(others, members, strict=True)}})
    table = pd.DataFrame(rows).set_index("held out")
    cols = ["align_score", "pooled", "ensemble, mean log-odds", "ensemble, mean z",
            "averaged, shared scaling", "blended, shared scaling"]
    summary = table[cols].copy()
    print(summary.round(3).to_string())
    print("mean", summary.mean().round(3).to_dict())
    for c in cols[1:]:
        print(f"worst gain over align_score, {c}: {(summary[c] - summary.align_score).min():+.3f}")


if __name__ == "__main__":
    main()
