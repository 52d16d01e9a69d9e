"""L2-regularised logistic regression whose weights may be sign-constrained (monotone in chosen features).

scikit-learn's ``LogisticRegression`` has no bounds on coefficients, so this minimises the same objective,
``C · Σ w_i · logloss_i + ½‖coef‖²`` (scikit-learn's, so ``C`` means the same), with SciPy's L-BFGS-B and a
bound per coefficient: +1 keeps it ≥ 0, -1 keeps it ≤ 0, 0 leaves it free. A constraint encodes what is known
of a feature's meaning (a higher ``align_score`` must never lower the faithfulness score), which holds on any
data set, where a free weight fitted on a few data sets may flip.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

from faithwatch.errors import InputError


@dataclass
class LogisticFit:
    """Weights of a fitted model: ``z = X @ coef + intercept`` is the log-odds of the positive class."""

    coef: np.ndarray
    intercept: float
    converged: bool


def fit_logistic(X: np.ndarray, target: np.ndarray, *, C: float = 1.0, sample_weight: np.ndarray | None = None,
                 signs: Sequence[int] | None = None, max_iter: int = 2000) -> LogisticFit:
    """Fit P(target = 1) = sigmoid(X @ coef + intercept); ``signs[j]`` constrains coef[j] (see module doc)."""
    X = np.asarray(X, dtype=np.float64)
    t = np.asarray(target, dtype=np.float64)
    n, d = X.shape
    if C <= 0:
        raise InputError(f"C must be positive, got {C}")
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    signs = [0] * d if signs is None else [int(s) for s in signs]
    if len(signs) != d or any(s not in (-1, 0, 1) for s in signs):
        raise InputError(f"signs must hold one of -1, 0, +1 per feature ({d}), got {signs}")

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        coef, b = theta[:d], theta[d]
        z = X @ coef + b
        loss = C * float(np.sum(w * (np.logaddexp(0.0, z) - t * z))) + 0.5 * float(coef @ coef)
        g = C * w * (expit(z) - t)
        return loss, np.concatenate([X.T @ g + coef, [g.sum()]])

    bounds = [(0.0, None) if s > 0 else (None, 0.0) if s < 0 else (None, None) for s in signs] + [(None, None)]
    res = minimize(objective, np.zeros(d + 1), jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxiter": max_iter})
    if not np.all(np.isfinite(res.x)):
        raise InputError("logistic regression diverged (non-finite weights)")
    return LogisticFit(coef=res.x[:d].copy(), intercept=float(res.x[d]), converged=bool(res.success))
