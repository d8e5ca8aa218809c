"""vLLM's output for one request read into a Response: each completion's text cut at its stop, the log-probs as asked,
the prompt and completion tokens, the model's tool calls; what vLLM raised or an unfinished generation is the
request's error (a ValueError or TypeError of vLLM's input checks: the request's fault)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..._values.engine_errors import EngineError, RequestError
from ..._values.llm_request import Request
from ..._values.llm_responses import Response, TokenLogprobs
from ..._values.sampling import Sampling, apply_stop
from ..base import one_line
from ..local.tool_parsers import Parsed, with_tool_calls


def response_of(
    request: Request,
    output: Any,
    logprobs_of: Callable[[Any, Sampling], list[TokenLogprobs]],
    parser: Callable[[Request], Callable[[str], Parsed] | None],
    engine: str,
) -> Response | EngineError:
    """`output` (vLLM's RequestOutput, or what it raised) as `request`'s answer; `logprobs_of` reads a completion's
    log-probs, `parser` names what reads `request`'s tool calls, `engine` the engine's kind."""

    if isinstance(output, BaseException):
        if isinstance(output, EngineError):
            return output
        # vLLM validates inputs with ValueError/TypeError (prompt longer than max_model_len): the request's fault
        fault = RequestError if isinstance(output, (ValueError, TypeError)) else EngineError
        return fault(f"vllm engine: {one_line(output)}")
    choices = list(output.outputs)
    if not choices:
        return EngineError("vllm engine: no output")
    first = choices[0]
    if first.finish_reason not in ("stop", "length"):
        return EngineError(f"vllm engine: generation ended with finish_reason={first.finish_reason!r}")
    texts = [apply_stop(choice.text, request.sampling.stop, request.sampling.keep_stop)[0] for choice in choices]
    logprobs = cumulative = None
    if request.sampling.logprobs is not None or request.sampling.logprob_tokens:
        logprobs = logprobs_of(first, request.sampling)
        cumulative = getattr(first, "cumulative_logprob", None)
        if cumulative is None:
            cumulative = sum(position.logprob for position in logprobs)
    response = Response(
        texts=texts,
        logprobs=logprobs,
        prompt_tokens=len(output.prompt_token_ids or ()),
        completion_tokens=sum(len(choice.token_ids) for choice in choices),
        finish_reason=first.finish_reason,
        cumulative_logprob=cumulative,
        token_ids=list(first.token_ids),
    )
    return with_tool_calls(request, response, parser(request), engine)
