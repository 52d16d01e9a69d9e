"""Training SynCheck aggregators and Lookback Lenses on cached, labelled features."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score

from faithwatch.detectors.aggregator import SynCheckDetector
from faithwatch.detectors.lookback_lens import LookbackLens
from faithwatch.eval.lid_features import add_lid, build_bank, hidden_layers_in

#: SynCheck feature families (paper 000 Table 4); "lid" stands for every lid_layer_<l> column
FAMILIES: dict[str, tuple[str, ...]] = {
    "likelihood": ("min_prob", "mean_prob"),
    "uncertainty": ("max_entropy", "mean_entropy", "lid"),
    "context_influence": ("mean_contrastive_kl", "large_kl_pos"),
    "alignment": ("align_score",),
}


def syncheck_features(layers: Sequence[int], families: Sequence[str] | None = None) -> list[str]:
    """Feature names of the chosen families, LID expanded to the given layers."""
    names: list[str] = []
    for family in families or FAMILIES:
        for f in FAMILIES[family]:
            names += [f"lid_layer_{layer}" for layer in layers] if f == "lid" else [f]
    return names


def training_summary(train: pd.DataFrame) -> list[str]:
    """'dataset: n sentences (k unfaithful)' lines recorded in artifacts."""
    return [f"{ds}: {len(g)} sentences ({int(g.label.sum())} unfaithful)" for ds, g in train.groupby("dataset")]


def feature_directions(table: pd.DataFrame, names: Sequence[str]) -> dict[str, int]:
    """+1 where a higher value means more faithful on this (training) table, else -1."""
    out = {}
    for name in names:
        auc = roc_auc_score(table.label, table[name])  # AUROC of "value predicts unfaithful"
        out[name] = -1 if auc > 0.5 else 1
    return out


def fit_syncheck(
    train: pd.DataFrame, kind: str, *, model_id: str, seed: int = 0, families: Sequence[str] | None = None,
    lid: bool = True,
) -> SynCheckDetector:
    """Fit an aggregator; with the uncertainty family (and ``lid``), a LID bank of faithful training sentences
    is built. Paper 000 A.1 drops LID for summarisation-style data, where it did not help."""
    layers = hidden_layers_in(train)
    use_lid = lid and "uncertainty" in (families or FAMILIES) and bool(layers)
    bank = build_bank(train, model_id, seed=seed) if use_lid else None
    table = add_lid(train, bank) if bank else train
    names = syncheck_features(layers if use_lid else [], families)
    detector = SynCheckDetector.fit(
        table[names].to_numpy(dtype=np.float64), table.label.to_numpy(), names, kind,
        model_id=model_id, layers={"lid": list(layers) if use_lid else []},
        training_data=training_summary(train), seed=seed, lid_bank=bank,
    )
    detector.meta.metrics["feature_directions"] = feature_directions(table, names)
    return detector


def syncheck_scores(detector: SynCheckDetector, table: pd.DataFrame) -> np.ndarray:
    """P(faithful) per row (LID computed against the detector's bank)."""
    if detector.lid_bank is not None:
        table = add_lid(table, detector.lid_bank, detector.meta.layers.get("lid"))
    return detector.predict_proba_faithful(table[detector.meta.feature_names].to_numpy(dtype=np.float64))


def lookback_matrix(table: pd.DataFrame) -> np.ndarray:
    """Stack the flattened lookback-ratio vectors of a table."""
    return np.stack(table.lookback_ratio.to_numpy()).astype(np.float64)


def fit_lookback_lens(
    train: pd.DataFrame, *, model_id: str, num_layers: int, num_heads: int, mode: str = "span", seed: int = 0
) -> LookbackLens:
    """Lookback Lens (paper 003): logistic regression on averaged lookback ratios of spans or 8-token windows."""
    return LookbackLens.fit(
        lookback_matrix(train), train.label.to_numpy(), num_layers=num_layers, num_heads=num_heads,
        model_id=model_id, mode=mode, training_data=training_summary(train), seed=seed,
    )
