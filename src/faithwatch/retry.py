"""The one retry policy for HTTP calls to other services (the claim checker's LLM, the proxy's upstream):
which answers are transient, how long to wait, and ``Retry-After``; and the one check of their base URL."""

from __future__ import annotations

import math
import random

import httpx

from faithwatch.errors import InputError

#: the longest exponential wait, and the longest ``Retry-After`` honoured (seconds)
MAX_BACKOFF = 30.0
MAX_RETRY_AFTER = 60.0


def check_base_url(url: object, what: str) -> str:
    """``url`` (stripped) when it is an http(s) URL with a host and a valid port, else an :class:`InputError` that
    starts with ``what`` (e.g. "the upstream URL")."""
    if not isinstance(url, str) or not url.strip().lower().startswith(("http://", "https://")):
        raise InputError(f"{what} must start with http:// or https://, got {url!r}")
    try:
        parsed = httpx.URL(url.strip())
    except httpx.InvalidURL as exc:
        raise InputError(f"{what} {url!r} is not a valid URL ({exc})") from None
    if not parsed.host:
        raise InputError(f"{what} {url!r} names no host")
    if parsed.port is not None and not 0 < parsed.port < 65536:
        raise InputError(f"{what} {url!r} names port {parsed.port}, outside 1 to 65535")
    return url.strip()


def is_transient(status: int) -> bool:
    """An HTTP status worth retrying: 429 and 5xx."""
    return status == 429 or status >= 500


def retry_after(response: httpx.Response) -> float | None:
    """The ``Retry-After`` header in seconds, or ``None`` when absent or not a number of seconds
    (an HTTP date is ignored: the exponential backoff applies then)."""
    value = response.headers.get("Retry-After", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def backoff_delay(attempt: int, backoff: float, wait: float | None = None) -> float:
    """Seconds to wait before attempt ``attempt + 2``: the server's ``Retry-After`` (``wait``) when it sent one,
    else ``backoff * 2**attempt`` (capped) with jitter in [half of it, all of it]."""
    if wait is not None:
        return min(wait, MAX_RETRY_AFTER)
    base = min(backoff * 2.0**attempt, MAX_BACKOFF)
    return base / 2 + random.uniform(0.0, base / 2)
