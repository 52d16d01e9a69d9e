"""NLI alignment, AlignScore-style: max entailment probability of the sentence over context chunks.

Any Hugging Face ``AutoModelForSequenceClassification`` NLI model works (local directory or hub
id). The context is split into sentences (pysbd) and greedily packed into chunks that fit the
model together with the sentence; a single context sentence longer than the budget is split by
tokens. Each (premise=chunk, hypothesis=sentence) pair is scored and the sentence's score is the
highest entailment probability over the chunks. A sentence longer than half the model's input is read in
consecutive windows of whole words, each scored so, and the sentence scores as its weakest window: no part of it
goes unread.

Labels come from ``config.id2label``: the entailment label is the one whose lowercase name starts
with ``"entail"`` (so 3-class entailment/neutral/contradiction and 2-class
entailment/not_entailment models both work). Probability dicts use lowercased label names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from faithwatch.alignment.base import AlignmentScorer, clamp01, validate_inputs
from faithwatch.text import split_sentences

#: ``model_max_length`` values at or above this are tokenizer "no limit" sentinels, not real limits
_SANE_MAX = 100_000
#: used when neither the tokenizer nor the config gives a usable maximum length
_FALLBACK_MAX_LENGTH = 512


def find_entailment_index(id2label: dict[int, str] | dict[str, str]) -> int:
    """Index of the entailment class in ``id2label`` (first label whose lowercase name starts with "entail").

    Raises ``ValueError`` naming the labels found when there is none (e.g. ``LABEL_0``/``LABEL_1``).
    """
    labels = {int(i): str(name) for i, name in id2label.items()}
    for idx in sorted(labels):
        if labels[idx].strip().lower().startswith("entail"):
            return idx
    found = ", ".join(f"{i}={labels[i]!r}" for i in sorted(labels))
    raise ValueError(
        f"not an NLI model: no label starting with 'entail' in config.id2label (found: {found}); "
        "use a model fine-tuned for NLI, or fix its config.id2label"
    )


class NLIScorer(AlignmentScorer):
    """Max entailment probability of a sentence over chunks of the context (AlignScore-style).

    Args:
        model: local directory or Hugging Face hub id of a sequence-classification NLI model.
        device: torch device, e.g. ``"cpu"`` or ``"cuda"``.
        batch_size: (chunk, sentence) pairs per forward pass.
        max_length: override of the model's maximum input length in tokens.
        local_files_only: do not contact the hub (a local directory never needs it).

    The model is loaded when the scorer is built, so a bad path or a non-NLI model fails early.
    """

    def __init__(
        self,
        model: str,
        device: str = "cpu",
        batch_size: int = 16,
        max_length: int | None = None,
        local_files_only: bool = False,
    ) -> None:
        if not model or not model.strip():
            raise ValueError("NLIScorer needs a model directory or hub id")
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        from transformers import AutoConfig, AutoModelForSequenceClassification, AutoTokenizer

        from faithwatch.errors import ModelNotAvailableError
        from faithwatch.models.folders import check_model_folder
        from faithwatch.models.quiet import quiet_loading

        check_model_folder(model, "NLI model")  # transformers: "Repo id must be in the form …"
        # check the labels before loading the weights: a non-NLI model should fail fast
        try:
            config = AutoConfig.from_pretrained(model, local_files_only=local_files_only)
        except (OSError, ValueError) as exc:  # no model there, or a hub id that cannot be had offline
            raise ModelNotAvailableError(f"could not load the NLI model {model!r}: {exc}") from None
        entailment_index = find_entailment_index(config.id2label)
        labels = [str(config.id2label[i]).strip().lower() for i in range(config.num_labels)]
        if len(set(labels)) != len(labels):
            raise ValueError(f"{model}: duplicate label names in config.id2label: {config.id2label}")

        tokenizer = AutoTokenizer.from_pretrained(model, local_files_only=local_files_only)
        with quiet_loading():
            loaded = AutoModelForSequenceClassification.from_pretrained(
                model, config=config, local_files_only=local_files_only
            )
        loaded.to(device)
        loaded.eval()
        self._bind(model_id=model, name=f"nli:{model}", device=device, batch_size=batch_size, tokenizer=tokenizer,
                   model=loaded, labels=labels, entailment_index=entailment_index,
                   max_length=max_length if max_length is not None else self._model_max_length(tokenizer, config))

    def _bind(self, *, model_id: str, name: str, device: str, batch_size: int, tokenizer: Any, model: Any,
              labels: list[str], entailment_index: int, max_length: int) -> None:
        """Set up a scorer around an already loaded model and tokenizer (shared by the subclasses)."""
        self.model_id, self.name, self.device, self.batch_size = model_id, name, device, batch_size
        self.tokenizer: Any = tokenizer
        self.model: Any = model
        self.labels: list[str] = labels
        self.entailment_index = entailment_index
        self.max_length = max_length
        self._n_special = int(self.tokenizer.num_special_tokens_to_add(pair=True))
        if self.max_length <= self._n_special + 2:
            raise ValueError(f"max_length {self.max_length} leaves no room for text in {model_id}")
        self._reset_context_cache()

    def _reset_context_cache(self) -> None:
        # per-context cache: chunks by token budget, for the last context seen
        self._ctx_key: str | None = None
        self._ctx_sentences: list[str] = []
        self._chunk_cache: dict[int, list[str]] = {}

    @property
    def entailment_label(self) -> str:
        """Lowercased name of the entailment class."""
        return self.labels[self.entailment_index]

    @staticmethod
    def _model_max_length(tokenizer: Any, config: Any) -> int:
        # the smaller of the sane candidates: e.g. RoBERTa has 514 positions but a 512 limit
        candidates = [
            getattr(tokenizer, "model_max_length", None),
            getattr(config, "max_position_embeddings", None),
        ]
        sane = [int(c) for c in candidates if isinstance(c, int) and 0 < c < _SANE_MAX]
        return min(sane) if sane else _FALLBACK_MAX_LENGTH

    # ---- tokens and chunking ------------------------------------------------------------------

    def n_tokens(self, text: str) -> int:
        """Number of tokens of ``text`` without special tokens."""
        # verbose=False: counting a long text is fine, it is not fed to the model as is
        return len(self.tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    def _token_windows(self, text: str, size: int) -> list[str]:
        """Split ``text`` into consecutive pieces of at most ``size`` tokens (cut at token boundaries)."""
        if size < 1:
            raise ValueError(f"{self.name}: a token window must hold at least one token, got {size}")
        try:
            enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True, verbose=False)
        except NotImplementedError:  # tokenizers without offsets: decode windows of token ids instead
            ids = self.tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]
            return [self.tokenizer.decode(ids[i : i + size]).strip() for i in range(0, len(ids), size)]
        offsets = [tuple(o) for o in enc["offset_mapping"]]
        pieces: list[str] = []
        start = 0
        while start < len(offsets):
            end = min(start + size, len(offsets))
            while True:  # re-tokenising a cut piece can differ by a token: shrink until it fits
                piece = text[offsets[start][0] : offsets[end - 1][1]].strip()
                if end - start <= 1 or self.n_tokens(piece) <= size:
                    break
                end -= 1
            if piece:
                pieces.append(piece)
            start = end
        return pieces

    @property
    def _hypothesis_limit(self) -> int:
        # the longest sentence read whole: at least half of the input stays for the premise
        return (self.max_length - self._n_special) // 2

    def hypotheses(self, sentence: str) -> list[str]:
        """What the model reads of ``sentence``: the sentence, or for one longer than the hypothesis limit its
        consecutive windows of whole words, each judged on its own (the sentence scores as its weakest window)."""
        return self._read(sentence)[0]

    def _read(self, sentence: str) -> tuple[list[str], int]:
        """:meth:`hypotheses` of ``sentence`` and the premise budget left beside its longest window."""
        limit = self._hypothesis_limit
        n = self.n_tokens(sentence)
        if n <= limit:
            return [sentence], self._budget(n)
        windows: list[str] = []
        current = ""
        for word in sentence.split():
            candidate = f"{current} {word}" if current else word
            if self.n_tokens(candidate) <= limit:
                current = candidate
                continue
            if current:
                windows.append(current)
            # a single word over the limit (a long URL): cut at token boundaries
            pieces = [word] if self.n_tokens(word) <= limit else self._token_windows(word, limit)
            windows.extend(pieces[:-1])
            current = pieces[-1]
        if current:
            windows.append(current)
        return windows, self._budget(max(self.n_tokens(w) for w in windows))

    def _budget(self, longest: int) -> int:
        # premise tokens left beside a hypothesis of ``longest`` tokens
        return self.max_length - self._n_special - longest

    def budget_for(self, sentence: str) -> int:
        """Premise token budget left next to ``sentence`` (its longest window): max length - its tokens - special
        tokens."""
        return self._read(sentence)[1]

    def chunks_for(self, sentence: str, context: str) -> list[str]:
        """The context chunks (whole sentences packed greedily) that each fit next to ``sentence``."""
        validate_inputs([sentence], context)
        return self._chunks(context, self.budget_for(sentence))

    def _chunks(self, context: str, budget: int) -> list[str]:
        """The context's sentences (over-long ones cut into token windows) grouped by :meth:`_pack`, cached."""
        if self._ctx_key != context:
            self._ctx_key = context
            self._ctx_sentences = split_sentences(context)
            self._chunk_cache = {}
        if budget not in self._chunk_cache:
            pieces: list[str] = []
            for sent in self._ctx_sentences:
                pieces.extend([sent] if self.n_tokens(sent) <= budget else self._token_windows(sent, budget))
            self._chunk_cache[budget] = self._pack(pieces, budget)
        return self._chunk_cache[budget]

    def _pack(self, pieces: list[str], budget: int) -> list[str]:
        """Consecutive, non-overlapping chunks of whole pieces, each at most ``budget`` tokens (greedy)."""
        chunks: list[str] = []
        current = ""
        for piece in pieces:
            candidate = f"{current} {piece}" if current else piece
            if current and self.n_tokens(candidate) > budget:
                chunks.append(current)
                current = piece
            else:
                current = candidate
        if current:
            chunks.append(current)
        return chunks

    # ---- scoring ------------------------------------------------------------------------------

    def _pair_probabilities(self, premises: list[str], hypotheses: list[str]) -> list[list[float]]:
        import torch

        out: list[list[float]] = []
        with torch.inference_mode():
            for i in range(0, len(premises), self.batch_size):
                enc = self.tokenizer(
                    premises[i : i + self.batch_size],
                    hypotheses[i : i + self.batch_size],
                    truncation="only_first",  # safety net; chunks are already sized to fit
                    max_length=self.max_length,
                    padding=True,
                    return_tensors="pt",
                ).to(self.device)
                logits = self.model(**enc).logits.float()
                probs = torch.softmax(logits, dim=-1)
                if not torch.isfinite(probs).all():
                    raise ValueError(f"{self.name} produced non-finite probabilities")
                out.extend(probs.cpu().tolist())
        return out

    def probabilities_many(self, sentences: Sequence[str], context: str) -> list[dict[str, float]]:
        """Per-label probabilities (lowercased label -> p) of each sentence's best chunk.

        The best chunk is the one with the highest entailment probability.
        """
        sents = validate_inputs(sentences, context)
        return self._best_probabilities([(sent, context) for sent in sents])

    def _best_probabilities(self, pairs: Sequence[tuple[str, str]]) -> list[dict[str, float]]:
        """The best chunk's probabilities of each (sentence, context) pair (of a sentence read in windows, those of
        its weakest window): every (chunk, window) pair of every context in one run of the model, sorted by length
        so that batches hold similar lengths."""
        premises: list[str] = []
        hypotheses: list[str] = []
        owner: list[tuple[int, int]] = []  # (pair index, window index) of each (chunk, window) pair
        order = sorted(range(len(pairs)), key=lambda i: pairs[i][1])  # one context at a time: its chunks cached
        for j in order:
            sent, context = pairs[j]
            windows, budget = self._read(sent)  # tokenised once
            for w, hyp in enumerate(windows):
                for chunk in self._chunks(context, budget):
                    premises.append(chunk)
                    hypotheses.append(hyp)
                    owner.append((j, w))
        if not premises:
            return []
        by_length = sorted(range(len(premises)), key=lambda k: len(premises[k]) + len(hypotheses[k]))
        probs_sorted = self._pair_probabilities([premises[k] for k in by_length], [hypotheses[k] for k in by_length])
        best: dict[tuple[int, int], list[float]] = {}
        for k, probs in zip(by_length, probs_sorted, strict=True):
            cur = best.get(owner[k])
            if cur is None or probs[self.entailment_index] > cur[self.entailment_index]:
                best[owner[k]] = probs
        weakest: list[list[float] | None] = [None] * len(pairs)
        for (j, _w), probs in best.items():
            cur = weakest[j]
            if cur is None or probs[self.entailment_index] < cur[self.entailment_index]:
                weakest[j] = probs
        return [{label: clamp01(p) for label, p in zip(self.labels, b or [], strict=True)} for b in weakest]

    def score_many(self, sentences: Sequence[str], context: str) -> list[float]:
        """Max entailment probability of each sentence over the context chunks, in [0, 1]."""
        return [p[self.entailment_label] for p in self.probabilities_many(sentences, context)]

    def score_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """:meth:`score_many` for pairs with different contexts, all in one batched run of the model."""
        for sentence, context in pairs:
            validate_inputs([sentence], context)
        return [p[self.entailment_label] for p in self._best_probabilities(pairs)]
