"""Per-sentence faithfulness signals. Adding a signal = one module + one ``registry.signals.add`` line below.

Each entry's object builds the signal from a :class:`SignalContext` (what the monitor knows); ``default=True``
families are computed unless the user chooses, ``text=True`` families need only the sentence and its context.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from faithwatch import registry
from faithwatch.errors import InputError
from faithwatch.signals.alignment import AlignmentSignal
from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal
from faithwatch.signals.contrastive import ContrastiveSignal
from faithwatch.signals.edits import EditSignal
from faithwatch.signals.entropy import EntropySignal
from faithwatch.signals.hidden import HiddenStateSignal
from faithwatch.signals.influence import InfluenceSignal
from faithwatch.signals.lexical import LexicalSignal
from faithwatch.signals.lid import LIDBank, LIDSignal, default_lid_layers, lid_mle
from faithwatch.signals.likelihood import LikelihoodSignal
from faithwatch.signals.lookback import LookbackSignal
from faithwatch.signals.probe import HiddenProbe, ProbeSignal


@dataclass(frozen=True)
class SignalContext:
    """What a signal factory may need from the monitor."""

    layers: tuple[int, ...] = ()
    lid_bank: LIDBank | None = None
    alignment: Any = None
    probe: Any = None
    hidden_layers: tuple[int, ...] = ()


_add = registry.signals.add
_add("likelihood", lambda c: LikelihoodSignal(), "token log-probabilities", default=True)
_add("entropy", lambda c: EntropySignal(), "predictive entropy", default=True)
_add("lid", lambda c: LIDSignal(c.layers, c.lid_bank), "local intrinsic dimension (needs --lid-bank)", default=True)
_add("contrastive", lambda c: ContrastiveSignal(), "KL between with- and without-context predictions", default=True)
_add("influence", lambda c: InfluenceSignal(), "signed pointwise context influence", default=True)
_add("lookback", lambda c: LookbackSignal(), "attention lookback ratios", default=True)
_add("alignment", lambda c: AlignmentSignal(c.alignment), "align_score of the alignment scorer", default=True)
_add("lexical", lambda c: LexicalSignal(), "lexical evidence (novel numbers, entities, ...)", default=True,
     text=True)
_add("edits", lambda c: EditSignal(), "near-copy edits of a context sentence", default=True, text=True)
_add("probe", lambda c: ProbeSignal(c.probe), "the detector's hidden-state probe", default=True)
_add("hidden", lambda c: HiddenStateSignal(c.layers, c.hidden_layers), "raw hidden states (opt-in)",
     default=False)


def default_signals() -> tuple[str, ...]:
    """The families computed unless the user chooses, in output order."""
    return registry.signals.names(default=True)


def text_signals() -> tuple[str, ...]:
    """The families computed from the sentence text and context alone."""
    return registry.signals.names(text=True)


def build_signals(names: Sequence[str], ctx: SignalContext) -> list[Signal]:
    """The signals named in ``names``, in registry order; an unknown name is an :class:`InputError`."""
    unknown = sorted(set(names) - set(registry.signals))
    if unknown:
        raise InputError(f"unknown signals {unknown}; available: {', '.join(registry.signals)}")
    return [registry.signals.get(n).obj(ctx) for n in registry.signals if n in names]


#: the built-in default set, opt-in families and text families (the registry is the source; these are snapshots)
SIGNALS = default_signals()
EXTRA_SIGNALS = registry.signals.names(default=False)
TEXT_SIGNALS = text_signals()

__all__ = [
    "SignalContext",
    "build_signals",
    "default_signals",
    "text_signals",
    "EXTRA_SIGNALS",
    "SIGNALS",
    "TEXT_SIGNALS",
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
    "default_lid_layers",
    "lid_mle",
]
