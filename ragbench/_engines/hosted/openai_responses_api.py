"""OpenAI's Responses API (`POST /v1/responses`, the `openai` engine's `api=responses`), as BrowseComp-Plus's
clients speak it (search_agent/openai_client.py at commit 97c637c): a chat request becomes `input` items (a
first system turn the `instructions`; user and assistant texts messages (a turn's images `input_image` parts with a
base64 `data:` URL, its texts then `input_text` parts); an assistant's tool calls
`function_call` items, or the output items its Responses answer held, reasoning included, sent back as they
are; a tool result a `function_call_output`), tools the API's flat function form (a remote MCP server tool,
`{"type": "mcp", ...}`, as it is: OpenAI's servers call its tools, the answer's `mcp_call` items kept), the limit
`max_output_tokens`. The answer's `output` gives the text (its messages' output_text parts), the tool calls
(`call_id`, name, arguments as written), the items themselves as sent (what the clients send back, openai_client
without their `status`), `usage` and a finish reason read from `status` and `incomplete_details`. An output item
or a message's content part without a `type`, or a usage whose counts are no token counts (hosted/usage_counts.py),
makes the answer unreadable (ValueError), retried as any unreadable answer.
"""

from __future__ import annotations

import json
from typing import Any

from ..._values.engine_errors import RequestError
from ..._values.json_values import JsonObject, JsonValue
from ..._values.llm_request import Request
from ..._values.llm_responses import Response
from ..._values.tool_calls import TOOL_CHOICES, ToolCall
from ..chat_messages import ChatMessage, chat_messages, content_of, responses_image_part
from .openai_responses import sampling_sent, token_limit_sent, top_logprobs_asked
from .usage_counts import OPENAI_RESPONSES, usage_tokens

_INCOMPLETE = {"max_output_tokens": "length", "content_filter": "content_filter"}


def responses_arguments(request: Request, model: str) -> JsonObject:
    """Keyword arguments of the SDK's `responses.create()` for `request` (besides extra body and headers)."""
    sampling = request.sampling
    for asked, what in (
        (sampling.n != 1, "n > 1"),
        (sampling.stop, "stop strings"),
        (top_logprobs_asked(sampling) is not None, "log-probs"),
    ):
        if asked:
            raise RequestError(f"openai engine, api=responses: the Responses API takes no {what}")
    turns = chat_messages(request)
    args: JsonObject = {"model": model}
    if turns and turns[0]["role"] == "system":
        args["instructions"], turns = turns[0]["content"], turns[1:]
    args["input"] = [item for turn in turns for item in input_items(turn)]
    if request.tools:
        tools: list[JsonValue] = [
            tool.definition if tool.remote_mcp else {"type": "function", **tool.function} for tool in request.tools
        ]
        args["tools"] = tools
    if request.tool_choice is not None:
        choice = request.tool_choice
        args["tool_choice"] = choice if choice in TOOL_CHOICES else {"type": "function", "name": choice}
    args.update(**token_limit_sent(sampling, "max_output_tokens"), **sampling_sent(sampling))
    if sampling.json_mode:
        args["text"] = {"format": {"type": "json_object"}}
    return args


def input_items(turn: ChatMessage) -> list[JsonValue]:
    """One chat turn as Responses input items."""
    if "items" in turn:
        return list(turn["items"])
    if turn["role"] == "tool":
        return [{"type": "function_call_output", "call_id": turn["tool_call_id"], "output": turn["content"]}]
    content = content_of(turn, lambda text: {"type": "input_text", "text": text}, responses_image_part)
    items: list[JsonValue] = [] if content is None else [{"role": turn["role"], "content": content}]
    for call in turn.get("tool_calls") or ():
        function = call["function"]
        items.append(
            {
                "type": "function_call",
                "call_id": call["id"],
                "name": function["name"],
                "arguments": function["arguments"],
            }
        )
    return items


def parse_response(answer: Any, tools: bool) -> Response:
    """A Response from the SDK's `Response` object (built without validation: a body that is no Responses
    answer fails here, on a missing field, and is retried as unreadable)."""
    output = list(answer.output)
    texts = [
        part.text
        for item in output
        if _typed(item) == "message"
        for part in item.content or ()
        if _typed(part) == "output_text"
    ]
    calls = tuple(
        ToolCall(id=item.call_id, name=item.name, raw_arguments=item.arguments)
        for item in output
        if item.type == "function_call"
    )
    # as the server sent them: not the defaults of fields a newer SDK knows
    items = [item.model_dump(mode="json", exclude_unset=True, by_alias=True) for item in output]
    if answer.status == "completed":
        finish = "tool_calls" if calls else "stop"
    elif answer.status == "incomplete":
        reason = getattr(answer.incomplete_details, "reason", None)
        finish = _INCOMPLETE.get(str(reason), str(reason))
    else:
        raise ValueError(f"status {answer.status!r}")
    tokens = usage_tokens(answer.usage, OPENAI_RESPONSES)
    return Response(
        texts=["".join(texts)],
        choice_tool_calls=[calls] if tools else None,
        **tokens,
        finish_reason=finish,
        items=json.dumps(items, ensure_ascii=False),
    )


def _typed(value: Any) -> str:
    """An output item's or a content part's `type`; ValueError for one without (an `output_text` part that lost
    its type would otherwise be dropped, its message read as the empty answer)."""
    kind = getattr(value, "type", None)
    if not isinstance(kind, str):
        raise ValueError(f"{type(value).__name__} without a type: {value!r:.80}")
    return kind
