"""The `openai` engine's HTTP side: an `openai.AsyncOpenAI` client with ragbench's two knobs and key
redaction (hosted/http.py, shared with the `anthropic` engine). Whether a server is there at all is the
pre-flight's question (`ApiEngine.preflight`).

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

import httpx2
import openai

from ..._values.urls import Credentials
from ..retries import backoff
from .http import FailFastTransport, JitteredRetries, redact, redact_http_logs

__all__ = ["OpenAIUnreachable", "backoff", "make_client", "no_auth_header", "redact"]


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
