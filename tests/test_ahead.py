"""Greedy steps chosen on the device and collected later record what token-by-token feeding records."""

from __future__ import annotations

import pytest

from faithwatch.models.engine import DecodingEngine, Needs
from faithwatch.models.loading import LoadedModel
from faithwatch.models.prompts import build_prompts
from same import ALL_NEEDS as ALL
from same import assert_same_records, assert_same_results

QUESTION, CONTEXT = "When did the tower open?", "The tower opened in 1889. It is 330 metres tall."
ENGINES = {"dynamic": {}, "static": {"static_cache": True}, "graph-step": {"cuda_graph": True}}


@pytest.fixture(scope="module")
def prompts(lm):
    return build_prompts(lm.tokenizer, QUESTION, CONTEXT)


def _greedy_by_hand(session, n):
    for _ in range(n):
        session.feed([int(session.next_logprobs().argmax())])


@pytest.mark.parametrize("kind", list(ENGINES))
@pytest.mark.parametrize("needs", [ALL, Needs()], ids=["all", "none"])
def test_launched_chunks_record_what_feeding_records(lm, prompts, kind, needs, one_thread):
    engine = DecodingEngine(lm, needs, **ENGINES[kind])
    want = engine.start(prompts)
    _greedy_by_hand(want, 7)
    want.feed([5, 6])  # the pending distribution after a collect is the right one
    got = engine.start(prompts)
    first, second = got.launch(3), got.launch(4)  # chained: the second starts on the device
    tokens = got.collect(first) + got.collect(second)
    assert tokens == want.records.token_ids[:7]
    got.feed([5, 6])
    assert_same_records(got.records, want.records)
    assert got.positions == want.positions


def test_feeding_before_collecting_and_feeding_a_cut_session_are_refused(lm, prompts, one_thread):
    session = DecodingEngine(lm, ALL).start(prompts)
    launched = session.launch(2)
    with pytest.raises(RuntimeError, match="collect"):
        session.feed([5])
    session.collect(launched)
    session.cut(1)
    assert len(session.records) == 1
    with pytest.raises(RuntimeError, match="cut"):
        session.feed([5])
    with pytest.raises(ValueError):
        DecodingEngine(lm, ALL).start(prompts).launch(0)


@pytest.mark.parametrize("run_ahead", [2, 5])
def test_monitor_running_ahead_scores_the_same_sentences(lm, run_ahead, one_thread):
    from faithwatch.monitor import Monitor

    signals = ["likelihood", "entropy", "contrastive", "influence", "lookback", "alignment", "lexical", "edits"]
    kwargs = {"signals": signals, "alignment": "lexical", "detector": "heuristic", "max_new_tokens": 23}
    want = Monitor(lm, run_ahead=1, **kwargs).generate(QUESTION, CONTEXT)
    got = Monitor(lm, run_ahead=run_ahead, **kwargs).generate(QUESTION, CONTEXT)
    assert got.response == want.response and got.num_tokens == want.num_tokens == 23
    assert_same_results(got, want)


def test_an_end_of_sequence_inside_a_chunk_ends_the_answer_there(lm, monkeypatch, one_thread):
    from faithwatch.monitor import Monitor

    kwargs = {"signals": ["likelihood", "entropy", "lexical"], "alignment": "lexical", "detector": "heuristic",
              "max_new_tokens": 30}
    free = Monitor(lm, run_ahead=1, **kwargs).generate(QUESTION, CONTEXT)
    ids = free.records.token_ids
    first = next(i for i in range(6, len(ids)) if ids[i] not in ids[:i])  # a token new at i: the end of sequence
    stop = ids[first]
    monkeypatch.setattr(LoadedModel, "eos_token_ids", property(lambda self: {stop}))
    want = Monitor(lm, run_ahead=1, **kwargs).generate(QUESTION, CONTEXT)
    got = Monitor(lm, run_ahead=4, **kwargs).generate(QUESTION, CONTEXT)
    assert want.num_tokens == first and want.stop_reason == "eos"
    assert got.response == want.response and got.stop_reason == "eos"
    assert got.records.token_ids == want.records.token_ids
    assert_same_results(got, want)


def test_run_ahead_must_be_positive(lm):
    from faithwatch.errors import InputError
    from faithwatch.monitor import Monitor

    with pytest.raises(InputError, match="run_ahead"):  # refused before any scorer loads (no MiniLM needed)
        Monitor(lm, alignment="lexical", detector="heuristic", run_ahead=0)
    kwargs = {"signals": ["likelihood", "entropy", "lexical"], "alignment": "lexical", "detector": "heuristic"}
    assert Monitor(lm, **kwargs).run_ahead == 1  # CPU default


@pytest.mark.parametrize("run_ahead", [1, 3])
def test_a_device_chooser_is_given_each_tokens_index(lm, run_ahead, one_thread):
    import torch

    from faithwatch.models.ahead import OnDevice
    from faithwatch.monitor import Monitor

    script = lm.tokenizer.encode(" The tower opened in 1889. It is tall. It is in Paris.", add_special_tokens=False)
    ids = torch.tensor(script)
    kwargs = {"signals": ["likelihood", "entropy", "lexical"], "alignment": "lexical", "detector": "heuristic",
              "max_new_tokens": len(script)}
    tokens = iter(script)
    want = Monitor(lm, run_ahead=1, **kwargs).generate(QUESTION, CONTEXT, choose=lambda _lp: next(tokens))
    got = Monitor(lm, run_ahead=run_ahead, **kwargs).generate(
        QUESTION, CONTEXT, choose=OnDevice(lambda _lp, i: ids[i].view(1, 1)))
    assert got.records.token_ids == want.records.token_ids == script
    assert_same_results(got, want)
