"""Model loading and the decoding engine."""

from faithwatch.models.loading import DEFAULT_MODEL, LoadedModel, load_model

__all__ = ["DEFAULT_MODEL", "LoadedModel", "load_model"]
