"""Per-sentence faithfulness signals. Adding a signal = one module + one ``registry.signals.add`` line below.

Each entry's object builds the signal from a :class:`SignalContext` (what the monitor knows); ``default=True``
families are computed unless the user chooses, ``text=True`` families need only the sentence and its context
(the text-only tables add them), ``model_free=True`` families read no model output (a monitor with only these
scores a given response without running the model).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from faithwatch import registry
from faithwatch.errors import InputError

# the signal classes live in their modules, imported on first use (so the CLI starts without torch)
_HOMES = {
    "AlignmentSignal": "alignment", "FeatureValue": "base", "SentenceTrace": "base", "Signal": "base",
    "ContrastiveSignal": "contrastive", "EditSignal": "edits", "EntropySignal": "entropy",
    "HiddenStateSignal": "hidden", "InfluenceSignal": "influence", "LexicalSignal": "lexical", "LIDBank": "lid",
    "LIDSignal": "lid", "default_lid_layers": "lid", "lid_mle": "lid", "LikelihoodSignal": "likelihood",
    "LookbackSignal": "lookback", "HiddenProbe": "probe", "ProbeSignal": "probe", "UpstreamToken": "base",
    "UpstreamSignal": "upstream", "TaggerSignal": "tagger",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(import_module(f"faithwatch.signals.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'faithwatch.signals' has no attribute {name!r}")


def _cls(name: str) -> Any:
    return __getattr__(name)


@dataclass(frozen=True)
class SignalContext:
    """What a signal factory may need from the monitor."""

    layers: tuple[int, ...] = ()
    lid_bank: Any = None
    alignment: Any = None
    probe: Any = None
    hidden_layers: tuple[int, ...] = ()
    device: str = "cpu"  # where text models (the LSS tagger) run


_add = registry.signals.add
_add("likelihood", lambda c: _cls("LikelihoodSignal")(), "token log-probabilities", default=True)
_add("entropy", lambda c: _cls("EntropySignal")(), "predictive entropy", default=True)
_add("lid", lambda c: _cls("LIDSignal")(c.layers, c.lid_bank), "local intrinsic dimension (needs --lid-bank)",
     default=True)
_add("contrastive", lambda c: _cls("ContrastiveSignal")(), "KL between with- and without-context predictions",
     default=True)
_add("influence", lambda c: _cls("InfluenceSignal")(), "signed pointwise context influence", default=True)
_add("lookback", lambda c: _cls("LookbackSignal")(), "attention lookback ratios", default=True, vectors=True)
_add("alignment", lambda c: _cls("AlignmentSignal")(c.alignment), "align_score of the alignment scorer",
     default=True, model_free=True)
_add("lexical", lambda c: _cls("LexicalSignal")(), "lexical evidence (novel numbers, entities, ...)", default=True,
     text=True, model_free=True)
_add("edits", lambda c: _cls("EditSignal")(), "near-copy edits of a context sentence", default=True, text=True,
     model_free=True)
_add("tagger", lambda c: _cls("TaggerSignal")(device=c.device), "word support of the LSS tagger (weakest word)",
     default=True, text=True, model_free=True)
_add("probe", lambda c: _cls("ProbeSignal")(c.probe), "the detector's hidden-state probe", default=True)
_add("api", lambda c: _cls("UpstreamSignal")(), "a served model's reported log-probabilities (faithwatch proxy)",
     default=False, model_free=True)
_add("hidden", lambda c: _cls("HiddenStateSignal")(c.layers, c.hidden_layers), "raw hidden states (opt-in)",
     default=False, vectors=True)


def default_signals() -> tuple[str, ...]:
    """The families computed unless the user chooses, in output order."""
    return registry.signals.names(default=True)


def is_model_free(name: str) -> bool:
    """Whether the signal family ``name`` reads no model output."""
    return bool(registry.signals.get(name).options.get("model_free"))


def emits_vectors(name: str) -> bool:
    """Whether the signal family ``name`` gives vectors (a report's ``vectors``: lookback ratios, hidden states)."""
    return bool(registry.signals.get(name).options.get("vectors"))


def model_free_signals() -> tuple[str, ...]:
    """The default families that read no model output (``--signals text``): teacher forcing skips the model."""
    return tuple(n for n in default_signals() if is_model_free(n))


def text_signals() -> tuple[str, ...]:
    """The families computed from the sentence text and context alone."""
    return registry.signals.names(text=True)


def signal_versions(families: Sequence[str]) -> dict[str, str]:
    """``{"<family>_version": version}`` of the text signals among ``families`` that declare a version (the LSS
    tagger, the near-copy edits): what a detector trained on them records, and a monitor checks."""
    built = build_signals([f for f in families if f in text_signals()], SignalContext())
    return {f"{s.name}_version": s.version for s in built if getattr(s, "version", None)}


def parse_signals(spec: str) -> list[str]:
    """The families of a comma-separated ``spec`` (``"alignment, lexical"``), each once, in the given order;
    ``text`` stands for :func:`model_free_signals`. A spec that names none (``""``, ``" , "``) is an
    :class:`InputError`: leaving the choice out means the default, an empty one is a mistake."""
    chosen: list[str] = []
    for name in (s.strip() for s in spec.split(",")):
        for family in (model_free_signals() if name == "text" else [name] if name else []):
            if family not in chosen:
                chosen.append(family)
    if not chosen:
        raise InputError(f"signals {spec!r} names no signal family: leave it out for the default "
                         f"({','.join(default_signals())}), or name some")
    return chosen


def check_known(names: Sequence[str]) -> None:
    """An unknown signal family among ``names`` is an :class:`InputError` that lists them all."""
    unknown = sorted(set(names) - set(registry.signals))
    if unknown:
        raise InputError(f"unknown signals {unknown}; available: {', '.join(registry.signals)} (on the command line "
                         "also 'text': the families read from the text alone)")


def build_signals(names: Sequence[str], ctx: SignalContext) -> list[Any]:
    """The signals named in ``names``, in registry order; an unknown name is an :class:`InputError`."""
    check_known(names)
    return [registry.signals.get(n).obj(ctx) for n in registry.signals if n in names]


__all__ = [
    "SignalContext",
    "build_signals",
    "check_known",
    "emits_vectors",
    "parse_signals",
    "signal_versions",
    "default_signals",
    "text_signals",
    "model_free_signals",
    "is_model_free",
    "HiddenProbe",
    "HiddenStateSignal",
    "InfluenceSignal",
    "AlignmentSignal",
    "ContrastiveSignal",
    "EditSignal",
    "EntropySignal",
    "FeatureValue",
    "LIDBank",
    "LIDSignal",
    "LexicalSignal",
    "LikelihoodSignal",
    "LookbackSignal",
    "ProbeSignal",
    "SentenceTrace",
    "Signal",
    "TaggerSignal",
    "default_lid_layers",
    "lid_mle",
]
