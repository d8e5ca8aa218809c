"""The Messages API side of the fake agent server (tests/support/search_agent_fake.py): `POST /v1/messages` with the beta
MCP connector, what BrowseComp-Plus's anthropic_client sends. As Anthropic's servers do, the fake itself calls
the tools of the MCP server the request names (`mcp_servers`), through a `McpCaller` it is given (a real MCP
client in the recording's environment, an in-process stand-in in ragbench's tests), and answers with the whole
turn: each call as an `mcp_tool_use` block followed by its `mcp_tool_result`, then the text.

The agent it plays is search_agent_fake's `decide`, over the conversation so far: the question, then each call
and result of this answer and of the earlier answers the request sends back (a `pause_turn` continuation). Where
the request enables thinking, each answer starts with a thinking block. Arguments that are not JSON go to the
tool as `{}` (the API gives a tool an object). A question holding "pause" ends its first answer after the first
result with the next call begun (stop_reason "pause_turn", the last block an `mcp_tool_use` without its
result), as the API pauses a long turn; a "cut short" answer ends with stop_reason "max_tokens".
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from support.search_agent_fake import decide, responses_answer, tokens

# (server url, tool name or None to list the tools, arguments) -> the tools (name, description, inputSchema), or
# the call's result (content blocks, is_error)
McpCaller = Callable[[str, str | None, dict[str, Any]], Any]


def mcp_call(url: str, name: str | None, arguments: dict[str, Any]) -> Any:
    """The McpCaller of a real MCP server: one session of the `mcp` library's SSE client on `url` (its tools, or
    one call's content blocks and whether it failed)."""
    from mcp import ClientSession
    from mcp.client.sse import sse_client

    async def session_call() -> Any:
        async with sse_client(url) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            if name is None:
                return [tool.model_dump(exclude_none=True) for tool in (await session.list_tools()).tools]
            result = await session.call_tool(name, arguments)
            return [part.model_dump(exclude_none=True) for part in result.content], result.isError

    return asyncio.run(session_call())


def question_text(body: dict[str, Any]) -> str:
    first = body["messages"][0]["content"]
    return first if isinstance(first, str) else "".join(part.get("text", "") for part in first)


def result_text(content: Any) -> str:
    return "".join(part.get("text", "") for part in content) if isinstance(content, list) else str(content)


def history(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The calls and results of the answers the request sends back, as canonical tool turns."""
    turns: list[dict[str, Any]] = []
    for message in body["messages"][1:]:
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block["type"] == "mcp_tool_use":
                call = {"id": block["id"], "name": block["name"], "arguments": json.dumps(block["input"])}
                turns.append({"role": "assistant", "content": None, "tool_calls": [call]})
            elif block["type"] == "mcp_tool_result":
                turns.append(
                    {"role": "tool", "tool_call_id": block["tool_use_id"], "content": result_text(block["content"])}
                )
    return turns


def mcp_tools(url: str, mcp: McpCaller) -> list[dict[str, Any]]:
    """The MCP server's tools, in the form the fake agent reads."""
    return [
        {"name": tool["name"], "description": tool.get("description"), "parameters": tool["inputSchema"]}
        for tool in mcp(url, None, {})
    ]


def play(request: dict[str, Any], url: str, mcp: McpCaller, prefix: str, pause: bool) -> tuple[list[Any], str | None]:
    """The fake agent's turns on the API's side: each call (id, name, input, its arguments' text, and the
    result's content and is_error, None where the turn paused before it) made on the MCP server, and the final
    text (None: paused, after the first result, at the next call)."""
    calls_made: list[Any] = []
    while True:
        text, calls = decide(request)
        if not calls:
            return calls_made, text
        turn: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": []}
        request["messages"].append(turn)
        for name, arguments in calls:
            use_id = f"{prefix}_{len(calls_made)}"
            try:
                given = json.loads(arguments)
            except ValueError:
                given = {}
            turn["tool_calls"].append({"id": use_id, "name": name, "arguments": arguments})
            if pause and len(calls_made) == 1:
                return calls_made + [(use_id, name, given, arguments, None, None)], None
            content, is_error = mcp(url, name, given)
            calls_made.append((use_id, name, given, arguments, content, is_error))
            request["messages"].append({"role": "tool", "tool_call_id": use_id, "content": result_text(content)})


def messages_payload(body: dict[str, Any], mcp: McpCaller) -> dict[str, Any]:
    """The whole answer to one Messages request: the fake agent's turns, each call made on the MCP server."""
    (server,) = body["mcp_servers"]
    question = question_text(body)
    request = {"model": body["model"], "messages": [{"role": "user", "content": question}]}
    request |= {"tools": mcp_tools(server["url"], mcp)}
    request["messages"] += history(body)
    answer = 1 + sum(message["role"] == "assistant" for message in body["messages"])
    blocks: list[dict[str, Any]] = []
    if (body.get("thinking") or {}).get("type") == "enabled":
        blocks.append({"type": "thinking", "thinking": f"Answer {answer}: deciding.", "signature": f"sig{answer}"})
    calls, text = play(request, server["url"], mcp, f"mcptoolu_{answer}", "pause" in question and answer == 1)
    for use_id, name, given, _, content, is_error in calls:
        blocks.append({"type": "mcp_tool_use", "id": use_id, "name": name, "server_name": server["name"]})
        blocks[-1]["input"] = given
        if content is not None:
            blocks.append({"type": "mcp_tool_result", "tool_use_id": use_id, "is_error": is_error, "content": content})
    if text is not None:
        blocks.append({"type": "text", "text": text})
    stop = "pause_turn" if text is None else "max_tokens" if "cut short" in question else "end_turn"
    return {
        "id": f"msg_{answer}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": tokens(json.dumps(body["messages"])), "output_tokens": tokens(json.dumps(blocks))},
    }


def remote_mcp(body: dict[str, Any]) -> dict[str, Any] | None:
    """A Responses request's remote MCP server tool (`{"type": "mcp", ...}`), None for none."""
    return next((tool for tool in body.get("tools") or () if tool.get("type") == "mcp"), None)


def responses_mcp_payload(body: dict[str, Any], mcp: McpCaller) -> dict[str, Any]:
    """The whole answer to one Responses request with a remote MCP server tool: the server's tools listed
    (`mcp_list_tools`), a reasoning item, each call an `mcp_call` item (its output; an error's text also as its
    `error`), then the message; status "incomplete" for a "cut short" question."""
    tool = remote_mcp(body)
    assert tool is not None
    given = body["input"]
    question = given if isinstance(given, str) else given[0]["content"]
    tools = mcp_tools(tool["server_url"], mcp)
    request = {"model": body["model"], "messages": [{"role": "user", "content": question}], "tools": tools}
    calls, text = play(request, tool["server_url"], mcp, "mcp_1", pause=False)
    listed = [{"name": t["name"], "description": t["description"], "input_schema": t["parameters"]} for t in tools]
    label = tool["server_label"]
    output: list[dict[str, Any]] = [{"type": "mcp_list_tools", "id": "mcpl_1", "server_label": label, "tools": listed}]
    output.append({"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Deciding."}]})
    for use_id, name, _, arguments, content, is_error in calls:
        text_out = result_text(content)
        output.append({"type": "mcp_call", "id": use_id, "server_label": label, "name": name, "arguments": arguments})
        output[-1] |= {"output": text_out, "error": text_out if is_error else None}
    cut = "cut short" in question
    part = {"type": "output_text", "text": text, "annotations": []}
    output.append({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed", "content": [part]})
    used = tokens(json.dumps(given)), tokens(json.dumps(output[1:]))  # the listing is no output
    return responses_answer("resp_1", body["model"], cut, output, body.get("tool_choice"), used)
