"""The `gemini` engine: Google's own SDK (google-genai) against a fake Gemini API server on 127.0.0.1 (no
network): requests map onto contents and config, answers (text, function calls, finish reasons, usage) back into
Responses, ragbench's retries and failures behave as the openai engine's, and the key stays out of everything
shown."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_engine_anthropic import CALLED, reply
from test_engine_openai import FAST, FakeServer, chat, generate
from test_engine_openai_tools import SEARCH

from conftest import needs
from ragbench.api import ConfigError, EngineError
from ragbench.api.engines import Engine, Request, RequestError, Sampling
from ragbench.testing import load_engine

pytestmark = needs("google.genai")

KEY_ENV = "RAGBENCH_TEST_GEMINI_KEY"
SECRET = "AIzaTEST-Zq9SECRETvalue0123456789abcd"


def answer(parts: list[dict[str, Any]], finish: str = "STOP", **extra: Any) -> dict[str, Any]:
    return {
        "candidates": [{"index": 0, "content": {"role": "model", "parts": parts}, "finishReason": finish}],
        "usageMetadata": {"promptTokenCount": 11, "candidatesTokenCount": 3, "thoughtsTokenCount": 2},
        "modelVersion": "gemini-test",
        **extra,
    }


def echo(path: str, body: dict[str, Any]) -> dict[str, Any]:
    last = body["contents"][-1]["parts"][0]
    return answer([{"text": f"echo: {last.get('text', json.dumps(last))}"}])


@pytest.fixture
def server():
    fake = FakeServer(answer=echo)
    yield fake
    fake.stop()


@pytest.fixture(autouse=True)
def no_ambient_gemini_env(monkeypatch):
    for name in ("GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", KEY_ENV):
        monkeypatch.delenv(name, raising=False)


def engine(server: FakeServer, **options: Any) -> Engine:
    return load_engine("gemini:gemini-test", base_url=server.base_url.removesuffix("/v1"), **{**FAST, **options})


def error(status: int, message: str, **headers: str) -> dict[str, Any]:
    return reply({"error": {"code": status, "message": message, "status": "TEST"}}, status, **headers)


# -- request mapping ------------------------------------------------------------------------


def test_chat_request_maps_onto_contents_and_generation_config(server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, SECRET)
    generate(
        engine(server, api_key_env=KEY_ENV),
        chat(max_tokens=7, temperature=0.5, top_p=0.9, stop=["\n"], seed=3, n=2, json_mode=True),
    )
    [got] = server.requests
    assert got["path"] == "/v1beta/models/gemini-test:generateContent"
    assert {name.lower(): value for name, value in got["headers"].items()}["x-goog-api-key"] == SECRET
    body = got["body"]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Capital of France?"}]}]
    assert body["systemInstruction"]["parts"] == [{"text": "Be brief."}]
    assert body["generationConfig"] == {
        "maxOutputTokens": 7,
        "temperature": 0.5,
        "topP": 0.9,
        "stopSequences": ["\n"],
        "candidateCount": 2,
        "seed": 3,
        "responseMimeType": "application/json",
    }


def test_what_a_request_leaves_to_the_server_is_not_sent(server):
    """DeepResearch Bench's google-genai calls send no token limit, temperature, top_p or seed (a seed a judge's
    repeat is given included): the config holds none of them."""
    left = ("max_tokens", "temperature", "top_p", "seed")
    generate(engine(server), chat(max_tokens=7, temperature=0.5, top_p=0.9, seed=3, left_to_server=left))
    assert not server.requests[0]["body"].get("generationConfig")  # absent, or {} as google-genai may send it


def test_a_prompt_is_one_user_turn(server):
    generate(engine(server), Request(prompt="Say hi", sampling=Sampling(max_tokens=5)))
    body = server.requests[0]["body"]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Say hi"}]}]
    assert "systemInstruction" not in body


def test_extra_model_args_are_config_fields_and_key_the_cache(server):
    plain, topk = engine(server), engine(server, top_k=40)
    generate(topk, chat())
    assert server.requests[0]["body"]["generationConfig"]["topK"] == 40
    assert plain.engine_id != topk.engine_id and "top_k=40" in topk.engine_id


def test_penalties_a_request_sets_are_config_fields_and_an_option_naming_one_replaces_it(server):
    generate(engine(server), chat(frequency_penalty=0.5, presence_penalty=0))
    generate(engine(server, presence_penalty=1.5), chat(frequency_penalty=0.5, presence_penalty=0))
    generate(engine(server), chat())
    penalized, replaced, plain = (request["body"]["generationConfig"] for request in server.requests)
    assert (penalized["frequencyPenalty"], penalized["presencePenalty"]) == (0.5, 0)
    assert (replaced["frequencyPenalty"], replaced["presencePenalty"]) == (0.5, 1.5)
    assert not {"frequencyPenalty", "presencePenalty"} & set(plain)


def test_an_option_that_is_no_config_field_is_refused_in_one_line():
    with pytest.raises(ConfigError, match="frobnicate: neither an option of the engine nor a field"):
        load_engine("gemini:m", frobnicate=1)
    with pytest.raises(ConfigError, match="stop_sequences"):
        load_engine("gemini:m", stop_sequences=["x"])


def test_logprobs_are_a_request_fault():
    with pytest.raises(RequestError, match="log-probs"):
        generate(load_engine("gemini:m", base_url="http://127.0.0.1:9"), chat(logprobs=2))


# -- tools ----------------------------------------------------------------------------------


def test_tools_tool_choice_and_tool_turns_go_out_in_gemini_form(server):
    generate(engine(server), Request.chat(CALLED, tools=[SEARCH], tool_choice="search"))
    body = server.requests[0]["body"]
    [[declaration]] = [tool["functionDeclarations"] for tool in body["tools"]]
    schema = declaration.pop("parametersJsonSchema", None) or declaration.pop(
        "parameters_json_schema"
    )  # as the SDK names it
    assert declaration == {"name": "search", "description": "Search."}
    assert schema == SEARCH["function"]["parameters"]
    assert body["toolConfig"] == {"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["search"]}}
    assert body["contents"][1:] == [
        {
            "role": "model",
            "parts": [
                {"text": "Let me look."},
                {"functionCall": {"id": "toolu_0", "name": "search", "args": {"query": "a"}}},
                {"functionCall": {"id": "toolu_1", "name": "search", "args": {"query": "b"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"id": "toolu_0", "name": "search", "response": {"result": "[1] Ann"}}},
                {"functionResponse": {"id": "toolu_1", "name": "search", "response": {"result": "[2] Bob"}}},
            ],
        },
    ]


@pytest.mark.parametrize(("choice", "mode"), [("auto", "AUTO"), ("none", "NONE"), ("required", "ANY")])
def test_tool_choices_map_onto_function_calling_modes(server, choice, mode):
    generate(engine(server), Request.chat(CALLED[:1], tools=[SEARCH], tool_choice=choice))
    assert server.requests[0]["body"]["toolConfig"] == {"functionCallingConfig": {"mode": mode}}


def test_function_calls_come_back_as_tool_calls_with_stable_ids(server):
    parts = [{"text": "Searching."}, {"functionCall": {"name": "search", "args": {"query": "Ann é"}}}]
    server.then(reply(answer(parts)), reply(answer(parts)))
    first = generate(engine(server), Request.chat(CALLED[:1], tools=[SEARCH]))
    again = generate(engine(server), Request.chat(CALLED[:1], tools=[SEARCH]))
    assert first.text == "Searching." and first.finish_reason == "tool_calls"
    [call] = first.tool_calls
    assert (call.name, call.arguments) == ("search", {"query": "Ann é"})
    assert call.id and again.tool_calls[0].id == call.id


def test_an_id_the_api_gives_is_kept(server):
    server.then(reply(answer([{"functionCall": {"id": "fc_7", "name": "search", "args": {}}}])))
    assert generate(engine(server), Request.chat(CALLED[:1], tools=[SEARCH])).tool_calls[0].id == "fc_7"


def test_thought_signatures_are_kept_as_items_and_sent_back_as_they_were(server):
    parts = [
        {"text": "Plan.", "thought": True},
        {"functionCall": {"id": "fc_1", "name": "search", "args": {"query": "x"}}, "thoughtSignature": "c2lnbmF0dXJl"},
    ]
    server.then(reply(answer(parts)))
    first = generate(engine(server), Request.chat(CALLED[:1], tools=[SEARCH]))
    assert first.text == ""  # thoughts are not the answer
    turn = {"role": "assistant", "content": "", "tool_calls": [first.tool_calls[0].to_dict()], "items": first.items}
    result = {"role": "tool", "tool_call_id": "fc_1", "content": "found"}
    generate(engine(server), Request.chat([*CALLED[:1], turn, result], tools=[SEARCH]))
    assert server.requests[1]["body"]["contents"][1] == {"role": "model", "parts": parts}


def test_a_tool_result_answering_no_call_is_a_request_fault(server):
    with pytest.raises(RequestError, match="answers no call"):
        generate(engine(server), Request.chat([CALLED[0], CALLED[2]]))
    assert server.requests == []


# -- answers --------------------------------------------------------------------------------


def test_text_usage_and_finish_reason_are_read(server):
    response = generate(engine(server), chat())
    assert response.text == "echo: Capital of France?"
    assert (response.prompt_tokens, response.completion_tokens) == (11, 5)  # thoughts are output tokens
    assert response.finish_reason == "stop" and response.choice_tool_calls is None


@pytest.mark.parametrize(("reason", "finish"), [("MAX_TOKENS", "length"), ("SAFETY", "content_filter")])
def test_finish_reasons_map(server, reason, finish):
    server.then(reply(answer([{"text": "x"}], reason)))
    assert generate(engine(server), chat()).finish_reason == finish


def test_a_blocked_prompt_is_an_empty_content_filter_answer(server):
    server.then(reply({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 4}}))
    response = generate(engine(server), chat())
    assert (response.text, response.finish_reason, response.prompt_tokens) == ("", "content_filter", 4)


def test_keep_stop_appends_the_first_stop_string(server):
    server.then(reply(answer([{"text": "Paris"}])))
    assert generate(engine(server), chat(stop=["\n", "###"], keep_stop=True)).text == "Paris\n"


# -- retries and failures -------------------------------------------------------------------


@pytest.mark.parametrize("body", ["<html>proxy</html>", {"unexpected": [1]}])
def test_a_200_whose_body_is_no_answer_is_retried(server, body):
    server.then(reply(body.encode() if isinstance(body, str) else body))
    assert generate(engine(server), chat()).text == "echo: Capital of France?"
    assert len(server.requests) == 2


@pytest.mark.parametrize("failure", [{"drop": True}, {"truncate": True}])
def test_a_dropped_connection_is_retried(server, failure):
    server.then(failure)
    assert generate(engine(server), chat()).text == "echo: Capital of France?"


def test_negative_thoughts_tokens_are_retried_as_unreadable_never_priced(server):
    """The issue's case: `thoughtsTokenCount: -5` summed into the output tokens."""
    damaged = answer([{"text": "x"}])
    damaged["usageMetadata"]["thoughtsTokenCount"] = -5
    server.then(reply(damaged))
    response = generate(engine(server), chat())
    assert len(server.requests) == 2 and response.completion_tokens == 5  # the retry's answer, priced right
    server.then(*[reply(damaged)] * 3)
    with pytest.raises(EngineError, match=r"unreadable response .*thoughts_token_count -5 .*\(3 attempts\)"):
        generate(engine(server, max_retries=2), chat())


def test_a_call_sent_back_whose_arguments_are_no_object_goes_with_empty_args(server):
    bad = {
        **CALLED[1],
        "tool_calls": [{**CALLED[1]["tool_calls"][0], "function": {"name": "search", "arguments": '"x"'}}],
    }
    generate(engine(server), Request.chat([CALLED[0], bad, CALLED[2]], tools=[SEARCH]))
    assert server.requests[0]["body"]["contents"][1]["parts"][1] == {
        "functionCall": {"id": "toolu_0", "name": "search", "args": {}}
    }
