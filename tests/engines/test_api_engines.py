"""What the `anthropic` and `gemini` engines promise alike, as the `openai` engine does (_engines/hosted/api_engine.py):
each against its vendor's own SDK and a fake server of its API on 127.0.0.1. Rate limits and server errors are retried,
Retry-After honoured up to `backoff_max`; exhausted retries, a refused request and a server that is not there each
end in one line naming what, where and how many attempts; the key is never shown; at most `concurrency` requests
are in flight; the registry builds each from `engine:model`; a run counts the API's tokens and a second run on
the same cache sends nothing; the pre-flight wants a key for the vendor's own API;
and without the SDK the engine names the install command."""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import test_engine_anthropic as anthropic_case
import test_engine_gemini as gemini_case
from test_engine_openai import FAST, FakeServer, chat, generate

from conftest import needs
from ragbench.api import ConfigError, EngineError
from ragbench.api.engines import Engine, RequestError
from ragbench.testing import installed_registry, load_engine, send_requests
from support.helpers import cli_here

pytestmark = needs("anthropic", "google.genai")


@dataclass(frozen=True)
class Vendor:
    name: str
    module: Any  # the engine's test module: its `engine`, `error`, `echo`, KEY_ENV, SECRET
    overloaded: int  # the status the vendor sends when busy
    sdk_module: str

    @property
    def engine(self) -> Callable[..., Engine]:
        return self.module.engine

    @property
    def engine_class(self) -> Any:
        """The engine's class, as `--model NAME:MODEL` finds it."""
        return REGISTRY.load("engines", self.name)

    @property
    def error(self) -> Callable[..., dict[str, Any]]:
        return self.module.error


REGISTRY = installed_registry()
VENDORS = [Vendor("anthropic", anthropic_case, 529, "anthropic"), Vendor("gemini", gemini_case, 503, "google.genai")]


@pytest.fixture(params=VENDORS, ids=lambda vendor: vendor.name)
def vendor(request, monkeypatch) -> Vendor:
    for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    return request.param


@pytest.fixture
def server(vendor):
    fake = FakeServer(answer=vendor.module.echo)
    yield fake
    fake.stop()


ANSWER = "echo: Capital of France?"


@pytest.mark.parametrize("status", [429, 500, "overloaded"])
def test_rate_limits_and_server_errors_are_retried(vendor, server, status):
    status = vendor.overloaded if status == "overloaded" else status
    server.then(vendor.error(status, "busy"), vendor.error(status, "busy"))
    assert generate(vendor.engine(server), chat()).text == ANSWER
    assert len(server.requests) == 3


def test_a_proxys_html_error_page_is_retried_and_named(vendor, server):
    page = {"status": 502, "headers": {"Content-Type": "text/html"}, "body": b"<html>bad gateway</html>"}
    server.then(page)
    assert generate(vendor.engine(server), chat()).text == ANSWER
    server.then(page)
    with pytest.raises(EngineError, match=r"HTTP 502: <html>bad gateway</html> \(1 attempt\)"):
        generate(vendor.engine(server, max_retries=0), chat())


def test_a_request_hanging_past_the_timeout_is_retried_then_named(vendor, server):
    server.then({"hang": 10})
    assert generate(vendor.engine(server, timeout=1), chat()).text == ANSWER
    server.then({"hang": 10}, {"hang": 10})
    with pytest.raises(EngineError, match=r"timed out after 1s \(2 attempts\)"):
        generate(vendor.engine(server, timeout=1, max_retries=1), chat())


def test_a_lora_adapter_is_a_request_fault(vendor):
    with pytest.raises(RequestError, match="no LoRA adapters"):
        generate(vendor.engine_class("m", base_url="http://127.0.0.1:9"), chat(lora="my-adapter"))


def test_retry_after_is_honoured(vendor, server):
    server.then(vendor.error(429, "slow down", **{"Retry-After": "0.3"}))
    generate(vendor.engine(server, backoff_max=5), chat())
    first, second = server.requests
    assert second["time"] - first["time"] >= 0.28


def test_retry_after_is_capped_at_backoff_max(vendor, server):
    server.then(vendor.error(429, "slow down", **{"Retry-After": "30"}))
    started = time.monotonic()
    generate(vendor.engine(server, backoff_max=0.05), chat())
    assert time.monotonic() - started < 5 and len(server.requests) == 2


def test_a_retry_after_given_as_an_http_date_is_honoured_up_to_backoff_max(vendor, server):
    in_a_minute = email.utils.formatdate(time.time() + 60, usegmt=True)
    server.then(vendor.error(429, "slow down", **{"Retry-After": in_a_minute}))
    generate(vendor.engine(server, backoff_max=0.3), chat())
    first, second = server.requests
    assert second["time"] - first["time"] >= 0.28  # the date's wait, capped; the backoff alone is at most 0.001 s


@pytest.mark.parametrize("header", [{"Retry-After": "soon"}, {}])
def test_without_a_readable_retry_after_the_wait_is_the_backoffs(vendor, server, header):
    server.then(vendor.error(429, "slow down", **header))
    generate(vendor.engine(server, backoff_max=5), chat())
    first, second = server.requests
    assert second["time"] - first["time"] < 1  # FAST's backoff (at most 0.001 s here), not a guess of 5 s


def test_exhausted_retries_end_in_one_line_naming_status_message_and_attempts(vendor, server):
    server.then(*[vendor.error(vendor.overloaded, "Overloaded")] * 3)
    with pytest.raises(EngineError) as caught:
        generate(vendor.engine(server, max_retries=2), chat())
    text = str(caught.value)
    assert not isinstance(caught.value, RequestError)
    assert "\n" not in text and f"HTTP {vendor.overloaded}" in text and "Overloaded" in text and "3 attempts" in text
    assert text.startswith(f"{vendor.name} ") and "127.0.0.1" in text


def test_400_fails_at_once_as_a_request_fault(vendor, server):
    server.then(vendor.error(400, "prompt is too long"))
    with pytest.raises(RequestError, match="HTTP 400: prompt is too long.*1 attempt"):
        generate(vendor.engine(server), chat())
    assert len(server.requests) == 1


def test_an_unreachable_base_url_fails_fast_in_one_line_naming_it(vendor):
    made = vendor.engine_class("m", base_url="http://127.0.0.1:9", max_retries=5, connect_retries=1, **FAST)
    with pytest.raises(EngineError) as caught:
        generate(made, chat())
    text = str(caught.value)
    assert "127.0.0.1:9" in text and "connection failed" in text and "2 attempts" in text and "\n" not in text


def test_api_key_never_appears_in_ids_errors_or_logs(vendor, server, monkeypatch, caplog):
    secret = vendor.module.SECRET
    monkeypatch.setenv(vendor.module.KEY_ENV, secret)
    server.then(vendor.error(403, f"key {secret} is not valid"))
    caplog.set_level(logging.DEBUG)
    made = vendor.engine(server, api_key_env=vendor.module.KEY_ENV)
    with pytest.raises(EngineError) as caught:
        generate(made, chat())
    assert server.requests  # the key went out, and came back in the error
    for shown in (made.engine_id, repr(made), str(caught.value), caplog.text):
        assert secret not in shown


def test_concurrency_never_exceeds_the_cap_through_the_scheduler(vendor, server):
    server.delay = 0.05
    made = vendor.engine(server, concurrency=3)

    answers = asyncio.run(send_requests(made, [chat(f"q{i}") for i in range(10)]))
    assert [a.text for a in answers] == [f"echo: q{i}" for i in range(10)]
    assert server.max_active <= 3


def test_registry_builds_the_engine_from_a_model_string(vendor, server):
    made = load_engine(f"{vendor.name}:the-model", registry=installed_registry(), base_url=server.base_url)
    assert isinstance(made, vendor.engine_class) and made.engine_id.startswith(f"{vendor.name}:the-model@")


def test_preflight_wants_a_key_for_the_vendors_own_api(vendor):
    [problem] = vendor.engine_class.preflight("the-model", {})
    assert vendor.engine_class.DEFAULT_KEY_ENV in problem and "api_key_env" in problem


def test_preflight_names_a_server_that_does_not_answer(vendor):
    [problem] = vendor.engine_class.preflight("the-model", {"base_url": "http://127.0.0.1:9"})
    assert "127.0.0.1:9" in problem and "--base-url" in problem


def test_without_the_sdk_the_engine_names_the_install_command(vendor, monkeypatch):
    monkeypatch.setitem(sys.modules, vendor.sdk_module, None)  # importing it raises ImportError
    with pytest.raises(ConfigError, match=rf"pip install 'ragbench\[{vendor.name}\]'"):
        vendor.engine_class("the-model")


def test_a_run_counts_the_tokens_and_a_second_run_is_answered_from_the_cache(vendor, server, tmp_path):
    cache = str(tmp_path / "cache.sqlite")
    model = f"{vendor.name}:the-model"
    costs = []
    for run in ("first", "second"):
        done = cli_here(
            "--tasks", "demo", "--system", "vanilla", "--model", model, "--base-url", server.base_url.removesuffix("/v1"),
            "--limit", "2", "--cache", cache, "--output", str(tmp_path / run),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        costs.append(json.loads((tmp_path / run / "results.json").read_text(encoding="utf-8"))["cost"])
    first, second = costs
    assert (first["llm_calls"], first["errors"], second["llm_calls"], second["cache_hits"]) == (2, 0, 0, 2)
    assert first["prompt_tokens"] > 0 and first["completion_tokens"] > 0
    assert len(server.requests) == 2
