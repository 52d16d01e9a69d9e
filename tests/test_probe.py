"""The hidden-state probe: fitting, the signal, storage with a detector, refusal for another model; and
recipes trained with cross-fitted probes and out-of-fold calibration."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from faithwatch.detectors import SynCheckDetector
from faithwatch.errors import InputError
from faithwatch.eval.training import Recipe, fit_syncheck, out_of_fold_logits, syncheck_scores
from faithwatch.eval.transfer import leave_one_out, loo_auroc_table, loo_gain_table, target_table
from faithwatch.models.engine import Needs, TokenRecords
from faithwatch.sentences import Sentence
from faithwatch.signals.base import SentenceTrace
from faithwatch.signals.probe import HiddenProbe, ProbeSignal, probe_candidate_layers

D = 6


def _hidden(rng, n, unfaithful):
    """Hidden states whose first coordinate carries the label."""
    h = rng.normal(size=(n, D))
    h[:, 0] += np.where(unfaithful, -1.5, 1.5)
    return h


@pytest.fixture(scope="module")
def probe():
    rng = np.random.default_rng(0)
    y = rng.random(400) < 0.3
    return HiddenProbe.fit(_hidden(rng, 400, y), y.astype(int), model_id="m", layers=(2,), C=1.0), rng


def test_probe_separates_and_roundtrips(probe, tmp_path):
    p, rng = probe
    y = rng.random(300) < 0.5
    X = _hidden(rng, 300, y)
    z = p.logit(X)
    assert roc_auc_score(y, -z) > 0.9  # logit of *faithful*
    p.save(tmp_path / "probe.safetensors")
    again = HiddenProbe.load(tmp_path / "probe.safetensors", expect_model_id="m")
    np.testing.assert_allclose(again.logit(X), z)
    with pytest.raises(InputError, match="other|not comparable"):
        HiddenProbe.load(tmp_path / "probe.safetensors", expect_model_id="other-model")
    with pytest.raises(InputError, match="values per sentence"):
        p.logit(X[:, :3])


def test_probe_signal_reads_the_sentence_mean(probe):
    p, rng = probe
    hidden = [rng.normal(size=(2, D)) for _ in range(5)]
    records = TokenRecords(token_ids=list(range(5)), hidden=hidden, hidden_layers=(2, 4))
    trace = SentenceTrace(Sentence(0, "x", 0, 1, 1, 4), records, "q", "c")
    signal = ProbeSignal(p)
    assert signal.needs == Needs(hidden_layers=(2,))
    expected = p.logit(np.mean([h[0] for h in hidden[1:4]], axis=0)[None])[0]
    assert signal.compute(trace)["probe_logit"] == pytest.approx(expected)
    assert ProbeSignal(None).compute(trace) == {"probe_logit": None}


def test_candidate_layers_cover_the_depth():
    assert probe_candidate_layers(30) == (3, 6, 9, 12, 15, 18, 21, 24, 27, 30)
    assert probe_candidate_layers(2) == (1, 2)


def _table(rng, dataset, n, shift):
    """A labelled table like the feature cache: scalar features, and hidden means at layer 2."""
    y = rng.random(n) < 0.35
    rows = pd.DataFrame({
        "example_id": [f"{dataset}-{i // 3}" for i in range(n)],
        "dataset": dataset,
        "label": y.astype(int),
        "align_score": np.clip(0.6 - 0.3 * y + 0.2 * rng.normal(size=n) + shift, 0, 1),
        "min_logprob": -3 - 2 * y + rng.normal(size=n),
        "mean_logprob": -1 - 0.3 * y + 0.5 * rng.normal(size=n) + shift,
        "max_entropy": rng.random(n), "mean_entropy": rng.random(n) * 0.3,
        "min_pci": rng.normal(size=n) - y, "mean_pci": rng.normal(size=n), "neg_pci_pos": rng.poisson(1 + y),
    })
    rows["hidden_mean_layer_2"] = list(_hidden(rng, n, y) + shift)
    return rows


@pytest.fixture(scope="module")
def tables():
    rng = np.random.default_rng(5)
    return {name: _table(rng, name, 240, shift) for name, shift in (("a", 0.0), ("b", 0.3), ("c", -0.2))}


def test_recipe_with_probe_is_calibrated_out_of_fold(tables, tmp_path):
    train = pd.concat([tables["a"], tables["b"]], ignore_index=True)
    recipe = Recipe(families=("likelihood", "alignment", "probe"), probe_layers=(2,), probe_C=1.0)
    det = fit_syncheck(train, recipe, model_id="m")
    assert det.probe is not None and "probe_logit" in det.feature_names
    assert det.meta.params["recipe"]["probe_layers"] == [2]
    assert det.meta.params["threshold_from"] == "out-of-fold predictions"
    assert set(det.meta.metrics["out_of_fold_auroc"]) == {"a", "b"}
    # the out-of-fold logits come from models that did not see the row's data set
    oof = out_of_fold_logits(train, recipe, "m")
    assert roc_auc_score(train.label, -oof) > 0.8
    test = tables["c"]
    p = syncheck_scores(det, test)
    assert roc_auc_score(test.label, -p) > 0.85
    det.save(tmp_path / "det")
    again = SynCheckDetector.load(tmp_path / "det", expect_model_id="m")
    np.testing.assert_allclose(syncheck_scores(again, test), p)
    with pytest.raises(InputError, match="model"):
        SynCheckDetector.load(tmp_path / "det", expect_model_id="another")


def test_recipe_validation():
    with pytest.raises(InputError, match="probe"):
        Recipe(families=("alignment", "probe"))
    with pytest.raises(InputError, match="unknown feature families"):
        Recipe(families=("telepathy",))
    r = Recipe(families=("alignment",), C=0.3)
    assert Recipe.from_dict(r.to_dict()) == r
    with pytest.raises(InputError, match="unknown recipe fields"):
        Recipe.from_dict({"colour": "red"})


def test_leave_one_out_tables(tables):
    recipe = Recipe(families=("likelihood", "alignment", "influence"))
    folds = leave_one_out(tables, recipe, "m", lens=False)
    auroc = loo_auroc_table(folds, "syncheck-lr")
    assert list(auroc.columns) == ["method", "a", "b", "c", "mean", "worst"]
    assert {"syncheck-lr", "align_score", "min_logprob"} <= set(auroc.method)
    gains = loo_gain_table(folds)
    assert len(gains) == 3 and gains.detector_auroc.min() > 0.7
    assert (gains.ba_best_threshold >= gains.ba_at_threshold - 1e-12).all()
    assert gains["false_accept_at_0.1"].between(0, 1).all()
    for gain in ("gain_vs_align", "gain_vs_best_single"):  # paired bootstrap intervals around each gain
        assert (gains[f"{gain}_low"] <= gains[gain]).all() and (gains[gain] <= gains[f"{gain}_high"]).all()
        assert (gains[f"{gain}_low"] < gains[f"{gain}_high"]).all()
    shifted = gains.calibration_cost_unlabelled_shift  # BA after calibrate --unlabelled; the best is still the best
    assert shifted.notna().all() and (shifted >= -1e-12).all()
    targets = target_table(gains).set_index("target")
    row = targets.loc["gain over align_score >= +0.03"]
    assert row.worst_value == gains.gain_vs_align.min() and row.margin == pytest.approx(row.worst_value - 0.03)
    assert row.worst_set == gains.held_out[gains.gain_vs_align.idxmin()]
    cost = targets.loc["calibration cost <= 0.03"]
    assert cost.worst_value == gains.calibration_cost.max()
    assert cost.status == ("met" if gains.calibration_cost.max() <= 0.03 else "missed")
    assert cost.sets_met == f"{int((gains.calibration_cost <= 0.03).sum())} of 3"
    assert (shifted != gains.calibration_cost).any()  # the shift changed some fold's verdicts


def test_averaged_pooling_is_the_mean_of_per_set_regressions(tables, tmp_path):
    from faithwatch.detectors.linear import fit_logistic
    from faithwatch.detectors.preprocess import FeatureScaler
    from faithwatch.eval.training import DIRECTIONS, raw_scores, sample_weights, syncheck_features

    extra = tables["c"].assign(train_only=True)  # a training-only set joins every member
    train = pd.concat([tables["a"], tables["b"], extra], ignore_index=True)
    recipe = Recipe(families=("likelihood", "alignment"), C=0.5, pooling="averaged")
    det = fit_syncheck(train, recipe, model_id="m", calibrate=False)
    assert det.meta.params["members"] == 2 and det.meta.params["recipe"]["pooling"] == "averaged"
    names = syncheck_features([], recipe.families)
    scaler = FeatureScaler.fit(train[names].to_numpy(), "robust", sample_weights(train, "dataset"))
    logits = []
    for name in ("a", "b"):
        member = pd.concat([tables[name], extra], ignore_index=True)
        fit = fit_logistic(scaler(member[names].to_numpy()), (member.label == 0).to_numpy(float), C=0.5,
                           sample_weight=sample_weights(member, "dataset"),
                           signs=[DIRECTIONS.get(n, 0) for n in names])
        logits.append(scaler(tables["c"][names].to_numpy()) @ fit.coef + fit.intercept)
    np.testing.assert_allclose(raw_scores(det, tables["c"]), np.mean(logits, axis=0), atol=1e-9)
    pooled = fit_syncheck(train, Recipe(families=("likelihood", "alignment"), C=0.5), model_id="m", calibrate=False)
    assert not np.allclose(raw_scores(pooled, tables["c"]), raw_scores(det, tables["c"]))
    blended = fit_syncheck(train, dataclasses.replace(recipe, pooling="blended"), model_id="m", calibrate=False)
    np.testing.assert_allclose(raw_scores(blended, tables["c"]),  # half the pooled regression, half the averaged
                               (raw_scores(pooled, tables["c"]) + raw_scores(det, tables["c"])) / 2, atol=1e-9)
    det.save(tmp_path / "avg")  # one linear model: the usual artifact
    np.testing.assert_allclose(raw_scores(SynCheckDetector.load(tmp_path / "avg", expect_model_id="m"), tables["c"]),
                               raw_scores(det, tables["c"]))
    with pytest.raises(InputError, match="kind lr"):
        Recipe(kind="xgb", families=("alignment",), pooling="averaged")
    with pytest.raises(InputError, match="pooling"):
        Recipe(families=("alignment",), pooling="mixed")
    old = Recipe(families=("alignment",)).to_dict()
    del old["pooling"]  # recipes written before the field read as pooled
    assert Recipe.from_dict(old).pooling == "pooled"


def _spread(scores: np.ndarray) -> np.ndarray:
    """Scores less their mean: what a constant shift of every score leaves."""
    return scores - scores.mean()


def test_dataset_centring_ignores_offsets_between_training_sets(tables, tmp_path):
    from faithwatch.eval.training import centred_by_dataset, raw_scores, syncheck_features

    extra = tables["c"].assign(train_only=True)
    train = pd.concat([tables["a"], tables["b"], extra], ignore_index=True)
    recipe = Recipe(families=("likelihood", "alignment"), C=0.5, centering="dataset")
    names = syncheck_features([], recipe.families)
    centred = centred_by_dataset(train, names)
    medians = centred.groupby("dataset")[names].median()
    reference = train[train.dataset != "c"].groupby("dataset")[names].median().mean()  # real sets only
    for name in ("a", "b", "c"):  # every set, the training-only one too, moved onto the real sets' mean median
        np.testing.assert_allclose(medians.loc[name], reference, atol=1e-9)
    assert centred_by_dataset(tables["a"], names) is tables["a"]  # one set: nothing to centre
    det = fit_syncheck(train, recipe, model_id="m", calibrate=False)
    assert det.meta.params["recipe"]["centering"] == "dataset"
    # moving one training set's features by a constant leaves the weights as they were once sets are centred
    # (the scores move by one constant, as the reference median moved), unlike a plain fit
    moved = train.assign(**{n: train[n] + np.where(train.dataset == "b", 0.7, 0.0) for n in names})
    again = fit_syncheck(moved, recipe, model_id="m", calibrate=False)
    moved_by = np.abs(_spread(raw_scores(again, tables["c"])) - _spread(raw_scores(det, tables["c"])))
    assert np.median(moved_by) < 1e-3  # (a few extreme rows meet the robust scaling's bound elsewhere)
    plain = Recipe(families=("likelihood", "alignment"), C=0.5)
    before = raw_scores(fit_syncheck(train, plain, model_id="m", calibrate=False), tables["c"])
    after = raw_scores(fit_syncheck(moved, plain, model_id="m", calibrate=False), tables["c"])
    assert np.median(np.abs(_spread(after) - _spread(before))) > 0.05
    det.save(tmp_path / "centred")  # new data is scored as it is: the usual artifact
    np.testing.assert_allclose(raw_scores(SynCheckDetector.load(tmp_path / "centred", expect_model_id="m"),
                                          tables["c"]), raw_scores(det, tables["c"]))
    with pytest.raises(InputError, match="centering"):
        Recipe(families=("alignment",), centering="zscore")
    old = Recipe(families=("alignment",)).to_dict()
    del old["centering"]  # recipes written before the field read as not centred
    assert Recipe.from_dict(old).centering == "none"
