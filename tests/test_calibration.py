"""Robust aggregation pieces: feature scaling, sign-constrained LR, Platt calibration, thresholds."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from faithwatch.detectors import SynCheckDetector
from faithwatch.detectors.calibration import (
    PlattCalibration,
    best_balanced_accuracy,
    choose_threshold,
    false_accept_threshold,
    group_weights,
    weighted_balanced_accuracy,
    weighted_median,
)
from faithwatch.detectors.linear import fit_logistic
from faithwatch.detectors.preprocess import ROBUST_BOUND, FeatureScaler
from faithwatch.errors import InputError


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 3))
    y = (X[:, 0] - 0.5 * X[:, 1] + 0.5 * rng.normal(size=500) > 0).astype(float)
    return X, y


def test_unconstrained_fit_matches_scikit_learn(xy):
    X, y = xy
    ours = fit_logistic(X, y, C=0.5)
    ref = LogisticRegression(C=0.5, max_iter=5000, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(ours.coef, ref.coef_[0], atol=1e-4)
    assert ours.intercept == pytest.approx(ref.intercept_[0], abs=1e-4)


def test_sign_constraints_hold(xy):
    X, y = xy
    free = fit_logistic(X, y)
    assert free.coef[1] < -0.3  # the data want a negative weight on column 1
    held = fit_logistic(X, y, signs=[1, 1, 0])
    assert held.coef[1] == pytest.approx(0.0, abs=1e-8) and held.coef[0] > 0
    with pytest.raises(InputError, match="signs"):
        fit_logistic(X, y, signs=[2, 0, 0])


def test_detector_monotone_in_constrained_feature(xy):
    X, y = xy  # y = 1 unfaithful rises with column 0 and falls with column 1
    det = SynCheckDetector.fit(X, y, ["a", "b", "c"], "lr", model_id="m", monotone={"b": -1})
    grid = np.zeros((5, 3))
    grid[:, 1] = np.linspace(-3, 3, 5)
    p = det.predict_proba_faithful(grid)
    assert np.all(np.diff(p) <= 1e-12)  # higher b never raises the faithfulness score
    xgb = SynCheckDetector.fit(X, y, ["a", "b", "c"], "xgb", model_id="m", monotone={"b": -1, "a": -1})
    assert np.all(np.diff(xgb.predict_proba_faithful(grid)) <= 1e-9)
    with pytest.raises(InputError, match="MLP"):
        SynCheckDetector.fit(X, y, ["a", "b", "c"], "mlp", model_id="m", monotone={"b": -1})
    with pytest.raises(InputError, match="does not use"):
        SynCheckDetector.fit(X, y, ["a", "b", "c"], "lr", model_id="m", monotone={"zzz": 1})


@pytest.mark.parametrize("kind", ["standard", "robust", "quantile", "clip"])
def test_scaler_roundtrip_and_bounds(kind):
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.exponential(size=400), rng.normal(size=400), np.zeros(400)])
    scaler = FeatureScaler.fit(X, kind)
    Z = scaler(X)
    assert Z.shape == X.shape and np.all(np.isfinite(Z))
    again = FeatureScaler.from_arrays(kind, scaler.arrays())
    np.testing.assert_allclose(again(X), Z)
    far = scaler(np.array([[1e9, -1e9, 1e9]]))
    assert np.all(np.isfinite(far))
    if kind in ("robust", "quantile"):
        assert np.abs(far).max() <= ROBUST_BOUND
        order = np.argsort(X[:, 0])
        assert np.all(np.diff(Z[order, 0]) >= -1e-12)  # monotone
    with pytest.raises(InputError, match="transform"):
        FeatureScaler.fit(X, "magic")


def test_platt_recovers_a_known_map():
    rng = np.random.default_rng(2)
    z = rng.normal(size=20000) * 2
    faithful = rng.random(20000) < expit(0.5 * z - 1.0)
    cal = PlattCalibration.fit(z, ~faithful)
    assert cal.a == pytest.approx(0.5, abs=0.05) and cal.b == pytest.approx(-1.0, abs=0.07)
    assert cal.logit(float(cal(np.array([0.3]))[0])) == pytest.approx(0.3)


def test_group_weights_equalise_data_sets_and_classes():
    groups = np.array(["a"] * 90 + ["b"] * 10)
    y = np.array([1] * 10 + [0] * 80 + [1] * 5 + [0] * 5, dtype=bool)
    w = group_weights(groups, y)
    for g in ("a", "b"):
        for c in (True, False):
            assert w[(groups == g) & (y == c)].sum() == pytest.approx(25.0)
    assert w.mean() == pytest.approx(1.0)


def test_weighted_threshold_matches_brute_force():
    rng = np.random.default_rng(3)
    p = rng.random(300)
    y = rng.random(300) < (1 - p) * 0.8
    w = rng.random(300) + 0.1
    t = choose_threshold(p, y, w)
    grid = np.unique(p)
    cands = (grid[:-1] + grid[1:]) / 2
    best = max(weighted_balanced_accuracy(p, y, c, w) for c in cands)
    assert weighted_balanced_accuracy(p, y, t, w) == pytest.approx(best)


def test_false_accept_threshold_is_conformal():
    rng = np.random.default_rng(4)
    calib = rng.random(999)
    t = false_accept_threshold(calib, 0.1)
    fresh = rng.random(200_000)
    assert np.mean(fresh >= t) <= 0.1 + 0.005
    assert np.mean(calib >= t) <= 0.1
    assert false_accept_threshold(calib[:5], 0.01) > calib[:5].max()  # too few points: flag everything
    with pytest.raises(InputError, match="between 0 and 1"):
        false_accept_threshold(calib, 1.5)


def test_calibrate_sets_threshold_from_out_of_fold(xy, tmp_path):
    X, y = xy
    det = SynCheckDetector.fit(X, y, ["a", "b", "c"], "lr", model_id="m")
    with pytest.raises(InputError, match="not calibrated"):
        det.false_accept_threshold(0.1)
    oof = det.decision_function(X) * 0.3  # out-of-fold scores are less confident
    det.calibrate(oof, y)
    assert det.calibration is not None and det.calibration.a > 1.5  # the map undoes the shrinkage
    fa = det.false_accept_threshold(0.2)
    p = det.predict_proba_faithful(X)
    assert np.mean(p[y == 1] >= fa) <= 0.25
    det.save(tmp_path / "d")
    again = SynCheckDetector.load(tmp_path / "d")
    np.testing.assert_allclose(again.predict_proba_faithful(X), p)
    assert again.threshold == det.threshold and again.false_accept_threshold(0.2) == fa


def test_weighted_median():
    assert weighted_median(np.array([3.0, 1.0, 2.0])) == 2.0
    assert weighted_median(np.array([0.0, 10.0]), np.array([1.0, 3.0])) == 10.0
    with pytest.raises(InputError, match="weighted median"):
        weighted_median(np.array([1.0, np.nan]))


def test_unlabelled_shift_moves_a_domain_median_onto_the_reference(xy, tmp_path):
    import pandas as pd

    from faithwatch.detectors.calibration import weighted_balanced_accuracy
    from faithwatch.eval.recalibration import adapt_unlabelled, balanced_accuracy_after_shift

    X, y = xy
    det = SynCheckDetector.fit(X, y, ["a", "b", "c"], "lr", model_id="m")
    oof = det.decision_function(X)
    det.calibrate(oof, y)
    assert det.reference_logit == pytest.approx(np.median(oof), abs=0.05)
    base = det.predict_proba_faithful(X)
    # the same sentences in a domain where feature a (evidence of unfaithfulness) runs lower: log-odds run higher
    domain = X - np.array([0.5, 0.0, 0.0])
    table = pd.DataFrame(domain, columns=["a", "b", "c"]).assign(example_id=[f"r{i // 2}" for i in range(len(X))])
    before = det.predict_proba_faithful(domain)
    at_reference = det.probability(np.array([det.reference_logit]))[0]
    assert np.mean(before < det.threshold) < np.mean(base < det.threshold) - 0.05  # the domain looks too good
    result = adapt_unlabelled(det, table, source="domain")
    expected = np.median(det.decision_function(domain)) - det.reference_logit
    assert result.shift == pytest.approx(expected) and result.shift > 0.3 and result.n_responses == 250
    after = det.predict_proba_faithful(domain)
    assert np.median(after) == pytest.approx(at_reference, abs=0.01)
    assert abs(np.mean(after < det.threshold) - np.mean(base < det.threshold)) < 0.03  # back where training was
    assert result.flagged_after == pytest.approx(np.mean(after < det.threshold))
    det.save(tmp_path / "d")
    again = SynCheckDetector.load(tmp_path / "d")
    np.testing.assert_allclose(again.predict_proba_faithful(domain), after)
    adapt_unlabelled(again, table, source="domain")  # a second run replaces the shift, it does not add to it
    np.testing.assert_allclose(again.predict_proba_faithful(domain), after)
    origin = "out-of-fold predictions, shifted to the median of domain"
    assert again.meta.params["threshold_from"] == det.meta.params["threshold_from"] == origin
    with pytest.raises(InputError, match="at least 20 sentences"):
        adapt_unlabelled(det, table.head(10), source="tiny")
    fresh = SynCheckDetector.fit(X, y, ["a", "b", "c"], "lr", model_id="m")
    fresh.calibrate(oof, y)
    labelled = table.assign(label=y.astype(int))  # label 1: unfaithful (high a)
    unfaithful = y == 1
    at_threshold = weighted_balanced_accuracy(fresh.predict_proba_faithful(domain), unfaithful, fresh.threshold)
    shifted = balanced_accuracy_after_shift(fresh, labelled, "domain")
    assert shifted > at_threshold + 0.02  # the shift undoes the domain's offset ...
    np.testing.assert_allclose(fresh.predict_proba_faithful(domain), before)  # ... on a copy: fresh is untouched
    assert balanced_accuracy_after_shift(fresh, labelled.head(10), "tiny") is None
    del again.weights["calib.reference_logit"]
    with pytest.raises(InputError, match="retrain"):
        adapt_unlabelled(again, table, source="domain")


def test_best_balanced_accuracy_is_the_maximum_over_thresholds() -> None:
    rng = np.random.default_rng(3)
    unfaithful = rng.random(400) < 0.3
    p = np.clip(0.6 - 0.3 * unfaithful + 0.25 * rng.normal(size=400), 0, 1)
    best = best_balanced_accuracy(p, unfaithful)
    grid = [weighted_balanced_accuracy(p, unfaithful, t) for t in np.unique(p)]
    assert best == pytest.approx(max(grid)) and best > weighted_balanced_accuracy(p, unfaithful, 0.5) - 1e-12


def test_a_batch_far_from_the_training_sets_gets_a_hint_and_a_shifted_detector_none(xy, tmp_path, capsys):
    import json

    from faithwatch.cli._common import domain_hint
    from faithwatch.detectors.calibration import FEW_UNLABELLED, SHIFT_HINT, domain_offset

    X, y = xy
    det = SynCheckDetector.fit(X, y, ["a", "b", "c"], "lr", model_id="m")
    det.calibrate(det.decision_function(X), y)
    z = np.random.default_rng(3).normal(det.reference_logit - 2.0, 1.0, 401)
    p = det.probability(z)
    offset = domain_offset(det, p)
    assert offset.offset == pytest.approx(np.median(z) - det.reference_logit, abs=1e-6) and offset.offset < -SHIFT_HINT
    assert offset.flagged == pytest.approx(np.mean(p < det.threshold)) and "below" in offset.hint()
    assert domain_offset(det, p, threshold=0.0).flagged == 0.0
    assert domain_offset(det, p[: FEW_UNLABELLED - 1]) is None  # too few to place a median
    near = det.probability(det.reference_logit + np.linspace(-0.5, 0.5, 401))
    assert domain_offset(det, near).hint() is None
    det.shift(float(np.median(z)) - det.reference_logit)  # what calibrate --unlabelled does: no offset is left
    assert abs(domain_offset(det, det.probability(z)).offset) < 1e-6
    det.shift(0.0)
    out = tmp_path / "out.jsonl"
    rows = [{"id": str(n), "sentences": [{"score": float(v)}]} for n, v in enumerate(p)]
    rows += [{"id": "none", "sentences": [{"score": None}]}]
    out.write_text("\n".join(json.dumps(r) for r in rows) + "\n{torn", encoding="utf-8")
    domain_hint(det, det.threshold, out, lambda row: [s["score"] for s in row["sentences"]], tmp_path / "my in.jsonl",
                None)
    err = capsys.readouterr().err
    assert "these 401 sentences score 2." in err
    assert f"faithwatch calibrate --detector default --data '{tmp_path / 'my in.jsonl'}' --unlabelled" in err


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_a_ray_run_gets_the_hint_from_its_shards_and_recorded_detector(xy, tmp_path, capsys, fmt):
    from faithwatch.cli._common import domain_hint
    from faithwatch.cli.monitor import _ray_detector, _sentence_scores
    from faithwatch.scale import ShardWriter, read_output_rows

    X, y = xy
    det = SynCheckDetector.fit(X, y, ["a", "b", "c"], "lr", model_id="m")
    det.calibrate(det.decision_function(X), y)
    det.save(tmp_path / "det")
    p = det.probability(np.random.default_rng(4).normal(det.reference_logit + 2.0, 1.0, 300))
    config = {"model_id": "m", "detector": det.name, "detector_content_hash": det.meta.content_hash,
              "threshold": 0.25}
    writer = ShardWriter(tmp_path / "out", fmt, source=tmp_path / "in.jsonl", shard_rows=120, config=config)
    for n in range(0, 300, 2):
        writer.put({"id": str(n), "sentences": [{"score": float(v)} for v in p[n:n + 2]]})
    writer.close()
    assert len(list((tmp_path / "out").glob(f"part-*.{fmt}"))) == 2
    assert sorted(v for r in read_output_rows(tmp_path / "out") for v in _sentence_scores(r)) == sorted(p.tolist())
    found, threshold = _ray_detector(  # the detector the workers used, as recorded
        tmp_path / "out", str(tmp_path / "det"))
    assert found.meta.content_hash == det.meta.content_hash and threshold == 0.25
    domain_hint(found, threshold, tmp_path / "out", _sentence_scores, tmp_path / "in.jsonl", "mine")
    assert "these 300 sentences score 2." in capsys.readouterr().err
    other = SynCheckDetector.fit(X, 1 - y, ["a", "b", "c"], "lr", model_id="m")
    other.save(tmp_path / "other")
    assert _ray_detector(tmp_path / "out", str(tmp_path / "other")) is None  # not what the workers scored with
    assert _ray_detector(tmp_path / "nothing", str(tmp_path / "det")) is None


def test_a_ray_run_without_a_model_resolves_the_shipped_detector(tmp_path):
    import json

    from faithwatch.cli.monitor import _ray_detector
    from faithwatch.detectors.shipped import default_detector

    shipped = default_detector(None)
    (tmp_path / "out").mkdir()
    config = {"model_id": "none", "detector_content_hash": shipped.meta.content_hash, "threshold": 0.4}
    (tmp_path / "out" / "_meta.json").write_text(json.dumps({"input": "x", "config": config}), encoding="utf-8")
    found, threshold = _ray_detector(tmp_path / "out", None)
    assert found.meta.content_hash == shipped.meta.content_hash and threshold == 0.4
