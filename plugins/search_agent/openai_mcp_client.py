"""BrowseComp-Plus's openai_client_with_mcp (search_agent/openai_client_with_mcp.py at commit 97c637c): one
Responses API request per question with a remote `mcp` tool, the MCP server whose tools OpenAI's servers call
themselves, so one answer holds every call (`mcp_call` items, each with its output), the reasoning and the text;
its run file is read from the answer's output items (`_persist_response`).
"""

from __future__ import annotations

import json

from ragbench.api import Context
from ragbench.api.data import JsonObject

from .qwen_client import retrieved_docids
from .shapes import RunItem, StatusRecord, TurnSampling

LABEL = "browsecomp-plus"  # the client's --mcp-name


async def answer(
    ctx: Context, question: list[dict[str, str]], server_url: str, sampling: TurnSampling
) -> tuple[list[JsonObject], str, int]:
    """The one request of a question: `question` (the system turn, if any, and the user turn), the MCP server at
    `server_url` as the client's tool (`require_approval` "never"), tool choice "auto", `sampling`; the answer's
    output items, finish reason and output tokens."""
    server = {"type": "mcp", "server_url": server_url, "server_label": LABEL, "require_approval": "never"}
    response = await ctx.llm.chat(question, step="turn", tools=[server], tool_choice="auto", **sampling)
    items: list[JsonObject] = json.loads(response.items or "[]")
    return items, response.finish_reason, response.completion_tokens


def run_record(items: list[JsonObject], finish_reason: str) -> StatusRecord:
    """The run file's fields: a tool_call item per `mcp_call` (its arguments' text and output), a reasoning item
    per reasoning item (its summary), an output_text item per message with text (its output_text parts joined by
    newlines, stripped); the calls per tool; the searches' docids; the status, the response's ("completed", else
    "incomplete")."""
    result: list[RunItem] = []
    counts: dict[str, int] = {}
    for item in items:
        kind = item.get("type")
        if kind == "mcp_call":
            name = str(item.get("name"))
            counts[name] = counts.get(name, 0) + 1
            result.append(
                {
                    "type": "tool_call",
                    "tool_name": item.get("name"),
                    "arguments": item.get("arguments"),
                    "output": item.get("output"),
                }
            )
        elif kind == "reasoning":
            result.append({"type": "reasoning", "tool_name": None, "arguments": None, "output": item.get("summary")})
        elif kind == "message":
            content = item.get("content")
            listed = content if isinstance(content, list) else []
            parts = [p for p in listed if isinstance(p, dict) and p.get("type") == "output_text"]
            text = "\n".join(chunk for chunk in (str(p.get("text", "")) for p in parts) if chunk).strip()
            if text:
                result.append({"type": "output_text", "tool_name": None, "arguments": None, "output": text})
    return {
        "status": "completed" if finish_reason in ("stop", "tool_calls") else "incomplete",
        "tool_call_counts": counts,
        "retrieved_docids": retrieved_docids(result),
        "result": result,
    }
