"""``nli-minilm``: faithwatch's own offline entailment model as an alignment scorer.

The shipped MiniLM cross-encoder (:mod:`faithwatch.nli`) scored AlignScore-style: the context is
packed into windows that fit next to the sentence (256 tokens in all), and the sentence's score is
its highest entailment probability over the windows. 3-class probabilities of the best window are
available through :meth:`probabilities_many` (used by the claim checkers).
"""

from __future__ import annotations

from pathlib import Path

from faithwatch.alignment.nli import NLIScorer
from faithwatch.nli.data import LABELS


class MiniLMNLIScorer(NLIScorer):
    """Entailment scorer on the shipped ``nli-minilm`` adapter (or another faithwatch NLI artifact).

    Args:
        artifact: an NLI artifact folder (default: the one inside the package).
        device: torch device.
        batch_size: (window, sentence) pairs per forward pass.
        precision: ``auto`` (bf16 on CPUs with native bf16, else fp32), ``fp32`` or ``bf16``.
    """

    name = "nli-minilm"

    def __init__(self, artifact: str | Path | None = None, device: str = "cpu", batch_size: int = 32,
                 precision: str = "auto") -> None:
        from faithwatch.nli.artifact import load_cross_encoder

        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.encoder = load_cross_encoder(artifact, device=device, precision=precision)
        self.model_id = str(artifact) if artifact is not None else "nli-minilm"
        self.name = "nli-minilm" if artifact is None else f"nli-minilm:{artifact}"
        self.device = device
        self.batch_size = batch_size
        self.labels = list(LABELS)
        self.entailment_index = 0
        self.tokenizer = self.encoder.tokenizer
        self.model = self.encoder.model
        self.max_length = self.encoder.max_length
        self._n_special = int(self.tokenizer.num_special_tokens_to_add(pair=True))
        self._ctx_key = None
        self._ctx_sentences = []
        self._chunk_cache = {}

    def _pair_probabilities(self, premises: list[str], hypotheses: list[str]) -> list[list[float]]:
        return self.encoder.predict_proba(premises, hypotheses, batch_size=self.batch_size).tolist()
