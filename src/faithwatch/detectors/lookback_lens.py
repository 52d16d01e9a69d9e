"""Lookback Lens (paper 003 §2): logistic regression on the per-layer, per-head lookback-ratio vector.

The input is a sentence's (or window's) averaged lookback ratios, a [num_layers, num_heads] array flattened
layer-major; the feature key is ``lookback_ratio`` (see faithwatch.signals.lookback). Following the paper's
appendix E the classifier is scikit-learn's LogisticRegression with default settings and ``max_iter=1000`` on
the raw ratios. Labels: y = 1 unfaithful, 0 faithful; scores are P(faithful).

Cross-model transfer (paper 003 §4): :class:`HeadMapping` fits an ordinary least-squares map from a TARGET
model's lookback vectors to a SOURCE model's vectors on the same texts; ``lens.with_mapping(mapping)`` then
lets a lens trained on the source model score the target model's vectors without retraining.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import safe_open
from scipy.special import expit

from faithwatch.detectors.artifact import (
    LENS_KIND,
    WEIGHTS_FILE,
    ArtifactError,
    ArtifactMeta,
    as_labels,
    as_matrix,
    check_loadable,
    check_probabilities,
    check_version,
    load_arrays,
    save_arrays,
    training_metrics,
)
from faithwatch.detectors.base import Detector
from faithwatch.detectors.calibration import choose_threshold
from faithwatch.errors import InputError
from faithwatch.signals.base import FeatureValue

FEATURE = "lookback_ratio"
MODES = ("span", "window")
MAPPING_FORMAT = "faithwatch-head-mapping"


def _head_names(num_layers: int, num_heads: int) -> list[str]:
    return [f"L{layer}H{head}" for layer in range(num_layers) for head in range(num_heads)]


def _check_dims(num_layers: int, num_heads: int, what: str) -> tuple[int, int]:
    if int(num_layers) < 1 or int(num_heads) < 1:
        raise InputError(f"{what}: num_layers and num_heads must be positive, got {num_layers} x {num_heads}")
    return int(num_layers), int(num_heads)


def as_vectors(vectors: Any, num_layers: int, num_heads: int, what: str = "vectors") -> np.ndarray:
    """Lookback vectors [n, L, H] or [n, L*H] as a finite float64 [n, L*H] array (InputError otherwise)."""
    try:
        arr = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{what} must be a numeric array ({exc})") from exc
    size = num_layers * num_heads
    if arr.ndim == 3:
        if arr.shape[1:] != (num_layers, num_heads):
            raise InputError(
                f"{what} has per-example shape {arr.shape[1:]}, expected ({num_layers}, {num_heads}) [layers, heads]"
            )
        arr = arr.reshape(arr.shape[0], size)
    if arr.ndim != 2 or arr.shape[1] != size:
        raise InputError(
            f"{what} must be [n, {num_layers}, {num_heads}] or [n, {size}] "
            f"({num_layers} layers x {num_heads} heads), got shape {arr.shape}"
        )
    return as_matrix(arr, _head_names(num_layers, num_heads), what)


def _one_vector(value: FeatureValue | Sequence[Any], num_layers: int, num_heads: int, who: str) -> np.ndarray:
    """One ``lookback_ratio`` ([L][H] or flat L*H) as a [1, L*H] array, refusing any other size."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"feature '{FEATURE}' must be a numeric [layers][heads] array ({exc})") from exc
    size = num_layers * num_heads
    shape_ok = arr.shape in ((num_layers, num_heads), (size,))
    if not shape_ok:
        raise InputError(
            f"feature '{FEATURE}' has shape {arr.shape} ({arr.size} values), but {who} expects "
            f"{num_layers} layers x {num_heads} heads = {size} values ([layers][heads] or flat)"
        )
    return as_vectors(arr.reshape(1, size), num_layers, num_heads, FEATURE)


class HeadMapping:
    """Linear map from a TARGET model's lookback vectors to a SOURCE model's (paper 003 §4, appendix E).

    ``transform(t) = t @ weight + bias`` with ``weight`` [Lt*Ht, Ls*Hs] fitted by least squares on paired
    vectors of the same texts (both models reading the same generated output).
    """

    def __init__(
        self,
        weight: np.ndarray,
        bias: np.ndarray,
        *,
        source_model_id: str,
        target_model_id: str,
        source_shape: tuple[int, int],
        target_shape: tuple[int, int],
        n_train: int = 0,
        r2: float | None = None,
        alpha: float = 0.0,
        created: str = "",
    ) -> None:
        self.source_shape = _check_dims(*source_shape, what="source_shape")
        self.target_shape = _check_dims(*target_shape, what="target_shape")
        self.weight = np.asarray(weight, dtype=np.float64)
        self.bias = np.asarray(bias, dtype=np.float64).reshape(-1)
        expected = (self.target_size, self.source_size)
        if self.weight.shape != expected or self.bias.shape != (self.source_size,):
            raise ArtifactError(
                f"head mapping weights have shapes {self.weight.shape} / {self.bias.shape}, expected {expected} / "
                f"({self.source_size},)"
            )
        self.source_model_id = source_model_id
        self.target_model_id = target_model_id
        self.n_train = int(n_train)
        self.r2 = r2
        self.alpha = float(alpha)
        self.created = created or datetime.now(timezone.utc).isoformat(timespec="seconds")

    @property
    def source_size(self) -> int:
        """Attention heads of the source model (layers x heads)."""
        return self.source_shape[0] * self.source_shape[1]

    @property
    def target_size(self) -> int:
        """Attention heads of the target model (layers x heads)."""
        return self.target_shape[0] * self.target_shape[1]

    @classmethod
    def fit(
        cls,
        target_vectors: Any,
        source_vectors: Any,
        *,
        target_model_id: str,
        source_model_id: str,
        target_shape: tuple[int, int],
        source_shape: tuple[int, int],
        alpha: float = 0.0,
    ) -> HeadMapping:
        """Least-squares map target [n, Lt*Ht] -> source [n, Ls*Hs] (``alpha`` > 0: ridge with that penalty).

        ``alpha=0`` is the paper's OLS (scikit-learn LinearRegression; the minimum-norm solution when there
        are fewer texts than target heads).
        """
        lt, ht = _check_dims(*target_shape, what="target_shape")
        ls, hs = _check_dims(*source_shape, what="source_shape")
        T = as_vectors(target_vectors, lt, ht, "target_vectors")
        S = as_vectors(source_vectors, ls, hs, "source_vectors")
        if T.shape[0] != S.shape[0]:
            raise InputError(f"target and source vectors must pair the same texts: {T.shape[0]} vs {S.shape[0]} rows")
        if T.shape[0] < 2:
            raise InputError("a head mapping needs at least 2 paired examples")
        if alpha < 0 or not np.isfinite(alpha):
            raise InputError(f"alpha must be a finite number >= 0, got {alpha}")
        if alpha > 0:
            from sklearn.linear_model import Ridge

            reg: Any = Ridge(alpha=alpha)
        else:
            from sklearn.linear_model import LinearRegression

            reg = LinearRegression()
        reg.fit(T, S)
        weight = np.asarray(reg.coef_, dtype=np.float64).reshape(S.shape[1], T.shape[1]).T
        bias = np.asarray(reg.intercept_, dtype=np.float64).reshape(-1)
        resid = S - (T @ weight + bias)
        total = ((S - S.mean(axis=0)) ** 2).sum()
        r2 = 1.0 - float((resid**2).sum() / total) if total > 0 else float(np.allclose(resid, 0.0))
        return cls(
            weight,
            bias,
            source_model_id=source_model_id,
            target_model_id=target_model_id,
            source_shape=(ls, hs),
            target_shape=(lt, ht),
            n_train=T.shape[0],
            r2=round(r2, 6),
            alpha=alpha,
        )

    def transform(self, target_vectors: Any) -> np.ndarray:
        """Map target vectors [n, Lt, Ht] or [n, Lt*Ht] to source-model vectors [n, Ls*Hs]."""
        T = as_vectors(target_vectors, *self.target_shape, what=f"lookback vectors of '{self.target_model_id}'")
        return T @ self.weight + self.bias

    def arrays(self) -> dict[str, np.ndarray]:
        """The mapping's weight and bias, by their names in the artifact."""
        return {"mapping.weight": self.weight, "mapping.bias": self.bias}

    def describe(self) -> dict[str, Any]:
        """JSON-ready description (without the weights)."""
        return {
            "source_model_id": self.source_model_id,
            "target_model_id": self.target_model_id,
            "source_shape": list(self.source_shape),
            "target_shape": list(self.target_shape),
            "n_train": self.n_train,
            "r2": self.r2,
            "alpha": self.alpha,
            "created": self.created,
        }

    def save(self, path: str | Path) -> Path:
        """Write one safetensors file (weights + JSON-able metadata; no pickle)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        meta = {k: str(v) for k, v in self.describe().items() if k not in ("source_shape", "target_shape")}
        meta.update(
            {
                "format": MAPPING_FORMAT,
                "source_shape": "x".join(map(str, self.source_shape)),
                "target_shape": "x".join(map(str, self.target_shape)),
            }
        )
        if self.r2 is None:
            meta["r2"] = ""
        save_arrays(path, self.arrays(), meta)
        return path

    @classmethod
    def load(
        cls,
        path: str | Path,
        *,
        expect_source_model_id: str | None = None,
        expect_target_model_id: str | None = None,
    ) -> HeadMapping:
        """Load a mapping written by :meth:`save`, checking format, version and (optionally) both model ids."""
        path = Path(path)
        if not path.is_file():
            raise ArtifactError(f"head mapping {path} not found")
        try:
            with safe_open(str(path), framework="numpy") as f:
                meta = dict(f.metadata() or {})
        except Exception as exc:  # a damaged safetensors header
            raise ArtifactError(f"{path} is not a readable safetensors file ({exc})") from exc
        if meta.get("format") != MAPPING_FORMAT:
            raise ArtifactError(f"{path} is not a faithwatch head mapping")
        check_version(meta.get("faithwatch_version", "0"), f"head mapping {path}")
        for side, expected in (("source", expect_source_model_id), ("target", expect_target_model_id)):
            found = meta.get(f"{side}_model_id")
            if expected is not None and found != expected:
                raise InputError(f"head mapping {path} has {side} model '{found}', expected '{expected}'")
        arrays = load_arrays(path, ["mapping.weight", "mapping.bias"])
        try:
            source_shape = tuple(int(v) for v in meta["source_shape"].split("x"))
            target_shape = tuple(int(v) for v in meta["target_shape"].split("x"))
        except (KeyError, ValueError) as exc:
            raise ArtifactError(f"{path} has unreadable layer/head shapes ({exc})") from exc
        return cls(
            arrays["mapping.weight"],
            arrays["mapping.bias"],
            source_model_id=meta.get("source_model_id", ""),
            target_model_id=meta.get("target_model_id", ""),
            source_shape=source_shape,  # type: ignore[arg-type]
            target_shape=target_shape,  # type: ignore[arg-type]
            n_train=int(meta.get("n_train", 0)),
            r2=float(meta["r2"]) if meta.get("r2") else None,
            alpha=float(meta.get("alpha", 0.0)),
            created=meta.get("created", ""),
        )

    def __repr__(self) -> str:
        return (
            f"HeadMapping({self.target_model_id!r} {self.target_shape} -> {self.source_model_id!r} "
            f"{self.source_shape}, r2={self.r2})"
        )


class LookbackLens(Detector):
    """Logistic regression on lookback ratios; optionally preceded by a :class:`HeadMapping`.

    ``num_layers`` / ``num_heads`` / ``model_id`` describe the vectors the lens accepts: those of the source
    model for a plain lens, those of the target model for a mapped one.
    """

    def __init__(
        self, meta: ArtifactMeta, coef: np.ndarray, intercept: float, mapping: HeadMapping | None = None
    ) -> None:
        if meta.kind != LENS_KIND:
            raise InputError(f"LookbackLens needs an artifact of kind '{LENS_KIND}', got '{meta.kind}'")
        self.meta = meta
        self.coef = np.asarray(coef, dtype=np.float64).reshape(-1)
        self.intercept = float(intercept)
        self.mapping = mapping
        self.threshold = float(meta.threshold)
        self.model_id = meta.model_id
        self.feature_names = [FEATURE]
        self.num_layers, self.num_heads = _check_dims(
            meta.layers.get("num_layers", 0), meta.layers.get("num_heads", 0), "lookback lens layers"
        )
        lens_size = mapping.source_size if mapping is not None else self.num_layers * self.num_heads
        if self.coef.shape != (lens_size,):
            raise ArtifactError(f"lookback lens has {self.coef.size} coefficients, expected {lens_size}")
        if mapping is not None and (mapping.target_shape != (self.num_layers, self.num_heads)):
            raise ArtifactError("the head mapping's target shape does not match the lens's input shape")
        self.name = LENS_KIND if mapping is None else f"{LENS_KIND}-mapped"

    @property
    def source_model_id(self) -> str:
        """The model whose vectors trained the classifier."""
        return self.mapping.source_model_id if self.mapping is not None else self.model_id

    # --- training --------------------------------------------------------------------------------------------
    @classmethod
    def fit(
        cls,
        vectors: Any,
        y: Any,
        *,
        num_layers: int,
        num_heads: int,
        model_id: str,
        mode: str = "span",
        window_size: int | None = None,
        model_revision: str | None = None,
        training_data: Sequence[str] = (),
        seed: int = 0,
    ) -> LookbackLens:
        """Train on averaged lookback vectors [n, L, H] or [n, L*H] with y (1 unfaithful, 0 faithful).

        ``mode`` ("span": annotated spans, "window": fixed-size chunks, paper 003 §2.1) and ``window_size``
        are recorded; the averaging over spans or windows is the caller's job.
        """
        if mode not in MODES:
            raise InputError(f"mode must be one of {MODES}, got '{mode}'")
        if not model_id:
            raise InputError("model_id is required: a lens is only valid for the model whose attention it saw")
        num_layers, num_heads = _check_dims(num_layers, num_heads, "fit")
        V = as_vectors(vectors, num_layers, num_heads)
        unfaithful = as_labels(y, V.shape[0])
        from sklearn.linear_model import LogisticRegression

        clf = LogisticRegression(max_iter=1000, random_state=seed)  # paper 003 appendix E: defaults + max_iter
        clf.fit(V, unfaithful.astype(np.int64))
        params: dict[str, Any] = {"mode": mode, "max_iter": 1000, "C": 1.0}
        if window_size is not None:
            params["window_size"] = int(window_size)
        meta = ArtifactMeta(
            kind=LENS_KIND,
            feature_names=[FEATURE],
            model_id=model_id,
            model_revision=model_revision,
            layers={"num_layers": num_layers, "num_heads": num_heads},
            training_data=[str(t) for t in training_data],
            n_train=int(V.shape[0]),
            seed=int(seed),
            params=params,
        )
        lens = cls(meta, clf.coef_.reshape(-1), float(clf.intercept_[0]))
        p = lens.predict_proba_faithful(V)
        lens.threshold = meta.threshold = choose_threshold(p, unfaithful)
        meta.metrics = training_metrics(p, unfaithful, meta.threshold)
        return lens

    def with_mapping(self, mapping: HeadMapping, *, model_revision: str | None = None) -> LookbackLens:
        """This lens applied to another model's vectors through ``mapping`` (paper 003 §4).

        The mapping's source must be this lens's model and size; the result accepts only the target model's
        vectors, records both model ids, and keeps this lens's threshold (no labels on the target side).
        """
        if self.mapping is not None:
            raise InputError("this lens already has a head mapping; map from the original (unmapped) lens")
        if mapping.source_model_id != self.model_id:
            raise InputError(
                f"the head mapping maps to model '{mapping.source_model_id}', but the lens was trained on "
                f"'{self.model_id}'"
            )
        if mapping.source_shape != (self.num_layers, self.num_heads):
            raise InputError(
                f"the head mapping outputs {mapping.source_shape} [layers, heads], the lens expects "
                f"({self.num_layers}, {self.num_heads})"
            )
        meta = copy.deepcopy(self.meta)
        lt, ht = mapping.target_shape
        meta.model_id = mapping.target_model_id
        meta.model_revision = model_revision
        meta.layers = {
            "num_layers": lt,
            "num_heads": ht,
            "lens_source": {"model_id": self.model_id, "num_layers": self.num_layers, "num_heads": self.num_heads},
        }
        meta.params = {
            **meta.params,
            "lens_model_revision": self.meta.model_revision,
            "head_mapping": mapping.describe(),
        }
        meta.training_data = [*meta.training_data, f"head-mapping: {mapping.n_train} paired texts"]
        meta.created = meta.schema_hash = ""
        meta.files = {}
        return LookbackLens(meta, self.coef, self.intercept, mapping)

    # --- inference -------------------------------------------------------------------------------------------
    def predict_proba_faithful(self, vectors: Any) -> np.ndarray:
        """P(faithful) for lookback vectors [n, L, H] or [n, L*H] of this lens's input model."""
        V = as_vectors(vectors, self.num_layers, self.num_heads, f"lookback vectors of '{self.model_id}'")
        if self.mapping is not None:
            V = self.mapping.transform(V)
        return check_probabilities(1.0 - expit(V @ self.coef + self.intercept), self.name)

    def score(self, features: Mapping[str, FeatureValue]) -> float:
        """P(faithful) from ``features["lookback_ratio"]`` ([layers][heads] or flat; size checked)."""
        value = features.get(FEATURE)
        if value is None:
            raise InputError(f"detector {self.name} needs feature '{FEATURE}'; enable the lookback signal")
        row = _one_vector(value, self.num_layers, self.num_heads, f"{self.name} (model '{self.model_id}')")
        return float(self.predict_proba_faithful(row)[0])

    # --- persistence -----------------------------------------------------------------------------------------
    def save(self, directory: str | Path) -> Path:
        """Write ``weights.safetensors`` (lens and, if mapped, head map) and ``detector.json``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        arrays = {"lens.coef": self.coef, "lens.intercept": np.array([self.intercept])}
        if self.mapping is not None:
            arrays.update(self.mapping.arrays())
        self.meta.files = {WEIGHTS_FILE: save_arrays(directory / WEIGHTS_FILE, arrays, {"kind": LENS_KIND})}
        self.meta.threshold = self.threshold
        self.meta.save(directory)
        return directory

    @classmethod
    def load(
        cls,
        directory: str | Path,
        expect_model_id: str | None = None,
        expect_features: Sequence[str] | None = None,
    ) -> LookbackLens:
        """Load and verify a lens artifact (plain or mapped); ``expect_model_id`` is the model whose vectors
        will be scored (the target model for a mapped lens)."""
        meta = ArtifactMeta.load(
            directory, expect_model_id=expect_model_id, expect_features=expect_features, expect_kinds=(LENS_KIND,)
        )
        return cls._from_artifact(Path(directory), meta)

    @classmethod
    def _from_artifact(cls, directory: Path, meta: ArtifactMeta) -> LookbackLens:
        source = meta.layers.get("lens_source")
        required = ["lens.coef", "lens.intercept"] + (["mapping.weight", "mapping.bias"] if source else [])
        arrays = load_arrays(directory / WEIGHTS_FILE, required)
        mapping = None
        if source:
            info = meta.params.get("head_mapping", {})
            mapping = HeadMapping(
                arrays["mapping.weight"],
                arrays["mapping.bias"],
                source_model_id=source["model_id"],
                target_model_id=meta.model_id,
                source_shape=(source["num_layers"], source["num_heads"]),
                target_shape=(meta.layers["num_layers"], meta.layers["num_heads"]),
                n_train=info.get("n_train", 0),
                r2=info.get("r2"),
                alpha=info.get("alpha", 0.0),
                created=info.get("created", ""),
            )
        lens = cls(meta, arrays["lens.coef"], float(arrays["lens.intercept"].reshape(-1)[0]), mapping)
        check_loadable(directory, lens.predict_proba_faithful, lens.num_layers * lens.num_heads)
        return lens

    def __repr__(self) -> str:
        via = f", mapped from {self.source_model_id!r}" if self.mapping is not None else ""
        return f"LookbackLens(model_id={self.model_id!r}, {self.num_layers}x{self.num_heads}{via})"


__all__ = ["HeadMapping", "LookbackLens", "as_vectors"]
