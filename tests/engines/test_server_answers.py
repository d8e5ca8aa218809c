"""What a server (or any engine) answers is checked where it arrives: an answer that is not one (negative or absurd
token counts, a text that is no string, an unknown finish reason, log-probabilities missing although asked, or
malformed) is an EngineError counted for that call, never cached nor summed into the cost; the run completes with
a results.json and a run.json its own readers accept, and `--resume` after the server is fixed asks again."""

from __future__ import annotations

import asyncio
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_engine_openai import FAST, FakeServer, chat_payload

from ragbench._engines.scripted import ScriptedEngine
from ragbench._reports.results.file import read_results, results_text
from ragbench._reports.results.schema import Results
from ragbench._scheduler import Scheduler
from ragbench._storage.cache import ResponseCache
from ragbench._storage.run_shapes import is_count
from ragbench._storage.rundir import RunDir
from ragbench._values.response_checks import response_problem
from ragbench.api import EngineError
from ragbench.api.engines import Request, Response, Sampling, TokenLogprobs
from support.helpers import run, samples

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def options(server: FakeServer, **config: Any) -> dict[str, Any]:
    return {
        "tasks": ["demo"],
        "system": "closed_book",
        "model": "openai:m",
        "limit": 3,
        "model_args": {"base_url": server.base_url, "max_retries": 0, **FAST},
        **config,
    }


def answering(server: FakeServer, change) -> None:
    """Every request answered by a chat completion as the fake server makes it, changed by `change(payload)`."""
    server.then(*[{"status": 200, "body": change(chat_payload({"messages": [{"content": "q"}], "model": "m"}))}] * 50)


def assert_readable(folder: Path) -> dict[str, Any]:
    """The run's own readers accept its files: run.json (as --resume reads it) and results.json."""
    assert RunDir(folder).record is not None
    results = read_results(folder / "results.json", "test")
    cost = results.cost
    assert all(is_count(cost[name]) for name in ("prompt_tokens", "completion_tokens", "llm_calls"))
    return results.to_dict()


@pytest.fixture
def server():
    fake = FakeServer()
    yield fake
    fake.stop()


def test_negative_usage_is_a_counted_engine_error_and_the_run_stays_readable(server, tmp_path):
    def negative(payload):
        payload["usage"] = {"prompt_tokens": -5, "completion_tokens": 3, "total_tokens": -2}
        return payload

    answering(server, negative)
    results = run(tmp_path, **options(server))
    results = assert_readable(tmp_path / "run")
    assert results["counts"]["demo"]["failed"] == 3 and results["cost"]["prompt_tokens"] == 0
    assert all("prompt_tokens -5 is not a whole number" in s["error"] for s in samples(tmp_path / "run", "demo"))
    server.script.clear()  # the server is fixed: --resume asks again and completes
    results = run(tmp_path, resume=True, **options(server))
    assert results["complete"] and results["cost"]["prompt_tokens"] == 3 * 11
    assert_readable(tmp_path / "run")


def test_a_server_that_ignores_logprobs_fails_flare_calls_and_a_resume_after_the_fix_completes_them(server, tmp_path):
    def without_logprobs(payload):
        for choice in payload["choices"]:
            choice["logprobs"] = None
        return payload

    answering(server, without_logprobs)
    config = {**options(server), "system": "flare", "system_args": {"max_iter_num": 2, "look_ahead_steps": 4}}
    results = run(tmp_path, **config)
    assert results["counts"]["demo"]["failed"] == 3
    assert all(
        "no log-probabilities, though the request asked for them" in s["error"]
        for s in samples(tmp_path / "run", "demo")
    )
    server.script.clear()
    asked = len(server.requests)
    results = run(tmp_path, resume=True, **config)
    assert results["complete"] and results["counts"]["demo"]["scored"] == 3
    assert len(server.requests) > asked  # asked again, not served the incomplete answers from the cache


def test_a_chat_answer_in_content_parts_is_its_text_parts_and_a_part_that_is_none_fails_the_call(server, tmp_path):
    """A server whose chat message content is a list of content parts (a reasoning part, then text parts) where
    OpenAI's API sends text: the answer is its text parts joined (it was an EngineError: texts are not a list of
    strings); a part that is no object with a type fails that call, naming the part."""
    content = [{"type": "thinking", "thinking": "The capital..."}, {"type": "text", "text": "Par"}]

    def parts(payload):
        payload["choices"][0]["message"]["content"] = [*content, {"type": "text", "text": "is"}]
        return payload

    answering(server, parts)
    results = run(tmp_path, **options(server))
    assert results["counts"]["demo"]["scored"] == 3
    assert [s["output"] for s in samples(tmp_path / "run", "demo")] == ["Paris"] * 3

    def untyped(payload):
        payload["choices"][0]["message"]["content"] = [*content, "is"]
        return payload

    server.script.clear()
    answering(server, untyped)
    results = run(tmp_path / "untyped", **options(server))
    assert results["counts"]["demo"]["failed"] == 3
    assert all(
        "content part 2 is no object with a type" in s["error"] for s in samples(tmp_path / "untyped" / "run", "demo")
    )


# what servers were seen to send beside any JSON value: negative and absurd counts, no log-probs, NaN-like text
ODD_VALUES = st.sampled_from([None, -1, -5, 10**12, 2.5, "12", [], {}, "stop", "NaN", 1.0]) | JSON_VALUES


@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    field=st.sampled_from(
        [
            "usage",
            "usage.prompt_tokens",
            "usage.completion_tokens",
            "finish_reason",
            "content",
            "logprobs",
            "logprobs.content",
            "token.logprob",
            "token.top_logprobs",
        ]
    ),
    value=ODD_VALUES,
)
def test_any_json_a_server_answers_never_poisons_the_run(field, value):
    """Whatever JSON value sits in a field of the answer, the run completes with files its readers accept, every
    example scored or failed with its error, and a resume after the server is fixed completes the run."""

    def changed(payload):
        choice = payload["choices"][0]
        choice["logprobs"] = json.loads(json.dumps(CHAT_TOKENS))
        where = {
            "usage": payload,
            "finish_reason": choice,
            "content": choice["message"],
            "logprobs": choice,
            "token": choice["logprobs"]["content"][0],
        }
        head, _, name = field.partition(".")
        target = choice["logprobs"] if head == "logprobs" and name else where.get(head, payload["usage"])
        target[name or head] = value
        return payload

    server = FakeServer()
    try:
        with tempfile.TemporaryDirectory() as folder:
            answering(server, changed)
            config = {
                **options(server, limit=2),
                "system": "flare",
                "system_args": {"max_iter_num": 1, "look_ahead_steps": 4},
            }
            results = run(Path(folder), **config)
            assert_readable(Path(folder) / "run")
            assert sum(results["counts"]["demo"][name] for name in ("scored", "failed")) == 2
            server.script.clear()
            assert run(Path(folder), resume=True, **config)["complete"]
            assert_readable(Path(folder) / "run")
    finally:
        server.stop()


CHAT_TOKENS = {
    "content": [{"token": "Paris", "logprob": -0.25, "top_logprobs": [{"token": "Paris", "logprob": -0.25}]}]
}


def test_a_cached_answer_that_lacks_the_log_probabilities_asked_is_a_miss(tmp_path):
    request = Request(prompt="Q", sampling=Sampling.make(logprobs=1))
    engine = ScriptedEngine("echo")
    cache = ResponseCache(tmp_path / "cache.sqlite")
    cache.put_many([(request.cache_key(engine.engine_id), engine.engine_id, Response(texts=["Q"]))])
    cache.flush()

    async def ask() -> Response:
        scheduler = Scheduler(cache)
        try:
            return await scheduler.submit(engine, request)
        finally:
            await scheduler.close()

    response = asyncio.run(ask())
    cache.close()
    assert not response.cached and response.logprobs is not None and engine.batch_sizes == [1]


@pytest.mark.parametrize(
    "answer",
    [
        Response(texts=["a"], prompt_tokens=-1),
        Response(texts=["a"], completion_tokens=10**12),
        Response(texts=["a"], prompt_tokens=1.5),
        Response(texts=[None]),
        Response(texts=["a"], finish_reason="eos"),
        Response(texts=["a"], logprobs=[TokenLogprobs("a", float("nan"))]),
        Response(texts=["a", "b"]),
        Response(texts=["a"], content_parts='["a"]'),
        Response(texts=["a"], content_parts="[{"),
    ],
)
def test_an_engine_answer_that_is_no_response_is_that_calls_counted_error_and_never_cached(tmp_path, answer):
    engine = ScriptedEngine("bad", script=lambda request: answer)
    cache = ResponseCache(tmp_path / "cache.sqlite")
    request = Request(prompt="Q")

    async def ask() -> Scheduler:
        scheduler = Scheduler(cache)
        try:
            with pytest.raises(EngineError, match="answered no valid response"):
                await scheduler.submit(engine, request)
        finally:
            await scheduler.close()
        return scheduler

    stats = asyncio.run(ask()).stats
    assert (stats.errors, stats.calls, stats.prompt_tokens, stats.completion_tokens, len(cache)) == (1, 0, 0, 0, 0)
    cache.close()


class LooseEngine(ScriptedEngine):
    """An engine plugin's mistake: `generate` answers plain values, not Responses."""

    def generate(self, requests):
        return [{"text": "a"} for _ in requests]


def test_an_engine_that_answers_no_response_object_fails_that_call_naming_what_it_answered():
    async def ask() -> None:
        scheduler = Scheduler()
        try:
            with pytest.raises(EngineError, match="answered no valid response: a dict, not a Response"):
                await scheduler.submit(LooseEngine("echo"), Request(prompt="Q"))
        finally:
            await scheduler.close()

    asyncio.run(ask())


@settings(max_examples=200)
@given(prompt=JSON_VALUES, completion=JSON_VALUES, logprob=JSON_VALUES)
def test_a_response_that_passes_the_check_sums_into_a_readable_cost(prompt, completion, logprob):
    response = Response(
        texts=["a"], prompt_tokens=prompt, completion_tokens=completion, logprobs=[TokenLogprobs("a", logprob)]
    )
    if response_problem(response, Request(prompt="Q", sampling=Sampling.make(logprobs=1))) is None:
        assert is_count(prompt) and is_count(completion) and not math.isnan(logprob) and logprob <= 0


def test_run_json_is_never_written_with_a_value_its_reader_refuses(tmp_path):
    folder = RunDir(tmp_path / "run")
    folder.start({"tasks": []}, {}, "h", resume=False)
    before = (tmp_path / "run" / "run.json").read_text()
    with pytest.raises(ValueError, match="not written: its `attempts\\[0\\]` is not an attempt's cost"):
        folder.record_attempt({"id": "a", "prompt_tokens": -5})
    assert (tmp_path / "run" / "run.json").read_text() == before
    folder.close()
    folder.lock.release()


def test_results_json_is_never_written_as_its_reader_would_refuse_it():
    with pytest.raises(ValueError, match="names a task '../x'"):
        results_text(
            Results(
                results={"../x": {}},
                details={"../x": {}},
                counts={},
                complete=True,
                cost={},
                config={"tasks": ["../x"]},
                versions={"ragbench": "0"},
            )
        )
