"""The `http` system prices the model calls a service reports in its reply (OpenAI's `usage` and `model`, a JSON API's
declared `usage` and `usage_model`), streamed or not, against the real service the other http tests start
(tests/support/rag_service.py): where no span of the example carries a model call's tokens, the reply's usage is one
model call of the reply's model, in results.json's cost, `--max-cost`, `estimate`, a `--replay` and a `--resume`;
where the spans carry them, they win (the call is not counted twice); an unknown model is unpriced, never $0; a usage
that cannot be priced right fails its example in one line (any values: a hypothesis test)."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_http_app import run_http as run_app

from ragbench.api.apps import AppReplyError, AppRequest, ReplyUsage, call_steps, running
from ragbench.plugins.http_app.system import HttpApp
from support.helpers import cli_here, samples
from support.rag_apps import QUESTIONS, varn_task
from support.rag_service import NO_USAGE, rag_service

PRICES = "toy-model: {prompt: 1000.0, completion: 2000.0}\n"  # $0.001 a prompt token, $0.002 an output token
EXAMPLE_USD = (12 * 1000.0 + 2 * 2000.0) / 1e6  # the service reports 12 prompt and 2 output tokens an example
JSON_USAGE = {"usage": "meta.usage", "usage_model": "meta.model"}
JSON_API = {
    "preset": "json",
    "body": {"query": "{{ question }}"},
    "answer": "result.text",
    "passages": "result.sources",
}
JSON_STREAM = {"preset": "json", "body": {"query": "{{ question }}"}, "passages": "sources", "stream": True}
MODES = {  # path, system options
    "openai": ("/v1", {}),
    "openai streamed": ("/sse/v1", {"stream": True}),
    "json": ("/ask", {**JSON_API, **JSON_USAGE}),
    "json streamed, usage in the final event": (
        "/sse-ask",
        {**JSON_STREAM, "answer_delta": "chunk", "final": "sources", **JSON_USAGE},
    ),
    "json streamed, usage in a later event": (
        "/sse-ask-done",
        {**JSON_STREAM, "answer_delta": "chunk", "final": "sources", "end": "type == 'done'", **JSON_USAGE},
    ),
}


def price_table(tmp_path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "prices.yaml"
    path.write_text(PRICES)
    return str(path)


def run_http(tmp_path, url, resume=False, **system_args):
    """test_http_app's run of the service, priced by `PRICES`."""
    return run_app(tmp_path, url, resume, price_table(tmp_path), **system_args)


def app_lines(run):
    return [json.loads(line) for line in (run / "calls" / "app.jsonl").read_text().splitlines()]


@pytest.mark.parametrize("mode", list(MODES))
def test_a_replys_usage_is_one_priced_model_call_where_no_span_carries_it_and_a_replay_prices_it_the_same(
    tmp_path, mode
):
    path, options = MODES[mode]
    with rag_service() as (url, service):
        results = run_http(tmp_path, f"{url}{path}", traces=False, **options)
    assert results["complete"], results.get("failures")
    cost = results["model_cost"]["varn_qa"]
    assert (cost["calls"], cost["prompt_tokens"], cost["completion_tokens"]) == (4, 48, 8)
    assert cost["model"] == "toy-model" and cost["usd"] == pytest.approx(4 * EXAMPLE_USD)
    for record in samples(tmp_path / "run", "varn_qa"):
        (call,) = [step for step in record["trace"] if step["kind"] == "llm"]
        assert call["name"] == "reply usage" and call["role"] == "app:toy-model"
        assert (call["prompt_tokens"], call["completion_tokens"]) == (12, 2)
    for line in app_lines(tmp_path / "run"):
        assert line["reply"]["usage"] == {"model": "toy-model", "prompt_tokens": 12, "completion_tokens": 2}
    # the service is gone: the replay prices the recorded replies
    done = cli_here("--replay", str(tmp_path / "run"), "--output", str(tmp_path / "replay"), "--no-progress")
    assert done.returncode == 0, done.stderr
    replayed = json.loads((tmp_path / "replay" / "results.json").read_text())
    assert replayed["model_cost"]["varn_qa"] == cost


@pytest.mark.parametrize("streamed", [False, True])
def test_spans_that_carry_the_calls_tokens_win_over_the_replys_usage(tmp_path, streamed):
    with rag_service() as (url, service):
        path = "/sse/v1" if streamed else "/v1"
        results = run_http(tmp_path, f"{url}{path}", stream=streamed)
    assert results["complete"], results.get("failures")
    cost = results["model_cost"]["varn_qa"]
    span_tokens = sum(len(question.split()) + 10 for _, question, _ in QUESTIONS)  # the service's chat spans
    assert (cost["calls"], cost["prompt_tokens"], cost["completion_tokens"]) == (4, span_tokens, 4)
    for record in samples(tmp_path / "run", "varn_qa"):
        assert [step["name"] for step in record["trace"] if step["kind"] == "llm"] == ["chat toy-model"]
    assert all(line["reply"]["usage"]["prompt_tokens"] == 12 for line in app_lines(tmp_path / "run"))  # recorded

    with rag_service() as (url, service):  # spans that name the call but not its tokens: the reply's usage priced
        service.span_tokens = False
        results = run_http(tmp_path / "no-tokens", f"{url}/v1")
    cost = results["model_cost"]["varn_qa"]
    assert (cost["prompt_tokens"], cost["completion_tokens"]) == (48, 8)
    assert cost["usd"] == pytest.approx(4 * EXAMPLE_USD)


def cli_http(tmp_path, url, *args):
    return cli_here(
        "--tasks",
        varn_task(tmp_path / "task"),
        "--system",
        "http",
        "--system-arg",
        f"url={url}",
        "--system-arg",
        "traces=false",
        "--max-inflight",
        "1",
        "--output",
        str(tmp_path / "run"),
        "--no-progress",
        *args,
    )


def test_max_cost_stops_the_run_at_the_reply_that_brings_the_spending_over_it_or_has_no_price(tmp_path):
    with rag_service() as (url, service):
        done = cli_http(tmp_path / "capped", f"{url}/v1", "--max-cost", "0.02", "--price-table", price_table(tmp_path))
        assert done.returncode != 0
        assert "$0.0320 spent by this command; the application's own model calls went over it" in done.stderr
        assert "2 of 4 examples saved" in done.stderr

        service.reported.model = "mystery-model"  # no price: the run stops at the first reply, never prices it $0
        done = cli_http(
            tmp_path / "unpriced", f"{url}/v1", "--max-cost", "0.02", "--price-table", price_table(tmp_path)
        )
        assert done.returncode != 0
        assert (
            "an application's model call cannot be counted: the application's model mystery-model has no price: "
            "add it with --price-table FILE" in done.stderr
        )
        results = run_http(tmp_path / "uncapped", f"{url}/v1", traces=False)
    cost = results["model_cost"]["varn_qa"]
    assert cost["usd"] is None and "the application's model mystery-model has no price" in cost["usd_note"]


def test_estimate_prices_the_replys_usage(tmp_path):
    with rag_service() as (url, service):
        estimate = cli_here(
            "estimate",
            "--tasks",
            varn_task(tmp_path / "task"),
            "--system",
            "http",
            "--system-arg",
            f"url={url}/v1",
            "--system-arg",
            "traces=false",
            "--price-table",
            price_table(tmp_path),
            "--output",
            str(tmp_path / "estimated"),
            "--no-progress",
        )
    assert estimate.returncode == 0, estimate.stdout + estimate.stderr
    assert f"dollars, system model: ${4 * EXAMPLE_USD:.4f}" in estimate.stdout  # every example piloted


def test_a_resumed_run_prices_the_replies_of_both_attempts(tmp_path):
    with rag_service() as (url, service):
        service.sse.cut_ids = {"q2"}
        options = {"stream": True, "traces": False, "max_retries": 0}
        first = run_http(tmp_path, f"{url}/sse/v1", **options)
        assert first["model_cost"]["varn_qa"]["usd"] == pytest.approx(3 * EXAMPLE_USD)
        service.sse.cut_ids = set()
        resumed = run_http(tmp_path, f"{url}/sse/v1", resume=True, **options)
    assert resumed["complete"], resumed.get("failures")
    assert resumed["model_cost"]["varn_qa"]["usd"] == pytest.approx(4 * EXAMPLE_USD)


COUNT = st.one_of(
    st.integers(),
    st.integers(0, 10**9),
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False),
    st.text(max_size=2),
)
USAGES = st.one_of(
    st.just(NO_USAGE),
    st.none(),
    st.integers(),
    st.text(max_size=3),
    st.lists(st.integers(), max_size=2),
    st.fixed_dictionaries(
        {},
        optional={
            "prompt_tokens": COUNT,
            "completion_tokens": COUNT,
            "total_tokens": COUNT,
            "prompt_tokens_details": st.one_of(
                st.none(), st.integers(), st.fixed_dictionaries({}, optional={"cached_tokens": COUNT})
            ),
        },
    ),
)
MODELS = st.sampled_from(["toy-model", "", "  gpt-x ", None, 42])
MOST = 10**9


def whole(value):
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MOST


def expected(usage, model):
    """The reply's usage as it must be priced: a ReplyUsage, None (no usage), or "refused"."""
    if usage is NO_USAGE or usage is None:
        return None
    if not isinstance(usage, dict):
        return "refused"
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if not (whole(prompt) and whole(completion)) or (
        usage.get("total_tokens") is not None and not whole(usage["total_tokens"])
    ):
        return "refused"
    if details is not None and not isinstance(details, dict) or cached is not None and not whole(cached):
        return "refused"
    if (cached or 0) > prompt:
        return "refused"
    named = model.strip() if isinstance(model, str) and model.strip() else "default"  # else the `model` option's
    return ReplyUsage(named, prompt, completion, cached or 0)


def test_any_usage_a_reply_reports_is_priced_as_sent_or_refused_in_one_line():
    loop = asyncio.new_event_loop()
    with rag_service() as (url, service):
        system = HttpApp(f"{url}/v1", traces=False)
        started = running(system, "varn_qa")
        loop.run_until_complete(started.__aenter__())

        @settings(max_examples=200, deadline=None)
        @given(usage=USAGES, model=MODELS)
        def check(usage, model) -> None:
            service.reported.usage, service.reported.model = usage, model
            want = expected(usage, model)
            request = AppRequest(id="q1", question=QUESTIONS[0][1])
            try:
                reply = loop.run_until_complete(system.call(request))
            except AppReplyError as exc:
                assert want == "refused", exc
                line = str(exc)
                assert line.startswith(f"http: POST {url}/v1/chat/completions: the reply's usage at 'usage'")
                assert "\n" not in line
                return
            assert reply.usage == want
            priced = [step for step in call_steps("http", request.question, reply, [], 0.1) if step.kind == "llm"]
            if want is None:
                assert priced == []
            else:
                (step,) = priced
                assert step.role == f"app:{want.model}"
                assert (step.prompt_tokens, step.completion_tokens, step.cached_prompt_tokens) == (
                    want.prompt_tokens,
                    want.completion_tokens,
                    want.cached_prompt_tokens,
                )

        try:
            check()
        finally:
            loop.run_until_complete(started.__aexit__(None, None, None))
    loop.close()
