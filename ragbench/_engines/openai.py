"""`openai` engine: any OpenAI-compatible HTTP server (OpenAI, `vllm serve`, llama.cpp server, TGI),
through the `openai` package's `AsyncOpenAI`.

Model strings: `openai:gpt-4o-mini`, `openai:meta-llama/Llama-3.1-8B-Instruct` (with --base-url).
The base URL comes from the `base_url` option (--base-url), else $OPENAI_BASE_URL, else
https://api.openai.com/v1; it must include the API prefix (`http://localhost:8000/v1` for vllm).

Chat requests go to chat.completions and prompt requests to completions (mode="auto"); mode="chat"
sends a prompt request to the chat endpoint as one user message, for servers or models that only
serve chat. Sampling maps onto the request as max_tokens, temperature and top_p (but those
`left_to_server`), n, stop (omitted when empty), seed (when set, per request), logprobs (chat:
`logprobs=True, top_logprobs=k`; completions: `logprobs=k`), response_format (json_mode, chat) and
skip_special_tokens (a vllm extension, sent only when False). A request's tools and tool choice go as `tools` and `tool_choice` (chat), and each choice's
`message.tool_calls` come back as the response's tool calls, arguments as the text the server sent.
`api="responses"` sends chat requests to OpenAI's Responses API instead (openai_responses_api.py: input items,
`function_call` / `function_call_output` items, an answer's output items, reasoning included, kept in the
response for an agent to send back; no n > 1, stop strings or log-probs there, and no seed).
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
Retry-After and pools connections (see openai_client.py for the backoff and the failed-connection
limit, `connect_retries`). ragbench adds: a 2xx body that is not a completion (a proxy's HTML page,
no choices) is retried too, from the same budget; at most `concurrency` requests are in flight; the
API key (read from $api_key_env, default OPENAI_API_KEY, when the client is made) is never an
attribute, never in engine_id or repr, and is redacted from every error and log line, as are the base URL's
credentials (user info, sent as basic auth; secret query parameters, the query sent on every request:
ragbench._values.urls), which stay out of engine_id (the cache's key) too; failures end in
one line naming the URL and the number of attempts, as a `RequestError` when the request itself is at
fault (HTTP 400, 422 and other 4xx: another replica would refuse it too) and an `EngineError` when the
server is (connection, timeout, 429, 5xx, and 401/403/404, which say the endpoint is misconfigured).

`timeout` bounds each phase of an attempt (write, each read; connecting: at most 5 s) as httpx does.
The client is made lazily inside the running event loop; `await engine.aclose()` from that loop (or
`close()` after it) releases its connections.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
from collections.abc import Sequence
from typing import Annotated, Any, Literal, get_args
from urllib.parse import urlsplit

import openai
from annotated_types import Ge, Gt

from .._errors import ConfigError
from .._values.llm_calls import EngineError, EngineNeeds, Request, RequestError, Response
from .._values.urls import Credentials, redact_url, secret_name
from .base import Engine
from .openai_client import Unreachable, backoff, make_client, no_auth_header, probe, redact
from .openai_responses import NAMED_TOP_LOGPROBS, parse_completion, sampling_sent, top_logprobs_asked
from .openai_responses_api import parse_response, responses_arguments

__all__ = ["OpenAIEngine", "probe", "NAMED_TOP_LOGPROBS"]

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
Mode = Literal["auto", "chat"]
MODES: tuple[str, ...] = get_args(Mode)
Api = Literal["chat_completions", "responses"]
# Body fields the engine sets itself from the request; an extra option may not override them.
_RESERVED = {
    "model",
    "messages",
    "prompt",
    "max_tokens",
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
_ENDPOINT_STATUS = {401, 403, 404}  # the endpoint is misconfigured, not the request


def _models_url(base_url: str) -> str:
    """{base_url}/models, without the base URL's user info and query (any answer says a server is there)."""
    try:
        return Credentials.of(base_url).url.rstrip("/") + "/models"
    except ValueError:  # unreachable() names it
        return base_url


def _extra_body_problems(extra: dict[str, Any]) -> list[str]:
    """Why extra --model-arg fields (sent verbatim in every request body) cannot be sent."""
    problems = []
    secrets = sorted(name for name in extra if secret_name(name))
    if secrets:
        problems.append(
            f"--model-arg {', '.join(secrets)}: secrets are not accepted as --model-arg; put the key in "
            "an environment variable and name it with --model-arg api_key_env=NAME (default OPENAI_API_KEY)"
        )
    reserved = sorted(set(extra) & _RESERVED)
    if reserved:
        problems.append(
            f"--model-arg {', '.join(reserved)}: cannot be an option; it comes from the request's sampling parameters"
        )
    return problems


class OpenAIEngine(Engine):
    kind = "openai"
    calls_tools = True  # chat completions' `tools` / `tool_choice`, the answer's `message.tool_calls`
    says_which_stop = False  # with keep_stop every text ends with a stop string (FlashRAG's rule, `parse_completion`)
    concurrent = True

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: Annotated[int, Ge(1)] = 16,
        timeout: Annotated[float, Gt(0)] = 60,
        max_retries: Annotated[int, Ge(0)] = 6,
        connect_retries: Annotated[int, Ge(0)] = 2,
        backoff_base: Annotated[float, Ge(0)] = 1.0,
        backoff_max: Annotated[float, Ge(0)] = 60,
        mode: Mode = "auto",
        api: Api = "chat_completions",
        **options: Any,
    ) -> None:
        problems = _extra_body_problems(options)
        if problems:
            raise ConfigError(f"openai engine: {problems[0]}")
        if mode not in MODES:
            raise ConfigError(f"openai engine: mode must be one of {', '.join(MODES)}, not {mode!r}")
        if api not in get_args(Api):
            raise ConfigError(f"openai engine: api must be one of {', '.join(get_args(Api))}, not {api!r}")
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        try:
            parts = urlsplit(base_url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ValueError("not an http(s) URL")
            self._base = Credentials.of(base_url)
        except ValueError:
            raise ConfigError(
                f"openai engine: --base-url must be an http(s) URL such as http://localhost:8000/v1, "
                f"not {redact_url(base_url)!r}"
            ) from None
        super().__init__(model, **options)
        self.base_url = self._base.url.rstrip("/")  # without user info or query: shown, and keys the cache
        self.api_key_env = api_key_env
        self.max_concurrency = int(concurrency)
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.connect_retries = int(connect_retries)
        self.backoff_base = float(backoff_base)
        self.backoff_max = float(backoff_max)
        self.mode = mode
        self.api = api
        self.extra_body = dict(options)  # --model-arg values arrive already parsed (YAML scalars)
        self._sdk: openai.AsyncOpenAI | None = None
        self._sdk_loop: asyncio.AbstractEventLoop | None = None
        self._slots: asyncio.Semaphore | None = None
        self._closing: asyncio.Task | None = None

    @classmethod
    def preflight(cls, model: str, options: dict[str, Any]) -> list[str]:
        """A given server (--base-url, or $OPENAI_BASE_URL) answers within a few seconds; OpenAI's own
        API (no server given) has its key in the environment."""
        from .._checks import unreachable

        url = options.get("base_url") or os.environ.get("OPENAI_BASE_URL")
        key_env = str(options.get("api_key_env", "OPENAI_API_KEY"))
        why = unreachable(_models_url(str(url))) if url else None
        extra = set(options) - set(inspect.signature(cls.__init__).parameters)
        problems = [
            *super().preflight(model, options),
            *_extra_body_problems({name: options[name] for name in extra}),
            *([f"{why}; start the server or correct --base-url"] if why else []),
        ]
        if not url and not os.environ.get(key_env):
            problems.append(
                f"{DEFAULT_BASE_URL} needs an API key: set ${key_env} (or name another variable with "
                "--model-arg api_key_env=NAME), or give --base-url of an OpenAI-compatible server"
            )
        return problems

    @classmethod
    def meet_needs(
        cls, model: str, options: dict[str, Any], needs: Sequence[EngineNeeds]
    ) -> tuple[dict[str, Any], list[str]]:
        """The API reports named tokens only among the top NAMED_TOP_LOGPROBS of each position: a larger
        window cannot be given."""
        return options, [
            f"{need.system} reads log-probs of named tokens within top-{need.logprob_window} dicts, but "
            f"OpenAI-compatible servers return at most the top {NAMED_TOP_LOGPROBS} per position"
            + (f"; {need.instead}" if need.instead else "")
            for need in needs
            if need.logprob_tokens and (need.logprob_window or 0) > NAMED_TOP_LOGPROBS
        ]

    @property
    def engine_id(self) -> str:
        out = f"{self.kind}:{self.model}"
        if self.base_url != DEFAULT_BASE_URL:
            out += f"@{self.base_url}"
        if self.mode != "auto":
            out += f";mode={self.mode}"
        if self.api != "chat_completions":
            out += f";api={self.api}"
        for name in sorted(self.extra_body):
            out += f";{name}={json.dumps(self.extra_body[name], sort_keys=True)}"
        return out

    def __repr__(self) -> str:
        return (
            f"OpenAIEngine(model={self.model!r}, base_url={self.base_url!r}, mode={self.mode!r}, api={self.api!r}, "
            f"concurrency={self.max_concurrency}, api_key_env={self.api_key_env!r})"
        )

    # -- the SDK client, one per event loop -----------------------------------------------------

    def _client(self) -> tuple[openai.AsyncOpenAI, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._sdk_loop is not loop or self._slots is None:
            # A new loop means a new run; the old client's connections belong to the old loop.
            self._sdk = make_client(
                self._base,
                os.environ.get(self.api_key_env),
                timeout=self.timeout,
                max_retries=self.max_retries,
                connect_retries=self.connect_retries,
                concurrency=self.max_concurrency,
                backoff_base=self.backoff_base,
                backoff_max=self.backoff_max,
            )
            self._sdk_loop = loop
            self._slots = asyncio.Semaphore(self.max_concurrency)
        return self._sdk, self._slots

    async def aclose(self) -> None:
        client, loop = self._sdk, self._sdk_loop
        self._sdk = self._sdk_loop = self._slots = None
        if client is not None and loop is asyncio.get_running_loop():
            await client.close()

    def close(self) -> None:
        client, loop = self._sdk, self._sdk_loop
        if client is None or loop is None:
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._closing = loop.create_task(self.aclose())
            return
        self._sdk = self._sdk_loop = self._slots = None
        if running is None and not loop.is_closed():
            loop.run_until_complete(client.close())
        # otherwise the owning loop is gone and its sockets with it: nothing left to await

    # -- requests -------------------------------------------------------------------------

    def detects_chat_model(self) -> bool:
        """True: a served model is taken for a chat model, as FlashRAG's OpenaiGenerator sends messages to
        every one (`--model-arg chat=false` for a base model behind a completions endpoint)."""
        return True

    def _arguments(self, request: Request) -> tuple[bool, dict[str, Any]]:
        """(chat?, keyword arguments of the SDK's create())."""
        sampling = request.sampling
        if self.api == "responses":
            return True, self._sent(request, responses_arguments(request, sampling.lora or self.model))
        chat = request.is_chat or self.mode == "chat"
        args: dict[str, Any] = {"model": sampling.lora or self.model}
        if chat:
            args["messages"] = (
                [{k: v for k, v in m.items() if k != "items"} for m in request.message_dicts()]
                if request.is_chat
                else [{"role": "user", "content": request.prompt}]
            )
            if request.tools:
                args["tools"] = request.tool_dicts()
            if request.tool_choice is not None:
                args["tool_choice"] = request.tool_choice_payload()
        else:
            args["prompt"] = request.prompt
        args.update(max_tokens=sampling.max_tokens, **sampling_sent(sampling), n=sampling.n)
        if sampling.stop:
            args["stop"] = list(sampling.stop)
        if sampling.seed is not None:
            args["seed"] = sampling.seed
        top_k = top_logprobs_asked(sampling)
        if top_k is not None:
            args.update({"logprobs": True, "top_logprobs": top_k} if chat else {"logprobs": top_k})
        if sampling.json_mode and chat:
            args["response_format"] = {"type": "json_object"}
        return chat, self._sent(request, args)

    def _sent(self, request: Request, args: dict[str, Any]) -> dict[str, Any]:
        """`args` with the extra body fields (the --model-arg values) and headers every request carries."""
        extra = dict(self.extra_body)
        if not request.sampling.skip_special_tokens:
            extra["skip_special_tokens"] = False
        if extra:
            args["extra_body"] = extra
        if not os.environ.get(self.api_key_env):
            args["extra_headers"] = no_auth_header
        return args

    def _failure(self, what: str, attempts: int, error: type[EngineError] = EngineError) -> EngineError:
        return error(
            redact(
                f"openai {self.model} at {self.base_url}: {what} ({attempts} attempt{'s' if attempts != 1 else ''})",
                self.api_key_env,
                self._base,
            )
        )

    def _excerpt(self, text: str) -> str:
        text = " ".join(redact(text, self.api_key_env, self._base).split())
        return text[:200] + ("..." if len(text) > 200 else "")

    async def agenerate_one(self, request: Request) -> Response:
        chat, args = self._arguments(request)
        client, slots = self._client()
        used = 0  # attempts spent by earlier calls of the SDK (each ended in an unreadable 2xx)
        while True:
            endpoint = client.with_options(max_retries=self.max_retries - used) if used else client
            api = endpoint.responses if self.api == "responses" else endpoint.chat.completions
            create = (api if chat else endpoint.completions).with_raw_response.create
            try:
                async with slots:
                    raw = await create(**args)
            except openai.APIError as exc:
                raise self._api_failure(exc, used, top_logprobs_asked(request.sampling)) from None
            used += raw.retries_taken + 1
            try:
                if self.api == "responses":
                    return parse_response(raw.parse(), bool(request.tools))
                return parse_completion(raw.parse(), request.sampling, chat, bool(request.tools))
            except (ValueError, TypeError, AttributeError, KeyError) as exc:  # a proxy's HTML page: retried
                what = f"unreadable response ({type(exc).__name__}: {exc}): {self._excerpt(raw.http_response.text)}"
            if used > self.max_retries:
                raise self._failure(what, used)
            delay = backoff(used - 1, self.backoff_base, self.backoff_max)
            log.info(
                "%s",
                redact(
                    f"openai {self.base_url}: {what}; retry {used}/{self.max_retries} in {delay:.2f}s",
                    self.api_key_env,
                    self._base,
                ),
            )
            await asyncio.sleep(delay)

    def _api_failure(self, exc: openai.APIError, used: int, top_k: int | None) -> EngineError:
        """The SDK's final error as one line; RequestError when the request itself is at fault."""
        request = getattr(exc, "request", None)
        # the SDK numbers its attempts in a header of each request it sends
        before = used + int(request.headers.get("x-stainless-retry-count", 0) if request is not None else 0)
        attempts = before + 1
        if isinstance(exc, Unreachable):
            return self._failure(
                f"connection failed ({exc.message}): is a server running at this URL?", before + exc.tries
            )
        if isinstance(exc, openai.APITimeoutError):
            return self._failure(f"timed out after {self.timeout:g}s", attempts)
        if isinstance(exc, openai.APIConnectionError):
            cause = exc.__cause__ or exc
            return self._failure(f"connection failed ({type(cause).__name__}: {cause})", attempts)
        if not isinstance(exc, openai.APIStatusError):
            return self._failure(f"{type(exc).__name__}: {exc}", attempts)
        status = exc.status_code
        body = exc.body
        message = body.get("message", body) if isinstance(body, dict) else (body or exc.response.text)
        what = f"HTTP {status}: {self._excerpt(str(message))}"
        if status == 401 and not os.environ.get(self.api_key_env):
            what += f" (environment variable {self.api_key_env} is not set)"
        elif status == 404:
            what += " (does the base URL end with the API prefix, e.g. /v1?)"
        elif top_k and "logprob" in what.lower():
            what += (
                f" (this request asked for the top {top_k} log-probs, named tokens for the top "
                f"{NAMED_TOP_LOGPROBS}: OpenAI allows at most 20, a vllm server its --max-logprobs)"
            )
        request_fault = 400 <= status < 500 and status not in _ENDPOINT_STATUS and status not in (408, 409, 429)
        return self._failure(what, attempts, RequestError if request_fault else EngineError)
