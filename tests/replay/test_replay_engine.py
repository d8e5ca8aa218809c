"""The replay engine answers recorded calls exactly and explains misses."""

from __future__ import annotations

import pytest

from conftest import write_jsonl
from ragbench.api import ConfigError, EngineError
from ragbench.api.engines import Request, Sampling
from ragbench.testing import load_engine


@pytest.fixture
def calls(tmp_path):
    return write_jsonl(
        tmp_path / "calls.jsonl",
        [
            {"messages": [{"role": "user", "content": "Is it true?"}], "response": "yes"},
            {"prompt": "Capital of France?", "response": "Paris"},
            {"prompt": "Capital of France?", "sampling": {"temperature": 0.7}, "response": "Lyon"},
            {"prompt": "Broken call", "error": "timeout"},
        ],
    )


def test_chat_and_completion_calls_are_looked_up_exactly(calls):
    engine = load_engine(f"replay:{calls}")
    chat = Request.chat([{"role": "user", "content": "Is it true?"}])
    out = engine.generate([chat, Request(prompt="Capital of France?")])
    assert [r.text for r in out] == ["yes", "Paris"]


def test_sampling_is_ignored_unless_the_line_gives_it(calls):
    engine = load_engine(f"replay:{calls}")
    [plain] = engine.generate([Request(prompt="Capital of France?", sampling=Sampling(max_tokens=3))])
    [hot] = engine.generate([Request(prompt="Capital of France?", sampling=Sampling(temperature=0.7))])
    assert plain.text == "Paris" and hot.text == "Paris"  # the first line matching wins
    engine.records["Capital of France?"].reverse()
    [hot] = engine.generate([Request(prompt="Capital of France?", sampling=Sampling(temperature=0.7))])
    [cold] = engine.generate([Request(prompt="Capital of France?")])
    assert hot.text == "Lyon" and cold.text == "Paris"


def test_recorded_errors_replay_as_failures(calls):
    [failed] = load_engine(f"replay:{calls}").generate([Request(prompt="Broken call")])
    assert isinstance(failed, EngineError) and "timeout" in str(failed)


def test_a_miss_shows_the_nearest_recorded_request(calls):
    [miss] = load_engine(f"replay:{calls}").generate([Request(prompt="Capital of Frence?")])
    assert isinstance(miss, EngineError)
    assert 'nearest recorded request: "Capital of France?"' in str(miss)


def test_a_bad_replay_line_is_a_config_error_naming_the_line(tmp_path):
    path = write_jsonl(tmp_path / "bad.jsonl", [{"prompt": "x", "response": "y"}, {"prompt": "no answer"}])
    with pytest.raises(ConfigError, match=r"bad.jsonl:2: not a replay record"):
        load_engine(f"replay:{path}")


def test_a_response_dict_has_every_field_but_cached_and_reads_back():
    """Response.to_dict is written field by field (for speed): it must stay what asdict gives."""
    from dataclasses import asdict

    from ragbench.api.engines import Response, TokenLogprobs

    response = Response(
        texts=["a", "b"],
        logprobs=[TokenLogprobs("x", -1.0, {"y": -2.0}, {"z": -3.0}, 5)],
        prompt_tokens=3,
        completion_tokens=1,
        finish_reason="length",
        cumulative_logprob=-1.0,
        token_ids=[5, 2],
    )
    expected = asdict(response)
    expected.pop("cached")
    expected.pop("choice_tool_calls")  # written as "tool_calls" (the OpenAI form) only by an answer to a tool request
    expected.pop("items")  # written only by an answer over the Responses API
    expected.pop("content_parts")  # written only by a chat answer whose content was a list of content parts
    for count in ("cached_prompt_tokens", "cache_write_tokens", "cache_write_1h_tokens"):
        expected.pop(count)  # 0 here: written only where the vendor's prompt cache served or stored tokens
    assert response.to_dict() == expected and list(response.to_dict()) == list(expected)
    assert Response.from_dict(response.to_dict()) == response
    cached = Response(
        texts=["a"], prompt_tokens=9, cached_prompt_tokens=4, cache_write_tokens=3, cache_write_1h_tokens=1
    )
    assert {k: cached.to_dict()[k] for k in ("cached_prompt_tokens", "cache_write_tokens", "cache_write_1h_tokens")} == {
        "cached_prompt_tokens": 4, "cache_write_tokens": 3, "cache_write_1h_tokens": 1
    }  # fmt: skip
    assert Response.from_dict(cached.to_dict()) == cached
    in_parts = Response(texts=["a"], content_parts='[{"type": "text", "text": "a"}]')
    assert Response.from_dict(in_parts.to_dict()) == in_parts
    # an engine that sees no token ids (openai, scripted, replay) writes none: its cached answers stay as they were
    without_ids = Response(texts=["a"])
    assert "token_ids" not in without_ids.to_dict() and Response.from_dict(without_ids.to_dict()) == without_ids
