"""Branches: forked sessions decode in one batch yet match independent runs; checkpoints rewind exactly."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from faithwatch.models.engine import DecodingEngine, Needs
from faithwatch.models.prompts import build_prompts
from same import ALL_NEEDS as ALL
from same import TOL, assert_same_records


@pytest.fixture(scope="module")
def prompts(lm):
    return build_prompts(lm.tokenizer, "When did it open?", "The bridge opened in 1820. The tower opened in 1889.")


def _single(lm, prompts, tokens, needs=ALL):
    session = DecodingEngine(lm, needs).start(prompts)
    for t in tokens:
        session.feed([t])
    return session


@pytest.mark.parametrize("needs", [ALL, Needs()])
def test_forked_branches_match_independent_runs(lm, prompts, needs, one_thread):
    rng = np.random.default_rng(0)
    prefix = rng.integers(10, 300, size=3).tolist()
    paths = rng.integers(10, 300, size=(4, 5)).tolist()  # 4 branches, 5 tokens each
    session = _single(lm, prompts, prefix, needs)
    session.fork(4)
    assert session.branches == 4
    for step in range(5):
        session.feed_branches([p[step] for p in paths])
    logps = session.branch_logprobs()
    for b, path in enumerate(paths):
        ref = _single(lm, prompts, prefix + path, needs)
        assert_same_records(session.branch_records[b], ref.records)
        torch.testing.assert_close(logps[b], ref.next_logprobs(), atol=TOL, rtol=0)
        if needs.twin:
            torch.testing.assert_close(session.branch_twin_logprobs()[b], ref.next_twin_logprobs(), atol=TOL, rtol=0)


def test_select_keeps_and_reorders_branches(lm, prompts, one_thread):
    session = _single(lm, prompts, [11, 12])
    session.fork(3)
    session.feed_branches([20, 21, 22])
    session.select([2, 2, 0])  # beams may repeat
    assert [r.token_ids[-1] for r in session.branch_records] == [22, 22, 20]
    session.feed_branches([30, 31, 32])
    for b, path in enumerate([[22, 30], [22, 31], [20, 32]]):
        assert_same_records(session.branch_records[b], _single(lm, prompts, [11, 12, *path]).records)
    with pytest.raises(ValueError):
        session.select([5])
    with pytest.raises(RuntimeError, match="single-branch"):
        session.next_logprobs()


def test_restore_rewinds_exactly(lm, prompts, one_thread):
    session = _single(lm, prompts, [11, 12, 13])
    cp = session.checkpoint()
    before = session.next_logprobs().clone()
    session.feed([40, 41, 42, 43])
    session.restore(cp)
    assert session.position == cp.main_len and len(session.records) == 3
    torch.testing.assert_close(session.next_logprobs(), before)
    session.feed([50, 51])
    assert_same_records(session.records, _single(lm, prompts, [11, 12, 13, 50, 51]).records)
    later = session.checkpoint()
    session.restore(cp)
    with pytest.raises(ValueError, match="checkpoint"):
        session.restore(later)  # a later state cannot be restored from an earlier one


def test_inactive_branches_leave_invisible_holes(lm, prompts, one_thread):
    session = _single(lm, prompts, [11, 12])
    session.fork(2)
    session.feed_branches([20, 30])
    session.feed_branches([21, 99], active=[True, False])  # branch 1 finished: its row gets a masked hole
    session.feed_branches([22, 98], active=[True, False])
    assert session.positions == [session.positions[1] + 2, session.positions[1]]
    session.feed_branches([23, 31])  # branch 1 resumes after the holes
    for b, path in enumerate([[20, 21, 22, 23], [30, 31]]):
        ref = _single(lm, prompts, [11, 12, *path])
        assert_same_records(session.branch_records[b], ref.records)
        torch.testing.assert_close(session.branch_logprobs()[b], ref.next_logprobs(), atol=TOL, rtol=0)
    cp_lens = session.checkpoint().main_lens
    session.select([1])
    assert session.position == cp_lens[1]
    session.feed([32])
    assert_same_records(session.records, _single(lm, prompts, [11, 12, 30, 31, 32]).records)


def test_selecting_every_branch_in_place_keeps_the_session(lm, prompts, one_thread):
    session = _single(lm, prompts, [11, 12])
    session.fork(2)
    records, cache = session.branch_records, session._cache.layers[0].keys
    session.select([0, 1])  # identity: nothing is copied
    assert session.branch_records is records and session._cache.layers[0].keys is cache
    session.select([1, 0])  # a real reorder still copies
    assert session._cache.layers[0].keys is not cache


def test_the_engine_passes_the_cache_under_the_models_own_argument_name(lm, prompts, one_thread):
    import inspect
    import warnings

    engine = DecodingEngine(lm, ALL)
    assert engine.cache_arg in inspect.signature(lm.model.forward).parameters
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)  # no deprecated-argument warning from transformers
        session = engine.start(prompts)
        session.feed([11, 12])
    assert len(session.records) == 2
