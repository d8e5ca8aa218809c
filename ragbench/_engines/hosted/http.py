"""What the engines of hosted APIs (`openai`, `anthropic`, `gemini`) share on the HTTP side, whatever vendor SDK
sends their requests: key redaction, ragbench's full-jitter backoff, the retry-wait override of the SDKs generated
by Stainless (`openai`, `anthropic`), a transport that gives up on a server that is not there, and the HTTP
libraries' log records with every URL's credentials redacted.

Why the backoff is ragbench's own: the SDKs' waits are fixed (0.5 s x 2**retry up to 8 s for Stainless,
tenacity's 1 s x 2**retry for google-genai), which a benchmark or a test against a local server cannot shorten;
a Retry-After the server sends is honoured, capped at `backoff_max`.
"""

from __future__ import annotations

import logging
import math
import os
import random
import re
from collections.abc import Callable
from typing import Any

import httpx2

from ..._values.urls import REDACTED, Credentials, redact_urls

# OpenAI and Anthropic keys (sk-..., sk-ant-...), Google API keys (AIza...)
_KEY_LIKE = re.compile(r"\b(?:sk-[A-Za-z0-9_\-*.]{4,}|AIza[A-Za-z0-9_\-]{20,})")
RETRIED_STATUS = frozenset({408, 409, 429})  # and every 5xx: the server is at fault, or busy
ENDPOINT_STATUS = frozenset({401, 403, 404})  # the endpoint is misconfigured, not the request


def redact(text: str, api_key_env: str, credentials: Credentials | None = None) -> str:
    """`text` without the key held in $api_key_env, the base URL's `credentials`, anything shaped like an
    API key, nor the credentials of any URL in it (ragbench._values.urls)."""
    for secret in [os.environ.get(api_key_env), *(credentials.secrets() if credentials else ())]:
        if secret:
            text = text.replace(secret, REDACTED)
    return redact_urls(_KEY_LIKE.sub(lambda key: ("sk-" if key.group().startswith("sk-") else "AIza") + "***", text))


def backoff(retry: int, base: float, cap: float) -> float:
    """Full-jitter exponential backoff before retry number `retry` (0 for the first)."""
    return random.uniform(0.0, min(cap, base * 2**retry))


def retried_status(status: int) -> bool:
    """Whether an HTTP status is worth another attempt (as the SDKs retry: 408, 409, 429, 5xx)."""
    return status in RETRIED_STATUS or status >= 500


def request_at_fault(status: int) -> bool:
    """Whether an HTTP error status says the request itself is at fault (400, 422 and other 4xx: another
    replica would refuse it too), not the server (5xx, 429) or the endpoint's set-up (401, 403, 404)."""
    return 400 <= status < 500 and status not in ENDPOINT_STATUS and status not in RETRIED_STATUS


def retry_wait(retry_after: float | None, retry: int, base: float, cap: float) -> float:
    """The wait before retry number `retry`: the server's Retry-After (capped at `cap`) when it sent a usable
    one, else `backoff`."""
    if retry_after is not None and math.isfinite(retry_after) and retry_after >= 0:
        return min(retry_after, cap)
    return backoff(retry, base, cap)


class JitteredRetries:
    """Mixed into a Stainless SDK client class (`class C(JitteredRetries, openai.AsyncOpenAI)`): the SDK's
    retry wait replaced by `retry_wait`, and the two knobs kept by `with_options()` copies."""

    backoff_base = 1.0
    backoff_max = 60.0

    def _calculate_retry_timeout(self, remaining_retries: int, options: Any, response_headers: Any = None) -> float:
        retry_after = self._parse_retry_after_header(response_headers)  # type: ignore[attr-defined]
        retry = options.get_max_retries(self.max_retries) - remaining_retries  # type: ignore[attr-defined]
        return retry_wait(retry_after, retry, self.backoff_base, self.backoff_max)

    def copy(self, **kwargs: Any) -> Any:
        client = super().copy(**kwargs)  # type: ignore[misc]
        client.backoff_base, client.backoff_max = self.backoff_base, self.backoff_max
        return client

    with_options = copy


class FailFastTransport(httpx2.AsyncHTTPTransport):
    """A connection refused, or not accepted within the connect timeout, is retried `connect_retries` times
    (the transport's own retries: 0 s, then 0.5 s, 1 s...) and then ends the call at once with the exception
    `unreachable(request, tries, cause)` makes, which the SDK passes on without retrying: an SDK would spend its
    whole retry budget, with backoff, on a server that is not there."""

    def __init__(
        self, connect_retries: int, unreachable: Callable[[httpx2.Request, int, Exception], Exception], **kwargs: Any
    ) -> None:
        super().__init__(retries=connect_retries, **kwargs)
        self.tries = connect_retries + 1
        self.unreachable = unreachable

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return await super().handle_async_request(request)
        except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
            raise self.unreachable(request, self.tries, exc) from exc


class _RedactedRecords(logging.Filter):
    """The records of the HTTP library and the SDK with every URL's credentials redacted: httpx logs each
    request's URL, the base URL's query included (INFO)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact_urls(record.getMessage()), None
        return True


def redact_http_logs(*sdk_loggers: str) -> None:
    """Redact URL credentials from the records of httpx2 and of the named SDKs' loggers."""
    for name in ("httpx2", *sdk_loggers):
        logger = logging.getLogger(name)
        if not any(isinstance(existing, _RedactedRecords) for existing in logger.filters):
            logger.addFilter(_RedactedRecords())
