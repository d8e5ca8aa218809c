"""`openai` engine: any OpenAI-compatible HTTP server (OpenAI, `vllm serve`, llama.cpp server, TGI),
through the `openai` package's `AsyncOpenAI`.

Model strings: `openai:gpt-4o-mini`, `openai:meta-llama/Llama-3.1-8B-Instruct` (with --base-url).
The base URL comes from the `base_url` option (--base-url), else $OPENAI_BASE_URL, else
https://api.openai.com/v1; it must include the API prefix (`http://localhost:8000/v1` for vllm).

Chat requests go to chat.completions and prompt requests to completions (mode="auto"); mode="chat"
sends a prompt request to the chat endpoint as one user message, for servers or models that only
serve chat. A chat turn's images are `image_url` parts with a base64 `data:` URL, in order with its text parts; a
prompt request with images goes to the chat endpoint whatever the mode (completions take none), its images before
its prompt in one user message; to OpenAI's own API, a picture it would refuse is resized first
(hosted/vendor_images.py). Sampling maps onto the request as max_tokens (`max_completion_tokens` in a chat request to an
OpenAI reasoning model, which refuses max_tokens: o1-o9, gpt-5 to gpt-19, codex-mini, or where `max_tokens_as`
says so), temperature, top_p, n and seed (when set, per request; but those `left_to_server`, sent as the request
holds them: top_p 1 is sent as 1, 1.0 as 1.0), frequency_penalty and presence_penalty (where the request sets
them, as given; an extra option naming one replaces the request's value, as it does in the SDK), stop (omitted when empty), logprobs (chat:
`logprobs=True, top_logprobs=k`; completions: `logprobs=k`), response_format (json_mode, chat) and
skip_special_tokens, top_k and min_p (vllm extensions, sent where set: skip_special_tokens only when False), and
enable_thinking as `chat_template_kwargs` (chat, where set). A request's tools and tool choice go as `tools` and `tool_choice` (chat), and each choice's
`message.tool_calls` come back as the response's tool calls, arguments as the text the server sent.
`api="responses"` sends chat requests to OpenAI's Responses API instead (hosted/openai_responses_api.py: input items,
`function_call` / `function_call_output` items, an answer's output items, reasoning included, kept in the
response for an agent to send back; no n > 1, stop strings or log-probs there, and no seed or penalties).
`Sampling.lora` is sent as the `model` name: that is how `vllm serve --enable-lora
--lora-modules NAME=PATH` exposes an adapter. Any other --model-arg is sent verbatim as an extra field
of every request body (e.g. `repetition_penalty=1.1` for vllm) and is part of the engine id.

Named-token log-probs (`Sampling.logprob_tokens`, e.g. Self-RAG's "[Relevant]"): the API has no
per-token query, so the request asks for the top NAMED_TOP_LOGPROBS (20, OpenAI's maximum for
top_logprobs; a vllm server allows up to its --max-logprobs) and each position's `named` holds the
named tokens found among them: a token outside the top 20 is absent, as one outside vLLM's top-k dict
is for upstream Self-RAG. `token_id` stays None (the API returns strings); `cumulative_logprob` is
the sum of the chosen tokens' log-probabilities.

The SDK retries HTTP 408/409/429/5xx, timeouts and dropped connections (`max_retries`), honours
Retry-After and pools connections (see hosted/openai_client.py for the backoff and the failed-connection
limit, `connect_retries`). ragbench adds: a 2xx body that is not a completion (a proxy's HTML page,
no choices) is retried too, from the same budget; at most `concurrency` requests are in flight; the
API key (read from $api_key_env, default OPENAI_API_KEY, when the client is made) is never an
attribute, never in engine_id or repr, and is redacted from every error and log line, as are the base URL's
credentials (user info, sent as basic auth; secret query parameters, the query sent on every request:
ragbench._values.urls), which stay out of engine_id (the cache's key) too; failures end in
one line naming the URL and the number of attempts, as a `RequestError` when the request itself is at
fault (HTTP 400, 422 and other 4xx: another replica would refuse it too) and an `EngineError` when the
server is (connection, timeout, 429, 5xx, and 401/403/404, which say the endpoint is misconfigured).

`batch=true` sends the scheduler's pooled requests through OpenAI's Batch API instead (hosted/batch_openai.py,
batches/runner.py: one batch per scheduler batch and endpoint, recorded in the run folder and resumed by polling).

`timeout` bounds each phase of an attempt (write, each read; connecting: at most 5 s) as httpx does.
The client is made lazily inside the running event loop; `await engine.aclose()` from that loop (or
`close()` after it) releases its connections.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal, get_args
from urllib.parse import urlsplit

import openai

from ..._errors import ConfigError
from ..._values.engine_needs import EngineNeeds
from ..._values.llm_request import Request
from ..._values.llm_responses import Response
from ..._values.sampling import CUTOFFS, Sampling
from ..batches.interface import BatchVendor
from ..chat_messages import chat_messages, openai_message
from .batch_openai import OpenAIBatches
from .openai_client import OpenAIUnreachable, make_client, no_auth_header
from .openai_responses import (
    NAMED_TOP_LOGPROBS,
    parse_completion,
    reasoning_model,
    sampling_sent,
    token_limit_sent,
    top_logprobs_asked,
)
from .openai_responses_api import parse_response, responses_arguments
from .stainless import StainlessEngine
from .usage_counts import OPENAI, OPENAI_RESPONSES
from .vendor_images import OPENAI_IMAGES, sent_pictures

OPENAI_HOST = "api.openai.com"  # OpenAI's own API, whose limits on pictures are known (hosted/vendor_images.py)
# Arguments the engine hands the SDK as they are to be sent (sent_as_given).
SENT_AS_GIVEN = ("messages", "input", "tools")


def sent_as_given(args: dict[str, Any]) -> dict[str, Any]:
    """`args` of the SDK's create() with the conversation and the tools carried in `extra_body`, which the SDK
    sends as given, and an empty list where create() expects them (the extra body replaces it in place: the
    same body, key for key and in the same order). create() otherwise walks them against its parameter types
    each request (`maybe_transform`), which changes nothing in plain JSON values (the types of these fields
    have no aliases or formats: tests/engines/test_openai_sent_as_given.py) and costs 2 ms of CPU for an agent's third
    turn on the 2-vCPU VM, more the longer the conversation: CPU the event loop, which sends every request
    in flight, has not got to spare (docs/performance.md#agents)."""
    moved = {key: args[key] for key in SENT_AS_GIVEN if key in args}
    if not moved:
        return args
    return args | {key: [] for key in moved} | {"extra_body": args.get("extra_body", {}) | moved}


__all__ = ["OpenAIEngine", "NAMED_TOP_LOGPROBS"]

Mode = Literal["auto", "chat"]
MODES: tuple[str, ...] = get_args(Mode)
Api = Literal["chat_completions", "responses"]


class OpenAIEngine(StainlessEngine):
    kind = "openai"
    calls_tools = True  # chat completions' `tools` / `tool_choice`, the answer's `message.tool_calls`
    says_which_stop = False  # with keep_stop every text ends with a stop string (FlashRAG's rule, `parse_completion`)
    DEFAULT_BASE_URL = "https://api.openai.com/v1"
    BASE_URL_ENV = "OPENAI_BASE_URL"
    DEFAULT_KEY_ENV = "OPENAI_API_KEY"
    # Body fields the engine sets itself from the request; an extra option may not override them.
    RESERVED = frozenset(
        {
            "model",
            "messages",
            "prompt",
            "max_tokens",
            "max_completion_tokens",
            "temperature",
            "top_p",
            "n",
            "stop",
            "seed",
            "logprobs",
            "top_logprobs",
            "stream",
            "skip_special_tokens",
            "response_format",
            "tools",
            "tool_choice",
            "input",
            "instructions",
            "max_output_tokens",
            "text",
        }
    )
    unreachable = OpenAIUnreachable

    def __init__(self, model: str, mode: Mode = "auto", api: Api = "chat_completions", **options: Any) -> None:
        if mode not in MODES:
            raise ConfigError(f"openai engine: mode must be one of {', '.join(MODES)}, not {mode!r}")
        if api not in get_args(Api):
            raise ConfigError(f"openai engine: api must be one of {', '.join(get_args(Api))}, not {api!r}")
        super().__init__(model, **options)
        self.mode = mode
        self.api = api
        self.connects_mcp = api == "responses"  # the Responses API's remote `mcp` tool: OpenAI's servers call it

    @property
    def sdk(self) -> Any:
        return openai

    @classmethod
    def meet_needs(
        cls, model: str, options: Mapping[str, object], needs: Sequence[EngineNeeds]
    ) -> tuple[dict[str, object], list[str]]:
        """The API reports named tokens only among the top NAMED_TOP_LOGPROBS of each position: a larger
        window cannot be given."""
        return dict(options), [
            f"{need.system} reads log-probs of named tokens within top-{need.logprob_window} dicts, but "
            f"OpenAI-compatible servers return at most the top {NAMED_TOP_LOGPROBS} per position"
            + (f"; {need.instead}" if need.instead else "")
            for need in needs
            if need.logprob_tokens and (need.logprob_window or 0) > NAMED_TOP_LOGPROBS
        ]

    def _id_options(self) -> str:
        out = f";mode={self.mode}" if self.mode != "auto" else ""
        if self.api != "chat_completions":
            out += f";api={self.api}"
        return out + super()._id_options()

    def __repr__(self) -> str:
        return (
            f"OpenAIEngine(model={self.model!r}, base_url={self.base_url!r}, mode={self.mode!r}, api={self.api!r}, "
            f"concurrency={self.max_concurrency}, api_key_env={self.api_key_env!r})"
        )

    def open_client(self) -> openai.AsyncOpenAI:
        return make_client(
            self._base,
            os.environ.get(self.api_key_env),
            timeout=self.timeout,
            max_retries=self.max_retries,
            connect_retries=self.connect_retries,
            concurrency=self.max_concurrency,
            backoff_base=self.backoff_base,
            backoff_max=self.backoff_max,
        )

    # -- requests -------------------------------------------------------------------------

    def call_arguments(self, request: Request) -> tuple[bool, dict[str, Any]]:
        """(chat?, keyword arguments of the SDK's create()). The engine's own fields (`_extras`) are made first,
        then the request's pictures and turns handed to the edge helpers, which write them once."""
        sampling = request.sampling
        chat = request.is_chat or self.mode == "chat" or bool(request.images)  # completions take no images
        extras = self._extras(sampling, chat and self.api != "responses")
        if urlsplit(self.base_url).hostname == OPENAI_HOST:  # a picture OpenAI would refuse, resized first
            request = sent_pictures(request, OPENAI_IMAGES)
        if self.api == "responses":
            return True, responses_arguments(request, sampling.lora or self.model) | extras
        args: dict[str, Any] = {"model": sampling.lora or self.model}
        if chat:
            args["messages"] = [openai_message(turn) for turn in chat_messages(request)]
            if request.tools:
                args["tools"] = request.tool_dicts()
            if request.tool_choice is not None:
                args["tool_choice"] = request.tool_choice_payload()
        else:
            args["prompt"] = request.prompt
        ruled = "max_completion_tokens" if reasoning_model(self.model) else "max_tokens"
        tokens = (sampling.max_tokens_as or ruled) if chat else "max_tokens"
        args.update(token_limit_sent(sampling, tokens), **sampling_sent(sampling), **sampling.penalties())
        left = sampling.left_to_server
        if "n" not in left:
            args["n"] = sampling.n
        if sampling.stop:
            args["stop"] = list(sampling.stop)
        if sampling.seed is not None and "seed" not in left:
            args["seed"] = sampling.seed
        top_k = top_logprobs_asked(sampling)
        if top_k is not None:
            args.update({"logprobs": True, "top_logprobs": top_k} if chat else {"logprobs": top_k})
        if sampling.json_mode and chat:
            args["response_format"] = {"type": "json_object"}
        if sampling.json_schema is not None and chat:
            args["response_format"] = {"type": "json_schema", "json_schema": json.loads(sampling.json_schema)}
        return chat, args | extras

    def _extras(self, sampling: Sampling, messages: bool) -> dict[str, object]:
        """The extra body fields (the --model-arg values) and headers every request carries, the last arguments;
        `messages`: the request is sent as chat messages."""
        extra = sampling.penalties(CUTOFFS) | dict(self.extra_body)  # vLLM's top_k, min_p: extra fields
        if not sampling.skip_special_tokens:
            extra["skip_special_tokens"] = False
        if sampling.enable_thinking is not None and messages:  # a --model-arg one wins, as above
            extra.setdefault("chat_template_kwargs", {"enable_thinking": sampling.enable_thinking})
        out: dict[str, object] = {"extra_body": extra} if extra else {}
        if not os.environ.get(self.api_key_env):
            out["extra_headers"] = no_auth_header
        return out

    async def agenerate_one(self, request: Request) -> Response:
        chat, args = self.call_arguments(request)
        args = sent_as_given(args)

        def create(client: openai.AsyncOpenAI) -> Any:
            api = client.responses if self.api == "responses" else client.chat.completions
            return (api if chat else client.completions).with_raw_response.create(**args)

        def parse(answer: Any) -> Response:
            if self.api == "responses":
                return parse_response(answer, bool(request.tools))
            return parse_completion(answer, request.sampling, chat, bool(request.tools))

        return await self._send(request, create, parse, OPENAI_RESPONSES if self.api == "responses" else OPENAI)

    def status_hint(self, request: Request, what: str) -> str:
        top_k = top_logprobs_asked(request.sampling)
        if top_k and "logprob" in what.lower():
            return (
                f"this request asked for the top {top_k} log-probs, named tokens for the top "
                f"{NAMED_TOP_LOGPROBS}: OpenAI allows at most 20, a vllm server its --max-logprobs"
            )
        return ""

    def batch_vendor(self) -> BatchVendor:
        return OpenAIBatches(self)
