"""The Monitor: live generation and teacher-forced scoring share everything and agree."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from faithwatch.alignment.lexical import LexicalScorer
from faithwatch.errors import InputError
from faithwatch.models.engine import Needs
from faithwatch.monitor import Monitor
from faithwatch.signals import LIDBank
from same import assert_same_sentences

QUESTION = "Who built the Eiffel Tower?"
CONTEXT = (
    "The Eiffel Tower is a wrought iron lattice tower on the Champ de Mars in Paris. "
    "It is named after the engineer Gustave Eiffel, whose company designed and built the tower."
)
RESPONSE = "The tower was built by the company of Gustave Eiffel. It is in Paris. It is 330 metres tall"
MAX_NEW = 40


@pytest.fixture(scope="module")
def bank_monitor(lm):
    rng = np.random.default_rng(0)
    hidden = lm.model.config.hidden_size
    layers = (1, 2)
    bank = LIDBank(model_id=lm.model_id, layers={layer: rng.standard_normal((200, hidden)) for layer in layers})
    return Monitor(lm, alignment="lexical", lid_bank=bank, lid_layers=layers)


def capture_sessions(monkeypatch, monitor) -> list:
    sessions = []
    start = monitor.engine.start

    def wrapped(prompts):
        session = start(prompts)
        sessions.append(session)
        return session

    monkeypatch.setattr(monitor.engine, "start", wrapped)
    return sessions


def assert_finite_report(report, detector_threshold=0.5):
    for name, value in report.features.items():
        assert value is None or (isinstance(value, float) and math.isfinite(value)), (name, value)
    for name, vector in report.vectors.items():
        assert np.isfinite(np.asarray(vector, dtype=float)).all(), name
    assert 0.0 <= report.score <= 1.0
    assert report.flagged == (report.score < detector_threshold)


def assert_same_reports(live, forced):
    assert len(live.sentences) >= 3
    assert live.sentences[0].vectors.keys() == {"lookback_ratio"}
    assert_same_sentences(live, forced)


@pytest.mark.parametrize("which", ["no_bank", "bank"])
def test_live_generation_equals_teacher_forcing(request, make_chooser, which):
    """THE key property: scoring the generated tokens afterwards reproduces every live report."""
    monitor = request.getfixturevalue("monitor" if which == "no_bank" else "bank_monitor")
    chooser = make_chooser()
    live_reports = []
    live = monitor.generate(QUESTION, CONTEXT, max_new_tokens=MAX_NEW, choose=chooser,
                            on_sentence=live_reports.append)
    assert live.mode == "live" and live.stop_reason == "max_new_tokens"
    assert live.num_tokens == len(chooser.chosen) == MAX_NEW
    assert live_reports == live.sentences
    forced = monitor.score(QUESTION, CONTEXT, chooser.chosen)
    assert forced.mode == "teacher-forced" and forced.stop_reason == "given"
    assert forced.response == live.response and forced.num_tokens == live.num_tokens
    assert_same_reports(live, forced)
    lid = [s.features["lid_layer_1"] for s in live.sentences]
    if which == "bank":
        assert all(isinstance(v, float) and v > 0 for v in lid)
    else:
        assert all(v is None for v in lid)


def test_report_contents(lm, monitor, make_chooser):
    result = monitor.generate(QUESTION, CONTEXT, max_new_tokens=MAX_NEW, choose=make_chooser())
    assert result.model_id == lm.model_id and result.detector == "heuristic-v1" and result.alignment == "lexical"
    assert result.score == min(s.score for s in result.sentences)
    expected = set(monitor.feature_names) - {"lookback_ratio"}
    for report in result.sentences:
        assert set(report.features) == expected
        assert np.asarray(report.vectors["lookback_ratio"]).shape == (lm.num_layers, lm.num_heads)
        assert result.response[report.start : report.end] == report.text
        assert 0.0 <= report.features["min_prob"] <= report.features["mean_prob"] <= 1.0
        assert_finite_report(report)


def test_score_text_response(lm, monitor):
    result = monitor.score(QUESTION, CONTEXT, RESPONSE)
    assert result.response == RESPONSE
    texts = [s.text for s in result.sentences]
    assert texts == [
        "The tower was built by the company of Gustave Eiffel.", "It is in Paris.", "It is 330 metres tall",
    ]
    ids = lm.tokenizer(RESPONSE, add_special_tokens=False)["input_ids"]
    assert result.num_tokens == len(ids)
    assert result.sentences[0].token_start == 0 and result.sentences[-1].token_end == len(ids)
    for s in result.sentences:
        assert RESPONSE[s.start : s.end] == s.text
        assert_finite_report(s)
    # the sentences cover the response's text, in order
    assert " ".join(texts) == RESPONSE
    # a sentence copied from the context aligns better than one with an unsupported number
    align = [s.features["align_score"] for s in result.sentences]
    assert align[0] > align[2]


def test_stream_yields_sentences_before_generation_ends(monitor, make_chooser):
    chooser = make_chooser()
    calls_at_report = []
    texts = []
    for report in monitor.stream(QUESTION, CONTEXT, max_new_tokens=MAX_NEW, choose=chooser):
        calls_at_report.append(chooser.calls)
        texts.append(report.text)
    assert chooser.calls == MAX_NEW
    assert len(calls_at_report) >= 3
    assert calls_at_report[0] < MAX_NEW // 2
    assert calls_at_report == sorted(calls_at_report)
    # a sentence is reported within a few tokens of its full stop: "." then " The" then one more word
    assert calls_at_report[0] <= 10
    assert texts == [s.text for s in monitor.generate(QUESTION, CONTEXT, max_new_tokens=MAX_NEW,
                                                       choose=make_chooser()).sentences]


def test_eos_stops_generation(lm, monitor, make_chooser):
    inner = make_chooser()
    eos = next(iter(lm.eos_token_ids))

    def choose(logprobs):
        return eos if inner.calls == 10 else inner(logprobs)

    result = monitor.generate(QUESTION, CONTEXT, max_new_tokens=MAX_NEW, choose=choose)
    assert result.stop_reason == "eos"
    assert result.num_tokens == 10
    assert [s.text for s in result.sentences][-1] == result.response.strip().split(". ")[-1]


def test_to_dict_is_json_and_has_no_nan(bank_monitor, make_chooser):
    result = bank_monitor.generate(QUESTION, CONTEXT, max_new_tokens=MAX_NEW, choose=make_chooser())
    text = json.dumps(result.to_dict(), allow_nan=False)
    data = json.loads(text)
    assert data["score"] == result.score and len(data["sentences"]) == len(result.sentences)
    assert "lookback_ratio" in data["sentences"][0]["vectors"]
    slim = result.to_dict(vectors=False)
    assert "vectors" not in slim["sentences"][0]
    json.dumps(slim, allow_nan=False)


def test_empty_response_raises(monitor):
    for response in ("", "  \n ", [], "\u200b\ufeff", "\x00 \u2060"):  # invisible characters say nothing either
        with pytest.raises(InputError, match="response is empty|response has no tokens"):
            monitor.score(QUESTION, CONTEXT, response)


def test_text_with_a_lone_surrogate_is_refused(monitor):
    # json.loads('"\\ud800"') gives one; before: a TypeError inside the tokenizer (a 500 from the server)
    for where in ("question", "context", "response", "instruction"):
        args = {"question": QUESTION, "context": CONTEXT, "response": "It is tall.", "instruction": "Answer."}
        args[where] = "Paris \ud800 is big."
        with pytest.raises(InputError, match=f"The {where} holds a lone surrogate U\\+D800 at character 6"):
            monitor.score(**args)


def test_a_response_that_is_neither_text_nor_token_ids_is_refused(monitor, lm):
    # before: TypeError, ValueError or a torch indexing error from deep inside, and bytes scored as token ids
    vocab = lm.vocab_size
    cases = {None: "got NoneType", 5: "got int", b"It is tall.": "got bytes", ("It is tall.",): "got 'It is tall.'",
             (1, "a"): "got 'a'", (vocab,): f"got {vocab}", (-1,): "got -1", (True,): "got True"}
    for response, says in cases.items():
        with pytest.raises(InputError, match=f"The response.*{says}"):
            monitor.score(QUESTION, CONTEXT, list(response) if isinstance(response, tuple) else response)
    ids = lm.tokenizer(RESPONSE, add_special_tokens=False)["input_ids"]
    as_text = monitor.score(QUESTION, CONTEXT, RESPONSE)
    import torch

    for given in (ids, tuple(ids), [np.int64(i) for i in ids], np.array(ids), torch.tensor(ids)):  # numpy, torch too
        assert [s.score for s in monitor.score(QUESTION, CONTEXT, given).sentences] == \
            [s.score for s in as_text.sentences]
    text_only = Monitor("none", alignment="lexical", detector="heuristic", signals=["alignment", "lexical"])
    with pytest.raises(InputError, match="must be text, not bytes"):
        text_only.score(QUESTION, CONTEXT, b"It is tall.")


def test_bad_arguments_raise(lm, monitor):
    with pytest.raises(InputError, match="unknown signals"):
        Monitor(lm, signals=["likelihood", "telepathy"], alignment="lexical")
    with pytest.raises(InputError, match="max_new_tokens"):
        monitor.generate(QUESTION, CONTEXT, max_new_tokens=0)
    with pytest.raises(InputError, match="empty"):
        monitor.score(" ", CONTEXT, RESPONSE)


def test_likelihood_only_runs_no_twin(lm, monkeypatch, make_chooser):
    monitor = Monitor(lm, signals=["likelihood"], alignment="none")
    assert monitor.engine.needs == Needs()
    assert monitor.feature_names == ["min_prob", "mean_prob", "min_logprob", "mean_logprob"]
    sessions = capture_sessions(monkeypatch, monitor)
    batches = []
    hook = lm.model.register_forward_pre_hook(
        lambda _m, _a, kwargs: batches.append(kwargs["input_ids"].shape[0]), with_kwargs=True
    )
    try:
        results = [
            monitor.score(QUESTION, CONTEXT, RESPONSE),
            monitor.generate(QUESTION, CONTEXT, max_new_tokens=20, choose=make_chooser()),
        ]
    finally:
        hook.remove()
    assert batches and set(batches) == {1}
    assert len(sessions) == 2
    for session, result in zip(sessions, results, strict=True):
        assert session.records.kl == [] and session.records.lookback == [] and session.records.hidden == []
        assert len(session.records.logprob) == result.num_tokens
        assert result.alignment is None
        for report in result.sentences:
            assert set(report.features) == {"min_prob", "mean_prob", "min_logprob", "mean_logprob"}
            assert report.vectors == {}


def test_all_signals_run_the_twin(monitor, monkeypatch):
    sessions = capture_sessions(monkeypatch, monitor)
    # a prompt no other test scores: the engine reuses the last teacher-forced prompt's session without a start
    result = monitor.score(QUESTION + " Say it once more.", CONTEXT, RESPONSE)
    assert len(sessions[0].records.kl) == result.num_tokens
    assert any(s.features["mean_contrastive_kl"] > 0 for s in result.sentences)


def test_monitor_without_chat_template(lm_plain, make_chooser):
    monitor = Monitor(lm_plain, alignment="lexical")
    chooser = make_chooser()
    live = monitor.generate(QUESTION, CONTEXT, max_new_tokens=30, choose=chooser)
    assert_same_reports(live, monitor.score(QUESTION, CONTEXT, chooser.chosen))


def test_truncated_context_is_reported(lm):
    monitor = Monitor(lm, signals=["likelihood", "contrastive"], alignment="none", truncate_context=True)
    long_context = " ".join([CONTEXT] * 30)
    result = monitor.score(QUESTION, long_context, RESPONSE)
    assert result.context_tokens_cut > 0
    assert result.sentences
    assert [n for n in result.notes if f"last {result.context_tokens_cut} tokens were cut" in n]
    assert result.to_dict()["notes"] == result.notes
    strict = Monitor(lm, signals=["likelihood"], alignment="none")
    with pytest.raises(InputError, match="window"):
        strict.score(QUESTION, long_context, RESPONSE)


def test_heuristic_without_any_of_its_features_is_refused_up_front() -> None:
    """Signals that give the heuristic nothing to read: an error when the monitor is built, not per record."""
    with pytest.raises(InputError, match="heuristic detector needs at least one of"):
        Monitor("none", signals=["lexical"], detector="heuristic")
    assert Monitor("none", signals=["alignment"], alignment="lexical", detector="heuristic").detector


def test_detector_refuses_alignment_with_other_weights(lm) -> None:
    """A detector records its alignment scorer's name and version; a scorer with other weights is refused."""
    from faithwatch.alignment import AlignmentScorer
    from faithwatch.detectors.shipped import default_detector

    detector = default_detector("embedded:smollm2-135m-instruct")
    trained = detector.meta.metrics
    assert trained["alignment"] == "nli-minilm+lexical+embedding" and trained["alignment_version"]

    class Scorer(AlignmentScorer):
        name = trained["alignment"]

        def __init__(self, version: str) -> None:
            self.version = version

        def score_many(self, sentences, context):
            return [0.5 for _ in sentences]

    ok = Monitor(lm, detector=detector, alignment=Scorer(trained["alignment_version"]))
    assert ok.alignment.version == trained["alignment_version"]
    with pytest.raises(InputError, match="retrain the detector"):
        Monitor(lm, detector=detector, alignment=Scorer("slide64-000000000000++"))
    # bf16 scores differ slightly: a detector still accepts them (users may opt in), feature caches keep them apart
    from faithwatch.eval.features import cache_key, cache_spec

    fast = Scorer(trained["alignment_version"])
    fast.precision = "bf16"
    bf16 = Monitor(lm, detector=detector, alignment=fast)
    assert "alignment_precision" not in cache_spec(ok) and cache_spec(bf16)["alignment_precision"] == "bf16"
    assert cache_key(ok, "set") != cache_key(bf16, "set")


def test_text_features_added_to_tables_equal_the_live_signal(lm):
    """Teacher-forced tables get the text-only features after extraction; they must equal the monitor's."""
    import pandas as pd

    from faithwatch.alignment.edits import EDIT_FEATURES
    from faithwatch.alignment.lexical import EVIDENCE_FEATURES
    from faithwatch.data.schema import LabelledExample
    from faithwatch.eval.text_features import add_text_features
    from faithwatch.signals.tagger import TAGGER_FEATURES

    monitor = Monitor(lm, signals=["likelihood", "lexical", "edits", "tagger"], alignment="none",
                      detector="heuristic")
    result = monitor.score(QUESTION, CONTEXT, RESPONSE)
    example = LabelledExample(dataset="d", id="e1", context=CONTEXT, question=QUESTION, response=RESPONSE)
    table = pd.DataFrame({"example_id": ["e1"] * len(result.sentences), "text": [s.text for s in result.sentences]})
    added = add_text_features([example], table)
    names = [*EVIDENCE_FEATURES, *EDIT_FEATURES, *TAGGER_FEATURES]
    for row, report in zip(added.to_dict("records"), result.sentences, strict=True):
        assert {k: row[k] for k in names} == {k: report.features[k] for k in names}
    assert added["novel_numbers"].tolist() == [0.0, 0.0, 1.0]  # "330" is not in the context


def test_the_question_reaches_the_text_signals_live_and_in_tables(lm, tmp_path):
    """What the question asks is lexical support, for the monitor and for tables built from the text alike."""
    import pandas as pd

    from faithwatch.data.schema import LabelledExample
    from faithwatch.eval.features import extract_text_features
    from faithwatch.eval.text_features import add_text_features

    question, response = "Who built the famous landmark?", "The famous landmark was built by Gustave Eiffel's company."
    monitor = Monitor(lm, signals=["alignment", "lexical"], alignment="lexical", detector="heuristic")
    live = monitor.score(question, CONTEXT, response).sentences[0].features
    plain = monitor.score("Who built it?", CONTEXT, response).sentences[0].features
    assert live["novel_content"] == 0.0 and plain["novel_content"] == 2.0  # "famous", "landmark"
    assert live["align_score"] > plain["align_score"]
    example = LabelledExample(dataset="d", id="e1", context=CONTEXT, question=question, response=response)
    lexical = [s for s in monitor.signals if s.name == "lexical"]
    table = add_text_features([example], pd.DataFrame({"example_id": ["e1"], "text": [response]}), signals=lexical)
    assert table.loc[0, "novel_content"] == live["novel_content"]
    rows = extract_text_features(monitor.alignment, "d", [example], root=tmp_path).sentences
    assert rows["align_score"].tolist() == [live["align_score"]]


def test_truncated_context_is_what_alignment_sees(lm, one_thread):
    from faithwatch.monitor import Monitor

    seen: list[str] = []

    class Recorder(LexicalScorer):
        name = "recorder"

        def score_many(self, sentences, context, question=""):
            seen.append(context)
            return super().score_many(sentences, context, question)

    tail = " The secret code is 4242." + " Filler words here." * 400
    context = "Paris is in France." + tail
    mon = Monitor(lm, detector="heuristic", alignment=Recorder(), truncate_context=True, signals=["alignment"])
    result = mon.score("Where is Paris?", context, "Paris is in France. The code is 4242.")
    assert result.context_tokens_cut > 0 and seen
    assert all(len(c) < len(context) and context.startswith(c.strip()[:15]) for c in seen)
    assert result.context == seen[-1]


def test_model_free_signals_score_without_running_the_model(lm, monkeypatch, one_thread):
    text_only = Monitor(lm, detector="heuristic", alignment="lexical", signals=["alignment", "lexical", "edits"])
    assert text_only.model_free and not Monitor(lm, detector="heuristic", alignment="lexical").model_free
    reference = text_only.score("Who built it?", CONTEXT, RESPONSE)
    monkeypatch.setattr(text_only.engine, "start", lambda *a: pytest.fail("the model was run"))
    monkeypatch.setattr(text_only.engine, "start_many", lambda *a: pytest.fail("the model was run"))
    again = text_only.score("Who built it?", CONTEXT, RESPONSE)
    many = text_only.score_many([("Who built it?", CONTEXT, RESPONSE)], batch_size=4)[0]
    monkeypatch.undo()
    text_only.model_free = False  # the same signals through the engine
    forced = text_only.score("Who built it?", CONTEXT, RESPONSE)
    for got in (reference, again, many):
        assert [s.text for s in got.sentences] == [s.text for s in forced.sentences]
        for a, b in zip(got.sentences, forced.sentences, strict=True):
            assert a.features == b.features and a.score == b.score


def test_text_signals_skip_the_model_with_the_same_scores(lm, monkeypatch):
    """The shipped detector reads text signals only (detector_reads_model is False); with the model-free families
    (`--signals text`) scoring never runs the model and gives the scores of the default families."""
    from faithwatch.cli._common import signal_list
    from faithwatch.detectors import load_detector
    from faithwatch.detectors.shipped import SHIPPED_DIR
    from faithwatch.models.engine import EngineSession
    from faithwatch.signals import model_free_signals

    assert signal_list("text,lexical") == list(model_free_signals())
    assert "likelihood" not in model_free_signals() and "alignment" in model_free_signals()
    shipped = load_detector(SHIPPED_DIR)
    full = Monitor(lm, detector=shipped)
    assert not full.detector_reads_model and not full.model_free
    assert Monitor(lm, detector="heuristic", alignment="lexical").detector_reads_model
    text = Monitor(lm, detector=shipped, signals=signal_list("text"))
    assert text.model_free
    question, context = "When was it built?", "The tower was built from 1887 to 1889 in Paris."
    want = full.score(question, context, "It was built in 1820. It stands in Paris.")
    monkeypatch.setattr(EngineSession, "_run", lambda *a, **k: pytest.fail("the model ran"))
    got = text.score(question, context, "It was built in 1820. It stands in Paris.")
    assert [s.score for s in got.sentences] == [s.score for s in want.sentences]
    assert "mean_logprob" in want.sentences[0].features and "mean_logprob" not in got.sentences[0].features


def test_a_context_over_the_window_is_scored_when_the_model_does_not_run(lm):
    """The model window limits only what the model runs: with the text families a record over it is scored in full
    (nothing cut); when the model would run for signals the detector does not read, the error says so."""
    from faithwatch.cli._common import signal_list
    from faithwatch.detectors import get_detector
    from faithwatch.errors import ContextTooLongError

    shipped = get_detector("default")
    long_context = " ".join([CONTEXT] * 60)
    assert len(lm.tokenizer(long_context)["input_ids"]) > lm.max_length
    text = Monitor(lm, detector=shipped, signals=signal_list("text"))
    result = text.score(QUESTION, long_context, RESPONSE)
    assert result.context == long_context and result.context_tokens_cut == 0 and result.sentences
    many = text.score_many([(QUESTION, long_context, RESPONSE), (QUESTION, CONTEXT, RESPONSE)], batch_size=2)
    assert [s.score for s in many[0].sentences] == [s.score for s in result.sentences]
    with pytest.raises(ContextTooLongError, match="--signals text"):
        Monitor(lm, detector=shipped).score(QUESTION, long_context, RESPONSE)
    with pytest.raises(ContextTooLongError) as info:  # a detector that reads the model: no such advice
        Monitor(lm, detector="heuristic", alignment="lexical").score(QUESTION, long_context, RESPONSE)
    assert "--signals text" not in str(info.value)


def test_result_notes_say_when_the_context_reads_as_a_chat(lm):
    """``MonitorResult.notes``: the transcript caution for a chat context (the CLI prints the same text), none for
    prose; the scores do not change with it."""
    from faithwatch.text import TRANSCRIPT_NOTE

    monitor = Monitor(lm, signals=["likelihood"], alignment="lexical")
    prose = monitor.score(QUESTION, CONTEXT, RESPONSE)
    assert prose.notes == [] and prose.to_dict()["notes"] == []
    chat = "Ana: I'll bring the cake.\nBen: Great, thanks!\nAna: See you at six."
    noted = monitor.score("Who brings the cake?", chat, "Ana brings the cake.")
    assert noted.notes == [f"the context reads {TRANSCRIPT_NOTE}"]
    assert noted.to_dict(vectors=False)["notes"] == noted.notes


def test_a_lid_bank_without_a_model_is_refused(tmp_path):
    # model 'none' has no hidden states: this was an AttributeError ('NoneType' object has no attribute 'model_id')
    with pytest.raises(InputError, match="LID bank .* with model 'none'"):
        Monitor("none", lid_bank=tmp_path / "bank.safetensors")


def test_a_none_instruction_is_the_default_and_a_bad_one_is_refused_before_the_model_loads(monkeypatch):
    # Monitor(instruction=None) was "must be a string" while score(instruction=None) meant the default; a blank
    # instruction was refused only after the language model had loaded
    import faithwatch.models.loading as loading_module  # the monitor imports load_model from it when it loads
    from faithwatch.tasks import DEFAULT_INSTRUCTION

    assert Monitor("none", alignment="lexical", detector="heuristic", instruction=None).instruction == \
        DEFAULT_INSTRUCTION
    monkeypatch.setattr(loading_module, "load_model", lambda *a, **k: pytest.fail("the model loaded first"))
    with pytest.raises(InputError, match="instruction is empty"):
        Monitor("some/model", instruction="  ")


def test_options_of_a_language_model_are_refused_without_one():
    # they were ignored, silently: `--model none --dtype bf16` ran as if --dtype had not been given
    for options, named in (({"dtype": "bf16"}, "dtype sets"), ({"device_map": "auto"}, "device_map sets"),
                           ({"static_cache": True, "cuda_graph": True}, "static_cache, cuda_graph set"),
                           ({"truncate_context": True}, "truncate_context sets")):  # no model window to cut to
        with pytest.raises(InputError, match=f"{named} how the language model runs: with model 'none'"):
            Monitor("none", alignment="lexical", detector="heuristic", **options)
    assert Monitor("none", alignment="lexical", detector="heuristic", dtype=None, static_cache=False).lm is None


def test_an_unknown_device_is_refused_without_a_model_too():
    # the text scorers took it: a RuntimeError from torch, or an AssertionError for cuda on a CPU-only torch
    with pytest.raises(InputError, match="unknown device 'bogus'"):
        Monitor("none", device="bogus")


def test_a_token_budget_is_an_integer_of_at_least_one_and_signals_may_be_a_string():
    # 0, -1, True and "5" were taken by the constructor (and "5" failed later, inside generate, with a TypeError);
    # signals="alignment" was read letter by letter ("unknown signal 'a'")
    for budget in (0, -1, True, "5", 2.5):
        with pytest.raises(InputError, match="max_new_tokens must be an integer of at least 1"):
            Monitor("none", alignment="lexical", detector="heuristic", max_new_tokens=budget)
    monitor = Monitor("none", alignment="lexical", detector="heuristic", signals="alignment, lexical")
    assert set(monitor.feature_names) >= {"align_score", "lex_content"}
    for nothing in ([], "", " , "):  # were read as the default signals
        with pytest.raises(InputError, match="names no signal family"):
            Monitor("none", alignment="lexical", detector="heuristic", signals=nothing)
