"""Sentence-vs-context alignment scorers (the "semantic alignment" signal, ``align_score`` in [0, 1]).

Use :func:`get_scorer` to build one from a spec string:

* ``"lexical"`` - surface overlap (numbers, entities, content words, bigrams), no model;
* ``"embedding"`` - max cosine similarity with the context's sentences (packaged MiniLM);
* ``"nli-minilm"`` - max entailment probability of faithwatch's shipped MiniLM NLI model over sliding
  context windows (offline; ``"nli-minilm:<artifact-dir>"`` for another trained adapter);
* scorer names joined with ``+`` give their equally weighted mean: ``"nli-minilm+lexical+embedding"`` is the
  default (it checks support, and beat ``"lexical+embedding"`` and ``"nli-minilm"`` alone on QAGS, BEGIN and
  FaithBench; docs/nli.md); ``"lexical+embedding"`` is the model-free relatedness baseline;
* ``"nli:<path-or-hub-id>"`` - max entailment probability of a Hugging Face NLI model over context chunks;
* ``"none"`` - no alignment scoring (``get_scorer`` returns ``None``).
"""

from __future__ import annotations

from faithwatch.alignment.base import AlignmentScorer, validate_inputs
from faithwatch.alignment.combined import CombinedScorer
from faithwatch.alignment.embedding import EmbeddingScorer
from faithwatch.alignment.lexical import NEUTRAL_SCORE, LexicalScorer
from faithwatch.alignment.minilm import MiniLMNLIScorer
from faithwatch.alignment.nli import NLIScorer

#: the scorer used when the user does not choose one
DEFAULT_SCORER = "nli-minilm+lexical+embedding"
#: the spec strings :func:`get_scorer` accepts (``nli:`` takes a model path or hub id after the colon)
VALID_SPECS = ("nli-minilm+lexical+embedding", "nli-minilm", "lexical", "embedding", "lexical+embedding",
               "nli:<path-or-hub-id>", "none")

__all__ = [
    "DEFAULT_SCORER",
    "NEUTRAL_SCORE",
    "VALID_SPECS",
    "AlignmentScorer",
    "CombinedScorer",
    "EmbeddingScorer",
    "LexicalScorer",
    "MiniLMNLIScorer",
    "NLIScorer",
    "get_scorer",
    "validate_inputs",
]


def get_scorer(spec: str = DEFAULT_SCORER, device: str = "cpu") -> AlignmentScorer | None:
    """Build the alignment scorer named by ``spec`` (see :data:`VALID_SPECS`); ``"none"`` gives ``None``.

    Raises ``ValueError`` for an unknown spec or an ``nli:`` spec without a model.
    """
    if not isinstance(spec, str):
        raise TypeError(f"scorer spec must be a str, got {type(spec).__name__}")
    key = spec.strip()
    if key.lower() == "nli-minilm":
        return MiniLMNLIScorer(device=device)
    if key.lower().startswith("nli-minilm:"):
        return MiniLMNLIScorer(key[len("nli-minilm:"):].strip(), device=device)
    if key.lower().startswith("nli:"):
        model = key[4:].strip()  # paths/hub ids are case-sensitive: keep them as given
        if not model:
            raise ValueError("the 'nli:' scorer needs a model, e.g. 'nli:/path/to/model' or 'nli:<hub-id>'")
        return NLIScorer(model, device=device)
    key = key.lower()
    if key == "none":
        return None
    if key == "lexical":
        return LexicalScorer()
    if key == "embedding":
        return EmbeddingScorer(device=device)
    if "+" in key:  # e.g. "lexical+embedding", "nli-minilm+lexical": the equally weighted mean of the parts
        parts = [p.strip() for p in key.split("+")]
        if len(parts) < 2 or any(not p or p == "none" or "+" in p for p in parts):
            raise ValueError(f"bad combined scorer {spec!r}: join two or more scorer names with '+'")
        return CombinedScorer([get_scorer(p, device=device) for p in parts])  # type: ignore[misc]
    raise ValueError(f"unknown alignment scorer {spec!r}; valid: {', '.join(VALID_SPECS)}")
