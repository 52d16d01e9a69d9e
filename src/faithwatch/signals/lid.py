"""Local intrinsic dimension (LID-MLE, Levina & Bickel 2004) of a sentence's last hidden state.

Paper 000 A.1: the hidden state of the sentence's last token at layer l is compared with a reference
bank of hidden states collected the same way from labelled (faithful) training sentences. With no
bank the feature is *absent* (``None``), never 0.
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
from faithwatch.errors import InputError, NonFiniteError
from faithwatch.models.records import Needs
from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal

#: default layers as fractions of depth (paper 000 used layers 15-17 of 32)
DEFAULT_LID_FRACTIONS = (0.47, 0.5, 0.53)


def default_lid_layers(num_layers: int, fractions: Iterable[float] = DEFAULT_LID_FRACTIONS) -> tuple[int, ...]:
    """1-based middle layers of a model with ``num_layers`` decoder layers."""
    return tuple(sorted({min(num_layers, max(1, round(f * num_layers))) for f in fractions}))


def lid_mle(point: np.ndarray, bank: np.ndarray, k: int) -> float:
    """LID-MLE of ``point`` against ``bank`` from its ``k`` nearest neighbours (exact duplicates skipped).

    ``1 / ((1/(k-1)) * sum_{j<k} log(r_k / r_j))`` with ``r_1 <= ... <= r_k`` the neighbour distances.
    """
    dist = np.sqrt(((bank.astype(np.float64) - point.astype(np.float64)) ** 2).sum(axis=1))
    dist = np.sort(dist[dist > 1e-12])
    k = min(k, len(dist))
    if k < 2:
        raise InputError(f"LID needs at least 2 distinct reference points, the bank has {len(dist)}")
    r = dist[:k]
    total = np.log(r[-1] / r[:-1]).sum()
    if not total > 0:
        raise NonFiniteError("LID is undefined: the k nearest reference points are all equidistant")
    return float((k - 1) / total)


@dataclass
class LIDBank:
    """Reference hidden states per layer, recorded with one model."""

    model_id: str
    layers: dict[int, np.ndarray]  # 1-based layer -> [n, d]
    k: int = 20

    def save(self, path: str | Path) -> None:
        """Write the bank as safetensors with its model id, k and layers."""
        meta = {"model_id": self.model_id, "k": str(self.k), "faithwatch_version": __version__,
                "layers": json.dumps(sorted(self.layers))}
        save_safetensors({f"layer_{layer}": np.ascontiguousarray(v, dtype=np.float32)
                          for layer, v in self.layers.items()}, path, meta)
        shareable(path)

    @classmethod
    def load(cls, path: str | Path, expect_model_id: str | None = None) -> LIDBank:
        """Read a bank written by :meth:`save`, refusing one built for another model (and a path that holds no
        bank, with an :class:`InputError`)."""
        meta = safetensors_metadata(path, "LID bank")
        if "model_id" not in meta:
            raise InputError(f"{path} is not a faithwatch LID bank (no model_id in its metadata)")
        if expect_model_id is not None and meta["model_id"] != expect_model_id:
            raise InputError(
                f"LID bank {path} was recorded with model '{meta['model_id']}', but the monitor runs "
                f"'{expect_model_id}': hidden states of different models are not comparable."
            )
        arrays = load_file(str(path))
        layers = {int(name.removeprefix("layer_")): arr for name, arr in arrays.items()}
        return cls(model_id=meta["model_id"], layers=layers, k=int(meta.get("k", 20)))


class LIDSignal(Signal):
    """Emits ``lid_layer_<l>`` for each configured layer (``None`` where the bank lacks the layer)."""

    name = "lid"

    def __init__(self, layers: Sequence[int], bank: LIDBank | None = None) -> None:
        self.layers = tuple(layers)
        self.bank = bank
        if bank is not None:
            for layer in self.layers:
                if layer in bank.layers and bank.layers[layer].ndim != 2:
                    raise InputError(f"LID bank layer {layer} must be a 2-D array [n, d]")

    @property
    def needs(self) -> Needs:
        """The hidden states of the bank's layers."""
        return Needs(hidden_layers=self.layers)

    @property
    def feature_names(self) -> list[str]:
        """One LID per layer."""
        return [f"lid_layer_{layer}" for layer in self.layers]

    def compute(self, trace: SentenceTrace) -> dict[str, FeatureValue]:
        """The LID of the sentence's last hidden state against the bank, per layer (None without a bank)."""
        out: dict[str, FeatureValue] = {name: None for name in self.feature_names}
        if self.bank is None:
            return out
        hidden = trace.last_hidden
        recorded = trace.records.hidden_layers
        for layer in self.layers:
            ref = self.bank.layers.get(layer)
            if ref is None:
                continue
            vec = hidden[recorded.index(layer)]
            if ref.shape[1] != vec.shape[0]:
                raise InputError(f"LID bank layer {layer} has dimension {ref.shape[1]}, the model {vec.shape[0]}")
            out[f"lid_layer_{layer}"] = lid_mle(vec, ref, self.bank.k)
        return out
