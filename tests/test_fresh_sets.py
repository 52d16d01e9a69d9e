"""The hand-written decoding check sets in training/data load, and none gives its common answer away."""

from __future__ import annotations

from pathlib import Path

import pytest

from faithwatch.decoding.counterfactual import load_items, mentions_any

SETS = sorted((Path(__file__).resolve().parent.parent / "training" / "data").glob("*-qa-fresh*.jsonl"))


def test_there_are_check_sets():
    assert len(SETS) >= 40  # counterfactual-qa-fresh*.jsonl and unanswerable-qa-fresh*.jsonl


@pytest.mark.parametrize("path", SETS, ids=[p.stem for p in SETS])
def test_check_set_loads_and_hides_the_common_answer(path):
    """Every item loads (the loader checks that each context answer occurs in its context), and where the context
    contradicts common knowledge or lacks the fact, it never states the common answer: else following the context
    and remembering the answer could not be told apart."""
    items = load_items(path)
    assert items
    leaking = [i.id for i in items if i.common_answers and not i.agrees and mentions_any(i.context, i.common_answers)]
    assert not leaking, f"{path.name}: the context states a common answer in {leaking}"
