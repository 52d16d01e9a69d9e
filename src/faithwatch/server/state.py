"""What the routes of one app share (:func:`faithwatch.server.app.create_app` builds it once)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from faithwatch.server.context_limits import ContextLimits
from faithwatch.server.domain import RecentScores
from faithwatch.server.jobs import JobRunner
from faithwatch.server.pool import WorkPool


@dataclass
class ServerState:
    """The served monitor, the work pool and live batch, the limits, and the caches of ``/v1/check``."""

    monitor: Any
    pool: WorkPool
    #: the continuous batch of one-beam decoding (None: every model job goes through ``pool``)
    live: Any
    #: held by every model call (a live batch takes it per token)
    model_lock: threading.Lock
    #: the latest sentences answered and contexts accepted: ``/healthz``'s domain
    recent: RecentScores
    #: the context and new-token limits
    guard: ContextLimits
    #: runs jobs on ``pool`` under the request timeout
    jobs: JobRunner
    queue_size: int
    max_records: int
    #: the default checker of ``/v1/check`` and the alignment scorer of its alignment checker
    check_default: str
    check_alignment: str
    check_lock: threading.Lock = field(default_factory=threading.Lock)
    #: one alignment scorer (and model) per spec name, built on first use; thresholds are per call
    scorers: dict[str, Any] = field(default_factory=dict)
    #: the detector checker, built on first use
    text_checker: list[Any] = field(default_factory=list)
