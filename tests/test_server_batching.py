"""Continuous batching in the server: concurrent /v1/monitor streams decode as rows of one batch."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from faithwatch.server import create_app  # noqa: E402
from servers import serve  # noqa: E402
from test_server import parse_sse  # noqa: E402

CONTEXT = "The Eiffel Tower is in Paris, France. It was built from 1887 to 1889 by the company of Gustave Eiffel."
#: a request's own instruction (some requests below; the others keep the server's)
TOLD = "Reply with one short sentence."
BODIES = [{"question": q, "context": c, "max_new_tokens": n} for q, c, n in [
    ("Who built the tower?", CONTEXT, 24), ("Where is it?", "Paris is in France.", 9),
    ("When?", CONTEXT + " " + CONTEXT, 31), ("Why?", "Because it was a world fair.", 16),
    ("Who?", "Gustave Eiffel was an engineer.", 20), ("What?", CONTEXT, 12)]]
BODIES[3]["instruction"] = TOLD


def read(http, body: dict) -> list[tuple[str, dict]]:
    with http.stream("POST", "/v1/monitor", json=body) as response:
        assert response.status_code == 200, response.read()
        return parse_sse(response.read().decode())


def settled(http) -> dict:
    """``/healthz`` once no row is in flight (a row leaves the batch just after its last event is sent)."""
    deadline = time.monotonic() + 10
    while (health := http.get("/healthz").json())["live_batch"]["rows_in_flight"]:
        assert time.monotonic() < deadline, health
        time.sleep(0.05)
    return health


def test_concurrent_streams_share_forward_passes_and_equal_generate(monitor, one_thread):
    app = create_app(monitor, batch_rows=4, queue_size=4, max_new_tokens=64)
    out: dict[int, list] = {}
    with serve(app) as url, httpx.Client(base_url=url, timeout=60) as http:
        start = threading.Barrier(len(BODIES))

        def client(i: int) -> None:
            start.wait()
            out[i] = read(http, BODIES[i])

        threads = [threading.Thread(target=client, args=(i,)) for i in range(len(BODIES))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        health = settled(http)["live_batch"]
    assert health["rows_in_flight"] == 0 and health["max_rows"] == 4
    live = app.state.live
    assert live.row_steps > live.steps  # rows shared forward passes
    for i, body in enumerate(BODIES):
        kinds = [k for k, _ in out[i]]
        assert kinds[0] == "start" and kinds[-1] == "summary", kinds
        want = monitor.generate(body["question"], body["context"], max_new_tokens=body["max_new_tokens"],
                                instruction=body.get("instruction"))
        summary = out[i][-1][1]
        assert summary["response"] == want.response and summary["num_tokens"] == want.num_tokens
        got = [d for k, d in out[i] if k == "sentence"]
        assert [s["text"] for s in got] == [s.text for s in want.sentences]
        assert [s["score"] for s in got] == pytest.approx([s.score for s in want.sentences], abs=1e-4)


def test_full_batch_and_queue_answer_503_and_waiting_streams_go_on(monitor, one_thread):
    app = create_app(monitor, batch_rows=2, queue_size=0, max_new_tokens=64)
    with serve(app) as url, httpx.Client(base_url=url, timeout=60) as http:
        results: list = []
        with app.state.model_lock:  # the batch cannot step: two requests hold the two rows' places
            threads = [threading.Thread(target=lambda b=b: results.append(read(http, b))) for b in BODIES[:2]]
            for t in threads:
                t.start()
            deadline = time.monotonic() + 10
            while app.state.live.waiting + app.state.live.rows < 2:
                assert time.monotonic() < deadline
                time.sleep(0.02)
            r = http.post("/v1/monitor", json=BODIES[2])
            assert r.status_code == 503 and r.headers["Retry-After"] and r.json()["error"] == "queue_full"
        for t in threads:
            t.join(60)
    assert len(results) == 2 and all(events[-1][0] == "summary" for events in results)


def test_a_client_leaving_frees_its_row_and_the_others_finish(monitor, one_thread):
    app = create_app(monitor, batch_rows=4, queue_size=4, max_new_tokens=400)
    long = {"question": "Tell me everything.", "context": CONTEXT, "max_new_tokens": 400}
    with serve(app) as url, httpx.Client(base_url=url, timeout=60) as http:
        kept: list = []
        other = threading.Thread(target=lambda: kept.append(read(http, BODIES[0])))
        with http.stream("POST", "/v1/monitor", json=long) as response:
            other.start()
            for chunk in response.iter_text():
                if "event: sentence" in chunk or "event: start" in chunk:
                    break
        other.join(60)
        settled(http)
    assert kept and kept[0][-1][0] == "summary"
    assert app.state.live.row_steps < 400  # the long stream stopped early


GENERATE = [{"question": q, "context": c, "strategy": s, "max_new_tokens": n, **extra} for q, c, s, n, extra in [
    ("Who built the tower?", CONTEXT, "greedy", 22, {}), ("Where is it?", "Paris is in France.", "cad", 9,
                                                          {"alpha": 0.8, "instruction": TOLD}),
    ("When?", CONTEXT + " " + CONTEXT, "adacad", 27, {"max_sentence_tokens": 7}),
    ("Why?", "Because it was a world fair.", "abstain", 14, {"abstain_threshold": 0.9}),
    ("Who?", "Gustave Eiffel was an engineer.", "fod", 12, {"max_sentence_tokens": 4, "samples": 2,
                                                             "instruction": TOLD})]]


def test_concurrent_generate_requests_join_the_batch_and_equal_generate(monitor, one_thread):
    """One-beam /v1/generate requests and a /v1/monitor stream decode as rows of one batch (FOD runs on its own);
    every answer equals decoding.generate alone."""
    from faithwatch.decoding import generate

    app = create_app(monitor, batch_rows=4, queue_size=4, max_new_tokens=64)
    out: dict[int, dict] = {}
    with serve(app) as url, httpx.Client(base_url=url, timeout=120) as http:
        start = threading.Barrier(len(GENERATE) + 1)

        def client(i: int) -> None:
            start.wait()
            r = http.post("/v1/generate", json=GENERATE[i])
            assert r.status_code == 200, r.text
            out[i] = r.json()

        def stream() -> None:
            start.wait()
            out[-1] = read(http, BODIES[0])

        threads = [threading.Thread(target=client, args=(i,)) for i in range(len(GENERATE))]
        threads.append(threading.Thread(target=stream))
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        health = settled(http)
    assert health["live_batch"]["rows_in_flight"] == 0 and health["queue"]["running"] == 0
    live = app.state.live
    assert live.row_steps > live.steps  # rows shared forward passes
    assert live.row_steps >= sum(out[i]["num_tokens"] for i in range(4) if not out[i]["refused"])  # they were rows
    assert out[-1][-1][0] == "summary"
    for i, body in enumerate(GENERATE):
        params = {k: v for k, v in body.items() if k not in ("question", "context", "strategy")}
        want = generate(monitor, body["question"], body["context"], body["strategy"], **params).to_dict()
        got = out[i]
        for key in ("answer", "refused", "num_tokens", "generated_tokens", "stop_reason", "strategy"):
            assert got[key] == want[key], (body["strategy"], key)
        assert [s["text"] for s in got["sentences"]] == [s["text"] for s in want["sentences"]]
        assert [s["score"] for s in got["sentences"]] == pytest.approx([s["score"] for s in want["sentences"]],
                                                                       abs=1e-4)
        assert [e["kind"] for e in got["trace"]] == [e["kind"] for e in want["trace"]]


def test_a_generate_client_leaving_frees_its_row(monitor, one_thread):
    app = create_app(monitor, batch_rows=4, queue_size=4, max_new_tokens=400)
    long = {"question": "Tell me everything.", "context": CONTEXT, "strategy": "greedy", "max_new_tokens": 400}
    with serve(app) as url:
        with httpx.Client(base_url=url, timeout=0.5) as http, pytest.raises(httpx.ReadTimeout):
            http.post("/v1/generate", json=long)  # gives up and closes the connection
        with httpx.Client(base_url=url, timeout=30) as http:
            settled(http)
            r = http.post("/v1/generate", json={**long, "max_new_tokens": 5})
            assert r.status_code == 200 and r.json()["num_tokens"] == 5
    assert app.state.live.row_steps < 400  # the long request stopped early
