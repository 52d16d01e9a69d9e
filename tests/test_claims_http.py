"""The OpenAI-compatible backend against a stub server on 127.0.0.1 (ephemeral port, bounded waits)."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
import typer
from typer.testing import CliRunner

from faithwatch.claims import (
    LLMBackendError,
    LLMUnavailableError,
    OpenAICompatibleBackend,
    TripletExtractor,
    get_backend,
)
from faithwatch.claims import llm as llm_module
from faithwatch.cli import app as cli_app
from faithwatch.errors import FaithwatchError, InputError, ModelNotAvailableError

MESSAGES = [{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": "Hi"}]


class StubState:
    """What the stub answers (a queue of replies, each ``(status, body or content)`` or
    ``(status, body, headers)``) and what it saw. ``delays`` holds per-request waits (then ``delay``)."""

    def __init__(self) -> None:
        self.replies: list[tuple] = []
        self.default: tuple = (200, "[]")
        self.delay = 0.0
        self.delays: list[float] = []
        self.requests: list[dict] = []
        self.lock = threading.Lock()


def _handler(state: StubState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
            length = int(self.headers.get("Content-Length", 0))
            body = self.rfile.read(length)
            with state.lock:
                state.requests.append({"path": self.path, "headers": dict(self.headers), "body": json.loads(body)})
                status, payload, *extra = state.replies.pop(0) if state.replies else state.default
                delay = state.delays.pop(0) if state.delays else state.delay
            if delay:
                time.sleep(delay)
            if status == 200 and not payload.startswith("RAW:"):
                data = {"id": "x", "object": "chat.completion", "model": "stub",
                        "choices": [{"index": 0, "finish_reason": "stop",
                                     "message": {"role": "assistant", "content": payload}}]}
                raw = json.dumps(data).encode()
            else:
                raw = payload.removeprefix("RAW:").encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                for name, value in (extra[0] if extra else {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (time-out test)
                pass

        def log_message(self, *args) -> None:  # keep the test output clean
            pass

    return Handler


class Sleeps(list):
    """A stand-in for ``time.sleep`` that records the waits instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def _free_port() -> int:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def stub() -> Iterator[tuple[str, StubState]]:
    state = StubState()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_request_body_path_and_api_key(stub, monkeypatch) -> None:
    url, state = stub
    state.replies = [(200, "hello")]
    monkeypatch.setenv("FW_TEST_KEY", "sekret-123")
    backend = OpenAICompatibleBackend(url + "/", "my-model", api_key_env="FW_TEST_KEY", timeout=5)
    assert backend.complete(MESSAGES, max_tokens=33, temperature=0.0) == "hello"
    req = state.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["body"] == {"model": "my-model", "messages": MESSAGES, "max_tokens": 33, "temperature": 0.0,
                           "stream": False}
    assert req["headers"]["Authorization"] == "Bearer sekret-123"
    assert req["headers"]["Content-Type"] == "application/json"
    assert "sekret" not in backend.name


def test_no_authorization_header_without_a_key(stub, monkeypatch) -> None:
    url, state = stub
    monkeypatch.delenv("FW_TEST_KEY", raising=False)
    OpenAICompatibleBackend(url, "m", api_key_env="FW_TEST_KEY", timeout=5).complete(MESSAGES, max_tokens=5,
                                                                                       temperature=0.0)
    assert "Authorization" not in state.requests[0]["headers"]


def test_http_errors_are_clear(stub, monkeypatch) -> None:
    url, state = stub
    monkeypatch.delenv("FW_TEST_KEY", raising=False)
    sleeps = Sleeps()
    backend = OpenAICompatibleBackend(url, "m", api_key_env="FW_TEST_KEY", timeout=5, sleep=sleeps)
    state.replies = [(500, '{"error": "model crashed"}')] * 4  # 5xx is retried: max_retries=3, 4 attempts
    with pytest.raises(LLMBackendError, match=r"HTTP 500.*model crashed.*gave up after 4 attempts"):
        backend.complete(MESSAGES, max_tokens=5, temperature=0.0)
    assert len(state.requests) == 4 and len(sleeps) == 3
    state.replies = [(401, '{"error": "bad key"}')]
    with pytest.raises(LLMBackendError, match=r"HTTP 401.*\$FW_TEST_KEY, which is not set"):
        backend.complete(MESSAGES, max_tokens=5, temperature=0.0)
    state.replies = [(404, "no such route")]
    with pytest.raises(LLMBackendError, match="ends in /v1"):
        backend.complete(MESSAGES, max_tokens=5, temperature=0.0)
    state.replies = [(200, "RAW:<html>not json</html>")]
    with pytest.raises(LLMBackendError, match="not a chat completion"):
        backend.complete(MESSAGES, max_tokens=5, temperature=0.0)
    assert not isinstance(LLMBackendError("x"), ModelNotAvailableError)


def test_timeout(stub) -> None:
    url, state = stub
    state.delay = 1.0
    backend = OpenAICompatibleBackend(url, "m", timeout=0.2, max_retries=0)
    start = time.perf_counter()
    with pytest.raises(LLMBackendError, match="did not answer within 0.2 s"):
        backend.complete(MESSAGES, max_tokens=5, temperature=0.0)
    assert time.perf_counter() - start < 0.9


def test_unreachable_endpoint() -> None:
    backend = OpenAICompatibleBackend(f"http://127.0.0.1:{_free_port()}/v1", "m", timeout=2, max_retries=0)
    with pytest.raises(LLMUnavailableError, match="cannot reach") as info:
        backend.complete(MESSAGES, max_tokens=5, temperature=0.0)
    assert isinstance(info.value, ModelNotAvailableError)


def test_configuration_errors() -> None:
    with pytest.raises(InputError, match="http"):
        OpenAICompatibleBackend("localhost:8000/v1", "m")
    with pytest.raises(InputError, match="max_retries"):
        OpenAICompatibleBackend("http://localhost:8000/v1", "m", max_retries=-1)
    with pytest.raises(InputError, match="backoff"):
        OpenAICompatibleBackend("http://localhost:8000/v1", "m", backoff=-0.1)
    with pytest.raises(InputError, match="model name"):
        OpenAICompatibleBackend("http://localhost:8000/v1", "")
    with pytest.raises(InputError, match="--llm-model"):
        get_backend("http://localhost:8000/v1", None)


# ---- retries -----------------------------------------------------------------------------------------------


def test_503_then_200_succeeds_after_one_retry(stub) -> None:
    url, state = stub
    state.replies = [(503, '{"error": "loading model"}'), (200, "hello")]
    sleeps = Sleeps()
    backend = OpenAICompatibleBackend(url, "m", timeout=5, backoff=0.01, sleep=sleeps)
    assert backend.complete(MESSAGES, max_tokens=5, temperature=0.0) == "hello"
    assert len(state.requests) == 2 and len(sleeps) == 1
    assert state.requests[0]["body"] == state.requests[1]["body"]
    assert 0.005 <= sleeps[0] <= 0.01  # the first backoff: base/2 to base


def test_429_with_retry_after_zero_is_retried(stub) -> None:
    url, state = stub
    state.replies = [(429, '{"error": "rate limited"}', {"Retry-After": "0"}), (200, "hello")]
    sleeps = Sleeps()
    backend = OpenAICompatibleBackend(url, "m", timeout=5, backoff=10.0, sleep=sleeps)
    assert backend.complete(MESSAGES, max_tokens=5, temperature=0.0) == "hello"
    assert len(state.requests) == 2
    assert sleeps == [0.0]  # Retry-After wins over the (10 s) backoff


def test_retry_after_is_capped(stub) -> None:
    url, state = stub
    state.replies = [(503, "busy", {"Retry-After": "3600"}), (200, "hello")]
    sleeps = Sleeps()
    backend = OpenAICompatibleBackend(url, "m", timeout=5, sleep=sleeps)
    assert backend.complete(MESSAGES, max_tokens=5, temperature=0.0) == "hello"
    assert sleeps == [OpenAICompatibleBackend.MAX_RETRY_AFTER]


def test_400_is_not_retried(stub) -> None:
    url, state = stub
    state.replies = [(400, '{"error": "max_tokens is too large"}')]  # a retry would get the 200 default
    sleeps = Sleeps()
    backend = OpenAICompatibleBackend(url, "m", timeout=5, backoff=0.01, sleep=sleeps)
    with pytest.raises(LLMBackendError, match=r"HTTP 400.*max_tokens is too large") as info:
        backend.complete(MESSAGES, max_tokens=5, temperature=0.0)
    assert len(state.requests) == 1 and sleeps == []
    assert not isinstance(info.value, LLMUnavailableError) and "attempts" not in str(info.value)


def test_backoff_grows_exponentially_with_jitter(stub) -> None:
    url, state = stub
    state.default = (502, "bad gateway")
    sleeps = Sleeps()
    backend = OpenAICompatibleBackend(url, "m", timeout=5, max_retries=4, backoff=1.0, sleep=sleeps)
    with pytest.raises(LLMBackendError, match=r"HTTP 502.*gave up after 5 attempts"):
        backend.complete(MESSAGES, max_tokens=5, temperature=0.0)
    assert len(state.requests) == 5 and len(sleeps) == 4
    for wait, base in zip(sleeps, [1.0, 2.0, 4.0, 8.0], strict=True):
        assert base / 2 <= wait <= base


def test_a_timeout_is_retried(stub) -> None:
    url, state = stub
    state.replies = [(200, "too late"), (200, "in time")]
    state.delays = [1.0, 0.0]
    sleeps = Sleeps()
    backend = OpenAICompatibleBackend(url, "m", timeout=0.3, sleep=sleeps)
    assert backend.complete(MESSAGES, max_tokens=5, temperature=0.0) == "in time"
    assert len(state.requests) == 2 and len(sleeps) == 1


def test_down_server_gives_up_after_max_retries_plus_one_attempts(monkeypatch) -> None:
    attempts = []
    handle_request = httpx.HTTPTransport.handle_request

    def counting(self, request):
        attempts.append(request.url)
        return handle_request(self, request)

    monkeypatch.setattr(httpx.HTTPTransport, "handle_request", counting)
    sleeps = Sleeps()
    backend = OpenAICompatibleBackend(f"http://127.0.0.1:{_free_port()}/v1", "m", timeout=2, max_retries=3,
                                      sleep=sleeps)
    with pytest.raises(LLMUnavailableError, match=r"cannot reach.*gave up after 4 attempts") as info:
        backend.complete(MESSAGES, max_tokens=5, temperature=0.0)
    assert isinstance(info.value, ModelNotAvailableError)
    assert len(attempts) == 4 and len(sleeps) == 3


def test_one_client_per_backend_closed_by_the_context_manager(stub) -> None:
    url, state = stub
    with OpenAICompatibleBackend(url, "m", timeout=5) as backend:
        backend.complete(MESSAGES, max_tokens=5, temperature=0.0)
        client = backend._client
        backend.complete(MESSAGES, max_tokens=5, temperature=0.0)
        assert client is not None and backend._client is client
    assert backend._client is None and client.is_closed
    backend.close()  # closing twice is harmless
    assert backend.complete(MESSAGES, max_tokens=5, temperature=0.0) == "[]"  # a closed backend reopens
    backend.close()
    assert len(state.requests) == 3


def test_triplet_extraction_over_http_with_a_retry(stub) -> None:
    url, state = stub
    state.replies = [(200, "I think the answer is Paris."),
                     (200, '```json\n[["Eiffel Tower", "located in", "Paris"]]\n```')]
    claims = TripletExtractor(OpenAICompatibleBackend(url, "m", timeout=5)).extract("The tower is in Paris.")
    assert [c.triplet for c in claims] == [("Eiffel Tower", "located in", "Paris")]
    assert claims[0].response_span == (4, 21)  # "tower is in Paris"
    second = state.requests[1]["body"]["messages"]
    assert second[-2]["content"] == "I think the answer is Paris." and "no JSON list" in second[-1]["content"]


# ---- the CLI with an HTTP extractor and judge ------------------------------------------------------------


@pytest.fixture
def cli() -> typer.Typer:
    """The real faithwatch app (its `check` command)."""
    return cli_app


def test_cli_single_response_triplets_and_llm_judge(stub, cli, tmp_path) -> None:
    url, state = stub
    (tmp_path / "ctx.txt").write_text("The Eiffel Tower stands in Paris. It opened in 1889.")
    (tmp_path / "other.txt").write_text("Guides wrongly say the tower opened in 1890.")
    (tmp_path / "answer.txt").write_text("The Eiffel Tower is in Paris. It opened in 1889.")
    state.replies = [
        (200, '[["Eiffel Tower", "located in", "Paris"], ["Eiffel Tower", "opened in", "1889"]]'),
        (200, '{"label": "Entailment", "quote": "The Eiffel Tower stands in Paris", "confidence": 0.9}'),
        (200, '{"label": "Neutral", "quote": null, "confidence": 0.8}'),
        (200, '{"label": "entailment", "quote": "It opened in 1889.", "confidence": 0.95}'),
        (200, 'oops'),  # invalid: the judge retries
        (200, '{"label": "Contradiction", "quote": "opened in 1890", "confidence": 0.7}'),
    ]
    result = CliRunner().invoke(cli, [
        "check", "--context", str(tmp_path / "ctx.txt"), "--context", str(tmp_path / "other.txt"),
        "--response", str(tmp_path / "answer.txt"), "--extractor", "triplet", "--checker", "llm",
        "--llm-url", url, "--llm-model", "stub-model", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert [c["label"] for c in data["claims"]] == ["Entailment", "Conflict"]
    assert data["aggregate"] == "Conflict"  # strict: Entailment < Conflict
    conflict = data["claims"][1]
    assert [(e["passage"], e["label"], e["text"]) for e in conflict["evidence"]] == [
        (0, "Entailment", "It opened in 1889."), (1, "Contradiction", "opened in 1890")]
    assert conflict["confidence"] == pytest.approx(0.7)
    assert data["hallucination_rate"] == 0.0 and data["checker"].startswith("llm:openai:stub-model@")
    assert len(state.requests) == 6
    assert all(r["body"]["model"] == "stub-model" for r in state.requests)


def test_cli_extraction_failure_is_reported_not_scored(stub, cli, tmp_path) -> None:
    url, state = stub
    state.default = (200, "no json here")
    (tmp_path / "c.txt").write_text("Some reference.")
    (tmp_path / "r.txt").write_text("Some response.")
    result = CliRunner().invoke(cli, [
        "check", "-c", str(tmp_path / "c.txt"), "-r", str(tmp_path / "r.txt"), "--checker", "alignment",
        "--alignment", "lexical", "--llm-url", url, "--llm-model", "m", "--max-retries", "1", "--json"])
    assert result.exit_code == 1
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["extraction_error"] and data["aggregate"] is None and data["hallucination_rate"] is None
    assert "after 2 attempt" in result.output and len(state.requests) == 2


def test_cli_unreachable_endpoint_exit_code(cli, tmp_path, monkeypatch) -> None:
    sleeps = Sleeps()
    monkeypatch.setattr(llm_module, "_sleep", sleeps)  # the CLI's backend retries: do not really wait
    port = _free_port()
    (tmp_path / "in.jsonl").write_text(json.dumps({"context": "A.", "response": "B is C."}) + "\n")
    result = CliRunner().invoke(cli, [
        "check", "-i", str(tmp_path / "in.jsonl"), "-o", str(tmp_path / "out.jsonl"), "--checker", "alignment",
        "--alignment", "lexical", "--llm-url", f"http://127.0.0.1:{port}/v1", "--llm-model", "m"])
    assert result.exit_code == 3 and "cannot reach" in result.output
    assert len(sleeps) == 3  # the default max_retries before giving up


def test_errors_are_faithwatch_errors() -> None:
    assert issubclass(LLMBackendError, FaithwatchError) and issubclass(LLMUnavailableError, LLMBackendError)


@pytest.mark.parametrize(("url", "said"), [("ftp://h/v1", "must start with http"), ("http://", "names no host"),
                                           ("http:///v1", "names no host"), ("http://h:99999/v1", "port 99999")])
def test_a_base_url_without_a_host_or_with_a_bad_port_is_refused_at_once(url, said) -> None:
    # "http://" and a port past 65535 were taken; every request then failed, one network error after another
    from faithwatch.proxy.upstream import Upstream

    with pytest.raises(InputError, match=said):
        OpenAICompatibleBackend(url, "m")
    with pytest.raises(InputError, match=said):
        Upstream(url)
