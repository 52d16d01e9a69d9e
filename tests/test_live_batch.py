"""Continuous batching: requests that join and leave a running batch get what Monitor.generate gives each alone."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from faithwatch.live_batch import LiveBatch
from faithwatch.monitor import greedy
from same import TOL, assert_same_results

CONTEXT = ("The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France. It was built "
           "from 1887 to 1889 by the company of Gustave Eiffel. It is 330 metres tall.")
REQUESTS = [  # very different prompt lengths and budgets: rows leave at different steps, later ones join
    ("Who built it?", CONTEXT, 9),
    ("Where?", "Paris is in France.", 30),
    ("How tall is it, and what is it made of?", CONTEXT + " " + CONTEXT, 17),
    ("When?", "It opened in 1889.", 4),
    ("Who?", "Gustave Eiffel was an engineer.", 23),
]


def sampler(seed: int):
    gen = torch.Generator().manual_seed(seed)

    def choose(logp: torch.Tensor) -> int:
        return int(torch.multinomial((logp / 0.8).softmax(-1), 1, generator=gen))

    return choose


def assert_same(got, want) -> None:
    assert got.response == want.response and got.num_tokens == want.num_tokens
    assert got.stop_reason == want.stop_reason
    assert_same_results(got, want)


@pytest.mark.parametrize("max_rows", [2, 8])
def test_rows_joining_and_leaving_equal_generate_alone(full_monitor, max_rows, one_thread):
    batch = LiveBatch(full_monitor, max_rows=max_rows)
    seen: dict[int, list[str]] = {i: [] for i in range(len(REQUESTS))}
    futures = []
    for i, (q, c, n) in enumerate(REQUESTS):
        choose = sampler(i) if i % 2 else greedy
        futures.append(batch.submit(q, c, max_new_tokens=n, choose=choose,
                                    on_sentence=lambda r, i=i: seen[i].append(r.text)))
    results = [f.result(timeout=120) for f in futures]
    batch.close()
    assert batch.row_steps > batch.steps  # rows did share forward passes
    for i, ((q, c, n), got) in enumerate(zip(REQUESTS, results, strict=True)):
        want = full_monitor.generate(q, c, max_new_tokens=n, choose=sampler(i) if i % 2 else greedy)
        assert_same(got, want)
        assert seen[i] == [s.text for s in want.sentences]  # streamed live, in order


def test_a_failing_row_leaves_and_the_others_go_on(full_monitor, one_thread):
    batch = LiveBatch(full_monitor, max_rows=4)
    calls = 0

    def broken(logp: torch.Tensor) -> int:
        nonlocal calls
        calls += 1
        if calls > 3:
            raise RuntimeError("client went away")
        return greedy(logp)

    bad = batch.submit("When?", "It opened in 1889.", max_new_tokens=20, choose=broken)
    good = batch.submit("Who built it?", CONTEXT, max_new_tokens=12)
    too_long = batch.submit("Who?", CONTEXT * 200, max_new_tokens=5)
    with pytest.raises(RuntimeError, match="went away"):
        bad.result(timeout=60)
    with pytest.raises(Exception, match="exceed|window|too long"):
        too_long.result(timeout=60)
    assert_same(good.result(timeout=60), full_monitor.generate("Who built it?", CONTEXT, max_new_tokens=12))
    batch.close()
    assert batch.rows == 0 and batch.waiting == 0


def test_joined_cache_is_trimmed_when_long_rows_leave(full_monitor, one_thread):
    engine = full_monitor.engine
    long = full_monitor._prompts("How tall?", CONTEXT * 3, 8)
    short = full_monitor._prompts("When?", "It opened in 1889.", 8)
    session = engine.start(long)
    session.feed([5, 6, 7])
    session.join(engine.start(short))
    width = session._cache_len
    session.select([1])
    assert session.trim() > 0 and session._cache_len < width
    alone = engine.start(short)
    for token in (11, 12, 13):
        session.feed_branches([token])
        alone.feed([token])
    np.testing.assert_allclose(session.branch_records[0].logprob, alone.records.logprob, atol=TOL)
    np.testing.assert_allclose(np.asarray(session.branch_records[0].lookback), np.asarray(alone.records.lookback),
                               atol=TOL)


STRATEGY_REQUESTS = [  # strategy, overrides: budgets and sentence limits that end rows at different steps
    ("greedy", "Who built it?", CONTEXT, {"max_new_tokens": 26}),
    ("cad", "Where?", "Paris is in France.", {"max_new_tokens": 9, "alpha": 0.7}),
    ("adacad", "How tall is it?", CONTEXT + " " + CONTEXT, {"max_new_tokens": 31, "max_sentence_tokens": 6}),
    ("abstain", "When?", "It opened in 1889.", {"max_new_tokens": 14, "abstain_threshold": 0.99}),
    ("greedy", "Who?", "Gustave Eiffel was an engineer.", {"max_new_tokens": 21, "max_sentence_tokens": 4}),
    ("greedy", "Who spoke?", "Ann: the tower opened in 1889.\nBob: it is in Paris.\nAnn: yes, on the Champ de Mars.",
     {"max_new_tokens": 10}),  # a chat transcript: a note
]


def test_one_beam_strategies_as_rows_equal_generate_alone(full_monitor, one_thread):
    """Strategy rows and a Monitor row in one batch: each strategy's result equals decoding.generate alone."""
    from faithwatch.decoding.strategies import generate, one_beam_plan

    assert one_beam_plan("fod") is None and one_beam_plan("rerank") is None
    batch = LiveBatch(full_monitor, max_rows=3)
    futures = [batch.submit_strategy(q, c, one_beam_plan(name, **kw)) for name, q, c, kw in STRATEGY_REQUESTS]
    monitored = batch.submit("Who built it?", CONTEXT, max_new_tokens=15)
    results = [f.result(timeout=120) for f in futures]
    assert_same(monitored.result(timeout=120), full_monitor.generate("Who built it?", CONTEXT, max_new_tokens=15))
    batch.close()
    assert batch.row_steps > batch.steps
    cut_sentences = 0
    for (name, q, c, kw), got in zip(STRATEGY_REQUESTS, results, strict=True):
        want = generate(full_monitor, q, c, name, **kw)
        assert got.to_dict().keys() == want.to_dict().keys()
        for key in ("strategy", "answer", "refused", "num_tokens", "generated_tokens", "stop_reason", "params",
                    "context_tokens_cut", "notes"):
            assert getattr(got, key) == getattr(want, key), (name, key)
        assert [(s.text, s.start, s.end, s.token_start, s.token_end) for s in got.sentences] == [
            (s.text, s.start, s.end, s.token_start, s.token_end) for s in want.sentences]
        assert [s.score for s in got.sentences] == pytest.approx([s.score for s in want.sentences], abs=TOL)
        assert [(e.kind, e.step, e.text) for e in got.trace] == [(e.kind, e.step, e.text) for e in want.trace]
        cut_sentences += kw.get("max_sentence_tokens", 96) < 10 and len(want.sentences) > 1
    assert results[3].refused  # abstain refused, as alone
    assert any("transcript" in n for n in results[-1].notes) and not results[0].notes
    assert cut_sentences  # the sentence-length limit was exercised (sentence ends: test_decoding)


def test_a_strategy_row_that_is_cancelled_leaves(full_monitor, one_thread):
    from faithwatch.decoding.strategies import one_beam_plan

    batch = LiveBatch(full_monitor, max_rows=4)
    calls = 0

    def check() -> None:
        nonlocal calls
        calls += 1
        if calls > 2:
            raise RuntimeError("client went away")

    bad = batch.submit_strategy("When?", "It opened in 1889.", one_beam_plan("greedy", max_new_tokens=20), check=check)
    good = batch.submit_strategy("Who?", CONTEXT, one_beam_plan("cad", max_new_tokens=8))
    with pytest.raises(RuntimeError, match="went away"):
        bad.result(timeout=60)
    assert good.result(timeout=60).num_tokens == 8
    batch.close()


def test_a_row_with_its_own_instruction_equals_generate_alone(full_monitor, one_thread, monkeypatch):
    """A request's instruction is its prompt's (rows beside it keep the monitor's), and the row computes what
    Monitor.generate and decoding.generate compute with that instruction alone."""
    from faithwatch.decoding.strategies import generate, one_beam_plan

    told = "Reply with one short sentence."
    built = full_monitor._prompts
    seen: list[str | None] = []

    def spy(question, context, reserve, instruction=None, **kw):
        seen.append(instruction)
        return built(question, context, reserve, instruction, **kw)

    monkeypatch.setattr(full_monitor, "_prompts", spy)
    batch = LiveBatch(full_monitor, max_rows=3)
    own = batch.submit("Who built it?", CONTEXT, max_new_tokens=12, instruction=told)
    plain = batch.submit("Who built it?", CONTEXT, max_new_tokens=12)
    cad = batch.submit_strategy("Where?", "Paris is in France.", one_beam_plan("cad", max_new_tokens=9),
                                instruction=told)
    got = [f.result(timeout=120) for f in (own, plain, cad)]
    batch.close()
    assert sorted(seen, key=str) == [None, told, told]
    assert_same(got[0], full_monitor.generate("Who built it?", CONTEXT, max_new_tokens=12, instruction=told))
    assert seen[-1] == told  # Monitor.generate's own prompt took it too
    assert_same(got[1], full_monitor.generate("Who built it?", CONTEXT, max_new_tokens=12))
    want = generate(full_monitor, "Where?", "Paris is in France.", "cad", instruction=told, max_new_tokens=9)
    assert (got[2].answer, got[2].num_tokens) == (want.answer, want.num_tokens)
    assert [s.score for s in got[2].sentences] == pytest.approx([s.score for s in want.sentences], abs=TOL)
    with pytest.raises(Exception, match="instruction is empty"):
        full_monitor.generate("Who built it?", CONTEXT, max_new_tokens=4, instruction=" ")
