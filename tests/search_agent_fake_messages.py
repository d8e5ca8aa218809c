"""The Messages API side of the fake agent server (tests/search_agent_fake.py): `POST /v1/messages` with the beta
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

from search_agent_fake import decide, tokens

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


def messages_payload(body: dict[str, Any], mcp: McpCaller) -> dict[str, Any]:
    """The whole answer to one Messages request: the fake agent's turns, each call made on the MCP server."""
    (server,) = body["mcp_servers"]
    tools = [
        {"name": tool["name"], "description": tool.get("description"), "parameters": tool["inputSchema"]}
        for tool in mcp(server["url"], None, {})
    ]
    request = {"model": body["model"], "messages": [{"role": "user", "content": question_text(body)}], "tools": tools}
    request["messages"] += history(body)
    answer = 1 + sum(message["role"] == "assistant" for message in body["messages"])
    thinking = (body.get("thinking") or {}).get("type") == "enabled"
    blocks: list[dict[str, Any]] = []
    if thinking:
        blocks.append({"type": "thinking", "thinking": f"Answer {answer}: deciding.", "signature": f"sig{answer}"})
    stop, made = "end_turn", 0
    while True:
        text, calls = decide(request)
        if not calls:
            blocks.append({"type": "text", "text": text})
            if "cut short" in request["messages"][0]["content"]:
                stop = "max_tokens"
            break
        turn: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": []}
        request["messages"].append(turn)
        for name, arguments in calls:
            use_id = f"mcptoolu_{answer}_{made}"
            try:
                given = json.loads(arguments)
            except ValueError:
                given = {}
            blocks.append(
                {"type": "mcp_tool_use", "id": use_id, "name": name, "server_name": server["name"]} | {"input": given}
            )
            turn["tool_calls"].append({"id": use_id, "name": name, "arguments": arguments})
            if "pause" in request["messages"][0]["content"] and answer == 1 and made == 1:
                stop = "pause_turn"
                break
            content, is_error = mcp(server["url"], name, given)
            blocks.append({"type": "mcp_tool_result", "tool_use_id": use_id, "is_error": is_error, "content": content})
            request["messages"].append({"role": "tool", "tool_call_id": use_id, "content": result_text(content)})
            made += 1
        if stop == "pause_turn":
            break
    used_in = tokens(json.dumps(body["messages"]))
    used_out = tokens(json.dumps(blocks))
    return {
        "id": f"msg_{answer}",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": used_in, "output_tokens": used_out},
    }
