"""Spans read as an example's steps in both conventions LLM frameworks trace in - OpenInference's attributes and
OpenTelemetry's GenAI semantic conventions (its retrieval span included) - and the model calls priced by the price
table: an application's provider's list price only where its spans say the call went to that provider's API."""

from __future__ import annotations

import json

import pytest

from ragbench._apps.conventions import span_outline, span_steps
from ragbench._apps.spans import Span
from ragbench._apps.trace_reading import trace_answer, trace_passages
from ragbench._config.judging import RunJudging
from ragbench._config.models import RunModels
from ragbench._cost.prices import ModelPrices
from ragbench._cost.token_usage import TokenUsage


def span(name, attributes, span_id="a" * 16, parent=None, start=0, status="UNSET", message=""):
    return Span(
        "t" * 32,
        span_id,
        parent,
        name,
        start,
        start + 2_000_000,
        attributes=attributes,
        status=status,
        status_message=message,
    )


GENAI_CHAT = {
    "gen_ai.operation.name": "chat",
    "gen_ai.provider.name": "openai",
    "server.address": "api.openai.com",
    "gen_ai.request.model": "gpt-4o-mini",
    "gen_ai.response.model": "gpt-4o-mini-2024-07-18",
    "gen_ai.usage.input_tokens": 120,
    "gen_ai.usage.output_tokens": 8,
    "gen_ai.usage.cache_read.input_tokens": 100,
    "gen_ai.response.finish_reasons": ["stop"],
    "gen_ai.input.messages": json.dumps(
        [
            {"role": "system", "parts": [{"type": "text", "content": "Be brief."}]},
            {"role": "user", "parts": [{"type": "text", "content": "Capital of Varn?"}]},
        ]
    ),
    "gen_ai.output.messages": json.dumps(
        [{"role": "assistant", "parts": [{"type": "text", "content": "Olm"}], "finish_reason": "stop"}]
    ),
}
GENAI_RETRIEVAL = {
    "gen_ai.operation.name": "retrieval",
    "gen_ai.data_source.id": "varn-kb",
    "gen_ai.retrieval.query.text": "capital of Varn",
    "gen_ai.retrieval.top_k": 2,
    "gen_ai.retrieval.documents": json.dumps(
        [{"id": "p1", "score": 0.9, "content": "Varn's capital is Olm."}, {"id": "p2", "score": 0.2, "content": "x"}]
    ),
}
GENAI_TOOL = {
    "gen_ai.operation.name": "execute_tool",
    "gen_ai.tool.name": "kg_lookup",
    "gen_ai.tool.call.arguments": json.dumps({"entity": "Varn"}),
    "gen_ai.tool.call.result": json.dumps({"capital": "Olm"}),
}


def test_genai_conventions_chat_retrieval_and_tool_spans():
    chat, search, tool = span_steps(
        [span("chat", GENAI_CHAT), span("retrieve", GENAI_RETRIEVAL, start=1), span("tool", GENAI_TOOL, start=2)]
    )
    assert chat.kind == "llm" and chat.role == "app:openai:gpt-4o-mini"
    assert chat.request["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Capital of Varn?"},
    ]
    assert chat.response == {"texts": ["Olm"], "finish_reason": "stop"}
    assert (chat.prompt_tokens, chat.completion_tokens, chat.cached_prompt_tokens) == (120, 8, 100)
    assert chat.seconds == 0.002
    assert search.kind == "retrieval"
    assert search.request == {"retriever": "varn-kb", "query": "capital of Varn", "k": 2}
    assert search.response == {"ids": ["p1", "p2"], "scores": [0.9, 0.2]}
    assert [doc["text"] for doc in search.docs] == ["Varn's capital is Olm.", "x"]
    assert tool.kind == "tool"
    assert tool.request == {"tool": "kg_lookup", "arguments": {"entity": "Varn"}}
    assert tool.response == {"result": {"capital": "Olm"}}


def test_openinference_attributes_and_a_failed_span():
    llm = {
        "openinference.span.kind": "LLM",
        "llm.model_name": "claude-sonnet-4",
        "llm.invocation_parameters": json.dumps({"model": "claude-sonnet-4", "temperature": 0}),
        "llm.token_count.prompt": 50,
        "llm.token_count.completion": 5,
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.contents.0.message_content.type": "text",
        "llm.input_messages.0.message.contents.0.message_content.text": "Who founded Olm?",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "Ansgar Pell",
    }
    (step,) = span_steps([span("ChatAnthropic", llm, status="ERROR", message="overloaded")])
    assert step.role == "app:claude-sonnet-4"  # no llm.provider: where it was sent is not known, no list price
    assert step.request["messages"] == [{"role": "user", "content": "Who founded Olm?"}]
    assert step.response["texts"] == ["Ansgar Pell"] and step.error == "overloaded"
    rerank = {
        "openinference.span.kind": "RERANKER",
        "reranker.output_documents.0.document.id": "p3",
        "reranker.output_documents.0.document.content": "Ansgar Pell was born in Trask.",
    }
    (step,) = span_steps([span("rerank", rerank)])
    assert step.kind == "custom" and step.docs == [{"id": "p3", "title": "", "text": "Ansgar Pell was born in Trask."}]


def test_a_nested_export_reads_as_the_flat_one():
    flat = {
        "openinference.span.kind": "RETRIEVER",
        "input.value": "q",
        "retrieval.documents.0.document.id": "p1",
        "retrieval.documents.0.document.content": "text",
    }
    nested = {
        "openinference": {"span": {"kind": "RETRIEVER"}},
        "input": {"value": "q"},
        "retrieval": {"documents": [{"document": {"id": "p1", "content": "text"}}]},
    }
    assert span_steps([span("s", flat)])[0].to_dict() == span_steps([span("s", nested)])[0].to_dict()


def test_a_traces_answer_passages_and_tree():
    root = span("rag", {"openinference.span.kind": "CHAIN", "output.value": json.dumps({"answer": "Olm"})}, "r" * 16)
    search = span("search", GENAI_RETRIEVAL, "s" * 16, parent="r" * 16, start=1)
    again = span("search", GENAI_RETRIEVAL, "u" * 16, parent="r" * 16, start=2)
    chat = span("chat", GENAI_CHAT, "c" * 16, parent="r" * 16, start=3)
    trace = [root, search, again, chat]
    assert trace_answer(trace) == "Olm"
    assert trace_answer([chat]) == "Olm"  # no output on the root: the last model call's reply
    assert [doc.id for doc in trace_passages(trace)] == ["p1", "p2"]  # each found once
    assert trace_passages([root, chat]) is None  # no search: not known
    steps = span_steps(trace)
    assert span_outline(steps) == [
        {"group": "rag (chain)", "items": [{"step": 0}, {"step": 1}, {"step": 2}, {"step": 3}]}
    ]


BIG = {  # tokens enough that the dollars are not rounded away (results.json keeps 6 decimals)
    "gen_ai.usage.input_tokens": 120_000,
    "gen_ai.usage.output_tokens": 8_000,
    "gen_ai.usage.cache_read.input_tokens": 100_000,
}


@pytest.mark.parametrize(
    ("attributes", "role", "usd"),
    [
        ({**GENAI_CHAT, **BIG}, "app:openai:gpt-4o-mini", (20_000 * 0.15 + 100_000 * 0.075 + 8_000 * 0.60) / 1e6),
        ({**GENAI_CHAT, **BIG, "server.address": "10.0.0.7"}, "app:gpt-4o-mini", None),  # a gateway: no list price
        ({**GENAI_CHAT, **BIG, "gen_ai.request.model": "my-llama"}, "app:openai:my-llama", None),
    ],
)
def test_an_applications_model_calls_are_priced_where_their_price_is_known(attributes, role, usd):
    (step,) = span_steps([span("chat", attributes)])
    assert step.role == role
    usage = TokenUsage()
    usage.add(step, step.role)
    figures = usage.figures(ModelPrices(RunModels(), RunJudging(), {}))
    assert figures["usd"] == (pytest.approx(usd) if usd is not None else None)
    if usd is None:
        assert "has no price: add it with --price-table FILE" in figures["usd_note"]
    table = {"my-llama": {"prompt": 1.0, "completion": 1.0, "cached_prompt": 0.5}}
    priced = TokenUsage()
    priced.add(step, step.role)
    if "my-llama" in role:  # a --price-table entry by the model's name prices it
        assert priced.figures(ModelPrices(RunModels(), RunJudging(), table))["usd"] == pytest.approx(
            (20_000 * 1.0 + 100_000 * 0.5 + 8_000 * 1.0) / 1e6
        )


def test_a_model_call_or_search_wrapped_in_its_kind_or_only_rendering_a_prompt_is_counted_once():
    """LlamaIndex's instrumentor nests `apredict` > `acomplete` > `complete` (LLM spans all) around one call and
    `aretrieve` > `_aretrieve` around one search; Haystack's marks its PromptBuilder an LLM span: one model call
    (the innermost, with its usage) and one search (the outermost, with its documents) each."""
    template = {"openinference.span.kind": "LLM", "llm.prompt_template.template": "Q: {q}", "output.value": "Q: x"}
    call = {"openinference.span.kind": "LLM", "llm.prompts.0.prompt.text": "Q: x", "llm.token_count.prompt": 3}
    found = {**GENAI_RETRIEVAL, "openinference.span.kind": "RETRIEVER"}
    inner_search = {"openinference.span.kind": "RETRIEVER", "input.value": "x"}
    trace = [
        span("PromptBuilder.run", template, "p" * 16, start=0),
        span("apredict", template, "1" * 16, start=1),
        span("acomplete", call, "2" * 16, parent="1" * 16, start=2),
        span("complete", call, "3" * 16, parent="2" * 16, start=3),
        span("aretrieve", found, "4" * 16, start=4),
        span("_aretrieve", inner_search, "5" * 16, parent="4" * 16, start=5),
    ]
    steps = span_steps(trace)
    assert [(step.name, step.kind, step.span["kind"]) for step in steps] == [
        ("PromptBuilder.run", "custom", "llm"),
        ("apredict", "custom", "llm"),
        ("acomplete", "custom", "llm"),
        ("complete", "llm", "llm"),
        ("aretrieve", "retrieval", "retriever"),
        ("_aretrieve", "custom", "retriever"),
    ]
    assert steps[3].prompt_tokens == 3 and steps[4].response["ids"] == ["p1", "p2"]


@pytest.mark.parametrize(
    ("given", "query"),
    [
        ("capital of Varn", "capital of Varn"),  # LangChain's, LlamaIndex's retrievers: the query itself
        (json.dumps({"query": "capital of Varn", "top_k": None}), "capital of Varn"),  # Haystack's: its arguments
        (json.dumps({"k": 2}), json.dumps({"k": 2})),  # arguments without a query: as they are
    ],
)
def test_a_searchs_query_is_read_from_its_input_or_its_arguments(given, query):
    (step,) = span_steps([span("search", {"openinference.span.kind": "RETRIEVER", "input.value": given})])
    assert step.request["query"] == query
