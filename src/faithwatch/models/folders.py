"""Model names that can only be local folders, checked without importing ``transformers`` (a usage error is
found in a second, not after the model stack has loaded)."""

from __future__ import annotations

from pathlib import Path

from faithwatch.errors import ModelNotAvailableError


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
