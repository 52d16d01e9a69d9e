"""LID features for cached sentences, against a bank built from faithful training sentences."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from faithwatch.signals.lid import LIDBank, lid_mle

BANK_POINTS = 500


def hidden_layers_in(table: pd.DataFrame) -> list[int]:
    """Layers whose hidden states the table holds (columns ``hidden_layer_<l>``)."""
    return sorted(int(c.removeprefix("hidden_layer_")) for c in table.columns if c.startswith("hidden_layer_"))


def build_bank(train: pd.DataFrame, model_id: str, *, k: int = 20, max_points: int = BANK_POINTS,
               seed: int = 0) -> LIDBank:
    """Reference bank: last-token hidden states of (at most ``max_points``) faithful training sentences."""
    faithful = train[train.label == 0]
    if len(faithful) < 2:
        raise ValueError("an LID bank needs at least 2 faithful training sentences")
    pick = np.random.default_rng(seed).permutation(len(faithful))[:max_points]
    layers = {layer: np.stack(faithful[f"hidden_layer_{layer}"].to_numpy()[pick]).astype(np.float32)
              for layer in hidden_layers_in(train)}
    return LIDBank(model_id=model_id, layers=layers, k=k)


def add_lid(table: pd.DataFrame, bank: LIDBank, layers: Sequence[int] | None = None) -> pd.DataFrame:
    """Add ``lid_layer_<l>`` columns (the query point itself, if in the bank, is skipped as a duplicate)."""
    out = table.copy()
    for layer in layers or sorted(bank.layers):
        ref = bank.layers[layer]
        out[f"lid_layer_{layer}"] = [lid_mle(np.asarray(v), ref, bank.k) for v in table[f"hidden_layer_{layer}"]]
    return out
