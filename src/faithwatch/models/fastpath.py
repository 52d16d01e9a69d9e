"""CPU fast path for the few-row matrix products of decoding.

On some CPUs, ``F.linear`` with 2-8 input rows (the RAG row and its no-context twin) runs far below memory
bandwidth and the same product computed as ``W @ x.T`` uses a better BLAS kernel (measured on one 2-core host:
the 576x49152 output projection with 2 rows, 14 ms -> 2.4 ms); on others it is the reverse (an AMX host:
3.8 ms -> 11.5 ms). So the path is chosen by timing both on the model's own largest and most common layer shapes
when the model is loaded (:func:`few_row_path_pays`), unless ``FAITHWATCH_FAST_LINEAR`` says ``1`` (always) or
``0`` (never). Only the Linear layers of a model that faithwatch loads are patched, only on CPU, only for inputs
of at most ``MAX_ROWS`` rows; results are the same product up to float rounding.
"""

from __future__ import annotations

import os
import time
import types
from collections import Counter

import torch

MAX_ROWS = 8
#: environment variable: ``1`` patches without timing, ``0`` never patches, unset (or ``auto``) times both paths
ENV = "FAITHWATCH_FAST_LINEAR"
#: the patched path must be at least this much faster (time ratio) to be used
MARGIN = 0.9


def _few_row_linear(self: torch.nn.Linear, x: torch.Tensor) -> torch.Tensor:
    rows = x.numel() // x.shape[-1]
    if 1 < rows <= MAX_ROWS and x.device.type == "cpu" and not torch.is_grad_enabled():
        out = torch.mm(self.weight, x.reshape(rows, -1).t()).t()
        if self.bias is not None:
            out = out + self.bias
        return out.reshape(*x.shape[:-1], self.weight.shape[0])
    return torch.nn.functional.linear(x, self.weight, self.bias)


def _linears(model: torch.nn.Module) -> list[torch.nn.Linear]:
    return [m for m in model.modules() if type(m) is torch.nn.Linear]


def _seconds(layer: torch.nn.Linear, x: torch.Tensor, fast: bool, repeats: int) -> float:
    run = (lambda: _few_row_linear(layer, x)) if fast else (lambda: torch.nn.functional.linear(x, layer.weight,
                                                                                                layer.bias))
    run()  # warm-up: kernel selection
    start = time.perf_counter()
    for _ in range(repeats):
        run()
    return time.perf_counter() - start


def few_row_path_pays(model: torch.nn.Module, rows: int = 2, repeats: int = 5) -> bool:
    """Whether ``W @ x.T`` beats ``F.linear`` for ``rows`` input rows on this CPU, timed on the model's largest
    Linear layer and its most common shape (each layer's share of the time weighted by how often it occurs)."""
    layers = _linears(model)
    if not layers:
        return False
    shapes = Counter(tuple(m.weight.shape) for m in layers)
    common = shapes.most_common(1)[0][0]
    largest = max(shapes, key=lambda s: s[0] * s[1])
    plain = fast = 0.0
    with torch.inference_mode():
        for shape in {common, largest}:
            layer = next(m for m in layers if tuple(m.weight.shape) == shape)
            x = torch.randn(rows, shape[1], dtype=layer.weight.dtype)
            weight = shapes[shape]
            plain += weight * _seconds(layer, x, False, repeats)
            fast += weight * _seconds(layer, x, True, repeats)
    return fast < MARGIN * plain


def enable_cpu_fast_linear(model: torch.nn.Module, force: bool | None = None) -> int:
    """Patch the model's Linear layers (CPU inference only) when the few-row path pays on this CPU; returns how many
    were patched. ``force``: ``True`` / ``False`` skips the timing (default: :data:`ENV`, else timed)."""
    if force is None:
        setting = os.environ.get(ENV, "auto").strip().lower()
        force = {"1": True, "0": False}.get(setting)
    if force is False or (force is None and not few_row_path_pays(model)):
        return 0
    layers = _linears(model)
    for module in layers:
        module.forward = types.MethodType(_few_row_linear, module)
    return len(layers)
