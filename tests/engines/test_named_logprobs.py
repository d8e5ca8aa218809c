"""Named-token log-probabilities (Sampling.logprob_tokens) on the scripted, replay and hf engines."""

from __future__ import annotations

import json
import math

import pytest

from ragbench.api import ConfigError, EngineError
from ragbench.api.engines import Request, Sampling
from ragbench.testing import load_engine

NAMED = ("[Relevant]", "[Irrelevant]", "[Fully supported]")
RECORD = {
    "prompt": "Q",
    "response": "[Relevant]Paris[Fully supported]",
    "tokens": ["[Relevant]", "Paris", "[Fully supported]"],
    "logprobs": [
        {"[Relevant]": -0.1, "[Irrelevant]": -2.5, "The": -4.0},
        {"Paris": -0.2, "London": -1.9},
        {"[Fully supported]": -0.3, "[Partially supported]": -1.4},
    ],
    "token_ids": [32004, 3681, 32012],
    "cumulative_logprob": -0.6,
}


def request(**sampling) -> Request:
    return Request(prompt="Q", sampling=Sampling.make(**sampling))


def test_replay_answers_named_tokens_per_position_without_the_whole_dicts(tmp_path):
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps(RECORD) + "\n")
    response = load_engine(f"replay:{path}").generate([request(logprob_tokens=NAMED)])[0]
    assert response.text == RECORD["response"] and response.cumulative_logprob == -0.6
    assert [t.named for t in response.logprobs] == [
        {"[Relevant]": -0.1, "[Irrelevant]": -2.5},
        {},
        {"[Fully supported]": -0.3},
    ]
    assert [t.token_id for t in response.logprobs] == [32004, 3681, 32012]
    assert all(t.top == {} for t in response.logprobs)  # no top-k asked: no dicts kept
    top = load_engine(f"replay:{path}").generate([request(logprobs=1)])[0]
    assert [t.top for t in top.logprobs] == [{"[Relevant]": -0.1}, {"Paris": -0.2}, {"[Fully supported]": -0.3}]
    plain = load_engine(f"replay:{path}").generate([request()])[0]
    assert plain.logprobs is None and plain.text == RECORD["response"]


def test_replay_cumulative_logprob_defaults_to_the_sum(tmp_path):
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps({k: v for k, v in RECORD.items() if k != "cumulative_logprob"}) + "\n")
    response = load_engine(f"replay:{path}").generate([request(logprob_tokens=NAMED)])[0]
    assert response.cumulative_logprob == pytest.approx(-0.6)


def test_replay_rejects_a_record_whose_chosen_token_has_no_logprob(tmp_path):
    bad = dict(RECORD, logprobs=[{"x": -1.0}, {"Paris": -0.2}, {"[Fully supported]": -0.3}])
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps(bad) + "\n")
    with pytest.raises(ConfigError, match=r"calls.jsonl:1: .*logprobs\"?\[0\]"):
        load_engine(f"replay:{path}")


def test_scripted_dict_answers_carry_token_data_and_text_answers_are_certain():
    engine = load_engine("scripted:t", script=lambda r: dict(RECORD) if r.prompt == "Q" else "[Relevant] Paris is big")
    scripted = engine.generate([request(logprob_tokens=NAMED)])[0]
    assert scripted.logprobs[0].named == {"[Relevant]": -0.1, "[Irrelevant]": -2.5}
    certain = engine.generate([Request(prompt="other", sampling=Sampling.make(logprob_tokens=NAMED))])[0]
    assert [t.token for t in certain.logprobs] == ["[Relevant]", " Paris", " is", " big"]
    assert certain.logprobs[0].named == {"[Relevant]": 0.0} and certain.logprobs[1].named == {}
    assert certain.cumulative_logprob == 0.0
    bad = load_engine("scripted:t", script=lambda r: {"response": "x", "tokens": ["x"], "logprobs": [{}]})
    assert isinstance(bad.generate([request(logprob_tokens=NAMED)])[0], EngineError)


@pytest.mark.model
def test_hf_named_logprobs_match_the_logits_and_unknown_tokens_fail_clearly():
    pytest.importorskip("torch")

    engine = load_engine("hf:embedded")
    named = ("Paris", "London")
    assert all(engine.token_id(t) is not None for t in named)
    response = engine.generate(
        [
            Request(
                prompt="The capital of France is",
                sampling=Sampling.make(max_tokens=3, logprobs=5, logprob_tokens=named),
            )
        ]
    )[0]
    assert len(response.logprobs) == response.completion_tokens
    for position in response.logprobs:
        assert set(position.named) == set(named) and position.token_id is not None
        for token, value in position.named.items():
            if token in position.top:
                assert value == pytest.approx(position.top[token], abs=1e-6)
        assert all(v <= 0 for v in position.named.values())
    assert response.cumulative_logprob == pytest.approx(sum(t.logprob for t in response.logprobs))
    assert math.isfinite(response.cumulative_logprob)
    failed = engine.generate(
        [Request(prompt="x", sampling=Sampling.make(max_tokens=2, logprob_tokens=("[Relevant]",)))]
    )[0]
    assert isinstance(failed, EngineError) and "[Relevant]" in str(failed) and "vocabulary" in str(failed)


def test_openai_asks_the_top_20_and_reports_the_named_tokens_found_there():
    from test_engine_openai import FAST, FakeServer, generate

    server = FakeServer()
    try:
        engine = load_engine("openai:m", base_url=server.base_url, **FAST)
        response = generate(engine, Request(prompt="Q", sampling=Sampling.make(logprob_tokens=(" London", "!", "x"))))
        assert server.requests[-1]["body"]["logprobs"] == 20
        assert [t.named for t in response.logprobs] == [{" London": -2.5}, {"!": -1.5}]
        assert all(t.top == {} and t.token_id is None for t in response.logprobs)
        assert response.cumulative_logprob == pytest.approx(-0.625)
        chat = Request.chat([{"role": "user", "content": "x"}], Sampling.make(logprobs=1, logprob_tokens=("Lon",)))
        response = generate(load_engine("openai:m", base_url=server.base_url, **FAST), chat)
        assert server.requests[-1]["body"]["top_logprobs"] == 20
        assert response.logprobs[0].named == {"Lon": -1.75} and response.logprobs[0].top == {"Par": -0.25}
    finally:
        server.stop()
