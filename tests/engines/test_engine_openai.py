"""The `openai` engine against a real, scriptable OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import socket
import struct
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest

from ragbench.api import ConfigError, EngineError
from ragbench.api.engines import Engine, Request, RequestError, Response, Sampling
from ragbench.testing import PreflightError, installed_registry, load_engine, preflight, send_requests

KEY_ENV = "RAGBENCH_TEST_OPENAI_KEY"
SECRET = "sk-test-Zq9SECRETvalue0123456789"
FAST = dict(backoff_base=0.001, backoff_max=0.01, timeout=2)

CHAT_LOGPROBS = {
    "content": [
        {
            "token": "Par",
            "logprob": -0.25,
            "bytes": [80, 97, 114],
            "top_logprobs": [
                {"token": "Par", "logprob": -0.25, "bytes": [80, 97, 114]},
                {"token": "Lon", "logprob": -1.75, "bytes": [76, 111, 110]},
            ],
        },
        {
            "token": "is",
            "logprob": -0.5,
            "bytes": [105, 115],
            "top_logprobs": [
                {"token": "is", "logprob": -0.5, "bytes": [105, 115]},
                {"token": "ma", "logprob": -2.0, "bytes": [109, 97]},
            ],
        },
    ],
    "refusal": None,
}
COMPLETION_LOGPROBS = {
    "tokens": [" Paris", "."],
    "token_logprobs": [-0.125, -0.5],
    "top_logprobs": [{" Paris": -0.125, " London": -2.5}, {".": -0.5, "!": -1.5}],
    "text_offset": [0, 6],
}


Reply = Callable[[dict[str, Any]], str]  # a request body -> the completion's text
REGISTRY = installed_registry()  # the engines' classes, found once for the file


def chat_payload(body: dict[str, Any], reply: Reply | None = None) -> dict[str, Any]:
    last = body["messages"][-1]["content"]
    n = body.get("n", 1)
    choices = [
        {
            "index": i,
            "message": {"role": "assistant", "content": reply(body) if reply else f"echo{i}: {last}"},
            "logprobs": CHAT_LOGPROBS if body.get("logprobs") else None,
            "finish_reason": "stop",
        }
        for i in range(n)
    ]
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": body["model"],
        "choices": choices[::-1],  # servers may list choices in any order; `index` is the truth
        "usage": {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14},
    }


def completion_payload(body: dict[str, Any], reply: Reply | None = None) -> dict[str, Any]:
    text = reply(body) if reply else f" after {body['prompt']}"
    return {
        "id": "cmpl-1",
        "object": "text_completion",
        "created": 1700000000,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "text": text,
                "finish_reason": "length",
                "logprobs": COMPLETION_LOGPROBS if body.get("logprobs") is not None else None,
            }
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7},
    }


class FakeServer:
    """Answers like an OpenAI-compatible server, unless the next scripted action says otherwise.

    Actions (consumed one per request): {"status", "headers", "body"} for a canned reply,
    {"drop": True} closes the connection without a reply, {"reset": True} resets it (RST),
    {"truncate": True} sends headers and half a body, {"hang": seconds} never replies in time.
    `reply`: the text of every completion, from the request body (default: an echo of the input); `answer`:
    the whole body of every default reply, from the request's path and body (another API's shape).
    """

    def __init__(self, reply: Reply | None = None, answer: Callable[[str, dict[str, Any]], Any] | None = None) -> None:
        self.reply = reply
        self.answer = answer
        self.script: list[dict[str, Any]] = []
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.active = 0
        self.max_active = 0
        self.delay = 0.0
        self.stop_hanging = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.httpd.fake = self  # type: ignore[attr-defined]
        self.httpd.handle_error = lambda request, address: None  # type: ignore[method-assign]
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,), daemon=True)
        self.thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def then(self, *actions: dict[str, Any]) -> FakeServer:
        self.script.extend(actions)
        return self

    def stop(self) -> None:
        self.stop_hanging.set()
        self.httpd.shutdown()
        self.httpd.server_close()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        fake: FakeServer = self.server.fake  # type: ignore[attr-defined]
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        with fake.lock:
            fake.requests.append(
                {
                    "path": self.path,
                    "authorization": self.headers.get("Authorization"),
                    "headers": dict(self.headers),
                    "body": body,
                    "time": time.monotonic(),
                }
            )
            action = fake.script.pop(0) if fake.script else {}
            fake.active += 1
            fake.max_active = max(fake.max_active, fake.active)
        try:
            self.act(fake, action, body)
        finally:
            with fake.lock:
                fake.active -= 1

    def do_GET(self) -> None:
        if urlsplit(self.path).path.endswith("/v1/models"):
            self.send(
                200, {"object": "list", "data": [{"id": "m", "object": "model", "created": 0, "owned_by": "me"}]}, {}
            )
        else:
            self.send(404, {"error": {"message": "not found"}}, {})

    def act(self, fake: FakeServer, action: dict[str, Any], body: dict[str, Any]) -> None:
        if action.get("drop"):
            self.close_connection = True
        elif action.get("reset"):
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            self.connection.close()
            self.close_connection = True
        elif action.get("truncate"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"choices": [')
            self.close_connection = True
        elif "hang" in action:
            fake.stop_hanging.wait(action["hang"])
            self.close_connection = True
        elif "status" in action:
            self.send(action["status"], action.get("body", {}), action.get("headers", {}))
        else:
            time.sleep(fake.delay)
            chat = urlsplit(self.path).path.endswith("/chat/completions")
            if fake.answer is not None:
                payload = fake.answer(self.path, body)
            else:
                payload = (chat_payload if chat else completion_payload)(body, fake.reply)
            self.send(200, payload, {})

    def send(self, status: int, payload: Any, headers: dict[str, Any]) -> None:
        """A reply; a header's value may be a function, asked as the reply is sent (a date relative to then)."""
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        headers = dict(headers)
        self.send_response(status)
        self.send_header("Content-Type", headers.pop("Content-Type", "application/json"))
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value() if callable(value) else value)
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def server():
    fake = FakeServer()
    yield fake
    fake.stop()


@pytest.fixture(autouse=True)
def no_ambient_openai_env(monkeypatch):
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", KEY_ENV):
        monkeypatch.delenv(name, raising=False)


def openai_engine(model: str, **options: Any) -> Any:
    """The `openai` engine of `--model openai:MODEL` with these `--model-arg`s, as a run loads it."""
    return load_engine(f"openai:{model}", registry=REGISTRY, **options)


def generate(engine: Engine, request: Request) -> Response:
    async def go() -> Response:
        try:
            return await engine.agenerate_one(request)
        finally:
            await engine.aclose()

    return asyncio.run(go())


def chat(text: str = "Capital of France?", **sampling: Any) -> Request:
    return Request.chat(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}], Sampling.make(**sampling)
    )


def error(status: int, message: str, **headers: Any) -> dict[str, Any]:
    return {
        "status": status,
        "headers": headers,
        "body": {"error": {"message": message, "type": "test_error", "code": None}},
    }


# -- request mapping ------------------------------------------------------------------------


def test_chat_request_maps_sampling_into_the_body(server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    engine = openai_engine("my-model", base_url=server.base_url, api_key_env=KEY_ENV, **FAST)
    generate(engine, chat(max_tokens=7, temperature=0.5, top_p=0.9, stop=["\n", "###"], seed=3, logprobs=2))
    [got] = server.requests
    assert got["path"] == "/v1/chat/completions"
    assert got["authorization"] == f"Bearer {SECRET}"
    assert got["body"] == {
        "model": "my-model",
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Capital of France?"}],
        "max_tokens": 7,
        "temperature": 0.5,
        "top_p": 0.9,
        "n": 1,
        "stop": ["\n", "###"],
        "seed": 3,
        "logprobs": True,
        "top_logprobs": 2,
    }


def test_a_token_limit_left_to_the_server_is_not_sent(server):
    engine = openai_engine("my-model", base_url=server.base_url, **FAST)
    generate(engine, chat(max_tokens=7, left_to_server=("max_tokens",)))
    generate(engine, Request(prompt="Q:", sampling=Sampling.make(max_tokens=7, left_to_server=("max_tokens",))))
    assert not any({"max_tokens", "max_completion_tokens"} & set(got["body"]) for got in server.requests)


def test_prompt_request_goes_to_completions_with_integer_logprobs(server):
    engine = openai_engine("base-model", base_url=server.base_url, **FAST)
    generate(engine, Request(prompt="Q: capital of France?\nA:", sampling=Sampling.make(logprobs=2, stop="\n")))
    [got] = server.requests
    assert got["path"] == "/v1/completions"
    assert got["body"]["prompt"] == "Q: capital of France?\nA:"
    assert got["body"]["logprobs"] == 2 and "top_logprobs" not in got["body"]
    assert got["body"]["stop"] == ["\n"]
    assert "seed" not in got["body"]


def test_chat_mode_sends_a_prompt_as_one_user_message(server):
    engine = openai_engine("chat-only", base_url=server.base_url, mode="chat", **FAST)
    response = generate(engine, Request(prompt="Hello there"))
    [got] = server.requests
    assert got["path"] == "/v1/chat/completions"
    assert got["body"]["messages"] == [{"role": "user", "content": "Hello there"}]
    assert response.text == "echo0: Hello there"


def test_json_mode_asks_chat_for_a_json_object(server):
    engine = openai_engine("judge", base_url=server.base_url, **FAST)
    generate(engine, chat(json_mode=True))
    assert server.requests[0]["body"]["response_format"] == {"type": "json_object"}


def test_lora_adapter_is_sent_as_the_model_name(server):
    engine = openai_engine("base-model", base_url=server.base_url, **FAST)
    generate(engine, chat(lora="sql-adapter"))
    assert server.requests[0]["body"]["model"] == "sql-adapter"


def test_no_authorization_header_when_the_key_variable_is_unset(server):
    engine = openai_engine("local", base_url=server.base_url, api_key_env=KEY_ENV, **FAST)
    generate(engine, chat())
    assert server.requests[0]["authorization"] is None


def test_extra_model_args_are_sent_in_the_body_and_key_the_cache(server):
    engine = openai_engine("m", base_url=server.base_url, concurrency="3", repetition_penalty=1.1, **FAST)
    generate(engine, chat())
    assert engine.max_concurrency == 3
    assert server.requests[0]["body"]["repetition_penalty"] == 1.1
    assert "repetition_penalty=1.1" in engine.engine_id


def test_base_url_comes_from_the_environment_when_not_given(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url + "/")
    engine = openai_engine("m", **FAST)
    assert engine.base_url == server.base_url
    assert generate(engine, chat("hi")).text == "echo0: hi"


def test_default_base_url_is_openai():
    engine = openai_engine("gpt-4o-mini")
    assert engine.base_url == "https://api.openai.com/v1"
    assert engine.engine_id == "openai:gpt-4o-mini"


# -- response parsing -----------------------------------------------------------------------


def test_chat_response_texts_usage_and_logprobs_are_parsed(server):
    engine = openai_engine("m", base_url=server.base_url, **FAST)
    response = generate(engine, chat("x", n=2, logprobs=2))
    assert response.texts == ["echo0: x", "echo1: x"]
    assert (response.prompt_tokens, response.completion_tokens, response.finish_reason) == (11, 3, "stop")
    assert [(t.token, t.logprob) for t in response.logprobs] == [("Par", -0.25), ("is", -0.5)]
    assert response.logprobs[0].top == {"Par": -0.25, "Lon": -1.75}


def test_completion_response_texts_usage_and_logprobs_are_parsed(server):
    engine = openai_engine("m", base_url=server.base_url, **FAST)
    response = generate(engine, Request(prompt="Q", sampling=Sampling.make(logprobs=2)))
    assert response.text == " after Q"
    assert (response.prompt_tokens, response.completion_tokens, response.finish_reason) == (5, 2, "length")
    assert [(t.token, t.logprob) for t in response.logprobs] == [(" Paris", -0.125), (".", -0.5)]
    assert response.logprobs[1].top == {".": -0.5, "!": -1.5}


def test_logprobs_are_none_when_not_asked(server):
    engine = openai_engine("m", base_url=server.base_url, **FAST)
    assert generate(engine, chat()).logprobs is None


# -- retries --------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 503])
def test_retry_after_header_is_honoured(server, status):
    server.then(error(status, "slow down", **{"Retry-After": "0.3"}))
    engine = openai_engine("m", base_url=server.base_url, **FAST | {"backoff_max": 5})
    response = generate(engine, chat("hi"))
    assert response.text == "echo0: hi"
    first, second = server.requests
    assert second["time"] - first["time"] >= 0.28


def test_retry_after_is_capped_at_backoff_max(server):
    server.then(error(429, "slow down", **{"Retry-After": "30"}))
    engine = openai_engine("m", base_url=server.base_url, **FAST | {"backoff_max": 0.05})
    started = time.monotonic()
    generate(engine, chat())
    assert time.monotonic() - started < 1.5
    assert len(server.requests) == 2


def test_retry_after_as_an_http_date_is_honoured(server):
    """The date is made as the reply is sent, to the second: more than 1 s after it, so the retry comes more than
    1 s after the first request however loaded the machine (ignored, the wait would be FAST's 0.01 s at most)."""
    later = lambda: email.utils.formatdate(time.time() + 2, usegmt=True)  # noqa: E731
    server.then(error(503, "maintenance", **{"Retry-After": later}))
    engine = openai_engine("m", base_url=server.base_url, **FAST | {"backoff_max": 5})
    assert generate(engine, chat("hi")).text == "echo0: hi"
    first, second = server.requests
    assert second["time"] - first["time"] >= 0.9


def test_503_twice_then_success(server):
    server.then(error(503, "overloaded"), error(503, "overloaded"))
    engine = openai_engine("m", base_url=server.base_url, **FAST)
    assert generate(engine, chat("hi")).text == "echo0: hi"
    assert len(server.requests) == 3


@pytest.mark.parametrize("status", [500, 502, 504, 507])
def test_any_5xx_is_retried(server, status):
    server.then(error(status, "boom"))
    engine = openai_engine("m", base_url=server.base_url, **FAST)
    assert generate(engine, chat("hi")).text == "echo0: hi"
    assert len(server.requests) == 2


def test_backoff_is_exponential_capped_and_fully_jittered(server, monkeypatch):
    bounds: list[tuple[float, float]] = []
    monkeypatch.setattr(random, "uniform", lambda a, b: bounds.append((a, b)) or 0.0)  # the jitter's draw
    server.then(*[error(500, "boom")] * 3)
    engine = openai_engine("m", base_url=server.base_url, backoff_base=0.01, backoff_max=0.03)
    generate(engine, chat())
    assert bounds == [(0.0, 0.01), (0.0, 0.02), (0.0, 0.03)]


@pytest.mark.parametrize("failure", [{"drop": True}, {"reset": True}, {"truncate": True}])
def test_dropped_connection_is_retried(server, failure):
    server.then(failure, failure)
    engine = openai_engine("m", base_url=server.base_url, **FAST)
    assert generate(engine, chat("hi")).text == "echo0: hi"
    assert len(server.requests) == 3


@pytest.mark.parametrize(
    "body",
    [
        b"<html>502 Bad Gateway</html>",
        b'{"choices": []}',
        b'{"object": "error"}',
        b"[1, 2]",
        b'{"choices": [{"index": 0}]}',
        b'{"choices": [{"index": 0, "message": 3}]}',
    ],
)
@pytest.mark.parametrize("content_type", ["application/json", "text/html"])
def test_a_200_whose_body_is_not_a_completion_is_retried(server, body, content_type):
    server.then({"status": 200, "body": body, "headers": {"Content-Type": content_type}})
    engine = openai_engine("m", base_url=server.base_url, **FAST)
    assert generate(engine, chat("hi")).text == "echo0: hi"
    assert len(server.requests) == 2


def test_a_200_that_stays_unreadable_fails_with_the_body_named(server):
    server.then(*[{"status": 200, "body": b"<html>proxy error</html>"}] * 3)
    engine = openai_engine("m", base_url=server.base_url, max_retries=2, **FAST)
    with pytest.raises(EngineError, match=r"unreadable response .*proxy error.*\(3 attempts\)"):
        generate(engine, chat())


def test_retry_unreadable_false_fails_an_unreadable_200_at_once_and_still_retries_a_500(server):
    """As the SDK alone does (CRAG-MM's LLMJudge, whose own loop tries the call again)."""
    server.then({"status": 200, "body": b'{"choices": []}'})
    engine = openai_engine("m", base_url=server.base_url, retry_unreadable=False, **FAST)
    with pytest.raises(EngineError, match=r"unreadable response .*\(1 attempt\)"):
        generate(engine, chat())
    assert len(server.requests) == 1
    server.then(error(500, "busy"))
    assert generate(engine, chat("hi")).text == "echo0: hi"
    assert len(server.requests) == 3


def refused_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{probe.getsockname()[1]}/v1"


def test_an_unreachable_base_url_fails_fast_in_one_line_naming_it():
    url = refused_url()
    engine = openai_engine("m", base_url=url)  # the defaults: 6 retries for a server that answers badly
    started = time.monotonic()
    with pytest.raises(EngineError) as caught:
        generate(engine, chat())
    assert time.monotonic() - started < 3  # 2 connection retries (0 s, 0.5 s), not ~55 s of backoff
    message = str(caught.value)
    assert "\n" not in message and url in message and "connection failed" in message and "(3 attempts)" in message
    assert not isinstance(caught.value, RequestError)  # the server is at fault: a replica set fails over


def test_a_server_that_never_accepts_the_connection_fails_fast():
    with socket.socket() as listener:  # a full accept queue: the kernel drops further connection attempts
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
        queued = [socket.create_connection(listener.getsockname(), timeout=2)]  # fills a queue of 1
        try:
            started = time.monotonic()
            with pytest.raises(EngineError, match=r"connection failed \(ConnectTimeout.*\(2 attempts\)"):
                generate(openai_engine("m", base_url=url, timeout=0.3, connect_retries=1), chat())
            assert time.monotonic() - started < 3  # 2 x 0.3 s, not 7 attempts with backoff
        finally:
            for connection in queued:
                connection.close()


def test_connection_retries_are_a_model_arg():
    with pytest.raises(EngineError, match=r"connection failed.*\(1 attempt\)"):
        generate(openai_engine("m", base_url=refused_url(), connect_retries=0), chat())


def test_a_base_url_that_is_not_http_is_refused_at_once():
    with pytest.raises(ConfigError, match="must be an http"):
        openai_engine("m", base_url="localhost:8000/v1")


def test_request_hanging_past_the_timeout_is_retried(server):
    server.then({"hang": 5})
    engine = openai_engine("m", base_url=server.base_url, **FAST | {"timeout": 0.3})
    assert generate(engine, chat("hi")).text == "echo0: hi"
    assert len(server.requests) == 2


def test_timeouts_exhaust_retries_into_one_engine_error(server):
    server.then({"hang": 5}, {"hang": 5})
    engine = openai_engine("m", base_url=server.base_url, max_retries=1, **FAST | {"timeout": 0.2})
    with pytest.raises(EngineError, match=r"timed out after 0.2s \(2 attempts\)"):
        generate(engine, chat())


def test_400_fails_at_once_with_a_one_line_message(server):
    server.then(error(400, "Invalid value for 'top_logprobs':\nmust be <= 20."))
    engine = openai_engine("m", base_url=server.base_url, **FAST)
    with pytest.raises(EngineError) as caught:
        generate(engine, chat())
    message = str(caught.value)
    assert len(server.requests) == 1
    assert "\n" not in message
    assert "HTTP 400" in message and "must be <= 20" in message and "(1 attempt)" in message


def test_a_refused_log_prob_count_names_the_limit(server):
    server.then(error(400, "Invalid value for 'top_logprobs': must be <= 5."))
    with pytest.raises(RequestError, match=r"top 20 log-probs, named tokens for the top 20: OpenAI allows at most 20"):
        generate(openai_engine("m", base_url=server.base_url, **FAST), chat(logprob_tokens=["[Relevant]"]))


@pytest.mark.parametrize("status", [400, 413, 422])
def test_a_request_the_server_refuses_is_a_request_fault(server, status):
    server.then(error(status, "This model's maximum context length is 4096 tokens"))
    with pytest.raises(RequestError, match=f"HTTP {status}: This model's maximum context length"):
        generate(openai_engine("m", base_url=server.base_url, **FAST), chat())


@pytest.mark.parametrize(
    "script",
    [
        [error(500, "boom")] * 3,
        [error(404, "no such route")],
        [{"hang": 5}] * 3,
        [{"status": 200, "body": b"<html>x</html>"}] * 3,
    ],
)
def test_a_server_at_fault_is_not_a_request_fault(server, script):
    server.then(*script)
    engine = openai_engine("m", base_url=server.base_url, max_retries=2, **FAST | {"timeout": 0.2})
    with pytest.raises(EngineError) as caught:
        generate(engine, chat())
    assert not isinstance(caught.value, RequestError)


def test_exhausted_retries_report_status_body_and_attempts(server):
    server.then(*[error(503, "try later")] * 3)
    engine = openai_engine("m", base_url=server.base_url, max_retries=2, **FAST)
    with pytest.raises(EngineError, match=r"HTTP 503: try later \(3 attempts\)"):
        generate(engine, chat())


# -- secrets --------------------------------------------------------------------------------


def test_api_key_never_appears_in_ids_errors_or_logs(server, monkeypatch, caplog):
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv(KEY_ENV, SECRET)
    # A careless server echoes the key back: in an unreadable 200 and a 500, both retried, and in the final 401.
    server.then(
        {"status": 200, "body": f"<html>proxy saw {SECRET}</html>".encode()},
        error(500, f"upstream rejected {SECRET}"),
        error(401, f"Incorrect API key provided: {SECRET}"),
    )
    engine = openai_engine("m", base_url=server.base_url, api_key_env=KEY_ENV, **FAST)
    with pytest.raises(EngineError) as caught:
        generate(engine, chat())
    assert server.requests[0]["authorization"] == f"Bearer {SECRET}"  # the key was used...
    assert "HTTP 401" in str(caught.value)
    for text in (
        str(caught.value),
        repr(caught.value),
        repr(engine),
        engine.engine_id,
        json.dumps(engine.options),
        str(vars(engine)),
        caplog.text,
    ):
        assert SECRET not in text  # ...and shown nowhere
    assert "proxy saw ***" in caplog.text and "retry 1/" in caplog.text  # ragbench's retry, logged redacted
    assert "retry 1 of" in caplog.text  # and the SDK's


def test_missing_key_is_named_in_a_401_message(server):
    server.then(error(401, "You didn't provide an API key."))
    engine = openai_engine("m", base_url=server.base_url, api_key_env=KEY_ENV, **FAST)
    with pytest.raises(EngineError, match=f"environment variable {KEY_ENV} is not set"):
        generate(engine, chat())


def test_a_key_given_as_model_arg_is_refused_without_echoing_it():
    with pytest.raises(ConfigError) as caught:
        openai_engine("m", api_key=SECRET)
    assert SECRET not in str(caught.value)


def test_credentials_in_the_base_url_stay_out_of_the_engine_id():
    engine = openai_engine("m", base_url="http://user:hunter2@host:8000/v1?token=abc")
    assert engine.engine_id == "openai:m@http://host:8000/v1"
    assert "hunter2" not in repr(engine) and "abc" not in repr(engine)


# -- concurrency and event loops --------------------------------------------------------------


def test_concurrency_never_exceeds_the_cap_through_the_scheduler(server):
    server.delay = 0.05
    engine = openai_engine("m", base_url=server.base_url, concurrency=4, **FAST)
    assert engine.concurrent and engine.max_concurrency == 4
    responses = asyncio.run(send_requests(engine, [chat(f"q{i}") for i in range(40)]))
    assert [r.text for r in responses] == [f"echo0: q{i}" for i in range(40)]
    assert len(server.requests) == 40
    assert server.max_active == 4


def test_engine_makes_a_fresh_client_in_each_runs_event_loop(server):
    engine = openai_engine("m", base_url=server.base_url, **FAST)

    async def once(text: str) -> str:
        try:
            return (await engine.agenerate_one(chat(text))).text
        finally:
            await engine.aclose()

    assert asyncio.run(once("first")) == "echo0: first"
    assert asyncio.run(once("second")) == "echo0: second"
    engine.close()  # nothing left open: a no-op


def test_sync_close_releases_the_client_of_a_stopped_loop(server):
    engine = openai_engine("m", base_url=server.base_url, **FAST)
    loop = asyncio.new_event_loop()
    try:
        assert loop.run_until_complete(engine.agenerate_one(chat("hi"))).text == "echo0: hi"
        client = engine._sdk
        engine.close()
        assert client is not None and client.is_closed() and engine._sdk is None
    finally:
        loop.close()


def test_registry_builds_the_engine_from_a_model_string(server):
    from ragbench.testing import load_engine

    engine = load_engine("openai:some/model", base_url=server.base_url, registry=installed_registry())
    assert isinstance(engine, installed_registry().load("engines", "openai"))
    assert engine.model == "some/model"


# -- the run's pre-flight ---------------------------------------------------------------------


def test_the_preflight_is_silent_for_a_live_server(server):
    checked = preflight("demo", model="openai:m", model_args={"base_url": server.base_url})
    assert not [line for line in checked.warnings if "base-url" in line]


def test_the_preflight_names_an_unreachable_url_at_once_in_one_line():
    url = refused_url()
    started = time.monotonic()
    with pytest.raises(PreflightError) as refused:
        preflight("demo", model="openai:m", model_args={"base_url": url})
    assert time.monotonic() - started < 3  # refused at once, not after the check's 3 s wait
    [line] = [line for line in refused.value.problems if url in line]
    assert "Connection refused" in line and line.endswith("start the server or correct --base-url")
