"""Decoding strategies that steer generation toward faithful sentences (FOD and baselines).

The built-in strategies are registered here (one line each); their code is in :mod:`.strategies` (the one-beam
ones), :mod:`.fod`, :mod:`.rerank` and :mod:`.lookback_guided`, imported on first use so that the CLI starts without
torch.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from faithwatch import registry
from faithwatch.decoding.types import REFUSAL, REPEATED, DecodingResult, TraceEvent

__all__ = ["REFUSAL", "REPEATED", "DecodingResult", "TraceEvent", "generate", "params_read"]


def _builtin(name: str, module: str = "strategies") -> Any:
    """The strategy function ``name`` of ``faithwatch.decoding.<module>``, imported when first run."""

    def run(job: Any) -> Any:
        return getattr(import_module(f"faithwatch.decoding.{module}"), name)(job)

    run.__name__ = name
    return run


_add = registry.strategies.add
# ``reads``: the DecodingParams fields a strategy uses besides the token budgets (its result lists only those)
_FOD = ("tau1", "tau2", "beams", "samples", "temperature", "coverage", "trim", "no_repeat", "seed")
_SAMPLED = ("samples", "temperature", "no_repeat", "seed")
_add("greedy", _builtin("greedy"), "plain greedy decoding (the baseline)", reads=())
_add("abstain", _builtin("abstain"), "greedy, refusing when a sentence scores low", reads=("abstain_threshold",))
_add("rerank", _builtin("rerank", "rerank"), "S full samples, the one with the best mean sentence score",
     reads=_SAMPLED)
_add("rerank-coverage", _builtin("rerank_coverage", "rerank"),
     "greedy if complete and >= tau1, else it and S samples: fewest open question slots, then best score",
     reads=(*_SAMPLED, "coverage", "tau1"))
_add("cad", _builtin("cad"), "context-aware decoding (fixed alpha)", reads=("alpha",))
_add("adacad", _builtin("adacad"), "CAD with alpha per token from the JS divergence", reads=())
_add("lookback", _builtin("lookback", "lookback_guided"), "chunks chosen by the Lookback Lens (paper 003)",
     defaults={"samples": 8}, reads=(*_SAMPLED, "chunk_tokens"))
_add("fod-bt", _builtin("fod_bt", "fod"), "FOD's backtracking alone: stop at the first low sentence",
     reads=("tau1", "coverage", "trim", "no_repeat"))
_add("fod", _builtin("fod", "fod"), "FOD: backtracking + sentence-level beam search (paper 000)", reads=_FOD)
_add("fod-fallback", _builtin("fod_fallback", "fod"),
     "FOD; before refusing, its search again over AdaCAD, then at the detector's threshold",
     reads=(*_FOD, "last_resort"))
_add("fod-cad", _builtin("fod_cad", "fod"), "FOD's sentence search over the CAD distribution", reads=(*_FOD, "alpha"))
_add("fod-adacad", _builtin("fod_adacad", "fod"), "FOD's sentence search over the AdaCAD distribution", reads=_FOD)


#: the parameters every strategy reads
BUDGETS = ("max_new_tokens", "max_sentence_tokens")


def params_read(strategy: str) -> tuple[str, ...] | None:
    """The :class:`~faithwatch.params.DecodingParams` fields ``strategy`` reads (its registered ``reads`` and the
    token budgets); ``None`` for a plug-in that does not say."""
    reads = registry.strategies.get(strategy).options.get("reads")
    return None if reads is None else (*BUDGETS, *reads)


def __getattr__(name: str) -> Any:
    if name == "generate":
        return import_module("faithwatch.decoding.strategies").generate
    raise AttributeError(f"module 'faithwatch.decoding' has no attribute {name!r}")
