"""Per-sentence faithfulness signals. Adding a signal = one module + one entry in :data:`SIGNALS`."""

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

#: signal families by name, in output order (the default set)
SIGNALS = ("likelihood", "entropy", "lid", "contrastive", "influence", "lookback", "alignment", "lexical", "edits",
           "probe")
#: opt-in families
EXTRA_SIGNALS = ("hidden",)
#: families computed from the sentence text and context alone, by name (tables add them after extraction)
TEXT_SIGNALS: dict[str, type[Signal]] = {"lexical": LexicalSignal, "edits": EditSignal}

__all__ = [
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
