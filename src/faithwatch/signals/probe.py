"""A supervised hidden-state probe (SAPLMA-style): logistic regression on a sentence's mean hidden state.

The probe reads the monitored model's hidden states averaged over the sentence's tokens at a few layers
(concatenated), standardised, and emits ``probe_logit``: the log-odds that the sentence is faithful. It is
trained by ``faithwatch train`` on labelled sentences (layers and regularisation chosen by leave-one-data-set-out
AUROC), stored with the detector as safetensors, and refused for another model. Without a probe the feature is
absent (``None``), never 0.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file

from faithwatch._version import __version__
from faithwatch.checksums import safetensors_metadata, save_safetensors, shareable
from faithwatch.errors import InputError
from faithwatch.models.records import Needs
from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal

#: candidate probe layers as fractions of depth (every tenth of the network)
PROBE_FRACTIONS = tuple(i / 10 for i in range(1, 11))
PROBE_FORMAT = "faithwatch-hidden-probe-1"


def probe_candidate_layers(num_layers: int, fractions: Iterable[float] = PROBE_FRACTIONS) -> tuple[int, ...]:
    """1-based layers whose sentence-mean states are recorded for probe training."""
    return tuple(sorted({min(num_layers, max(1, round(f * num_layers))) for f in fractions}))


def probe_inputs(layers: Sequence[int]) -> list[str]:
    """The cached columns a probe on ``layers`` reads (sentence-mean hidden states)."""
    return [f"hidden_mean_layer_{layer}" for layer in layers]


@dataclass
class HiddenProbe:
    """Logistic regression on standardised, concatenated sentence-mean hidden states at ``layers``."""

    model_id: str
    layers: tuple[int, ...]
    mean: np.ndarray  # [D]
    scale: np.ndarray  # [D]
    coef: np.ndarray  # [D], weights of "faithful"
    intercept: float
    C: float = 1.0

    @property
    def dim(self) -> int:
        """Width of the hidden-state vector the probe reads."""
        return int(self.coef.shape[0])

    @classmethod
    def fit(cls, X: np.ndarray, unfaithful: np.ndarray, *, model_id: str, layers: Sequence[int], C: float = 1.0,
            sample_weight: np.ndarray | None = None, seed: int = 0) -> HiddenProbe:
        """Fit on ``X`` [n, D] (see :func:`stack_inputs`) and labels (1 = unfaithful)."""
        from sklearn.linear_model import LogisticRegression

        X = np.asarray(X, dtype=np.float64)
        y = np.asarray(unfaithful).astype(int)
        if X.ndim != 2 or len(X) != len(y):
            raise InputError(f"probe inputs must be [n, D] with one label per row, got {X.shape} and {y.shape}")
        if len(np.unique(y)) < 2:
            raise InputError("a probe needs both faithful and unfaithful training sentences")
        mean = X.mean(axis=0)
        scale = X.std(axis=0)
        scale[scale < 1e-8] = 1.0
        lr = LogisticRegression(C=C, max_iter=2000, class_weight="balanced", random_state=seed)
        lr.fit((X - mean) / scale, 1 - y, sample_weight=sample_weight)  # class 1 = faithful
        return cls(model_id=model_id, layers=tuple(int(la) for la in layers), mean=mean, scale=scale,
                   coef=lr.coef_.reshape(-1).astype(np.float64), intercept=float(lr.intercept_[0]), C=float(C))

    def logit(self, X: np.ndarray) -> np.ndarray:
        """Log-odds of "faithful" for each row of ``X`` [n, D]."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.dim:
            raise InputError(f"the probe reads {self.dim} values per sentence, got an array of shape {X.shape}")
        return ((X - self.mean) / self.scale) @ self.coef + self.intercept

    def save(self, path: str | Path) -> None:
        """Write the probe as safetensors with its format, model id, layers and settings."""
        meta = {"format": PROBE_FORMAT, "model_id": self.model_id, "layers": json.dumps(list(self.layers)),
                "pooling": "mean", "C": repr(self.C), "intercept": repr(self.intercept),
                "faithwatch_version": __version__}
        arrays = {"mean": self.mean, "scale": self.scale, "coef": self.coef}
        save_safetensors({k: np.ascontiguousarray(v, dtype=np.float64) for k, v in arrays.items()}, path, meta)
        shareable(path)

    @classmethod
    def load(cls, path: str | Path, expect_model_id: str | None = None) -> HiddenProbe:
        """Read a probe written by :meth:`save`, refusing another format or model."""
        meta = safetensors_metadata(path, "hidden-state probe")
        if meta.get("format") != PROBE_FORMAT:
            raise InputError(f"{path} is not a faithwatch hidden-state probe (format {meta.get('format')!r})")
        if expect_model_id is not None and meta["model_id"] != expect_model_id:
            raise InputError(f"the hidden-state probe {path} was trained on model '{meta['model_id']}', but the "
                             f"monitor runs '{expect_model_id}': hidden states of different models are not comparable")
        arrays = load_file(str(path))
        probe = cls(model_id=meta["model_id"], layers=tuple(json.loads(meta["layers"])), mean=arrays["mean"],
                    scale=arrays["scale"], coef=arrays["coef"], intercept=float(meta["intercept"]),
                    C=float(meta["C"]))
        if not (probe.mean.shape == probe.scale.shape == probe.coef.shape):
            raise InputError(f"hidden-state probe {path} has inconsistent array shapes")
        return probe


def stack_inputs(rows: Iterable[Sequence[np.ndarray]]) -> np.ndarray:
    """[n, D] from per-row lists of per-layer vectors (concatenated in layer order)."""
    return np.stack([np.concatenate([np.asarray(v, dtype=np.float64).ravel() for v in row]) for row in rows])


class ProbeSignal(Signal):
    """Emits ``probe_logit`` (log-odds of faithful) from a :class:`HiddenProbe`; ``None`` without one."""

    name = "probe"

    def __init__(self, probe: HiddenProbe | None) -> None:
        self.probe = probe

    @property
    def needs(self) -> Needs:
        """The hidden states of the probe's layers."""
        return Needs(hidden_layers=self.probe.layers if self.probe is not None else ())

    @property
    def feature_names(self) -> list[str]:
        """``probe_logit``."""
        return ["probe_logit"]

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        """The probe's logit of the sentence's mean hidden states (None without a probe)."""
        if self.probe is None:
            return {"probe_logit": None}
        mean, recorded = trace.mean_hidden, trace.records.hidden_layers
        x = np.concatenate([mean[recorded.index(layer)] for layer in self.probe.layers])[None]
        return {"probe_logit": float(self.probe.logit(x)[0])}
