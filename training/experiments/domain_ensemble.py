"""Issue 12: does an ensemble of per-data-set models transfer better than one model trained on the pooled sets?

The transfer matrix of ``faithwatch eval --transfer`` shows single-set models scoring some held-out sets better
than the pooled leave-one-out model (QAGS-CNNDM: 0.82-0.85 against 0.815). This measures, on the same LOO folds
and text-only cache, the shipped recipe trained once per remaining data set (each with the augmentation set, as
the shipped detector is) and the mean of their log-odds, against the pooled model (the shipped way). Prints LOO
AUROC per held-out set and the worst gain over ``align_score``.

    python training/experiments/domain_ensemble.py     # a minute or two once the text cache exists
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from aggregator_variants import AUGMENT, SETS  # a sibling script, on sys.path when this one runs
from sklearn.metrics import roc_auc_score

from faithwatch.detectors.linear import fit_logistic
from faithwatch.detectors.preprocess import FeatureScaler
from faithwatch.eval.pipeline import extraction_monitor, load_labelled
from faithwatch.eval.training import (
    DIRECTIONS,
    Recipe,
    fit_syncheck,
    raw_scores,
    sample_weights,
    syncheck_features,
    train_only,
)
from faithwatch.eval.transfer import held_out_names

RECIPE = Recipe(families=("alignment", "lexical", "edits", "tagger"), C=0.1)  # the shipped one


def auroc(test: pd.DataFrame, faithful: np.ndarray) -> float:
    return float(roc_auc_score(test.label.to_numpy(), -faithful))


def z(values: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Standardised on the model's own training scores, so that no member dominates the mean by its scale."""
    return (values - reference.mean()) / (reference.std() + 1e-12)


def averaged(members: list[pd.DataFrame], pooled: pd.DataFrame):
    """One logistic regression per member table on the pooled table's feature scaling, their coefficients averaged:
    exactly the mean of the members' log-odds, and itself one linear model. Returns a scoring function."""
    names = syncheck_features([], RECIPE.families)
    signs = [DIRECTIONS.get(n, 0) for n in names]
    w_pool = sample_weights(pooled, RECIPE.weighting)
    scaler = FeatureScaler.fit(pooled[names].to_numpy(dtype=np.float64), RECIPE.transform, w_pool)
    fits = []
    for table in members:
        X = scaler(table[names].to_numpy(dtype=np.float64))
        fit = fit_logistic(X, (table.label.to_numpy() == 0).astype(np.float64), C=RECIPE.C,
                           sample_weight=sample_weights(table, RECIPE.weighting), signs=signs)
        fits.append((fit.coef, fit.intercept))
    coef = np.mean([c for c, _ in fits], axis=0)
    intercept = float(np.mean([b for _, b in fits]))
    return lambda table: scaler(table[names].to_numpy(dtype=np.float64)) @ coef + intercept


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
        shared = averaged([pd.concat([tables[n], aug], ignore_index=True) for n in others],
                          pd.concat([tables[n] for n in others] + [aug], ignore_index=True))
        rows.append({"held out": held, "align_score": auroc(test, test.align_score.to_numpy()),
                     "averaged, shared scaling": auroc(test, shared(test)),
                     "pooled (shipped)": auroc(test, raw_scores(pooled, test)),
                     "ensemble, mean log-odds": auroc(test, np.mean(members, axis=0)),
                     "ensemble, mean z": auroc(test, np.mean(members_z, axis=0)),
                     **{f"only {n}": auroc(test, s) for n, s in zip(others, members, strict=True)}})
    table = pd.DataFrame(rows).set_index("held out")
    cols = ["align_score", "pooled (shipped)", "ensemble, mean log-odds", "ensemble, mean z",
            "averaged, shared scaling"]
    summary = table[cols].copy()
    print(summary.round(3).to_string())
    print("mean", summary.mean().round(3).to_dict())
    for c in cols[1:]:
        print(f"worst gain over align_score, {c}: {(summary[c] - summary.align_score).min():+.3f}")


if __name__ == "__main__":
    main()
