"""Request-for-request parity of `search_agent` with BrowseComp-Plus's clients whose tools the API's own servers
call (texttron/BrowseComp-Plus at commit 97c637c, run unchanged: search_agent/anthropic_client.py with anthropic
0.58.2, search_agent/openai_client_with_mcp.py with openai 1.97.0, both against searcher/mcp_server.py over
fastmcp 2.9.2: tests/data/search_agent/record_mcp_clients.py). Both sides run against tests/support/search_agent_fake.py,
which plays Anthropic's and OpenAI's servers: it calls the tools of the MCP server each request names and answers
with the whole turn (tests/support/search_agent_fake_messages.py). The questions: a search then get_document, two
searches, arguments that are not JSON (sent as `{}`), a tool the server lacks, an answer cut short, a get_document
of a docid the corpus lacks, and (anthropic_client) a first answer the API pauses.

Compared: each request's path, beta header and JSON body (the MCP server's URL aside: each side's own port;
openai_client_with_mcp's `input` form, docs/agents.md), and the run file (status, tool call counts, every item of
`result`, retrieved docids, output tokens, pause restarts). Where fastmcp is installed (ragbench[mcp]) ragbench
serves its tools with it, and the fake calls them through the `mcp` library's SSE client as the recording did;
without it, ragbench's MCP server is replaced by a stand-in that writes a tool's result as fastmcp does, and the
one output fastmcp words itself (pydantic's message for the arguments `{}`) is compared by its start.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support import paths
from support.helpers import run, samples
from support.search_agent_fake import FakeAgentServer
from support.search_agent_fake_messages import McpCaller, mcp_call

DATA = paths.DATA / "search_agent"
FIXTURE = json.loads((DATA / "anthropic_client.json").read_text(encoding="utf-8"))
SYSTEM_ARGS = {
    "client": "anthropic_client",
    "get_document": True,
    "snippet_max_tokens": 12,
    "snippet_tokenizer": str(DATA / "tokenizer"),
    "mcp_port": 0,
}
THINKING = {"type": "enabled", "budget_tokens": 2048}  # the client's --thinking-budget 2048
FASTMCP_ERROR = "Error calling tool 'search': "


class StandInServer:
    """ragbench's ToolServer without fastmcp: the tools by URL, each call run in the run's loop, its value
    written as fastmcp 2.9.2 writes it (JSON, indent 2, not ASCII-escaped; a list of one item as the item;
    nothing for None or an empty list)."""

    servers: dict[str, StandInServer] = {}

    def __init__(self, name: str, tools: list[Any], port: int, loop: asyncio.AbstractEventLoop) -> None:
        self.tools, self.loop = {tool.name: tool.function for tool in tools}, loop
        self.url = f"http://stand-in-{len(self.servers)}/mcp"
        self.servers[self.url] = self

    def call(self, name: str | None, arguments: dict[str, Any]) -> Any:
        if name is None:
            return [
                {"name": tool, "inputSchema": {"properties": {argument: {"type": "string"}}, "required": [argument]}}
                for tool, argument in (("search", "query"), ("get_document", "docid"))
                if tool in self.tools
            ]
        if name not in self.tools:
            return [{"type": "text", "text": f"Unknown tool: {name}"}], True
        try:
            value = asyncio.run_coroutine_threadsafe(self.tools[name](**arguments), self.loop).result()
        except TypeError as exc:
            return [{"type": "text", "text": f"{FASTMCP_ERROR}{exc}"}], True
        value = value[0] if isinstance(value, list) and len(value) == 1 else value
        if value is None or value == []:
            return [], False
        return [{"type": "text", "text": json.dumps(value, ensure_ascii=False, indent=2)}], False

    def close(self) -> None:
        self.servers.pop(self.url, None)


def stand_in_call(url: str, name: str | None, arguments: dict[str, Any]) -> Any:
    return StandInServer.servers[url].call(name, arguments)


def fastmcp_call() -> McpCaller | None:
    """The recording's MCP client (the `mcp` library's SSE client), where fastmcp is installed."""
    try:
        import fastmcp  # noqa: F401
    except ImportError:
        return None
    return mcp_call


OPENAI_FIXTURE = json.loads((DATA / "openai_client_with_mcp.json").read_text(encoding="utf-8"))


def ragbench_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stand_in: bool = False, client: str = "anthropic_client"
) -> dict[str, Any]:
    pytest.importorskip("anthropic" if client == "anthropic_client" else "openai")
    pytest.importorskip("transformers")  # the snippets' tokenizer
    caller = None if stand_in else fastmcp_call()
    if caller is None:
        import ragbench.plugins.search_agent.mcp_server as mcp_server

        monkeypatch.setattr(mcp_server, "ToolServer", StandInServer)
        monkeypatch.setattr(mcp_server, "check_installed", lambda: None)
        caller = stand_in_call
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    server = FakeAgentServer(mcp=caller)
    questions = tmp_path / "questions.jsonl"
    asked = FIXTURE["runs"] if client == "anthropic_client" else OPENAI_FIXTURE["runs"]
    lines = (DATA / "questions_mcp.jsonl").read_text(encoding="utf-8").splitlines()
    questions.write_text("".join(line + "\n" for line in lines if json.loads(line)["id"] in asked), encoding="utf-8")
    if client == "anthropic_client":
        model = "anthropic:claude-agent"
        model_args = {"base_url": server.base_url.removesuffix("/v1"), "thinking": THINKING}
        system_args = SYSTEM_ARGS
    else:
        model, model_args = "openai:agent", {"base_url": server.base_url, "api": "responses", "truncation": "auto"}
        system_args = SYSTEM_ARGS | {"client": client, "top_p": 1.0}
    try:
        run(
            tmp_path,
            tasks=["fictional_multihop"],
            system="search_agent",
            model=model,
            model_args=model_args,
            data={"fictional_multihop": str(questions)},
            system_args=system_args,
        )
    finally:
        server.stop()
    lines = samples(tmp_path / "run", "fictional_multihop")
    assert not [line["error"] for line in lines if line.get("error")]
    by_question = {line["question"]: line["id"] for line in lines}
    requests: dict[str, list[Any]] = {}
    bodies: dict[str, list[Any]] = {}
    for request, body in zip(server.requests, server.bodies):
        asked_text = body["messages"][0]["content"] if "messages" in body else json.dumps(body["input"])
        qid = next(q for question, q in by_question.items() if f"Question: {question}" in asked_text)
        requests.setdefault(qid, []).append(request)
        bodies.setdefault(qid, []).append(body)
    runs = {line["id"]: line["prediction"]["extras"] for line in lines}
    return {
        "requests": requests,
        "bodies": bodies,
        "runs": runs,
        "answers": {line["id"]: line["prediction"] for line in lines},
    }


def without_url(body: dict[str, Any]) -> dict[str, Any]:
    """A request body with its MCP server's URL (each side's own port) left out."""
    if "mcp_servers" in body:
        return body | {"mcp_servers": [{k: v for k, v in s.items() if k != "url"} for s in body["mcp_servers"]]}
    return body | {"tools": [{k: v for k, v in t.items() if k != "server_url"} for t in body["tools"]]}


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        return ragbench_side(tmp_path_factory.mktemp("anthropic"), monkeypatch)


def test_the_same_requests_in_the_same_order(ours: dict[str, Any]) -> None:
    assert ours["requests"] == FIXTURE["requests"]
    assert {q: [without_url(b) for b in bodies] for q, bodies in ours["bodies"].items()} == {
        q: [without_url(b) for b in bodies] for q, bodies in FIXTURE["bodies"].items()
    }
    assert [len(bodies) for bodies in FIXTURE["bodies"].values()] == [1, 1, 1, 1, 1, 2, 1]  # the paused one asks again


def test_the_same_run_files(ours: dict[str, Any]) -> None:
    stand_in = fastmcp_call() is None
    for qid, theirs in FIXTURE["runs"].items():
        mine = ours["runs"][qid]
        result, their_result = mine["result"], theirs["result"]
        if stand_in and qid == "malformed":  # pydantic's words for the arguments {}: fastmcp's own
            (failed,) = [i for i, item in enumerate(their_result) if str(item["output"]).startswith(FASTMCP_ERROR)]
            assert str(result[failed]["output"]).startswith(FASTMCP_ERROR)
            result = result[:failed] + result[failed + 1 :]
            their_result = their_result[:failed] + their_result[failed + 1 :]
        else:  # the fake counts the characters of the answer, that message too
            assert mine["output_tokens"] == theirs["usage"]["output_tokens"], qid
        assert result == their_result, qid
        for key in ("status", "tool_call_counts", "retrieved_docids", "pause_restarts"):
            assert mine[key] == theirs[key], (qid, key)


def test_answer_and_documents_are_the_final_text_and_the_searches_hits(ours: dict[str, Any]) -> None:
    prediction, result = ours["answers"]["q0000"], FIXTURE["runs"]["q0000"]["result"]
    assert prediction["answer"] == [item["output"] for item in result if item["type"] == "output_text"][-1].strip()
    hits = json.loads(next(item["output"] for item in result if item["tool_name"] == "search"))
    assert [doc["id"] for doc in prediction["docs"]] == [hit["docid"] for hit in hits]


def test_another_engine_or_no_fastmcp_is_refused_before_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from ragbench.api import ConfigError
    from ragbench.plugins.search_agent import mcp_server
    from ragbench.plugins.search_agent.system import SearchAgent

    agent = SearchAgent(client="anthropic_client")

    class OpenAILike:
        kind, connects_mcp = "openai", False

    with pytest.raises(ConfigError, match="the openai engine cannot send; run the model with --model anthropic:MODEL"):
        agent.check_model(OpenAILike())  # type: ignore[arg-type]
    found = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "fastmcp" else found(name))
    with pytest.raises(ConfigError, match=r"pip install 'ragbench\[mcp\]'"):
        mcp_server.check_installed()


TEXT = st.text(alphabet="ab \n", max_size=4)
BLOCK = st.one_of(
    st.builds(
        lambda i, n: {"type": "mcp_tool_use", "id": f"u{i}", "name": n, "input": {}},
        st.integers(0, 3),
        st.sampled_from(["search", "get_document"]),
    ),
    st.builds(
        lambda i, t: {"type": "mcp_tool_result", "tool_use_id": f"u{i}", "is_error": False, "content": t},
        st.integers(0, 4),
        st.one_of(TEXT, st.lists(st.builds(lambda t: {"type": "text", "text": t}, TEXT), max_size=2)),
    ),
    st.builds(lambda t: {"type": "text", "text": t}, TEXT),
    st.builds(lambda t: {"type": "thinking", "thinking": t, "signature": "s"}, TEXT),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(BLOCK, max_size=8))
def test_every_call_is_one_counted_item_and_every_result_lands_once(blocks: list[dict[str, Any]]) -> None:
    """anthropic_client's reading of the blocks: one tool_call item per mcp_tool_use, counted by name; each
    result on the latest call of its id, else an item of its own; a result's output never empty."""
    from ragbench.plugins.search_agent.anthropic_client import AnthropicRun, run_record

    record = run_record(AnthropicRun(blocks=blocks))
    uses = [b for b in blocks if b["type"] == "mcp_tool_use"]
    results = [b for b in blocks if b["type"] == "mcp_tool_result"]
    calls = [item for item in record["result"] if item["type"] == "tool_call"]
    before = [{b["id"] for b in blocks[:i] if b["type"] == "mcp_tool_use"} for i in range(len(blocks))]
    unmatched = [b for i, b in enumerate(blocks) if b in results and b["tool_use_id"] not in before[i]]
    assert len(calls) == len(uses) + len(unmatched)
    assert sum(record["tool_call_counts"].values()) == len(uses)
    assert all(item["output"] != "" for item in calls)
    assert record["status"] == "completed"


def test_a_port_in_use_is_said_in_one_line_naming_the_option(tmp_path: Path) -> None:
    """A real fault: the MCP server's port is taken (fastmcp installed: ragbench[mcp])."""
    pytest.importorskip("fastmcp")
    pytest.importorskip("anthropic")
    import socket

    server = FakeAgentServer(mcp=mcp_call)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        try:
            run(
                tmp_path,
                tasks=["fictional_multihop"],
                system="search_agent",
                model="anthropic:claude-agent",
                model_args={"base_url": server.base_url.removesuffix("/v1")},
                data={"fictional_multihop": str(DATA / "questions_mcp.jsonl")},
                system_args={"client": "anthropic_client", "mcp_port": port, "snippet_max_tokens": 0},
            )
        finally:
            server.stop()
    assert server.bodies == []
    errors = {line.get("error") for line in samples(tmp_path / "run", "fictional_multihop")}
    assert errors == {
        f"ConfigError: search_agent: the MCP server could not listen on 127.0.0.1:{port}: choose another "
        "--system-arg mcp_port"
    }


def test_a_run_replays_offline_sending_what_it_sent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`--replay` answers each Messages request, the MCP server named in it, with the recorded answer (the
    stand-in server: its URL the same in both runs, as a fixed mcp_port makes it)."""
    import ragbench.plugins.search_agent.mcp_server as mcp_server
    from support.helpers import cli_here

    monkeypatch.setattr(mcp_server, "ToolServer", StandInServer)
    monkeypatch.setattr(mcp_server, "check_installed", lambda: None)
    recorded = ragbench_side(tmp_path, monkeypatch, stand_in=True)
    replayed = cli_here("--replay", str(tmp_path / "run"), "--output", str(tmp_path / "replayed"), "--no-progress")
    assert replayed.returncode == 0, replayed.stderr
    again = {line["id"]: line["prediction"] for line in samples(tmp_path / "replayed", "fictional_multihop")}
    for qid, prediction in recorded["answers"].items():  # no search runs: the documents are the corpus's, unscored
        assert {k: v for k, v in again[qid].items() if k != "docs"} == {
            k: v for k, v in prediction.items() if k != "docs"
        }
        assert [d["id"] for d in again[qid].get("docs", [])] == [d["id"] for d in prediction.get("docs", [])]


@pytest.fixture(scope="module")
def ours_openai(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        return ragbench_side(tmp_path_factory.mktemp("openai"), monkeypatch, client="openai_client_with_mcp")


def test_openai_client_with_mcp_sends_the_same_request(ours_openai: dict[str, Any]) -> None:
    """The same body but its `input`: the question as one user message item, where the client sends the bare
    string (the API reads both as one user turn)."""
    assert ours_openai["requests"] == OPENAI_FIXTURE["requests"]
    for qid, [theirs] in OPENAI_FIXTURE["bodies"].items():
        [mine] = ours_openai["bodies"][qid]
        assert mine["input"] == [{"role": "user", "content": theirs["input"]}]
        assert without_url(mine) | {"input": None} == without_url(theirs) | {"input": None}


def test_openai_client_with_mcp_writes_the_same_run_files(ours_openai: dict[str, Any]) -> None:
    for qid, theirs in OPENAI_FIXTURE["runs"].items():
        mine = ours_openai["runs"][qid]
        for key in ("status", "tool_call_counts", "retrieved_docids", "result"):
            if key == "result" and fastmcp_call() is None and qid == "malformed":
                continue  # pydantic's words for the arguments {}: fastmcp's own
            assert mine[key] == theirs[key], (qid, key)
        if fastmcp_call() is not None or qid != "malformed":  # the fake counts the characters, that message's too
            assert mine["output_tokens"] == theirs["usage"]["output_tokens"], qid
