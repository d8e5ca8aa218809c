"""Property: whatever tool calls a model makes (any name, any argument text, JSON or not), `search_agent` answers
each without raising and records it as BrowseComp-Plus's clients write their run files: one `tool_call` item
per call in call order with the arguments as written; a failed call's output null (openai_client) or the error
text sent (oss_client); the calls counted per tool as each client counts them; and the retrieved docids exactly
those BrowseComp-Plus's `extract_retrieved_docids_from_result` reads back from the result list (search_agent/
utils.py at commit 97c637c: the docids in the outputs of the tools whose names hold "search" or "retrieval")."""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ragbench.api import Document
from ragbench.plugins.search_agent.example_run import SearchAgentRun
from ragbench.plugins.search_agent.shapes import AgentExtras, RunItem
from ragbench.plugins.search_agent.tools import (
    OPENAI_CLIENT,
    OSS_CLIENT,
    Client,
    answer_call,
    search_hits,
    search_results,
)

DOCIDS = st.sampled_from(["d1", "d2", "d3", "é4", "5"])
ARGUMENT_TEXTS = st.one_of(
    st.text(max_size=12),  # mostly not JSON
    st.dictionaries(st.sampled_from(["query", "user_query", "docid", "url"]), st.one_of(DOCIDS, st.integers())).map(
        json.dumps
    ),
    st.lists(st.integers(), max_size=2).map(json.dumps),
)
CALLS = st.lists(
    st.tuples(st.sampled_from(["search", "local_knowledge_base_retrieval", "get_document", "browse"]), ARGUMENT_TEXTS),
    max_size=6,
)


async def search(query: str) -> tuple[str, list[Document]]:
    """Hits named after the query's characters: the same query, the same hits."""
    docs = [Document(id=f"d{ord(c) % 4}", title="", text=f"text {c}", score=1.0) for c in str(query)[:3]]
    return search_results(search_hits(docs, lambda text: text)), docs


def document(docid: str) -> str:
    if not isinstance(docid, str):
        raise TypeError("a docid is a string")
    return json.dumps({"docid": docid, "text": "full"}, indent=2)


def their_retrieved_docids(result: list[dict[str, Any]]) -> set[str]:
    """The docids BrowseComp-Plus reads from a run file's result (utils.py)."""
    found: set[str] = set()
    for item in result:
        name = str(item.get("tool_name") or "").lower()
        if item["type"] != "tool_call" or ("search" not in name and "retrieval" not in name):
            continue
        try:
            parsed = json.loads(item["output"]) if isinstance(item["output"], str) else None
        except ValueError:
            parsed = None
        if isinstance(parsed, list):
            found.update(str(hit["docid"]) for hit in parsed if isinstance(hit, dict) and "docid" in hit)
        elif isinstance(item["output"], str):  # their fallback: docids grepped from the raw text
            found.update(re.findall(r'"docid"\s*:\s*"([^"]+)"', item["output"]))
            found.update(re.findall(r'"docid"\s*:\s*(\d+)', item["output"]))
    return found


async def record(client: Client, calls: list[tuple[str, str]]) -> tuple[SearchAgentRun, list[bool]]:
    run, failures = SearchAgentRun(client), []
    for name, arguments in calls:
        answered = await answer_call(name, arguments, client, search, document)
        run.called(name, arguments, answered.output, answered.failed, answered.docs)
        failures.append(answered.failed)
    return run, failures


@settings(max_examples=150, deadline=None)
@given(CALLS, st.sampled_from([OPENAI_CLIENT, OSS_CLIENT]))
def test_every_call_is_recorded_as_browsecomp_plus_records_it(calls, client):
    run, failures = asyncio.run(record(client, calls))
    extras = run.extras("completed", 1)
    assert set(extras) == AgentExtras.__required_keys__  # the typed record, no more and no less
    assert all(list(item) == list(RunItem.__annotations__) for item in extras["result"])  # in the run file's order
    assert [(item["tool_name"], item["arguments"]) for item in extras["result"]] == calls
    for item, failed in zip(extras["result"], failures):
        if failed and client is OPENAI_CLIENT:
            assert item["output"] is None
        elif failed:
            assert item["output"].startswith(f"Error executing {item['tool_name']}: ")
    counted = Counter(
        client.counted_name(name) for (name, _), failed in zip(calls, failures) if client is OPENAI_CLIENT or not failed
    )
    assert extras["tool_call_counts"] == dict(counted)
    assert set(extras["retrieved_docids"]) == their_retrieved_docids(extras["result"])
    assert extras["retrieved_docids"] == sorted(extras["retrieved_docids"])
