"""The decoding engine: live vs teacher forcing, the batched twin, lookback ratios, hidden states."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import faithwatch.models.attention as attention_mod
from faithwatch.errors import ContextTooLongError
from faithwatch.models.engine import DecodingEngine, Needs
from faithwatch.models.prompts import build_prompts

QUESTION = "When was the Eiffel Tower built?"
CONTEXT = "The Eiffel Tower was constructed from 1887 to 1889 as the centerpiece of the World's Fair in Paris."
RESPONSE = "The tower was built from 1887 to 1889. It is in Paris, France."
LONG_CONTEXT = " ".join(["The river Seine flows through the city, and the museum opens at nine."] * 8)
ALL = Needs(twin=True, hidden_layers=(1, 2, 3), lookback=True)
TOL = 1e-4


@pytest.fixture(scope="module")
def prompts(lm):
    return build_prompts(lm.tokenizer, QUESTION, CONTEXT)


@pytest.fixture(scope="module")
def response_ids(lm):
    ids = lm.tokenizer(RESPONSE, add_special_tokens=False)["input_ids"]
    assert len(ids) >= 15
    return ids


def run(lm, prompts, ids, chunks, needs=ALL):
    """Feed ``ids`` in chunks of the given sizes (the last chunk takes the rest)."""
    session = DecodingEngine(lm, needs).start(prompts)
    i = 0
    for size in chunks:
        session.feed(ids[i : i + size])
        i += size
    session.feed(ids[i:])
    return session


def assert_same_records(a, b):
    assert a.token_ids == b.token_ids
    n = len(a.token_ids)
    for name in ("logprob", "entropy", "kl", "twin_logprob", "hidden", "lookback"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        assert len(x) == len(y) == n, name
        np.testing.assert_allclose(x, y, atol=TOL, rtol=0, err_msg=name)


@pytest.fixture(scope="module")
def live(lm, prompts, response_ids):
    return run(lm, prompts, response_ids, [1] * (len(response_ids) - 1))


@pytest.fixture(scope="module")
def forced(lm, prompts, response_ids):
    return run(lm, prompts, response_ids, [])


def test_records_have_one_entry_per_token(live, response_ids, lm):
    rec = live.records
    assert rec.token_ids == response_ids
    assert len(rec) == len(rec.logprob) == len(rec.entropy) == len(rec.kl) == len(response_ids)
    assert len(rec.hidden) == len(rec.lookback) == len(response_ids)
    assert rec.hidden_layers == (1, 2, 3)
    assert rec.hidden[0].shape == (3, lm.model.config.hidden_size)
    assert live.position == live.prompt_len + len(response_ids)


def test_live_equals_teacher_forcing_one_chunk(live, forced):
    assert_same_records(live.records, forced.records)
    torch.testing.assert_close(live.next_logprobs(), forced.next_logprobs(), atol=TOL, rtol=0)
    torch.testing.assert_close(live.next_twin_logprobs(), forced.next_twin_logprobs(), atol=TOL, rtol=0)


@pytest.mark.parametrize("chunks", [[5, 1, 7], [2, 2, 2, 2], [1, 10]])
def test_live_equals_teacher_forcing_several_chunks(lm, prompts, response_ids, live, chunks):
    assert_same_records(live.records, run(lm, prompts, response_ids, chunks).records)


def plain_logprobs(lm, prefix: list[int], response: list[int]) -> torch.Tensor:
    """Log-probs predicting each response token from one unbatched, unpadded forward, [n, V]."""
    with torch.no_grad():
        logits = lm.model(input_ids=torch.tensor([prefix + response])).logits[0].float()
    n = len(response)
    return torch.log_softmax(logits[len(prefix) - 1 : len(prefix) - 1 + n], dim=-1)


def test_kl_of_batched_twin_equals_separate_forwards(lm, prompts, response_ids, forced):
    assert len(prompts.twin_ids) < len(prompts.rag_ids)  # the twin row is really left-padded
    p = plain_logprobs(lm, prompts.rag_ids, response_ids)
    q = plain_logprobs(lm, prompts.twin_ids, response_ids)
    kl = (p.exp() * (p - q)).sum(-1).numpy()
    rec = forced.records
    np.testing.assert_allclose(rec.kl, kl, atol=TOL, rtol=0)
    assert max(rec.kl) > 1e-2, "the context must change the distribution, else this test proves nothing"
    chosen = p.gather(1, torch.tensor(response_ids)[:, None])[:, 0].numpy()
    np.testing.assert_allclose(rec.logprob, chosen, atol=TOL, rtol=0)
    twin_chosen = q.gather(1, torch.tensor(response_ids)[:, None])[:, 0].numpy()
    np.testing.assert_allclose(rec.twin_logprob, twin_chosen, atol=TOL, rtol=0)
    assert np.abs(np.asarray(rec.logprob) - twin_chosen).max() > 1e-2  # the signed influence is not trivially 0


def test_entropy_is_normalised(lm, prompts, response_ids, forced):
    p = plain_logprobs(lm, prompts.rag_ids, response_ids)
    expected = (-(p.exp() * p).sum(-1) / math.log(lm.vocab_size)).numpy()
    ent = np.asarray(forced.records.entropy)
    np.testing.assert_allclose(ent, expected, atol=TOL, rtol=0)
    assert ((ent >= 0) & (ent <= 1)).all()
    assert ent.std() > 0


def test_hidden_states_are_decoder_layer_outputs(lm, prompts, response_ids, forced):
    with torch.no_grad():
        out = lm.model(input_ids=torch.tensor([prompts.rag_ids + response_ids]), output_hidden_states=True)
    n, p = len(response_ids), len(prompts.rag_ids)
    hidden = np.stack(forced.records.hidden)  # [n, layers, d]
    for j, layer in enumerate((1, 2)):  # hidden_states[-1] has the final norm applied
        expected = out.hidden_states[layer][0, p - 1 : p - 1 + n].numpy()
        np.testing.assert_allclose(hidden[:, j], expected, atol=TOL, rtol=0)
    # the last layer is recorded before the model's final norm
    with torch.no_grad():
        normed = lm.model.model.norm(torch.from_numpy(hidden[:, 2])).numpy()
    np.testing.assert_allclose(normed, out.hidden_states[3][0, p - 1 : p - 1 + n].numpy(), atol=TOL, rtol=0)


def test_lookback_shape_range_and_first_token(lm, forced):
    config = lm.model.config
    lookback = np.stack(forced.records.lookback)
    assert lookback.shape[1:] == (config.num_hidden_layers, config.num_attention_heads)
    assert ((lookback >= 0) & (lookback <= 1)).all()
    # the first token is predicted before anything was generated: all attention is on the prompt
    assert (lookback[0] == 1.0).all()
    assert (lookback[1:] < 1.0).any()


@pytest.mark.parametrize("twin", [True, False], ids=["with-twin", "alone"])
def test_lookback_matches_eager_attention(tiny_model_dir, lm, prompts, response_ids, twin):
    from transformers import AutoModelForCausalLM

    forced = run(lm, prompts, response_ids, [4], needs=Needs(twin=twin, lookback=True))

    eager = AutoModelForCausalLM.from_pretrained(tiny_model_dir, attn_implementation="eager").eval()
    with torch.no_grad():
        out = eager(input_ids=torch.tensor([prompts.rag_ids + response_ids]), output_attentions=True)
    p = len(prompts.rag_ids)
    attn = torch.stack(out.attentions)[:, 0]  # [layers, heads, T, T]
    got = np.stack(forced.records.lookback)
    for i in range(len(response_ids)):
        q = p - 1 + i  # the query position predicting response token i
        a_ctx = attn[:, :, q, :p].sum(-1) / p
        a_new = attn[:, :, q, p : q + 1].sum(-1) / max(i, 1)
        np.testing.assert_allclose(got[i], (a_ctx / (a_ctx + a_new)).numpy(), atol=TOL, rtol=0)


def test_no_needs_records_nothing_optional_and_runs_no_twin(lm, prompts, response_ids):
    batches = []
    hook = lm.model.register_forward_pre_hook(
        lambda _m, _a, kwargs: batches.append(kwargs["input_ids"].shape[0]), with_kwargs=True
    )
    try:
        session = run(lm, prompts, response_ids, [3, 1], needs=Needs())
        base = Needs()
        assert session.needs == base and not base.twin and not base.lookback and base.hidden_layers == ()
        with_twin = run(lm, prompts, response_ids, [], needs=Needs(twin=True))
    finally:
        hook.remove()
    rec = session.records
    assert rec.kl == [] and rec.hidden == [] and rec.lookback == []
    assert len(rec.logprob) == len(rec.entropy) == len(response_ids)
    with pytest.raises(RuntimeError, match="twin"):
        session.next_twin_logprobs()
    assert batches[:4] == [1, 1, 1, 1]  # prefill + 3 chunks, one row each
    assert batches[4:] == [1, 1, 2]  # main and twin prefilled apart (no padding cost), then one 2-row call
    assert len(with_twin.records.kl) == len(response_ids) and with_twin.records.lookback == []


def test_needs_union():
    a = Needs(twin=True, hidden_layers=(3, 1))
    b = Needs(hidden_layers=(2, 3), lookback=True)
    assert a | b == Needs(twin=True, hidden_layers=(1, 2, 3), lookback=True)
    assert Needs() | Needs() == Needs()


@pytest.mark.parametrize("layers", [(0,), (4,), (1, 5), (-1,)])
def test_hidden_layer_out_of_range(lm, layers):
    with pytest.raises(ValueError, match="out of range"):
        DecodingEngine(lm, Needs(hidden_layers=layers))


def test_prefill_builds_no_prompt_by_prompt_attention(lm, monkeypatch):
    prompts = build_prompts(lm.tokenizer, QUESTION, LONG_CONTEXT)
    t = len(prompts.rag_ids)
    assert t > 100
    calls: list[tuple] = []
    softmax_shapes: list[tuple] = []
    real_lookback, real_softmax = attention_mod._lookback, torch.softmax

    def softmax(x, *args, **kwargs):
        softmax_shapes.append(tuple(x.shape))
        return real_softmax(x, *args, **kwargs)

    def lookback(module, query, key, attention_mask, scaling, rec):
        monkeypatch.setattr(torch, "softmax", softmax)
        try:
            out = real_lookback(module, query, key, attention_mask, scaling, rec)
        finally:
            monkeypatch.setattr(torch, "softmax", real_softmax)
        calls.append((query.shape[2], key.shape[2], tuple(out.shape)))
        return out

    monkeypatch.setattr(attention_mod, "_lookback", lookback)
    heads, layers = lm.num_heads, lm.num_layers
    session = DecodingEngine(lm, Needs(twin=True, lookback=True)).start(prompts)
    # prefill: the model sees all t query rows, but only the newest one is softmaxed, per layer
    assert calls == [(t, t, (1, 1, heads))] * layers
    assert softmax_shapes == [(1, heads, 1, t)] * layers
    calls.clear()
    softmax_shapes.clear()
    session.feed([5, 6, 7])
    assert calls == [(3, t + 3, (1, 3, heads))] * layers
    assert softmax_shapes == [(1, heads, 3, t + 3)] * layers
    assert len(session.records.lookback) == 3


def test_feed_beyond_the_model_window_raises(lm, prompts):
    session = DecodingEngine(lm, Needs(twin=True)).start(prompts)
    room = lm.max_length - session.position
    session.feed([7] * (room - 1))
    with pytest.raises(ContextTooLongError, match=f"window of {lm.max_length}"):
        session.feed([7, 7])
    assert len(session.records) == room - 1  # the failed feed changed nothing
    session.feed([7])  # exactly filling the window is allowed
    assert session.position == lm.max_length
    with pytest.raises(ContextTooLongError):
        session.feed([7])


def test_feed_nothing_is_a_no_op(lm, prompts):
    session = DecodingEngine(lm, Needs()).start(prompts)
    before = session.next_logprobs().clone()
    session.feed([])
    assert len(session.records) == 0
    torch.testing.assert_close(session.next_logprobs(), before)
