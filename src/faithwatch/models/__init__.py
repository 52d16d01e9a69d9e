"""Model loading and the decoding engine (loaded on first use: ``transformers`` takes seconds to import, and a
usage check that reads only :mod:`faithwatch.models.folders` should not wait for it)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from faithwatch.models.loading import DEFAULT_MODEL, LoadedModel, load_model

__all__ = ["DEFAULT_MODEL", "LoadedModel", "load_model"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("faithwatch.models.loading"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
