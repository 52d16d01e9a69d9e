"""Transfer across data sets: leave-one-data-set-out (LOO) tables, the transfer matrix, family ablation.

Every held-out figure here comes from models that never saw the held-out data set: the detector recipe, its
calibration and threshold, the direction of each single signal and the Lookback Lens are all fitted on the
other data sets. These are the numbers model selection uses (:mod:`faithwatch.eval.selection`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from faithwatch.detectors.calibration import best_balanced_accuracy, weighted_balanced_accuracy
from faithwatch.eval.lid_features import add_lid, build_bank, hidden_layers_in
from faithwatch.eval.metrics import MetricCI, auroc_difference
from faithwatch.eval.recalibration import balanced_accuracy_after_shift
from faithwatch.eval.training import (
    FAMILIES,
    Recipe,
    feature_directions,
    fit_lookback_lens,
    fit_syncheck,
    lookback_matrix,
    monitor_scores,
    out_of_fold_logits,
    raw_scores,
    syncheck_features,
    train_only,
    with_recipe,
)

#: the false-accept rate whose out-of-fold threshold the LOO table checks on the held-out set
CHECK_FALSE_ACCEPT = 0.1
#: the transfer targets (issue 12): the detector beats align_score and the best single signal by this much on every
#: held-out set, and loses at most this much balanced accuracy at its threshold against the set's best threshold
TARGET_GAIN = 0.03
TARGET_CALIBRATION_COST = 0.03
#: bootstrap replicates of the interval of each LOO gain (paired, whole responses resampled)
GAIN_BOOT = 1000
#: single signals compared in the LOO table (every SynCheck feature the recipes use, plus the raw probabilities)
SINGLE_FAMILIES = ("likelihood", "likelihood-raw", "uncertainty", "contrastive", "influence", "alignment", "lexical",
                   "edits", "tagger")


def _auc(labels: np.ndarray, faithful_scores: np.ndarray) -> float:
    return float(roc_auc_score(labels, -np.asarray(faithful_scores, dtype=np.float64)))


def held_out_names(tables: Mapping[str, pd.DataFrame]) -> list[str]:
    """The data sets that LOO holds out in turn: all but the training-only (augmentation) ones."""
    return [name for name, table in tables.items() if not train_only(table).all()]


def _split(tables: Mapping[str, pd.DataFrame], held: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    train = pd.concat([t for n, t in tables.items() if n != held], ignore_index=True)
    return train, tables[held].reset_index(drop=True)


def held_out_aurocs(tables: Mapping[str, pd.DataFrame], recipe: Recipe, model_id: str, seed: int = 0, *,
                    framing: bool = False) -> dict[str, float]:
    """AUROC of ``recipe`` on every held-out data set, trained on the others: of its weights (uncalibrated: AUROC
    needs none), or with ``framing`` of the scores the monitor gives (:func:`~faithwatch.eval.training.monitor_scores`:
    swapped numbers capped, framing lines raised to the out-of-fold threshold; calibrated, so slower)."""
    out = {}
    for held in held_out_names(tables):
        train, test = _split(tables, held)
        det = fit_syncheck(train, recipe, model_id=model_id, seed=seed, calibrate=framing)
        z = raw_scores(det, test)
        p = monitor_scores(det, det.probability(z), test) if framing else z
        out[held] = _auc(test.label.to_numpy(), p)
    return out


def single_signal_scores(train: pd.DataFrame, test: pd.DataFrame, model_id: str, seed: int = 0,
                         lid: bool = False) -> dict[str, np.ndarray]:
    """Every single feature on ``test``, turned so that higher means faithful by its direction on ``train``."""
    features = [f for fam in SINGLE_FAMILIES for f in FAMILIES[fam] if f in train.columns]
    tr, te = train, test
    if lid and hidden_layers_in(train):
        bank = build_bank(train, model_id, seed=seed)
        tr, te = add_lid(train, bank), add_lid(test, bank)
        features += syncheck_features(sorted(bank.layers), ["lid"])
    directions = feature_directions(tr, features)
    return {feature: directions[feature] * te[feature].to_numpy(dtype=np.float64) for feature in features}


def _gain_ci(test: pd.DataFrame, p: np.ndarray, other: np.ndarray, seed: int) -> MetricCI:
    """The detector's AUROC minus another score's on ``test``, with a paired bootstrap interval by response."""
    groups = test["example_id"].to_numpy() if "example_id" in test.columns else None
    return auroc_difference(test.label.to_numpy(), -p, -other, n_boot=GAIN_BOOT, seed=seed, groups=groups)


@dataclass
class HeldOut:
    """What one LOO fold measured."""

    held: str
    n: int
    n_unfaithful: int
    detector: float
    singles: dict[str, float]
    lens: float | None
    threshold: float
    ba_at_threshold: float
    ba_best: float
    false_accept: float
    ba_shifted: float | None = None  # after `calibrate --unlabelled` on the held-out sentences (labels unused)
    gain_vs_align: MetricCI | None = None  # detector AUROC − align_score AUROC, paired bootstrap interval
    best_single: str | None = None  # the single signal with the best AUROC on this set (ties: the first)
    gain_vs_best: MetricCI | None = None  # the detector against it, paired bootstrap interval


def leave_one_out_fold(tables: Mapping[str, pd.DataFrame], held: str, recipe: Recipe, model_id: str, *,
                       seed: int = 0, lens: bool = True, num_layers: int = 0, num_heads: int = 0) -> HeldOut:
    """Train ``recipe`` (calibrated on its own out-of-fold predictions) on all but ``held``; measure on ``held``."""
    train, test = _split(tables, held)
    det = fit_syncheck(train, recipe, model_id=model_id, seed=seed)
    z = raw_scores(det, test)  # once: LID and probe inputs are derived on the way
    p = monitor_scores(det, det.probability(z), test)  # as the monitor scores them
    y = test.label.to_numpy()
    unfaithful = y == 1
    lens_auc = None
    if lens and "lookback_ratio" in test.columns and num_layers:
        fitted = fit_lookback_lens(train, model_id=model_id, num_layers=num_layers, num_heads=num_heads, seed=seed)
        lens_auc = _auc(y, fitted.predict_proba_faithful(lookback_matrix(test)))
    fa = det.false_accept_threshold(CHECK_FALSE_ACCEPT)
    ba_shifted = balanced_accuracy_after_shift(det, test, held, logits=z)
    singles = single_signal_scores(train, test, model_id, seed)
    aurocs = {f: _auc(y, v) for f, v in singles.items()}
    best_single = max(aurocs, key=aurocs.get) if aurocs else None
    return HeldOut(
        held=held, n=len(test), n_unfaithful=int(unfaithful.sum()), detector=_auc(y, p),
        singles=aurocs, lens=lens_auc, threshold=det.threshold,
        ba_at_threshold=weighted_balanced_accuracy(p, unfaithful, det.threshold),
        ba_best=best_balanced_accuracy(p, unfaithful),
        false_accept=float(np.mean(p[unfaithful] >= fa)), ba_shifted=ba_shifted,
        gain_vs_align=_gain_ci(test, p, singles["align_score"], seed) if "align_score" in singles else None,
        best_single=best_single,
        gain_vs_best=None if best_single is None else _gain_ci(test, p, singles[best_single], seed),
    )


def leave_one_out(tables: Mapping[str, pd.DataFrame], recipe: Recipe, model_id: str, *, seed: int = 0,
                  lens: bool = True, num_layers: int = 0, num_heads: int = 0,
                  on_fold: Callable[[str], None] | None = None) -> list[HeldOut]:
    """One :class:`HeldOut` per held-out data set (``on_fold(held)`` after each)."""
    out = []
    for held in held_out_names(tables):
        out.append(leave_one_out_fold(tables, held, recipe, model_id, seed=seed, lens=lens, num_layers=num_layers,
                                      num_heads=num_heads))
        if on_fold:
            on_fold(held)
    return out


def loo_auroc_table(folds: Sequence[HeldOut], detector_name: str) -> pd.DataFrame:
    """Methods (rows) x held-out data sets (columns) AUROC, with the mean and the worst set."""
    rows = {detector_name: {f.held: f.detector for f in folds}}
    if any(f.lens is not None for f in folds):
        rows["Lookback Lens"] = {f.held: f.lens for f in folds}
    for name in folds[0].singles:
        rows[name] = {f.held: f.singles[name] for f in folds}
    table = pd.DataFrame(rows).T
    table["mean"] = table.mean(axis=1)
    table["worst"] = table[[f.held for f in folds]].min(axis=1)
    return table.rename_axis("method").reset_index()


def loo_gain_table(folds: Sequence[HeldOut]) -> pd.DataFrame:
    """Per held-out set: the detector against align_score and the best single signal, and calibration."""
    rows = []
    for f in folds:
        best = f.best_single
        align = f.singles.get("align_score")
        rows.append({
            "held_out": f.held, "n": f.n, "unfaithful": f.n_unfaithful, "detector_auroc": f.detector,
            "align_score_auroc": align, "gain_vs_align": None if align is None else f.detector - align,
            "gain_vs_align_low": None if f.gain_vs_align is None else f.gain_vs_align.low,
            "gain_vs_align_high": None if f.gain_vs_align is None else f.gain_vs_align.high,
            "best_single": best, "best_single_auroc": None if best is None else f.singles[best],
            "gain_vs_best_single": None if best is None else f.detector - f.singles[best],
            "gain_vs_best_single_low": None if f.gain_vs_best is None else f.gain_vs_best.low,
            "gain_vs_best_single_high": None if f.gain_vs_best is None else f.gain_vs_best.high,
            "threshold": f.threshold, "ba_at_threshold": f.ba_at_threshold, "ba_best_threshold": f.ba_best,
            "calibration_cost": f.ba_best - f.ba_at_threshold,
            "calibration_cost_unlabelled_shift": None if f.ba_shifted is None else f.ba_best - f.ba_shifted,
            f"false_accept_at_{CHECK_FALSE_ACCEPT}": f.false_accept,
        })
    return pd.DataFrame(rows)


def target_table(gains: pd.DataFrame) -> pd.DataFrame:
    """The transfer targets read off :func:`loo_gain_table`: for each, the worst held-out set, its value, the target,
    how many sets meet it, and the margin by which the worst set meets (>= 0) or misses (< 0) it."""
    rows = []
    for target, column, need, higher in (
        (f"gain over align_score >= +{TARGET_GAIN}", "gain_vs_align", TARGET_GAIN, True),
        (f"gain over the best single signal >= +{TARGET_GAIN}", "gain_vs_best_single", TARGET_GAIN, True),
        (f"calibration cost <= {TARGET_CALIBRATION_COST}", "calibration_cost", TARGET_CALIBRATION_COST, False),
        (f"calibration cost, unlabelled shift <= {TARGET_CALIBRATION_COST}", "calibration_cost_unlabelled_shift",
         TARGET_CALIBRATION_COST, False),
    ):
        values = pd.to_numeric(gains.set_index("held_out")[column], errors="coerce").dropna() \
            if column in gains else pd.Series(dtype=float)
        if values.empty:
            continue
        worst = values.idxmin() if higher else values.idxmax()
        margin = values[worst] - need if higher else need - values[worst]
        met = int((values >= need).sum() if higher else (values <= need).sum())
        rows.append({"target": target, "worst_set": worst, "worst_value": float(values[worst]),
                     "sets_met": f"{met} of {len(values)}", "margin": float(margin),
                     "status": "met" if margin >= 0 else "missed"})
    return pd.DataFrame(rows)


def transfer_matrix(tables: Mapping[str, pd.DataFrame], recipe: Recipe, model_id: str, seed: int = 0
                    ) -> pd.DataFrame:
    """AUROC of the recipe trained on the row data set and tested on the column one (diagonal: out of fold by
    example, marked in-sample-split)."""
    rows = []
    for a in tables:
        row = {"train": a}
        for b in held_out_names(tables):
            if a == b:
                table = tables[a].reset_index(drop=True)
                row[b] = _auc(table.label.to_numpy(), out_of_fold_logits(table, recipe, model_id, seed))
            else:
                det = fit_syncheck(tables[a], recipe, model_id=model_id, seed=seed, calibrate=False)
                row[b] = _auc(tables[b].label.to_numpy(), raw_scores(det, tables[b]))
        rows.append(row)
    return pd.DataFrame(rows)


def ablation(tables: Mapping[str, pd.DataFrame], recipe: Recipe, model_id: str, seed: int = 0) -> pd.DataFrame:
    """LOO AUROC of the recipe with all its families, and without each family in turn (paper 000 Fig. 3)."""
    families = recipe.families
    settings = {"all": families} | {f"without {f}": tuple(g for g in families if g != f) for f in families
                                    if len(families) > 1}
    rows = []
    for label, families in settings.items():
        variant = with_recipe(recipe, families=families,
                              probe_layers=recipe.probe_layers if "probe" in families else ())
        row = {"features": label, **held_out_aurocs(tables, variant, model_id, seed, framing=True)}
        held = held_out_names(tables)
        row["mean"] = float(np.mean([row[h] for h in held]))
        row["worst"] = float(np.min([row[h] for h in held]))
        rows.append(row)
    return pd.DataFrame(rows)
