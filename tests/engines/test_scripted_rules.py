"""A `scripted` rules file is checked as it is read: a rule the engine could not answer with (tool calls of the
wrong shape, log-probs that are none, a key misspelt) is refused before the run in one line naming the file and
the rule, never accepted to fail every example; whatever else a file holds, the engine answers with it."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from test_tool_calls import JSON_VALUES, SEARCH

from conftest import plugins_read_once
from ragbench.api import ConfigError, EngineError
from ragbench.api.engines import Request, Sampling, response_problem
from ragbench.testing import load_engine
from support.helpers import cli_here, popqa_args

REGISTRY = plugins_read_once()  # discovered once (for the session): the property loads an engine per example
RECORD = {"id": "q0", "question": "Who?", "answers": ["A"], "ctxs": [{"id": "d", "title": "T", "text": "t"}]}
CALL = {"id": "call_1", "name": "search", "arguments": {"query": "author"}}
WRONG_CALLS = {
    "not a list": {"name": "search", "arguments": {}},
    "a call that is a text": ["search"],
    "no name": [{"id": "call_1", "arguments": {}}],
    "an empty name": [{**CALL, "name": ""}],
    "arguments a number": [{**CALL, "arguments": 3}],
    "arguments a list": [{**CALL, "arguments": ["author"]}],
    "an id that is a number": [{**CALL, "id": 1}],
    "a misspelt key": [{"id": "call_1", "name": "search", "args": {"query": "author"}}],
    "a function that is a text": [{"id": "call_1", "type": "function", "function": "search"}],
}


def rules_file(tmp_path, rules) -> str:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(rules))
    return str(path)


@pytest.mark.parametrize("calls", WRONG_CALLS.values(), ids=WRONG_CALLS.keys())
def test_a_rules_file_whose_tool_calls_have_the_wrong_shape_is_refused_before_the_run(tmp_path, calls):
    data = tmp_path / "popqa.jsonl"
    data.write_text(json.dumps(RECORD) + "\n")
    rules = rules_file(tmp_path, [{"pattern": "Question", "response": "A"}, {"response": {"tool_calls": calls}}])
    out = tmp_path / "run"
    refused = cli_here(*popqa_args(data, out, "--no-progress", model=f"scripted:{rules}"))
    assert refused.returncode == 2, refused.stderr
    [line] = refused.stderr.splitlines()
    assert line.startswith(f'ragbench: error: scripted rules file {rules}: rule 1: "response": "tool_calls'), line
    assert not out.exists()  # nothing written


def test_a_judge_rules_file_of_the_wrong_shape_is_refused_before_the_run(tmp_path):
    data = tmp_path / "popqa.jsonl"
    data.write_text(json.dumps(RECORD) + "\n")
    rules = rules_file(tmp_path, [{"patern": "Question", "response": "yes"}])
    judged = ("--no-progress", "--metrics", "+llm_judge", "--judge", f"scripted:{rules}")
    refused = cli_here(*popqa_args(data, tmp_path / "run", *judged))
    assert refused.returncode == 2 and refused.stderr.splitlines() == [
        f'ragbench: error: scripted rules file {rules}: rule 0: unknown key "patern"; expected a JSON list of '
        '{"pattern": regex, "response": text or answer object} (docs/engines.md#scripted)'
    ], refused.stderr


def test_a_replay_record_whose_tool_calls_have_the_wrong_shape_is_refused_when_read(tmp_path):
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps({"prompt": "Who?", "tool_calls": [{**CALL, "arguments": 3}]}) + "\n")
    with pytest.raises(ConfigError, match=r'calls.jsonl:1: not a replay record \("tool_calls"\[0\]: "arguments" 3 is'):
        load_engine(f"replay:{path}")


def test_a_well_formed_tool_call_rule_answers_with_its_calls(tmp_path):
    engine = load_engine(
        "scripted:" + rules_file(tmp_path, [{"response": {"tool_calls": [CALL], "response": "Let me look."}}])
    )
    [answer] = engine.generate([Request.chat([{"role": "user", "content": "Who?"}], Sampling(n=2), tools=[SEARCH])])
    assert answer.texts == ["Let me look."] * 2 and answer.finish_reason == "tool_calls"
    assert [call.arguments for calls in answer.choice_tool_calls for call in calls] == [{"query": "author"}] * 2


# --- any file: refused in one line, or answered with -------------------------------------------------------

TOKENS = st.sampled_from(["Yes", " no", "[Relevant]", "b", ""])
LOGPROBS = st.floats(-5, 0.5, allow_nan=False) | JSON_VALUES
CALLS = st.lists(
    st.fixed_dictionaries(
        {},
        optional={
            "id": st.just("call_1") | JSON_VALUES,
            "name": st.sampled_from(["search", ""]) | JSON_VALUES,
            "arguments": st.just({"query": "q"}) | st.text(max_size=6) | JSON_VALUES,
            "type": st.just("function") | JSON_VALUES,
            "function": st.fixed_dictionaries({"name": st.just("search")}, optional={"arguments": JSON_VALUES}),
        },
    ),
    max_size=2,
)
ANSWERS = st.fixed_dictionaries(
    {},
    optional={
        "response": st.sampled_from(["Yes b", "Yes"]) | JSON_VALUES,
        "tool_calls": CALLS | JSON_VALUES,
        "finish_reason": st.sampled_from(["stop", "length", "tool_calls", "eos"]) | JSON_VALUES,
        "tokens": st.lists(TOKENS, max_size=3) | JSON_VALUES,
        "logprobs": st.lists(st.dictionaries(TOKENS, LOGPROBS, max_size=3), max_size=3) | JSON_VALUES,
        "token_ids": st.lists(st.integers(-1, 9) | st.none(), max_size=3) | JSON_VALUES,
        "ranks": st.lists(st.dictionaries(TOKENS, st.integers(-1, 3)), max_size=3) | JSON_VALUES,
        "cumulative_logprob": LOGPROBS,
        "respnse": st.just("typo"),
    },
)
RULES = (
    st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "pattern": st.sampled_from(["", "Who", "(", "^Who"]) | JSON_VALUES,
                "response": st.text(max_size=6) | ANSWERS | JSON_VALUES,
            },
        ),
        max_size=3,
    )
    | JSON_VALUES
)
ASKED = [{"role": "user", "content": "Who wrote it?"}]
SAMPLINGS = [
    Sampling(),
    Sampling(logprobs=2),
    Sampling(logprob_tokens=("[Relevant]", "Yes"), logprob_window=2),
    Sampling(max_tokens=1, stop=["b"]),
    Sampling(n=2),
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rules=RULES)
@example(rules=[{"response": {"tool_calls": [{"name": "search"}], "tokens": ["a"], "logprobs": [{"a": 0}]}}])
def test_any_rules_file_is_refused_in_one_line_or_answers_every_request(tmp_path, rules):
    path = rules_file(tmp_path, rules)
    try:
        engine = load_engine(f"scripted:{path}", registry=REGISTRY)
    except ConfigError as exc:
        [line] = str(exc).splitlines()
        assert line.startswith(f"scripted rules file {path}: ")
        assert not isinstance(rules, list) or " rule " in line
        return
    requests = [Request.chat(ASKED, sampling, tools=[SEARCH]) for sampling in SAMPLINGS]
    for request, answer in zip(requests, engine.generate(requests)):
        if isinstance(answer, EngineError):
            assert str(answer).startswith("no scripted rule matches"), answer  # a file without a default rule
        else:
            assert response_problem(answer, request) is None, (rules, request.sampling)
