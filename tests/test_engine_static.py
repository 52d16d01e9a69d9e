"""The static-cache engine (preallocated KV cache, fixed shapes) records what the default dynamic cache records."""

from __future__ import annotations

import numpy as np
import pytest
from transformers import StaticCache

from faithwatch.models import engine as engine_mod
from faithwatch.models.engine import DecodingEngine, Needs
from faithwatch.models.prompts import build_prompts
from same import ALL_NEEDS as ALL
from same import TOL, assert_same_records


@pytest.fixture(scope="module")
def prompts(lm):
    return build_prompts(lm.tokenizer, "When did it open?", "The bridge opened in 1820. The tower opened in 1889.")


def _script(session, tokens):
    """Live greedy decoding, a rejected sentence rewound, then branches forked, fed, selected and trimmed."""
    for _ in range(tokens):
        session.feed([int(session.next_logprobs().argmax())])
    cp = session.checkpoint()
    session.feed([7, 8, 9])
    session.restore(cp)
    session.feed([11, 12])
    session.fork(3)
    session.feed_branches([20, 21, 22])
    session.select([2, 0])
    session.feed_branches([30, 31], active=[True, False])
    session.trim()
    session.feed_branches([40, 41])
    return session


@pytest.mark.parametrize("graph", [False, True], ids=["static", "graph-step"])
@pytest.mark.parametrize("needs", [ALL, Needs()])
def test_static_cache_equals_dynamic_cache(lm, prompts, needs, graph, one_thread, monkeypatch):
    """``graph``: the CUDA-graph step's static-shape path (4-D mask buffer, prompt columns as a tensor, reused
    caches), run eagerly on this CPU."""
    monkeypatch.setattr(engine_mod, "STATIC_BLOCK", 16)  # small blocks: the cache grows several times
    dynamic = _script(DecodingEngine(lm, needs).start(prompts), 40)
    static = _script(DecodingEngine(lm, needs, static_cache=True, cuda_graph=graph).start(prompts), 40)
    if graph:
        assert len(static.engine.graphs._steps) >= 2  # several batch shapes stepped
    assert isinstance(static._cache, StaticCache)
    assert static._cache.layers[0].keys.shape[2] % 16 == 0  # preallocated in whole blocks
    for a, b in zip(dynamic.branch_records, static.branch_records, strict=True):
        assert_same_records(a, b)
    np.testing.assert_allclose(static.branch_logprobs().numpy(), dynamic.branch_logprobs().numpy(), atol=TOL)


def test_static_cache_grows_in_blocks_not_per_token(lm, prompts, one_thread, monkeypatch):
    monkeypatch.setattr(engine_mod, "STATIC_BLOCK", 16)
    session = DecodingEngine(lm, Needs(twin=True), static_cache=True).start(prompts)
    widths = set()
    for t in range(40):
        session.feed([10 + t])
        widths.add(session._cache.layers[0].keys.shape[2])
    assert len(widths) <= 4  # 40 tokens: at most 3 growths, never one per token
    assert all(w % 16 == 0 for w in widths)


def test_joined_static_sessions_equal_dynamic_ones(lm, prompts, one_thread):
    """Joined sessions hold different prompt ends per branch (the graph step's prompt-column tensor)."""
    short = build_prompts(lm.tokenizer, "Why?", "Because.")
    runs = []
    for static, graph in ((False, False), (True, False), (True, True)):
        engine = DecodingEngine(lm, ALL, static_cache=static, cuda_graph=graph)
        session = engine.start(prompts)
        session.feed([11, 12, 13])
        session.join(engine.start(short))
        for step in range(4):
            session.feed_branches([20 + step, 30 + step])
        runs.append(session)
    for run in runs[1:]:
        for a, b in zip(runs[0].branch_records, run.branch_records, strict=True):
            assert_same_records(a, b)


@pytest.mark.parametrize("graph", [False, True], ids=["static", "graph-step"])
def test_monitor_with_a_static_cache_scores_the_same_sentences(lm, graph, one_thread):
    """(Signals that need no MiniLM package, so that this runs on a GPU host without it too.)"""
    from faithwatch.monitor import Monitor

    signals = ["likelihood", "entropy", "lid", "contrastive", "influence", "lookback", "alignment", "lexical", "edits"]
    kwargs = {"signals": signals, "alignment": "lexical", "max_new_tokens": 40}
    monitor = Monitor(lm, **kwargs)
    static = Monitor(lm, static_cache=True, cuda_graph=graph, **kwargs)
    question, context = "When did the tower open?", "The tower opened in 1889. It is 330 metres tall."
    a = monitor.generate(question, context)
    b = static.generate(question, context)
    assert a.response == b.response and a.num_tokens == b.num_tokens
    assert a.sentences and [s.text for s in a.sentences] == [s.text for s in b.sentences]
    np.testing.assert_allclose([s.score for s in a.sentences], [s.score for s in b.sentences], atol=1e-4)


def test_a_pooled_cache_is_lent_to_one_live_session_at_a_time(lm, prompts, one_thread):
    import gc

    engine = DecodingEngine(lm, ALL, cuda_graph=True)
    first, second = engine.start(prompts), engine.start(prompts)
    assert first._cache is not second._cache  # both live: never the same cache
    for session in (first, second):
        session.feed([5, 6])
    reference = DecodingEngine(lm, ALL).start(prompts)
    reference.feed([5, 6])
    assert_same_records(first.records, reference.records)
    assert_same_records(second.records, reference.records)
    held = first._cache
    del first
    gc.collect()
    third = engine.start(prompts)
    assert third._cache is held  # a finished session's cache is reused
    third.feed([5, 6])
    assert_same_records(third.records, reference.records)


@pytest.mark.parametrize("static", [False, True], ids=["dynamic", "static"])
def test_a_rewound_forced_session_equals_a_fresh_one(lm, prompts, static, one_thread, monkeypatch):
    """start_forced rewinds the last session to its prompt, also after its static cache grew past blocks."""
    monkeypatch.setattr(engine_mod, "STATIC_BLOCK", 16)
    engine = DecodingEngine(lm, ALL, static_cache=static)
    tokens = [[10 + t for t in range(40)], [50 + t for t in range(7)], [60 + t for t in range(33)]]
    records = []
    for ids in tokens:
        session = engine.start_forced(prompts)
        session.feed(ids)
        records.append(session.records)
    assert session is engine._forced[1]  # one session served all three
    for ids, got in zip(tokens, records, strict=True):
        fresh = DecodingEngine(lm, ALL).start(prompts)
        fresh.feed(ids)
        assert_same_records(got, fresh.records)
    assert DecodingEngine(lm, ALL, cuda_graph=True).start_forced(prompts).engine._forced is None  # pooled caches
