"""faithwatch proxy: an OpenAI-compatible proxy in front of a scripted upstream (tests/fake_upstream.py).

Covers an unchanged OpenAI client, annotations equal to Monitor.score, abstain cutting the stream, fod choosing a
faithful continuation, upstream 5xx / timeouts / malformed JSON / mid-stream errors, a client disconnect
stopping the upstream, the context conventions, and `faithwatch serve`'s own /v1/chat/completions as upstream.
"""

from __future__ import annotations

import json
import math
import time

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
from faithwatch.decoding.types import REFUSAL  # noqa: E402
from faithwatch.errors import InputError  # noqa: E402
from faithwatch.monitor import Monitor  # noqa: E402
from faithwatch.proxy import ProxySettings, Upstream, create_proxy_app, split_request  # noqa: E402
from fake_upstream import Script, fake_upstream  # noqa: E402
from servers import serve  # noqa: E402

CONTEXT = "The Eiffel Tower is in Paris. It is 330 metres tall."
FAITHFUL = ["The tower", " is in Paris.", " It is 330", " metres tall."]
UNFAITHFUL = ["The tower is in Paris.", " It is 500 metres tall", " and made of gold.", " It is in Paris."]
ASK = {"model": "fake", "messages": [{"role": "user", "content": "Where is the tower?"}], "context": CONTEXT}


@pytest.fixture(scope="module")
def text_monitor():
    """Model-free and deterministic: lexical alignment with the heuristic detector (threshold 0.5)."""
    return Monitor("none", alignment="lexical", detector="heuristic",
                   signals=["alignment", "lexical", "edits", "api"])


class Running:
    """The fake upstream and the proxy, both on real sockets."""

    def __init__(self, monitor, script: Script, settings: ProxySettings | None = None, **upstream):
        self.script, self.monitor, self.settings, self.kw = script, monitor, settings, upstream

    def __enter__(self) -> str:
        self.kw.setdefault("backoff", 0.0)
        self._up = serve(fake_upstream(self.script))
        url = self._up.__enter__()
        self._px = serve(create_proxy_app(self.monitor, Upstream(url + "/v1", **self.kw), self.settings))
        return self._px.__enter__()

    def __exit__(self, *exc) -> None:
        self._px.__exit__(*exc)
        self._up.__exit__(*exc)


def _events(response: httpx.Response) -> list[dict]:
    out = []
    for line in response.iter_lines():
        if line.startswith("data: ") and line != "data: [DONE]":
            out.append(json.loads(line[6:]))
    return out


def _content(events: list[dict]) -> str:
    return "".join((c["delta"].get("content") or "") for e in events for c in e.get("choices", []))


def test_an_unchanged_openai_client_gets_the_answer_and_the_annotations(text_monitor):
    openai = pytest.importorskip("openai")
    with Running(text_monitor, Script(pieces=FAITHFUL)) as url:
        client = openai.OpenAI(base_url=url + "/v1", api_key="unused", max_retries=0)
        answer = client.chat.completions.create(model="fake", messages=ASK["messages"],
                                                extra_body={"context": CONTEXT})
        assert answer.choices[0].message.content == "".join(FAITHFUL)
        notes = answer.model_extra["faithwatch"]
        assert [s["sentence"] for s in notes["sentences"]] == ["The tower is in Paris.", "It is 330 metres tall."]
        assert all(s["verdict"] == "ok" for s in notes["sentences"]) and notes["summary"]["policy"] == "annotate"
        chunks = list(client.chat.completions.create(model="fake", messages=ASK["messages"], stream=True,
                                                     extra_body={"context": CONTEXT}))
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        assert text == "".join(FAITHFUL)
        extras = [c.model_extra.get("faithwatch") for c in chunks if c.model_extra.get("faithwatch")]
        assert [e["sentence"] for e in extras if "sentence" in e] == ["The tower is in Paris.",
                                                                      "It is 330 metres tall."]
        assert chunks[-1].choices[0].finish_reason == "stop" and "summary" in chunks[-1].model_extra["faithwatch"]


def test_annotated_scores_equal_monitor_score_on_the_final_text(lm, one_thread):
    """The tiny random model as the local copy: every feature of the stream equals teacher forcing the text."""
    monitor = Monitor(lm, alignment="lexical", detector="heuristic")
    pieces = ["The tower is", " in Paris. It", " is 330 metres", " tall. Many people", " visit it every day."]
    with Running(monitor, Script(pieces=pieces)) as url, httpx.stream(
            "POST", url + "/v1/chat/completions", json={**ASK, "stream": True}, timeout=60) as response:
        events = _events(response)
    notes = [e["faithwatch"] for e in events if "sentence" in e.get("faithwatch", {})]
    want = monitor.score("Where is the tower?", CONTEXT, "".join(pieces))
    assert [n["sentence"] for n in notes] == [s.text for s in want.sentences] and len(notes) == 3
    for note, sentence in zip(notes, want.sentences, strict=True):
        assert note["score"] == pytest.approx(sentence.score, abs=1e-4)
        for name, value in sentence.features.items():
            if value is not None:
                assert note["features"][name] == pytest.approx(value, abs=1e-4), name


def test_abstain_stops_the_upstream_at_the_first_flagged_sentence(text_monitor):
    script = Script(pieces=UNFAITHFUL)
    with Running(text_monitor, script, ProxySettings(policy="abstain")) as url, httpx.stream(
            "POST", url + "/v1/chat/completions", json={**ASK, "stream": True}, timeout=30) as response:
        events = _events(response)
    assert _content(events) == "The tower is in Paris. " + REFUSAL  # the gold never reaches the client
    summary = events[-1]["faithwatch"]["summary"]
    assert summary["refused"] is True and summary["trace"][-1]["kind"] == "refuse"
    flagged = [e["faithwatch"] for e in events if e.get("faithwatch", {}).get("verdict") == "flagged"]
    assert flagged[0]["sentence"] == "It is 500 metres tall and made of gold."


def test_fod_backtracks_and_chooses_the_faithful_continuation(text_monitor):
    def cont(prefix: str, i: int) -> str:
        assert prefix == "The tower is in Paris."
        return [" It is made of cheese on the moon.", " It is 330 metres tall.", " It is 900 metres tall."][i % 3]

    script = Script(pieces=UNFAITHFUL, continue_with=cont)
    settings = ProxySettings(policy="fod", samples=3, beams=1)
    with Running(text_monitor, script, settings) as url:
        answer = httpx.post(url + "/v1/chat/completions", json=ASK, timeout=30).json()
    assert answer["choices"][0]["message"]["content"] == "The tower is in Paris. It is 330 metres tall."
    kinds = [e["kind"] for e in answer["faithwatch"]["summary"]["trace"]]
    assert kinds[:2] == ["accept", "backtrack"] and "prune" in kinds and kinds[-1] == "select"
    summary, notes = answer["faithwatch"]["summary"], answer["faithwatch"]["sentences"]
    # the client gets a verdict for every sentence it got (the chosen continuation's too) and for the one FOD
    # backtracked from; the other candidates are only counted
    assert [n["sentence"] for n in notes] == ["The tower is in Paris.", "It is 500 metres tall and made of gold.",
                                              "It is 330 metres tall."]
    assert [n["verdict"] for n in notes] == ["ok", "flagged", "ok"]
    assert summary["sentences"] == 3 and summary["flagged"] == 1 and summary["candidates_scored"] == 2
    assert summary["upstream_calls"] == 2
    asked = [r for r in script.requests if r.get("continue_final_message")]
    assert asked and asked[0]["n"] == 3 and asked[0]["messages"][-1] == {"role": "assistant",
                                                                         "content": "The tower is in Paris."}


def test_fod_backtracks_from_a_repeated_sentence_and_prunes_repeats(text_monitor):
    from faithwatch.decoding.types import REPEATED

    pieces = ["The tower is in Paris.", " The Tower is in Paris!", " It is 330 metres tall."]

    def cont(prefix: str, i: int) -> str:
        assert prefix == "The tower is in Paris."
        return [" The tower is in Paris.", " It is 330 metres tall."][i % 2]

    with Running(text_monitor, Script(pieces=pieces, continue_with=cont),
                 ProxySettings(policy="fod", samples=2, beams=1)) as url:
        answer = httpx.post(url + "/v1/chat/completions", json=ASK, timeout=30).json()
    assert answer["choices"][0]["message"]["content"] == "The tower is in Paris. It is 330 metres tall."
    trace = answer["faithwatch"]["summary"]["trace"]
    assert [e["kind"] for e in trace[:2]] == ["accept", "backtrack"]
    assert trace[1]["text"] == "The Tower is in Paris!" and trace[1]["reason"].startswith(REPEATED)
    assert [e["text"] for e in trace if e["kind"] == "prune" and e["reason"] == REPEATED] == ["The tower is in Paris."]
    with Running(text_monitor, Script(pieces=pieces, continue_with=cont),
                 ProxySettings(policy="fod", samples=2, beams=1, no_repeat=False)) as url:
        allowed = httpx.post(url + "/v1/chat/completions", json=ASK, timeout=30).json()
    assert allowed["choices"][0]["message"]["content"] == "".join(pieces)


def test_fod_refuses_when_no_continuation_is_faithful(text_monitor):
    script = Script(pieces=["It is made of gold."], continue_with=lambda p, i: "It is made of cheese.")
    with Running(text_monitor, script, ProxySettings(policy="fod", samples=2)) as url:
        answer = httpx.post(url + "/v1/chat/completions", json=ASK, timeout=30).json()
    assert answer["choices"][0]["message"]["content"] == REFUSAL
    assert answer["faithwatch"]["summary"]["refused"] is True


def test_upstream_5xx_is_retried_then_passed_through(text_monitor):
    flaky = Script(pieces=FAITHFUL, status=503, fail_times=1)
    with Running(text_monitor, flaky, retries=1) as url:
        ok = httpx.post(url + "/v1/chat/completions", json=ASK, timeout=30)
    assert ok.status_code == 200 and flaky.failures == 1 and len(flaky.requests) == 2
    down = Script(status=500)
    with Running(text_monitor, down, retries=1) as url:
        bad = httpx.post(url + "/v1/chat/completions", json={**ASK, "stream": True}, timeout=30)
    assert bad.status_code == 500 and bad.json()["error"]["message"] == "scripted 500" and len(down.requests) == 2
    refused = Script(status=400)
    with Running(text_monitor, refused, retries=3) as url:
        answer = httpx.post(url + "/v1/chat/completions", json=ASK, timeout=30)
    assert answer.status_code == 400 and len(refused.requests) == 1  # a client error is not retried


@pytest.mark.parametrize("failure", [{"malformed_after": 1}, {"break_after": 2}, {"stall_after": 1}])
def test_a_broken_upstream_stream_ends_with_a_clear_error(text_monitor, failure):
    script = Script(pieces=FAITHFUL, **failure)
    start = time.monotonic()
    with Running(text_monitor, script, timeout=1.0) as url, httpx.stream(
            "POST", url + "/v1/chat/completions", json={**ASK, "stream": True}, timeout=30) as response:
        events = _events(response)
    assert time.monotonic() - start < 15  # nothing hangs
    error = events[-1]["error"]["message"]
    expected = {"malformed_after": "malformed JSON", "break_after": "mid-stream", "stall_after": "stopped sending"}
    assert expected[next(iter(failure))] in error


def test_an_answer_that_is_no_event_stream_or_is_cut_off_is_an_error_not_an_empty_answer(text_monitor):
    for script, words in [(Script(page=True), "neither an event stream"), (Script(pieces=FAITHFUL, cut=True),
                                                                           "cut off")]:
        with Running(text_monitor, script) as url:
            with httpx.stream("POST", url + "/v1/chat/completions", json={**ASK, "stream": True},
                              timeout=30) as response:
                status = response.status_code
                events = [json.loads(response.read())] if status != 200 else _events(response)
            plain = httpx.post(url + "/v1/chat/completions", json=ASK, timeout=30)
        # before any text: the status says it (502); after some text: the stream ends with an error event
        assert status == (502 if script.page else 200) and words in events[-1]["error"]["message"]
        assert not any(c.get("finish_reason") for e in events for c in e.get("choices", []))  # never "finished"
        assert plain.status_code == 502 and words in plain.json()["error"]["message"]


def test_an_upstream_that_ignores_stream_is_read_as_one_chunk(text_monitor):
    with Running(text_monitor, Script(pieces=FAITHFUL, no_stream=True)) as url:
        answer = httpx.post(url + "/v1/chat/completions", json=ASK, timeout=30).json()
    assert answer["choices"][0]["message"]["content"] == "".join(FAITHFUL)
    assert answer["faithwatch"]["summary"]["sentences"] == 2


def test_a_silent_upstream_is_not_asked_again(text_monitor):
    script = Script(pieces=FAITHFUL, hang=5.0)
    start = time.monotonic()
    with Running(text_monitor, script, timeout=0.5, retries=2) as url:
        answer = httpx.post(url + "/v1/chat/completions", json=ASK, timeout=30)
        took = time.monotonic() - start
    assert answer.status_code == 504 and "did not answer within 0.5 s" in answer.json()["error"]["message"]
    assert len(script.requests) == 1 and took < 4  # retries are for unreachable upstreams, not busy ones


def test_each_summary_counts_its_own_upstream_calls(text_monitor):
    with Running(text_monitor, Script(pieces=FAITHFUL)) as url:
        calls = [httpx.post(url + "/v1/chat/completions", json=ASK, timeout=30).json()["faithwatch"]["summary"][
            "upstream_calls"] for _ in range(3)]
    assert calls == [1, 1, 1]


def test_healthz_says_whether_the_upstream_answers(text_monitor):
    with Running(text_monitor, Script(pieces=FAITHFUL)) as url:
        assert httpx.get(url + "/healthz", timeout=10).json()["upstream_reachable"] is True
    with serve(create_proxy_app(text_monitor, Upstream("http://127.0.0.1:9/v1"))) as url:
        health = httpx.get(url + "/healthz", timeout=10).json()
    assert health["status"] == "ok" and health["upstream_reachable"] is False
    meta = getattr(text_monitor.detector, "meta", None)  # as serve reports them: what the detector reads
    assert health["detector_features"] == list(getattr(meta, "feature_names", None) or [])
    assert health["features"] == text_monitor.feature_names


def test_healthz_places_the_sentences_sent_against_the_detectors_training_sets(text_monitor):
    with Running(text_monitor, Script(pieces=FAITHFUL)) as url:
        sent = [httpx.post(url + "/v1/chat/completions", json=ASK, timeout=30).json()["faithwatch"]["summary"][
            "sentences"] for _ in range(2)]
        domain = httpx.get(url + "/healthz", timeout=10).json()["domain"]
    assert sent == [2, 2] and domain == {"sentences": 4, "offset": None, "flagged": None, "note": None,  # heuristic
                                         "contexts": 2, "transcripts": 0.0, "transcript_note": None}


def test_the_summary_notes_a_chat_context(text_monitor):
    """The last chunk's summary carries ``notes`` (``faithwatch.results.context_notes``): the transcript caution for
    a chat as the context, none for prose."""
    chat = "Ana: The tower is in Paris.\nBen: How tall is it?\nAna: It is 330 metres tall."
    with Running(text_monitor, Script(pieces=FAITHFUL)) as url:
        summaries = [httpx.post(url + "/v1/chat/completions", json={**ASK, "context": context}, timeout=30).json()[
            "faithwatch"]["summary"] for context in (CONTEXT, chat)]
    assert summaries[0]["notes"] == []
    assert len(summaries[1]["notes"]) == 1 and "chat or meeting transcript" in summaries[1]["notes"][0]


def test_other_hosts_and_bodies_that_are_not_json_are_refused(text_monitor):
    script = Script(pieces=FAITHFUL)
    with serve(fake_upstream(script)) as up, serve(create_proxy_app(
            text_monitor, Upstream(up + "/v1"), allowed_hosts=["localhost", "127.0.0.1"])) as url:
        ok = httpx.post(url + "/v1/chat/completions", json=ASK, timeout=30)
        rebound = httpx.post(url + "/v1/chat/completions", json=ASK, headers={"Host": "evil.example"}, timeout=30)
        simple = httpx.post(url + "/v1/chat/completions", content=json.dumps(ASK),
                            headers={"Content-Type": "text/plain"}, timeout=30)
    assert ok.status_code == 200
    assert rebound.status_code == 403 and simple.status_code == 415
    assert "application/json" in simple.json()["error"]["message"]
    assert len(script.requests) == 1  # neither refused request reached the upstream


def test_an_api_key_guards_the_proxy_and_a_blank_one_is_refused(text_monitor):
    script = Script(pieces=FAITHFUL)
    with serve(fake_upstream(script)) as up:
        for blank in (" ", "\u200b"):  # a blank key was taken: only "Bearer  " would have passed
            with pytest.raises(InputError, match="the API key is empty"):
                create_proxy_app(text_monitor, Upstream(up + "/v1"), api_key=blank)
        with serve(create_proxy_app(text_monitor, Upstream(up + "/v1"), api_key="s3cret")) as url:
            told = {"Authorization": "Bearer s3cret"}
            ok = httpx.post(url + "/v1/chat/completions", json=ASK, headers=told, timeout=30)
            wrong = httpx.post(url + "/v1/chat/completions", json=ASK, headers={"Authorization": "Bearer s3cre"},
                               timeout=30)
            none = httpx.post(url + "/v1/chat/completions", json=ASK, timeout=30)
    assert ok.status_code == 200 and wrong.status_code == 401 and none.status_code == 401
    assert wrong.json()["error"]["type"] == "authentication_error"
    assert len(script.requests) == 1


@pytest.mark.parametrize(("field", "value"), [("n", "two"), ("n", [1]), ("n", 1.5), ("n", True),
                                            ("stream", "yes"), ("logprobs", 1)])
def test_fields_the_proxy_reads_must_have_their_type(text_monitor, field, value):
    script = Script(pieces=FAITHFUL)
    with Running(text_monitor, script) as url:
        answer = httpx.post(url + "/v1/chat/completions", json={**ASK, field: value}, timeout=30)
    assert answer.status_code == 400  # not a 500, and not read as true
    assert f"'{field}' must be" in answer.json()["error"]["message"]
    assert not script.requests


def test_a_lone_surrogate_in_the_request_is_refused_before_forwarding(text_monitor):
    # json.loads reads "\ud800" as one; forwarding it raised UnicodeEncodeError in httpx (a 500)
    script = Script(pieces=FAITHFUL)
    with Running(text_monitor, script) as url:
        answers = [httpx.post(url + "/v1/chat/completions", timeout=30, headers={"content-type": "application/json"},
                              content=json.dumps(body).encode())
                   for body in ({**ASK, "user": "u\ud800"},
                                {**ASK, "messages": [{"role": "user", "content": [{"type": "text",
                                                                                   "text": "\udcff"}]}]})]
    assert [a.status_code for a in answers] == [400, 400]
    assert "'user' of the request holds a lone surrogate U+D800" in answers[0].json()["error"]["message"]
    assert "'messages' of the request holds a lone surrogate U+DCFF" in answers[1].json()["error"]["message"]
    assert not script.requests


def test_client_logprobs_give_the_api_features(text_monitor):
    with Running(text_monitor, Script(pieces=FAITHFUL)) as url:
        answer = httpx.post(url + "/v1/chat/completions", json={**ASK, "logprobs": True}, timeout=30).json()
    features = answer["faithwatch"]["sentences"][0]["features"]
    assert features["api_min_prob"] == pytest.approx(math.exp(-0.25))
    assert answer["choices"][0]["logprobs"]["content"]


def test_a_client_disconnect_stops_the_upstream(text_monitor):
    script = Script(pieces=[f" Sentence {i} is here." for i in range(200)], delay=0.05)
    with Running(text_monitor, script) as url:
        with httpx.stream("POST", url + "/v1/chat/completions", json={**ASK, "stream": True}, timeout=30) as r:
            next(r.iter_lines())
        deadline = time.monotonic() + 10
        while not script.closed_early and time.monotonic() < deadline:
            time.sleep(0.05)
    assert script.closed_early == [1]


def test_context_conventions():
    field = split_request({"messages": [{"role": "user", "content": "Q?"}], "context": ["A.", "B."]})
    assert field.context == "A.\n\nB." and field.source == "field" and "context" not in field.body
    assert field.body["messages"][0] == {"role": "system", "content": "Context:\nA.\n\nB."}  # the model sees it
    seen = split_request({"messages": [{"role": "system", "content": "Use: A. B."}, {"role": "user",
                                                                                     "content": "Q?"}],
                          "context": "A. B."})
    assert len(seen.body["messages"]) == 2  # already in a message: not added twice
    marked = split_request({"messages": [{"role": "user", "content": "<context>The text.</context>\nQ?"}]})
    assert (marked.context, marked.question, marked.source) == ("The text.", "Q?", "user")
    system = split_request({"messages": [{"role": "system", "content": "[[ctx]]S.[[/ctx]]"},
                                         {"role": "user", "content": "Q?"}]}, ("[[ctx]]", "[[/ctx]]"))
    assert (system.context, system.source) == ("S.", "system")
    assert split_request({"messages": [{"role": "user", "content": "Q?"}]}).context is None
    with pytest.raises(InputError):
        split_request({"messages": []})
    for blank in (" ", "\u200b", ["\ufeff"]):  # invisible characters are no context
        with pytest.raises(InputError, match="'context' must be a non-empty string"):
            split_request({"messages": [{"role": "user", "content": "Q?"}], "context": blank})


def test_without_context_the_answer_passes_unmonitored(text_monitor):
    with Running(text_monitor, Script(pieces=FAITHFUL)) as url:
        answer = httpx.post(url + "/v1/chat/completions", json={"messages": ASK["messages"]}, timeout=30).json()
        bad = [httpx.post(url + "/v1/chat/completions", json={**ASK, "n": n}, timeout=30) for n in (2, 0, -1)]
        one = httpx.post(url + "/v1/chat/completions", json={**ASK, "n": 1.0}, timeout=30)
    assert answer["choices"][0]["message"]["content"] == "".join(FAITHFUL)
    assert answer["faithwatch"]["monitored"] is False
    for b in bad:  # n = 0 was read as 1, then forwarded as 0
        assert b.status_code == 400 and "one choice" in b.json()["error"]["message"]
    assert one.status_code == 200


def test_proxy_in_front_of_faithwatch_serve(lm, one_thread):
    """`faithwatch serve` as the upstream (the offline README example): streaming, n, continuation, logprobs."""
    from faithwatch.server import create_app

    monitor = Monitor(lm, alignment="lexical", detector="heuristic")
    with serve(create_app(monitor)) as upstream_url:
        body = {"messages": [{"role": "user", "content": "Where is the tower?"}], "max_tokens": 12,
                "temperature": 0.8, "n": 2, "logprobs": True, "top_logprobs": 3, "seed": 5}
        plain = httpx.post(upstream_url + "/v1/chat/completions", json=body, timeout=60).json()
        assert len(plain["choices"]) == 2
        entry = plain["choices"][0]["logprobs"]["content"][0]
        assert entry["logprob"] <= 0 and len(entry["top_logprobs"]) == 3
        again = httpx.post(upstream_url + "/v1/chat/completions", json=body, timeout=60).json()
        assert [c["message"]["content"] for c in again["choices"]] == [c["message"]["content"]
                                                                        for c in plain["choices"]]  # seeded
        cont = httpx.post(upstream_url + "/v1/chat/completions", timeout=60, json={
            "messages": [*body["messages"], {"role": "assistant", "content": "The tower"}],
            "continue_final_message": True, "add_generation_prompt": False, "max_tokens": 5, "temperature": 0})
        assert cont.status_code == 200
        greedy = {**ASK, "max_tokens": 24, "temperature": 0}
        forwarded = split_request(greedy).body  # the context added to a system message
        direct = httpx.post(upstream_url + "/v1/chat/completions", json=forwarded, timeout=60).json()
        app = create_proxy_app(monitor, Upstream(upstream_url + "/v1"), ProxySettings(logprobs=True))
        with serve(app) as url, httpx.stream("POST", url + "/v1/chat/completions", timeout=60,
                                             json={**greedy, "stream": True}) as response:
            events = _events(response)
    assert _content(events) == direct["choices"][0]["message"]["content"]  # the proxy changes nothing
    summary = events[-1]["faithwatch"]["summary"]
    assert summary["model_id"] == lm.model_id and summary["sentences"] >= 1


@pytest.mark.parametrize("args, message", [
    (["--policy", "bogus"], "unknown policy"),
    (["--markers", "<c>"], "--markers"),
    (["--policy", "fod", "--continuation", "psychic"], "continuation must be one of continue, reprompt"),
    # options of another policy were ignored
    (["--tau1", "0.3", "--samples", "3"], "--policy annotate does not read --tau1, --samples (it reads --threshold)"),
    (["--policy", "fod", "--threshold", "0.3"], "--policy fod does not read --threshold (it reads --tau1, --tau2,"),
    (["--policy", "abstain", "--allow-repeat"], "--policy abstain does not read --no-repeat/--allow-repeat"),
])
def test_cli_refuses_bad_options_with_one_line(args, message, monkeypatch):
    import uvicorn
    from typer.testing import CliRunner

    from faithwatch.cli import app

    monkeypatch.setattr(uvicorn, "run", lambda *a, **k: None)  # never serve, should the check be gone
    result = CliRunner().invoke(app, ["proxy", "--upstream", "http://127.0.0.1:9/v1", "--model", "none", *args])
    assert result.exit_code == 2 and message in " ".join(result.output.split()), result.output


def test_cli_starts_without_a_local_model(monkeypatch):
    """--model none: the model-free signals (and api_*), no language model; the app is built and served."""
    import uvicorn
    from typer.testing import CliRunner

    from faithwatch.cli import app

    served = []
    monkeypatch.setattr(uvicorn, "run", lambda application, **kw: served.append(application))
    result = CliRunner().invoke(app, ["proxy", "--upstream", "http://127.0.0.1:9/v1", "--model", "none",
                                      "--detector", "heuristic", "--alignment", "lexical", "--port", "0"])
    assert result.exit_code == 0, result.output
    assert len(served) == 1 and "scoring with none" in " ".join(result.output.split())


def test_cli_refuses_an_upstream_that_is_not_a_url():
    from typer.testing import CliRunner

    from faithwatch.cli import app

    result = CliRunner().invoke(app, ["proxy", "--upstream", "localhost:8000", "--model", "none"])
    assert result.exit_code == 2 and "http://" in result.output
