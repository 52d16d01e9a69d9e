"""Issue 12: does a worst-case (group DRO) fit of the shipped regression transfer better? (scratch)

The shipped detector averages one sign-constrained logistic regression per training data set (each with the
augmentation set): every set counts the same, however badly the averaged model fits it. Group distributionally
robust optimisation (Sagawa et al. 2020, "Distributionally Robust Neural Networks"; Hu et al. 2018) instead fits
one model to the worst of the training sets, so that what it learns must hold on each of them, which is what a
held-out set asks of it. Here the hard maximum is smoothed: with the member losses L_g (the class- and set-balanced
mean log loss of member g, the rows :func:`faithwatch.eval.training.members_of` gives), the fit minimises

    n * C * (log(sum_g exp(eta * L_g)) - log(G)) / eta + 0.5 * |coef|^2

(n the mean member size, so that C means what it means for a member regression; G the number of members, so that
eta -> 0 gives the mean of the member losses), on the shipped features, scaling, centring and
sign constraints; only the coefficients change. eta = 0 (the mean loss: one joint fit, members equal) and
eta = 100 (close to the hard maximum) are printed as descriptions, not candidates.

**The candidates and the rule, written before the first run** (the rule of ``fusion_features.py``): two candidates,

1. ``dro20``: the shipped features, eta = 20 (a member whose loss is 0.05 above another's weighs e = 2.7 times as
   much);
2. ``dro20+frag``: the same with ``frag_density`` (``fragment_features.py``, higher more faithful) as one more
   sign-constrained feature, the strong signal the averaged fit could not use.

Each is worth building only if, against the shipped recipe in the same run, (1) the worst LOO gain over
``align_score`` rises by at least 0.003, (2) the mean LOO AUROC falls by at most 0.0005, (3) no set falls by more
than 0.002. Screened on the 150-response sample first; one that fails there is not measured further.

    python training/experiments/group_dro.py --per-set 150   # ~1 min with the sample's caches
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from aggregator_variants import shipped_recipe, with_extra_family
from fragment_features import with_fragments
from fusion_features import load_screen, print_rule
from scipy.optimize import minimize
from scipy.special import expit, logsumexp

from faithwatch.detectors import aggregator
from faithwatch.detectors.linear import LogisticFit

ETA: dict[str, float | None] = {}  # "eta": the eta of the recipe being measured, None for the plain fit
_fit = aggregator.SynCheckDetector.fit.__func__


def fit_dro(Xs: np.ndarray, faithful: np.ndarray, members, C: float, signs, eta: float) -> LogisticFit:
    """Sign-constrained logistic regression minimising the smoothed worst member loss (see the module doc)."""
    d = Xs.shape[1]
    parts = [(Xs[np.asarray(r)], faithful[np.asarray(r)], np.asarray(w, float) / np.sum(w)) for r, w in members]
    n = np.mean([len(r) for r, _ in members])

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        coef, b = theta[:d], theta[d]
        losses, grads = [], []
        for X, t, w in parts:
            z = X @ coef + b
            losses.append(float(np.sum(w * (np.logaddexp(0.0, z) - t * z))))
            g = w * (expit(z) - t)
            grads.append(np.concatenate([X.T @ g, [g.sum()]]))
        losses = np.array(losses)
        if eta == 0:
            pi, smooth = np.full(len(parts), 1 / len(parts)), losses.mean()
        else:
            smooth = (logsumexp(eta * losses) - np.log(len(parts))) / eta
            pi = np.exp(eta * losses - logsumexp(eta * losses))
        grad = n * C * np.sum(pi[:, None] * np.array(grads), axis=0)
        grad[:d] += coef
        return n * C * smooth + 0.5 * float(coef @ coef), grad

    bounds = [(0.0, None) if s > 0 else (None, 0.0) if s < 0 else (None, None) for s in signs] + [(None, None)]
    res = minimize(objective, np.zeros(d + 1), jac=True, method="L-BFGS-B", bounds=bounds, options={"maxiter": 2000})
    return LogisticFit(coef=res.x[:d].copy(), intercept=float(res.x[d]), converged=bool(res.success))


def dro_fit(cls, X, y, feature_names, kind="lr", **kw):
    """``SynCheckDetector.fit``, then the coefficients replaced by :func:`fit_dro`'s when the run asks for it."""
    det = _fit(cls, X, y, feature_names, kind, **kw)
    eta = ETA.get("eta")
    if eta is None or kw.get("members") is None:
        return det
    names = list(det.meta.feature_names)
    Xs = det.scaler(aggregator.as_matrix(X, names))
    faithful = (~aggregator.as_labels(y, Xs.shape[0])).astype(np.float64)
    signs = aggregator._signs(names, kw.get("monotone") or {})
    fit = fit_dro(Xs, faithful, kw["members"], kw.get("C", 1.0), signs, eta)
    det.weights["lr.coef"], det.weights["lr.intercept"] = fit.coef, np.array([fit.intercept])
    return det


def main() -> None:
    data = load_screen(__doc__)
    tables = {n: with_fragments(d.sentences, {e.id: e.context for e in d.examples}) for n, d in data.items()}
    aggregator.SynCheckDetector.fit = classmethod(dro_fit)
    eta_of: dict[int, float] = {}  # id of a recipe copy -> its eta
    base = shipped_recipe()
    frag = with_extra_family(base, "fragd", "frag_density", 1)
    for label, eta in (("candidates", 20.0), ("description: eta 0", 0.0), ("description: eta 100", 100.0)):
        print(f"--- {label}")
        runs = {"shipped": base, **({"+frag (averaged)": frag} if eta == 20.0 else {})}
        for name, recipe in ((f"dro{eta:g}", base), (f"dro{eta:g}+frag", frag)):
            runs[name] = replace(recipe)
            eta_of[id(runs[name])] = eta
        print_rule(tables, runs, before=lambda r: ETA.update(eta=eta_of.get(id(r))))


if __name__ == "__main__":
    main()
