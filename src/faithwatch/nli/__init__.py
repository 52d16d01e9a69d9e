"""faithwatch's offline entailment model: a MiniLM cross-encoder (LoRA adapter + 3-way head).

* :mod:`~faithwatch.nli.data` - NLI pairs and the licence allow-list of training sources;
* :mod:`~faithwatch.nli.synthetic` - FactCC-style synthetic pairs;
* :mod:`~faithwatch.nli.train` - the training recipe (``faithwatch train-nli``);
* :mod:`~faithwatch.nli.artifact` - saving/loading the adapter with checksums (``load_cross_encoder``);
* :mod:`faithwatch.eval.nli` - ``faithwatch eval-nli`` (in the evaluation package).

As an alignment scorer it is ``nli-minilm`` (:class:`faithwatch.alignment.MiniLMNLIScorer`).
"""

from faithwatch.nli.artifact import SHIPPED_DIR, ArtifactError, load_cross_encoder
from faithwatch.nli.data import LABELS, LICENSED_SOURCES, NLIPair, read_pairs
from faithwatch.nli.model import CrossEncoder

__all__ = ["LABELS", "LICENSED_SOURCES", "SHIPPED_DIR", "ArtifactError", "CrossEncoder", "NLIPair",
           "load_cross_encoder", "read_pairs"]
