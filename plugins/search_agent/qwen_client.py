"""BrowseComp-Plus's qwen_client (search_agent/qwen_client.py at commit 97c637c): Qwen's agent library, qwen_agent
0.0.27's `Assistant` over an OpenAI-compatible server, with searcher/mcp_server.py's tools (fastmcp 2.9.2). Its
requests carry no `tools`: the tools are listed in the system message (qwen_agent's "nous" function-calling prompt,
llm/fncall_prompts/nous_fncall_prompt.py), the model writes its calls in its text between <tool_call> tags, each
call goes back re-written from the call as read, and the results go back in a user message between
<tool_response> tags. What it records per query is qwen_client's `_persist_response`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, NamedTuple

from ragbench.api import Context, Document
from ragbench.api.data import JsonObject, JsonValue, parse_json
from ragbench.api.engines import InvalidArguments, checked_arguments

from . import mcp_server
from .shapes import DocumentValue, FunctionCall, QwenMessage, RunFileRecord, RunItem, SearchHit, TurnSampling
from .tools import ToolAnswer

SERVER = "search-server"  # mcp_server.py's FastMCP name: qwen_agent calls each tool "<server>-<tool>"
FN_CALL_TEMPLATE = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n{tool_descs}\n</tools>\n\n"
    "For each function call, return a json object with function name and arguments within <tool_call></tool_call> "
    'XML tags:\n<tool_call>\n{{"name": <function-name>, "arguments": <args-json-object>}}\n</tool_call>'
)
NO_RESULT = "execute error"  # qwen_agent's text for a tool that answered no text (fastmcp sends none for None or [])
DOCID = (re.compile(r'"docid"\s*:\s*"([^"]+)"'), re.compile(r'"docid"\s*:\s*(\d+)'))


def mcp_function(tool: str, description: str, argument: str) -> JsonObject:
    """A tool as qwen_agent lists it from the MCP server: its name after the server's, the input schema fastmcp
    derives from the Python signature (one required string argument, titled)."""
    schema: JsonObject = {"type": "object", "properties": {argument: {"title": argument.title(), "type": "string"}}}
    return {"name": f"{SERVER}-{tool}", "description": description, "parameters": schema | {"required": [argument]}}


def system_message(functions: list[JsonObject], system_prompt: str | None) -> str:
    """The system message: the prompt given (none by default), then the tools, one JSON line each."""
    lines = "\n".join(json.dumps({"type": "function", "function": f}, ensure_ascii=False) for f in functions)
    tools = FN_CALL_TEMPLATE.format(tool_descs=lines)
    return f"{system_prompt}\n\n{tools}" if system_prompt else tools


def extract_fn(text: str) -> tuple[str, str]:
    """qwen_agent's reading of a call that is no JSON (nous_fncall_prompt.extract_fn): the name after `"name": "`
    up to `", "`, the arguments after `"arguments": ` less their last character."""
    name, arguments = "", ""
    i, k = text.find('"name": "'), text.find('"arguments": ')
    if i > 0:
        rest = text[i + len('"name": "') :]
        j = rest.find('", "')
        if j > -1:
            name = rest[:j]
    if k > 0:
        arguments = text[k + len('"arguments": ') :]
    arguments = arguments.strip()
    return name, arguments[:-1] if len(arguments) > 2 else ""


def read_answer(text: str) -> list[QwenMessage]:
    """An answer's text as qwen_agent reads it (NousFnCallPrompt.postprocess_fncall_messages): the text before the
    first <tool_call> a message of its own, each block a call (text after a block's </tool_call> dropped)."""
    messages: list[QwenMessage] = []
    pieces = text.split("<tool_call>")
    if pieces[0].strip() or (len(pieces) == 1 and pieces[0]):
        messages.append({"role": "assistant", "content": pieces[0]})
    for piece in pieces[1:]:
        if not piece.strip():
            continue
        if "</tool_call>" not in piece:
            name, arguments = extract_fn(piece)
            if not name:
                continue
        else:
            written = piece.split("</tool_call>")[0].strip()
            try:
                call, parsed = parse_json(written), True  # too deep to parse: no JSON, as a broken call
            except ValueError:
                parsed = False
                name, arguments = extract_fn(written)
            if parsed:
                if not call:  # null, false, 0, "", [], {}: no call
                    continue
                try:
                    name, arguments = call["name"], json.dumps(call["arguments"], ensure_ascii=False)
                except (TypeError, KeyError):  # qwen_agent fails the query here; read as no JSON
                    name, arguments = extract_fn(written)
        messages.append({"role": "assistant", "content": "", "function_call": {"name": name, "arguments": arguments}})
    return messages


def written_call(call: FunctionCall) -> str:
    """A call as qwen_agent writes it back: its arguments parsed where they parse, else as a JSON string."""
    arguments: Any = call["arguments"]
    try:
        arguments = parse_json(arguments)
    except ValueError:
        pass
    return (
        "<tool_call>\n"
        + json.dumps({"name": call["name"], "arguments": arguments}, ensure_ascii=False)
        + "\n</tool_call>"
    )


def assistant_text(turn: list[QwenMessage]) -> str:
    """A turn's messages as one assistant message (NousFnCallPrompt.preprocess_fncall_messages): its texts and
    written calls, a newline between two where the first does not end with one."""
    text = ""
    for message in turn:
        part = written_call(message["function_call"]) if "function_call" in message else message["content"]
        if text and not text.endswith("\n"):
            text += "\n"
        text += part
    return text


def tool_responses(outputs: list[str]) -> str:
    """The results of a turn's calls as one user message."""
    return "\n".join(f"<tool_response>\n{output}\n</tool_response>" for output in outputs)


def mcp_text(value: Any) -> str:
    """A tool's return value as qwen_agent receives it over MCP: fastmcp's JSON text (indent 2, not ASCII-escaped),
    a list of one item as that item, nothing (qwen_agent's "execute error") for None or an empty list."""
    text = mcp_server.fastmcp_text(value)
    return NO_RESULT if text is None else text


def call_error(name: str, exc: Exception) -> str:
    """What qwen_agent tells the model when a tool raises (Agent._call_tool), up to its traceback, whose lines name
    the files of qwen_agent's installation and are left out."""
    return f"An error occurred when calling tool `{name}`:\n{type(exc).__name__}: {exc}\nTraceback:\n"


def retrieved_docids(result: list[RunItem]) -> list[str]:
    """search_agent/utils.py's extract_retrieved_docids_from_result: the docids of every search's output, read as
    a JSON list, else grepped from its text; sorted."""
    found: set[str] = set()
    for item in result:
        if item["type"] != "tool_call" or "search" not in str(item["tool_name"] or "").lower():
            continue
        output = item["output"]
        try:
            parsed = json.loads(output) if isinstance(output, str) else None
        except (ValueError, RecursionError):
            parsed = None
        if isinstance(parsed, list):
            found.update(str(e["docid"]) for e in parsed if isinstance(e, dict) and "docid" in e)
        elif isinstance(output, str):
            found.update(m for pattern in DOCID for m in pattern.findall(output))
    return sorted(found)


def run_record(response: list[QwenMessage]) -> RunFileRecord:
    """qwen_client's `_persist_response` over the agent's messages: a tool_call item per call with the output of a
    function message right after it under the same name (else None: of calls made in one turn only the last gets
    one, the first result), an output_text item per assistant message with text; the calls per tool, unknown
    tools too; the docids its searches' recorded outputs name."""
    result: list[RunItem] = []
    counts: dict[str, int] = {}
    i = 0
    while i < len(response):
        message = response[i]
        if "function_call" in message:
            name = message["function_call"]["name"]
            tool = re.sub(f"^{SERVER}-", "", name)
            following = response[i + 1] if i + 1 < len(response) else QwenMessage()
            output = None
            if following.get("role") == "function" and following.get("name") == name:
                output, i = following["content"], i + 1
            arguments = message["function_call"]["arguments"]
            result.append({"type": "tool_call", "tool_name": tool, "arguments": arguments, "output": output})
            counts[tool] = counts.get(tool, 0) + 1
        elif message["role"] == "assistant" and message["content"].strip():
            result.append(
                {"type": "output_text", "tool_name": None, "arguments": None, "output": message["content"].strip()}
            )
        i += 1
    return {
        "tool_call_counts": counts,
        "retrieved_docids": retrieved_docids(result),
        "result": result,
    }


Search = Callable[[str], Awaitable[tuple[list[SearchHit], list[Document]]]]


async def call_tool(
    call: FunctionCall,
    offered: Mapping[str, JsonValue],
    search: Search,
    document: Callable[[str], DocumentValue | None],
) -> ToolAnswer:
    """One call as qwen_agent makes it (Agent._call_tool, then the MCP tool's call): an unknown name answered as
    such, the arguments read with `json.loads` and held to the tool's input schema (`offered`: each tool's, by
    name; fastmcp validates them so), the result as MCP carries it."""
    name = call["name"]
    if name not in offered:
        return ToolAnswer(f"Tool {name} does not exists.", failed=True)
    try:
        arguments = checked_arguments(offered[name], json.loads(call["arguments"]))
        if name == f"{SERVER}-search":
            hits, docs = await search(arguments["query"])
            return ToolAnswer(mcp_text(hits), docs=tuple(docs))
        return ToolAnswer(mcp_text(document(arguments["docid"])))
    except Exception as exc:  # qwen_agent tells the model whatever a tool raises
        return ToolAnswer(call_error(name, exc), failed=True, invalid=isinstance(exc, InvalidArguments))


class AgentRun(NamedTuple):
    """What one query's agent run leaves: qwen_agent's response list, the documents the searches returned, the
    requests made, the output tokens, and the calls whose arguments did not fit their tool's input schema."""

    response: list[QwenMessage]
    docs: list[Document]
    turns: int
    output_tokens: int
    invalid_calls: int


async def run_agent(
    ctx: Context,
    messages: list[dict[str, str]],
    functions: list[JsonObject],
    sampling: TurnSampling,
    max_calls: int,
    search: Search,
    document: Callable[[str], DocumentValue | None],
) -> AgentRun:
    """FnCallAgent._run: at most `max_calls` requests (MAX_LLM_CALL_PER_RUN), each answer's calls made in order,
    until an answer calls nothing; an answer with nothing in it asks again."""
    offered = {str(function["name"]): function["parameters"] for function in functions}
    response: list[QwenMessage] = []
    docs: list[Document] = []
    calls_made = output_tokens = invalid_calls = 0
    while calls_made < max_calls:
        calls_made += 1
        with ctx.group(f"turn {calls_made}"):
            answer = await ctx.llm.chat(messages, step="turn", **sampling)
            output_tokens += answer.completion_tokens
            turn = read_answer(answer.text)
            response += turn
            calls = [message["function_call"] for message in turn if "function_call" in message]
            if turn and not calls:
                break
            if not turn:
                continue
            messages.append({"role": "assistant", "content": assistant_text(turn)})
            outputs = []
            for call in calls:
                answered = await call_tool(call, offered, search, document)
                ctx.record_step(
                    f"tool {call['name']}",
                    inputs={"arguments": call["arguments"]},
                    outputs={"output": answered.output, "failed": answered.failed},
                )
                response.append({"role": "function", "name": call["name"], "content": answered.output})
                outputs.append(answered.output)
                docs += answered.docs
                invalid_calls += answered.invalid
            messages.append({"role": "user", "content": tool_responses(outputs)})
    return AgentRun(response, docs, calls_made, output_tokens, invalid_calls)
