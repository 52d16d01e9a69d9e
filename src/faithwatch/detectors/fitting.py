"""The aggregator kinds' fitting (paper 000: SynCheckLR, SynCheckXGB, SynCheckMLP) on scaled features: each
returns what :class:`~faithwatch.detectors.aggregator.SynCheckDetector` stores and the parameters it records."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from faithwatch.detectors.linear import fit_logistic
from faithwatch.errors import InputError

#: XGBoost hyper-parameters (the paper does not state them; modest trees, many of them)
XGB_PARAMS: dict[str, Any] = {"n_estimators": 200, "max_depth": 3, "learning_rate": 0.1, "tree_method": "hist"}
#: MLP hyper-parameters from paper 000 A.2 (batch size is capped by the number of examples)
MLP_PARAMS: dict[str, Any] = {
    "hidden_layer_sizes": (100,),
    "activation": "relu",
    "solver": "adam",
    "learning_rate_init": 1e-3,
    "batch_size": 128,
    "max_iter": 300,
}


def fit_lr(Xs: np.ndarray, faithful: np.ndarray, w: np.ndarray, signs: Sequence[int], *, C: float,
           members: Sequence[tuple[Any, Any]] | None = None,
           member_share: float = 1.0) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """Logistic regression (sign-constrained by ``signs``): its weights and parameters. With ``members`` (row
    indices, sample weights), the averaged coefficients of one regression per member, or with ``member_share``
    below 1, that share of them plus the rest of the regression on all rows."""
    if members is None:
        fit = fit_logistic(Xs, faithful, C=C, sample_weight=w, signs=signs)
        return ({"lr.coef": fit.coef, "lr.intercept": np.array([fit.intercept])},
                {"C": C, "converged": fit.converged})
    if not members or not 0.0 < member_share <= 1.0:
        raise InputError("member regressions need at least one member and a share in (0, 1]")
    fits = [fit_logistic(Xs[np.asarray(rows)], faithful[np.asarray(rows)], C=C,
                         sample_weight=np.asarray(mw, dtype=np.float64), signs=signs) for rows, mw in members]
    coef = np.mean([f.coef for f in fits], axis=0)
    intercept = float(np.mean([f.intercept for f in fits]))
    if member_share < 1.0:
        whole = fit_logistic(Xs, faithful, C=C, sample_weight=w, signs=signs)
        fits.append(whole)
        coef = member_share * coef + (1.0 - member_share) * whole.coef
        intercept = member_share * intercept + (1.0 - member_share) * whole.intercept
    return ({"lr.coef": coef, "lr.intercept": np.array([intercept])},
            {"C": C, "converged": all(f.converged for f in fits), "members": len(members),
             "member_share": member_share})


def fit_mlp(Xs: np.ndarray, faithful: np.ndarray, w: np.ndarray, *,
            seed: int) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The MLP of paper 000 A.2 (:data:`MLP_PARAMS`, 300 fixed iterations): its layers' weights and parameters."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    mlp_params = {**MLP_PARAMS, "batch_size": min(MLP_PARAMS["batch_size"], Xs.shape[0])}
    mlp = MLPClassifier(**mlp_params, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # 300 fixed iterations, as in the paper
        mlp.fit(Xs, faithful, sample_weight=w)
    if mlp.out_activation_ != "logistic":
        raise InputError(f"unexpected MLP output activation '{mlp.out_activation_}'")
    weights = {}
    for i, (cw, cb) in enumerate(zip(mlp.coefs_, mlp.intercepts_, strict=True)):
        weights[f"mlp.coef_{i}"] = cw
        weights[f"mlp.intercept_{i}"] = cb
    return weights, {**mlp_params, "hidden_layer_sizes": list(mlp_params["hidden_layer_sizes"])}


def fit_xgb(Xs: np.ndarray, faithful: np.ndarray, w: np.ndarray, signs: Sequence[int], *,
            seed: int) -> tuple[Any, dict[str, Any]]:
    """Gradient-boosted trees (:data:`XGB_PARAMS`, monotone in ``signs``): the booster (one thread) and parameters."""
    from xgboost import XGBClassifier

    xgb_params = {**XGB_PARAMS, "monotone_constraints": "(" + ",".join(str(s) for s in signs) + ")"}
    model = XGBClassifier(**xgb_params, random_state=seed, n_jobs=1, eval_metric="logloss")
    model.fit(Xs, faithful, sample_weight=w)
    booster = model.get_booster()
    booster.set_param({"nthread": 1})
    return booster, xgb_params
