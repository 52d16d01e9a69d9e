"""SynCheck aggregators (paper 000 §3 and A.2): LR, XGBoost or MLP over per-sentence features.

Training uses scikit-learn / xgboost; inference never does: LR and MLP are rebuilt from their numpy weights
(a forward pass in numpy) and XGBoost from its native JSON model, so a saved detector holds no pickle.
Labels: y = 1 unfaithful, 0 faithful. Every score is P(faithful) in [0, 1]; a sentence is flagged when its
score is below ``threshold`` (chosen on the training data to maximise balanced accuracy).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from faithwatch.checksums import file_sha256
from faithwatch.detectors.artifact import (
    BOOSTER_FILE,
    LID_BANK_FILE,
    WEIGHTS_FILE,
    ArtifactError,
    ArtifactMeta,
    as_labels,
    as_matrix,
    avoid_pickle_magic,
    check_probabilities,
    choose_threshold,
    load_arrays,
    save_arrays,
    sigmoid,
    training_metrics,
)
from faithwatch.detectors.base import Detector
from faithwatch.errors import InputError
from faithwatch.signals.base import FeatureValue
from faithwatch.signals.lid import LIDBank

#: the aggregator kinds (paper 000: SynCheckLR, SynCheckXGB, SynCheckMLP)
SYNCHECK_KINDS = ("lr", "xgb", "mlp")
#: training percentiles every feature is clipped to (see ``fit``)
CLIP_PERCENTILES = (5.0, 95.0)
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
_LID_FEATURE = re.compile(r"^lid_layer_(\d+)$")


def _scalar(name: str, value: FeatureValue) -> float:
    """One feature value as a finite float; InputError naming the feature otherwise."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InputError(f"feature '{name}' must be a number, got {type(value).__name__}") from exc
    if arr.size != 1:
        raise InputError(f"feature '{name}' must be a scalar, got an array of shape {arr.shape}")
    out = float(arr.reshape(-1)[0])
    if not np.isfinite(out):
        raise InputError(f"feature '{name}' is NaN or infinite")
    return out


class SynCheckDetector(Detector):
    """A trained SynCheck aggregator; build with :meth:`fit` or :meth:`load`."""

    def __init__(
        self,
        meta: ArtifactMeta,
        mean: np.ndarray,
        scale: np.ndarray,
        *,
        weights: Mapping[str, np.ndarray] | None = None,
        booster: Any = None,
        lid_bank: LIDBank | None = None,
    ) -> None:
        if meta.kind not in SYNCHECK_KINDS:
            raise InputError(f"SynCheckDetector kind must be one of {SYNCHECK_KINDS}, got '{meta.kind}'")
        self.meta = meta
        self.kind = meta.kind
        self.name = f"syncheck-{meta.kind}"
        self.threshold = float(meta.threshold)
        self.feature_names = list(meta.feature_names)
        self.model_id = meta.model_id
        self.mean = np.asarray(mean, dtype=np.float64)
        self.scale = np.asarray(scale, dtype=np.float64)
        self.weights = {k: np.asarray(v, dtype=np.float64) for k, v in (weights or {}).items()}
        self.booster = booster
        self.lid_bank = lid_bank
        n = len(self.feature_names)
        if self.mean.shape != (n,) or self.scale.shape != (n,):
            raise ArtifactError(f"scaler of {self.name} does not match its {n} features")
        if meta.kind == "xgb" and booster is None:
            raise ArtifactError("an xgb detector needs its booster")
        if meta.kind == "mlp":
            self._mlp_layers()  # validates the layer shapes up front

    # --- training --------------------------------------------------------------------------------------------
    @classmethod
    def fit(
        cls,
        X: Any,
        y: Any,
        feature_names: Sequence[str],
        kind: str,
        *,
        model_id: str,
        model_revision: str | None = None,
        layers: Mapping[str, Any] | None = None,
        training_data: Sequence[str] = (),
        seed: int = 0,
        lid_bank: LIDBank | None = None,
    ) -> SynCheckDetector:
        """Train an aggregator on ``X`` [n, len(feature_names)] and labels ``y`` (1 unfaithful, 0 faithful).

        ``kind`` is "lr", "xgb" or "mlp". Features are standard-scaled (constant columns get scale 1). The
        decision threshold maximises balanced accuracy on the training data. ``layers`` defaults to
        ``{"lid": [...]}`` read from ``lid_layer_<l>`` feature names; ``lid_bank`` (recorded with the same
        model) is stored with the detector.
        """
        if kind not in SYNCHECK_KINDS:
            raise InputError(f"unknown SynCheck kind '{kind}'; choose one of {', '.join(SYNCHECK_KINDS)}")
        names = [str(n) for n in feature_names]
        if len(set(names)) != len(names):
            raise InputError(f"feature_names has duplicates: {names}")
        if not model_id:
            raise InputError("model_id is required: a detector is only valid for the model whose features it saw")
        Xa = as_matrix(X, names)
        unfaithful = as_labels(y, Xa.shape[0])
        layers = dict(layers or {})
        lid_layers = sorted(int(m.group(1)) for n in names if (m := _LID_FEATURE.match(n)))
        if lid_layers and "lid" not in layers:
            layers["lid"] = lid_layers
        if lid_bank is not None:
            if lid_bank.model_id != model_id:
                raise InputError(
                    f"the LID bank was recorded with model '{lid_bank.model_id}', the detector is trained for "
                    f"'{model_id}'"
                )
            absent = [layer for layer in lid_layers if layer not in lid_bank.layers]
            if absent:
                raise InputError(f"the LID bank lacks layers {absent} used by features {names}")

        # features are clipped to their 5th-95th training percentiles, at training and at inference: the monitored
        # model's own text can lie far outside the training range (e.g. min_prob of greedy output vs teacher-forced
        # third-party text), where a linear model would extrapolate without bound
        low, high = np.percentile(Xa, CLIP_PERCENTILES[0], axis=0), np.percentile(Xa, CLIP_PERCENTILES[1], axis=0)
        Xc = np.clip(Xa, low, high)
        mean = Xc.mean(axis=0)
        scale = Xc.std(axis=0)
        scale[scale < 1e-12] = 1.0  # constant column: centred, not divided
        Xs = (Xc - mean) / scale
        target = unfaithful.astype(np.int64)

        weights: dict[str, np.ndarray] = {"clip.low": low, "clip.high": high}
        booster = None
        params: dict[str, Any]
        if kind == "lr":
            from sklearn.linear_model import LogisticRegression

            lr = LogisticRegression(max_iter=1000, class_weight="balanced", random_state=seed)
            lr.fit(Xs, target)
            weights.update({"lr.coef": lr.coef_.reshape(-1), "lr.intercept": lr.intercept_.reshape(-1)})
            params = {"max_iter": 1000, "class_weight": "balanced", "C": 1.0}
        elif kind == "mlp":
            from sklearn.exceptions import ConvergenceWarning
            from sklearn.neural_network import MLPClassifier

            params = {**MLP_PARAMS, "batch_size": min(MLP_PARAMS["batch_size"], Xa.shape[0])}
            mlp = MLPClassifier(**params, random_state=seed)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)  # 300 fixed iterations, as in the paper
                mlp.fit(Xs, target)
            if mlp.out_activation_ != "logistic":
                raise InputError(f"unexpected MLP output activation '{mlp.out_activation_}'")
            for i, (w, b) in enumerate(zip(mlp.coefs_, mlp.intercepts_, strict=True)):
                weights[f"mlp.coef_{i}"] = w
                weights[f"mlp.intercept_{i}"] = b
            params["hidden_layer_sizes"] = list(params["hidden_layer_sizes"])
        else:
            from xgboost import XGBClassifier

            n_pos, n_neg = int(unfaithful.sum()), int((~unfaithful).sum())
            params = {**XGB_PARAMS, "scale_pos_weight": n_neg / n_pos}  # the class balancing LR gets
            model = XGBClassifier(**params, random_state=seed, n_jobs=1, eval_metric="logloss")
            model.fit(Xs, target)
            booster = model.get_booster()
            booster.set_param({"nthread": 1})

        meta = ArtifactMeta(
            kind=kind,
            feature_names=names,
            model_id=model_id,
            model_revision=model_revision,
            layers=layers,
            training_data=[str(t) for t in training_data],
            n_train=int(Xa.shape[0]),
            seed=int(seed),
            params=params,
        )
        detector = cls(meta, mean, scale, weights=weights, booster=booster, lid_bank=lid_bank)
        # threshold and metrics from the same inference path the saved detector will use
        p = detector.predict_proba_faithful(Xa)
        detector.threshold = meta.threshold = choose_threshold(p, unfaithful)
        meta.metrics = training_metrics(p, unfaithful, meta.threshold)
        return detector

    # --- inference -------------------------------------------------------------------------------------------
    def _mlp_layers(self) -> list[tuple[np.ndarray, np.ndarray]]:
        layers = []
        i = 0
        while f"mlp.coef_{i}" in self.weights:
            layers.append((self.weights[f"mlp.coef_{i}"], self.weights[f"mlp.intercept_{i}"]))
            i += 1
        width = len(self.feature_names)
        for w, b in layers:
            if w.ndim != 2 or w.shape[0] != width or b.shape != (w.shape[1],):
                raise ArtifactError(f"MLP weights of {self.name} have inconsistent shapes")
            width = w.shape[1]
        if not layers or width != 1:
            raise ArtifactError(f"MLP weights of {self.name} are incomplete (need a single logistic output)")
        return layers

    def predict_proba_faithful(self, X: Any) -> np.ndarray:
        """P(faithful) for each row of ``X`` [n, len(feature_names)] (columns in ``feature_names`` order)."""
        X = as_matrix(X, self.feature_names)
        if "clip.low" in self.weights:  # artifacts from before clipping have no bounds
            X = np.clip(X, self.weights["clip.low"], self.weights["clip.high"])
        Xs = (X - self.mean) / self.scale
        if self.kind == "lr":
            z = Xs @ self.weights["lr.coef"] + self.weights["lr.intercept"][0]
            p_unfaithful = sigmoid(z)
        elif self.kind == "mlp":
            layers = self._mlp_layers()
            h = Xs
            for w, b in layers[:-1]:
                h = np.maximum(h @ w + b, 0.0)  # ReLU
            w, b = layers[-1]
            p_unfaithful = sigmoid((h @ w + b)[:, 0])
        else:
            import xgboost

            dmatrix = xgboost.DMatrix(Xs.astype(np.float32), nthread=1)
            p_unfaithful = np.asarray(self.booster.predict(dmatrix), dtype=np.float64)
        return check_probabilities(1.0 - p_unfaithful, self.name)

    def score(self, features: Mapping[str, FeatureValue]) -> float:
        """P(faithful) of one sentence; every feature in ``feature_names`` must be present (never imputed)."""
        missing = [name for name in self.feature_names if features.get(name) is None]
        if missing:
            raise InputError(
                f"detector {self.name} needs features {missing}, which were not computed for this sentence "
                "(missing features are never imputed); enable the signals that produce them"
            )
        row = np.array([[_scalar(name, features[name]) for name in self.feature_names]])
        return float(self.predict_proba_faithful(row)[0])

    # --- persistence -----------------------------------------------------------------------------------------
    def save(self, directory: str | Path) -> Path:
        """Write the artifact directory (weights first, then ``detector.json`` with their checksums)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        arrays = {"scaler.mean": self.mean, "scaler.scale": self.scale, **self.weights}
        files = {WEIGHTS_FILE: save_arrays(directory / WEIGHTS_FILE, arrays, {"kind": self.kind})}
        if self.booster is not None:
            self.booster.save_model(str(directory / BOOSTER_FILE))  # xgboost's native JSON
            files[BOOSTER_FILE] = file_sha256(directory / BOOSTER_FILE)
        if self.lid_bank is not None:
            self.lid_bank.save(directory / LID_BANK_FILE)
            avoid_pickle_magic(directory / LID_BANK_FILE)
            files[LID_BANK_FILE] = file_sha256(directory / LID_BANK_FILE)
        self.meta.threshold = self.threshold
        self.meta.files = files
        self.meta.save(directory)
        return directory

    @classmethod
    def load(
        cls,
        directory: str | Path,
        expect_model_id: str | None = None,
        expect_features: Sequence[str] | None = None,
    ) -> SynCheckDetector:
        """Load and verify an artifact written by :meth:`save` (no pickle involved)."""
        meta = ArtifactMeta.load(
            directory, expect_model_id=expect_model_id, expect_features=expect_features, expect_kinds=SYNCHECK_KINDS
        )
        return cls._from_artifact(Path(directory), meta)

    @classmethod
    def _from_artifact(cls, directory: Path, meta: ArtifactMeta) -> SynCheckDetector:
        required = ["scaler.mean", "scaler.scale"] + (["lr.coef", "lr.intercept"] if meta.kind == "lr" else [])
        arrays = load_arrays(directory / WEIGHTS_FILE, required)
        mean, scale = arrays.pop("scaler.mean"), arrays.pop("scaler.scale")
        booster = None
        if meta.kind == "xgb":
            import xgboost

            if BOOSTER_FILE not in meta.files:
                raise ArtifactError(f"xgb detector {directory} does not list {BOOSTER_FILE}")
            booster = xgboost.Booster()
            try:
                booster.load_model(str(directory / BOOSTER_FILE))
            except xgboost.core.XGBoostError as exc:
                raise ArtifactError(f"{directory / BOOSTER_FILE} is not a readable xgboost model ({exc})") from exc
            booster.set_param({"nthread": 1})
        if meta.kind == "lr" and arrays["lr.coef"].shape != (len(meta.feature_names),):
            raise ArtifactError(f"LR weights in {directory} do not match its {len(meta.feature_names)} features")
        lid_bank = None
        if LID_BANK_FILE in meta.files:
            lid_bank = LIDBank.load(directory / LID_BANK_FILE, expect_model_id=meta.model_id)
        return cls(meta, mean, scale, weights=arrays, booster=booster, lid_bank=lid_bank)

    def __repr__(self) -> str:
        return f"SynCheckDetector(kind={self.kind!r}, model_id={self.model_id!r}, features={self.feature_names})"
