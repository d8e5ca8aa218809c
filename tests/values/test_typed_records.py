"""The TypedDicts that name the shapes of records and messages (instead of `dict[str, Any]`) hold what the code
writes and what its checks accept: a type that claimed more would let mypy pass code that fails on real data."""

from __future__ import annotations

import json
import types
import typing

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import write_jsonl
from ragbench._engines.answer_records import ANSWER_FIELDS, AnswerRecord, RecordedRequest, record_problem
from ragbench._engines.batches.store import BatchRecord, BatchStore
from ragbench._engines.chat_messages import ChatMessage, chat_messages
from ragbench._replay.recording import CallRecorder
from ragbench._retrieval.replay import RecordedSearch
from ragbench._values.response_checks import FINISH_REASONS
from ragbench.api import ConfigError, Document
from ragbench.api.data import JsonObject, JsonValue
from ragbench.api.engines import Request, Sampling
from ragbench.testing import load_engine

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 3) | st.floats(-3, 1, allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=6,
)


def _json(value: object) -> bool:
    if value is None or isinstance(value, (str, bool, int, float)):
        return True
    if isinstance(value, list):
        return all(_json(item) for item in value)
    return isinstance(value, dict) and all(isinstance(key, str) and _json(item) for key, item in value.items())


def conforms(value: object, hint: typing.Any) -> bool:
    """Whether `value` is of type `hint`: a TypedDict (its required keys, no other keys than its own), a union,
    list[X], dict[K, V], a class (a bool is no number), or JsonValue (a forward reference inside JsonObject)."""
    if isinstance(hint, typing.ForwardRef):
        return _json(value)
    if typing.is_typeddict(hint):
        hints = typing.get_type_hints(hint, localns={"JsonValue": JsonValue, "JsonObject": JsonObject})
        return (
            isinstance(value, dict)
            and hint.__required_keys__ <= value.keys() <= hints.keys()
            and all(conforms(item, hints[key]) for key, item in value.items())
        )
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return any(conforms(value, arg) for arg in args)
    if origin is list:
        return isinstance(value, list) and all(conforms(item, args[0]) for item in value)
    if origin is dict:
        return isinstance(value, dict) and all(conforms(k, args[0]) and conforms(v, args[1]) for k, v in value.items())
    if hint is type(None):
        return value is None
    if hint in (int, float):
        return isinstance(value, (int, hint)) and not isinstance(value, bool)
    return isinstance(value, hint)


@st.composite
def answer_records(draw: st.DrawFn) -> dict[str, object]:
    """Records of the answer fields: each field well formed or any JSON value, so some pass the check."""
    tokens = draw(st.lists(st.sampled_from(["a", "b", " c"]), min_size=1, max_size=3))
    call = st.fixed_dictionaries(
        {"id": st.text(max_size=2), "name": st.sampled_from(["f", "g"]), "arguments": st.text(max_size=3) | JSON}
    )
    well_formed = {
        "response": st.text(max_size=3) | st.lists(st.text(max_size=3), max_size=2),
        "tool_calls": st.none() | st.lists(call, max_size=2),
        "finish_reason": st.none() | st.sampled_from(FINISH_REASONS),
        "tokens": st.just(tokens),
        "logprobs": st.just([{token: -0.5} for token in tokens]),
        "token_ids": st.none() | st.lists(st.none() | st.integers(0, 9), min_size=len(tokens), max_size=len(tokens)),
        "ranks": st.none() | st.just([{token: 0} for token in tokens]),
        "cumulative_logprob": st.floats(-5, 0),
    }
    keys = draw(st.lists(st.sampled_from(ANSWER_FIELDS), unique=True))
    return {key: draw(well_formed[key] | JSON) for key in keys}


@settings(max_examples=200, deadline=None)
@given(answer_records())
def test_a_record_the_answer_check_accepts_is_an_answer_record(record):
    if record_problem(record) is None:
        assert conforms(record, AnswerRecord), record


def test_a_replay_record_whose_response_is_no_text_is_refused_when_the_file_is_read(tmp_path):
    path = write_jsonl(tmp_path / "calls.jsonl", [{"prompt": "q", "response": "a"}, {"prompt": "r", "response": 5}])
    with pytest.raises(ConfigError, match=r'calls.jsonl:2: not a replay record \("response" 5 is not a text or a'):
        load_engine(f"replay:{path}")


@st.composite
def messages(draw: st.DrawFn) -> dict[str, object]:
    role = draw(st.sampled_from(["system", "user", "assistant", "tool"]))
    message: dict[str, object] = {"role": role, "content": draw(st.none() | st.text(max_size=5))}
    if role == "assistant" and draw(st.booleans()):
        function = st.fixed_dictionaries({"name": st.sampled_from(["f", "g"]), "arguments": st.text(max_size=5)})
        call = st.fixed_dictionaries({"id": st.text(max_size=3), "type": st.just("function"), "function": function})
        message["tool_calls"] = draw(st.lists(call, min_size=1, max_size=2))
    if role == "assistant" and draw(st.booleans()):
        message["items"] = draw(st.lists(JSON, max_size=2))
    if role == "tool":
        message["tool_call_id"] = draw(st.text(max_size=3))
    return message


@settings(max_examples=150, deadline=None)
@given(st.lists(messages(), min_size=1, max_size=4), st.text(max_size=5))
def test_a_request_s_turns_are_chat_messages_and_its_record_a_recorded_request(given_messages, prompt):
    chat = Request.chat(given_messages, Sampling(stop=("\n",), logprob_tokens=("a",)))
    assert all(conforms(turn, ChatMessage) for turn in chat_messages(chat))
    assert chat_messages(Request(prompt=prompt)) == [{"role": "user", "content": prompt}]
    for request in (chat, Request(prompt=prompt)):
        assert conforms(json.loads(json.dumps(request.to_dict())), RecordedRequest)


def test_a_batch_record_is_what_batch_record_says(tmp_path):
    store = BatchStore("openai:m", tmp_path)
    store.load()
    batch = store.intend("https://api.example", "/v1/chat/completions", ["c1", "c2"])
    store.created(batch, "batch_1")
    store.ended(batch, ['{"custom_id": "c1"}', '{"custom_id": "c2"}'], failed="expired")
    [record_file] = (tmp_path / "batches").glob("*.json")
    record = json.loads(record_file.read_text(encoding="utf-8"))
    assert conforms(record, BatchRecord) and record["failed"] == "expired" and record["ended"] is True


def test_a_recorded_search_is_what_recorded_search_says(tmp_path):
    recorder = CallRecorder(tmp_path)
    docs = [Document(id="d1", title="T", text="x", score=1.5), Document(id=None, title="", text="y")]
    recorder.retrieval("bm25", "q", 2, docs, carry_docs=True, example="e1")
    recorder.close()
    [line] = (tmp_path / "retrieval.jsonl").read_text(encoding="utf-8").splitlines()
    assert conforms(json.loads(line), RecordedSearch)
