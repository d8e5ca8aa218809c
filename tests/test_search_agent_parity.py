"""Call-for-call parity of `search_agent` with BrowseComp-Plus's own clients (texttron/BrowseComp-Plus at commit
97c637c, search_agent/openai_client.py and oss_client.py run unchanged with openai 1.97.0; the versions are in
each fixture): both against the fake server of tests/search_agent_fake.py, on the questions of
tests/data/search_agent/questions.jsonl over fictional_multihop's corpus. The clients speak the Responses API,
ragbench's `openai` engine chat completions: the fake records every request in the form common to both (the
conversation, the tools, the tool choice, the output-token limit, the sampling arguments sent), and the test
asks for the same requests, query by query in the same order, and the same run file per query (status, tool
call counts, retrieved docids, every tool call with its arguments and output, the final text, output tokens).

The clients' searcher is fed the hits ragbench's BM25 returned for the same queries (tests/data/search_agent/
hits.json: their BM25 searcher needs pyserini and Java). openai_client cuts snippets to 12 tokens of the tokenizer it
loads as Qwen/Qwen3-0.6B, here a small BPE (tests/data/search_agent/tokenizer) that ragbench loads from its folder;
oss_client shows whole texts. record_upstream.py says how the fixtures were made.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers import run, samples
from search_agent_fake import FakeAgentServer

DATA = Path(__file__).parent / "data" / "search_agent"
SYSTEM_ARGS = {
    "openai_client": {
        "client": "openai_client",
        "get_document": True,
        "snippet_max_tokens": 12,
        "snippet_tokenizer": str(DATA / "tokenizer"),
        "temperature": 0.0,
        "top_p": 1.0,
    },
    "oss_client": {"client": "oss_client", "snippet_max_tokens": 0},
}


def ragbench_side(
    tmp_path: Path, client: str, api: str = "chat_completions", model_args: dict[str, Any] | None = None
) -> dict[str, Any]:
    """search_agent's requests (canonical, and the bodies as sent) by query id, in arrival order within a query,
    and its run records by query id."""
    if "snippet_tokenizer" in SYSTEM_ARGS[client]:
        pytest.importorskip("transformers")  # ragbench[hf]
    server = FakeAgentServer()
    try:
        run(
            tmp_path,
            tasks=["fictional_multihop"],
            system="search_agent",
            model="openai:agent",
            model_args={"base_url": server.base_url, "api": api, **(model_args or {})},
            data={"fictional_multihop": str(DATA / "questions.jsonl")},
            system_args=SYSTEM_ARGS[client],
        )
    finally:
        server.stop()
    lines = samples(tmp_path / "run", "fictional_multihop")
    by_question = {line["question"]: line["id"] for line in lines}
    requests: dict[str, list[dict[str, Any]]] = {}
    bodies: dict[str, list[dict[str, Any]]] = {}
    for request, body in zip(server.requests, server.bodies):
        first = next(m["content"] for m in request["messages"] if m["role"] == "user")
        qid = next(qid for question, qid in by_question.items() if f"Question: {question}\n" in first)
        requests.setdefault(qid, []).append(request)
        bodies.setdefault(qid, []).append(body)
    keys = ("tool_call_counts", "status", "result", "retrieved_docids", "output_tokens")
    runs = {line["id"]: {key: line["prediction"]["extras"][key] for key in keys} for line in lines}
    return {"requests": requests, "bodies": bodies, "runs": runs}


def upstream(client: str) -> dict[str, Any]:
    recorded: dict[str, Any] = json.loads((DATA / f"{client}.json").read_text(encoding="utf-8"))
    return recorded


APIS = ["chat_completions", "responses"]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("client", ["openai_client", "oss_client"])
def test_search_agent_sends_the_requests_browsecomp_plus_clients_send(tmp_path, client, api):
    theirs, ours = upstream(client)["requests"], ragbench_side(tmp_path, client, api)["requests"]
    if client == "oss_client":  # oss_client sends no temperature or top_p (the server's); ragbench always sends its own
        ours = {qid: [r | {"temperature": None, "top_p": None} for r in reqs] for qid, reqs in ours.items()}
    assert sorted(ours) == sorted(theirs)
    for qid in theirs:
        assert ours[qid] == theirs[qid], qid


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("client", ["openai_client", "oss_client"])
def test_search_agent_ends_with_the_run_files_browsecomp_plus_clients_write(tmp_path, client, api):
    ours, theirs = ragbench_side(tmp_path, client, api)["runs"], upstream(client)["runs"]
    if client == "oss_client":  # oss_client's run file records no usage
        ours = {qid: record | {"output_tokens": None} for qid, record in ours.items()}
    if api == "chat_completions":  # the fake's reasoning items come only over the Responses API
        theirs = {
            qid: record | {"result": [item for item in record["result"] if item["type"] != "reasoning"]}
            for qid, record in theirs.items()
        }
    assert ours == theirs


# What each client sends besides the conversation (build_request in openai_client.py, oss_client.py's request),
# given to ragbench's openai engine as options sent in every body.
CLIENT_BODY_OPTIONS = {
    "openai_client": {"truncation": "auto"},
    "oss_client": {"truncation": "auto", "reasoning": {"effort": "high", "summary": "detailed"}},
}


@pytest.mark.parametrize("client", ["openai_client", "oss_client"])
def test_over_the_responses_api_search_agent_sends_the_clients_request_bodies(tmp_path, client):
    """The JSON bodies as sent, keys sorted, byte for byte: input items (the output items of each answer sent
    back without their status), tools, tool choice, max_output_tokens, sampling and the options above."""
    ours = ragbench_side(tmp_path, client, "responses", CLIENT_BODY_OPTIONS[client])["bodies"]
    theirs = upstream(client)["bodies"]
    if client == "oss_client":  # it sends no temperature or top_p (the server's); ragbench always sends its own
        ours = {
            qid: [{k: v for k, v in b.items() if k not in ("temperature", "top_p")} for b in bodies]
            for qid, bodies in ours.items()
        }
    assert sorted(ours) == sorted(theirs)
    for qid in theirs:
        assert [json.dumps(b, sort_keys=True) for b in ours[qid]] == [
            json.dumps(b, sort_keys=True) for b in theirs[qid]
        ]
