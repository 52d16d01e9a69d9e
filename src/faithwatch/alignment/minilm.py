"""``nli-minilm``: faithwatch's own offline entailment model as an alignment scorer.

The shipped MiniLM cross-encoder (:mod:`faithwatch.nli`) scored AlignScore-style: the context is
cut into sliding windows of whole sentences (from every sentence, as many following sentences as fit
in ``chunk_tokens`` tokens, default 64, and never more than fits next to the sentence in 256), and the
sentence's score is its highest entailment probability over the windows. Short windows suit this small
model better than windows filling its whole input (measured on QAGS-CNNDM, see docs/nli.md). A sentence is read
whole up to the tokens a window leaves (189 of 256); a longer one in windows of whole words, scoring as its weakest.
3-class probabilities of the best window are available through :meth:`probabilities_many` (used by the
claim checkers).
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
        chunk_tokens: maximum tokens of a context window.
        precision: ``fp32``, ``bf16``, ``auto`` (bf16 on CPUs with native bf16) or ``None``:
            ``$FAITHWATCH_NLI_PRECISION``, else fp32 (:func:`faithwatch.nli.model.resolve_precision`).
    """

    name = "nli-minilm"

    def __init__(self, artifact: str | Path | None = None, device: str = "cpu", batch_size: int = 32,
                 precision: str | None = None, chunk_tokens: int = 64) -> None:
        from faithwatch.nli.artifact import load_cross_encoder

        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if chunk_tokens < 8:
            raise ValueError(f"chunk_tokens must be >= 8, got {chunk_tokens}")
        self.chunk_tokens = chunk_tokens
        self.encoder = load_cross_encoder(artifact, device=device, precision=precision)
        #: changes whenever the scores would (feature caches are keyed by it): windowing, adapter weights, and how an
        #: over-long sentence is read ("long2": whole up to the room a window leaves, then in windows, the weakest)
        self.version = f"slide{chunk_tokens}-{str(self.encoder.adapter_sha256)[:12]}+long2"
        self.precision = "bf16" if self.encoder.precision == "bf16" else None
        self._bind(model_id=str(artifact) if artifact is not None else "nli-minilm",
                   name="nli-minilm" if artifact is None else f"nli-minilm:{artifact}", device=device,
                   batch_size=batch_size, tokenizer=self.encoder.tokenizer, model=self.encoder.model,
                   labels=list(LABELS), entailment_index=0, max_length=self.encoder.max_length)

    @property
    def _hypothesis_limit(self) -> int:
        # a sentence is read whole as long as one full context window still fits next to it
        return max(super()._hypothesis_limit, self.max_length - self._n_special - self.chunk_tokens)

    def _budget(self, longest: int) -> int:
        # window budget: chunk_tokens, or less when the sentence leaves less room in the input
        return min(self.chunk_tokens, super()._budget(longest))

    def _pack(self, pieces: list[str], budget: int) -> list[str]:
        """Sliding windows: from every piece, as many following pieces as fit in ``budget`` tokens."""
        sizes = [self.n_tokens(p) + 1 for p in pieces]
        windows: list[str] = []
        for i in range(len(pieces)):
            j, used = i + 1, sizes[i]
            while j < len(pieces) and used + sizes[j] <= budget:
                used += sizes[j]
                j += 1
            window = " ".join(pieces[i:j])
            if not windows or not windows[-1].endswith(window):  # a window inside the previous one adds nothing
                windows.append(window)
        return windows

    def _pair_probabilities(self, premises: list[str], hypotheses: list[str]) -> list[list[float]]:
        return self.encoder.predict_proba(premises, hypotheses, batch_size=self.batch_size).tolist()
