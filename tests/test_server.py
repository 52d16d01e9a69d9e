"""The HTTP server: API tests on the tiny model, plus limits (413, 503, 504) and disconnects with a fake monitor."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import pytest
import torch

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")
uvicorn = pytest.importorskip("uvicorn")
from fastapi.testclient import TestClient  # noqa: E402

from faithwatch.errors import InputError  # noqa: E402
from faithwatch.results import MonitorResult, SentenceReport  # noqa: E402
from faithwatch.server import create_app  # noqa: E402
from servers import serve  # noqa: E402

CONTEXT = "The Eiffel Tower is in Paris, France. It was built from 1887 to 1889 by the company of Gustave Eiffel."
QUESTION = "Who built the tower?"


def parse_sse(text: str) -> list[tuple[str, dict]]:
    """(event, data) pairs of a text/event-stream body."""
    events = []
    for block in text.split("\n\n"):
        lines = [line for line in block.splitlines() if line and not line.startswith(":")]
        if not lines:
            continue
        kind = next(line[7:] for line in lines if line.startswith("event: "))
        data = "\n".join(line[6:] for line in lines if line.startswith("data: "))
        events.append((kind, json.loads(data)))
    return events


@pytest.fixture(scope="module")
def client(monitor) -> Iterator[TestClient]:
    torch.set_num_threads(1)
    app = create_app(monitor, max_body_bytes=20_000, queue_size=4, check_alignment="lexical", max_new_tokens=64)
    with TestClient(app) as c:
        yield c


def test_healthz_and_docs(client, monitor):
    health = client.get("/healthz").json()
    assert health["status"] == "ok"
    assert health["model_id"] == monitor.lm.model_id
    assert health["detector"] == monitor.detector.name
    assert health["queue"]["queue_size"] == 4 and health["queue"]["workers"] == 1
    assert health["limits"]["max_body_bytes"] == 20_000
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/v1/monitor", "/v1/score", "/v1/generate", "/v1/check", "/healthz"} <= set(paths)
    docs = client.get("/docs")
    assert docs.status_code == 200 and "cdn." not in docs.text  # Swagger UI from local files: works offline
    script = next(part.split('"')[0] for part in docs.text.split('src="')[1:] if "swagger-ui-bundle" in part)
    assert client.get(script).status_code == 200
    page = client.get("/")
    assert page.status_code == 200 and "/v1/monitor" in page.text


def test_create_app_builds_a_monitor_from_a_factory_and_refuses_one_without_a_model(monitor):
    # create_app(factory) and create_app(None) were refused as "needs a language model": the check read the factory
    # (which has no lm) before calling it
    calls = []

    def factory():
        calls.append(1)
        return monitor

    app = create_app(factory, check_alignment="lexical")
    assert calls == [1] and app.state.monitor is monitor
    from faithwatch.monitor import Monitor

    with pytest.raises(InputError, match="needs a language model"):
        create_app(lambda: Monitor("none", alignment="lexical", detector="heuristic"))


def test_monitor_streams_sentences_then_summary(client):
    with client.stream("POST", "/v1/monitor", json={"question": QUESTION, "context": CONTEXT,
                                                    "max_new_tokens": 16}) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = parse_sse(response.read().decode())
    kinds = [k for k, _ in events]
    assert kinds[0] == "start" and kinds[-1] == "summary"
    sentences = [d for k, d in events if k == "sentence"]
    assert len(sentences) >= 1
    assert all(0.0 <= s["score"] <= 1.0 and "features" in s and "vectors" not in s for s in sentences)
    summary = events[-1][1]
    assert summary["num_tokens"] <= 16
    assert sentences[0]["text"].strip() in summary["response"]


def test_monitor_rejects_too_many_tokens(client):
    r = client.post("/v1/monitor", json={"question": QUESTION, "context": CONTEXT, "max_new_tokens": 10_000})
    assert r.status_code == 422 and "limit" in r.json()["message"]


def test_healthz_domain_counts_every_sentence_answered(monitor):
    torch.set_num_threads(1)
    with TestClient(create_app(monitor, check_alignment="lexical", max_new_tokens=16)) as c:
        assert c.get("/healthz").json()["domain"] == {"sentences": 0, "offset": None, "flagged": None, "note": None,
                                                      "contexts": 0, "transcripts": None, "transcript_note": None}
        scored = c.post("/v1/score", json={"records": [{"question": QUESTION, "context": CONTEXT,
                                                         "response": "Eiffel's company. It is in Paris."}]}).json()
        generated = c.post("/v1/generate", json={"question": QUESTION, "context": CONTEXT, "strategy": "greedy",
                                                  "max_new_tokens": 16}).json()
        streamed = [d for kind, d in parse_sse(c.post("/v1/monitor", json={
            "question": QUESTION, "context": CONTEXT, "max_new_tokens": 16}).text) if kind == "sentence"]
        domain = c.get("/healthz").json()["domain"]
    answered = len(scored["results"][0]["result"]["sentences"]) + len(generated["sentences"]) + len(streamed)
    assert answered >= 3 and domain["sentences"] == answered
    assert domain["offset"] is None  # the tiny model's heuristic detector has no reference
    assert domain["contexts"] == 3 and domain["transcripts"] == 0.0 and domain["transcript_note"] is None


def test_recent_scores_place_a_far_domain_and_keep_only_the_latest():
    import numpy as np

    from faithwatch.detectors import SynCheckDetector
    from faithwatch.server.domain import RECENT_SENTENCES, RecentScores

    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 2))
    y = (X[:, 0] + 0.5 * rng.normal(size=400) > 0).astype(float)
    det = SynCheckDetector.fit(X, y, ["a", "b"], "lr", model_id="m")
    det.calibrate(det.decision_function(X), y)
    recent = RecentScores()
    recent.add([None, float("nan")])  # skipped, never a silent NaN in the median
    recent.add(det.probability(rng.normal(det.reference_logit - 3.0, 1.0, RECENT_SENTENCES + 50)))
    status = recent.status(det, det.threshold)
    assert status["sentences"] == len(recent) == RECENT_SENTENCES and status["offset"] < -2.5
    assert status["flagged"] > 0.9 and "calibrate --unlabelled" in status["note"]
    near = RecentScores()
    near.add_sentences({"sentences": [{"score": float(p)} for p in
                                      det.probability(det.reference_logit + np.linspace(-0.4, 0.4, 300))]})
    assert near.status(det, det.threshold)["note"] is None and len(near) == 300
    assert near.status(det, det.threshold)["transcripts"] is None  # no context seen yet
    chat = "Ana: I'll bring the cake.\nBen: Great!\nAna: See you at six."
    for context in (chat, [chat], "The tower is in Paris.", None):  # None: nothing to monitor against (proxy)
        near.add_context(context)
    status = near.status(det, det.threshold)
    assert status["contexts"] == 3 and status["transcripts"] == pytest.approx(2 / 3, abs=1e-4)
    assert status["transcript_note"].startswith("2 of the latest 3 contexts read as a chat or meeting transcript")
    few = RecentScores(contexts=2)
    for context in (chat, "The tower is in Paris.", "It is 330 m tall."):
        few.add_context(context)
    assert few.status(det, det.threshold)["transcripts"] == 0.0  # only the latest are kept


def test_score_batch_with_one_bad_record(client):
    records = [{"id": 1, "question": QUESTION, "context": CONTEXT, "response": "Gustave Eiffel built it. In Paris."},
               {"id": "bad", "question": QUESTION, "context": CONTEXT, "response": "   "}]
    r = client.post("/v1/score", json={"records": records})
    assert r.status_code == 200
    body = r.json()
    assert body["ok"] == 1 and body["failed"] == 1
    good, bad = body["results"]
    assert good["id"] == 1 and good["ok"] and len(good["result"]["sentences"]) == 2
    assert good["result"]["mode"] == "teacher-forced"
    assert bad["id"] == "bad" and not bad["ok"] and bad["error"]["status"] == 422
    assert client.post("/v1/score", json={"records": []}).status_code == 422


def test_score_a_response_of_invisible_characters(client):
    # zero-width and control characters alone say nothing: refused as empty (they were scored, 0.5 on this model);
    # an invisible word inside a response is scored (it was a 500, "KeyError: 0")
    records = [{"id": i, "question": QUESTION, "context": CONTEXT, "response": text}
               for i, text in enumerate(["\u200b", "\x00\x01", "Gustave Eiffel built it. \ufeff", "\u200b \u2060\n"])]
    body = client.post("/v1/score", json={"records": records}).json()
    assert [r["ok"] for r in body["results"]] == [False, False, True, False], body
    assert body["results"][2]["result"]["sentences"]
    for r in body["results"][:2] + body["results"][3:]:
        assert r["error"]["status"] == 422 and "non-empty" in r["error"]["message"], r


def test_generate_greedy(client):
    r = client.post("/v1/generate", json={"question": QUESTION, "context": CONTEXT, "strategy": "greedy",
                                          "max_new_tokens": 12})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["strategy"] == "greedy" and isinstance(body["answer"], str) and "trace" in body
    assert client.post("/v1/generate", json={"question": "q", "context": "c", "strategy": "nope"}).status_code == 422
    for flag in ("trim", "last_resort", "coverage", "no_repeat"):  # "yes" and "no" were read as booleans
        r = client.post("/v1/generate", json={"question": "q", "context": "c", flag: "no"})
        assert r.status_code == 422 and "valid boolean" in r.text, r.text
    r = client.post("/v1/generate", json={"question": "q", "context": "c", "strategy": "greedy", "tau1": 0.3,
                                          "alpha": 1.0, "max_new_tokens": 4})  # ignored, as the CLI's were
    assert r.status_code == 422 and "strategy greedy does not read alpha, tau1" in r.text, r.text
    r = client.post("/v1/generate", json={"question": "q", "context": "c", "strategy": "cad", "alpha": 1.0,
                                          "max_new_tokens": 4})
    assert r.status_code == 200 and r.json()["params"]["alpha"] == 1.0, r.text


@pytest.mark.parametrize("batch_rows", [1, 8])  # a pool job, and a row of the live batch
def test_generate_without_a_budget_keeps_within_the_servers_limit(monitor, batch_rows):
    # the strategies' default budget (128) is above this server's 16: it used to refuse every request that set none
    with TestClient(create_app(monitor, max_new_tokens=16, batch_rows=batch_rows)) as c:
        ask = {"question": QUESTION, "context": CONTEXT, "strategy": "greedy"}
        r = c.post("/v1/generate", json=ask)
        assert r.status_code == 200, r.text
        assert r.json()["generated_tokens"] <= 16 and r.json()["params"]["max_new_tokens"] == 16
        too_many = c.post("/v1/generate", json={**ask, "max_new_tokens": 17})
        assert too_many.status_code == 422 and "above this server's limit 16" in too_many.text


def test_generate_and_monitor_take_an_instruction_and_refuse_a_blank_one(client, monitor):
    """A request's ``instruction`` replaces the server's in its prompt (the answer is decoding.generate's with it);
    a blank one is a 422 that says so, before any model work."""
    from faithwatch.decoding import generate

    told = "Reply with one short sentence."
    body = {"question": QUESTION, "context": CONTEXT, "strategy": "fod", "max_new_tokens": 10, "samples": 2,
            "instruction": told}
    got = client.post("/v1/generate", json=body).json()
    want = generate(monitor, QUESTION, CONTEXT, "fod", max_new_tokens=10, samples=2, instruction=told).to_dict()
    assert (got["answer"], got["num_tokens"]) == (want["answer"], want["num_tokens"])
    assert [s["score"] for s in got["sentences"]] == pytest.approx([s["score"] for s in want["sentences"]], abs=1e-4)
    want = monitor.generate(QUESTION, CONTEXT, max_new_tokens=10, instruction=told)
    plain = monitor.generate(QUESTION, CONTEXT, max_new_tokens=10)
    assert [s.score for s in want.sentences] != pytest.approx([s.score for s in plain.sentences], abs=1e-4)
    with TestClient(create_app(monitor, batch_rows=1, max_new_tokens=64)) as pooled:  # a pool job, not a batch row
        for c in (client, pooled):
            with c.stream("POST", "/v1/monitor", json={"question": QUESTION, "context": CONTEXT,
                                                       "max_new_tokens": 10, "instruction": told}) as response:
                events = parse_sse(response.read().decode())
            assert events[-1][1]["response"] == want.response
            assert [d["score"] for k, d in events if k == "sentence"] == pytest.approx(
                [s.score for s in want.sentences], abs=1e-4)
    for route in ("/v1/generate", "/v1/monitor"):
        blank = client.post(route, json={"question": QUESTION, "context": CONTEXT, "instruction": " "})
        assert blank.status_code == 422 and "instruction is blank" in blank.text


def test_generate_and_score_answer_with_the_notes_of_a_chat_context(client):
    """A chat transcript as the context: /v1/generate and /v1/score say so in ``notes`` (the same text as the CLI's,
    ``faithwatch.results.context_notes``); a prose context gets none."""
    chat = "Ana: I'll bring the cake.\nBen: Great, thanks!\nAna: See you at six."
    generated = client.post("/v1/generate", json={"question": "Who brings the cake?", "context": chat,
                                                  "strategy": "greedy", "max_new_tokens": 8}).json()
    assert len(generated["notes"]) == 1 and "chat or meeting transcript" in generated["notes"][0]
    scored = client.post("/v1/score", json={"records": [
        {"question": "Who?", "context": chat, "response": "Ana brings the cake."},
        {"question": QUESTION, "context": CONTEXT, "response": "It is in Paris."}]}).json()["results"]
    assert scored[0]["result"]["notes"] == generated["notes"] and scored[1]["result"]["notes"] == []


def test_generate_says_when_the_context_was_cut(lm):
    """With ``--truncate-context``, /v1/generate counts the cut tokens and notes them, as a live batch row (greedy)
    and as a pool job (fod) alike; before, the cut was silent there."""
    from faithwatch.monitor import Monitor

    cutting = Monitor(lm, alignment="lexical", truncate_context=True)
    body = {"question": QUESTION, "context": " ".join([CONTEXT] * 60), "max_new_tokens": 8}
    with TestClient(create_app(cutting, max_new_tokens=16)) as c:
        for strategy in ("greedy", "fod"):
            out = c.post("/v1/generate", json={**body, "strategy": strategy}).json()
            assert out["context_tokens_cut"] > 0, (strategy, out)
            assert [n for n in out["notes"] if f"last {out['context_tokens_cut']} tokens were cut" in n], out["notes"]


def test_check_alignment(client):
    r = client.post("/v1/check", json={"response": "The tower is in Paris. It was built by aliens in 1999.",
                                       "contexts": [CONTEXT], "alignment": "lexical"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["extractor"] and body["checker"] and len(body["claims"]) == 2
    assert {c["label"] for c in body["claims"]} <= {"Entailment", "Neutral", "Contradiction", "Conflict"}
    assert client.post("/v1/check", json={"response": "x", "contexts": "y", "alignment": "nli:evil"}).status_code == 422
    assert body["notes"] == []
    french = "La tour a été construite en 1889 pour l'Exposition universelle, mais elle est toujours là."
    noted = client.post("/v1/check", json={"response": french, "contexts": [CONTEXT], "alignment": "lexical"}).json()
    assert len(noted["notes"]) == 1 and noted["notes"][0].startswith("the response reads as French: ")


def test_check_takes_context_as_score_records_and_check_inputs_name_it(client):
    # {"context": ...} (the key of `check --input` records and of /v1/score) was a 422: "contexts" field required
    ask = {"response": "The tower is in Paris. It was built by aliens in 1999.", "alignment": "lexical"}
    named = client.post("/v1/check", json={**ask, "contexts": [CONTEXT]})
    single = client.post("/v1/check", json={**ask, "context": CONTEXT})
    several = client.post("/v1/check", json={**ask, "context": [CONTEXT, CONTEXT]})
    assert named.status_code == single.status_code == several.status_code == 200, single.text
    assert [c["label"] for c in single.json()["claims"]] == [c["label"] for c in named.json()["claims"]]
    both = client.post("/v1/check", json={**ask, "contexts": [CONTEXT], "context": CONTEXT})
    assert both.status_code == 422 and both.json()["detail"][0]["loc"] == ["body", "context"]


def test_chat_completions_lists_its_model_and_refuses_what_it_cannot_honour(client, monitor):
    listed = client.get("/v1/models").json()
    assert [m["id"] for m in listed["data"]] == [monitor.lm.model_id]
    ask = {"messages": [{"role": "user", "content": "Where is the tower?"}], "max_tokens": 6, "temperature": 1.0}
    stop = client.post("/v1/chat/completions", json={**ask, "stop": ["."]})
    role = client.post("/v1/chat/completions", json={**ask, "messages": [{"role": "wizard", "content": "Hi"}]})
    assert stop.status_code == 422 and "stop sequences are not supported" in stop.text
    assert role.status_code == 422
    assert client.post("/v1/chat/completions", json={**ask, "stop": []}).status_code == 200
    seeded = [client.post("/v1/chat/completions", json={**ask, "seed": 3}).json() for _ in range(2)]
    texts = [c["choices"][0]["message"]["content"] for c in seeded]
    assert texts[0] == texts[1]
    unseeded = {client.post("/v1/chat/completions", json=ask).json()["choices"][0]["message"]["content"]
                for _ in range(4)}
    assert len(unseeded) > 1  # without a seed, each request samples anew


def test_413_on_large_body(client):
    big = {"question": QUESTION, "context": "word " * 10_000}
    r = client.post("/v1/monitor", json=big)
    assert r.status_code == 413 and r.json()["error"] == "request_too_large"

    def chunks() -> Iterator[bytes]:  # no Content-Length: the streamed length is counted
        yield b'{"records": [{"context": "'
        for _ in range(50):
            yield b"x" * 1000
        yield b'"}]}'

    r = client.post("/v1/score", content=chunks(), headers={"content-type": "application/json"})
    assert r.status_code == 413


def test_413_on_context_tokens(monitor):
    app = create_app(monitor, max_context_tokens=5)
    with TestClient(app) as c:
        r = c.post("/v1/monitor", json={"question": QUESTION, "context": CONTEXT})
        assert r.status_code == 413 and r.json()["max_context_tokens"] == 5


# --- limits under load and disconnects: a fake monitor on a real uvicorn server -------------------------------


class FakeMonitor:
    """Duck-typed Monitor: a token every ``delay`` s, a sentence every 5 tokens; ``gate`` holds jobs back."""

    def __init__(self, lm, delay: float = 0.01) -> None:
        self.lm, self.delay = lm, delay
        self.detector = type("D", (), {"name": "fake", "threshold": 0.5})()
        self.alignment = None
        self.gate = threading.Event()
        self.gate.set()
        self.tokens = 0

    def _result(self, reports: list[SentenceReport], n: int) -> MonitorResult:
        return MonitorResult("q", "c", " ".join(r.text for r in reports), reports, "fake", "fake", None, "live", n,
                             "max_new_tokens")

    def generate(self, question, context, *, max_new_tokens=None, choose=None, on_sentence=None) -> MonitorResult:
        assert self.gate.wait(10)
        reports: list[SentenceReport] = []
        for i in range(max_new_tokens or 100):
            choose(torch.zeros(8))
            self.tokens += 1
            time.sleep(self.delay)
            if i % 5 == 4:
                report = SentenceReport(len(reports), "Fake.", 0, 5, i - 4, i + 1, {"x": 1.0}, 0.9, False, "fake")
                reports.append(report)
                on_sentence(report)
        return self._result(reports, max_new_tokens or 100)

    def score(self, question, context, response) -> MonitorResult:
        assert self.gate.wait(10)
        return self._result([], 0)


def test_disconnect_stops_generation(lm):
    fake = FakeMonitor(lm, delay=0.01)
    with serve(create_app(fake, max_new_tokens=5000)) as url, httpx.Client(base_url=url, timeout=10) as http:
        body = {"question": "q", "context": "c", "max_new_tokens": 3000}
        with http.stream("POST", "/v1/monitor", json=body) as response:
            assert response.status_code == 200
            seen = ""
            for chunk in response.iter_text():
                seen += chunk
                if "event: sentence" in seen:
                    break
        # the client has closed the connection: generation must stop soon after
        deadline = time.monotonic() + 5
        while True:
            before = fake.tokens
            time.sleep(0.4)
            if fake.tokens == before or time.monotonic() > deadline:
                break
        assert fake.tokens == before, "generation went on after the client disconnected"
        assert fake.tokens < 500
        assert http.get("/healthz").json()["queue"]["running"] == 0


def test_503_when_queue_full_and_504_on_timeout(lm):
    fake = FakeMonitor(lm)
    fake.gate.clear()
    app = create_app(fake, workers=1, queue_size=1, request_timeout_s=5)
    with serve(app) as url, httpx.Client(base_url=url, timeout=15) as http:
        record = {"records": [{"question": "q", "context": "c", "response": "r"}]}
        answers: list[int] = []
        threads = [threading.Thread(target=lambda: answers.append(http.post("/v1/score", json=record).status_code))
                   for _ in range(2)]
        try:
            for t in threads:
                t.start()
            deadline = time.monotonic() + 5
            while True:  # one running (held at the gate), one waiting
                queue = http.get("/healthz").json()["queue"]
                if queue["running"] == 1 and queue["waiting"] == 1:
                    break
                assert time.monotonic() < deadline, queue
                time.sleep(0.02)
            r = http.post("/v1/score", json=record)
            assert r.status_code == 503
            assert int(r.headers["retry-after"]) >= 1
            assert r.json()["queue"]["waiting"] == 1 and r.json()["queue"]["queue_size"] == 1
            assert "(2 of 2 places taken: 1 worker(s) and 1 waiting)" in r.json()["message"]
            r = http.post("/v1/monitor", json={"question": "q", "context": "c"})
            assert r.status_code == 503
        finally:
            fake.gate.set()
            for t in threads:
                t.join(15)
        assert answers == [200, 200]
        assert http.get("/healthz").json()["queue"]["rejected"] == 2

    fake.gate.clear()
    app = create_app(fake, request_timeout_s=0.3)
    with serve(app) as url, httpx.Client(base_url=url, timeout=15) as http:
        try:
            r = http.post("/v1/score", json={"records": [{"question": "q", "context": "c", "response": "r"}]})
            assert r.status_code == 504 and r.json()["error"] == "timeout"
        finally:
            fake.gate.set()


def test_stream_timeout_is_an_error_event(lm):
    fake = FakeMonitor(lm, delay=0.01)
    with TestClient(create_app(fake, request_timeout_s=0.3, max_new_tokens=5000)) as c:
        r = c.post("/v1/monitor", json={"question": "q", "context": "c", "max_new_tokens": 3000})
        assert r.status_code == 200
        events = parse_sse(r.text)
    assert events[-1][0] == "error" and events[-1][1]["error"] == "timeout"
    assert any(k == "sentence" for k, _ in events)
    assert fake.tokens < 300


def test_chat_stream_timeout_is_an_openai_error_event(lm):
    from faithwatch.monitor import Monitor

    with TestClient(create_app(Monitor(lm, alignment="lexical", detector="heuristic"), request_timeout_s=0.05,
                               max_new_tokens=5000)) as c:
        r = c.post("/v1/chat/completions", json={"messages": [{"role": "user", "content": "Hi"}], "stream": True,
                                                 "max_tokens": 4000, "temperature": 0})
    events = [json.loads(line[6:]) for line in r.text.splitlines() if line.startswith("data: {")]
    assert events[-1]["error"] == {"message": "the request was stopped: timeout", "type": "timeout", "code": 504}


def test_disconnect_stops_generate(monitor, monkeypatch):
    """A client that goes away from /v1/generate stops the decoding search before its next forward step."""
    from faithwatch.models import engine as engine_mod

    steps, errors = [], []
    real = engine_mod.EngineSession._feed

    def slow_feed(self, *args, **kwargs):
        steps.append(time.monotonic())
        time.sleep(0.02)
        try:
            return real(self, *args, **kwargs)
        except Exception as exc:
            errors.append(type(exc).__name__)
            raise

    monkeypatch.setattr(engine_mod.EngineSession, "_feed", slow_feed)
    with serve(create_app(monitor, max_new_tokens=2000, request_timeout_s=60)) as url:
        body = {"question": QUESTION, "context": CONTEXT, "strategy": "rerank", "max_new_tokens": 400,
                "samples": 6}
        with httpx.Client(base_url=url, timeout=0.6) as http:
            try:
                r = http.post("/v1/generate", json=body)  # gives up after 0.6 s and closes the connection
                pytest.fail(f"the search should take longer than 0.6 s: {r.status_code} {r.text[:300]} {len(steps)}")
            except httpx.ReadTimeout:
                pass
        deadline = time.monotonic() + 5
        while True:
            before = len(steps)
            time.sleep(0.5)
            if len(steps) == before or time.monotonic() > deadline:
                break
        assert len(steps) == before, "decoding went on after the client disconnected"
        assert errors == ["Cancelled"]  # stopped by the cancel token, not finished
        assert before < 150  # the full search (6 samples of up to 400 tokens) takes far more steps
        assert monitor.engine.before_step is None  # the hook is removed after the job
        with httpx.Client(base_url=url, timeout=10) as http:
            assert http.get("/healthz").json()["queue"]["running"] == 0


def test_healthz_names_the_flagging_threshold_and_the_detector_features(lm):
    from faithwatch.monitor import Monitor

    mon = Monitor(lm, alignment="lexical")
    mon.threshold = 0.123  # as --max-false-accept sets it: not the detector's own threshold
    with TestClient(create_app(mon)) as c:
        health = c.get("/healthz").json()
    assert health["threshold"] == 0.123 != mon.detector.threshold
    meta = getattr(mon.detector, "meta", None)
    assert health["detector_features"] == list(getattr(meta, "feature_names", None) or [])


def _text_only_detector(model_id: str):
    """A detector over text features only (lexical alignment, lexical, edits), fit on made-up rows: support
    raises the score, a changed number lowers it."""
    import numpy as np

    from faithwatch.detectors import SynCheckDetector

    rng = np.random.default_rng(0)
    names = ["align_score", "novel_content", "edit_swap_num"]
    X = np.column_stack([rng.random(400), rng.random(400), rng.random(400) < 0.2])
    y = (X[:, 0] < 0.5) | (X[:, 2] > 0)
    return SynCheckDetector.fit(X, y, names, "lr", model_id=model_id)


def test_check_with_the_served_detector_agrees_with_score(lm):
    """/v1/check's default checker, where the served detector reads text only, is that detector: each claim's
    detector_score is the score /v1/score gives the same sentence, and the label follows the served flag
    threshold (a near copy with a changed number below it: Contradiction)."""
    from faithwatch.monitor import Monitor

    mon = Monitor(lm, alignment="lexical", detector=_text_only_detector(lm.model_id),
                  signals=["likelihood", "alignment", "lexical", "edits"], max_new_tokens=8)
    assert not mon.detector_reads_model
    right, wrong = ("It was built from 1887 to 1889 by the company of Gustave Eiffel.",
                    "It was built from 1887 to 1999 by the company of Gustave Eiffel.")
    with TestClient(create_app(mon)) as c:
        assert c.get("/healthz").json()["check_checker"] == "detector"
        r = c.post("/v1/check", json={"response": f"{right} {wrong}", "contexts": [CONTEXT]})
        assert r.status_code == 200, r.text
        body = r.json()
        scored = c.post("/v1/score", json={"records": [{"context": CONTEXT, "response": s} for s in (right, wrong)]})
        assert scored.status_code == 200, scored.text
        for bad in ({"alignment": "lexical"}, {"entail_threshold": 0.9}):
            refused = c.post("/v1/check", json={"response": right, "contexts": CONTEXT, "checker": "detector", **bad})
            assert refused.status_code == 422 and "to checker 'alignment' only" in refused.text
        plain = c.post("/v1/check", json={"response": right, "contexts": CONTEXT, "checker": "alignment"})
        assert plain.status_code == 200 and plain.json()["checker"].startswith("alignment:")
        domain = c.get("/healthz").json()["domain"]
    scores = [rec["result"]["sentences"][0]["score"] for rec in scored.json()["results"]]
    assert body["checker"] == f"detector:{mon.detector.name}"
    assert [c["scores"]["detector_score"] for c in body["claims"]] == pytest.approx(scores, abs=1e-6)  # 6 places
    assert scores[0] >= mon.threshold > scores[1]
    assert [c["label"] for c in body["claims"]] == ["Entailment", "Contradiction"]
    # /healthz's domain counts the detector's claims (2) and the scored sentences (2), not the alignment check's;
    # and the contexts of the detector's check (1) and of the scored records (2)
    assert domain["sentences"] == 4 and domain["contexts"] == 3


def test_check_detector_refused_for_a_detector_that_reads_the_model(client, monitor):
    assert client.get("/healthz").json()["check_checker"] == "alignment"
    r = client.post("/v1/check", json={"response": "The tower is in Paris.", "contexts": CONTEXT,
                                       "checker": "detector"})
    assert r.status_code == 422 and "reads the language model" in r.text
    with pytest.raises(InputError, match="reads the language model"):
        create_app(monitor, check_checker="detector")
    with pytest.raises(InputError, match="check_checker must be one of"):
        create_app(monitor, check_checker="nli")

def _sampler_draws(device: str) -> list[int]:
    from faithwatch.server.chat import sampler

    logp = torch.log_softmax(torch.randn(50, generator=torch.Generator().manual_seed(3)), -1).to(device)
    choose = sampler(0.9, seed=11)
    return [choose(logp) for _ in range(40)]


def test_server_sampler_is_the_strategies_chooser():
    """The server samples with the decoding strategies' chooser: the same draws for a seed, greedy at 0."""
    from faithwatch.decoding.loop import sampling_chooser
    from faithwatch.server.chat import sampler

    logp = torch.log_softmax(torch.randn(50, generator=torch.Generator().manual_seed(3)), -1)
    chooser = sampling_chooser(0.9, torch.Generator().manual_seed(11))
    assert _sampler_draws("cpu") == [chooser(logp[None], None)[0] for _ in range(40)]
    assert len(set(_sampler_draws("cpu"))) > 3  # it samples
    assert sampler(0.0, seed=1)(logp) == int(logp.argmax())


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_server_sampler_on_cuda():
    """A CPU generator with a CUDA distribution (torch.multinomial refused this): reproducible, and the CPU's draws
    but where the device's float sums put a uniform on the other side of a bin edge."""
    draws = _sampler_draws("cuda")
    assert draws == _sampler_draws("cuda")
    assert sum(a == b for a, b in zip(draws, _sampler_draws("cpu"), strict=True)) >= 36


def test_text_with_a_lone_surrogate_is_refused_and_echoed_escaped(client):
    # JSON's "\ud800" escape without its pair decodes to a lone surrogate, which UTF-8 cannot write: it was a 500 (a
    # TypeError in the tokenizer, or the answer's own encoding when a rejected input or an id was echoed)
    def post(path: str, body: dict):  # json.dumps escapes the lone surrogates of body's strings: "\\ud800"
        return client.post(path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})

    ok = {"question": "Who?", "context": CONTEXT}
    body = post("/v1/score", {"records": [{**ok, "response": "Gustave \ud800 Eiffel."},
                                          {**ok, "response": "Gustave Eiffel.", "question": "\udcff"}]}).json()
    assert [r["ok"] for r in body["results"]] == [False, False]
    assert "'response' holds a lone surrogate U+D800" in body["results"][0]["error"]["message"]
    assert "'question' holds a lone surrogate U+DCFF" in body["results"][1]["error"]["message"]
    answer = post("/v1/score", {"records": [{**ok, "response": "Gustave Eiffel.", "id": "a\ud800"}]})
    assert answer.status_code == 422 and "'id' holds a lone surrogate" in answer.text
    assert answer.json()["detail"][0]["input"] == "a\\ud800"  # echoed as its escape
    answer = post("/v1/monitor", {"question": "Who?", "context": "c", "max_new_tokens": "\ud800"})
    assert answer.status_code == 422 and answer.json()["detail"][0]["input"]["max_new_tokens"] == "\\ud800"
    answer = post("/v1/generate", {"question": "Wh\ud800o?", "context": "c", "strategy": "greedy"})
    assert answer.status_code == 422 and "'question' of the request holds a lone surrogate" in answer.text
    answer = post("/v1/check", {"contexts": "c", "response": "It \ud800 is."})
    assert answer.status_code == 422 and "'response' of the request holds a lone surrogate" in answer.text
    answer = post("/v1/chat/completions", {"messages": [{"role": "user", "content": "Hi \ud800"}]})
    assert answer.status_code == 422 and "the content holds a lone surrogate" in answer.text
