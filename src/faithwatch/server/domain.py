"""Where a server's traffic sits against its detector's training sets (``/healthz``'s ``domain``).

The scores of the latest sentences answered are kept (bounded); :func:`~faithwatch.detectors.calibration.
domain_offset` places their median against the detector's reference. An offset of 1 log-odds or more means the
pooled threshold may not suit this traffic (docs/transfer.md, "When a batch run suggests it").
"""

from __future__ import annotations

import math
import threading
from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from faithwatch.detectors.calibration import domain_offset
from faithwatch.text import TRANSCRIPT_NOTE, is_transcript

#: how many of the latest sentences answered are kept
RECENT_SENTENCES = 2000
#: how many of the latest contexts are kept (whether each reads as a chat or meeting transcript)
RECENT_CONTEXTS = 500


class RecentScores:
    """P(faithful) of the latest :data:`RECENT_SENTENCES` sentences answered (thread-safe)."""

    def __init__(self, size: int = RECENT_SENTENCES, contexts: int = RECENT_CONTEXTS) -> None:
        self._scores: deque[float] = deque(maxlen=size)
        self._transcripts: deque[bool] = deque(maxlen=contexts)
        self._lock = threading.Lock()

    def add_context(self, context: str | Sequence[str] | None) -> None:
        """Keep whether a request's context (or passages, read together) reads as a chat or meeting transcript
        (:func:`faithwatch.text.is_transcript`); None is skipped."""
        if context is None:
            return
        found = is_transcript(context)
        with self._lock:
            self._transcripts.append(found)

    def add(self, scores: Iterable[Any]) -> None:
        """Keep ``scores`` (None and non-finite values are skipped)."""
        kept = [float(s) for s in scores if s is not None and math.isfinite(float(s))]
        with self._lock:
            self._scores.extend(kept)

    def add_sentences(self, result: dict[str, Any]) -> None:
        """Keep the scores of a result's ``sentences`` (a monitor or decoding result as JSON)."""
        self.add(s.get("score") for s in result.get("sentences") or [])

    def __len__(self) -> int:
        return len(self._scores)

    def status(self, detector: Any, threshold: float | None) -> dict[str, Any]:
        """``{sentences, offset, flagged, note, contexts, transcripts, transcript_note}`` (flagged below
        ``threshold``, None: the detector's); offset, flagged and note null below 200 sentences or for a detector
        without a reference (the heuristic); ``transcripts`` is the share of the latest ``contexts`` that read as
        chat or meeting transcripts (null before the first), with a note when any does."""
        with self._lock:
            scores = np.asarray(self._scores, dtype=np.float64)
            transcripts = list(self._transcripts)
        offset = domain_offset(detector, scores, threshold=threshold)
        share = sum(transcripts) / len(transcripts) if transcripts else None
        note = f"{sum(transcripts)} of the latest {len(transcripts)} contexts read {TRANSCRIPT_NOTE}" if share else None
        return {"sentences": len(scores), "offset": None if offset is None else round(offset.offset, 3),
                "flagged": None if offset is None else round(offset.flagged, 4),
                "note": None if offset is None else offset.hint(),
                "contexts": len(transcripts), "transcripts": None if share is None else round(share, 4),
                "transcript_note": note}
