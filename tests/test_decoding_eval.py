"""Evaluation of decoding strategies: the counterfactual QA set, success judging, metrics, caching, the CLI.

Every test runs strategies through a fake ``generate_fn`` (deterministic answers per strategy), so nothing
here depends on the strategies themselves; only the CLI test loads the tiny model (for the Monitor).
"""

from __future__ import annotations

import gzip
import json
import math
from collections import Counter

import pytest

from faithwatch.claims.types import ENTAILMENT, ClaimVerdict
from faithwatch.decoding import counterfactual as cf
from faithwatch.decoding.types import REFUSAL, DecodingResult, TraceEvent
from faithwatch.errors import ContextTooLongError, InputError
from faithwatch.eval import decoding as ev
from faithwatch.eval import decoding_summary as es
from faithwatch.results import SentenceReport

INVENTED = "Purple elephants composed seventeen operas on Neptune. Their conductor was a violet robot named Zork."


def _sentence(i: int, text: str, score: float = 0.8) -> SentenceReport:
    return SentenceReport(index=i, text=text, start=0, end=len(text), token_start=0, token_end=1, features={},
                          score=score, flagged=False, detector="fake")


class FakeGenerate:
    """Deterministic answers per strategy; counts calls; can fail on a given call."""

    def __init__(self, items, fail_on: int | None = None, error: Exception | None = None):
        self.by_question = {i.question: i for i in items}
        self.calls: list[tuple[str, str]] = []
        self.fail_on = fail_on
        self.error = error or RuntimeError("simulated crash")
        self.params: dict = {}
        self.attempts = 0

    def __call__(self, monitor, question, context, strategy="greedy", **params) -> DecodingResult:
        self.attempts += 1
        if self.attempts == self.fail_on:
            raise self.error
        item = self.by_question[question]
        self.calls.append((strategy, item.id))
        self.params = params
        refused = False
        ctx_answer = " and ".join(g[0] for g in item.context_answers)
        common = item.common_answers[0] if item.common_answers else "something else"
        if strategy == "ctx":  # the context's answer, then a sentence copied from the context
            texts = [f"The answer is {ctx_answer}." if item.context_answers else "Here it is.",
                     context.split(". ")[0].rstrip(".") + "."]
        elif strategy == "common":
            texts = [f"The answer is {common}."]
        elif strategy == "both":
            texts = [f"The context says {ctx_answer}.", f"It is really {common}."]
        elif strategy == "copy":  # sentences of the context, verbatim
            texts = [s.strip().rstrip(".") + "." for s in context.split(". ")[:2]]
        elif strategy == "invent":
            texts = [s.strip().rstrip(".") + "." for s in INVENTED.split(". ")]
        elif strategy == "refuse":
            texts, refused = [], True
        else:
            raise AssertionError(f"unexpected strategy {strategy}")
        answer = REFUSAL if refused else " ".join(texts)
        trace = [TraceEvent("backtrack", 0)] * (2 if strategy == "both" else 0)
        return DecodingResult(strategy=strategy, answer=answer, refused=refused,
                              sentences=[_sentence(i, t) for i, t in enumerate(texts)], trace=trace,
                              num_tokens=5 * len(texts), generated_tokens=10 * len(texts) + 3, stop_reason="eos")


@pytest.fixture(scope="module")
def items():
    return cf.load_counterfactual()


def _row(summary, strategy):
    return summary.set_index("strategy").loc[strategy]


def _has_nan(df) -> bool:
    return any(isinstance(v, float) and math.isnan(v) for v in df.to_numpy().ravel())


# ---- the data set ----------------------------------------------------------------------------------------


def test_packaged_set_is_valid(items):
    from faithwatch.claims.spans import sentence_spans

    assert len(items) >= 40
    assert len({i.id for i in items}) == len(items)
    assert len(set(cf.topics(items))) >= 8
    assert sum(i.agrees for i in items) >= 30
    assert sum(len(i.context_answers) > 1 for i in items) >= 10
    for it in items:
        assert it.is_counterfactual and it.topic, it.id
        assert bool(it.common_answers) != it.agrees, it.id  # agreeing items have no contradicting answer
        for g, group in enumerate(it.context_answers):
            others = " and ".join(h[0] for k, h in enumerate(it.context_answers) if k != g)
            for a in group:
                assert cf.mentions(it.context, a), (it.id, a)  # stated in the context
                assert not cf.mentions(it.question, a), (it.id, a)  # the question does not give it away
                assert cf.success(f"According to the text, it is {a} {others}.", it), (it.id, a)
            if len(it.context_answers) > 1:  # every asked fact is needed
                assert not cf.success(f"It is {group[0]}.", it), it.id
        for c in it.common_answers:
            assert not cf.mentions(it.context, c), (it.id, c)
            assert not cf.mentions(it.question, c), (it.id, c)
            assert not cf.success(f"It is {c}.", it), (it.id, c)
        assert 2 <= len(sentence_spans(it.context)) <= 4, it.id


def test_success_on_hand_made_answers(items):
    eiffel = next(i for i in items if i.id == "eiffel-tower-city")
    assert cf.success("The Eiffel Tower stands in Lyon.", eiffel)
    assert cf.success("LYON'S famous tower", eiffel)  # case and possessive
    assert not cf.success("It stands in Lyon, although most people say Paris.", eiffel)  # both
    assert not cf.success("It is in Paris.", eiffel)
    assert not cf.success("I am not sure.", eiffel)
    assert not cf.success(REFUSAL, eiffel)  # the standard refusal
    assert not cf.success("Lyon", eiffel, refused=True)  # a refusing strategy never succeeds
    outcome = cf.judge(REFUSAL, eiffel)
    assert outcome.abstained and not outcome.success
    both = cf.judge("Lyon or Paris", eiffel)
    assert both.context_hit and both.common_hit and not both.success


def test_multi_fact_and_agreeing_items(tmp_path):
    multi = cf.parse_item({"id": "m", "question": "Where and when?", "context": "It was signed in Lyon in 1921.",
                           "context_answers": [["Lyon"], ["1921"]], "common_answers": ["Paris", "1919"]})
    assert multi.context_answers == (("Lyon",), ("1921",))
    assert cf.success("Lyon, in 1921.", multi)
    assert not cf.success("It was Lyon.", multi)  # naming one of two facts is not enough
    assert not cf.success("Lyon in 1919.", multi)
    agree = cf.parse_item({"id": "g", "question": "Capital?", "context": "Paris is the capital of France.",
                           "context_answers": ["Paris"], "common_answers": [], "kind": "agree"})
    assert agree.agrees and cf.success("Paris.", agree) and not cf.success("Lyon.", agree)
    assert cf.parse_item(agree.to_dict()) == agree and cf.parse_item(multi.to_dict()) == multi
    with pytest.raises(ValueError, match="non-empty"):
        cf.parse_item({**agree.to_dict(), "kind": "counterfactual"})  # only agreeing items may omit them
    with pytest.raises(ValueError, match="leave 'common_answers' empty"):
        cf.parse_item({**agree.to_dict(), "common_answers": ["Paris"]})
    with pytest.raises(ValueError, match="kind"):
        cf.parse_item({**agree.to_dict(), "kind": "odd"})
    with pytest.raises(ValueError, match="not a mix"):
        cf.parse_item({**multi.to_dict(), "context_answers": ["Lyon", ["1921"]]})
    for where, bad in (("'context_answers' of the record", {"context_answers": [["Ly\ud800on"], ["1921"]]}),
                       ("'question' of the record", {"question": "\udcff"})):  # JSON's lone "\ud800" escapes
        with pytest.raises(ValueError, match=f"{where} holds a lone surrogate"):
            cf.parse_item({**multi.to_dict(), **bad})
    rows = [ev.item_row("s", it, {"answer": ans, "refused": False, "num_tokens": 3, "generated_tokens": 3,
                                  "n_sentences": 1, "guide_score": 0.9, "sentences": [], "trace_counts": {},
                                  "seconds": 0.1}, None, cached=False)
            for it, ans in ((multi, "Lyon, 1921."), (agree, "Lyon."))]
    summary = es.summarize(rows, ["s"], n_boot=50)
    assert _row(summary, "s").success_rate == 1.0 and _row(summary, "s").agree_success_rate == 0.0


def test_unanswerable_items_succeed_only_by_declining():
    """An item whose context lacks the fact: success is a refusal or an answer saying the context does not give
    it; such items stay out of the counterfactual success and gain, and have their own two figures."""
    gap = cf.parse_item({"id": "u", "question": "How many people cross the bridge each day?", "kind": "unanswerable",
                         "context": "The bridge is 412 metres long. It opened in 1932.", "common_answers": ["50,000"]})
    assert gap.unanswerable and not gap.is_counterfactual and cf.parse_item(gap.to_dict()) == gap
    assert cf.success("The passage does not say how many people cross it.", gap)
    assert cf.success("There is no information about that in the context.", gap)
    assert cf.success("Anything at all.", gap, refused=True) and cf.success(REFUSAL, gap)
    assert not cf.success("About 412 metres.", gap)  # a value of the context filling the gap
    remembered = cf.judge("About 50000 people cross it daily.", gap)
    assert remembered.common_hit and not remembered.success
    assert not cf.declines("The tower was not completed until 1889.") and not cf.declines("He did not say it.")
    with pytest.raises(ValueError, match="leave out 'context_answers'"):
        cf.parse_item({**gap.to_dict(), "context_answers": ["412"]})
    with pytest.raises(ValueError, match="must not hold the answer"):
        cf.parse_item({**gap.to_dict(), "common_answers": ["1932"]})
    eiffel = cf.parse_item({"id": "e", "question": "Where?", "context": "The Eiffel Tower is in Lyon.",
                            "context_answers": ["Lyon"], "common_answers": ["Paris"]})
    gen = {"refused": False, "num_tokens": 3, "generated_tokens": 3, "n_sentences": 1, "guide_score": 0.9,
           "sentences": [], "trace_counts": {}, "seconds": 0.1}
    rows = [ev.item_row(s, it, {**gen, "answer": ans}, None, cached=False)
            for s, it, ans in (("greedy", eiffel, "Paris."), ("greedy", gap, "About 50,000 people."),
                               ("fod", eiffel, "Lyon."), ("fod", gap, "The context does not say."))]
    summary = es.summarize(rows, ["greedy", "fod"], n_boot=50)
    fod, greedy = _row(summary, "fod"), _row(summary, "greedy")
    assert fod.success_rate == 1.0 and greedy.success_rate == 0.0 and fod.success_gain == 1.0
    assert fod.unanswerable_decline_rate == 1.0 and greedy.unanswerable_decline_rate == 0.0
    assert greedy.unanswerable_common_rate == 1.0 and fod.unanswerable_common_rate == 0.0
    assert greedy.common_rate == 1.0  # the counterfactual item's common answer only


def test_matching_normalisation(items):
    assert cf.mentions("It was finished in 1925.", "1925")
    assert not cf.mentions("It was finished in 19250.", "1925")
    assert not cf.mentions("It measured 1.42 m.", "42") and not cf.mentions("42.195 km", "42.1")
    assert cf.mentions("Height: 9312 m", "9,312") and cf.mentions("Height: 9,312 m", "9,312")
    assert cf.mentions("The team has 6 players.", "six") and cf.mentions("twenty-one", "21")
    assert not cf.mentions("Nigeria", "Niger") and cf.mentions("two kangaroos", "kangaroo")
    assert cf.mentions("Zürich", "Zurich") and cf.mentions("Tim Berners Lee", "Berners-Lee")
    assert cf.mentions("a distance of 40.5kilometers", "40.5") and cf.mentions("40.5km.", "40.5")
    assert not cf.mentions("the 6th player", "6") and not cf.mentions("6_000", "6")
    heart = next(i for i in items if i.id == "heart-chambers")
    assert cf.success("It has 3 chambers.", heart) and not cf.success("It has 4 chambers.", heart)


def test_loader_errors_name_the_line(tmp_path):
    good = {"id": "a", "question": "Where?", "context": "It is in Lyon.", "context_answers": ["Lyon"],
            "common_answers": ["Paris"]}
    cases = {
        "not json": "invalid JSON",
        json.dumps({**good, "context_answers": ["Marseille"]}): "do not occur in the context",
        json.dumps({**good, "context": "It is in Lyon, not Paris."}): "occur in the context",
        json.dumps({**good, "question": ""}): "'question' must be a non-empty string",
        json.dumps({k: v for k, v in good.items() if k != "common_answers"}): "go together",
        json.dumps(good): "already used on line 1",
    }
    for bad, message in cases.items():
        path = tmp_path / "bad.jsonl"
        path.write_text(json.dumps(good) + "\n" + bad + "\n")
        with pytest.raises(InputError, match=message) as info:
            cf.load_items(path)
        assert "line 2" in str(info.value)
    plain = tmp_path / "plain.jsonl"
    plain.write_text(json.dumps({"question": "Where?", "context": "It is in Lyon."}) + "\n")
    (item,) = cf.load_items(plain)
    assert item.id == "line-1" and not item.is_counterfactual
    with pytest.raises(InputError, match="required"):
        cf.load_counterfactual(plain)
    with pytest.raises(InputError, match="no context_answers"):
        cf.success("Lyon", item)
    with pytest.raises(InputError, match="not found"):
        cf.load_items(tmp_path / "missing.jsonl")
    latin = tmp_path / "latin1.jsonl"  # an internal UnicodeDecodeError before
    latin.write_bytes(json.dumps({**good, "context": "It is in Lyon, n\u00e9e."}, ensure_ascii=False).encode("latin-1"))
    with pytest.raises(InputError, match="latin1.jsonl is not UTF-8 text"):
        cf.load_items(latin)
    marked = tmp_path / "marked.jsonl"  # a byte-order mark was invalid JSON on line 1
    marked.write_text("\ufeff" + json.dumps(good) + "\n", encoding="utf-8")
    assert [i.id for i in cf.load_items(marked)] == ["a"]
    separated = tmp_path / "separated.jsonl"  # U+2028 inside a JSON string is no line break
    separated.write_text(json.dumps({**good, "context": "It is in Lyon.\u2028Yes."}, ensure_ascii=False) + "\n",
                         encoding="utf-8")
    assert cf.load_items(separated)[0].context == "It is in Lyon.\u2028Yes."


# ---- metrics -----------------------------------------------------------------------------------------------


def test_success_gain_is_paired_with_greedy():
    # 20 counterfactual items: greedy right on 0-9, fod on 0-14; two agreeing items are left out of the gain
    def row(strategy, i, ok, agrees=False):
        return {"strategy": strategy, "id": f"q{i}", "success": ok, "agrees": agrees, "abstained": False,
                "empty": False, "faithfulness": 1.0, "n_claims": 1, "num_tokens": 5, "n_sentences": 1,
                "generated_tokens": 5, "trace_counts": {}, "seconds": 0.1, "common_hit": not ok}
    rows = [row("fod", i, i < 15) for i in range(20)] + [row("greedy", i, i < 10) for i in range(20)]
    rows += [row(name, 99, name == "greedy", agrees=True) for name in ("fod", "greedy")]
    s = es.summarize(rows, ["fod", "greedy"], n_boot=500)
    fod, greedy = _row(s, "fod"), _row(s, "greedy")
    assert fod.success_gain == pytest.approx(0.25) and greedy.success_gain == 0.0
    assert 0 < fod.success_gain_low < 0.25 < fod.success_gain_high <= 0.5  # never negative: fod loses no item
    assert es.baseline_strategy(["fod", "greedy"]) == "greedy" and es.baseline_strategy(["cad", "fod"]) == "cad"


def test_rates_and_lengths(items):
    sub = items[:10]
    fake = FakeGenerate(sub)
    result = ev.evaluate_strategies(None, sub, ["ctx", "common", "both", "refuse"], generate_fn=fake,
                                    params={"tau1": 0.4}, n_boot=200)
    s = result.summary
    assert list(s.strategy) == ["ctx", "common", "both", "refuse"]
    assert not _has_nan(s)
    assert _row(s, "ctx").success_rate == 1.0 and _row(s, "ctx").common_rate == 0.0
    assert _row(s, "common").success_rate == 0.0 and _row(s, "common").common_rate == 1.0
    assert _row(s, "both").success_rate == 0.0 and _row(s, "both").common_rate == 1.0
    refuse = _row(s, "refuse")
    assert refuse.success_rate == 0.0 and refuse.abstention_rate == 1.0
    assert refuse.faithfulness is None and refuse.answer_tokens is None and refuse.informativeness == 0.0
    assert _row(s, "ctx").abstention_rate == 0.0
    ctx, both = _row(s, "ctx"), _row(s, "both")
    assert ctx.answer_tokens == 10 and ctx.answer_sentences == 2 and ctx.generated_tokens == 23
    assert ctx.informativeness == 2.0 and both.backtracks == 2.0 and ctx.backtracks == 0.0
    assert ctx.success_low == ctx.success_high == 1.0 and ctx.n == 10 and ctx.errors == 0
    # without greedy, gains are against the first strategy
    assert ctx.success_gain == 0.0 and _row(s, "common").success_gain == -1.0 == refuse.success_gain
    assert "minus ctx's" in result.meta["success_gain"]
    assert fake.params["tau1"] == 0.4 and fake.params["tau2"] == ev.DEFAULT_PARAMS["tau2"]
    assert result.generated == 40 and result.reused == 0 and len(result.rows) == 40
    assert result.meta["checker"] == "alignment:lexical on sentence claims"
    assert "paper 000" in result.meta["informativeness"]
    topics = result.by_topic
    assert set(topics.columns) == {"topic", "items", "ctx", "common", "both", "refuse"}
    assert (topics.ctx == 1.0).all() and topics["items"].sum() == 10
    json.dumps(ev.answer_records(result), allow_nan=False)


def test_bootstrap_interval_brackets_the_rate():
    low, high = es.bootstrap_ci([1.0] * 6 + [0.0] * 4, n_boot=500, seed=1)
    assert 0.0 <= low < 0.6 < high <= 1.0
    assert es.bootstrap_ci([]) is None


def test_faithfulness_uses_the_checker(items):
    sub = items[:6]
    result = ev.evaluate_strategies(None, sub, ["copy", "invent"], generate_fn=FakeGenerate(sub), n_boot=50)
    copy, invent = _row(result.summary, "copy"), _row(result.summary, "invent")
    assert copy.faithfulness > invent.faithfulness
    assert copy.faithfulness >= 0.9 and invent.faithfulness <= 0.1

    class AllSupported:
        name = "always-yes"

        def check(self, claims, references, question=None):
            return [ClaimVerdict(c, ENTAILMENT, 1.0) for c in claims]

    judged = ev.evaluate_strategies(None, sub, ["invent"], generate_fn=FakeGenerate(sub), checker=AllSupported(),
                                    n_boot=50)
    assert _row(judged.summary, "invent").faithfulness == 1.0
    assert judged.meta["checker"] == "always-yes on sentence claims"


def test_generic_prompts(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text("\n".join(json.dumps({"id": f"p{i}", "question": "What happened?",
                                          "context": f"The bridge {i} was built in 1820. It is made of stone."})
                              for i in range(3)) + "\n")
    prompts = cf.load_items(path)
    # distinct questions for the fake's lookup
    prompts = [cf.QAItem(p.id, f"What happened to bridge {k}?", p.context) for k, p in enumerate(prompts)]
    result = ev.evaluate_strategies(None, prompts, ["copy", "refuse"], generate_fn=FakeGenerate(prompts))
    s = result.summary
    assert "success_rate" not in s.columns and result.by_topic is None
    assert _row(s, "copy").faithfulness == 1.0 and _row(s, "refuse").abstention_rate == 1.0
    assert all("success" not in r for r in result.rows)
    assert not _has_nan(s)


def test_errors_are_rows_not_crashes(items):
    sub = items[:3]
    fake = FakeGenerate(sub, fail_on=2, error=ContextTooLongError("the context does not fit"))
    result = ev.evaluate_strategies(None, sub, ["ctx"], generate_fn=fake)
    assert _row(result.summary, "ctx").errors == 1 and _row(result.summary, "ctx").n == 2
    assert sum(1 for r in result.rows if r.get("error")) == 1
    with pytest.raises(InputError, match="unique"):
        ev.evaluate_strategies(None, [sub[0], sub[0]], ["ctx"], generate_fn=fake)
    with pytest.raises(InputError, match="twice"):
        ev.evaluate_strategies(None, sub, ["ctx", "ctx"], generate_fn=fake)


# ---- caching ------------------------------------------------------------------------------------------------


def test_cache_resumes_without_new_calls(items, tmp_path):
    sub, cache = items[:5], tmp_path / "cache.jsonl"
    first = FakeGenerate(sub)
    a = ev.evaluate_strategies(None, sub, ["ctx", "common"], generate_fn=first, cache_path=cache)
    assert len(first.calls) == 10 and len(cache.read_text().splitlines()) == 10
    second = FakeGenerate(sub)
    b = ev.evaluate_strategies(None, sub, ["ctx", "common"], generate_fn=second, cache_path=cache)
    assert second.calls == [] and b.reused == 10 and b.generated == 0
    assert a.summary.drop(columns="seconds").equals(b.summary.drop(columns="seconds"))
    assert all(r["cached"] for r in b.rows)
    # other parameters are another key: everything runs again
    third = FakeGenerate(sub)
    ev.evaluate_strategies(None, sub, ["ctx"], generate_fn=third, cache_path=cache, params={"seed": 7})
    assert len(third.calls) == 5
    # a changed item (same id) is not served from the cache
    changed = [cf.QAItem(sub[0].id, sub[0].question, sub[0].context + " Extra.", sub[0].context_answers,
                         sub[0].common_answers, sub[0].topic), *sub[1:]]
    fourth = FakeGenerate(changed)
    ev.evaluate_strategies(None, changed, ["ctx"], generate_fn=fourth, cache_path=cache)
    assert fourth.calls == [("ctx", sub[0].id)]


def test_crash_keeps_finished_items(items, tmp_path):
    sub, cache = items[:6], tmp_path / "cache.jsonl"
    crashing = FakeGenerate(sub, fail_on=5)  # the 5th generate call crashes the run
    with pytest.raises(RuntimeError, match="simulated crash"):
        ev.evaluate_strategies(None, sub, ["ctx", "common"], generate_fn=crashing, cache_path=cache)
    assert len(cache.read_text().splitlines()) == 4
    with cache.open("a") as handle:  # a torn line, as if the process died mid-write
        handle.write('{"cache_version": 1, "strategy": "ctx", "id": ')
    resumed = FakeGenerate(sub)
    result = ev.evaluate_strategies(None, sub, ["ctx", "common"], generate_fn=resumed, cache_path=cache)
    assert len(resumed.calls) == 8 and result.reused == 4
    assert Counter(r["cached"] for r in result.rows) == {True: 4, False: 8}
    assert len(cache.read_text().splitlines()) == 12 and cache.read_text().endswith("\n")


def test_new_checker_rechecks_cached_answers(items, tmp_path):
    sub, cache = items[:3], tmp_path / "cache.jsonl"
    ev.evaluate_strategies(None, sub, ["invent"], generate_fn=FakeGenerate(sub), cache_path=cache)

    class AllSupported:
        name = "always-yes"

        def check(self, claims, references, question=None):
            return [ClaimVerdict(c, ENTAILMENT, 1.0) for c in claims]

    again = FakeGenerate(sub)
    result = ev.evaluate_strategies(None, sub, ["invent"], generate_fn=again, cache_path=cache,
                                    checker=AllSupported())
    assert again.calls == [] and _row(result.summary, "invent").faithfulness == 1.0
    assert {r["checker"] for r in result.rows} == {"always-yes on sentence claims"}


def test_params_hash_depends_on_params_and_monitor():
    class Lm:
        model_id = "m1"

    class Mon:
        lm, detector, alignment = Lm(), None, None

    base = ev.params_hash(ev.DEFAULT_PARAMS, Mon())
    assert base == ev.params_hash(dict(ev.DEFAULT_PARAMS), Mon())
    assert base != ev.params_hash({**ev.DEFAULT_PARAMS, "tau1": 0.6}, Mon())
    assert base != ev.params_hash(ev.DEFAULT_PARAMS, None)
    from faithwatch.models.prompts import DEFAULT_INSTRUCTION

    class Told(Mon):
        instruction = DEFAULT_INSTRUCTION

    class Other(Mon):
        instruction = "Answer as the context says."

    assert ev.params_hash(ev.DEFAULT_PARAMS, Told()) == base  # the default prompt keeps earlier caches
    assert ev.params_hash(ev.DEFAULT_PARAMS, Other()) != base  # another prompt gives other answers


def test_params_hash_depends_on_the_decoding_code(tmp_path, monkeypatch):
    from faithwatch.checksums import code_sha256

    (tmp_path / "strategies.py").write_text('"""Rules."""\nRULE = 1  # the first\n')
    (tmp_path / "notes.txt").write_text("not code")
    first = code_sha256(tmp_path)
    (tmp_path / "notes.txt").write_text("still not code")
    assert code_sha256(tmp_path) == first
    # comments, docstrings and layout do not count; what the code does does
    (tmp_path / "strategies.py").write_text('"""The rules, reworded."""\n\nRULE = 1   # the first and only\n')
    assert code_sha256(tmp_path) == first
    (tmp_path / "strategies.py").write_text('"""Rules."""\nRULE = 2  # the first\n')
    assert code_sha256(tmp_path) != first
    (tmp_path / "strategies.py").write_text('"""Rules."""\nRULE = 1  # the first\nMESSAGE = "a string"\n')
    assert code_sha256(tmp_path) != first  # a string that is not a docstring is code

    base = ev.params_hash(ev.DEFAULT_PARAMS)
    monkeypatch.setattr(ev, "decoding_code_digest", lambda: "another strategy rule")
    assert ev.params_hash(ev.DEFAULT_PARAMS) != base


# ---- the command line ---------------------------------------------------------------------------------------


def test_cli_with_a_fake_generate(tiny_model_dir, tmp_path, monkeypatch, one_thread):
    from typer.testing import CliRunner

    from faithwatch.cli import app

    items = cf.load_counterfactual()
    runner = CliRunner()
    report = tmp_path / "report"
    args = ["eval-decoding", "--data", "counterfactual", "--strategies", "greedy,fod", "--report", str(report),
            "--limit", "4", "--model", str(tiny_model_dir), "--alignment", "lexical", "--detector", "heuristic",
            "--n-boot", "50"]
    monkeypatch.setattr(ev, "generate", _renamed(FakeGenerate(items), {"greedy": "common", "fod": "ctx"}))
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    doc = json.loads((report / "results.json").read_text())
    summary = {r["strategy"]: r for r in doc["tables"][0]["records"]}
    assert summary["fod"]["success_rate"] == 1.0 and summary["greedy"]["success_rate"] == 0.0
    assert doc["meta"]["checker"] == "alignment:lexical on sentence claims" and doc["meta"]["checker_overlaps_guide"]
    assert "success rate by topic" in (report / "results.md").read_text()
    assert doc["tables"][0]["name"].startswith("strategies — IN-SAMPLE for fod: the default tau1, tau2")
    assert all(t["in_sample"] and "IN-SAMPLE for fod" in t["name"] for t in doc["tables"]) and doc["in_sample"] == [
        "counterfactual"]  # every table (by topic too) is marked, in the JSON as in the names
    answers = [json.loads(line) for line in (report / "answers.jsonl").read_text().splitlines()]
    assert len(answers) == 8 and {a["strategy"] for a in answers} == {"greedy", "fod"}
    assert ev.read_answers(report) == answers  # the reader of stored reports, plain or gzipped
    packed = tmp_path / "packed"
    packed.mkdir()
    (packed / "answers.jsonl.gz").write_bytes(gzip.compress((report / "answers.jsonl").read_bytes()))
    assert ev.read_answers(packed) == answers
    with pytest.raises(InputError, match="no answers.jsonl"):
        ev.read_answers(tmp_path)
    again = runner.invoke(app, args)
    assert again.exit_code == 0 and "0 runs, 8 from the cache" in again.output
    bad = runner.invoke(app, [*args[:4], "greedy,magic", *args[5:]])
    assert bad.exit_code == 2 and "unknown strategies" in bad.output
    bad_checker = runner.invoke(app, [*args, "--checker", "oracle"])
    assert bad_checker.exit_code == 2 and "unknown --checker" in bad_checker.output


def _renamed(fake: FakeGenerate, names: dict[str, str]):
    """A generate_fn answering real strategy names with the fake's behaviours."""

    def run(monitor, question, context, strategy="greedy", **params):
        return fake(monitor, question, context, strategy=names[strategy], **params)

    return run


def test_in_sample_note_names_the_defaults_chosen_on_the_packaged_set(tmp_path):
    note = ev.in_sample_note("counterfactual", {"tau1": 0.5, "tau2": 0.7}, ["greedy", "fod", "abstain"])
    assert note is not None and "fod, abstain" in note and "tau1, coverage, abstain_threshold" in note
    assert "tau2" not in note
    assert "abstain_threshold" not in ev.in_sample_note("counterfactual", {}, ["fod-adacad"])
    assert ev.in_sample_note("counterfactual", {}, ["greedy", "adacad"]) is None  # no strategy reads them
    # rerank-coverage reads the question coverage and tau1 chosen there (its gate), not tau2
    assert "IN-SAMPLE for rerank-coverage: the default tau1, coverage were" in ev.in_sample_note(
        "counterfactual", {}, ["rerank", "rerank-coverage"])
    assert "the default coverage was" in ev.in_sample_note("counterfactual", {"tau1": 0.7}, ["rerank-coverage"])
    assert ev.in_sample_note("mine.jsonl", {}, ["fod"]) is None
    from faithwatch.decoding.counterfactual import packaged_path

    copy = tmp_path / "copy.jsonl"  # the packaged set by another name is still the packaged set
    copy.write_bytes(packaged_path().read_bytes())
    assert ev.in_sample_note(str(copy), {}, ["fod"]) is not None
    assert ev.in_sample_note("counterfactual", {"tau1": 0.6, "tau2": 0.7, "coverage": False,
                                                "abstain_threshold": 0.4}, ["fod"]) is None


class TauGenerate:
    """Succeeds exactly when tau1 = ``right`` (any tau2); counts calls per (tau1, tau2)."""

    def __init__(self, items, right: float):
        self.items, self.right, self.calls = items, right, Counter()

    def __call__(self, monitor, question, context, strategy="fod", **params):
        self.calls[(params["tau1"], params["tau2"])] += 1
        item = next(i for i in self.items if i.question == question)
        text = " and ".join(g[0] for g in item.context_answers) if params["tau1"] == self.right else "No idea."
        return DecodingResult(strategy=strategy, answer=text, refused=False, sentences=[_sentence(0, text)],
                              trace=[], num_tokens=3, generated_tokens=7, stop_reason="eos")


def test_tau_is_cross_validated(items):
    from faithwatch.eval.decoding_cv import cross_validate_tau

    fake = TauGenerate(items, right=0.6)
    grid = ((0.5, 0.5), (0.6, 0.7), (0.7, 0.7))
    cv = cross_validate_tau(None, items, "fod", grid=grid, folds=4, generate_fn=fake, n_boot=20)
    assert set(fake.calls) == set(grid) and all(n == len(items) for n in fake.calls.values())
    assert all(c == {"tau1": 0.6, "tau2": 0.7} for c in cv.chosen.values())
    s = cv.summary()
    assert s["success_rate"] == 1.0 and s["agree_success_rate"] == 1.0
    assert len(cv.rows) == len(items) and set(cv.rows.fold) == {0, 1, 2, 3}
    assert cv.grid.set_index("tau1").loc[0.5, "success_rate (in-sample)"] == 0.0


def test_tau_cv_runs_a_tau1_only_strategy_once_per_tau1(items):
    from faithwatch.eval.decoding_cv import cross_validate_tau, tau_points

    fake = TauGenerate(items, right=0.7)
    grid = ((0.5, 0.5), (0.5, 0.6), (0.7, 0.7), (0.7, 0.85))
    assert tau_points("rerank-coverage", grid) == [{"tau1": 0.5}, {"tau1": 0.7}]
    assert tau_points("fod", grid) == [dict(tau1=a, tau2=b) for a, b in grid]
    with pytest.raises(InputError, match="reads neither"):
        tau_points("greedy", grid)
    cv = cross_validate_tau(None, items, "rerank-coverage", grid=grid, params={"tau2": 0.6}, generate_fn=fake,
                            n_boot=20)
    assert fake.calls == {(0.5, 0.6): len(items), (0.7, 0.6): len(items)}  # τ2 stays the run's own
    assert all(c == {"tau1": 0.7} for c in cv.chosen.values())
    assert cv.summary()["success_rate"] == 1.0 and "τ2" not in cv.summary()["chosen"]


def test_cli_cv_tau_covers_rerank_coverage(tiny_model_dir, tmp_path, monkeypatch, one_thread):
    from typer.testing import CliRunner

    from faithwatch.cli import app

    fake = FakeGenerate(cf.load_counterfactual())
    monkeypatch.setattr(ev, "generate", _renamed(fake, {"greedy": "common", "rerank-coverage": "ctx"}))
    args = ["eval-decoding", "--data", "counterfactual", "--report", str(tmp_path / "r"), "--limit", "8",
            "--model", str(tiny_model_dir), "--alignment", "lexical", "--detector", "heuristic", "--n-boot", "20",
            "--cv-tau", "--tau-grid", "0.5:0.5,0.5:0.6,0.7:0.7"]
    res = CliRunner().invoke(app, [*args, "--strategies", "greedy,rerank-coverage"])
    assert res.exit_code == 0, res.output
    assert "rerank-coverage (τ cross-validated)" in res.output and "τ2=" not in res.output
    assert len([c for c in fake.calls if c[0] == "ctx"]) == 8 * 2  # the main run's τ1 = 0.5 is reused: τ1 = 0.7 new
    assert "τ cross-validated" in (tmp_path / "r" / "results.md").read_text()
    bad = CliRunner().invoke(app, [*args, "--strategies", "greedy"])
    assert bad.exit_code != 0 and "reads τ1 or τ2" in bad.output


def test_cli_interrupted_run_still_reports_from_the_cache(tiny_model_dir, tmp_path, monkeypatch, one_thread):
    from typer.testing import CliRunner

    from faithwatch.cli import app

    items = cf.load_counterfactual()
    report = tmp_path / "report"
    args = ["eval-decoding", "--data", "counterfactual", "--strategies", "greedy,fod", "--report", str(report),
            "--limit", "4", "--model", str(tiny_model_dir), "--alignment", "lexical", "--detector", "heuristic",
            "--n-boot", "20"]
    fake = _renamed(FakeGenerate(items), {"greedy": "common", "fod": "ctx"})
    calls = {"n": 0}

    def stopped_after_three(*a, **k):
        calls["n"] += 1
        if calls["n"] > 3:
            raise KeyboardInterrupt  # as Ctrl-C (SIGTERM is turned into the same)
        return fake(*a, **k)

    monkeypatch.setattr(ev, "generate", stopped_after_three)
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 1 and "interrupted: 3 runs finished so far, 5 not started" in " ".join(
        first.output.split())
    doc = json.loads((report / "results.json").read_text())
    assert doc["meta"]["interrupted"] is True
    summary = {r["strategy"]: r for r in doc["tables"][0]["records"]}
    assert sum(r["n"] for r in summary.values()) == 3 and sum(r["errors"] for r in summary.values()) == 5
    monkeypatch.setattr(ev, "generate", fake)
    again = CliRunner().invoke(app, args)
    assert again.exit_code == 0 and "5 runs, 3 from the cache" in again.output


def test_console_summary_shows_the_agreeing_items_success():
    """The do-no-harm figure (success on items whose context agrees with common knowledge) is on the console too."""
    import pandas as pd
    from rich.console import Console

    from faithwatch.cli.decoding_eval import _print_summary

    row = {"n": 4, "success_rate": 0.5, "success_low": 0.1, "success_high": 0.9, "success_gain": None,
           "success_gain_low": None, "success_gain_high": None, "common_rate": 0.25, "abstention_rate": 0.0,
           "faithfulness": 0.8, "informativeness": 1.0, "answer_tokens": 9.0, "answer_sentences": 1.0,
           "generated_tokens": 9.0, "backtracks": 0.0, "errors": 0}
    summary = pd.DataFrame([{**row, "strategy": "greedy", "agree_success_rate": 0.75},
                            {**row, "strategy": "fod", "agree_success_rate": float("nan")}])
    console = Console(record=True, width=250)
    _print_summary(console, summary, "lexical")
    text = console.export_text()
    assert "agreeing" in text and "0.750" in text and "nan" not in text


def test_console_summary_shows_the_unanswerable_items():
    """With unanswerable items only, the console shows their two figures and no empty success columns."""
    import pandas as pd
    from rich.console import Console

    from faithwatch.cli.decoding_eval import _print_summary

    row = {"n": 2, "success_rate": None, "success_low": None, "success_high": None, "success_gain": None,
           "success_gain_low": None, "success_gain_high": None, "common_rate": None, "abstention_rate": 0.5,
           "faithfulness": 0.8, "informativeness": 1.0, "answer_tokens": 9.0, "answer_sentences": 1.0,
           "generated_tokens": 9.0, "backtracks": 0.0, "errors": 0, "unanswerable_common_rate": 0.0}
    summary = pd.DataFrame([{**row, "strategy": "greedy", "unanswerable_decline_rate": 0.125},
                            {**row, "strategy": "fod", "unanswerable_decline_rate": 0.875}])
    console = Console(record=True, width=250)
    _print_summary(console, summary, "lexical")
    text = console.export_text()
    assert "declined" in text and "0.875" in text and "0.125" in text and "success" not in text
