"""Google's Gemini API (`models/{model}:generateContent`, the `gemini` engine): a request as `contents` and a
`GenerateContentConfig`'s fields, an answer read into a Response.

A chat request's system turns become `system_instruction` (joined by a blank line), the others `contents`: an
assistant turn role "model" with a text part and a `function_call` part per tool call (`id`, `name`, `args`), a
tool result a `function_response` part (`id`, the called function's `name`, `response: {"result": text}`),
consecutive results one user turn; an assistant turn that holds the parts of an earlier answer
(`Message.items`: thought signatures must go back with the calls they came with) those parts as they were. A
prompt request is one user turn. A turn's images are `inline_data` parts (the SDK's `Part.from_bytes`: the bytes and
their `mime_type`), in order with its `text` parts (a request over the 20 MB Gemini takes inline is refused:
hosted/vendor_images.py). Tools go as one tool of `function_declarations` (the JSON schema as
`parameters_json_schema`), the tool choice as `function_calling_config` (AUTO, NONE, ANY, or ANY limited to the
named function; a schema of upper-case types, a Gemini Schema, as `parameters`); the SDK's automatic function
calling is off. Sampling: `max_output_tokens`, `temperature`, `top_p` and `seed` (each unless left to the server),
`stop_sequences`, `candidate_count` (n), json_mode as `response_mime_type` "application/json"; log-probabilities
and LoRA adapters are refused.

Each candidate's text parts (thoughts left out) give a text, its `function_call` parts the tool calls (an id
derived from the call when the API gives none, so an answer and its cache entry are the same on every run),
the first candidate's `finish_reason` the finish reason (STOP "stop", or "tool_calls" when it called tools;
MAX_TOKENS "length"; SAFETY, RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII "content_filter"; others in lower
case), a prompt the API blocked an empty "content_filter" answer; usage the tokens (completion: candidates plus
thoughts). The API does not say which stop string fired: with keep_stop, the first is appended where the text
ends with none (FlashRAG's rule, as the openai engine). The first candidate's parts are kept as the answer's
items when they hold thoughts or thought signatures, so an agent sends them back. A part that holds no field the
SDK knows (read as no part at all, it would be dropped) or a usage whose counts are no token counts
(hosted/usage_counts.py) makes the answer unreadable (ValueError), retried as any unreadable answer; the SDK reads a
`functionCall` whose `args` is no object as no answer too. A call sent back whose arguments are no JSON object
(the system answered it with an error) goes with `args` `{}`.
"""

from __future__ import annotations

import json
from typing import Any

from ..._values.engine_errors import RequestError
from ..._values.json_values import JsonObject, JsonValue
from ..._values.llm_request import Request
from ..._values.llm_responses import Response
from ..._values.tool_calls import ToolCall
from ..chat_messages import ChatMessage, ToolCallForm, chat_messages, content_of, gemini_image_part
from ..local.tool_parsers import call_id
from .api_engine import call_arguments_object
from .openai_responses import kept_stop, sampling_sent, token_limit_sent, top_logprobs_asked
from .usage_counts import GEMINI, usage_tokens
from .vendor_images import GEMINI_IMAGES, sent_pictures

_MODES = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
_FINISH = {"STOP": "stop", "MAX_TOKENS": "length"}
_FILTERED = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}


def content_arguments(request: Request) -> tuple[list[JsonValue], JsonObject]:
    """(`contents`, the `GenerateContentConfig` fields) for `request`."""
    sampling = request.sampling
    if top_logprobs_asked(sampling) is not None:
        raise RequestError("gemini engine: log-probs are not asked of the Gemini API")
    if sampling.lora is not None:
        raise RequestError("gemini engine: the Gemini API takes no LoRA adapters")
    turns = chat_messages(sent_pictures(request, GEMINI_IMAGES))
    config: JsonObject = {"automatic_function_calling": {"disable": True}}  # the system runs the calls
    system = [str(turn["content"] or "") for turn in turns if turn["role"] == "system"]
    if system:
        config["system_instruction"] = "\n\n".join(system)
    config.update(token_limit_sent(sampling, "max_output_tokens"), **sampling_sent(sampling), **sampling.penalties())
    if sampling.stop:
        config["stop_sequences"] = list(sampling.stop)
    if sampling.n != 1:
        config["candidate_count"] = sampling.n
    if sampling.seed is not None and "seed" not in sampling.left_to_server:
        config["seed"] = sampling.seed
    if sampling.json_mode:
        config["response_mime_type"] = "application/json"
    if request.tools:
        config["tools"] = [{"function_declarations": [_declaration(tool.function) for tool in request.tools]}]
    if request.tool_choice is not None:
        mode = _MODES.get(request.tool_choice)
        calling: JsonObject = {"mode": mode or "ANY"}
        if mode is None:
            calling["allowed_function_names"] = [request.tool_choice]
        config["tool_config"] = {"function_calling_config": calling}
    return contents([turn for turn in turns if turn["role"] != "system"]), config


def _declaration(function: JsonObject) -> JsonObject:
    out: JsonObject = {"name": function["name"]}
    if function.get("description"):
        out["description"] = function["description"]
    parameters = function.get("parameters")
    if isinstance(parameters, dict) and parameters:
        # a Gemini Schema (upper-case types, as google-genai derives one) as itself
        kind = parameters.get("type")
        gemini_schema = isinstance(kind, str) and kind.isupper()
        out["parameters" if gemini_schema else "parameters_json_schema"] = parameters
    return out


def contents(turns: list[ChatMessage]) -> list[JsonValue]:
    """Chat turns (no system turn) as Gemini contents; consecutive tool results join one user turn."""
    called = {call["id"]: call["function"]["name"] for turn in turns for call in turn.get("tool_calls") or ()}
    out: list[JsonValue] = []
    for turn in turns:
        if turn["role"] == "tool":
            answer: JsonObject = {
                "id": turn["tool_call_id"],
                "name": called.get(turn["tool_call_id"], ""),
                "response": {"result": turn["content"] or ""},
            }
            if not answer["name"]:
                raise RequestError(
                    f"gemini engine: tool result {turn['tool_call_id']!r} answers no call of an earlier turn; the "
                    "Gemini API needs the called function's name"
                )
            last = out[-1] if out else None
            parts = last["parts"] if isinstance(last, dict) and last["role"] == "user" else None
            if isinstance(parts, list) and all(isinstance(p, dict) and "function_response" in p for p in parts):
                parts.append({"function_response": answer})
            else:
                out.append({"role": "user", "parts": [{"function_response": answer}]})
            continue
        role = "model" if turn["role"] == "assistant" else "user"
        if "items" in turn:
            out.append({"role": role, "parts": list(turn["items"])})
            continue
        given: list[JsonValue] = (
            content_of(turn, lambda text: {"text": text}, gemini_image_part)
            if "parts" in turn
            else [{"text": turn["content"]}]
            if turn["content"]
            else []
        )
        given += [{"function_call": _function_call(call)} for call in turn.get("tool_calls") or ()]
        out.append({"role": role, "parts": given or [{"text": ""}]})
    return out


def _function_call(call: ToolCallForm) -> JsonObject:
    arguments = call_arguments_object(call)
    return {"id": call["id"], "name": call["function"]["name"], "args": arguments}


def parse_content(answer: Any, request: Request) -> Response:
    """A Response from the SDK's `GenerateContentResponse`; a body that is no answer fails here, on a missing
    field, and is retried as unreadable."""
    candidates = sorted(answer.candidates or (), key=lambda candidate: candidate.index or 0)
    tokens = usage_tokens(answer.usage_metadata, GEMINI)
    if not candidates:
        blocked = getattr(answer.prompt_feedback, "block_reason", None)
        if blocked is None:
            raise ValueError("no candidates")
        return Response(
            texts=[""] * request.sampling.n,
            choice_tool_calls=[() for _ in range(request.sampling.n)] if request.tools else None,
            prompt_tokens=tokens["prompt_tokens"],
            cached_prompt_tokens=tokens["cached_prompt_tokens"],
            finish_reason="content_filter",
        )
    parts = [list(candidate.content.parts or ()) if candidate.content else [] for candidate in candidates]
    empty = next((part for ps in parts for part in ps if not part.model_dump(exclude_none=True)), None)
    if empty is not None:
        raise ValueError("a part that holds no field the SDK knows")
    texts = [kept_stop("".join(p.text for p in ps if p.text and not p.thought), request.sampling) for ps in parts]
    calls = [
        tuple(
            _tool_call(part.function_call, f"{i}:{n}:{texts[i]}", n) for n, part in enumerate(ps) if part.function_call
        )
        for i, ps in enumerate(parts)
    ]
    reason = candidates[0].finish_reason
    name = getattr(reason, "value", reason)
    if name is None:
        raise ValueError("no finish_reason")
    finish = "content_filter" if name in _FILTERED else _FINISH.get(str(name), str(name).lower())
    if finish == "stop" and calls[0]:
        finish = "tool_calls"
    items = None
    if any(p.thought or p.thought_signature for p in parts[0]):
        items = json.dumps([p.model_dump(mode="json", exclude_none=True) for p in parts[0]], ensure_ascii=False)
    return Response(
        texts=texts,
        choice_tool_calls=calls if request.tools else None,
        **tokens,
        finish_reason=finish,
        items=items,
    )


def _tool_call(function_call: Any, where: str, n: int) -> ToolCall:
    arguments = json.dumps(function_call.args or {}, ensure_ascii=False, sort_keys=False)
    derived = call_id(f"{where}:{function_call.name}:{arguments}", n)
    return ToolCall(id=function_call.id or derived, name=function_call.name, raw_arguments=arguments)
