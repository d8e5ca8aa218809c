"""`anthropic` engine: Anthropic's Messages API through the vendor's own SDK (`anthropic.AsyncAnthropic`;
`pip install 'ragbench[anthropic]'`).

Model strings: `anthropic:claude-sonnet-4-5`, `anthropic:claude-haiku-4-5`. The base URL comes from the
`base_url` option (--base-url), else $ANTHROPIC_BASE_URL, else https://api.anthropic.com; it leaves out the
`/v1` the SDK adds to each path. The key is read from $api_key_env (default ANTHROPIC_API_KEY) and sent as the
SDK sends it (2.14: `Authorization: Bearer`); without one, requests go out without a key (a local server or proxy needs none) and the SDK's
own search for credentials (files in the home folder) is never made.

How a request maps onto the API, and the answer back: hosted/anthropic_messages.py (native tool use: tools,
tool choice, `tool_use` / `tool_result` blocks; thinking blocks kept and sent back). A request offering a remote
MCP server (`{"type": "mcp", ...}` tool) goes to the beta Messages API (`/v1/messages?beta=true`, header
`anthropic-beta: mcp-client-2025-04-04`) with the server in `mcp_servers`: Anthropic's servers call its tools. Any other --model-arg is
sent verbatim in every request body (e.g. `top_k=40`, `thinking='{type: enabled, budget_tokens: 2048}'`)
and is part of the engine id, the response cache's key.

`prompt_cache=true` (or `5m`, `1h`: the cache's lifetime) marks the prefix an agent's loop repeats for Anthropic's
prompt cache: `cache_control` on the last tool and on the system prompt (anthropic_messages.cache_marked); off by
default, when requests go as they always have. The answers are the same either way, so it is not part of the
engine id; reads and writes of the cache are priced at their own rates (ragbench._cost.prices).

Retries, the failed-connection limit, concurrency, timeouts, key redaction and one-line failures are the
`openai` engine's (hosted/stainless.py, hosted/api_engine.py, hosted/http.py): the SDK retries HTTP 408/409/429/5xx
(Anthropic's 529 "overloaded" too) with ragbench's full-jitter backoff and honours Retry-After. `batch=true` sends
the scheduler's pooled requests through the Message Batches API instead (hosted/batch_anthropic.py,
batches/runner.py).
"""

from __future__ import annotations

import os
from functools import cache
from typing import Any, Literal

import httpx2

from ..._errors import ConfigError
from ..._values.llm_request import Request
from ..._values.llm_responses import Response
from ..batches.interface import BatchVendor
from .anthropic_messages import PROMPT_CACHE_TTLS, message_arguments, parse_message
from .api_engine import optional_sdk
from .batch_anthropic import AnthropicBatches
from .http import FailFastTransport, JitteredRetries, redact_http_logs
from .stainless import StainlessEngine
from .usage_counts import ANTHROPIC

MCP_BETA = "mcp-client-2025-04-04"  # the MCP connector's beta (`anthropic-beta` header)


def sdk() -> Any:
    """The `anthropic` package (an optional extra), imported on first use."""
    return optional_sdk("anthropic", "anthropic", "anthropic", "Anthropic's SDK")


@cache
def _unreachable_class() -> type[Exception]:
    base: Any = sdk().AnthropicError

    class AnthropicUnreachable(base):
        """The server refused the connection (after the transport's `connect_retries`): an AnthropicError that
        is no APIConnectionError, which the SDK passes on without retrying."""

        def __init__(self, request: httpx2.Request, tries: int, cause: Exception) -> None:
            self.message = f"{type(cause).__name__}: {cause}"
            super().__init__(self.message)
            self.request, self.tries = request, tries

    return AnthropicUnreachable


@cache
def _client_class() -> type:
    return type("AnthropicClient", (JitteredRetries, sdk().AsyncAnthropic), {})


class AnthropicEngine(StainlessEngine):
    kind = "anthropic"
    says_which_stop = True  # the answer names the stop sequence that fired
    connects_mcp = True  # a remote MCP server tool goes as `mcp_servers`, the API's servers call its tools
    DEFAULT_BASE_URL = "https://api.anthropic.com"
    BASE_URL_ENV = "ANTHROPIC_BASE_URL"
    DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"
    EXAMPLE_BASE_URL = "http://localhost:8000"
    NOT_FOUND_HINT = "the SDK adds /v1/messages: does the base URL end before /v1?"
    RESERVED = frozenset(
        {"model", "messages", "system", "max_tokens", "temperature", "top_p", "stop_sequences", "stream"}
        | {"tools", "tool_choice"}
    )

    def __init__(self, model: str, prompt_cache: Literal[False, True, "5m", "1h"] = False, **options: Any) -> None:
        sdk()  # the install command, before anything else
        if not (isinstance(prompt_cache, bool) or prompt_cache in PROMPT_CACHE_TTLS):
            raise ConfigError(f"anthropic engine: prompt_cache must be true, false, 5m or 1h, not {prompt_cache!r}")
        super().__init__(model, **options)
        # the cache's lifetime where the prefix is marked for it: answers are the same, so it keys nothing
        self.prompt_cache = PROMPT_CACHE_TTLS[0] if prompt_cache is True else prompt_cache or None

    @property
    def sdk(self) -> Any:
        return sdk()

    @property
    def unreachable(self) -> type[Exception]:  # type: ignore[override]
        return _unreachable_class()

    @classmethod
    def _probe_url(cls, base_url: str) -> str:
        return super()._probe_url(base_url.rstrip("/") + "/v1")

    def open_client(self) -> Any:
        anthropic = sdk()
        redact_http_logs("anthropic")
        limits = httpx2.Limits(
            max_connections=max(1, self.max_concurrency), max_keepalive_connections=max(1, self.max_concurrency)
        )
        http = anthropic.DefaultAsyncHttpxClient(
            transport=FailFastTransport(self.connect_retries, _unreachable_class(), limits=limits),
            auth=httpx2.BasicAuth(*self._base.basic_auth) if self._base.basic_auth else None,
        )
        client = _client_class()(
            api_key=os.environ.get(self.api_key_env) or "unset",
            base_url=self._base.url,
            max_retries=self.max_retries,
            http_client=http,
            timeout=httpx2.Timeout(self.timeout, connect=min(self.timeout, 5.0)),
            default_query=self._base.query or None,
        )
        client.backoff_base, client.backoff_max = self.backoff_base, self.backoff_max
        return client

    async def agenerate_one(self, request: Request) -> Response:
        body = message_arguments(request, self.model, self.prompt_cache)
        # the fields create() requires as keywords; the rest (temperature and top_p, which newer SDKs no longer
        # take as keywords, among them) go in the body as they are, with the --model-arg fields
        args = {name: body.pop(name) for name in ("model", "max_tokens", "messages")}
        args["extra_body"] = {**body, **self.extra_body}
        if not os.environ.get(self.api_key_env):
            args["extra_headers"] = {"X-Api-Key": sdk().omit, "Authorization": sdk().omit}
        # the MCP connector is a beta of the API: the SDK's beta messages read its blocks; `?beta=true` as the
        # SDK's releases before 0.60 sent it (BrowseComp-Plus's anthropic_client's)
        beta = "mcp_servers" in body
        if beta:
            args["betas"], args["extra_query"] = [MCP_BETA], {"beta": "true"}
        return await self._send(
            request,
            lambda client: (client.beta.messages if beta else client.messages).with_raw_response.create(**args),
            lambda answer: parse_message(answer, request),
            ANTHROPIC,
        )

    def batch_vendor(self) -> BatchVendor:
        return AnthropicBatches(self, self.prompt_cache)
