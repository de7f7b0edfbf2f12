"""The OpenAI-compatible provider against a local fake vLLM-style server (stdlib http.server)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from contam_cli.detectors.providers import load_provider
from contam_cli.detectors.providers.base import ProviderError
from contam_cli.detectors.providers.openai import OpenAIProvider
from contam_cli.detectors.providers.openai_answers import ServedModelChanged
from contam_cli.detectors.scores import TokenScore
from contam_cli.errors import ContamError, UsageError

SECRET = "sk-test-DO-NOT-LEAK-0123456789"
KEY_ENV = "CONTAM_TEST_OPENAI_KEY"


class FakeServer:
    """A vLLM-like server: whitespace tokens, echo + top logprobs, scripted failures."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.script: list[tuple[int, Any, dict[str, str]]] = []
        """Answers for the next POSTs (status, JSON value or raw bytes, headers), in order."""
        self.models = ["fake-model"]
        self.post_delay = 0.0
        self.min_max_tokens = 0
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        self.url = ""
        self.served: dict[str, str] = {}
        """Added to every POST's answer (``model``, ``system_fingerprint``)."""

    def answer(self, method: str, path: str, body: Any) -> tuple[int, Any, dict[str, str]]:
        status, payload, headers = self._answer(method, path, body)
        if method == "POST" and isinstance(payload, dict):
            payload = {**payload, **self.served}
        return status, payload, headers

    def _answer(self, method: str, path: str, body: Any) -> tuple[int, Any, dict[str, str]]:
        if method == "GET" and path == "/v1/models":
            return 200, {"object": "list", "data": [{"id": m} for m in self.models]}, {}
        with self.lock:
            scripted = self.script.pop(0) if self.script else None
        if scripted is not None:
            return scripted
        if path == "/v1/chat/completions":
            content = body["messages"][-1]["content"]
            return 200, {"choices": [{"message": {"content": f"chat:{content[-12:]}"}}]}, {}
        if not body.get("echo"):
            return 200, {"choices": [{"text": f" after {body['prompt'].split()[-1]}"}]}, {}
        if body["max_tokens"] < self.min_max_tokens:
            return 400, {"error": {"message": "max_tokens must be at least 1"}}, {}
        return 200, echo_answer(body["prompt"], body["max_tokens"]), {}


def token_logprob(i: int) -> float:
    return -0.5 * (1 + i % 3)


def echo_answer(prompt: str, generated: int) -> dict[str, Any]:
    words = prompt.split()
    tokens = [w if i == 0 else f" {w}" for i, w in enumerate(words)] + ["!"] * generated
    offsets, at = [], 0
    for token in tokens:
        offsets.append(at)
        at += len(token)
    values: list[float | None] = [None] + [token_logprob(i) for i in range(1, len(tokens))]
    tops: list[dict[str, float] | None] = [None] + [
        {tokens[i]: token_logprob(i), " the": -0.7, ",": -2.0} for i in range(1, len(tokens))
    ]
    logprobs = {"tokens": tokens, "token_logprobs": values, "top_logprobs": tops}
    logprobs["text_offset"] = offsets
    usage = {"prompt_tokens": len(words), "completion_tokens": generated}
    return {"choices": [{"text": prompt, "logprobs": logprobs}], "usage": usage}


def _handler(server: FakeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = orjson.loads(self.rfile.read(length)) if length else None
            record = {"method": method, "path": self.path, "body": body}
            record["auth"] = self.headers.get("Authorization")
            with server.lock:
                server.requests.append(record)
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            done = False
            try:
                if method == "POST" and server.post_delay:
                    time.sleep(server.post_delay)
                status, payload, headers = server.answer(method, self.path, body)
                raw = payload if isinstance(payload, bytes) else orjson.dumps(payload)
                # NOTE: no longer in flight before the answer goes out: once the client has it,
                # it may send its next request before this thread would get to a `finally`.
                with server.lock:
                    server.in_flight -= 1
                done = True
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (the timeout test)
            finally:
                if not done:
                    with server.lock:
                        server.in_flight -= 1

        def do_GET(self) -> None:
            self._serve("GET")

        def do_POST(self) -> None:
            self._serve("POST")

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONTAM_CACHE_DIR", str(tmp_path / "default-cache"))


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(KEY_ENV, SECRET)
    fake = FakeServer()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    httpd.daemon_threads = True
    fake.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    # NOTE: a short poll interval keeps shutdown() (and so each test) fast
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield fake
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make(server: FakeServer, sleeps: list[float], tmp_path: Path) -> Any:
    def build(**options: Any) -> OpenAIProvider:
        settings: dict[str, Any] = {
            "model": "fake-model",
            "api_key_env": KEY_ENV,
            "cache_dir": tmp_path / "cache",
            "sleep": sleeps.append,
            "rand": lambda: 0.5,
            "timeout_s": 5.0,
        }
        settings.update(options)
        return OpenAIProvider(f"openai:{server.url}", **settings)

    return build


def posts(server: FakeServer) -> list[dict[str, Any]]:
    return [r for r in server.requests if r["method"] == "POST"]


def test_parses_echoed_logprobs(server: FakeServer, make: Any) -> None:
    [scores] = make().token_scores(["alpha beta gamma delta"])
    assert scores.tokens == (" beta", " gamma", " delta") and not scores.full_distribution
    for i in range(3):
        lp = token_logprob(i + 1)
        want = TokenScore.from_truncated([lp, -0.7, -2.0], lp)
        got = (scores.logprob[i], scores.mu[i], scores.sigma[i])
        assert got == pytest.approx((want.logprob, want.expected_logprob, want.logprob_std))
    [request] = posts(server)
    assert request["path"] == "/v1/completions" and request["auth"] == f"Bearer {SECRET}"
    body = request["body"]
    assert (body["echo"], body["logprobs"], body["max_tokens"], body["model"]) == (
        True,
        5,
        0,
        "fake-model",
    )


def test_observed_token_outside_the_top_set_is_added(server: FakeServer, make: Any) -> None:
    answer = echo_answer("a b", 0)
    answer["choices"][0]["logprobs"]["top_logprobs"][1] = {" x": -0.1, " y": -0.3}
    server.script.append((200, answer, {}))
    [scores] = make().token_scores(["a b"])
    want = TokenScore.from_truncated([-0.1, -0.3, token_logprob(1)], token_logprob(1))
    assert scores.mu[0] == pytest.approx(want.expected_logprob)


def test_chat_style_logprobs_are_read_too(server: FakeServer, make: Any) -> None:
    content = [
        {"token": "a", "logprob": None, "top_logprobs": []},
        {"token": " b", "logprob": -1.0, "top_logprobs": [{"token": " b", "logprob": -1.0}]},
    ]
    server.script.append((200, {"choices": [{"logprobs": {"content": content}}]}, {}))
    [scores] = make().token_scores(["a b"])
    assert scores.tokens == (" b",) and scores.sigma[0] == 0.0


def test_max_tokens_zero_refused_then_one_and_the_generated_token_dropped(
    server: FakeServer, make: Any
) -> None:
    server.min_max_tokens = 1
    provider = make(concurrency=1)
    first, second = provider.token_scores(["one two three", "four five"])
    assert first.tokens == (" two", " three") and second.tokens == (" five",)
    assert [r["body"]["max_tokens"] for r in posts(server)] == [0, 1, 1]  # learned once


def test_check_resolves_and_verifies_the_model(server: FakeServer, make: Any) -> None:
    provider = make(model=None)
    provider.check()
    assert provider.describe()["model"] == "fake-model"
    with pytest.raises(ProviderError, match="does not serve model 'other'"):
        make(model="other").check()


def test_retry_429_then_success(server: FakeServer, make: Any, sleeps: list[float]) -> None:
    server.script.append((429, {"error": {"message": "slow down"}}, {}))
    [scores] = make().token_scores(["a b c"])
    assert len(scores) == 2 and len(posts(server)) == 2
    assert sleeps == [pytest.approx(0.5 * 0.75)]  # backoff 0.5 s · (0.5 + 0.5 · rand)


def test_retry_after_header_is_honoured(server: FakeServer, make: Any, sleeps: list[float]) -> None:
    server.script.append((503, b"", {"Retry-After": "7"}))
    make().token_scores(["a b"])
    assert sleeps == [7.0]


def test_500s_exhaust_retries(server: FakeServer, make: Any, sleeps: list[float]) -> None:
    boom = {"error": {"message": f"internal error\nwhile using key {SECRET}"}}
    server.script.extend([(500, boom, {})] * 3)
    with pytest.raises(ProviderError) as info:
        make(max_retries=2).token_scores(["a b c"])
    message = str(info.value)
    assert f"{server.url}/completions" in message and "HTTP 500" in message
    assert "gave up after 3 attempts" in message and "internal error" in message
    assert SECRET not in message and "\n" not in message
    assert sleeps == [pytest.approx(0.375), pytest.approx(0.75)]


def test_client_errors_are_not_retried(server: FakeServer, make: Any) -> None:
    server.script.append((401, {"error": {"message": f"bad key {SECRET}"}}, {}))
    with pytest.raises(ProviderError, match="HTTP 401: bad key \\*\\*\\*"):
        make().token_scores(["a b"])
    assert len(posts(server)) == 1


def test_a_key_echoed_in_a_non_json_answer_is_masked_before_the_excerpt_is_cut(
    server: FakeServer, make: Any
) -> None:
    # NOTE: the excerpt is 60 characters; the key starts at 45, so a cut before the mask
    # showed its first 15 characters.
    server.script.append((200, f"<html>{'x' * 33}key: {SECRET}</html>".encode(), {}))
    with pytest.raises(ProviderError, match="not JSON") as info:
        make().token_scores(["a b"])
    assert "***" in str(info.value) and SECRET[:6] not in str(info.value)


def test_slow_answer_times_out(server: FakeServer, make: Any) -> None:
    server.post_delay = 1.0
    started = time.perf_counter()
    with pytest.raises(ProviderError, match="timed out") as info:
        make(timeout_s=0.2, max_retries=0).token_scores(["a b"])
    assert time.perf_counter() - started < 0.9
    assert server.url in str(info.value)


@pytest.mark.parametrize(
    "payload, match",
    [
        pytest.param(b"<html>oops</html>", "malformed answer \\(not JSON\\)", id="not JSON"),
        pytest.param({"object": "error"}, "no choices", id="no choices"),
        pytest.param({"choices": [{"text": "", "logprobs": None}]}, "no logprobs", id="none"),
        pytest.param(
            {"choices": [{"logprobs": {"tokens": ["a"]}}]}, "malformed logprobs", id="bad"
        ),
    ],
)
def test_malformed_answers(server: FakeServer, make: Any, payload: Any, match: str) -> None:
    server.script.append((200, payload, {}))
    with pytest.raises(ProviderError, match=match) as info:
        make().token_scores(["a b"])
    assert str(info.value).startswith(f"openai: {server.url}/completions: ")


def test_fewer_logprobs_than_prompt_tokens_is_an_error(server: FakeServer, make: Any) -> None:
    # NOTE: it was scored on the 2 positions given, as if the text were 2 tokens long
    answer = echo_answer("a b c d e", 0)
    answer["choices"][0]["logprobs"] = {
        k: v[:2] for k, v in answer["choices"][0]["logprobs"].items()
    }
    server.script.append((200, answer, {}))
    with pytest.raises(ProviderError, match="log-probs for 2 of 5 prompt tokens"):
        make().token_scores(["a b c d e"])


def test_unreachable_server(sleeps: list[float], tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    provider = OpenAIProvider(f"openai:{url}", model="m", max_retries=1, sleep=sleeps.append)
    with pytest.raises(ContamError, match="cannot connect") as info:
        provider.check()
    assert str(info.value).startswith(f"openai: {url}/models: ") and len(sleeps) == 1


def test_cache_answers_without_a_request(server: FakeServer, make: Any, tmp_path: Path) -> None:
    texts = ["alpha beta gamma", "delta epsilon"]
    first = make().token_scores(texts)
    count = len(server.requests)
    again = make().token_scores(texts)  # a new provider: no check, no request
    assert len(server.requests) == count
    assert [s.tokens for s in again] == [s.tokens for s in first]
    assert all((a.mu == b.mu).all() for a, b in zip(first, again))
    files = sorted((tmp_path / "cache").rglob("*.json"))
    assert len(files) == 2
    assert all(SECRET.encode() not in f.read_bytes() for f in files)
    files[0].write_bytes(b"{damaged")
    make().token_scores(texts)
    assert len(posts(server)) == 3  # the damaged entry only
    make(top_logprobs=3).token_scores(texts[:1])
    assert len(posts(server)) == 4  # another request body: another key


def test_answers_of_another_deployment_are_not_mixed(
    server: FakeServer, make: Any, tmp_path: Path
) -> None:
    # NOTE: the cache and a resumed run knew the model by name only: the same name redeployed
    # with other weights gave scores of two models in one report.
    server.served = {"model": "fake-model-0613", "system_fingerprint": "fp_a"}
    first = make()
    first.token_scores(["alpha beta gamma"])
    assert first.served() == {"model": "fake-model-0613", "system_fingerprint": "fp_a"}
    server.served["system_fingerprint"] = "fp_b"
    with pytest.raises(ServedModelChanged) as info:
        first.token_scores(["delta epsilon zeta"])
    said = str(info.value)
    assert "now answers as model 'fake-model-0613' (system_fingerprint 'fp_b')" in said
    assert (
        "its first answer this run came from model 'fake-model-0613' (system_fingerprint " in said
    )
    assert "'fp_a'" in said and "\n" not in said and info.value.cache == tmp_path / "cache"
    # a cached answer of the old deployment is asked again, not mixed in
    fresh = make()
    count = len(posts(server))
    fresh.pin_served({"model": "fake-model-0613", "system_fingerprint": "fp_b"})
    fresh.token_scores(["alpha beta gamma"])
    assert len(posts(server)) == count + 1
    # a run whose first answers come from the cache is held to them
    stale = make()
    server.served["system_fingerprint"] = "fp_c"
    stale.token_scores(["alpha beta gamma"])  # cached (fp_b), no request
    assert len(posts(server)) == count + 1
    with pytest.raises(ServedModelChanged, match="answers from the cache came from .*'fp_b'"):
        stale.token_scores(["eta theta iota"])
    # a resumed run's partial results pin it
    resumed = make(cache=False)
    resumed.pin_served({"model": "fake-model-0613", "system_fingerprint": "fp_a"})
    with pytest.raises(ServedModelChanged, match="partial results were scored by .*'fp_a'"):
        resumed.token_scores(["alpha beta gamma"])


def test_an_endpoint_naming_neither_model_nor_fingerprint_is_taken_at_its_name(
    server: FakeServer, make: Any
) -> None:
    provider = make(cache=False)
    provider.token_scores(["alpha beta gamma", "delta epsilon"])
    assert provider.served() == {}
    provider.pin_served({})
    provider.token_scores(["alpha beta gamma"])


def test_concurrency_limit(server: FakeServer, make: Any) -> None:
    server.post_delay = 0.1
    texts = [f"t{i} a b" for i in range(6)]
    results = make(concurrency=2, cache=False).token_scores(texts)
    assert server.max_in_flight == 2
    assert [r.tokens for r in results] == [(" a", " b")] * 6
    prompts = sorted(r["body"]["prompt"] for r in posts(server))
    assert prompts == sorted(texts)


def test_guided_prompting_modes(server: FakeServer, make: Any) -> None:
    completions = make().complete(["the first part"], max_tokens=8)
    assert completions == [" after part"]
    body = posts(server)[-1]["body"]
    assert (body["prompt"], body["max_tokens"], body["temperature"]) == ("the first part", 8, 0)
    [chat] = make(mode="chat", chat_template="Continue: {prefix}").complete(
        ["lorem ipsum"], max_tokens=4
    )
    assert chat == "chat:" + "Continue: lorem ipsum"[-12:]
    request = posts(server)[-1]
    assert request["path"] == "/v1/chat/completions"
    assert request["body"]["messages"] == [{"role": "user", "content": "Continue: lorem ipsum"}]


def test_secrets_stay_out_of_describe_repr_and_spec(server: FakeServer, make: Any) -> None:
    provider = make()
    assert SECRET not in repr(provider.describe()) and SECRET not in repr(provider)
    # NOTE: credentials in the URL were never sent (urllib took "user:hunter2@127.0.0.1" for a
    # host name: "cannot connect (Name or service not known)" after every retry): refused.
    for netloc in ("user:hunter2@", "user@", ":hunter2@"):
        with pytest.raises(UsageError, match="--api-key-env") as info:
            OpenAIProvider(f"openai:http://{netloc}127.0.0.1:9/v1", model="m")
        assert "hunter2" not in str(info.value)


@pytest.mark.parametrize(
    "spec",
    ["openai:", "openai:ftp://host/v1", "openai:127.0.0.1:8000", "openai:http://h:abc/v1"]
    + ["openai:http://h:99999/v1"],  # NOTE: a bad port raised ValueError, an internal error
)
def test_bad_specs(spec: str) -> None:
    with pytest.raises(UsageError, match="http"):
        load_provider(spec)


def test_load_provider_builds_openai(server: FakeServer) -> None:
    provider = load_provider(f"openai:{server.url}", model="fake-model", concurrency=1)
    assert isinstance(provider, OpenAIProvider) and server.requests == []  # nothing sent yet
