"""The Gemini API side of the fake agent server (tests/support/search_agent_fake.py): `POST
/v1beta/models/MODEL:generateContent`, what google-genai sends for BrowseComp-Plus's gemini_client and for
ragbench's `gemini` engine. The client runs the tools (google-genai's automatic function calling), so the fake
answers one turn a request: the agent of search_agent_fake's `decide` over the conversation the request holds
(the question, each `functionCall` part an assistant call, each `functionResponse` part its result).

An answer's parts: a thought ("Turn N: deciding.", `thought: true`), then the calls as `functionCall` parts
(no `id`, as the Gemini API sends none; arguments that are not JSON go as `{}`) or the answer's text. Its
finishReason is STOP, MAX_TOKENS where a "cut short" question is answered; usage counts a quarter of the
characters (the thought in `thoughtsTokenCount`).
"""

from __future__ import annotations

import json
from typing import Any

from support.search_agent_fake import decide, tokens


def response_text(response: dict[str, Any]) -> str:
    """A `functionResponse`'s text: the MCP result's text parts (google-genai sends the CallToolResult under
    "result" or "error"), else its JSON."""
    for key in ("result", "error"):
        value = response.get(key)
        if isinstance(value, dict) and isinstance(value.get("content"), list):
            return "".join(str(part.get("text", "")) for part in value["content"] if isinstance(part, dict))
        if isinstance(value, str):
            return value
    return json.dumps(response)


def conversation(body: dict[str, Any]) -> dict[str, Any]:
    """A generateContent request as the fake agent reads one: messages and tools."""
    messages: list[dict[str, Any]] = []
    for content in body["contents"]:
        parts = content.get("parts") or []
        calls = [part["functionCall"] for part in parts if "functionCall" in part]
        answers = [part["functionResponse"] for part in parts if "functionResponse" in part]
        texts = "".join(part.get("text", "") for part in parts if not part.get("thought"))
        if content.get("role") == "model":
            tool_calls = [
                {"id": str(i), "name": c["name"], "arguments": json.dumps(c.get("args"))} for i, c in enumerate(calls)
            ]
            messages.append({"role": "assistant", "content": texts or None, "tool_calls": tool_calls})
        elif answers:
            messages += [{"role": "tool", "tool_call_id": "", "content": response_text(a["response"])} for a in answers]
        else:
            messages.append({"role": "user", "content": texts})
    tools = [
        {
            "name": d["name"],
            "description": d.get("description"),
            "parameters": d.get("parameters") or d.get("parametersJsonSchema"),
        }
        for tool in body.get("tools") or ()
        for d in tool.get("functionDeclarations") or ()
    ]
    return {"messages": messages, "tools": tools}


def gemini_payload(body: dict[str, Any], model: str) -> dict[str, Any]:
    """The answer to one generateContent request."""
    request = conversation(body)
    turn = 1 + sum(message["role"] == "assistant" for message in request["messages"])
    text, calls = decide(request)
    thought = f"Turn {turn}: deciding."
    parts: list[dict[str, Any]] = [{"text": thought, "thought": True}]
    for name, arguments in calls:
        try:
            args = json.loads(arguments)
        except ValueError:
            args = {}
        parts.append({"functionCall": {"name": name, "args": args}})
    if text is not None:
        parts.append({"text": text})
    question = next((m["content"] for m in request["messages"] if m["role"] == "user"), "")
    finish = "MAX_TOKENS" if not calls and "cut short" in question else "STOP"
    prompt, thoughts = tokens(json.dumps(body["contents"])), tokens(thought)
    output = tokens(json.dumps(parts[1:]))
    return {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": finish, "index": 0}],
        "usageMetadata": {
            "promptTokenCount": prompt,
            "candidatesTokenCount": output,
            "thoughtsTokenCount": thoughts,
            "totalTokenCount": prompt + output + thoughts,
        },
        "modelVersion": model,
        "responseId": f"resp_{turn}",
    }
