"""Framing lines ("Here is a summary of the article:") are never flagged by themselves (framing rule 1, way C;
docs/transfer.md "Framing lines").

Such a line is about the answer, not the world (:func:`faithwatch.text.is_framing`), yet the text signals read its
words ("summary", "78 words") as claims the context lacks. Its score is raised to the detector's threshold when it
is below it; every other sentence keeps its score. The monitor applies this to each report, the evaluation to
each table, so that both give one sentence the same score. A response's score
(:func:`faithwatch.results.response_score`) is its lowest sentence's, framing lines left out. Absence notes that the
context bears out (:mod:`faithwatch.detectors.absence`) are set aside the same way; an evaluation table marks them in
its ``absence`` column (they depend on the context, which a table does not hold).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from faithwatch.detectors.absence import borne_out
from faithwatch.text import is_framing


def aside_kinds(sentence: str, context: str) -> tuple[bool, bool]:
    """Whether one sentence is set aside, and why: ``(framing, absence)``, a framing line, or else an absence note
    or refusal that ``context`` bears out (what the monitor and `check` both read)."""
    framing = is_framing(sentence)
    return framing, not framing and borne_out(sentence, context)


def floor_framing(scores: np.ndarray | Sequence[float], texts: Sequence[str], threshold: float) -> np.ndarray:
    """``scores`` (P(faithful) of the sentences ``texts``) with each framing line's raised to ``threshold``."""
    return floor_marked(scores, [is_framing(t) for t in texts], threshold)


def floor_marked(scores: np.ndarray | Sequence[float], framing: Sequence[bool], threshold: float) -> np.ndarray:
    """``scores`` with those marked ``framing`` (already told by :func:`~faithwatch.text.is_framing`) raised to
    ``threshold``."""
    scores = np.asarray(scores, dtype=np.float64)
    if len(scores) != len(framing):
        raise ValueError(f"{len(scores)} scores for {len(framing)} sentences")
    return np.where(np.asarray(framing, dtype=bool), np.maximum(scores, threshold), scores)


def set_aside(table: pd.DataFrame) -> np.ndarray:
    """Which sentence rows of ``table`` are set aside: framing lines (its ``text`` column) and borne-out absence
    notes (its ``absence`` column, when it has one); none for a table without ``text``."""
    if "text" not in table.columns:
        return np.zeros(len(table), dtype=bool)
    marks = np.array([is_framing(t) for t in table["text"].astype(str)], dtype=bool)
    if "absence" in table.columns:
        marks |= table["absence"].to_numpy(dtype=bool)
    return marks


def floor_table(scores: np.ndarray | Sequence[float], table: pd.DataFrame, threshold: float) -> np.ndarray:
    """``scores`` of the sentence rows ``table`` with those :func:`set_aside` raised to ``threshold``; a table of
    features without sentence texts (no ``text`` column) has none, and its scores are returned as they are."""
    return floor_marked(scores, set_aside(table), threshold)
