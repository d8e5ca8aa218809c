"""BrowseComp-Plus's gemini_client (search_agent/gemini_client.py at commit 97c637c): google-genai's automatic
function calling (AFC) over an MCP session of searcher/mcp_server.py's tools. ragbench runs the same calls on its
side, with no MCP server, so the Gemini API sees the same requests: the tools declared as the SDK derives them
from the MCP tools (`parameters` a Gemini Schema: upper-case types, each argument's title), each request the
question, then every earlier answer's parts as they came and a user turn of the function responses of its calls
(`{"result": CallToolResult}`, `{"error": CallToolResult}` where the tool failed, no id), up to 100 requests (the
client's `maximum_remote_calls`; the last answer's calls still run, as AFC runs them).

The run file is read as the client's `_persist_response` reads the SDK's response: the AFC history (the question
first, as an output_text item) then the last answer's parts. Where that reading raises (an error response, a
result with no content: a docid the corpus lacks, a search that found nothing) or AFC raises (a call of a function
not declared), the client writes no run file; here the example fails with that said.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypedDict

from ragbench.api import ConfigError, Context, Document, Example, Prediction
from ragbench.api.data import JsonObject, JsonValue
from ragbench.api.engines import Engine, Response

from . import anthropic_client, mcp_server
from .qwen_client import Search, retrieved_docids
from .shapes import RunItem, StatusRecord, TurnSampling

ARGUMENTS = {"search": "query", "get_document": "docid"}  # each tool's one argument (searcher/mcp_server.py)
MAX_REMOTE_CALLS = 100  # gemini_client's AutomaticFunctionCallingConfig(maximum_remote_calls=100)
# the run file's status: "completed" for STOP, else the API's finish reason (ragbench's names back to the API's;
# "content_filter" stands for several, SAFETY the first)
STATUS = {"stop": "completed", "tool_calls": "completed", "length": "MAX_TOKENS", "content_filter": "SAFETY"}


class GeminiFunctionCall(TypedDict, total=False):
    """A Part's `function_call` (google-genai's GeminiFunctionCall): the function, its arguments, an id where sent."""

    name: str
    args: JsonObject
    id: str


class ToolResult(TypedDict):
    """An MCP CallToolResult as the SDK dumps it: its content parts (`{"type": "text", "text": ...}`)."""

    content: list[JsonObject]
    isError: bool


class FunctionResponse(TypedDict, total=False):
    """A Part's `function_response`: the function and its response, `{"result": ...}` or `{"error": ...}`."""

    name: str
    response: dict[str, ToolResult]
    id: str


class Part(TypedDict, total=False):
    """A content part of the Gemini API (google-genai's Part as it dumps it): a text (a thought's where `thought`),
    a function call or a function response; what else the API sends (a thought signature) rides along."""

    text: str
    thought: bool
    function_call: GeminiFunctionCall
    function_response: FunctionResponse


class QuestionFailed(Exception):
    """What gemini_client ends a question with, writing no run file."""


def check_engine(engine: Engine) -> None:
    """A ConfigError, before the run, for an engine that sends no Gemini API requests (`replay` answers them)."""
    if engine.kind not in ("gemini", "replay"):
        raise ConfigError(
            f"search_agent: client=gemini_client sends Gemini API requests, not the {engine.kind} engine's; run "
            "the model with --model gemini:MODEL"
        )


def declaration(name: str, description: str, argument: str) -> JsonObject:
    """A tool as google-genai declares an MCP tool of one string argument (its input schema from fastmcp)."""
    schema: JsonObject = {"type": "OBJECT", "properties": {argument: {"type": "STRING", "title": argument.title()}}}
    schema["required"] = [argument]
    return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}


def fastmcp_content(value: Any) -> list[JsonObject]:
    """A tool's return value as fastmcp 2.9.2 answers it: one text part of its JSON (indent 2, not ASCII-escaped;
    a list of one item as the item), none for None or an empty list."""
    text = mcp_server.fastmcp_text(value)
    return [] if text is None else [{"type": "text", "text": text}]


@dataclass
class GeminiRun:
    """One question's AFC: the parts of its history (the question, each answer, each turn of function responses)
    when a call ran, the last answer's parts, finish reason and output tokens, the requests made."""

    history: list[Part] = field(default_factory=list)
    last: list[Part] = field(default_factory=list)
    finish_reason: str = "stop"
    output_tokens: int = 0
    requests: int = 0


def answer_parts(response: Response) -> list[Part]:
    """An answer's parts: as the SDK dumped them (the engine keeps them where they hold thoughts), else its text
    and calls (the API sends calls without an id)."""
    if response.items is not None:
        parts: list[Part] = json.loads(response.items)
        return parts
    out: list[Part] = [{"text": response.text}] if response.text else []
    calls = response.tool_calls
    return out + [{"function_call": {"name": c.name, "args": json.loads(c.raw_arguments)}} for c in calls]


async def function_response(tools: dict[str, mcp_server.ServedTool], call: GeminiFunctionCall) -> FunctionResponse:
    """One call run as AFC runs it on the MCP session: `{"result": CallToolResult}`, `{"error": ...}` where the
    tool failed (fastmcp's text for arguments that do not fit)."""
    name = call["name"]
    if name not in tools:
        raise QuestionFailed(
            f"gemini_client: the model called {name!r}, a function the request did not declare; google-genai's "
            f"automatic function calling raises KeyError: {name!r}"
        )
    try:
        content, failed = fastmcp_content(await tools[name].function(**(call.get("args") or {}))), False
    except TypeError as exc:  # arguments that do not fit the tool
        content, failed = [{"type": "text", "text": f"Error calling tool '{name}': {exc}"}], True
    return {"name": name, "response": {"error" if failed else "result": {"content": content, "isError": failed}}}


async def run_agent(
    ctx: Context,
    turns: list[dict[str, str]],
    declarations: list[JsonObject],
    tools: dict[str, mcp_server.ServedTool],
    sampling: TurnSampling,
) -> GeminiRun:
    """The requests of one question (`turns`: the system turn, if any, then the question)."""
    run, sent = GeminiRun(), list[Mapping[str, object]]()
    for request in range(MAX_REMOTE_CALLS):
        with ctx.group(f"request {request + 1}"):
            response = await ctx.llm.chat([*turns, *sent], step="turn", tools=declarations, **sampling)
        run.requests += 1
        run.last, run.finish_reason = answer_parts(response), response.finish_reason
        run.output_tokens = response.completion_tokens
        calls = [part["function_call"] for part in run.last if part.get("function_call")]
        if not calls:
            break
        answers: list[Part] = [{"function_response": await function_response(tools, call)} for call in calls]
        for call, answer in zip(calls, answers):
            ctx.record_step(f"tool {call['name']}", inputs={"args": call.get("args")}, outputs=answer)
        if not run.history:
            run.history.append({"text": turns[-1]["content"]})
        run.history += run.last + answers
        sent += [{"role": "assistant", "content": None, "items": run.last}]
        sent += [{"role": "user", "content": None, "items": answers}]
    return run


def response_output(answer: FunctionResponse) -> JsonValue:
    """A function response's text as the client reads it (`response.result.content[0].text`)."""
    name = answer.get("name")
    result = (answer.get("response") or {}).get("result")
    if result is None:
        raise QuestionFailed(
            f"gemini_client: the function response of {name!r} is an error, which the client's run file cannot "
            "read ('NoneType' object has no attribute 'get')"
        )
    content = result.get("content") or []
    if not content:
        raise QuestionFailed(
            f"gemini_client: the function response of {name!r} has no content (a None result, a docid the corpus "
            "lacks, or an empty list, a search that found nothing), which the client's run file cannot read (list "
            "index out of range)"
        )
    return content[0].get("text")


def run_record(run: GeminiRun) -> StatusRecord:
    """The run file's fields: a tool_call item per function_call (its `args` as the arguments; its output the
    text of the first response of that name that has none yet), a reasoning item per thought, an output_text
    item per other text; the calls per tool (a response counts, and a call no response answered); the docids
    its searches' outputs name; the status."""
    result: list[RunItem] = []
    counts: dict[str, int] = {}
    pending: dict[str, RunItem] = {}
    for part in run.history + run.last:
        call, answer = part.get("function_call"), part.get("function_response")
        if call:
            entry: RunItem = {
                "type": "tool_call",
                "tool_name": call.get("name"),
                "arguments": call.get("args"),
                "output": None,
            }
            pending[call.get("id") or f"call_{len(pending)}"] = entry
            result.append(entry)
        elif answer:
            name, output = answer.get("name"), response_output(answer)
            matched = pending.get(answer["id"]) if answer.get("id") else None
            matched = matched or next(
                (e for e in pending.values() if e["tool_name"] == name and e["output"] is None), None
            )
            if matched is not None:
                matched["output"] = output
            else:
                result.append({"type": "tool_call", "tool_name": name, "arguments": None, "output": output})
            counts[str(name)] = counts.get(str(name), 0) + 1  # a function_response's: of a declared function
        elif part.get("thought") is True:
            result.append({"type": "reasoning", "tool_name": None, "arguments": None, "output": [part.get("text", "")]})
        elif part.get("text"):
            result.append({"type": "output_text", "tool_name": None, "arguments": None, "output": part["text"]})
    for entry in pending.values():
        if entry["output"] is None:
            counts[str(entry["tool_name"])] = counts.get(str(entry["tool_name"]), 0) + 1
    return {
        "status": STATUS.get(run.finish_reason, run.finish_reason.upper()),
        "tool_call_counts": counts,
        "retrieved_docids": retrieved_docids(result),
        "result": result,
    }


async def run_example(
    agent: Any, example: Example, ctx: Context, question: dict[str, str], search: Search, lookup: Any
) -> Prediction:
    """One example of `agent` (a SearchAgent of gemini_client): its requests, and the prediction from the run
    file."""
    served = mcp_server.search_tools(agent.k, agent.get_document, search, lookup, agent._served)
    declarations = [declaration(tool.name, tool.description, ARGUMENTS[tool.name]) for tool in served]
    turns = [{"role": "system", "content": agent.system_prompt}] if agent.system_prompt else []
    sampling = agent._sampling(agent.token_budget, ctx.llm.engine.served_model)
    run = await run_agent(ctx, turns + [question], declarations, {t.name: t for t in served}, sampling)
    record = run_record(run)

    def document(docid: str) -> Document | None:
        found: Document | None = agent._served.get(docid) or (lookup(docid) if lookup else None)
        return found

    extras = {"turns": run.requests, "output_tokens": run.output_tokens}
    return anthropic_client.prediction(example.id, record, extras, document)
