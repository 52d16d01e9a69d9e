"""Feature scaling for the aggregators, stored as plain arrays (no pickles).

* ``standard`` - (x - mean) / std;
* ``robust`` - (x - median) / (IQR / 1.349), then bounded to ±``ROBUST_BOUND``: raw LM statistics shift between
  domains and have long tails, so a few extreme sentences must not dominate a linear model;
* ``quantile`` - each feature mapped through its training quantiles to a standard normal (rank-normalised),
  bounded by construction: values outside the training range map to the extreme quantiles;
* ``clip`` - the scaling of detectors trained before faithwatch 0.2 (clip to the 5th-95th training percentiles,
  then standardise), kept so that older artifacts load.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from faithwatch.errors import InputError

TRANSFORMS = ("standard", "robust", "quantile", "clip")
ROBUST_BOUND = 5.0
N_QUANTILES = 101
#: quantile-transformed values are kept inside these probabilities (±2.58 standard deviations)
QUANTILE_EPS = 0.005
CLIP_PERCENTILES = (5.0, 95.0)


@dataclass
class FeatureScaler:
    """A fitted per-feature transform; :meth:`arrays` / :meth:`from_arrays` store and rebuild it."""

    kind: str
    center: np.ndarray | None = None  # [d] (standard, robust, clip)
    scale: np.ndarray | None = None  # [d]
    low: np.ndarray | None = None  # [d] (clip)
    high: np.ndarray | None = None
    quantiles: np.ndarray | None = None  # [N_QUANTILES, d] (quantile)

    @classmethod
    def fit(cls, X: np.ndarray, kind: str, sample_weight: np.ndarray | None = None) -> FeatureScaler:
        """Fit on ``X`` [n, d] (weights are used by ``standard`` only, where they are cheap and exact)."""
        if kind not in TRANSFORMS:
            raise InputError(f"unknown feature transform '{kind}'; choose one of {', '.join(TRANSFORMS)}")
        X = np.asarray(X, dtype=np.float64)
        if kind == "quantile":
            return cls(kind, quantiles=np.percentile(X, np.linspace(0, 100, N_QUANTILES), axis=0))
        if kind == "robust":
            q1, med, q3 = np.percentile(X, [25, 50, 75], axis=0)
            scale = (q3 - q1) / 1.349
            fallback = X.std(axis=0)  # a feature with a degenerate IQR (e.g. mostly 0 counts) keeps its spread
            scale = np.where(scale < 1e-9, fallback, scale)
            return cls(kind, center=med, scale=np.where(scale < 1e-12, 1.0, scale))
        low = high = None
        if kind == "clip":
            low, high = np.percentile(X, CLIP_PERCENTILES, axis=0)
            X = np.clip(X, low, high)
        w = None if kind == "clip" else sample_weight
        center = np.average(X, axis=0, weights=w)
        scale = np.sqrt(np.average((X - center) ** 2, axis=0, weights=w))
        return cls(kind, center=center, scale=np.where(scale < 1e-12, 1.0, scale), low=low, high=high)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """The transformed ``X`` [n, d]."""
        X = np.asarray(X, dtype=np.float64)
        if self.kind == "quantile":
            grid = np.linspace(0.0, 1.0, N_QUANTILES)
            u = np.column_stack([np.interp(X[:, j], self.quantiles[:, j], grid) for j in range(X.shape[1])])
            return ndtri(np.clip(u, QUANTILE_EPS, 1.0 - QUANTILE_EPS))
        if self.kind == "clip":
            X = np.clip(X, self.low, self.high)
        Z = (X - self.center) / self.scale
        return np.clip(Z, -ROBUST_BOUND, ROBUST_BOUND) if self.kind == "robust" else Z

    @property
    def width(self) -> int:
        """Number of features the scaler was fitted on."""
        ref = self.quantiles[0] if self.kind == "quantile" else self.center
        return int(ref.shape[0])

    def arrays(self) -> dict[str, np.ndarray]:
        """The arrays to store (names prefixed ``scaler.``)."""
        names = {"standard": ("center", "scale"), "robust": ("center", "scale"), "quantile": ("quantiles",),
                 "clip": ("center", "scale", "low", "high")}[self.kind]
        return {f"scaler.{n}": getattr(self, n) for n in names}

    @classmethod
    def from_arrays(cls, kind: str, arrays: dict[str, np.ndarray]) -> FeatureScaler:
        """Rebuild from :meth:`arrays` output (``scaler.mean`` is read as the centre of older artifacts)."""
        if kind not in TRANSFORMS:
            raise InputError(f"unknown feature transform '{kind}' in a detector artifact")
        get = arrays.get
        center = get("scaler.center", get("scaler.mean"))
        low = get("scaler.low", get("clip.low"))
        high = get("scaler.high", get("clip.high"))
        return cls(kind, center=center, scale=get("scaler.scale"), low=low, high=high,
                   quantiles=get("scaler.quantiles"))
