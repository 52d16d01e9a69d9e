"""SynCheck aggregators (paper 000 §3 and A.2): LR, XGBoost or MLP over per-sentence features.

Training uses scikit-learn / SciPy / xgboost; inference never does: LR and MLP are rebuilt from their numpy
weights and XGBoost from its native JSON model, so a saved detector holds no pickle.
Labels: y = 1 unfaithful, 0 faithful. A detector computes a raw log-odds of "faithful"
(:meth:`SynCheckDetector.decision_function`); its score is that log-odds through the detector's calibration
(:mod:`faithwatch.detectors.calibration`, fitted on out-of-fold predictions) or, without one, the logistic
function. A sentence is flagged when its score is below ``threshold``.

Robustness choices (see :func:`faithwatch.eval.training.fit_syncheck` for how they are selected):
* ``transform``: per-feature scaling (:mod:`faithwatch.detectors.preprocess`), ``robust`` by default;
* ``monotone``: {feature: +1 | -1}, the direction in which a feature may move the faithfulness score (a
  sign-constrained LR, XGBoost monotone constraints);
* ``sample_weight``: e.g. every data set and class weighted equally.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.special import expit

from faithwatch.checksums import file_sha256
from faithwatch.detectors.artifact import (
    BOOSTER_FILE,
    LID_BANK_FILE,
    PROBE_FILE,
    SYNCHECK_KINDS,
    WEIGHTS_FILE,
    ArtifactError,
    ArtifactMeta,
    as_labels,
    as_matrix,
    avoid_pickle_magic,
    check_loadable,
    check_probabilities,
    load_arrays,
    save_arrays,
    training_metrics,
)
from faithwatch.detectors.base import Detector
from faithwatch.detectors.calibration import (
    PlattCalibration,
    choose_threshold,
    false_accept_threshold,
    group_weights,
    weighted_median,
)
from faithwatch.detectors.fitting import fit_lr, fit_mlp, fit_xgb
from faithwatch.detectors.preprocess import FeatureScaler
from faithwatch.errors import InputError
from faithwatch.signals.base import FeatureValue
from faithwatch.signals.lid import LIDBank
from faithwatch.signals.probe import HiddenProbe

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


def _row_weights(unfaithful: np.ndarray, sample_weight: Any) -> np.ndarray:
    """The given per-row weights, checked; by default class-balanced (scikit-learn's ``"balanced"``)."""
    if sample_weight is None:
        return group_weights(np.zeros(len(unfaithful)), unfaithful)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != unfaithful.shape or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise InputError("sample_weight must hold one finite, non-negative weight per row")
    return w


def _signs(names: Sequence[str], monotone: Mapping[str, int]) -> list[int]:
    unknown = sorted(set(monotone) - set(names))
    if unknown:
        raise InputError(f"monotone constraints name features {unknown} that the detector does not use")
    bad = {k: v for k, v in monotone.items() if v not in (-1, 0, 1)}
    if bad:
        raise InputError(f"monotone constraints must be +1, -1 or 0, got {bad}")
    return [int(monotone.get(n, 0)) for n in names]


class SynCheckDetector(Detector):
    """A trained SynCheck aggregator; build with :meth:`fit` or :meth:`load`."""

    def __init__(
        self,
        meta: ArtifactMeta,
        scaler: FeatureScaler,
        *,
        weights: Mapping[str, np.ndarray] | None = None,
        booster: Any = None,
        lid_bank: LIDBank | None = None,
        probe: HiddenProbe | None = None,
    ) -> None:
        if meta.kind not in SYNCHECK_KINDS:
            raise InputError(f"SynCheckDetector kind must be one of {SYNCHECK_KINDS}, got '{meta.kind}'")
        self.meta = meta
        self.kind = meta.kind
        self.name = f"syncheck-{meta.kind}"
        self.threshold = float(meta.threshold)
        self.feature_names = list(meta.feature_names)
        self.model_id = meta.model_id
        self.scaler = scaler
        self.weights = {k: np.asarray(v, dtype=np.float64) for k, v in (weights or {}).items()}
        self.booster = booster
        self.lid_bank = lid_bank
        self.probe = probe
        n = len(self.feature_names)
        if scaler.width != n:
            raise ArtifactError(f"scaler of {self.name} does not match its {n} features")
        if meta.kind == "xgb" and booster is None:
            raise ArtifactError("an xgb detector needs its booster")
        if meta.kind == "mlp":
            self._mlp_layers()  # validates the layer shapes up front
        if "probe_logit" in self.feature_names and probe is None:
            raise ArtifactError(f"{self.name} uses probe_logit but carries no hidden-state probe")

    @property
    def calibration(self) -> PlattCalibration | None:
        """The Platt map fitted on out-of-fold predictions (None for a detector without one)."""
        if "calib.platt" not in self.weights:
            return None
        a, b = self.weights["calib.platt"]
        return PlattCalibration(float(a), float(b) - float(a) * self.applied_shift)

    @property
    def applied_shift(self) -> float:
        """The shift of :meth:`shift` (0 when none): raw log-odds are scored as if this much lower."""
        return float(self.weights["calib.shift"][0]) if "calib.shift" in self.weights else 0.0

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
        probe: HiddenProbe | None = None,
        transform: str = "robust",
        monotone: Mapping[str, int] | None = None,
        C: float = 1.0,
        sample_weight: Any = None,
        members: Sequence[tuple[Any, Any]] | None = None,
        member_share: float = 1.0,
    ) -> SynCheckDetector:
        """Train an aggregator on ``X`` [n, len(feature_names)] and labels ``y`` (1 unfaithful, 0 faithful).

        ``kind`` is "lr", "xgb" or "mlp"; ``transform`` the feature scaling; ``monotone`` maps features to the
        direction (+1: higher means more faithful) their effect is constrained to (lr and xgb); ``C`` the inverse
        L2 strength of lr; ``sample_weight`` defaults to class-balanced weights. The threshold here maximises
        balanced accuracy on the training data (in-sample); :meth:`calibrate` replaces it with one chosen on
        out-of-fold predictions. ``layers`` defaults to ``{"lid": [...]}`` read from ``lid_layer_<l>`` feature
        names; ``lid_bank`` and ``probe`` (recorded with the same model) are stored with the detector.
        ``members`` (lr only): (row indices, sample weights) of several member regressions, fitted on the scaling
        of all rows; the detector is their averaged coefficients (the mean of their log-odds), or, with
        ``member_share`` below 1, that share of them plus the rest of the regression on all rows.
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
        for extra, what in ((lid_bank, "LID bank"), (probe, "hidden-state probe")):
            if extra is not None and extra.model_id != model_id:
                raise InputError(f"the {what} was recorded with model '{extra.model_id}', the detector is trained "
                                 f"for '{model_id}'")
        if lid_bank is not None:
            absent = [layer for layer in lid_layers if layer not in lid_bank.layers]
            if absent:
                raise InputError(f"the LID bank lacks layers {absent} used by features {names}")
        if probe is not None:
            layers["probe"] = list(probe.layers)
        signs = _signs(names, monotone or {})
        if any(signs) and kind == "mlp":
            raise InputError("monotone constraints need kind lr or xgb; the MLP cannot keep them")
        w = _row_weights(unfaithful, sample_weight)

        scaler = FeatureScaler.fit(Xa, transform, w)
        Xs = scaler(Xa)
        faithful = (~unfaithful).astype(np.float64)
        weights: dict[str, np.ndarray] = {}
        booster = None
        params: dict[str, Any] = {"transform": transform, "monotone": {n: s for n, s in zip(names, signs, strict=True)
                                                                       if s}}
        if kind == "lr":
            weights, fitted = fit_lr(Xs, faithful, w, signs, C=C, members=members, member_share=member_share)
        elif members is not None:
            raise InputError("member models are averaged logistic regressions: they need kind lr")
        elif kind == "mlp":
            weights, fitted = fit_mlp(Xs, faithful, w, seed=seed)
        else:
            booster, fitted = fit_xgb(Xs, faithful, w, signs, seed=seed)
        params.update(fitted)

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
        detector = cls(meta, scaler, weights=weights, booster=booster, lid_bank=lid_bank, probe=probe)
        # threshold and metrics from the same inference path the saved detector will use
        p = detector.predict_proba_faithful(Xa)
        detector.threshold = meta.threshold = choose_threshold(p, unfaithful, w)
        meta.metrics = training_metrics(p, unfaithful, meta.threshold)
        return detector

    def calibrate(self, oof_logits: Any, y: Any, sample_weight: Any = None, reference_weight: Any = None) -> None:
        """Fit the probability map and the threshold on out-of-fold raw log-odds (see :meth:`decision_function`).

        The out-of-fold scores of the unfaithful sentences are kept, for :meth:`false_accept_threshold`, and the
        median log-odds (weighted by ``reference_weight``, e.g. every data set equally), for :meth:`shift`.
        """
        z = np.asarray(oof_logits, dtype=np.float64)
        unfaithful = as_labels(y, z.shape[0])
        w = _row_weights(unfaithful, sample_weight)
        platt = PlattCalibration.fit(z, unfaithful, w)
        p = platt(z)
        self.weights["calib.platt"] = np.array([platt.a, platt.b])
        self.weights["calib.unfaithful_scores"] = np.sort(p[unfaithful])
        self.weights["calib.reference_logit"] = np.array([weighted_median(z, reference_weight)])
        self.weights.pop("calib.shift", None)  # the map is fitted on these log-odds themselves
        self.threshold = self.meta.threshold = choose_threshold(p, unfaithful, w)
        self.meta.params["threshold_from"] = "out-of-fold predictions"

    @property
    def reference_logit(self) -> float | None:
        """Median out-of-fold raw log-odds of the training sentences (None for detectors trained before it)."""
        ref = self.weights.get("calib.reference_logit")
        return None if ref is None else float(ref[0])

    def shift(self, delta: float) -> None:
        """Score every sentence as if its raw log-odds were ``delta`` lower than they are (replacing any earlier
        shift). The probability map moves; the threshold and the false-accept quantiles stay."""
        if "calib.platt" not in self.weights:
            raise InputError(f"{self.name} has no probability map to shift; retrain it with `faithwatch train`")
        if not math.isfinite(delta):
            raise InputError(f"the shift must be a finite number, got {delta}")
        self.weights["calib.shift"] = np.array([float(delta)])

    def false_accept_threshold(self, rate: float) -> float:
        """Threshold accepting at most ``rate`` of unfaithful sentences (out-of-fold estimate, split-conformal)."""
        if "calib.unfaithful_scores" not in self.weights:
            raise InputError(f"{self.name} was not calibrated on out-of-fold predictions, so it cannot set a "
                             "threshold for a false-accept rate; retrain it with `faithwatch train`")
        return false_accept_threshold(self.weights["calib.unfaithful_scores"], rate)

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

    def decision_function(self, X: Any) -> np.ndarray:
        """Raw log-odds of "faithful" for each row of ``X`` [n, len(feature_names)] (before calibration)."""
        X = as_matrix(X, self.feature_names)
        Xs = self.scaler(X)
        if self.kind == "lr":
            return Xs @ self.weights["lr.coef"] + self.weights["lr.intercept"][0]
        if self.kind == "mlp":
            layers = self._mlp_layers()
            h = Xs
            for w, b in layers[:-1]:
                h = np.maximum(h @ w + b, 0.0)  # ReLU
            w, b = layers[-1]
            return (h @ w + b)[:, 0]
        import xgboost

        dmatrix = xgboost.DMatrix(Xs.astype(np.float32), nthread=1)
        return np.asarray(self.booster.predict(dmatrix, output_margin=True), dtype=np.float64)

    def predict_proba_faithful(self, X: Any) -> np.ndarray:
        """P(faithful) for each row of ``X`` [n, len(feature_names)] (columns in ``feature_names`` order)."""
        return self.probability(self.decision_function(X))

    def probability(self, z: Any) -> np.ndarray:
        """P(faithful) from raw log-odds ``z`` (:meth:`decision_function`), through the calibration map."""
        calibration = self.calibration
        z = np.asarray(z, dtype=np.float64)
        return check_probabilities(calibration(z) if calibration is not None else expit(z), self.name)

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
        arrays = {**self.scaler.arrays(), **self.weights}
        files = {WEIGHTS_FILE: save_arrays(directory / WEIGHTS_FILE, arrays, {"kind": self.kind})}
        if self.booster is not None:
            self.booster.save_model(str(directory / BOOSTER_FILE))  # xgboost's native JSON
            files[BOOSTER_FILE] = file_sha256(directory / BOOSTER_FILE)
        if self.lid_bank is not None:
            self.lid_bank.save(directory / LID_BANK_FILE)
            avoid_pickle_magic(directory / LID_BANK_FILE)
            files[LID_BANK_FILE] = file_sha256(directory / LID_BANK_FILE)
        if self.probe is not None:
            self.probe.save(directory / PROBE_FILE)
            avoid_pickle_magic(directory / PROBE_FILE)
            files[PROBE_FILE] = file_sha256(directory / PROBE_FILE)
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
        required = ["lr.coef", "lr.intercept"] if meta.kind == "lr" else []
        arrays = load_arrays(directory / WEIGHTS_FILE, required)
        # detectors from before the transform choice clipped to training percentiles, then standardised
        transform = meta.params.get("transform") or ("clip" if "clip.low" in arrays else "standard")
        scaler = FeatureScaler.from_arrays(transform, arrays)
        weights = {k: v for k, v in arrays.items() if not k.startswith(("scaler.", "clip."))}
        if meta.params.get("transform") is None and meta.kind in ("lr", "mlp"):
            _legacy_orientation(weights, meta.kind)
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
            if meta.params.get("transform") is None:
                raise ArtifactError(f"xgb detector {directory} predates faithwatch 0.2 (it predicts the other "
                                    "class); retrain it")
        if meta.kind == "lr" and weights["lr.coef"].shape != (len(meta.feature_names),):
            raise ArtifactError(f"LR weights in {directory} do not match its {len(meta.feature_names)} features")
        lid_bank = None
        if LID_BANK_FILE in meta.files:
            lid_bank = LIDBank.load(directory / LID_BANK_FILE, expect_model_id=meta.model_id)
        probe = None
        if PROBE_FILE in meta.files:
            probe = HiddenProbe.load(directory / PROBE_FILE, expect_model_id=meta.model_id)
        detector = cls(meta, scaler, weights=weights, booster=booster, lid_bank=lid_bank, probe=probe)
        check_loadable(directory, detector.predict_proba_faithful, len(meta.feature_names))
        return detector

    def __repr__(self) -> str:
        return f"SynCheckDetector(kind={self.kind!r}, model_id={self.model_id!r}, features={self.feature_names})"


def _legacy_orientation(weights: dict[str, np.ndarray], kind: str) -> None:
    """Detectors from before 0.2 modelled P(unfaithful): negate the output layer to get faithful log-odds."""
    if kind == "lr":
        weights["lr.coef"], weights["lr.intercept"] = -weights["lr.coef"], -weights["lr.intercept"]
        return
    last = max(int(k.removeprefix("mlp.coef_")) for k in weights if k.startswith("mlp.coef_"))
    weights[f"mlp.coef_{last}"] = -weights[f"mlp.coef_{last}"]
    weights[f"mlp.intercept_{last}"] = -weights[f"mlp.intercept_{last}"]
