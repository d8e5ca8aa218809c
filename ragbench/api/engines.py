"""LLM engines: the base an engine plugin subclasses and the values a call carries.

    from ragbench.api.engines import Engine, Request, Response

`Engine` (`generate(requests)`: a batch in, a `Response` or an `EngineError` per request out), `Request`
(a prompt or chat messages and their `Sampling`; `SamplingArgs`, its fields as the keywords a system passes
`ctx.llm.generate` / `ctx.llm.chat`), `Response` (text, per-token `TokenLogprobs` when asked,
token counts, finish reason), `RequestError` (a request refused for itself, e.g. HTTP 400), `EngineNeeds` (what a system needs of its engine, `System.engine_needs`) and
`local_tokenizer` (a model's tokenizer on disk, without its weights), `chat_prompt_ids` (a conversation's token ids
by the tokenizer's chat template, `template_messages` its turns as templates read them), `TOOL_PARSERS` (the tool
call readers of a model's text by `tool_parser` name) and `with_tool_calls` (a response with its calls read by one), `embedded_safetensors_dir` (the embedded model
converted once to a safetensors folder, as vLLM and a local engine of your own load it); `arguments_problem`, `checked_arguments` and
`InvalidArguments` (a tool call's parsed arguments against its tool's parameter schema); `Tool`, `ToolCall` and
`Message` (a request's tools, the calls an engine answers with in `Response.choice_tool_calls`, a chat turn that
carries them, or texts and images); how an engine writes a request's turns into its API's body (`chat_messages`:
each turn's `ChatMessage`, its `parts` where it sends images; `content_of` with a text and an image writer:
`text_part`, `openai_image_part`, `responses_image_part`, `anthropic_image_part`, `gemini_image_part`, `data_url`;
`openai_message`: a turn as OpenAI's chat API takes it); `response_problem` (what a run refuses of an engine's response to a request, or None: an engine's
tests check its answers with it); `reasoning_model` (whether a model name is an OpenAI reasoning model's, which the
openai engine sends `max_completion_tokens`). An engine that answers through a vendor's batch API implements
`BatchingEngine` and its vendor's `BatchVendor` (`Polled`, `Resend`, `BatchLimits`), keeps a `BatchShelf` and answers a batch of
requests with `BatchRun` (docs/writing-plugins.md, "Engines that send batches"); the run hands it its folder and
its progress bar's `BatchBoard` (`keep_batches`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragbench.api._lazy import lazy_names

if TYPE_CHECKING:  # type checkers read each name where it is defined; it is imported on first use (below)
    from ragbench._engines.base import Engine
    from ragbench._engines.batches.board import BatchBoard
    from ragbench._engines.batches.interface import BatchingEngine, BatchLimits, BatchVendor, Polled, Resend
    from ragbench._engines.batches.runner import BatchRun
    from ragbench._engines.batches.shelf import BatchShelf
    from ragbench._engines.chat_messages import (
        ChatMessage,
        anthropic_image_part,
        chat_messages,
        content_of,
        data_url,
        gemini_image_part,
        openai_image_part,
        openai_message,
        responses_image_part,
        text_part,
    )
    from ragbench._engines.hosted.openai_responses import reasoning_model
    from ragbench._engines.local.embedded import embedded_safetensors_dir
    from ragbench._engines.local.tokenizers import chat_prompt_ids, local_tokenizer
    from ragbench._engines.local.tool_parsers import TOOL_PARSERS, template_messages, with_tool_calls
    from ragbench._values.chat_turns import Message
    from ragbench._values.engine_errors import RequestError
    from ragbench._values.engine_needs import EngineNeeds
    from ragbench._values.llm_request import Request
    from ragbench._values.llm_responses import Response, TokenLogprobs
    from ragbench._values.response_checks import response_problem
    from ragbench._values.sampling import Sampling, SamplingArgs
    from ragbench._values.tool_arguments import InvalidArguments, arguments_problem, checked_arguments
    from ragbench._values.tool_calls import Tool, ToolCall

_MODULES = {
    "ragbench._engines.base": ("Engine",),
    "ragbench._engines.batches.board": ("BatchBoard",),
    "ragbench._engines.batches.interface": ("BatchingEngine", "BatchLimits", "BatchVendor", "Polled", "Resend"),
    "ragbench._engines.batches.runner": ("BatchRun",),
    "ragbench._engines.batches.shelf": ("BatchShelf",),
    "ragbench._engines.chat_messages": (
        "ChatMessage",
        "chat_messages",
        "content_of",
        "text_part",
        "data_url",
        "openai_message",
        "openai_image_part",
        "responses_image_part",
        "anthropic_image_part",
        "gemini_image_part",
    ),
    "ragbench._engines.hosted.openai_responses": ("reasoning_model",),
    "ragbench._values.engine_errors": ("RequestError",),
    "ragbench._values.engine_needs": ("EngineNeeds",),
    "ragbench._values.llm_request": ("Request",),
    "ragbench._values.llm_responses": ("Response", "TokenLogprobs"),
    "ragbench._values.sampling": ("Sampling", "SamplingArgs"),
    "ragbench._engines.local.tokenizers": ("local_tokenizer", "chat_prompt_ids"),
    "ragbench._engines.local.tool_parsers": ("TOOL_PARSERS", "template_messages", "with_tool_calls"),
    "ragbench._engines.local.embedded": ("embedded_safetensors_dir",),
    "ragbench._values.tool_arguments": ("InvalidArguments", "arguments_problem", "checked_arguments"),
    "ragbench._values.chat_turns": ("Message",),
    "ragbench._values.tool_calls": ("Tool", "ToolCall"),
    "ragbench._values.response_checks": ("response_problem",),
}
__all__, __getattr__, __dir__ = lazy_names(__name__, _MODULES)
