"""`search_agent` with `client=tongyi_client` where the parity fixture does not reach (tests/
test_search_agent_parity.py compares it with BrowseComp-Plus's tongyi_client request for request): the
conversation's text as tongyi_client counts it, the last turn asked past the context limit, a context
tokenizer that is not on disk, and (properties) any call text answered and counted, any answer recorded."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.api import Document
from ragbench.plugins.search_agent import tongyi_client
from ragbench.plugins.search_agent.prompts import TONGYI_CONTEXT_EXCEEDED
from support import paths
from support.helpers import search_agent_samples
from support.search_agent_fake import FakeAgentServer

DATA = paths.DATA / "search_agent"
QUESTION = '{"answers": ["Zealion"], "id": "q0000", "question": "Where is Rufea Beabax?"}\n'


def test_the_conversation_is_counted_as_qwen_agents_text_completion_prompt():
    """build_text_completion_prompt of qwen-agent 0.0.27 (allow_special=True) for these conversations, as it
    printed them: an empty assistant message opened after a last user message, a last assistant message open."""
    asked = [{"role": "system", "content": "sys"}, {"role": "user", "content": "q"}]
    assert tongyi_client.text_prompt(asked) == (
        "<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n"
    )
    answered = [*asked, {"role": "assistant", "content": "a <tool_call>x</tool_call>"}]
    assert tongyi_client.text_prompt(answered) == (
        "<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n"
        "a <tool_call>x</tool_call>"
    )


def tongyi_run(tmp_path: Path, **system_args: Any) -> tuple[list[dict[str, Any]], FakeAgentServer]:
    pytest.importorskip("transformers")  # ragbench[hf], for the tokenizers
    data = tmp_path / "questions.jsonl"
    data.write_text(QUESTION, encoding="utf-8")
    server = FakeAgentServer()
    try:
        options = {"client": "tongyi_client", "snippet_max_tokens": 0} | system_args
        return search_agent_samples(tmp_path, server.base_url, data, options), server
    finally:
        server.stop()


def test_past_the_context_limit_one_last_turn_is_asked_for_the_answer(tmp_path, monkeypatch):
    """With the limit at 10 tokens the first turn's search passes it: its result is replaced by the request for
    an answer, one more turn is asked, and the example ends on it (the fake searches again: no answer tags)."""
    monkeypatch.setattr(tongyi_client, "MAX_CONTEXT_TOKENS", 10)
    (line,), server = tongyi_run(tmp_path, context_tokenizer=str(DATA / "tokenizer"))
    assert len(server.bodies) == 2
    assert server.bodies[1]["messages"][-1] == {"role": "user", "content": TONGYI_CONTEXT_EXCEEDED}
    extras = line["prediction"]["extras"]
    assert extras["status"] == "format error: generate an answer as token limit reached"
    assert extras["turns"] == 2 and line["prediction"]["answer"] == ""


def test_a_context_tokenizer_not_on_disk_is_named(tmp_path):
    (line,), server = tongyi_run(tmp_path, context_tokenizer=str(tmp_path / "nowhere"))
    assert "context_tokenizer=PATH" in str(line["error"])
    assert str(tmp_path / "nowhere") in str(line["error"])


NAMES = st.one_of(st.sampled_from(["search", "browse", ""]), st.integers(), st.lists(st.integers(), max_size=1))
QUERIES = st.one_of(st.text(max_size=8), st.integers(), st.lists(st.text(max_size=4), max_size=2), st.none())
CALL_TEXTS = st.one_of(
    st.text(max_size=30),  # mostly not JSON
    st.fixed_dictionaries({"name": NAMES, "arguments": st.dictionaries(st.sampled_from(["query", "q"]), QUERIES)}).map(
        json.dumps
    ),
    st.fixed_dictionaries({"name": NAMES, "arguments": st.one_of(st.text(max_size=4), st.integers())}).map(json.dumps),
    st.lists(st.integers(), max_size=2).map(json.dumps),
)


async def hits(query: str) -> list[Document]:
    """Hits named after the query's characters (none for an empty query; a query that is no string fails)."""
    return [Document(id=f"d{ord(c) % 4}", title="", text=f"text {c}", score=1.0) for c in query[:3]]


@given(written=CALL_TEXTS)
@settings(max_examples=200, deadline=None)
def test_any_call_is_answered_and_counted_once(written):
    """Whatever is written between the tags: answered without raising, counted once in `counts_all` (under
    "invalid_json" exactly when it is answered as no JSON), counted in `counts` only where the search ran, and
    the docids those of the hits it answered."""
    run = tongyi_client.TongyiRun([])
    output = asyncio.run(tongyi_client.call_tool(written, run, hits, lambda text: text))
    assert sum(run.counts_all.values()) == 1
    assert ("invalid_json" in run.counts_all) == (output == tongyi_client.INVALID_CALL)
    searched = output.startswith(("A search for", "No results found", "Search error"))
    assert run.counts == ({"search": 1} if searched else {})
    assert run.docids == {doc.id for doc in run.docs}
    assert all(f"[text {doc.text[-1]}]" in output for doc in run.docs)


@given(contents=st.lists(CALL_TEXTS.map(lambda call: f"<think>t</think><tool_call>{call}</tool_call>"), max_size=4))
@settings(max_examples=100, deadline=None)
def test_the_run_file_records_every_call_that_is_a_json_object(contents):
    messages = [{"role": "assistant", "content": content} for content in contents]
    result = tongyi_client.run_record(messages)
    written = [content.split("<tool_call>")[1].split("</tool_call>")[0] for content in contents]
    objects = [call for call in map(json_or_none, written) if isinstance(call, dict)]
    assert [item["tool_name"] for item in result if item["type"] == "tool_call"] == [c.get("name", "") for c in objects]
    assert sum(item["type"] == "reasoning" for item in result) == len(contents)


def json_or_none(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None
