"""The `openai` engine's HTTP side: an `openai.AsyncOpenAI` client with ragbench's two knobs and key
redaction (hosted/http.py, shared with the `anthropic` engine), and `probe` (is a base URL there at all?).

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

import os

import httpx2
import openai

from ..._values.urls import Credentials
from ..retries import backoff
from .http import FailFastTransport, JitteredRetries, redact, redact_http_logs

__all__ = ["OpenAIUnreachable", "backoff", "make_client", "no_auth_header", "probe", "redact"]


class OpenAIUnreachable(openai.APIConnectionError):
    """The server refused the connection (after the transport's `connect_retries`). An OpenAIError
    raised by the transport is passed on by the SDK without retrying."""

    def __init__(self, request: httpx2.Request, tries: int, cause: Exception) -> None:
        super().__init__(message=f"{type(cause).__name__}: {cause}", request=request)
        self.tries = tries


class _Client(JitteredRetries, openai.AsyncOpenAI):
    pass


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
    redact_http_logs("openai")
    limits = httpx2.Limits(max_connections=max(1, concurrency), max_keepalive_connections=max(1, concurrency))
    http = openai.DefaultAsyncHttpx2Client(
        transport=FailFastTransport(connect_retries, OpenAIUnreachable, limits=limits),
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
    except OpenAIUnreachable:
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
