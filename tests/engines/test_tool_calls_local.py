"""Tool calling through `ctx.llm` on the local engines: a scripted answer with tool calls reaches the system (a
malformed one kept and counted), the trace step shows them, the response cache answers an identical tool request
and not one whose tools differ, replay answers a recorded tool exchange byte-exactly, and an engine that cannot
send tools refuses the request."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ragbench._engines.replay import ReplayEngine
from ragbench._engines.scripted import ScriptedEngine
from ragbench._llm import LLM
from ragbench._scheduler import Scheduler
from ragbench._storage.cache import ResponseCache
from ragbench.api import Step
from ragbench.api.engines import Engine, Request, RequestError, Response

SEARCH = {"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}}
FETCH = {"type": "function", "function": {"name": "get_document", "parameters": {"type": "object"}}}
ASKED = [{"role": "user", "content": "Who wrote it?"}]
CALLS = [
    {"id": "call_1", "name": "search", "arguments": {"query": "author  of\u00e9"}},
    {"id": "call_2", "name": "search", "arguments": '{"query": "cut'},
]


class Counting:
    """A script answering with CALLS, then (after a tool turn) with text; counts the requests it answered."""

    def __init__(self) -> None:
        self.asked: list[Request] = []

    def __call__(self, request: Request) -> Any:
        self.asked.append(request)
        if request.message_dicts()[-1]["role"] == "tool":
            return "Ann wrote it."
        return {"tool_calls": CALLS}


def chat(llm: LLM, messages: list[dict[str, Any]], tools: list[dict[str, Any]], **kw: Any) -> Response:
    async def go() -> Response:
        try:
            return await llm.chat(messages, tools=tools, **kw)
        finally:
            await llm.scheduler.close()

    return asyncio.run(go())


def test_a_scripted_tool_exchange_reaches_the_system_and_its_trace():
    trace: list[Step] = []
    script = Counting()
    llm = LLM(Scheduler(), ScriptedEngine("x", script=script), trace=trace)
    response = chat(llm, ASKED, [SEARCH], tool_choice="auto")
    assert response.finish_reason == "tool_calls" and [c.name for c in response.tool_calls] == ["search", "search"]
    assert response.tool_calls[0].arguments == {"query": "author  ofé"}
    assert response.tool_calls[1].raw_arguments == '{"query": "cut' and response.tool_calls[1].arguments is None
    assert response.malformed_tool_calls == 1
    assert script.asked[0].tool_dicts() == [SEARCH] and script.asked[0].tool_choice == "auto"
    assert trace[0].request["tools"] == [SEARCH]
    assert [c["function"]["arguments"] for c in trace[0].response["tool_calls"][0]] == [
        json.dumps({"query": "author  ofé"}, ensure_ascii=False),
        '{"query": "cut',
    ]
    turn = {"role": "assistant", "content": None, "tool_calls": response.tool_calls}
    answered = chat(
        LLM(Scheduler(), ScriptedEngine("x", script=script), trace=trace),
        [*ASKED, turn, {"role": "tool", "tool_call_id": "call_1", "content": "[1] Ann"}],
        [SEARCH],
    )
    assert answered.text == "Ann wrote it." and answered.tool_calls == ()
    assert script.asked[-1].message_dicts()[1]["tool_calls"][1]["function"]["arguments"] == '{"query": "cut'


def test_the_cache_answers_an_identical_tool_request_and_not_one_with_other_tools(tmp_path: Path):
    script = Counting()
    engine = ScriptedEngine("x", script=script)

    def ask(tools: list[dict[str, Any]]) -> Response:
        return chat(LLM(Scheduler(ResponseCache(tmp_path / "cache.sqlite")), engine), ASKED, tools)

    first = ask([SEARCH])
    again = ask([SEARCH])
    assert again.cached and not first.cached and len(script.asked) == 1
    assert again.tool_calls == first.tool_calls
    other = ask([SEARCH, FETCH])
    assert not other.cached and len(script.asked) == 2


def test_replay_answers_a_recorded_tool_exchange_byte_exactly(tmp_path: Path):
    request = Request.chat(ASKED, tools=[SEARCH])
    recorded = ScriptedEngine("x", script=Counting()).generate([request])[0]
    assert isinstance(recorded, Response)
    path = tmp_path / "llm.jsonl"
    path.write_text(
        json.dumps(
            {**request.to_dict(), "response": recorded.text, "response_data": recorded.to_dict()}, ensure_ascii=False
        )
        + "\n",
        encoding="utf-8",
    )
    replay = ReplayEngine(str(path))
    back = replay.generate([request])[0]
    assert isinstance(back, Response) and back.to_dict() == recorded.to_dict()
    assert back.tool_calls[1].raw_arguments == '{"query": "cut'
    missed = replay.generate([Request.chat(ASKED, tools=[FETCH]), Request.chat(ASKED)])
    assert all(not isinstance(answer, Response) for answer in missed)


def test_a_hand_written_replay_record_answers_with_tool_calls(tmp_path: Path):
    path = tmp_path / "calls.jsonl"
    path.write_text(json.dumps({"messages": ASKED, "tools": [SEARCH], "tool_calls": CALLS}) + "\n")
    back = ReplayEngine(str(path)).generate([Request.chat(ASKED, tools=[SEARCH])])[0]
    assert isinstance(back, Response) and back.finish_reason == "tool_calls" and back.text == ""
    assert [c.id for c in back.tool_calls] == ["call_1", "call_2"]


def test_an_engine_that_cannot_send_tools_refuses_a_tool_request():
    class Plain(Engine):
        kind = "plain"

    with pytest.raises(RequestError, match="cannot send tools"):
        chat(LLM(Scheduler(), Plain("m")), ASKED, [SEARCH])


def test_the_preflight_says_when_a_systems_engine_cannot_send_tools():
    from ragbench._run.plan.engine_checks import needs_problems
    from ragbench.api.engines import EngineNeeds

    class Plain(Engine):
        kind = "plain"

    need = EngineNeeds(system="search_agent on browsecomp_plus", tools=True)
    assert (
        "search_agent on browsecomp_plus needs a model that calls tools" in needs_problems(Plain, "m", {}, [need])[1][0]
    )
    assert needs_problems(ScriptedEngine, "echo", {}, [need])[1:] == ([], [])


def test_the_viewer_shows_a_tool_exchange_turn_by_turn(tmp_path):
    from ragbench._view.example import step_view

    trace: list[Step] = []
    turn = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": '{"query": "author"}'}}
        ],
    }
    chat(
        LLM(Scheduler(), ScriptedEngine("x", script=Counting()), trace=trace),
        [*ASKED, turn, {"role": "tool", "tool_call_id": "call_1", "content": "[1] Ann"}],
        [SEARCH],
    )
    chat(LLM(Scheduler(), ScriptedEngine("x", script=Counting()), trace=trace), ASKED, [SEARCH])
    answered, called = (step_view(i, step, tmp_path) for i, step in enumerate(trace))
    assert answered["prompt"] == (
        '[user]\nWho wrote it?\n\n[assistant]\n-> search({"query": "author"})  [call_1]\n\n[tool] (call_1)\n[1] Ann'
    )
    assert answered["reply"] == "Ann wrote it." and '"tools": [\n  "search"\n ]' in answered["details"]
    assert called["reply"].splitlines() == [
        '-> search({"query": "author  ofé"})  [call_1]',
        '-> search({"query": "cut)  [call_2]',
    ]


def test_replicas_of_an_engine_that_calls_tools_call_them():
    from ragbench._engines.replicas import ReplicaSet

    engine = ReplicaSet([ScriptedEngine("x", script=Counting()), ScriptedEngine("x", script=Counting())])
    assert engine.calls_tools and chat(LLM(Scheduler(), engine), ASKED, [SEARCH]).finish_reason == "tool_calls"


def test_a_recorded_tool_call_refers_to_its_trace_step_and_resolves_whole():
    from ragbench._replay.call_refs import _resolve, call_ref, reference, step_response_data

    trace: list[Step] = []
    response = chat(LLM(Scheduler(), ScriptedEngine("x", script=Counting()), trace=trace), ASKED, [SEARCH])
    step = trace[0].to_dict()
    held = step_response_data(step)
    record = reference(step["request"], response.to_dict(), held)
    assert record["ref"] == call_ref(step["request"], held) and "tool_calls" not in record.get("response_data", {})
    assert call_ref({**step["request"], "tools": []}, held) != record["ref"]
    back = _resolve(record, (step["request"], held))
    assert back["tools"] == [SEARCH] and Response.from_dict(back["response_data"]).tool_calls == response.tool_calls


def test_the_runs_tool_calls_and_those_whose_arguments_are_not_json_are_counted_and_warned_about():
    from ragbench._cost.budget import BudgetTally, repeated_work_lines
    from ragbench.api import SampleRecord

    def record(line: dict[str, Any]) -> SampleRecord:
        return SampleRecord.from_dict({"index": 0, **line})

    from ragbench._reports.results.schema import Results

    trace: list[Step] = []
    chat(LLM(Scheduler(), ScriptedEngine("x", script=Counting()), trace=trace), ASKED, [SEARCH])
    tally = BudgetTally()
    tally.add(record({"trace": [step.to_dict() for step in trace], "prediction": {"answer": "x"}}))
    tally.add(record({"trace": [], "prediction": {"answer": "y"}}))
    work = tally.sections()["repeated_work"]
    assert (work["tool_calls"], work["malformed_tool_calls"]) == (2, 1)
    results = Results.from_dict(
        {"results": {}, "details": {}, "counts": {}, "complete": {}, "config": {}, "cost": {}, "versions": {}}
        | {"repeated_work": {"t": work}}
    )
    assert any(
        line.startswith("t: warning: 1 of 2 tool calls had arguments that are not JSON")
        for line in repeated_work_lines(results)
    )
    untooled = BudgetTally()
    untooled.add(record({"trace": [], "prediction": {"answer": "x"}}))
    assert "tool_calls" not in untooled.sections()["repeated_work"]  # a run without tools: no tool_calls key


MCP_SERVER = {"type": "mcp", "server_label": "search-server", "server_url": "http://127.0.0.1:8000/mcp"}


def test_a_remote_mcp_server_is_a_tool_named_by_its_label_that_only_an_mcp_engine_sends():
    from ragbench._values.tool_calls import Tool

    tool = Tool.of(MCP_SERVER)
    assert tool.remote_mcp and tool.name == "search-server" and not Tool.of(SEARCH).remote_mcp
    with pytest.raises(ValueError, match="server_label and a server_url"):
        Tool.of({"type": "mcp", "server_label": "search-server"})
    with pytest.raises(RequestError, match="cannot send a remote MCP server: run the model with --model anthropic:"):
        chat(LLM(Scheduler(), ScriptedEngine("echo")), ASKED, [MCP_SERVER])


def test_pause_turn_answers_only_a_request_that_offered_a_remote_mcp_server():
    from ragbench._values.response_checks import response_problem

    paused = Response(texts=[""], finish_reason="pause_turn", choice_tool_calls=[()])
    assert response_problem(paused, Request.chat(ASKED, tools=[MCP_SERVER])) is None
    assert "offered no remote MCP server" in str(response_problem(paused, Request.chat(ASKED, tools=[SEARCH])))


def test_the_viewer_names_a_remote_mcp_server_tool_by_its_label(tmp_path):
    from ragbench._view.example import step_view

    step = Step(kind="llm", name="turn", request={"messages": ASKED, "tools": [MCP_SERVER, SEARCH]}, response={})
    assert '"tools": [\n  "search-server",\n  "search"\n ]' in step_view(0, step, tmp_path)["details"]
