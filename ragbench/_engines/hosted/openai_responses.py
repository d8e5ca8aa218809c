"""An OpenAI-compatible server's chat or completions answer read into a Response: texts, tool calls, the
first choice's log-probs (named tokens found among the top NAMED_TOP_LOGPROBS), usage and finish reason, each
as the server sent it (checked where every response arrives: ragbench._values.response_checks); a chat message
whose content is a list of content parts is read as its text parts joined, the list kept (`content_parts`). A
choice with no text field (a chat message with no `content`, tool calls or refusal; a completion choice with no
`text`) and a usage whose counts are no token counts (hosted/usage_counts.py) make the answer unreadable
(ValueError)."""

from __future__ import annotations

import json
from typing import Any

from ..._values.llm_responses import Response, TokenLogprobs
from ..._values.sampling import Sampling
from ..._values.tool_calls import ToolCall
from .usage_counts import OPENAI, usage_tokens

NAMED_TOP_LOGPROBS = 20
_FINISH_ALIASES = {"eos_token": "stop", "stop_sequence": "stop"}  # TGI's names of OpenAI's "stop"


def top_logprobs_asked(sampling: Sampling) -> int | None:
    """How many top log-probs to ask for: the request's k, or enough to find named tokens."""
    if not sampling.logprob_tokens:
        return sampling.logprobs
    return max(sampling.logprobs or 0, NAMED_TOP_LOGPROBS)


def reasoning_model(model: str) -> bool:
    """Whether `model` names an OpenAI reasoning model, which takes `max_completion_tokens` (not `max_tokens`),
    temperature 1 only and no top_p: o1 to o9 (alone or before "-" or "_"), gpt-5 to gpt-19 and codex-mini, any
    case (ragas 0.4.3's rule, `InstructorLLM._map_openai_params`)."""
    name = model.lower()
    if len(name) >= 2 and name[0] == "o" and name[1] in "123456789" and (len(name) == 2 or name[2] in "-_"):
        return True
    if name.startswith("gpt-"):
        try:  # int() as ragas reads the version: " 5", "+5" and "05" are 5
            if 5 <= int(name[4:].split("-")[0].split("_")[0]) <= 19:
                return True
        except ValueError:
            pass
    return name == "codex-mini"


def sampling_sent(sampling: Any) -> dict[str, float]:
    """temperature and top_p as the request sends them: those left to the server (`left_to_server`) not at all."""
    values = {"temperature": sampling.temperature, "top_p": sampling.top_p}
    return {name: value for name, value in values.items() if name not in sampling.left_to_server}


def token_limit_sent(sampling: Any, name: str) -> dict[str, int]:
    """`{name: max_tokens}`, or nothing where the request leaves the token limit to the server."""
    return {} if "max_tokens" in sampling.left_to_server else {name: sampling.max_tokens}


def kept_stop(text: Any, sampling: Any) -> Any:
    """`text` as `Sampling.keep_stop` wants it from an API that cuts before the stop string and does not say which
    fired (FlashRAG's OpenaiGenerator rule): the first stop string appended where the text ends with none. A text
    that is no string is left as sent, to be refused where responses arrive."""
    if not (sampling.keep_stop and sampling.stop) or not isinstance(text, str) or text.endswith(tuple(sampling.stop)):
        return text
    return text + sampling.stop[0]


def _positions(logprobs: Any, chat: bool) -> list[TokenLogprobs] | None:
    """The first choice's per-token log-probs from the SDK's chat or completion shape."""
    if chat:
        if logprobs is None or logprobs.content is None:
            return None
        return [
            TokenLogprobs(
                token=item.token,
                logprob=float(item.logprob),
                top={t.token: float(t.logprob) for t in item.top_logprobs or ()},
            )
            for item in logprobs.content
        ]
    if logprobs is None or logprobs.tokens is None:
        return None
    values, tops = logprobs.token_logprobs or [], logprobs.top_logprobs or []
    out = []
    for i, token in enumerate(logprobs.tokens):
        value = values[i] if i < len(values) else None
        top = tops[i] if i < len(tops) and tops[i] else {}
        # None only for an echoed first prompt token, which this engine never asks for
        out.append(
            TokenLogprobs(
                token=token,
                logprob=float("nan") if value is None else float(value),
                top={t: float(v) for t, v in top.items()},
            )
        )
    return out


def _keep_asked(positions: list[TokenLogprobs], sampling: Any) -> list[TokenLogprobs]:
    """Named tokens from each position's top list; the top list itself only if top-k was asked."""
    for position in positions:
        position.named = {t: position.top[t] for t in sampling.logprob_tokens if t in position.top}
        position.top = dict(list(position.top.items())[: sampling.logprobs]) if sampling.logprobs else {}
    return positions


def _tool_calls(message: Any) -> Any:
    """A chat choice's tool calls as the server sent them (the SDK builds them without validation: a call with
    no name or an argument that is no text is refused where responses arrive, as the engine's error)."""
    calls = getattr(message, "tool_calls", None)
    if calls is None:
        return ()
    if not isinstance(calls, list):
        return calls
    return tuple(_tool_call(call) for call in calls)


def _tool_call(call: Any) -> ToolCall:
    function = getattr(call, "function", None)
    sent: dict[str, Any] = {
        "id": getattr(call, "id", None),
        "name": getattr(function, "name", None),
        "raw_arguments": getattr(function, "arguments", None),
    }
    return ToolCall(**sent)


def parse_completion(completion: Any, sampling: Any, chat: bool, tools: bool = False) -> Response:
    """A Response from the SDK's ChatCompletion / Completion (which the SDK builds without
    validation: a body that is not a completion fails here, on a missing field); `tools`: the request
    offered tools, so each choice's tool calls are read."""
    choices = sorted(completion.choices or (), key=lambda choice: choice.index or 0)
    if not choices:
        raise ValueError("no choices")
    contents = [_choice_text(choice, chat) for choice in choices]
    texts = [
        kept_stop(_or_empty(_parts_text(content, choice.index)), sampling) for content, choice in zip(contents, choices)
    ]
    logprobs = cumulative = None
    if top_logprobs_asked(sampling) is not None:
        logprobs = _positions(choices[0].logprobs, chat)
        if logprobs is not None and sampling.logprob_tokens:
            logprobs = _keep_asked(logprobs, sampling)
            cumulative = sum(t.logprob for t in logprobs)
    tokens = usage_tokens(completion.usage, OPENAI)
    finish = choices[0].finish_reason
    if finish is None:  # servers that leave it out (as ragbench has always read them): the check sees the rest
        finish = "stop"
    return Response(
        texts=texts,
        logprobs=logprobs,
        cumulative_logprob=cumulative,
        choice_tool_calls=[_tool_calls(choice.message) for choice in choices] if tools else None,
        **tokens,
        finish_reason=_FINISH_ALIASES.get(finish, finish) if isinstance(finish, str) else finish,
        content_parts=json.dumps(contents[0], ensure_ascii=False) if isinstance(contents[0], list) else None,
    )


def _choice_text(choice: Any, chat: bool) -> Any:
    """A choice's text field as sent; ValueError for a choice that has none (a chat message with neither
    `content`, null included, nor tool calls nor a refusal): a damaged answer, not an empty one."""
    if not chat:
        if "text" not in choice.model_fields_set:
            raise ValueError(f"choice {choice.index!r} has no text")
        return choice.text
    message = choice.message
    if "content" not in message.model_fields_set and message.tool_calls is None and message.refusal is None:
        raise ValueError(f"choice {choice.index!r}: the message has no content, tool calls or refusal")
    return message.content


def _parts_text(content: Any, index: Any) -> Any:
    """A message content that is a list of content parts (some servers' form of a chat answer) as its text parts
    joined (other parts, a "thinking" one, are no text); ValueError for a part that is no typed object or a text
    part with no text. Any other content as sent."""
    if not isinstance(content, list):
        return content
    texts = []
    for number, part in enumerate(content):
        if not (isinstance(part, dict) and isinstance(part.get("type"), str)):
            raise ValueError(f"choice {index!r}: content part {number} is no object with a type")
        if part["type"] == "text":
            if not isinstance(part.get("text"), str):
                raise ValueError(f"choice {index!r}: text part {number} has no text")
            texts.append(part["text"])
    return "".join(texts)


def _or_empty(text: Any) -> Any:
    """A choice's text as the server sent it (a text that is no string is refused where responses arrive); ""
    for none (a chat message holding only a refusal)."""
    return "" if text is None else text
