"""Final sentences to :class:`~faithwatch.results.SentenceReport`: every signal's features, the detector's score, the
ceiling and framing rules and the flag. The one path of live decoding, teacher forcing and batches
(:class:`~faithwatch.monitor.Monitor` calls it with its signals, detector and threshold)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from faithwatch.detectors.ceiling import CAPPED_BY, cap_marked, caps, swapped
from faithwatch.detectors.framing import aside_kinds, floor_marked
from faithwatch.errors import FaithwatchError
from faithwatch.results import SentenceReport, check_finite
from faithwatch.sentences import Sentence
from faithwatch.signals import SentenceTrace, Signal
from faithwatch.text import strip_markup


def signal_values(signals: Sequence[Signal], traces: Sequence[SentenceTrace]) -> list[dict[str, Any]]:
    """Every signal's features of each trace; each signal sees all traces in one call (an alignment model runs once
    for all). A signal that gives a row too few or a feature it does not declare is an error."""
    values: list[dict[str, Any]] = [{} for _ in traces]
    for signal in signals:
        declared = set(signal.feature_names)
        rows = list(signal.compute_many(traces))
        if len(rows) != len(traces):
            raise FaithwatchError(f"signal {signal.name!r} gave {len(rows)} rows for {len(traces)} sentences")
        for out, computed in zip(values, rows, strict=True):
            if not computed.keys() <= declared:
                raise FaithwatchError(f"signal {signal.name!r} gave features it does not declare in "
                                      f"feature_names: {sorted(computed.keys() - declared)}")
            out.update(computed)
    return values


def detector_features(detector: Any) -> list[str]:
    """The features ``detector`` reads (empty for one that declares none, such as the heuristic)."""
    return list(getattr(getattr(detector, "meta", None), "feature_names", None) or [])


def unread_tokens(alignment: Any, text: str) -> int:
    """Tokens at the end of a sentence that ``alignment`` does not read (as the alignment signal gives it the
    sentence: markup stripped); 0 for a scorer that reads every token or says nothing about it."""
    unread = getattr(alignment, "unread_tokens", None)
    return 0 if unread is None else unread(strip_markup(text))[0]


def sentence_reports(sentences: Sequence[Sentence], values: Sequence[dict[str, Any]], context: str, *,
                     detector: Any, threshold: float, alignment: Any = None) -> list[SentenceReport]:
    """One report per sentence: its finite features (a NaN is an error), the detector's score with the ceiling
    (``detectors.ceiling``) and framing rules (``detectors.framing``) applied, and the flag below ``threshold``."""
    reports = []
    capped = caps(detector_features(detector))
    for sentence, feats in zip(sentences, values, strict=True):
        scalars: dict[str, float | None] = {}
        vectors: dict[str, list] = {}
        for name, value in feats.items():
            if isinstance(value, np.ndarray):
                if not np.isfinite(value).all():
                    check_finite(name, float("nan"))
                vectors[name] = value.tolist()
            else:
                scalars[name] = None if value is None else check_finite(name, float(value))
        arrays = {k: np.asarray(v) for k, v in feats.items() if isinstance(v, np.ndarray)}
        score = check_finite("score", detector.score({**scalars, **arrays}))
        if capped and swapped(scalars.get(CAPPED_BY)):
            score = float(cap_marked([score], [True], threshold)[0])
        framing, absence = aside_kinds(sentence.text, context)
        if framing or absence:  # never flagged by itself (detectors.framing)
            score = float(floor_marked([score], [True], threshold)[0])
        reports.append(SentenceReport(
            index=sentence.index, text=sentence.text, start=sentence.start, end=sentence.end,
            token_start=sentence.token_start, token_end=sentence.token_end, features=scalars,
            score=score, flagged=score < threshold and not (framing or absence),
            detector=detector.name, vectors=vectors, framing=framing, absence=absence,
            unread_tokens=unread_tokens(alignment, sentence.text) if scalars.get("align_score") is not None else 0,
        ))
    return reports
