"""Per-sentence faithfulness signals. Adding a signal = one module + one entry in :data:`SIGNALS`."""

from faithwatch.signals.alignment import AlignmentSignal
from faithwatch.signals.base import FeatureValue, SentenceTrace, Signal
from faithwatch.signals.contrastive import ContrastiveSignal
from faithwatch.signals.entropy import EntropySignal
from faithwatch.signals.hidden import HiddenStateSignal
from faithwatch.signals.lid import LIDBank, LIDSignal, default_lid_layers, lid_mle
from faithwatch.signals.likelihood import LikelihoodSignal
from faithwatch.signals.lookback import LookbackSignal

#: signal families by name, in output order (the default set)
SIGNALS = ("likelihood", "entropy", "lid", "contrastive", "lookback", "alignment")
#: opt-in families
EXTRA_SIGNALS = ("hidden",)

__all__ = [
    "EXTRA_SIGNALS",
    "SIGNALS",
    "HiddenStateSignal",
    "AlignmentSignal",
    "ContrastiveSignal",
    "EntropySignal",
    "FeatureValue",
    "LIDBank",
    "LIDSignal",
    "LikelihoodSignal",
    "LookbackSignal",
    "SentenceTrace",
    "Signal",
    "default_lid_layers",
    "lid_mle",
]
