"""Hardening of the HTTP server: bounded /v1/check scorer cache, streams that always end, seeds and NaN refused,
API key and Host allowlist, and context limits on /v1/check."""

from __future__ import annotations

import threading
import time
import types
from collections import Counter

import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")
pytest.importorskip("uvicorn")

from fastapi.testclient import TestClient  # noqa: E402

import faithwatch.server.routes_live as live_routes  # noqa: E402
from faithwatch.server import create_app  # noqa: E402
from faithwatch.server.limits import default_allowed_hosts, parse_allowed_hosts  # noqa: E402
from test_server import CONTEXT, QUESTION, FakeMonitor, parse_sse, serve  # noqa: E402

CLAIM = "The tower is in Paris."


# --- item 5: thresholds are call parameters, not cache keys ---------------------------------------------------------


class FakeEmbedding:
    """Stands for the embedding scorer (and its model): counted, never loaded."""

    name = "embedding"
    built = 0

    def __init__(self, device: str = "cpu") -> None:
        type(self).built += 1

    def score_many(self, sentences, context):
        return [0.5 for _ in sentences]


def test_check_builds_one_scorer_per_spec_whatever_the_thresholds(monitor, monkeypatch):
    import faithwatch.alignment as alignment_mod

    specs: Counter[str] = Counter()
    lexical_built = []
    real_get_scorer = alignment_mod.get_scorer

    def counting_get_scorer(spec, device="cpu"):
        specs[spec] += 1
        return real_get_scorer(spec, device=device)

    class CountingLexical(alignment_mod.LexicalScorer):
        def __init__(self) -> None:
            lexical_built.append(1)
            super().__init__()

    monkeypatch.setattr(alignment_mod, "get_scorer", counting_get_scorer)
    monkeypatch.setattr(alignment_mod, "LexicalScorer", CountingLexical)
    monkeypatch.setattr(alignment_mod, "EmbeddingScorer", FakeEmbedding)
    FakeEmbedding.built = 0
    with TestClient(create_app(monitor, check_alignment="lexical")) as c:
        for i in range(50):
            alignment = "lexical" if i % 2 == 0 else "lexical+embedding"
            body = {"response": CLAIM, "contexts": [CONTEXT], "alignment": alignment,
                    "entail_threshold": 0.5 + i / 200, "contradict_threshold": 0.1 + i / 1000}
            r = c.post("/v1/check", json=body)
            assert r.status_code == 200, r.text
        assert specs == {"lexical": 1, "lexical+embedding": 1}  # one scorer per spec, not one per threshold
        assert len(lexical_built) == 2 and FakeEmbedding.built == 1

        # the thresholds still decide the verdict, on the cached scorer
        score = c.post("/v1/check", json={"response": CLAIM, "contexts": CONTEXT}).json()
        s = score["claims"][0]["scores"]["align_score"]
        assert 0.1 < s < 0.99
        below = c.post("/v1/check", json={"response": CLAIM, "contexts": CONTEXT, "entail_threshold": s - 0.01,
                                          "contradict_threshold": 0.05}).json()
        above = c.post("/v1/check", json={"response": CLAIM, "contexts": CONTEXT, "entail_threshold": s + 0.01,
                                          "contradict_threshold": 0.05}).json()
        contradicted = c.post("/v1/check", json={"response": CLAIM, "contexts": CONTEXT, "entail_threshold": 1.0,
                                                 "contradict_threshold": s + 0.005}).json()
        assert below["claims"][0]["label"] == "Entailment"
        assert above["claims"][0]["label"] == "Neutral"
        assert contradicted["claims"][0]["label"] == "Contradiction"
        assert specs == {"lexical": 1, "lexical+embedding": 1}
        bad = c.post("/v1/check", json={"response": CLAIM, "contexts": CONTEXT, "entail_threshold": 0.2,
                                        "contradict_threshold": 0.3})
        assert bad.status_code == 422 and bad.json()["error"] == "invalid_input"


# --- item 6: every stream ends; seeds and NaN are validated ----------------------------------------------------------


def _stream(http, body: dict) -> tuple[list[tuple[str, dict]], float]:
    """POST /v1/monitor and read the whole stream (httpx's read timeout fails a stream that never ends)."""
    t0 = time.monotonic()
    with http.stream("POST", "/v1/monitor", json=body) as response:
        assert response.status_code == 200, response.read()
        text = response.read().decode()
    return parse_sse(text), time.monotonic() - t0


def test_monitor_seed_out_of_range_is_422(lm):
    fake = FakeMonitor(lm, delay=0.0)
    with serve(create_app(fake, request_timeout_s=30)) as url, httpx.Client(base_url=url, timeout=5) as http:
        for seed in (2**64, -1, 10**30):
            r = http.post("/v1/monitor", json={"question": "q", "context": "c", "temperature": 0.7, "seed": seed,
                                               "max_new_tokens": 5})
            assert r.status_code == 422, (seed, r.status_code)
            assert r.json()["detail"][0]["loc"] == ["body", "seed"]
        events, _ = _stream(http, {"question": "q", "context": "c", "temperature": 0.7, "seed": 2**64 - 1,
                                   "max_new_tokens": 5})
        assert [k for k, _ in events] == ["start", "sentence", "summary"]
        r = http.post("/v1/generate", content=b'{"question": "q", "context": "c", "seed": 18446744073709551616}',
                      headers={"content-type": "application/json"})
        assert r.status_code == 422
        for body in ({"seed": 3}, {"seed": 3, "temperature": 0.0}):  # greedy decoding ignored it
            r = http.post("/v1/monitor", json={"question": "q", "context": "c", "max_new_tokens": 5, **body})
            assert r.status_code == 422 and "temperature 0 decodes greedily" in r.text, r.text


def test_numbers_given_as_strings_or_booleans_are_422(lm):
    """pydantic's lax mode read "beams": "2" as 2 and "seed": true as 1."""
    with TestClient(create_app(FakeMonitor(lm)), raise_server_exceptions=False) as c:
        for route, field, value in (("/v1/generate", "beams", "2"), ("/v1/generate", "tau1", True),
                                    ("/v1/generate", "max_new_tokens", "9"), ("/v1/monitor", "seed", True),
                                    ("/v1/monitor", "max_new_tokens", "5"), ("/v1/monitor", "temperature", "0.5")):
            r = c.post(route, json={"question": "q", "context": "c", field: value})
            assert r.status_code == 422, (route, field, r.status_code)
            detail = r.json()["detail"][0]
            assert detail["loc"] == ["body", field] and "must be a number" in detail["msg"]
        r = c.post("/v1/check", json={"response": "r", "contexts": "c", "entail_threshold": "0.5"})
        assert r.status_code == 422, r.text


def test_nan_and_infinity_are_422(lm):
    """Python's json reads NaN / Infinity; the 422 answer echoes them as strings (JSON has no NaN)."""
    json_body = {"content-type": "application/json"}
    with TestClient(create_app(FakeMonitor(lm)), raise_server_exceptions=False) as c:
        for raw in (b'{"question": "q", "context": "c", "temperature": NaN}',
                    b'{"question": "q", "context": "c", "temperature": -Infinity}'):
            r = c.post("/v1/monitor", content=raw, headers=json_body)
            assert r.status_code == 422, r.text
            detail = r.json()["detail"][0]
            assert detail["loc"] == ["body", "temperature"] and detail["input"] in ("nan", "-inf")
        r = c.post("/v1/check", content=b'{"response": "r", "contexts": "c", "entail_threshold": NaN}',
                   headers=json_body)
        assert r.status_code == 422, r.text
        r = c.post("/v1/generate", content=b'{"question": "q", "context": "c", "alpha": Infinity}', headers=json_body)
        assert r.status_code == 422, r.text


def test_job_failing_before_generation_ends_the_stream_with_an_error(lm, monkeypatch):
    def broken_sampler(temperature, seed):
        raise RuntimeError("Overflow when unpacking long")

    monkeypatch.setattr(live_routes, "sampler", broken_sampler)
    fake = FakeMonitor(lm, delay=0.0)
    with serve(create_app(fake, request_timeout_s=30)) as url, httpx.Client(base_url=url, timeout=5) as http:
        events, _ = _stream(http, {"question": "q", "context": "c", "temperature": 0.7, "max_new_tokens": 5})
        assert [k for k, _ in events] == ["start", "error"]
        assert events[-1][1]["error"] == "internal_error" and events[-1][1]["status"] == 500
        deadline = time.monotonic() + 5  # the job returns just after its error event
        while http.get("/healthz").json()["queue"]["running"] != 0:
            assert time.monotonic() < deadline
            time.sleep(0.02)


def _hold_the_worker(http, fake: FakeMonitor) -> threading.Thread:
    """A /v1/score job that holds the only worker at ``fake.gate`` (it does not check its token)."""
    fake.gate.clear()
    record = {"records": [{"question": "q", "context": "c", "response": "r"}]}
    thread = threading.Thread(target=lambda: http.post("/v1/score", json=record), daemon=True)
    thread.start()
    deadline = time.monotonic() + 5
    while http.get("/healthz").json()["queue"]["running"] != 1:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return thread


def test_stream_waiting_in_the_queue_times_out(lm):
    """The worker is stuck: the stream still ends at the request timeout (plus the grace), with no start."""
    fake = FakeMonitor(lm, delay=0.0)
    with serve(create_app(fake, workers=1, request_timeout_s=0.5)) as url, \
            httpx.Client(base_url=url, timeout=5) as http:
        holder = _hold_the_worker(http, fake)
        try:
            events, took = _stream(http, {"question": "q", "context": "c", "max_new_tokens": 5})
        finally:
            fake.gate.set()
            holder.join(10)
        assert [k for k, _ in events] == ["error"]
        assert events[0][1]["error"] == "timeout" and events[0][1]["status"] == 504
        assert took < 0.5 + live_routes._STREAM_GRACE_S + 2.0
        assert fake.tokens == 0  # the timed-out job never ran


def test_job_timed_out_in_the_queue_sends_an_error_event(lm, monkeypatch):
    """The done-callback: a job that the pool stops with ``Cancelled`` before it runs is reported on its stream."""
    # the stream's own deadline stays out of the way
    monkeypatch.setattr(live_routes, "_STREAM_GRACE_S", 60.0)
    fake = FakeMonitor(lm, delay=0.0)
    with serve(create_app(fake, workers=1, request_timeout_s=0.5)) as url, \
            httpx.Client(base_url=url, timeout=8) as http:
        holder = _hold_the_worker(http, fake)

        def release_after_the_deadline() -> None:
            with httpx.Client(base_url=url, timeout=5) as probe:
                deadline = time.monotonic() + 10
                while probe.get("/healthz").json()["queue"]["waiting"] != 1 and time.monotonic() < deadline:
                    time.sleep(0.02)
            time.sleep(1.0)  # the monitor job, admitted, is now past its 0.5 s timeout
            fake.gate.set()

        release = threading.Thread(target=release_after_the_deadline, daemon=True)
        release.start()
        try:
            events, took = _stream(http, {"question": "q", "context": "c", "max_new_tokens": 5})
        finally:
            fake.gate.set()
            release.join(15)
            holder.join(10)
        assert [k for k, _ in events] == ["error"]
        assert events[0][1] == {"error": "timeout", "status": 504, "message": "the request was stopped: timeout"}
        assert took < 30
        assert fake.tokens == 0


# --- item 7: API key and Host allowlist ------------------------------------------------------------------------


def test_api_key_guards_v1_routes_only(lm):
    fake = FakeMonitor(lm, delay=0.0)
    app = create_app(fake, api_key="s3cret-key", check_alignment="lexical", max_body_bytes=1000)
    check = {"response": CLAIM, "contexts": CONTEXT}
    with TestClient(app) as c:
        for path, body in (("/v1/check", check), ("/v1/monitor", {"question": "q", "context": "c"}),
                           ("/v1/score", {"records": [{"question": "q", "context": "c", "response": "r"}]}),
                           ("/v1/generate", {"question": "q", "context": "c"}), ("/v1/nothing", {})):
            r = c.post(path, json=body)
            assert r.status_code == 401, (path, r.status_code)
            assert r.json()["error"] == "unauthorized" and "message" in r.json()
            assert r.headers["www-authenticate"].startswith("Bearer")
        for header in ("Bearer wrong", "Bearer s3cret-ke", "Basic s3cret-key", "s3cret-key", "Bearer s3cret-key2"):
            assert c.post("/v1/check", json=check, headers={"Authorization": header}).status_code == 401, header
        # the key is checked before the body is read: no 413 for an unauthenticated client
        assert c.post("/v1/check", json={"response": "x" * 5000, "contexts": "c"}).status_code == 401
        good = {"Authorization": "Bearer s3cret-key"}
        assert c.post("/v1/check", json=check, headers=good).status_code == 200
        assert c.post("/v1/check", json=check, headers={"Authorization": "bearer  s3cret-key"}).status_code == 200
        r = c.post("/v1/monitor", json={"question": "q", "context": "c", "max_new_tokens": 5}, headers=good)
        assert r.status_code == 200 and parse_sse(r.text)[-1][0] == "summary"
        assert c.post("/v1/check", json={"response": "x" * 5000, "contexts": "c"}, headers=good).status_code == 413
        # open routes
        health = c.get("/healthz")
        assert health.status_code == 200 and health.json()["api_key_required"] is True
        assert c.get("/").status_code == 200 and c.get("/docs").status_code == 200
        schema = c.get("/openapi.json").json()
        assert schema["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
        # the web page: /login keeps the key in a same-origin, HttpOnly cookie that the page's fetch calls send
        assert "password" in c.get("/login").text
        r = c.post("/login", content=b"key=wrong", headers={"content-type": "application/x-www-form-urlencoded"})
        assert r.status_code == 401 and "faithwatch_api_key" not in c.cookies
        r = c.post("/login", content=b"key=s3cret-key", headers={"content-type": "application/x-www-form-urlencoded"},
                   follow_redirects=False)
        assert r.status_code == 303
        cookie = r.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        assert c.post("/v1/check", json=check).status_code == 200  # the cookie, no header
        c.cookies.clear()
        c.cookies.set("faithwatch_api_key", "wrong")
        assert c.post("/v1/check", json=check).status_code == 401


def test_no_api_key_by_default(lm):
    with TestClient(create_app(FakeMonitor(lm), check_alignment="lexical")) as c:
        assert c.post("/v1/check", json={"response": CLAIM, "contexts": CONTEXT}).status_code == 200
        assert c.get("/login").status_code == 404
        assert c.get("/healthz").json()["api_key_required"] is False
    for blank in ("  ", "\u200b\ufeff"):  # whitespace or invisible characters: a key nobody can type
        with pytest.raises(ValueError, match="empty"):
            create_app(FakeMonitor(lm), api_key=blank)


def test_host_allowlist_blocks_dns_rebinding(lm):
    app = create_app(FakeMonitor(lm), allowed_hosts=default_allowed_hosts("127.0.0.1"), check_alignment="lexical")
    with TestClient(app, base_url="http://127.0.0.1:8080") as c:
        for host in ("127.0.0.1:8080", "localhost", "LOCALHOST:9", "[::1]:8080", "localhost."):
            assert c.get("/healthz", headers={"host": host}).status_code == 200, host
        for host in ("evil.example", "evil.example:8080", "localhost.evil.example", "127.0.0.1.nip.io", ""):
            for method, path in (("GET", "/healthz"), ("GET", "/"), ("POST", "/v1/check")):
                r = c.request(method, path, headers={"host": host}, json={"response": CLAIM, "contexts": CONTEXT})
                assert r.status_code == 403, (host, path, r.status_code)
                assert r.json()["error"] == "host_not_allowed"
    app = create_app(FakeMonitor(lm), allowed_hosts=["api.example.org", "*.internal"], api_key="k")
    with TestClient(app) as c:
        assert c.get("/healthz", headers={"host": "api.example.org"}).status_code == 200
        assert c.get("/healthz", headers={"host": "a.b.internal:80"}).status_code == 200
        assert c.get("/healthz", headers={"host": "internal"}).status_code == 403
        assert c.get("/healthz", headers={"host": "localhost"}).status_code == 403
        assert c.post("/v1/check", json={}, headers={"host": "evil"}).status_code == 403  # host first, then key
    with TestClient(create_app(FakeMonitor(lm))) as c:  # create_app's default: any host
        assert c.get("/healthz", headers={"host": "anything.example"}).status_code == 200


def test_default_allowed_hosts():
    assert default_allowed_hosts("127.0.0.1") == ["localhost", "127.0.0.1", "[::1]"]
    assert default_allowed_hosts("localhost") == ["localhost", "127.0.0.1", "[::1]"]
    assert default_allowed_hosts("::1") == ["localhost", "127.0.0.1", "[::1]"]
    assert default_allowed_hosts("127.0.0.2") == ["localhost", "127.0.0.1", "[::1]", "127.0.0.2"]
    assert default_allowed_hosts("0.0.0.0") is None and default_allowed_hosts("192.168.1.5") is None
    assert default_allowed_hosts("myhost.lan") is None
    assert parse_allowed_hosts(" a.org, b.org ,") == ["a.org", "b.org"]
    assert parse_allowed_hosts("a.org,*") is None
    with pytest.raises(ValueError):
        parse_allowed_hosts(" , ")


def test_cli_serve_key_and_hosts(lm, monkeypatch):
    import uvicorn
    from typer.testing import CliRunner

    import faithwatch.monitor
    from faithwatch.cli.server import app as cli

    built: list = []
    monkeypatch.setattr(faithwatch.monitor, "Monitor", lambda *a, **k: FakeMonitor(lm))
    monkeypatch.setattr(uvicorn, "run", lambda application, **kw: built.append((application, kw)))
    runner = CliRunner()
    check = {"response": CLAIM, "contexts": CONTEXT}

    result = runner.invoke(cli, ["--check-alignment", "lexical", "--port", "0"], env={"FAITHWATCH_API_KEY": "env-key"})
    assert result.exit_code == 0, result.output
    with TestClient(built[-1][0], base_url="http://localhost:8080") as c:
        assert c.post("/v1/check", json=check).status_code == 401
        assert c.post("/v1/check", json=check, headers={"Authorization": "Bearer env-key"}).status_code == 200
        assert c.get("/healthz", headers={"host": "rebound.example"}).status_code == 403  # loopback default
    result = runner.invoke(cli, ["--api-key", "cli-key", "--host", "0.0.0.0", "--check-alignment", "lexical",
                                 "--port", "0"], env={"FAITHWATCH_API_KEY": ""})
    assert result.exit_code == 0, result.output
    with TestClient(built[-1][0]) as c:
        assert c.get("/healthz", headers={"host": "server.lan"}).status_code == 200  # non-loopback: any host
        assert c.post("/v1/check", json=check, headers={"Authorization": "Bearer cli-key"}).status_code == 200
    result = runner.invoke(cli, ["--allowed-hosts", "api.example.org", "--check-alignment", "lexical", "--port", "0"])
    assert result.exit_code == 0, result.output
    with TestClient(built[-1][0]) as c:
        assert c.get("/healthz", headers={"host": "api.example.org"}).status_code == 200
        assert c.get("/healthz", headers={"host": "localhost"}).status_code == 403
        assert c.post("/v1/check", json=check, headers={"host": "api.example.org"}).status_code == 200  # no key
    assert len(built) == 3
    result = runner.invoke(cli, ["--api-key", " "])
    assert result.exit_code == 2 and len(built) == 3


# --- item 8: context limits on /v1/check ------------------------------------------------------------------------


def test_check_context_limited_like_monitor(monitor):
    window = monitor.lm.max_length
    long_context = " ".join([CONTEXT] * 60)
    n = len(monitor.lm.tokenizer(long_context, add_special_tokens=False)["input_ids"])
    assert n > window and len(long_context) < window * 16
    with TestClient(create_app(monitor, check_alignment="lexical", max_body_bytes=5_000_000,
                               request_timeout_s=60)) as c:
        r = c.post("/v1/check", json={"response": CLAIM, "contexts": long_context})
        assert r.status_code == 413, r.status_code
        assert r.json()["error"] == "context_too_long"
        assert r.json()["context_tokens"] == n and r.json()["max_context_tokens"] == window
        # the passages together are one context
        third = " ".join([CONTEXT] * 20)
        r = c.post("/v1/check", json={"response": CLAIM, "contexts": [third, third, third]})
        assert r.status_code == 413 and r.json()["context_tokens"] > window
        ok = c.post("/v1/check", json={"response": CLAIM, "contexts": [CONTEXT, CONTEXT]})
        assert ok.status_code == 200 and ok.json()["context_chars_cut"] == 0
        # a huge context is refused without being tokenised or checked
        t0 = time.monotonic()
        r = c.post("/v1/check", json={"response": CLAIM, "contexts": "word " * 400_000})
        assert r.status_code == 413 and r.json()["context_chars"] == 2_000_000
        assert r.json()["max_context_chars"] == window * 16
        assert time.monotonic() - t0 < 20
    with TestClient(create_app(monitor, max_context_tokens=5, check_alignment="lexical")) as c:
        r = c.post("/v1/check", json={"response": CLAIM, "contexts": [CONTEXT]})
        assert r.status_code == 413 and r.json()["max_context_tokens"] == 5
        r = c.post("/v1/monitor", json={"question": QUESTION, "context": "word " * 1000})
        assert r.status_code == 413 and r.json()["max_context_chars"] == 80


def test_check_context_cut_with_truncate_context(lm):
    truncating = types.SimpleNamespace(lm=lm, truncate_context=True)  # a monitor with --truncate-context
    with TestClient(create_app(truncating, check_alignment="lexical", max_body_bytes=5_000_000)) as c:
        long_context = " ".join([CONTEXT] * 60)
        r = c.post("/v1/check", json={"response": CLAIM, "contexts": long_context})
        assert r.status_code == 200, r.text
        body = r.json()
        assert 0 < body["context_chars_cut"] < len(long_context)
        assert body["claims"][0]["label"] == "Entailment"
        evidence = body["claims"][0]["evidence"][0]
        assert evidence["end"] <= len(long_context) - body["context_chars_cut"] + 8
        t0 = time.monotonic()
        r = c.post("/v1/check", json={"response": CLAIM, "contexts": [CONTEXT, "word " * 400_000, CONTEXT]})
        assert r.status_code == 200, r.text
        assert r.json()["context_chars_cut"] > 1_900_000
        assert time.monotonic() - t0 < 20
    with TestClient(create_app(truncating, max_context_tokens=5, check_alignment="lexical")) as c:
        # the server's own limit is never cut, as for /v1/monitor
        assert c.post("/v1/check", json={"response": CLAIM, "contexts": CONTEXT}).status_code == 413


def test_text_that_is_no_unicode_is_422_before_any_stream(lm):
    """A lone surrogate (JSON's unpaired "\\ud800") in /v1/monitor's question was a 200 stream that ended in an error
    event; every route now refuses it as a 422 that names the field."""
    json_body = {"content-type": "application/json"}
    with TestClient(create_app(FakeMonitor(lm), check_alignment="lexical"), raise_server_exceptions=False) as c:
        for route, raw in (("/v1/monitor", b'{"question": "q\\ud800", "context": "c"}'),
                           ("/v1/monitor", b'{"question": "q", "context": "c", "instruction": "\\udc80 say"}'),
                           ("/v1/generate", b'{"question": "q", "context": "c\\ud800"}'),
                           ("/v1/check", b'{"response": "r\\ud800", "contexts": "c"}')):
            r = c.post(route, content=raw, headers=json_body)
            assert r.status_code == 422, (route, r.status_code, r.text[:200])
            assert "lone surrogate" in r.text
