"""Framing lines ("Here is a summary of the article:") are never flagged by themselves (framing rule 1, way C;
docs/transfer.md "Framing lines").

Such a line is about the answer, not the world (:func:`faithwatch.text.is_framing`), yet the text signals read its
words ("summary", "78 words") as claims the context lacks. Its score is raised to the detector's threshold when it
is below it; every other sentence keeps its score. The monitor applies this to each report, the evaluation to
each table, so that both give one sentence the same score. A response's score
(:func:`faithwatch.results.response_score`) is its lowest sentence's, framing lines left out.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from faithwatch.text import is_framing


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


def floor_table(scores: np.ndarray | Sequence[float], table: pd.DataFrame, threshold: float) -> np.ndarray:
    """:func:`floor_framing` of the sentence rows ``table`` (its ``text`` column); a table of features without
    sentence texts (no ``text`` column) has no framing line to tell, and its scores are returned as they are."""
    if "text" not in table.columns:
        return np.asarray(scores, dtype=np.float64)
    return floor_framing(scores, table["text"].astype(str).tolist(), threshold)
