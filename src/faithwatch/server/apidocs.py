"""The FastAPI app of ``faithwatch serve`` and ``faithwatch proxy``, with ``/docs`` served from local files.

FastAPI's interactive page loads Swagger UI from a CDN, so on a machine without internet it stays blank. The
``fastapi-offline`` package (in the ``server`` extra) ships those files; without it the page falls back to the CDN.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI


def api_app(**kwargs: Any) -> FastAPI:
    """``FastAPI(**kwargs)`` whose ``/docs`` and ``/redoc`` pages need no internet (when ``fastapi-offline`` is
    installed)."""
    try:
        from fastapi_offline import FastAPIOffline
    except ImportError:
        return FastAPI(**kwargs)
    return FastAPIOffline(**kwargs)
