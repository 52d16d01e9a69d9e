"""The faithwatch HTTP server: ``create_app`` builds the FastAPI app; ``faithwatch serve`` runs it with uvicorn."""

from faithwatch.server.app import create_app
from faithwatch.server.pool import Cancelled, CancelToken, QueueFullError, WorkPool

__all__ = ["CancelToken", "Cancelled", "QueueFullError", "WorkPool", "create_app"]
