"""`gemini` engine: Google's Gemini API through the vendor's own SDK (`google-genai`'s `Client(...).aio`;
`pip install 'ragbench[gemini]'`).

Model strings: `gemini:gemini-2.5-flash`, `gemini:gemini-2.5-pro`. The base URL comes from the `base_url`
option (--base-url), else $GOOGLE_GEMINI_BASE_URL, else https://generativelanguage.googleapis.com; it leaves
out the API version the SDK adds to each path (`api_version`, default v1beta). The key is read from
$api_key_env (default GEMINI_API_KEY) and sent as `x-goog-api-key`; the SDK never looks for other credentials
(Vertex AI is not used).

How a request maps onto the API, and the answer back: hosted/gemini_contents.py (native function calling; thought
signatures kept and sent back). Any other --model-arg is a `GenerateContentConfig` field sent with every
request (e.g. `top_k=40`, `thinking_config='{thinking_budget: 1024}'`) and part of the engine id, the response
cache's key.

Retries are ragbench's, the SDK's own turned off (its tenacity waits cannot be shortened): HTTP 408/409/429/5xx,
timeouts, dropped connections and a 2xx body that is no answer are retried up to `max_retries` times with
ragbench's full-jitter backoff, a Retry-After honoured up to `backoff_max`; a connection refused ends the call
after `connect_retries` (hosted/http.py). Concurrency, timeouts, key redaction and one-line failures are the
`openai` engine's (hosted/api_engine.py). The SDK reads a token count leniently (pydantic's lax mode: `true` as 1, 2.0
as 2), so the usage is also checked as the server sent it (usage_counts.usage_as_sent), and such a body is unreadable too.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import os
import time
from typing import Any

import httpx2

from ..._errors import ConfigError
from ..._values.billed import Billed, TokenCounts
from ..._values.llm_request import Request
from ..._values.llm_responses import Response
from ..retries import retried_status
from .api_engine import ApiEngine, optional_sdk
from .gemini_contents import content_arguments, parse_content
from .http import FailFastTransport, redact_http_logs, retry_wait
from .usage_counts import GEMINI, usage_as_sent, usage_tokens

log = logging.getLogger(__name__)


def sdk() -> Any:
    """The `google.genai` package (an optional extra), imported on first use."""
    return optional_sdk("google.genai", "gemini", "gemini", "Google's google-genai SDK")


class GeminiUnreachable(Exception):
    """The server refused the connection (after the transport's `connect_retries`)."""

    def __init__(self, request: httpx2.Request, tries: int, cause: Exception) -> None:
        super().__init__(f"{type(cause).__name__}: {cause}")
        self.tries = tries


def retry_after(response: Any) -> float | None:
    """Seconds a response's Retry-After header asks to wait (a number or an HTTP date); None without one."""
    value = getattr(getattr(response, "headers", None), "get", lambda name: None)("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        date = email.utils.parsedate_tz(value)
        return None if date is None else email.utils.mktime_tz(date) - time.time()


def _usage_of(answer: Any) -> TokenCounts | None:
    """The token counts of an answer the SDK read and ragbench refused, where they read (else None)."""
    try:
        return usage_tokens(answer.usage_metadata, GEMINI) if answer is not None else None
    except (ValueError, AttributeError):
        return None


async def _usage_as_sent(response: httpx2.Response) -> None:
    """A 2xx answer's `usageMetadata` checked as the server sent it (`usage_as_sent`; its ValueError, raised
    through the SDK's call, is an unreadable answer), before google-genai reads it leniently."""
    if response.is_success:
        usage_as_sent(await response.aread(), "usageMetadata", GEMINI)


class GeminiEngine(ApiEngine):
    kind = "gemini"
    says_which_stop = False  # keep_stop appends the first stop string (FlashRAG's rule)
    DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com"
    BASE_URL_ENV = "GOOGLE_GEMINI_BASE_URL"
    DEFAULT_KEY_ENV = "GEMINI_API_KEY"
    EXAMPLE_BASE_URL = "http://localhost:8000"
    NOT_FOUND_HINT = (
        "the SDK adds /{api_version}/models/...: does the base URL end before it, and is the model named right?"
    )
    RESERVED = frozenset(
        {"system_instruction", "max_output_tokens", "temperature", "top_p", "stop_sequences", "candidate_count"}
        | {"seed", "response_mime_type", "tools", "tool_config", "automatic_function_calling", "http_options"}
        | {"response_logprobs", "logprobs"}
    )

    def __init__(self, model: str, api_version: str = "v1beta", **options: Any) -> None:
        genai = sdk()  # the install command, before anything else
        super().__init__(model, **options)
        unknown = sorted(set(self.extra_body) - set(genai.types.GenerateContentConfig.model_fields))
        if unknown:
            raise ConfigError(
                f"gemini engine: --model-arg {', '.join(unknown)}: neither an option of the engine nor a field of "
                "google-genai's GenerateContentConfig"
            )
        self.api_version = api_version

    def _id_options(self) -> str:
        return (f";api_version={self.api_version}" if self.api_version != "v1beta" else "") + super()._id_options()

    @classmethod
    def _probe_url(cls, base_url: str) -> str:
        return super()._probe_url(base_url.rstrip("/") + "/v1beta")

    def open_client(self) -> tuple[Any, httpx2.AsyncClient]:
        genai = sdk()
        redact_http_logs("google_genai")
        limits = httpx2.Limits(
            max_connections=max(1, self.max_concurrency), max_keepalive_connections=max(1, self.max_concurrency)
        )
        http = httpx2.AsyncClient(
            transport=FailFastTransport(self.connect_retries, GeminiUnreachable, limits=limits),
            auth=httpx2.BasicAuth(*self._base.basic_auth) if self._base.basic_auth else None,
            params=self._base.query or None,
            timeout=httpx2.Timeout(self.timeout, connect=min(self.timeout, 5.0)),
            event_hooks={"response": [_usage_as_sent]},
        )
        options = genai.types.HttpOptions(
            base_url=self._base.url,
            api_version=self.api_version,
            timeout=int(self.timeout * 1000),
            retry_options=genai.types.HttpRetryOptions(attempts=1),  # ragbench retries (agenerate_one)
            httpx_async_client=http,
        )
        key = os.environ.get(self.api_key_env) or "unset"
        return genai.Client(vertexai=False, api_key=key, http_options=options), http

    async def close_client(self, client: Any) -> None:
        genai_client, http = client
        await genai_client.aio.aclose()
        await http.aclose()

    async def agenerate_one(self, request: Request) -> Response:
        genai = sdk()
        contents, fields = content_arguments(request)
        # an option naming a penalty replaces the request's, as in the openai engine (the rest are RESERVED)
        config = genai.types.GenerateContentConfig(**{**fields, **self.extra_body})
        (client, _), slots = self._client()
        attempt = 0
        billed = Billed()  # the answers refused whose usage reads: billed, the call's cost too
        while True:
            wait_for: float | None = None
            answer = None
            try:
                async with slots:
                    answer = await client.aio.models.generate_content(
                        model=self.model, contents=contents, config=config
                    )
                return billed.onto(parse_content(answer, request))
            except GeminiUnreachable as exc:
                raise billed.onto(
                    self.failure(f"connection failed ({exc}): is a server running at this URL?", attempt + exc.tries)
                ) from None
            except genai.errors.APIError as exc:
                if not retried_status(exc.code) or attempt == self.max_retries:
                    failure = self.status_failure(exc.code, str(exc.message or exc.details), attempt + 1)
                    raise billed.onto(failure) from None
                what, wait_for = f"HTTP {exc.code}", retry_after(exc.response)
            except httpx2.TimeoutException:
                what = f"timed out after {self.timeout:g}s"
            except httpx2.TransportError as exc:
                what = f"connection failed ({type(exc).__name__}: {exc})"
            except (ValueError, TypeError, AttributeError, KeyError) as exc:  # a proxy's HTML page: retried
                what = f"unreadable response ({type(exc).__name__}: {self.excerpt(str(exc))})"
                billed.add(Billed.of(_usage_of(answer)))
            if attempt == self.max_retries:
                raise billed.onto(self.failure(what, attempt + 1))
            delay = retry_wait(wait_for, attempt, self.backoff_base, self.backoff_max)
            attempt += 1
            log.info(
                "%s",
                self._redact(f"gemini {self.base_url}: {what}; retry {attempt}/{self.max_retries} in {delay:.2f}s"),
            )
            await asyncio.sleep(delay)
