"""The LSS tagger: for every word of a claim, the probability that a reference supports it (paper 004's LSS).

A token-classification head and a LoRA adapter on the MiniLM encoder, started from the shipped NLI model
(``nli-minilm``'s merged weights), trained on human LSS annotations (:mod:`faithwatch.nli.tagger_train`). Input:
``[CLS] claim words [SEP] reference window [SEP]``; each claim word is read at its first sub-token. A reference
longer than the model's input is cut into overlapping windows and a word takes its best window.

The artifact (``faithwatch_lss_tagger.json`` + the peft adapter files) records the base weights' and the NLI
adapter's sha256; loading refuses other ones, a changed file or another format, with a message saying which.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from faithwatch.checksums import file_sha256
from faithwatch.errors import InputError, ModelNotAvailableError
from faithwatch.nli.artifact import (
    ADAPTER_FILES,
    ArtifactError,
    check_files,
    checked_base,
    load_cross_encoder,
    load_meta,
    write_adapter,
    write_json,
)
from faithwatch.nli.artifact import SHIPPED_DIR as NLI_DIR
from faithwatch.nli.model import LORA_TARGETS, resolve_precision

FORMAT = "faithwatch-lss-tagger/1"
META_FILE = "faithwatch_lss_tagger.json"
#: the tagger shipped inside the package
SHIPPED_DIR = Path(__file__).parent / "lss_tagger"
#: a claim needs at least this many tokens of reference next to it in one window
MIN_REFERENCE_TOKENS = 32
#: fixed (claim, reference) pairs whose word probabilities every artifact records
REFERENCE_PAIRS = (
    ("The tower was completed in 1889 and is 330 metres tall.",
     "The Eiffel Tower was completed in 1889. It is 330 metres tall and stands in Paris."),
    ("Revenue rose 12 percent to 9 billion dollars in 2021.",
     "Revenue rose 12 percent to 4.2 billion dollars in 2023, the company said."),
)


@dataclass
class TaggerMeta:
    """What ``faithwatch_lss_tagger.json`` records."""

    name: str
    max_length: int
    base_package: str
    base_sha256: str
    nli_adapter_sha256: str
    lora: dict[str, Any]
    files: dict[str, str]
    threshold: float = 0.5
    format: str = FORMAT
    faithwatch_version: str = ""
    training: dict[str, Any] = field(default_factory=dict)
    evaluation: dict[str, Any] = field(default_factory=dict)
    reference_predictions: list[dict[str, Any]] = field(default_factory=list)


def build_model(base_dir: str | Path, nli_dir: str | Path, verify_base: bool = True) -> tuple[Any, Any]:
    """Tokenizer and a 1-label ``BertForTokenClassification`` whose encoder is the merged NLI model (head new)."""
    from transformers import AutoModelForTokenClassification

    from faithwatch.models.quiet import quiet_loading

    nli = load_cross_encoder(nli_dir, base_dir=base_dir, precision="fp32", verify_base=verify_base)
    with quiet_loading(errors_only=True):  # the new head and the unused pooler are expected
        model = AutoModelForTokenClassification.from_pretrained(str(base_dir), num_labels=1)
    encoder = {k[len("bert."):]: v for k, v in nli.model.state_dict().items()
               if k.startswith("bert.") and not k.startswith("bert.pooler.")}
    missing, unexpected = model.bert.load_state_dict(encoder, strict=False)
    if missing or unexpected:
        raise ArtifactError(f"the NLI encoder does not fit the tagger: missing {missing}, unexpected {unexpected}")
    return nli.tokenizer, model


def add_lora(model: Any, r: int, alpha: int, dropout: float) -> Any:
    """Wrap ``model`` with trainable LoRA adapters and a trainable head."""
    from peft import LoraConfig, TaskType, get_peft_model

    config = LoraConfig(task_type=TaskType.TOKEN_CLS, r=r, lora_alpha=alpha, lora_dropout=dropout,
                        target_modules=list(LORA_TARGETS), modules_to_save=["classifier"])
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        return get_peft_model(model, config)


@dataclass(frozen=True)
class Encoded:
    """One model input: token ids, token types and where each claim word's first sub-token sits."""

    input_ids: list[int]
    token_type_ids: list[int]
    word_starts: list[int]


def encode(tokenizer: Any, words: Sequence[str], reference: str, max_length: int) -> list[Encoded]:
    """The inputs for one claim: one per reference window (windows overlap by half; every word is in one).

    Raises:
        InputError: an empty claim or reference, or a claim too long to leave room for the reference.
    """
    ref_words = reference.split()
    if not words:
        raise InputError("the claim is empty")
    if not ref_words:
        raise InputError("the reference is empty: nothing can support the claim")
    # a word the tokenizer reads as nothing (control or zero-width characters only) is read as "." in its place
    words = [w if ids else "." for w, ids in zip(words, tokenizer(list(words), add_special_tokens=False)["input_ids"],
                                                  strict=True)]
    claim_tokens = len(tokenizer(list(words), is_split_into_words=True, add_special_tokens=False)["input_ids"])
    room = max_length - claim_tokens - 3
    if room < MIN_REFERENCE_TOKENS:
        raise InputError(f"the claim has {claim_tokens} tokens; the LSS tagger reads at most "
                         f"{max_length - 3 - MIN_REFERENCE_TOKENS} (split it into sentences)")
    sizes = [max(1, len(ids)) for ids in tokenizer(ref_words, add_special_tokens=False)["input_ids"]]
    out = []
    for start, stop in _windows(sizes, room):
        enc = tokenizer(list(words), ref_words[start:stop], is_split_into_words=True, truncation="only_second",
                        max_length=max_length)
        starts: dict[int, int] = {}
        for t, (w, s) in enumerate(zip(enc.word_ids(), enc.sequence_ids(), strict=True)):
            if s == 0 and w is not None and w not in starts:
                starts[w] = t
        out.append(Encoded(enc["input_ids"], enc["token_type_ids"], [starts[i] for i in range(len(words))]))
    return out


def _windows(sizes: list[int], room: int) -> list[tuple[int, int]]:
    """Word ranges of at most ``room`` tokens each, the next starting halfway through the last."""
    spans, start = [], 0
    while True:
        stop, used = start, 0
        while stop < len(sizes) and used + sizes[stop] <= room:
            used += sizes[stop]
            stop += 1
        stop = max(stop, start + 1)
        spans.append((start, stop))
        if stop >= len(sizes):
            return spans
        start = max(start + 1, start + (stop - start) // 2)


def claim_parts(tokenizer: Any, words: Sequence[str], max_length: int) -> list[tuple[int, int]]:
    """Word ranges of a claim, each of at most half the input (so a reference window keeps the other half): the
    whole claim when it fits. A single word longer than that stays one part (and is refused by :func:`encode`)."""
    limit = (max_length - 3) // 2
    sizes = [max(1, len(ids)) for ids in tokenizer(list(words), add_special_tokens=False)["input_ids"]]
    if sum(sizes) <= limit:
        return [(0, len(words))]
    parts, start, used = [], 0, 0
    for i, size in enumerate(sizes):
        if used + size > limit and i > start:
            parts.append((start, i))
            start, used = i, 0
        used += size
    return [*parts, (start, len(words))]


def collate(items: Sequence[Encoded], pad_id: int, multiple: int = 32) -> dict[str, Any]:
    """Padded tensors for a batch (widths rounded up to ``multiple`` tokens: few distinct shapes)."""
    import torch

    width = -(-max(len(e.input_ids) for e in items) // multiple) * multiple
    ids = torch.full((len(items), width), pad_id, dtype=torch.long)
    types = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for i, e in enumerate(items):
        n = len(e.input_ids)
        ids[i, :n] = torch.tensor(e.input_ids)
        types[i, :n] = torch.tensor(e.token_type_ids)
        mask[i, :n] = 1
    return {"input_ids": ids, "token_type_ids": types, "attention_mask": mask}


def word_logits(model: Any, batch: dict[str, Any], items: Sequence[Encoded]) -> list[Any]:
    """The head's logit at every claim word of every item (a list of 1-d tensors)."""
    logits = model(**batch).logits[..., 0]
    return [logits[b, e.word_starts] for b, e in enumerate(items)]


class LSSTagger:
    """A loaded tagger: per-word support probabilities of claims given references.

    Build it with :func:`load_tagger`. ``precision`` is ``"fp32"``, ``"bf16"``, ``"auto"`` or ``None`` (see
    :func:`faithwatch.nli.model.resolve_precision`).
    """

    def __init__(self, model: Any, tokenizer: Any, meta: TaggerMeta, device: str = "cpu",
                 precision: str | None = None) -> None:
        self.precision = resolve_precision(precision, device)
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.meta = meta
        self.name = meta.name
        self.threshold = float(meta.threshold)
        self.device = device

    @property
    def version(self) -> str:
        """Identifies the tagger's outputs (name and adapter checksum): part of every cache key."""
        return f"{self.name}-{self.meta.files[ADAPTER_FILES[0]][:12]}"

    def word_probabilities(self, claims: Sequence[Sequence[str]], references: Sequence[str],
                           batch_size: int = 32, split_long: bool = False) -> list[np.ndarray]:
        """For each claim (a list of words, e.g. :func:`faithwatch.claims.lss.split_words`) the probability that
        its reference supports each word: the best over the reference's windows. ``split_long``: a claim too long
        for one input is read in parts (:func:`claim_parts`) instead of refused; every word is still read."""
        return word_probabilities(self.model, self.tokenizer, claims, references, self.meta.max_length,
                                  device=self.device, bf16=self.precision == "bf16", batch_size=batch_size,
                                  split_long=split_long)


def word_probabilities(model: Any, tokenizer: Any, claims: Sequence[Sequence[str]], references: Sequence[str],
                       max_length: int, device: str = "cpu", bf16: bool = False,
                       batch_size: int = 32, split_long: bool = False) -> list[np.ndarray]:
    """Per-word support probabilities from a tagger model (training and inference share this path)."""
    import torch

    if len(claims) != len(references):
        raise ValueError(f"{len(claims)} claims but {len(references)} references")
    items, owner = [], []  # owner: (claim, offset of the part's first word)
    for i, (words, ref) in enumerate(zip(claims, references, strict=True)):
        parts = claim_parts(tokenizer, words, max_length) if split_long and words else [(0, len(words))]
        for start, stop in parts:
            for enc in encode(tokenizer, words[start:stop], ref, max_length):
                items.append(enc)
                owner.append((i, start))
    best = [np.full(len(words), -np.inf) for words in claims]
    order = np.argsort([len(e.input_ids) for e in items], kind="stable")
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            for k in range(0, len(order), batch_size):
                idx = [int(j) for j in order[k : k + batch_size]]
                chunk = [items[j] for j in idx]
                batch = {n: v.to(device) for n, v in collate(chunk, tokenizer.pad_token_id).items()}
                with torch.autocast(device_type=device.split(":")[0], dtype=torch.bfloat16, enabled=bf16):
                    rows = word_logits(model, batch, chunk)
                for j, row in zip(idx, rows, strict=True):
                    claim, start = owner[j]
                    span = slice(start, start + len(row))
                    best[claim][span] = np.maximum(best[claim][span], row.float().cpu().numpy())
    finally:
        model.train(was_training)
    probs = [1.0 / (1.0 + np.exp(-b)) for b in best]
    if not all(np.isfinite(p).all() for p in probs):
        raise ValueError("the LSS tagger produced non-finite probabilities")
    return probs


# ---------------------------------------------------------------- artifact


def save_tagger(peft_model: Any, out_dir: str | Path, meta: TaggerMeta) -> Path:
    """Write the adapter + head of ``peft_model`` and the metadata (file checksums filled in)."""
    out = Path(out_dir)
    meta.files = write_adapter(peft_model, out, meta.base_package)
    write_meta(out, meta)
    return out


def write_meta(out_dir: str | Path, meta: TaggerMeta) -> None:
    """(Re)write the metadata file atomically."""
    write_json(Path(out_dir) / META_FILE, meta.__dict__)


def read_meta(art_dir: str | Path) -> TaggerMeta:
    """Read and check the metadata and the files it lists (sha256)."""
    art = Path(art_dir)
    meta = load_meta(art, META_FILE, TaggerMeta, FORMAT, "an LSS tagger")
    check_files(art, meta.files)
    return meta


def load_tagger(art_dir: str | Path | None = None, base_dir: str | Path | None = None,
                nli_dir: str | Path | None = None, device: str = "cpu", precision: str | None = None) -> LSSTagger:
    """Load a tagger (default: the shipped one) on its base encoder and NLI adapter, merged for speed.

    Raises :class:`ArtifactError` for a changed file or base / NLI weights other than the recorded ones, and
    :class:`ModelNotAvailableError` when the base package is not installed or no tagger was shipped.
    """
    from peft import PeftModel

    art = Path(art_dir) if art_dir is not None else SHIPPED_DIR
    if art_dir is None and not (art / META_FILE).is_file():
        raise ModelNotAvailableError(f"no LSS tagger is shipped in {art}; train one with faithwatch train-lss-tagger")
    meta = read_meta(art)
    nli = Path(nli_dir) if nli_dir is not None else NLI_DIR
    base = checked_base(art, base_dir, meta.base_sha256, meta.base_package)
    nli_sha = file_sha256(nli / ADAPTER_FILES[0])
    if nli_sha != meta.nli_adapter_sha256:
        raise ArtifactError(f"{art.name} was trained on the NLI adapter {meta.nli_adapter_sha256[:12]}…, but "
                            f"{nli} has {nli_sha[:12]}…; retrain the tagger on this NLI model")
    tokenizer, model = build_model(base, nli, verify_base=False)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        model = PeftModel.from_pretrained(model, str(art)).merge_and_unload()
    return LSSTagger(model, tokenizer, meta, device=device, precision=precision)
