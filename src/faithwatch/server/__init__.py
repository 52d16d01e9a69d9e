"""The faithwatch HTTP server: ``create_app`` builds the FastAPI app; ``faithwatch serve`` runs it with uvicorn."""

from faithwatch.server.app import CHECK_ALIGNMENTS, create_app
from faithwatch.server.pool import Cancelled, CancelToken, QueueFullError, WorkPool

__all__ = ["CHECK_ALIGNMENTS", "CancelToken", "Cancelled", "QueueFullError", "WorkPool", "create_app"]
