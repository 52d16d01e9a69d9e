"""Decoding strategies on the tiny model with controlled sentence scores: the search logic of each strategy."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import torch

from faithwatch.decoding import REFUSAL, generate
from faithwatch.decoding.loop import adacad_logprobs, cad_logprobs, sampling_chooser
from faithwatch.monitor import Monitor

Q, C = "When did the bridge open?", "The bridge in Lyon opened in 1820. It was built by local masons."
SHORT = {"max_sentence_tokens": 4, "max_new_tokens": 16, "coverage": False, "no_repeat": False}  # sentences of 4
# tokens: structure on a random model (which repeats itself); Algorithm 1 as in paper 000 (question coverage and
# the repeat rule have tests of their own)


def _hash_score(text: str) -> float:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF


@pytest.fixture
def scored(monkeypatch, monitor):
    """Patch sentence scores: ``by_text[text]`` when given, else ``schedule[i]`` for the i-th sentence of an answer
    when given, else a hash of the text."""
    original = Monitor._reports
    state = {"schedule": {}, "by_text": {}}

    def fake(self, sentences, records, question, context):
        reports = original(self, sentences, records, question, context)
        for r in reports:
            r.score = state["by_text"].get(r.text.strip(), state["schedule"].get(r.index, _hash_score(r.text)))
            r.flagged = r.score < 0.5
        return reports

    monkeypatch.setattr(Monitor, "_reports", fake)
    return state


def test_cad_formula():
    torch.manual_seed(0)
    z_ctx, z_plain = torch.randn(3, 50), torch.randn(3, 50)
    lp_ctx, lp_plain = torch.log_softmax(z_ctx, -1), torch.log_softmax(z_plain, -1)
    alpha = 0.5
    expected = torch.log_softmax((1 + alpha) * z_ctx - alpha * z_plain, -1)
    torch.testing.assert_close(cad_logprobs(lp_ctx, lp_plain, alpha), expected)
    torch.testing.assert_close(cad_logprobs(lp_ctx, lp_plain, 0.0), lp_ctx)


def test_adacad_alpha_follows_the_conflict():
    torch.manual_seed(1)
    lp = torch.log_softmax(torch.randn(2, 40), -1)
    torch.testing.assert_close(adacad_logprobs(lp, lp), lp)  # no conflict: left alone
    # full conflict (disjoint supports): JSD = 1 bit, so AdaCAD is CAD with alpha = 1
    a = torch.full((1, 4), -1e4)
    a[0, 0] = 0.0
    b = torch.full((1, 4), -1e4)
    b[0, 1] = 0.0
    a, b = torch.log_softmax(a, -1), torch.log_softmax(b, -1)
    torch.testing.assert_close(adacad_logprobs(a, b), cad_logprobs(a, b, 1.0))
    # partial conflict: alpha strictly between 0 and 1
    mixed = torch.log_softmax(torch.randn(1, 40), -1)
    out = adacad_logprobs(lp[:1], mixed)
    assert not torch.allclose(out, lp[:1]) and not torch.allclose(out, cad_logprobs(lp[:1], mixed, 1.0))


def test_adacad_and_fod_cad_run_through_the_loop(monitor, scored, one_thread, monkeypatch):
    import faithwatch.decoding.loop as loop_mod

    calls = []
    real = loop_mod.adacad_logprobs
    monkeypatch.setattr(loop_mod, "adacad_logprobs", lambda lp, twin: calls.append(twin.shape) or real(lp, twin))
    ada = generate(monitor, Q, C, strategy="adacad", **SHORT)
    assert ada.answer and not ada.refused and ada.strategy == "adacad"
    assert len(calls) >= ada.num_tokens > 0  # every chosen token went through AdaCAD
    cad = generate(monitor, Q, C, strategy="cad", alpha=3.0, **SHORT)
    scored["schedule"] = {0: 0.9, 1: 0.1}
    fod_cad = generate(monitor, Q, C, strategy="fod-cad", tau1=0.7, tau2=0.0, alpha=3.0, **SHORT)
    kinds = [e.kind for e in fod_cad.trace]
    assert "backtrack" in kinds and "candidate" in kinds
    # stage 1 follows CAD's greedy choice, so its first sentence is CAD's first sentence
    assert fod_cad.trace[0].kind == "accept" and cad.answer.startswith(fod_cad.trace[0].text.strip())
    # fod-adacad: both stages choose through AdaCAD; stage 1 is AdaCAD's greedy answer sentence by sentence
    scored["schedule"] = {0: 0.9, 1: 0.1}
    calls.clear()
    fod_ada = generate(monitor, Q, C, strategy="fod-adacad", tau1=0.7, tau2=0.0, **SHORT)
    assert fod_ada.strategy == "fod-adacad" and "backtrack" in [e.kind for e in fod_ada.trace]
    assert sum(shape[0] for shape in calls) >= fod_ada.generated_tokens > 0  # every token chosen through AdaCAD
    assert fod_ada.trace[0].kind == "accept" and ada.answer.startswith(fod_ada.trace[0].text.strip())


SCRIPT = "The bridge opened in 1820. It was built by masons! Was it old? Yes, it is. Dr. Smith paid 3.5 dollars."


@pytest.mark.parametrize("limits", [(64, 96, True), (64, 5, False), (11, 96, False), (64, 96, False)])
def test_the_beam_stepper_makes_the_loops_sentences(monitor, one_thread, limits):
    """A scripted answer (tokens by position, EOS at the end or not): BeamStepper, which live batches run, closes the
    same sentences at the same tokens as DecodingLoop.sample + keep, and stops for the same reason."""
    from faithwatch.decoding.loop import BeamStepper, DecodingLoop

    max_new, max_sentence, with_eos = limits
    tok = monitor.lm.tokenizer
    script = tok.encode(SCRIPT, add_special_tokens=False) + ([tok.eos_token_id] if with_eos else [1] * 80)
    loop = DecodingLoop(monitor, Q, C, max_new_tokens=max_new, max_sentence_tokens=max_sentence)
    prompt = loop.session.positions[0]

    def scripted(logp, _twin):
        return [script[loop.session.positions[0] - prompt]]

    while not loop.beams[0].finished:
        loop.keep(loop.sample(1, scripted))
    want = loop.beams[0]
    stepper = BeamStepper(tok, monitor.lm.eos_token_ids, max_new, max_sentence)
    got = []
    for token in script:
        closed, feed = stepper.take(token)
        got += closed
        if not feed:
            break
        got += stepper.fed(token)
        if stepper.done:
            break
    assert stepper.done and stepper.stop == want.stop_reason and stepper.ids == want.ids
    assert [(s.index, s.text, s.start, s.end, s.token_start, s.token_end) for s in got] == [
        (s.index, s.text, s.start, s.end, s.token_start, s.token_end) for s in want.sentences]
    if max_sentence > 50 and max_new > 50:  # the sentence rule, not a limit, ended them
        assert [s.text for s in got][:4] == ["The bridge opened in 1820.", "It was built by masons!", "Was it old?",
                                             "Yes, it is."]


def test_greedy_matches_the_monitor(monitor, one_thread):
    result = generate(monitor, Q, C, strategy="greedy", max_new_tokens=12)
    live = monitor.generate(Q, C, max_new_tokens=12)
    assert result.answer == live.response.strip()
    assert result.num_tokens == live.num_tokens and not result.refused


def test_abstention_refuses_explicitly(monitor, scored, one_thread):
    scored["schedule"] = {0: 0.9, 1: 0.9, 2: 0.9, 3: 0.9}
    ok = generate(monitor, Q, C, strategy="abstain", **SHORT)
    assert not ok.refused and ok.answer and ok.answer != REFUSAL
    scored["schedule"] = {0: 0.9, 1: 0.3, 2: 0.9, 3: 0.9}
    refused = generate(monitor, Q, C, strategy="abstain", **SHORT)
    assert refused.refused and refused.answer == REFUSAL and refused.stop_reason == "refused"
    assert [e.kind for e in refused.trace][-1] == "refuse" and refused.trace[-1].step == 1


def test_fod_bt_backtracks_at_the_first_sentence_below_tau1(monitor, scored, one_thread):
    scored["schedule"] = {0: 0.9, 1: 0.8, 2: 0.2, 3: 0.9}
    result = generate(monitor, Q, C, strategy="fod-bt", tau1=0.7, **SHORT)
    kinds = [(e.kind, e.step) for e in result.trace]
    assert kinds == [("accept", 0), ("accept", 1), ("backtrack", 2)]
    assert [s.index for s in result.sentences] == [0, 1]
    assert result.stop_reason == "backtracked" and result.num_tokens == 8  # the rejected sentence is gone
    assert result.answer.startswith(result.sentences[0].text) and result.answer.endswith(result.sentences[1].text)


def test_fod_prunes_below_tau2_and_respects_the_beam_size(monitor, scored, one_thread):
    scored["schedule"] = {0: 0.9}  # greedy sentence 0 passes; later sentences get hash scores
    result = generate(monitor, Q, C, strategy="fod", tau1=0.7, tau2=0.4, beams=2, samples=6, seed=3, **SHORT)
    events = result.trace
    assert (events[0].kind, events[0].step) == ("accept", 0)
    assert any(e.kind == "backtrack" for e in events)
    for e in events:
        if e.kind == "prune":
            assert e.score < 0.4
    by_step: dict[int, list] = {}
    for e in events:
        by_step.setdefault(e.step, []).append(e)
    for step, evs in by_step.items():
        assert sum(e.kind == "keep" for e in evs) <= 2, step
        assert sum(e.kind == "candidate" for e in evs) <= 6, step
    assert all(s.score >= 0.4 for s in result.sentences[1:])
    again = generate(monitor, Q, C, strategy="fod", tau1=0.7, tau2=0.4, beams=2, samples=6, seed=3, **SHORT)
    assert again.answer == result.answer and [e.to_dict() for e in again.trace] == [e.to_dict() for e in events]


def test_fod_keeps_no_two_beams_with_the_same_answer(monitor, scored, one_thread):
    scored["schedule"] = {0: 0.1}  # backtrack at once; every later sentence survives tau2 = 0
    # near-zero temperature: every sampled candidate of a beam is the same, so only one can be kept
    result = generate(monitor, Q, C, strategy="fod", tau1=0.7, tau2=0.0, beams=2, samples=4, temperature=1e-4,
                      **SHORT)
    keeps: dict[int, list[str]] = {}
    for e in result.trace:
        if e.kind == "keep":
            keeps.setdefault(e.step, []).append(e.text)
    assert keeps and all(len(texts) == 1 for texts in keeps.values()), keeps
    assert any(e.kind == "drop" and e.reason == "the same answer as a kept beam" for e in result.trace)


def test_fod_refuses_when_nothing_survives(monitor, scored, one_thread):
    scored["schedule"] = {0: 0.1}
    result = generate(monitor, Q, C, strategy="fod", tau1=0.7, tau2=1.0, **SHORT)  # no fake score reaches 1.0
    assert result.refused and result.answer == REFUSAL
    assert any(e.kind == "prune" for e in result.trace) and not any(e.kind == "keep" for e in result.trace)


@pytest.fixture
def adacad_scored(monkeypatch):
    """Sentence scores ``state["low"]`` until AdaCAD chose a token, then ``state["high"]`` (reset ``adacad``
    between runs)."""
    import faithwatch.decoding.loop as loop_mod

    state = {"adacad": False, "low": 0.1, "high": 0.1}
    real_ada, original = loop_mod.adacad_logprobs, Monitor._reports

    def ada(lp, twin):
        state["adacad"] = True
        return real_ada(lp, twin)

    def fake(self, sentences, records, question, context):
        reports = original(self, sentences, records, question, context)
        for r in reports:
            r.score = state["high"] if state["adacad"] else state["low"]
            r.flagged = r.score < self.threshold
        return reports

    monkeypatch.setattr(loop_mod, "adacad_logprobs", ada)
    monkeypatch.setattr(Monitor, "_reports", fake)
    return state


def test_fod_fallback_searches_adacad_before_refusing(monitor, one_thread, adacad_scored):
    """fod-fallback is plain FOD until FOD would refuse; then it searches once more over AdaCAD from the start."""
    state = adacad_scored
    args = dict(tau1=0.7, tau2=0.5, beams=2, samples=4, seed=5, **SHORT)
    plain = generate(monitor, Q, C, strategy="fod", **args)
    assert plain.refused and not state["adacad"]
    state["high"] = 0.9
    rescued = generate(monitor, Q, C, strategy="fod-fallback", **args)
    assert not rescued.refused and rescued.answer != REFUSAL and rescued.sentences
    assert all(s.score == 0.9 for s in rescued.sentences)  # every kept sentence came from the AdaCAD search
    first = [e.to_dict() for e in rescued.trace[:len(plain.trace) - 1]]
    assert first == [e.to_dict() for e in plain.trace[:-1]]  # plain FOD's search, minus its refusal
    turn = rescued.trace[len(plain.trace) - 1]
    assert turn.kind == "backtrack" and "AdaCAD" in turn.reason and rescued.trace[-1].kind == "select"
    # nothing passes over AdaCAD either: an explicit refusal
    state["adacad"], state["high"] = False, 0.1
    still = generate(monitor, Q, C, strategy="fod-fallback", **args)
    assert still.refused and still.answer == REFUSAL and still.trace[-1].kind == "refuse"
    # where plain FOD answers, fod-fallback is plain FOD: the same answer and trace
    state["adacad"], state["low"] = False, 0.9
    ok, same = (generate(monitor, Q, C, strategy=s, **args) for s in ("fod", "fod-fallback"))
    assert not ok.refused and same.answer == ok.answer
    assert [e.to_dict() for e in same.trace] == [e.to_dict() for e in ok.trace] and not state["adacad"]


def test_fod_fallback_last_resort_answers_what_the_detector_passes(monitor, one_thread, adacad_scored):
    """With --last-resort, where both searches keep nothing at tau2, fod-fallback searches a last time at the
    monitor's own threshold: it answers with sentences the detector does not flag, and still refuses when none
    passes that either. By default (since 2026-11-28) it refuses there."""
    state = adacad_scored
    floor = float(monitor.threshold)
    args = dict(tau1=0.7, tau2=0.95, beams=2, samples=4, seed=5, **SHORT)
    state["high"] = (floor + 0.95) / 2  # passes the detector, not tau2
    rescued = generate(monitor, Q, C, strategy="fod-fallback", last_resort=True, **args)
    assert not rescued.refused and rescued.answer != REFUSAL and rescued.sentences
    assert all(s.score == state["high"] and not s.flagged for s in rescued.sentences)
    turns = [e for e in rescued.trace if e.kind == "backtrack" and e.step == 0 and "search" in e.reason]
    assert len(turns) == 2 and "last search" in turns[1].reason and f"{floor:.3f}" in turns[1].reason
    state["adacad"] = False
    strict = generate(monitor, Q, C, strategy="fod-fallback", **args)  # the default: --no-last-resort
    assert strict.refused and not any("last search" in e.reason for e in strict.trace if e.kind == "backtrack")
    # below the detector's threshold too: refused after the third search
    state["adacad"], state["high"] = False, floor / 2
    still = generate(monitor, Q, C, strategy="fod-fallback", last_resort=True, **args)
    assert still.refused and still.trace[-1].kind == "refuse"
    assert any("last search" in e.reason for e in still.trace if e.kind == "backtrack")
    # tau2 at or below the threshold: no looser search to make, so no third search
    state["adacad"] = False
    low = generate(monitor, Q, C, strategy="fod-fallback", **{**args, "tau2": floor, "last_resort": True})
    assert low.refused and not any("last search" in e.reason for e in low.trace if e.kind == "backtrack")


def test_rerank_returns_the_best_sample(monitor, scored, one_thread):
    result = generate(monitor, Q, C, strategy="rerank", samples=4, seed=1, **SHORT)
    candidates = [e for e in result.trace if e.kind == "candidate"]
    assert len(candidates) == 4
    best = max(c.score for c in candidates)
    assert result.trace[-1].kind == "select" and result.trace[-1].score == pytest.approx(best)
    assert result.mean_score == pytest.approx(best)


def test_rerank_at_temperature_0_draws_one_sample(monitor, scored, one_thread):
    """At temperature 0 every sample is the greedy answer: one is drawn, not S identical ones."""
    plain = generate(monitor, Q, C, strategy="greedy", **SHORT)
    for strategy in ("rerank", "rerank-coverage"):
        result = generate(monitor, Q, C, strategy=strategy, samples=4, temperature=0.0, tau1=1.0,
                          **{**SHORT, "coverage": True} if strategy == "rerank-coverage" else SHORT)
        candidates = [e.text.strip() for e in result.trace if e.kind == "candidate"]
        assert candidates == [plain.answer] * (1 if strategy == "rerank" else 2) and result.answer == plain.answer
        assert result.generated_tokens == plain.generated_tokens * len(candidates)


def test_rerank_coverage_gate_then_slots_before_scores(monitor, scored, one_thread, monkeypatch):
    from faithwatch.decoding.coverage import Coverage

    plain = generate(monitor, Q, C, strategy="greedy", **SHORT)
    samples = [e.text for e in generate(monitor, Q, C, strategy="rerank", samples=4, seed=1, **SHORT).trace
               if e.kind == "candidate"]
    target = {"text": ""}

    def squeeze(text: str) -> str:
        return "".join(text.split())

    # one answer fills the question's slot, every other leaves it open
    monkeypatch.setattr(Coverage, "open", lambda self, sents: 0 if squeeze(" ".join(sents)) == target["text"] else 1)
    # tau1 = 1: no greedy answer passes the gate; with tau1 = 0 a sample fills the slot and greedy leaves it open
    for chosen, tau1 in [(plain.answer, 1.0), (samples[-1], 0.0)]:
        target["text"] = squeeze(chosen)
        result = generate(monitor, Q, C, strategy="rerank-coverage", samples=4, seed=1, tau1=tau1,
                          **{**SHORT, "coverage": True})
        candidates = [e for e in result.trace if e.kind == "candidate"]
        # the greedy answer (its sentences accepted in the trace) and rerank's own samples for this seed
        assert [e.text.strip() for e in candidates] == [plain.answer, *(t.strip() for t in samples)]
        assert [e.text for e in result.trace if e.kind == "accept"] == [s.text for s in plain.sentences]
        assert squeeze(result.answer) == target["text"] and not result.refused
        (select,) = [e for e in result.trace if e.kind == "select"]
        assert [e.beam for e in candidates] == list(range(5)) and candidates[select.beam].text == select.text
        assert result.params["coverage"] is True and result.params["tau1"] == tau1
    # the gate: a greedy answer that fills every slot, each sentence >= tau1, is kept and no sample is drawn
    target["text"] = squeeze(plain.answer)
    kept = generate(monitor, Q, C, strategy="rerank-coverage", samples=4, seed=1, tau1=0.0,
                    **{**SHORT, "coverage": True})
    assert [e.kind for e in kept.trace if e.kind in ("candidate", "select")] == ["candidate", "select"]
    assert kept.answer == plain.answer and kept.generated_tokens == plain.generated_tokens
    # no slot filled by any: the best mean sentence score, the greedy answer among the candidates
    target["text"] = "nothing"
    result = generate(monitor, Q, C, strategy="rerank-coverage", samples=4, seed=1, **{**SHORT, "coverage": True})
    candidates = [e for e in result.trace if e.kind == "candidate"]
    assert result.mean_score == pytest.approx(max(e.score for e in candidates))


def test_rerank_answers_end_before_a_repeated_sentence(monitor, scored, one_thread, monkeypatch):
    """With ``no_repeat``, rerank's samples and rerank-coverage's pool (its greedy answer too) end before their
    first sentence that says an earlier one again; off, the repeat stays."""
    import torch

    from faithwatch.decoding import rerank, strategies
    from faithwatch.decoding.loop import DecodingLoop
    from faithwatch.decoding.types import REPEATED
    from faithwatch.params import DecodingParams

    first, again, last = "The bridge opened in 1820.", "The Bridge opened in 1820!", "It is long."
    scored["by_text"].update({first: 0.9, again: 0.9, last: 0.9})
    tok = monitor.lm.tokenizer
    ids = tok.encode(f"{first} {again} {last}", add_special_tokens=False) + [min(monitor.lm.eos_token_ids)]

    def run(name: str, no_repeat: bool):
        loop = DecodingLoop(monitor, Q, C, max_new_tokens=40, max_sentence_tokens=40)
        prompt = loop.session.positions[0]

        def script(*_args):  # every branch says the script, from where it stands
            return lambda logp, _twin: [ids[min(p - prompt, len(ids) - 1)] for p in loop.session.positions]

        monkeypatch.setattr(rerank, "sampling_chooser", script)
        monkeypatch.setattr(rerank, "greedy_chooser", script)
        params = DecodingParams(samples=2, tau1=1.0, coverage=False, no_repeat=no_repeat, max_new_tokens=40)
        job = strategies.StrategyRun(loop, monitor, params, [], torch.Generator().manual_seed(0))
        beam, refused = getattr(rerank, name)(job)
        return beam, job.trace, refused

    for name, pool in (("rerank", 2), ("rerank_coverage", 3)):
        beam, trace, refused = run(name, no_repeat=False)
        assert [s.text for s in beam.sentences] == [first, again, last] and not refused
        beam, trace, refused = run(name, no_repeat=True)
        assert [s.text for s in beam.sentences] == [first] and not refused
        assert tok.decode(beam.ids).strip() == first and beam.finished and beam.stop_reason == "repeated sentence"
        prunes = [e for e in trace if e.kind == "prune"]
        assert len(prunes) == pool and all(e.text == again and e.step == 1 and REPEATED in e.reason for e in prunes)
        assert all(e.text.strip() == first for e in trace if e.kind == "candidate" and "full sample" in e.reason)
    no_repeat = generate(monitor, Q, C, strategy="rerank", samples=2, **{**SHORT, "no_repeat": True})
    assert no_repeat.params["no_repeat"] is True


def test_candidates_share_one_batch(monitor, scored, one_thread, monkeypatch):
    widths = []
    hook = monitor.lm.model.register_forward_pre_hook(
        lambda _m, _a, kw: widths.append(kw["input_ids"].shape[0]), with_kwargs=True)
    try:
        generate(monitor, Q, C, strategy="rerank", samples=5, seed=1, **SHORT)
    finally:
        hook.remove()
    assert max(widths) == 10  # 5 samples x (RAG row + no-context twin row) in one forward pass


def test_lookback_guided_chunks(monitor, lm, one_thread):
    from faithwatch.detectors import LookbackLens

    rng = np.random.default_rng(0)
    vectors = rng.random((60, lm.num_layers * lm.num_heads))
    lens = LookbackLens.fit(vectors, (vectors[:, 0] > 0.5).astype(int), num_layers=lm.num_layers,
                            num_heads=lm.num_heads, model_id=lm.model_id)
    result = generate(monitor, Q, C, strategy="lookback", lens=lens, max_new_tokens=20, chunk_tokens=8, seed=0)
    selects = [e for e in result.trace if e.kind == "select"]
    assert len(selects) == 3  # 8 + 8 + 4 tokens
    assert result.num_tokens == 20 and all(0.0 <= e.score <= 1.0 for e in selects)


def test_unknown_strategy_is_a_clear_error(monitor):
    from faithwatch.errors import InputError

    with pytest.raises(InputError, match="unknown strategy"):
        generate(monitor, Q, C, strategy="magic")


def test_sampling_chooser_draws_from_the_tempered_distribution():
    probs = torch.tensor([0.1, 0.6, 0.0, 0.3])
    logp = probs.log().repeat(20000, 1)
    counts = np.bincount(sampling_chooser(1.0, torch.Generator().manual_seed(0))(logp, None), minlength=4) / 20000
    np.testing.assert_allclose(counts, probs.numpy(), atol=0.015)  # never the zero-probability token
    sharp = np.bincount(sampling_chooser(0.5, torch.Generator().manual_seed(0))(logp, None), minlength=4) / 20000
    tempered = probs**2 / (probs**2).sum()  # temperature 0.5 squares the probabilities
    np.testing.assert_allclose(sharp, tempered.numpy(), atol=0.015)
    again = sampling_chooser(1.0, torch.Generator().manual_seed(0))(logp[:50], None)
    assert again == sampling_chooser(1.0, torch.Generator().manual_seed(0))(logp[:50], None)  # seeded


def test_fod_trim_cuts_a_low_greedy_sentence_at_a_comma(monitor, scored, one_thread):
    """FOD's trim (``trim=True``): the low sentence cut at a comma goes through the engine like any sentence (the
    same tokens, text and score as a scripted sentence), and the longest cut that passes stage 1 is kept."""
    from faithwatch.decoding.coverage import Coverage
    from faithwatch.decoding.fod import _trimmed
    from faithwatch.decoding.loop import DecodingLoop

    scores = scored["by_text"]
    scores.update({"The bridge opened in 1820, said the old masons.": 0.2, "The bridge opened in 1820.": 0.9,
                   "Yes, it is.": 0.2})
    tok = monitor.lm.tokenizer
    after = tok.encode(" It", add_special_tokens=False)[0]

    def scripted(text: str):
        ids = tok.encode(text, add_special_tokens=False) + [after]
        loop = DecodingLoop(monitor, Q, C, max_new_tokens=40, max_sentence_tokens=40)
        prompt = loop.session.positions[0]
        return loop, lambda logp, _twin: [ids[min(loop.session.positions[0] - prompt, len(ids) - 1)]]

    loop, choose = scripted("The bridge opened in 1820, said the old masons.")
    start = loop.session.checkpoint()
    (whole,) = loop.sample(1, choose)
    assert whole.report.text == "The bridge opened in 1820, said the old masons." and whole.report.score == 0.2
    loop.session.restore(start)
    then = lambda logp, _twin: [after]  # noqa: E731
    cut = _trimmed(loop, Coverage(""), whole, then, 0.5, start)
    assert cut is not None and cut.report.text == "The bridge opened in 1820." and cut.report.score == 0.9
    ref_loop, ref_choose = scripted("The bridge opened in 1820.")
    (ref,) = ref_loop.sample(1, ref_choose)
    assert cut.ids == ref.ids and cut.report.features == ref.report.features  # the engine path, as scripted
    loop.keep([cut])
    assert loop.text(loop.beams[0].ids) == "The bridge opened in 1820."

    for text, low in (("Yes, it is.", 0.9), ("The bridge opened in 1820, said the old masons.", 0.1)):
        scores["The bridge opened in 1820."] = low  # the second: a cut is tried and fails
        other, choose = scripted(text)  # the first: a cut would keep one word, so none is tried
        start = other.session.checkpoint()
        (whole,) = other.sample(1, choose)
        other.session.restore(start)
        at = other.session.positions[0]
        assert _trimmed(other, Coverage(""), whole, then, 0.5, start) is None
        assert other.session.positions[0] == at  # nothing of a failed cut stays fed


def test_trim_is_a_fod_parameter(monitor, scored, one_thread):
    scored["schedule"] = {0: 0.9, 1: 0.9, 2: 0.9, 3: 0.9}
    off = generate(monitor, Q, C, strategy="fod", **SHORT)
    on = generate(monitor, Q, C, strategy="fod", trim=True, **SHORT)
    assert on.params["trim"] is True and off.params["trim"] is False
    assert on.answer == off.answer  # every greedy sentence passes: nothing to cut


def test_fod_treats_a_repeated_sentence_as_a_low_one(monitor, scored, one_thread):
    """With ``no_repeat`` (the default), a greedy sentence that says one of its answer's sentences again (case and
    punctuation aside) is refused by stage 1 as a low one is, and the search prunes candidates that do; off, it
    passes."""
    from faithwatch.decoding.coverage import Coverage
    from faithwatch.decoding.fod import _fod
    from faithwatch.decoding.loop import DecodingLoop
    from faithwatch.decoding.types import REPEATED

    first, again = "The bridge opened in 1820.", "The Bridge opened in 1820!"
    scored["by_text"].update({first: 0.9, again: 0.9})
    tok = monitor.lm.tokenizer
    ids = tok.encode(f"{first} {again}", add_special_tokens=False) + [min(monitor.lm.eos_token_ids)]

    def run(no_repeat: bool, backtrack_only: bool):
        loop = DecodingLoop(monitor, Q, C, max_new_tokens=40, max_sentence_tokens=40)
        prompt = loop.session.positions[0]

        def script(logp, _twin):  # every branch says the script, from where it stands
            return [ids[min(p - prompt, len(ids) - 1)] for p in loop.session.positions]

        trace = []
        beam = _fod(loop, script, script, 0.5, 0.5, 2, 2, trace, backtrack_only, Coverage(""), no_repeat=no_repeat)
        return [s.text for s in beam.sentences], trace

    texts, trace = run(no_repeat=False, backtrack_only=True)
    assert texts == [first, again] and not any(e.kind == "backtrack" for e in trace)
    texts, trace = run(no_repeat=True, backtrack_only=True)
    assert texts == [first] and (trace[-1].kind, trace[-1].step, trace[-1].text) == ("backtrack", 1, again)
    assert trace[-1].reason == f"greedy sentence {REPEATED}"
    texts, trace = run(no_repeat=True, backtrack_only=False)  # the search samples the repeat: pruned
    prunes = [e for e in trace if e.kind == "prune"]
    assert texts == [first] and len(prunes) == 2 and all(e.reason == REPEATED and e.text == again for e in prunes)
    assert any(e.kind == "stop" and e.reason == "no new candidate scored >= tau2=0.5" for e in trace)
    short = {k: v for k, v in SHORT.items() if k != "no_repeat"}
    assert generate(monitor, Q, C, strategy="fod", **short).params["no_repeat"] is True  # the default
    assert generate(monitor, Q, C, strategy="fod", no_repeat=False, **short).params["no_repeat"] is False


def test_a_cut_context_is_counted_and_noted_in_the_result(lm, one_thread):
    """A context cut to fit the window (``truncate_context``) is never silent: the result counts the cut tokens and
    its notes say so, as a MonitorResult's do; a transcript context is noted too, a plain one not."""
    cutting = Monitor(lm, alignment="lexical", truncate_context=True)
    long_context = " ".join([C] * 60)
    result = generate(cutting, Q, long_context, strategy="greedy", max_new_tokens=8)
    assert result.context_tokens_cut > 0
    assert [n for n in result.notes if f"last {result.context_tokens_cut} tokens were cut" in n]
    assert result.to_dict()["notes"] == result.notes and result.to_dict()["context_tokens_cut"] > 0
    plain = generate(cutting, Q, C, strategy="greedy", max_new_tokens=8)
    assert plain.context_tokens_cut == 0 and plain.notes == []
    chat = "Ann: the bridge opened in 1820.\nBob: masons built it.\nAnn: yes, in Lyon."
    assert [n for n in generate(cutting, Q, chat, strategy="cad", max_new_tokens=8).notes if "transcript" in n]
