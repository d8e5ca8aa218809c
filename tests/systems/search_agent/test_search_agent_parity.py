"""Call-for-call parity of `search_agent` with BrowseComp-Plus's own clients (texttron/BrowseComp-Plus at commit
97c637c, search_agent/openai_client.py and oss_client.py run unchanged with openai 1.97.0; the versions are in
each fixture): both against the fake server of tests/support/search_agent_fake.py, on the questions of
tests/data/search_agent/questions.jsonl over fictional_multihop's corpus. The clients speak the Responses API,
ragbench's `openai` engine chat completions: the fake records every request in the form common to both (the
conversation, the tools, the tool choice, the output-token limit, the sampling arguments sent), and the test
asks for the same requests, query by query in the same order, and the same run file per query (status, tool
call counts, retrieved docids, every tool call with its arguments and output, the final text, output tokens).
Among the questions, one whose answer the server cuts short (openai_client records it "incomplete"); the fake's
reasoning items carry no encrypted_content or status (the clients' SDK adds them as null when it dumps the item);
openai_client ran given top_p alone, and as an "o" model given both (it sends neither).

The clients' searcher is fed the hits ragbench's BM25 returned for the same queries (tests/data/search_agent/
hits.json: their BM25 searcher needs pyserini and Java). openai_client cuts snippets to 12 tokens of the tokenizer it
loads as Qwen/Qwen3-0.6B, here a small BPE (tests/data/search_agent/tokenizer) that ragbench loads from its folder;
oss_client shows whole texts. record_upstream.py says how the fixtures were made.

qwen_client (qwen-agent 0.0.27 with searcher/mcp_server.py over fastmcp 2.9.2, both unchanged, the same searcher
and tokenizer; record_qwen_client.py) speaks chat completions with its tools in the system message and its calls
in the text: its request bodies are compared as sent, and its run files.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from support import paths
from support.helpers import search_agent_samples
from support.search_agent_fake import FakeAgentServer

DATA = paths.DATA / "search_agent"
SNIPPETS = {"snippet_max_tokens": 12, "snippet_tokenizer": str(DATA / "tokenizer")}
# fixture -> the model and search_agent's options that run as the fixture's client ran (its "argv")
RUNS: dict[str, tuple[str, dict[str, Any]]] = {
    "openai_client": ("agent", {"client": "openai_client", "get_document": True, "top_p": 1.0, **SNIPPETS}),
    # a model whose name starts with "o": openai_client sends it no temperature or top_p, given or not
    "openai_client_o3": (
        "o3",
        {"client": "openai_client", "get_document": True, "temperature": 0.5, "top_p": 0.9, **SNIPPETS},
    ),
    "oss_client": ("agent", {"client": "oss_client", "snippet_max_tokens": 0}),
}


def ragbench_side(
    tmp_path: Path, fixture: str, api: str = "chat_completions", model_args: dict[str, Any] | None = None
) -> dict[str, Any]:
    """search_agent's requests (canonical, and the bodies as sent) by query id, in arrival order within a query,
    and its run records by query id."""
    model, system_args = RUNS[fixture]
    if "snippet_tokenizer" in system_args:
        pytest.importorskip("transformers")  # ragbench[hf]
    server = FakeAgentServer()
    try:
        options = {"api": api, **(model_args or {})}
        lines = search_agent_samples(tmp_path, server.base_url, DATA / "questions.jsonl", system_args, model, options)
    finally:
        server.stop()
    by_question = {line["question"]: line["id"] for line in lines}
    requests: dict[str, list[dict[str, Any]]] = {}
    bodies: dict[str, list[dict[str, Any]]] = {}
    for request, body in zip(server.requests, server.bodies):
        first = next(m["content"] for m in request["messages"] if m["role"] == "user")
        # the question alone (tongyi_client), or the "Question: " line of BrowseComp-Plus's prompt
        qid = by_question.get(first) or next(
            q for question, q in by_question.items() if f"Question: {question}\n" in first
        )
        requests.setdefault(qid, []).append(request)
        bodies.setdefault(qid, []).append(body)
    keys = ("tool_call_counts", "tool_call_counts_all", "status", "result", "retrieved_docids", "output_tokens")
    runs = {line["id"]: {k: v for k, v in line["prediction"]["extras"].items() if k in keys} for line in lines}
    return {"requests": requests, "bodies": bodies, "runs": runs}


def upstream(client: str) -> dict[str, Any]:
    recorded: dict[str, Any] = json.loads((DATA / f"{client}.json").read_text(encoding="utf-8"))
    return recorded


APIS = ["chat_completions", "responses"]


@pytest.mark.parametrize("api", APIS)
@pytest.mark.parametrize("client", ["openai_client", "oss_client"])
def test_search_agent_sends_the_requests_browsecomp_plus_clients_send(tmp_path, client, api):
    theirs, ours = upstream(client)["requests"], ragbench_side(tmp_path, client, api)["requests"]
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
CLIENT_BODY_OPTIONS: dict[str, dict[str, Any]] = {
    "openai_client": {"truncation": "auto"},
    "openai_client_o3": {"truncation": "auto"},
    "oss_client": {"truncation": "auto", "reasoning": {"effort": "high", "summary": "detailed"}},
}


@pytest.mark.parametrize("client", ["openai_client", "openai_client_o3", "oss_client"])
def test_over_the_responses_api_search_agent_sends_the_clients_request_bodies(tmp_path, client):
    """The JSON bodies as sent, keys sorted, byte for byte: input items (the output items of each answer sent
    back as the clients' SDK dumps them, openai_client's without their status), tools, tool choice,
    max_output_tokens, the sampling arguments the client sends (none but those given; none to an "o" model) and
    the options above."""
    ours = ragbench_side(tmp_path, client, "responses", CLIENT_BODY_OPTIONS[client])["bodies"]
    theirs = upstream(client)["bodies"]
    assert sorted(ours) == sorted(theirs)
    for qid in theirs:
        assert [json.dumps(b, sort_keys=True) for b in ours[qid]] == [
            json.dumps(b, sort_keys=True) for b in theirs[qid]
        ]


# qwen_client (qwen-agent 0.0.27 over searcher/mcp_server.py, fastmcp 2.9.2; tests/data/search_agent/
# record_qwen_client.py): its MCP server run with --get-document, k 5 and 12-token snippets, the client with
# QUERY_TEMPLATE and its own sampling (temperature 0.7, top_p 0.8, max_tokens 10000 every turn).
QWEN_ARGS = {
    "client": "qwen_client",
    "get_document": True,
    "snippet_max_tokens": 12,
    "snippet_tokenizer": str(DATA / "tokenizer"),
}
# what qwen_client's generate_cfg sends besides sampling (its extra_body), given as an engine option
QWEN_BODY_OPTIONS = {"chat_template_kwargs": {"enable_thinking": True}}
TRACEBACK = re.compile(r"(\nTraceback:\n).*?(?=\n</tool_response>|\Z)", re.S)


def without_traceback(value: Any) -> Any:
    """`value` with the lines after "Traceback:" of qwen_agent's tool-error texts dropped: they name the files of
    the installation that recorded them."""
    if isinstance(value, str):
        return TRACEBACK.sub(r"\1", value)
    if isinstance(value, list):
        return [without_traceback(item) for item in value]
    if isinstance(value, dict):
        return {key: without_traceback(item) for key, item in value.items()}
    return value


def qwen_side(tmp_path: Path) -> dict[str, Any]:
    pytest.importorskip("transformers")  # ragbench[hf], for the snippet tokenizer
    RUNS["qwen_client"] = ("agent", QWEN_ARGS)
    try:
        return ragbench_side(tmp_path, "qwen_client", model_args=QWEN_BODY_OPTIONS)
    finally:
        del RUNS["qwen_client"]


def test_search_agent_sends_the_request_bodies_qwen_client_sends(tmp_path):
    """Chat completions bodies, keys sorted, byte for byte but for the seed (qwen_agent draws one at random per
    request, ragbench derives its own), `stream` (qwen_agent streams, ragbench reads whole answers) and `n`
    (ragbench sends 1, qwen_agent leaves the server's default, 1)."""
    theirs = without_traceback(upstream("qwen_client")["bodies"])
    ours = qwen_side(tmp_path)["bodies"]
    assert sorted(ours) == sorted(theirs)
    for qid in theirs:
        drop = ("seed", "stream", "n")
        assert [json.dumps({k: v for k, v in b.items() if k not in drop}, sort_keys=True) for b in ours[qid]] == [
            json.dumps({k: v for k, v in b.items() if k not in drop}, sort_keys=True) for b in theirs[qid]
        ], qid


def test_search_agent_ends_with_the_run_files_qwen_client_writes(tmp_path):
    ours = qwen_side(tmp_path)["runs"]
    theirs = without_traceback(upstream("qwen_client")["runs"])
    assert {qid: {k: v for k, v in run.items() if k != "output_tokens"} for qid, run in ours.items()} == theirs


# tongyi_client (tests/data/search_agent/record_tongyi_client.py): k 5, 12-token snippets, MAX_LLM_CALL_PER_RUN=4,
# the conversation counted in the same tokenizer; its own sampling (temperature 0.85, top_p 0.95, max_tokens 10000
# every turn, the two stop strings), its presence_penalty given as an engine option.
TONGYI_BODY_OPTIONS = {"presence_penalty": 1.1}
CURRENT_DATE = re.compile(r"Current date: (\d{4}-\d{2}-\d{2})$")


def tongyi_side(tmp_path: Path) -> dict[str, Any]:
    pytest.importorskip("transformers")  # ragbench[hf], for the snippet tokenizer
    day = CURRENT_DATE.search(upstream("tongyi_client")["bodies"]["q0000"][0]["messages"][0]["content"])
    assert day is not None
    args = {"client": "tongyi_client", "max_turns": 4, "current_date": day.group(1), **SNIPPETS}
    RUNS["tongyi_client"] = ("agent", args | {"context_tokenizer": str(DATA / "tokenizer")})
    try:
        return ragbench_side(tmp_path, "tongyi_client", model_args=TONGYI_BODY_OPTIONS)
    finally:
        del RUNS["tongyi_client"]


def test_search_agent_sends_the_request_bodies_tongyi_client_sends(tmp_path):
    """Chat completions bodies, keys sorted, byte for byte but for the seed (ragbench derives one per request) and
    `n` (ragbench sends 1, tongyi_client the server's default, 1) and `logprobs` (tongyi_client asks for them and
    never reads them; ragbench does not ask): a malformed call, an unknown tool, two calls in one answer (the first
    made), an answer without <answer> tags until the calls run out."""
    theirs = upstream("tongyi_client")["bodies"]
    ours = tongyi_side(tmp_path)["bodies"]
    assert sorted(ours) == sorted(theirs)
    drop = ("seed", "n", "logprobs")
    for qid in theirs:
        assert [json.dumps({k: v for k, v in b.items() if k not in drop}, sort_keys=True) for b in ours[qid]] == [
            json.dumps({k: v for k, v in b.items() if k not in drop}, sort_keys=True) for b in theirs[qid]
        ], qid


def test_search_agent_ends_with_the_run_files_tongyi_client_writes(tmp_path):
    ours = tongyi_side(tmp_path)["runs"]
    theirs = upstream("tongyi_client")["runs"]
    assert {qid: {k: v for k, v in run.items() if k != "output_tokens"} for qid, run in ours.items()} == theirs
