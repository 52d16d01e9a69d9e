"""Saving and loading the shipped NLI adapter (safetensors + JSON, no pickles).

An artifact folder holds ``adapter_model.safetensors`` and ``adapter_config.json`` (the ``peft``
format) and ``faithwatch_nli.json``: format, labels, max length, LoRA settings, the base weights'
package and sha256, the sha256 of every file, training data and licences, and evaluation figures.
Loading refuses a missing file, a tampered file, or base weights other than the ones trained on.
"""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faithwatch.checksums import file_sha256
from faithwatch.errors import InputError, ModelNotAvailableError
from faithwatch.nli.data import LABELS
from faithwatch.nli.model import BASE_WEIGHTS, CrossEncoder, base_folder, default_base_dir, load_base

FORMAT = "faithwatch-nli/1"
META_FILE = "faithwatch_nli.json"
ADAPTER_FILES = ("adapter_model.safetensors", "adapter_config.json")
CARD_FILE = "MODEL_CARD.md"
#: fixed pairs whose predictions every artifact records
REFERENCE_PAIRS = (
    ("A man is playing a guitar on stage.", "A man is performing music."),
    ("A man is playing a guitar on stage.", "A man is sleeping in his bed."),
    ("A man is playing a guitar on stage.", "The man is a famous singer."),
    ("The tower was completed in 1889 and is 330 metres tall.", "The tower is 330 metres tall."),
    ("The tower was completed in 1889 and is 330 metres tall.", "The tower was completed in 1925."),
    ("Revenue rose 12 percent to 4.2 billion dollars in 2023.", "Revenue fell in 2023."),
)
#: the adapter shipped inside the package
SHIPPED_DIR = Path(__file__).parent / "minilm"


class ArtifactError(InputError):
    """An NLI artifact is missing, corrupted, or does not match the base weights."""


@dataclass
class NLIArtifactMeta:
    """What ``faithwatch_nli.json`` records."""

    name: str
    max_length: int
    base_package: str
    base_sha256: str
    lora: dict[str, Any]
    files: dict[str, str]
    labels: list[str] = field(default_factory=lambda: list(LABELS))
    format: str = FORMAT
    faithwatch_version: str = ""
    training: dict[str, Any] = field(default_factory=dict)
    evaluation: dict[str, Any] = field(default_factory=dict)
    #: fp32 probabilities of a few fixed pairs, computed from the saved files (the tests reproduce them)
    reference_predictions: list[dict[str, Any]] = field(default_factory=list)


def save_artifact(peft_model: Any, out_dir: str | Path, meta: NLIArtifactMeta) -> Path:
    """Write the adapter + head of ``peft_model`` and the metadata (file checksums filled in)."""
    out = Path(out_dir)
    meta.files = write_adapter(peft_model, out, meta.base_package)
    write_meta(out, meta)
    return out


def write_adapter(peft_model: Any, out: Path, base_package: str) -> dict[str, str]:
    """Write the trainable weights of ``peft_model`` and its config (the peft format); returns their sha256."""
    from peft import get_peft_model_state_dict
    from safetensors.torch import save_file

    out.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in get_peft_model_state_dict(peft_model).items()}
    save_file(state, str(out / ADAPTER_FILES[0]), metadata={"format": "pt"})
    config = peft_model.peft_config["default"].to_dict()
    config["base_model_name_or_path"] = base_package
    config = {k: sorted(v) if isinstance(v, set) else v for k, v in config.items()}
    (out / ADAPTER_FILES[1]).write_text(json.dumps(config, indent=2, sort_keys=True, default=str) + "\n")
    return {name: file_sha256(out / name) for name in ADAPTER_FILES}


def write_json(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON atomically (a reader never sees half a file)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")
    tmp.replace(path)


def load_meta(art: Path, meta_file: str, cls: type, fmt: str, what: str) -> Any:
    """``cls`` built from the JSON file ``art/meta_file``, refused when missing, malformed or of another format."""
    path = art / meta_file
    if not art.exists():
        raise ModelNotAvailableError(f"folder not found: {art} (give {what}: a folder holding {meta_file})")
    if not path.is_file():
        raise ArtifactError(f"{art} is not {what}: {meta_file} is missing")
    try:
        meta = cls(**json.loads(path.read_text()))
    except (json.JSONDecodeError, TypeError) as exc:
        raise ArtifactError(f"{path} is not a valid {fmt} metadata file: {exc}") from exc
    if meta.format != fmt:
        raise ArtifactError(f"{path}: format {meta.format!r}, this faithwatch reads {fmt!r}")
    return meta


def check_files(art: Path, files: dict[str, str]) -> None:
    """Refuse a missing adapter file or one whose sha256 differs from the recorded one."""
    for name in ADAPTER_FILES:
        file = art / name
        if not file.is_file():
            raise ArtifactError(f"{art}: {name} is missing")
        want = files.get(name)
        got = file_sha256(file)
        if want != got:
            raise ArtifactError(f"{file} is corrupted or was changed: sha256 {got[:12]}…, metadata says "
                                f"{str(want)[:12]}…")


def checked_base(art: Path, base_dir: str | Path | None, base_sha256: str, package: str,
                 verify: bool = True) -> Path:
    """The base encoder folder, refused (with what to do) when missing or other than the one trained on."""
    base = base_folder(base_dir)
    weights = base / BASE_WEIGHTS
    if verify:
        got = file_sha256(weights)
        if got != base_sha256:
            raise ArtifactError(f"{art.name} was trained on base weights with sha256 {base_sha256[:12]}…, but "
                                f"{weights} has {got[:12]}…; reinstall {package} or retrain the adapter")
    return base


def write_meta(out_dir: str | Path, meta: NLIArtifactMeta) -> None:
    """(Re)write ``faithwatch_nli.json`` and the model card (e.g. to add evaluation figures)."""
    from faithwatch.nli.card import model_card

    write_json(Path(out_dir) / META_FILE, meta.__dict__)
    (Path(out_dir) / CARD_FILE).write_text(model_card(meta), encoding="utf-8")


def record_reference_predictions(art_dir: str | Path, base_dir: str | Path | None = None) -> NLIArtifactMeta:
    """Load the saved artifact (fp32) and record its probabilities on :data:`REFERENCE_PAIRS`."""
    meta = read_meta(art_dir)
    enc = load_cross_encoder(art_dir, base_dir=base_dir, precision="fp32")
    probs = enc.predict_proba([p for p, _ in REFERENCE_PAIRS], [h for _, h in REFERENCE_PAIRS])
    meta.reference_predictions = [{"premise": p, "hypothesis": h, "probs": [round(float(x), 6) for x in row]}
                                  for (p, h), row in zip(REFERENCE_PAIRS, probs, strict=True)]
    write_meta(art_dir, meta)
    return meta


def rebase_artifact(art_dir: str | Path, base_dir: str | Path | None = None) -> NLIArtifactMeta:
    """Bind an adapter trained on a copy of the base weights (e.g. an fp16 copy sent to a GPU machine) to ``base_dir``.

    Records the new base's sha256 (the copy's is kept as ``training.trained_on_base_sha256``) and
    re-records the reference predictions on the new base. Evaluation figures must be re-measured.
    """
    base = Path(base_dir) if base_dir is not None else default_base_dir()
    meta = read_meta(art_dir)
    new_sha = file_sha256(base / BASE_WEIGHTS)
    if new_sha != meta.base_sha256:
        meta.training.setdefault("trained_on_base_sha256", meta.base_sha256)
        meta.base_sha256 = new_sha
        meta.evaluation = {}
        write_meta(art_dir, meta)
    return record_reference_predictions(art_dir, base)


def read_meta(art_dir: str | Path) -> NLIArtifactMeta:
    """Read and check ``faithwatch_nli.json`` and the files it lists (sha256)."""
    art = Path(art_dir)
    meta = load_meta(art, META_FILE, NLIArtifactMeta, FORMAT, "an NLI artifact")
    path = art / META_FILE
    if list(meta.labels) != list(LABELS):
        raise ArtifactError(f"{path}: labels {meta.labels} differ from {list(LABELS)}")
    check_files(art, meta.files)
    return meta


def load_cross_encoder(art_dir: str | Path | None = None, base_dir: str | Path | None = None, device: str = "cpu",
                       precision: str | None = None, verify_base: bool = True) -> CrossEncoder:
    """Load an NLI artifact (default: the shipped ``nli-minilm``) onto its base encoder, merged for speed.

    Raises :class:`ArtifactError` for a corrupted artifact or base weights whose sha256 differs from
    the recorded one, and :class:`ModelNotAvailableError` when the base package is not installed.
    """
    from peft import PeftModel

    art = Path(art_dir) if art_dir is not None else SHIPPED_DIR
    meta = read_meta(art)
    base = checked_base(art, base_dir, meta.base_sha256, meta.base_package, verify=verify_base)
    tokenizer, model = load_base(base)
    with warnings.catch_warnings():  # peft calls a transformers API deprecated in v5; harmless, and noisy on every load
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        model = PeftModel.from_pretrained(model, str(art)).merge_and_unload()
    return CrossEncoder(model, tokenizer, meta.max_length, name=meta.name, device=device, precision=precision,
                        adapter_sha256=meta.files[ADAPTER_FILES[0]])
