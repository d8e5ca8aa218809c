"""The `openai` engine's HTTP side: an `openai.AsyncOpenAI` client with ragbench's two knobs, key
redaction, and `probe` (is a base URL there at all?).

What the SDK does: the retry loop (HTTP 408/409/429/5xx, timeouts, dropped or reset connections, up to
`max_retries`), Retry-After / Retry-After-ms parsing (seconds or HTTP date), per-phase timeouts,
the Authorization header and connection pooling. What is added here, and why:
- the wait between retries is ragbench's full-jitter backoff, uniform(0, min(backoff_max,
  backoff_base * 2**retry)), with a Retry-After capped at backoff_max (one override of the SDK's
  `_calculate_retry_timeout`): the SDK's wait is fixed at 0.5 s x 2**retry up to 8 s, which a
  benchmark or a test against a local server cannot shorten (a Retry-After over 120 s still ends the
  call, by the SDK's rule);
- a connection refused or not accepted within the connect timeout (min(timeout, 5 s), the SDK's
  default) is retried only `connect_retries` times (the transport's own retries: 0 s, then 0.5 s,
  1 s...) and then ends the call at once, where the SDK would spend its whole retry budget, with
  backoff, on a server that is not there.
"""

from __future__ import annotations

import logging
import math
import os
import random
import re
from typing import Any

import httpx2
import openai

from .._values.urls import REDACTED, Credentials, redact_urls

_KEY_LIKE = re.compile(r"\bsk-[A-Za-z0-9_\-*.]{4,}")


def redact(text: str, api_key_env: str, credentials: Credentials | None = None) -> str:
    """`text` without the key held in $api_key_env, the base URL's `credentials`, anything shaped like an
    OpenAI key, nor the credentials of any URL in it (ragbench._values.urls)."""
    for secret in [os.environ.get(api_key_env), *(credentials.secrets() if credentials else ())]:
        if secret:
            text = text.replace(secret, REDACTED)
    return redact_urls(_KEY_LIKE.sub("sk-***", text))


def backoff(retry: int, base: float, cap: float) -> float:
    """Full-jitter exponential backoff before retry number `retry` (0 for the first)."""
    return random.uniform(0.0, min(cap, base * 2**retry))


class Unreachable(openai.APIConnectionError):
    """The server refused the connection (after the transport's `connect_retries`). An OpenAIError
    raised by the transport is passed on by the SDK without retrying."""

    def __init__(self, request: httpx2.Request, tries: int, cause: Exception) -> None:
        super().__init__(message=f"{type(cause).__name__}: {cause}", request=request)
        self.tries = tries


class _FailFastTransport(httpx2.AsyncHTTPTransport):
    def __init__(self, connect_retries: int, **kwargs: Any) -> None:
        super().__init__(retries=connect_retries, **kwargs)
        self.tries = connect_retries + 1

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        try:
            return await super().handle_async_request(request)
        except (httpx2.ConnectError, httpx2.ConnectTimeout) as exc:
            raise Unreachable(request, self.tries, exc) from exc


class _Client(openai.AsyncOpenAI):
    backoff_base = 1.0
    backoff_max = 60.0

    def _calculate_retry_timeout(self, remaining_retries: int, options: Any, response_headers: Any = None) -> float:
        retry_after = self._parse_retry_after_header(response_headers)
        if retry_after is not None and math.isfinite(retry_after) and retry_after >= 0:
            return min(retry_after, self.backoff_max)
        retry = options.get_max_retries(self.max_retries) - remaining_retries
        return backoff(retry, self.backoff_base, self.backoff_max)

    def copy(self, **kwargs: Any) -> _Client:  # with_options() copies the client: keep the knobs
        client = super().copy(**kwargs)
        client.backoff_base, client.backoff_max = self.backoff_base, self.backoff_max
        return client

    with_options = copy


class _RedactedRecords(logging.Filter):
    """The records of the HTTP library and the SDK with every URL's credentials redacted: httpx logs each
    request's URL, the base URL's query included (INFO)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact_urls(record.getMessage()), None
        return True


def _redact_http_logs() -> None:
    for name in ("httpx2", "openai"):
        logger = logging.getLogger(name)
        if not any(isinstance(existing, _RedactedRecords) for existing in logger.filters):
            logger.addFilter(_RedactedRecords())


def make_client(
    base: Credentials,
    api_key: str | None,
    *,
    timeout: float,
    max_retries: int,
    connect_retries: int,
    concurrency: int,
    backoff_base: float = 1.0,
    backoff_max: float = 60.0,
) -> openai.AsyncOpenAI:
    """A client for the running event loop. Without a key, requests go out without Authorization
    (pass `no_auth_header` as extra_headers): local servers need none and the SDK insists on one. The base
    URL's user info is sent as basic auth (in place of the key's Bearer header, when both are given) and its
    query on every request, after the request's own path."""
    _redact_http_logs()
    limits = httpx2.Limits(max_connections=max(1, concurrency), max_keepalive_connections=max(1, concurrency))
    http = openai.DefaultAsyncHttpx2Client(
        transport=_FailFastTransport(connect_retries, limits=limits),
        auth=httpx2.BasicAuth(*base.basic_auth) if base.basic_auth else None,
    )
    client = _Client(
        api_key=api_key or "unset",
        base_url=base.url,
        max_retries=max_retries,
        http_client=http,
        timeout=httpx2.Timeout(timeout, connect=min(timeout, 5.0)),
        default_query=base.query or None,
    )
    client.backoff_base, client.backoff_max = backoff_base, backoff_max
    return client


no_auth_header = {"Authorization": openai.omit}


async def probe(base_url: str, api_key_env: str = "OPENAI_API_KEY", timeout: float = 5.0) -> str | None:
    """None when an OpenAI-compatible server answers at `base_url`; else one line naming the URL,
    what went wrong and the fix. One GET {base_url}/models, no retries; any answer other than a
    refused key (401/403) or a missing path (404) counts as there."""
    base = Credentials.of(base_url)
    shown = base.url
    key = os.environ.get(api_key_env)
    client = make_client(base, key, timeout=timeout, max_retries=0, connect_retries=0, concurrency=1)
    try:
        await client.models.with_raw_response.list(extra_headers=None if key else no_auth_header)
    except Unreachable:
        return f"{shown}: nothing answers there (connection refused): start the server or fix --base-url"
    except openai.APITimeoutError:
        return f"{shown}: no answer within {timeout:g}s: is the server up and the address right?"
    except openai.APIConnectionError as exc:
        return redact(f"{shown}: cannot connect ({exc.__cause__ or exc}): fix --base-url", api_key_env, base)
    except openai.APIStatusError as exc:
        if exc.status_code in (401, 403):
            hint = f"${api_key_env} is not set" if not key else f"check the key in ${api_key_env}"
            return f"{shown}: the server refused the key (HTTP {exc.status_code}): {hint}"
        if exc.status_code == 404:
            return f"{shown}/models not found (HTTP 404): does --base-url end with the API prefix, e.g. /v1?"
    finally:
        await client.close()
    return None
