"""`Sampling.frequency_penalty` / `presence_penalty` (OpenAI's; castorini's umbrela sends 0.5 and 0): sent as given
where a request sets them, absent otherwise, keyed in the cache only where set, and refused outside -2..2."""

from __future__ import annotations

import hashlib
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_engine_openai import FAST, FakeServer, chat, generate

from ragbench.api.engines import Request, Sampling
from ragbench.testing import load_engine

PENALTIES = ("frequency_penalty", "presence_penalty")


@pytest.fixture
def server():
    fake = FakeServer()
    yield fake
    fake.stop()


def test_a_request_without_penalties_keeps_its_cache_key_and_its_dict():
    sampling = Sampling.make(max_tokens=50)
    request = Request(prompt="hi", sampling=sampling)
    # the key every request had before the penalties were fields
    assert request.cache_key("e") == hashlib.sha256(repr(("e", "hi", None, sampling)).encode()).hexdigest()
    assert not set(PENALTIES) & set(request.to_dict()["sampling"])
    keys = {
        Request(prompt="hi", sampling=Sampling.make(max_tokens=50, **penalties)).cache_key("e")
        for penalties in ({}, {"frequency_penalty": 0.5}, {"presence_penalty": 0}, {"presence_penalty": 0.0})
    }
    assert len(keys) == 4  # each a different body (0 is sent as 0, 0.0 as 0.0)
    penalized = Request(prompt="hi", sampling=Sampling.make(frequency_penalty=0.5, presence_penalty=0))
    assert {name: penalized.to_dict()["sampling"][name] for name in PENALTIES} == {
        "frequency_penalty": 0.5,
        "presence_penalty": 0,
    }


@given(
    name=st.sampled_from(PENALTIES),
    value=st.one_of(st.integers(-2, 2), st.floats(-2, 2, allow_nan=False)),
)
def test_a_penalty_from_minus_2_to_2_is_kept_as_given(name, value):
    kept = getattr(Sampling.make(**{name: value}), name)
    assert kept == value and type(kept) is type(value)


@given(
    name=st.sampled_from(PENALTIES),
    value=st.one_of(
        st.floats().filter(lambda x: math.isnan(x) or abs(x) > 2),
        st.integers().filter(lambda x: abs(x) > 2),
        st.booleans(),
        st.text(),
    ),
)
def test_a_penalty_outside_minus_2_to_2_or_no_number_is_refused_naming_it(name, value):
    with pytest.raises(TypeError, match=f"{name}: .*a number from -2 to 2"):
        Sampling.make(**{name: value})


@pytest.mark.parametrize("mode", ["chat", "completion"])
def test_the_openai_engine_sends_the_penalties_a_request_sets_as_given_and_no_others(server, mode):
    engine = load_engine("openai:m", base_url=server.base_url, **FAST)
    for penalties in ({"frequency_penalty": 0.5, "presence_penalty": 0}, {"presence_penalty": -1.5}, {}):
        request = chat(**penalties) if mode == "chat" else Request(prompt="hi", sampling=Sampling.make(**penalties))
        generate(engine, request)
        body = server.requests[-1]["body"]
        assert {name: body[name] for name in PENALTIES if name in body} == penalties
        assert [type(body[name]) for name in penalties] == [type(value) for value in penalties.values()]
    assert '"presence_penalty": 0,' in json.dumps(server.requests[0]["body"], sort_keys=True)  # the int, not 0.0


def test_an_openai_engine_option_naming_a_penalty_replaces_the_requests_value(server):
    engine = load_engine("openai:m", base_url=server.base_url, frequency_penalty=0.7, **FAST)
    generate(engine, chat(frequency_penalty=0.5, presence_penalty=0))
    body = server.requests[0]["body"]
    assert (body["frequency_penalty"], body["presence_penalty"]) == (0.7, 0)
    assert "frequency_penalty=0.7" in engine.engine_id  # and so it keys the cache


def test_top_k_and_min_p_are_in_the_cache_key_and_the_openai_body_only_where_set(server):
    keys = {
        Request(prompt="hi", sampling=Sampling.make(max_tokens=50, **cutoffs)).cache_key("e")
        for cutoffs in ({}, {"top_k": 20}, {"min_p": 0.0}, {"min_p": 0})
    }
    assert len(keys) == 4
    engine = load_engine("openai:m", base_url=server.base_url, **FAST)
    generate(engine, chat(top_k=20, min_p=0.0))
    generate(engine, chat())
    cut, plain = (request["body"] for request in server.requests)
    assert (cut["top_k"], cut["min_p"]) == (20, 0.0) and '"min_p": 0.0' in json.dumps(cut)
    assert not {"top_k", "min_p"} & set(plain)
