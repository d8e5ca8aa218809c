"""Anthropic's Messages API (`POST /v1/messages`, the `anthropic` engine): a request as the body's fields and an
answer read into a Response.

A chat request's system turns become `system` (joined by a blank line), the other turns `messages`: an
assistant's tool calls `tool_use` blocks (its text before them), consecutive tool results one user turn of
`tool_result` blocks, an assistant turn that holds the content blocks of an earlier answer (`Message.items`:
thinking blocks must go back with the tool calls they led to) those blocks as they were. A prompt request is one
user turn. A turn's images are `image` blocks with a base64 `source` and their media type, in order with its `text`
blocks (one the API would refuse resized first: hosted/vendor_images.py). Tools go as `{name, description, input_schema}`, a remote MCP server tool as an `mcp_servers` entry
(the beta MCP connector: the API's servers call its tools), the tool choice as `{"type": "auto" | "none" | "any"
| "tool"}`; with the `anthropic` engine's `prompt_cache` option the last tool and the system prompt carry
`cache_control` (`cache_marked`). Sampling: `max_tokens`, `temperature` and `top_p` unless left to the server (`top_p` only when below
1: recent models refuse both),
`stop_sequences`; n > 1, log-probabilities and LoRA adapters are refused (the API has none); the seed and json_mode are not
sent (the API has neither), as local engines ignore json_mode.

The answer's text blocks give the text, its `tool_use` blocks the tool calls (arguments as JSON text of the
`input`), its `stop_reason` the finish reason (`tool_use` "tool_calls", `max_tokens` "length", `refusal`
"content_filter", `end_turn` and `stop_sequence` "stop", the stop string that fired kept when asked, `pause_turn`
as it is: the turn goes on when the request is sent again with the answer so far), its usage
the tokens (prompt: input plus cache reads and writes; the cache reads and writes, the 1-hour cache's among
them, kept apart to be priced at their rates). The content blocks themselves are kept as the answer's
items when there is more than text and tool calls (thinking, the MCP connector's `mcp_tool_use` and
`mcp_tool_result`), so an agent sends them back. A block without a `type`, or a usage whose counts are no token
counts (hosted/usage_counts.py), makes the answer unreadable (ValueError), retried as any unreadable answer. A
`tool_use` whose `input` is no object (a proxy's model wrote a string) is a call all the same, its arguments the
JSON of that input, for the system to answer with an error; sent back, such a call's input is `{}` (the API
takes nothing else), and so is that of any tool-use block of kept items.
"""

from __future__ import annotations

import json
from typing import Any, TypeGuard

from ..._values.engine_errors import RequestError
from ..._values.json_values import JsonObject, JsonValue
from ..._values.llm_request import Request
from ..._values.llm_responses import Response
from ..._values.tool_calls import ToolCall
from ..chat_messages import ChatMessage, ToolCallForm, anthropic_image_part, chat_messages, content_of, text_part
from .api_engine import call_arguments_object
from .openai_responses import sampling_sent, top_logprobs_asked
from .usage_counts import ANTHROPIC, usage_tokens
from .vendor_images import ANTHROPIC_IMAGES, sent_pictures

_FINISH = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls"}
# pause_turn: the API's servers paused a long turn of server-side tool calls; the request is sent again with the
# answer so far to go on
_FINISH_OTHER = {"refusal": "content_filter", "pause_turn": "pause_turn", "model_context_window_exceeded": "length"}
_CHOICES: dict[str, JsonObject] = {"auto": {"type": "auto"}, "none": {"type": "none"}, "required": {"type": "any"}}
_PLAIN_BLOCKS = {"text", "tool_use"}
PROMPT_CACHE_TTLS = ("5m", "1h")  # Anthropic's prompt cache lifetimes, its default first


def message_arguments(request: Request, model: str, prompt_cache: str | None = None) -> JsonObject:
    """Keyword arguments of the SDK's `messages.create()` for `request` (besides extra body and headers);
    `prompt_cache` ("5m", "1h"): the prefix marked for Anthropic's prompt cache (`cache_marked`)."""
    sampling = request.sampling
    for asked, what in (
        (sampling.n != 1, "n > 1"),
        (top_logprobs_asked(sampling) is not None, "log-probs"),
        (sampling.lora is not None, "LoRA adapters"),
        ("max_tokens" in sampling.left_to_server, "token limit left to the server (it requires max_tokens)"),
    ):
        if asked:
            raise RequestError(f"anthropic engine: the Messages API takes no {what}")
    turns = chat_messages(sent_pictures(request, ANTHROPIC_IMAGES))
    args: JsonObject = {"model": model, "max_tokens": sampling.max_tokens}
    system = [str(turn["content"] or "") for turn in turns if turn["role"] == "system"]
    if system:
        args["system"] = "\n\n".join(system)
    args["messages"] = messages([turn for turn in turns if turn["role"] != "system"])
    sent = sampling_sent(sampling)
    if "temperature" in sent:
        args["temperature"] = sent["temperature"]
    if sent.get("top_p", 1) < 1:
        args["top_p"] = sent["top_p"]
    if sampling.stop:
        args["stop_sequences"] = list(sampling.stop)
    functions = [tool.function for tool in request.tools if not tool.remote_mcp]
    if functions:
        args["tools"] = [tool_definition(function) for function in functions]
    servers: list[JsonValue] = [mcp_server(tool.definition) for tool in request.tools if tool.remote_mcp]
    if servers:
        args["mcp_servers"] = servers
    if request.tool_choice is not None:
        args["tool_choice"] = _CHOICES.get(request.tool_choice) or {"type": "tool", "name": request.tool_choice}
    return cache_marked(args, prompt_cache) if prompt_cache else args


def cache_marked(args: JsonObject, ttl: str) -> JsonObject:
    """`args` with a `cache_control` breakpoint on the prefix every turn of an agent's loop repeats, as
    Anthropic's prompt caching takes it: on the last tool (the cache then holds the tools) and on the system
    prompt, sent as one text block (it holds the tools and the system prompt); nothing else is marked. A 5-minute
    cache is the API's default `{"type": "ephemeral"}`, a 1-hour one adds `"ttl": "1h"`."""
    marker: JsonObject = {"type": "ephemeral"}
    if ttl != PROMPT_CACHE_TTLS[0]:
        marker["ttl"] = ttl
    out = dict(args)
    tools = out.get("tools")
    if isinstance(tools, list) and tools and isinstance(last := tools[-1], dict):
        out["tools"] = [*tools[:-1], {**last, "cache_control": marker}]
    if "system" in out:
        out["system"] = [{"type": "text", "text": out["system"], "cache_control": marker}]
    return out


def mcp_server(tool: JsonObject) -> JsonObject:
    """A remote MCP server tool (`{"type": "mcp", "server_label", "server_url"}`) as the MCP connector's
    `mcp_servers` entry, all its tools enabled."""
    return {"type": "url", "url": tool["server_url"], "name": tool["server_label"]} | {
        "tool_configuration": {"enabled": True}
    }


def tool_definition(function: JsonObject) -> JsonObject:
    """An OpenAI-form function as an Anthropic tool."""
    out: JsonObject = {"name": function["name"]}
    if function.get("description"):
        out["description"] = function["description"]
    out["input_schema"] = function.get("parameters") or {"type": "object", "properties": {}}
    return out


def messages(turns: list[ChatMessage]) -> list[JsonValue]:
    """Chat turns (no system turn) as Messages API turns; consecutive tool results join one user turn."""
    out: list[JsonValue] = []
    for turn in turns:
        if turn["role"] == "tool":
            block: JsonObject = {
                "type": "tool_result",
                "tool_use_id": turn["tool_call_id"],
                "content": turn["content"] or "",
            }
            last = out[-1] if out else None
            results = last["content"] if isinstance(last, dict) and last["role"] == "user" else None
            if _all_results(results):
                results.append(block)
            else:
                out.append({"role": "user", "content": [block]})
        elif "items" in turn:
            out.append({"role": turn["role"], "content": [_sent_block(block) for block in turn["items"]]})
        elif turn.get("tool_calls"):
            blocks: list[JsonValue] = [{"type": "text", "text": turn["content"]}] if turn["content"] else []
            blocks += [_tool_use(call) for call in turn["tool_calls"]]
            out.append({"role": turn["role"], "content": blocks})
        else:
            out.append({"role": turn["role"], "content": content_of(turn, text_part, anthropic_image_part) or ""})
    return out


def _all_results(content: JsonValue) -> TypeGuard[list[JsonValue]]:
    return isinstance(content, list) and all(
        isinstance(block, dict) and block.get("type") == "tool_result" for block in content
    )


def _tool_use(call: ToolCallForm) -> JsonObject:
    arguments = call_arguments_object(call)
    return {"type": "tool_use", "id": call["id"], "name": call["function"]["name"], "input": arguments}


def _sent_block(block: JsonValue) -> JsonValue:
    """A kept content block as it goes back: a tool-use block (`tool_use`, `server_tool_use`, `mcp_tool_use`)
    whose input is no object with input `{}`, which the API takes (it refuses the request otherwise)."""
    if (
        isinstance(block, dict)
        and str(block.get("type")).endswith("tool_use")
        and not isinstance(block.get("input"), dict)
    ):
        return block | {"input": {}}
    return block


def parse_message(answer: Any, request: Request) -> Response:
    """A Response from the SDK's `Message` (built without validation: a body that is no message fails here, on a
    missing field, and is retried as unreadable)."""
    blocks = list(answer.content)
    untyped = next((block for block in blocks if not isinstance(getattr(block, "type", None), str)), None)
    if untyped is not None:  # read as no block at all, it would leave the empty answer
        raise ValueError(f"a content block without a type: {untyped!r:.80}")
    text = "".join(block.text for block in blocks if block.type == "text")
    calls = tuple(
        ToolCall(id=block.id, name=block.name, raw_arguments=json.dumps(block.input, ensure_ascii=False))
        for block in blocks
        if block.type == "tool_use"
    )
    reason = answer.stop_reason
    if reason is None:
        raise ValueError("no stop_reason")
    fired = getattr(answer, "stop_sequence", None)
    if reason == "stop_sequence" and request.sampling.keep_stop and isinstance(fired, str):
        text += fired
    items = None
    if any(block.type not in _PLAIN_BLOCKS for block in blocks):
        dumped = [block.model_dump(mode="json", exclude_unset=True, by_alias=True, warnings=False) for block in blocks]
        items = json.dumps(dumped, ensure_ascii=False)
    tokens = usage_tokens(answer.usage, ANTHROPIC)
    return Response(
        texts=[text],
        choice_tool_calls=[calls] if request.tools else None,
        **tokens,
        finish_reason=_FINISH.get(reason) or _FINISH_OTHER.get(reason, str(reason)),
        items=items,
    )
