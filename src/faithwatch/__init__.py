"""faithwatch: keep retrieval-augmented generation faithful to its retrieved context."""

from faithwatch._version import __version__

__all__ = ["__version__"]
