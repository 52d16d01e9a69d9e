"""A sentence that swaps a number of the context sentence it restates is never passed (docs/transfer.md, "A
swapped number caps the score").

The edits rules (:mod:`faithwatch.alignment.edits`) count such a swap in ``edit_swap_num``, but one count moves a
learned aggregator's score by little ("24 people were injured" against "25 people were injured" scored 0.64), and
the labelled sets hold too few such sentences to teach it more. So a detector that reads ``edit_swap_num`` has the
score of a sentence counting one or more held at most :func:`ceiling` of the threshold in use. The monitor applies
this to each report and the evaluation to each table, before the framing floor
(:mod:`faithwatch.detectors.framing`), so that both give one sentence the same score.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

#: the feature whose count caps a sentence's score
CAPPED_BY = "edit_swap_num"
#: the highest score a capped sentence keeps, and how far below the threshold it stays at least
CEILING = 0.40
MARGIN = 0.05


def ceiling(threshold: float) -> float:
    """The highest score a capped sentence keeps under ``threshold``: below it by at least :data:`MARGIN`."""
    return min(CEILING, threshold - MARGIN)


def caps(feature_names: Sequence[str]) -> bool:
    """Whether a detector reading ``feature_names`` is capped (it reads :data:`CAPPED_BY`)."""
    return CAPPED_BY in feature_names


def cap_marked(scores: np.ndarray | Sequence[float], marked: Sequence[bool], threshold: float) -> np.ndarray:
    """``scores`` with those ``marked`` held at most :func:`ceiling` of ``threshold``."""
    scores = np.asarray(scores, dtype=np.float64)
    if len(scores) != len(marked):
        raise ValueError(f"{len(scores)} scores for {len(marked)} sentences")
    return np.where(np.asarray(marked, dtype=bool), np.minimum(scores, ceiling(threshold)), scores)


def swapped(count: float | None) -> bool:
    """Whether one sentence's :data:`CAPPED_BY` count caps it (None: not computed, no cap)."""
    return count is not None and count >= 1


def cap_table(scores: np.ndarray | Sequence[float], table: pd.DataFrame, threshold: float,
              feature_names: Sequence[str]) -> np.ndarray:
    """``scores`` of the sentence rows ``table`` for a detector reading ``feature_names``, capped where its
    :data:`CAPPED_BY` column counts a swap; returned as they are when the detector does not read it."""
    if not caps(feature_names):
        return np.asarray(scores, dtype=np.float64)
    if CAPPED_BY not in table.columns:
        raise ValueError(f"the table has no {CAPPED_BY} column, which the detector reads")
    return cap_marked(scores, table[CAPPED_BY].to_numpy(dtype=np.float64) >= 1, threshold)  # NaN: no cap
