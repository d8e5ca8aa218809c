"""`Sampling.json_schema` (the json_schema `response_format` DRAGUN's AutoJudge sends): sent by the openai engine
in a chat request as given, absent otherwise, and keyed in the cache and the request's dict only where set."""

from __future__ import annotations

import hashlib
import json

import pytest
from test_engine_openai import FAST, FakeServer, chat, generate

from ragbench.api.engines import Request, Sampling
from ragbench.testing import load_engine

SCHEMA = {"name": "verdict", "schema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}


@pytest.fixture
def server():
    fake = FakeServer()
    yield fake
    fake.stop()


def test_a_request_without_a_schema_keeps_its_cache_key_and_its_dict_and_one_with_it_is_keyed_apart():
    plain = Request(prompt="hi", sampling=Sampling.make(max_tokens=50))
    assert plain.cache_key("e") == hashlib.sha256(repr(("e", "hi", None, plain.sampling)).encode()).hexdigest()
    assert "json_schema" not in plain.to_dict()["sampling"]
    asked = Request(prompt="hi", sampling=Sampling.make(max_tokens=50, json_schema=json.dumps(SCHEMA)))
    other = Request(prompt="hi", sampling=Sampling.make(max_tokens=50, json_schema=json.dumps({"name": "x"})))
    assert len({plain.cache_key("e"), asked.cache_key("e"), other.cache_key("e")}) == 3
    assert asked.to_dict()["sampling"]["json_schema"] == json.dumps(SCHEMA)


def test_the_openai_engine_sends_the_schema_as_response_format_in_a_chat_request_and_nowhere_else(server):
    engine = load_engine("openai:m", base_url=server.base_url, **FAST)
    generate(engine, chat(json_schema=json.dumps(SCHEMA)))
    assert server.requests[-1]["body"]["response_format"] == {"type": "json_schema", "json_schema": SCHEMA}
    generate(engine, chat())
    assert "response_format" not in server.requests[-1]["body"]
    generate(engine, Request(prompt="hi", sampling=Sampling.make(json_schema=json.dumps(SCHEMA))))  # completions
    assert "response_format" not in server.requests[-1]["body"]
